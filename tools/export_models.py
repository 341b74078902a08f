"""Export the book's models to ONNX for the live figures of the site (issue 13).

    python tools/export_models.py --out _build/live     # what `make live-models` runs

writes ``OUT/models/manifest.json``, the ONNX files, the vocabularies, and ``OUT/reference.json``: the
values the library computes in PyTorch for the chapters' sentences, which the browser tests compare
with what the page computes. Nothing here is committed; `make book` copies it into the site.

The models are the library's own classes, wrapped so that their inputs and outputs have the names the
page's runtime expects (web/src/runtime.js); the wrappers add no computation:

- ``minilm.onnx``: the real all-MiniLM-L6-v2 (``lib.pretrained.load_minilm``):
  input_ids, attention_mask, token_type_ids int64 [1, T] -> last_hidden_state [1, T, 384],
  attentions [6, 12, T, T] (layer, head, query, key).
- ``translator_encoder.onnx`` / ``translator_decoder.onnx``: the Bahdanau translator of chapters 1
  and 4 (the shipped checkpoint lib/checkpoints/seq2seq_bahdanau.safetensors): the encoder
  (src_ids [1, S] -> memory [1, S, 128], state [1, 64]) and one greedy decoding step
  (prev_token [1], state [1, 64], memory, src_mask [1, S] -> logits [1, V], state_out, attention [1, S]).
- ``gpt.onnx``: the story GPT of chapter 13 (``lib.checkpoints.load_story_gpt``, trained by
  tools/train_story_gpt.py): input_ids int64 [1, T] -> logits [1, T, V], attentions [L, H, T, T].

Size against fidelity (MiniLM, measured by this tool's ``--study`` on the chapters' sentences, max abs
difference of every attention weight against PyTorch float32):

| weights stored as                    | file    | max abs attention error |
|--------------------------------------|---------|-------------------------|
| float32                              | 90.4 MB | ~1e-6                   |
| float16, computed in float32 (Cast)  | 45.3 MB | ~1e-3 (see --study)     |

The shipped MiniLM stores every weight matrix of 1,024 or more numbers as float16 and casts it back to
float32 when the session starts (one ``Cast`` node per weight): half the bytes, float32 arithmetic.
The dynamic int8 quantisation measured in the issue (23 MB) moves weights by up to 0.35 and is not
used. The translator is small (1-2 MB) and stays float32.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import Tensor, nn

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OPSET = 17
MINILM_MAX_TOKENS = 128  # the page cuts longer inputs (and says so)
TRANSLATOR_MAX_OUTPUT = 60  # cap on the greedy translation's length in the page
FP16_MIN_SIZE = 1024  # weights with at least this many numbers are stored as float16

# The chapters' sentences (chapter 15 and 6) for the reference values and the fidelity check.
MINILM_SENTENCES = [
    "The trophy didn't fit in the suitcase because it was too big.",
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "The FBI is chasing a criminal on the run.",
    "I put my money in the bank.",
    "We had a picnic on the river bank.",
]
MINILM_PAIRS = [
    (
        "The animal didn't cross the street because it was too tired",
        "The animal didn't cross the street because it was too wide",
        "it",
        "animal",
    )
]
TRANSLATOR_SENTENCES = [
    "a heavy green cow rarely runs"
]  # chapter 4's example; more from the corpus


# --- wrappers: the library's models under the page's input and output names ----------------------


class MiniLMExport(nn.Module):
    """lib.bert.Bert -> (last_hidden_state [1, T, D], attentions [L, H, T, T])."""

    def __init__(self, bert: nn.Module):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: Tensor, attention_mask: Tensor, token_type_ids: Tensor):
        out = self.bert(input_ids, token_type_ids, attention_mask, return_attention=True)
        return out.sequence_output, torch.stack(out.attentions)[:, 0]  # [1, T, D], [L, H, T, T]


class GPTExport(nn.Module):
    """lib.gpt.GPT -> (logits [1, T, V], attentions [L, H, T, T])."""

    def __init__(self, gpt: nn.Module):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids: Tensor):
        out = self.gpt(input_ids, return_attention=True)
        return out.logits, torch.stack(out.attentions)[:, 0]  # [1, T, V], [L, H, T, T]


class EncoderExport(nn.Module):
    """Seq2Seq's encoder for one unpadded sentence: src_ids [1, S] -> (memory [1, S, He], state [1, H]).

    With one sentence and no padding, packing the sequence (what lib.seq2seq.Encoder does for batches)
    changes nothing, so the RNN runs on the embeddings directly; then the decoder's s_0 = tanh(W_s c)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.encoder, self.decoder = model.encoder, model.decoder

    def forward(self, src_ids: Tensor):
        states, final = self.encoder.rnn(
            self.encoder.embedding(src_ids)
        )  # [1, S, He], [2, 1, He/2]
        summary = torch.cat([final[0], final[1]], dim=-1)  # [1, He]
        return states, self.decoder.init_state(summary)["h"]  # [1, S, He], [1, H]


class DecoderStepExport(nn.Module):
    """One step of lib.seq2seq.BahdanauDecoder: (prev_token [1], state [1, H], memory [1, S, He],
    src_mask int64 [1, S]) -> (logits [1, V], state_out [1, H], attention [1, S])."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.decoder = model.decoder

    def forward(self, prev_token: Tensor, state: Tensor, memory: Tensor, src_mask: Tensor):
        logits, new_state, weights = self.decoder.step(
            prev_token, {"h": state}, memory, src_mask == 1
        )
        return logits, new_state["h"], weights


def _export(
    module: nn.Module,
    args: tuple,
    path: Path,
    inputs: list[str],
    outputs: list[str],
    dynamic: dict[str, dict[int, str]],
) -> None:
    # the models' input checks are traced as constants: the warnings say so, expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module.eval(),
            args,
            str(path),
            input_names=inputs,
            output_names=outputs,
            dynamic_axes=dynamic,
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )


def weights_to_fp16(path: Path, out: Path, min_size: int = FP16_MIN_SIZE) -> None:
    """Store every float32 initializer of at least `min_size` numbers as float16, followed by a Cast
    back to float32: the same graph and float32 arithmetic, about half the file."""
    model = onnx.load(str(path))
    graph = model.graph
    casts, kept = [], []
    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT and np.prod(init.dims) >= min_size:
            half = numpy_helper.from_array(
                numpy_helper.to_array(init).astype(np.float16), init.name + "__fp16"
            )
            kept.append(half)
            casts.append(
                helper.make_node(
                    "Cast",
                    [half.name],
                    [init.name],
                    to=TensorProto.FLOAT,
                    name=init.name + "__cast",
                )
            )
        else:
            kept.append(init)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))


# --- the models and their reference values --------------------------------------------------------


def minilm_inputs(
    tokenizer, text: str, max_tokens: int = MINILM_MAX_TOKENS
) -> dict[str, np.ndarray]:
    enc = tokenizer.encode(text, max_length=max_tokens)
    ids = np.array([enc.input_ids], dtype=np.int64)
    return {
        "input_ids": ids,
        "attention_mask": np.ones_like(ids),
        "token_type_ids": np.array([enc.token_type_ids], dtype=np.int64),
    }


def minilm_torch(model, tokenizer, text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(tokens, attentions [L, H, T, T], last hidden state [T, D]) computed by the library."""
    enc = tokenizer.encode(text, max_length=MINILM_MAX_TOKENS)
    with torch.no_grad():
        out = model(torch.tensor([enc.input_ids]), return_attention=True)
    return enc.tokens, torch.stack(out.attentions)[:, 0].numpy(), out.sequence_output[0].numpy()


def top_heads(att_a: np.ndarray, att_b: np.ndarray, q: int, k: int, n: int = 5) -> list:
    """Heads ranked by |change| of the weight from token q to token k between two sentences."""
    change = att_a[:, :, q, k] - att_b[:, :, q, k]  # [L, H]
    order = np.argsort(-np.abs(change).ravel(), kind="stable")[:n]
    H = change.shape[1]
    return [[int(i // H), int(i % H), round(float(change.ravel()[i]), 6)] for i in order]


# Long by design: one step after another of the build, in the order they run.
def export_minilm(models: Path, reference: dict, precision: str = "fp16") -> dict:
    from lib.pretrained import load_minilm, minilm_files

    model, tokenizer = load_minilm()
    ex = minilm_inputs(tokenizer, MINILM_SENTENCES[0])
    args = tuple(torch.from_numpy(ex[k]) for k in ("input_ids", "attention_mask", "token_type_ids"))
    fp32 = models / "minilm.fp32.onnx"
    _export(
        MiniLMExport(model),
        args,
        fp32,
        ["input_ids", "attention_mask", "token_type_ids"],
        ["last_hidden_state", "attentions"],
        {
            "input_ids": {1: "T"},
            "attention_mask": {1: "T"},
            "token_type_ids": {1: "T"},
            "last_hidden_state": {1: "T"},
            "attentions": {2: "T", 3: "T"},
        },
    )
    path = models / "minilm.onnx"
    if precision == "fp16":
        weights_to_fp16(fp32, path)
        fp32.unlink()
    else:
        fp32.rename(path)
    shutil.copyfile(minilm_files()[1], models / "minilm_vocab.txt")
    reference["minilm"] = []
    for text in MINILM_SENTENCES:
        tokens, att, _ = minilm_torch(model, tokenizer, text)
        enc = tokenizer.encode(text, max_length=MINILM_MAX_TOKENS)
        reference["minilm"].append(
            {
                "text": text,
                "tokens": tokens,
                "ids": enc.input_ids,
                "attentions": np.round(att, 6).tolist(),
            }
        )
    reference["minilm_pairs"] = []
    for a, b, q, k in MINILM_PAIRS:
        tok_a, att_a, _ = minilm_torch(model, tokenizer, a)
        _, att_b, _ = minilm_torch(model, tokenizer, b)
        qi, ki = tok_a.index(q), tok_a.index(k)
        reference["minilm_pairs"].append(
            {"a": a, "b": b, "from": q, "to": k, "top_heads": top_heads(att_a, att_b, qi, ki)}
        )
    c = model.config
    return {
        "file": path.name,
        "vocab": "minilm_vocab.txt",
        "max_tokens": MINILM_MAX_TOKENS,
        "layers": c.num_hidden_layers,
        "heads": c.num_attention_heads,
        "precision": ("float16 weights, float32 arithmetic" if precision == "fp16" else "float32"),
        "about": "all-MiniLM-L6-v2 (Wang et al. 2020; Reimers and Gurevych 2019): a 6-layer, 12-head, 384-wide BERT distilled from a larger one and fine-tuned on a billion sentence pairs; the real published weights, in the book's lib.bert.Bert",
        "inputs": {
            "input_ids": "int64 [1,T]",
            "attention_mask": "int64 [1,T]",
            "token_type_ids": "int64 [1,T]",
        },
        "outputs": {
            "last_hidden_state": f"float32 [1,T,{c.hidden_size}]",
            "attentions": f"float32 [{c.num_hidden_layers},{c.num_attention_heads},T,T]",
        },
    }


def load_translator():
    """The Bahdanau model of chapters 1 and 4 with its corpus and vocabularies, as chapter 4 loads it."""
    from lib.checkpoints import load_seq2seq
    from lib.data import build_vocabs, generate_pairs, split_pairs
    from lib.seq2seq import BahdanauDecoder

    pairs = generate_pairs(4000, seed=0)
    train_pairs, _, test_pairs = split_pairs(pairs, seed=0)
    src_vocab, tgt_vocab = build_vocabs(train_pairs)
    cfg = translator_config()
    decoder = BahdanauDecoder(
        len(tgt_vocab), cfg["d_emb"], cfg["d_hidden"], 2 * cfg["d_hidden"], cfg["d_attn"]
    )
    model, _, _ = load_seq2seq(
        "bahdanau", decoder, pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
    )
    return model, src_vocab, tgt_vocab, test_pairs


def translator_config() -> dict:
    """The saved configuration of the shipped Bahdanau model (d_emb, d_hidden, d_attn)."""
    from safetensors import safe_open

    from lib.checkpoints import seq2seq_path

    with safe_open(str(seq2seq_path("bahdanau")), framework="pt") as f:
        meta = f.metadata()
    return json.loads(meta["config"])


def translate_torch(
    model, src_vocab, tgt_vocab, words: list[str], max_len: int = TRANSLATOR_MAX_OUTPUT
):
    """Greedy translation by the library: (target words, attention [L, S]) for one sentence."""
    from lib.seq2seq import greedy_decode

    src = torch.tensor([src_vocab.encode(words)])
    with torch.no_grad():
        tokens, _, weights = greedy_decode(
            model, src, torch.tensor([len(words)]), max_len, tgt_vocab.bos_id, tgt_vocab.eos_id
        )
    ids = tokens[0].tolist()
    n = ids.index(tgt_vocab.eos_id) + 1 if tgt_vocab.eos_id in ids else len(ids)
    return ids[:n], weights[0, :n].numpy()


# Long by design: one step after another of the build, in the order they run.
def export_translator(models: Path, reference: dict) -> tuple[dict, dict]:
    model, src_vocab, tgt_vocab, test_pairs = load_translator()
    words = TRANSLATOR_SENTENCES[0].split()
    src = torch.tensor([src_vocab.encode(words)])
    memory, state = EncoderExport(model)(src)
    _export(
        EncoderExport(model),
        (src,),
        models / "translator_encoder.onnx",
        ["src_ids"],
        ["memory", "state"],
        {"src_ids": {1: "S"}, "memory": {1: "S"}},
    )
    mask = torch.ones_like(src)
    prev = torch.tensor([tgt_vocab.bos_id])
    _export(
        DecoderStepExport(model),
        (prev, state, memory, mask),
        models / "translator_decoder.onnx",
        ["prev_token", "state", "memory", "src_mask"],
        ["logits", "state_out", "attention"],
        {"memory": {1: "S"}, "src_mask": {1: "S"}, "attention": {1: "S"}},
    )
    vocab = {
        "source": src_vocab.itos,
        "target": tgt_vocab.itos,
        "specials": {
            "pad": src_vocab.pad_id,
            "bos": src_vocab.bos_id,
            "eos": src_vocab.eos_id,
            "unk": src_vocab.unk_id,
        },
        "rule": "lower-case the text, split it on whitespace; each word is a token (the corpus has no punctuation); a word not in the source list is <unk>",
    }
    (models / "translation_vocab.json").write_text(json.dumps(vocab))
    sentences = TRANSLATOR_SENTENCES + [" ".join(p.src) for p in test_pairs[:4]]
    reference["translator"] = []
    for s in sentences:
        ids, att = translate_torch(model, src_vocab, tgt_vocab, s.split())
        out_words = tgt_vocab.decode(ids)
        reference["translator"].append(
            {
                "source": s,
                "ids": ids,
                "translation": " ".join(out_words),
                "tokens": [tgt_vocab.itos[i] for i in ids],
                "attention": np.round(att, 6).tolist(),
            }
        )
    d = model.decoder
    about = "the Bahdanau et al. (2015) attention translator of chapters 1 and 4: a bidirectional GRU encoder and an additive-attention GRU decoder, trained by tools/train_seq2seq.py on the book's generated English to French-like corpus"
    common = {"vocab": "translation_vocab.json", "precision": "float32", "about": about}
    enc = {
        "file": "translator_encoder.onnx",
        **common,
        "max_tokens": 40,
        "inputs": {"src_ids": "int64 [1,S]"},
        "outputs": {"memory": f"float32 [1,S,{d.d_enc}]", "state": f"float32 [1,{d.d_hidden}]"},
    }
    dec = {
        "file": "translator_decoder.onnx",
        **common,
        "max_output": TRANSLATOR_MAX_OUTPUT,
        "bos": tgt_vocab.bos_id,
        "eos": tgt_vocab.eos_id,
        "inputs": {
            "prev_token": "int64 [1]",
            "state": f"float32 [1,{d.d_hidden}]",
            "memory": f"float32 [1,S,{d.d_enc}]",
            "src_mask": "int64 [1,S]",
        },
        "outputs": {
            "logits": f"float32 [1,{d.vocab_size}]",
            "state_out": f"float32 [1,{d.d_hidden}]",
            "attention": "float32 [1,S]",
        },
    }
    return enc, dec


GPT_PROMPTS = [
    "mia had a cat .",
    "tom took the boat to the",
    "the cat did n't cross the road because it was too tired .",
]  # chapter 13's


def gpt_torch(model, stoi: dict, bos: int, text: str):
    """(ids, next-token probabilities [V], attention of the last token [L, H, T]) by the library."""
    ids = [bos] + [stoi[w] for w in text.split()]
    with torch.no_grad():
        out = model(torch.tensor([ids]), return_attention=True)
    probs = torch.softmax(out.logits[0, -1], -1)
    last = torch.stack(out.attentions)[:, 0, :, -1]  # [L, H, T]
    return ids, probs.numpy(), last.numpy()


def export_gpt(models: Path, reference: dict) -> dict:
    from lib.checkpoints import load_story_gpt
    from lib.gpt import greedy_decode

    model, itos, info = load_story_gpt()
    stoi = {t: i for i, t in enumerate(itos)}
    bos = info["specials"]["bos"]
    ids = torch.tensor([[bos] + [stoi[w] for w in GPT_PROMPTS[0].split()]])
    _export(
        GPTExport(model),
        (ids,),
        models / "gpt.onnx",
        ["input_ids"],
        ["logits", "attentions"],
        {"input_ids": {1: "T"}, "logits": {1: "T"}, "attentions": {2: "T", 3: "T"}},
    )
    vocab = {
        "tokens": itos,
        "specials": info["specials"],
        "rule": "lower-case the text, split it on whitespace (punctuation is written apart: 'it was too tired .'); a word not in the list is <unk>; the model reads <bos> first",
    }
    (models / "stories_vocab.json").write_text(json.dumps(vocab))
    reference["gpt"] = []
    for prompt in GPT_PROMPTS:
        ids, probs, last = gpt_torch(model, stoi, bos, prompt)
        greedy = greedy_decode(model, torch.tensor([ids]), 8).tokens[0]
        reference["gpt"].append(
            {
                "prompt": prompt,
                "ids": ids,
                "next_probs": np.round(probs, 7).tolist(),
                "greedy": [itos[i] for i in greedy.tolist()],
                "last_attention": np.round(last, 6).tolist(),
            }
        )
    c = model.config
    return {
        "file": "gpt.onnx",
        "vocab": "stories_vocab.json",
        "precision": "float32",
        "max_tokens": c.block_size,
        "layers": c.n_layer,
        "heads": c.n_head,
        "about": f"a GPT of {c.n_layer} layers, {c.n_head} heads, {c.n_embd} dimensions trained by tools/train_story_gpt.py with chapter 13's recipe on the book's generated stories (validation perplexity {math.exp(info['val_loss']):.2f})",
        "inputs": {"input_ids": "int64 [1,T]"},
        "outputs": {
            "logits": f"float32 [1,T,{c.vocab_size}]",
            "attentions": f"float32 [{c.n_layer},{c.n_head},T,T]",
        },
    }


def _file_facts(path: Path) -> dict:
    data = path.read_bytes()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def export_all(out: Path, precision: str = "fp16") -> dict:
    """Write OUT/models/* and OUT/reference.json; return the manifest."""
    models = out / "models"
    if models.exists():
        shutil.rmtree(models)
    models.mkdir(parents=True)
    torch.manual_seed(0)
    reference: dict = {}
    entries = {"minilm": export_minilm(models, reference, precision)}
    entries["translator_encoder"], entries["translator_decoder"] = export_translator(
        models, reference
    )
    entries["gpt"] = export_gpt(models, reference)
    for entry in entries.values():
        entry.update(_file_facts(models / entry["file"]))
        entry["vocab_bytes"] = (models / entry["vocab"]).stat().st_size
    manifest = {"format": 1, "opset": OPSET, "torch": torch.__version__, "models": entries}
    (models / "manifest.json").write_text(json.dumps(manifest, indent=1))
    (out / "reference.json").write_text(json.dumps(reference))
    return manifest


def study(precisions=("fp32", "fp16")) -> list[tuple[str, int, float]]:
    """Size and max abs attention error against PyTorch for each precision (the table above)."""
    import tempfile

    import onnxruntime as ort

    from lib.pretrained import load_minilm

    model, tokenizer = load_minilm()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in precisions:
            folder = Path(tmp) / p
            folder.mkdir()
            export_minilm(folder, {}, p)
            path = folder / "minilm.onnx"
            session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            err = 0.0
            for text in MINILM_SENTENCES:
                _, att, _ = minilm_torch(model, tokenizer, text)
                got = session.run(["attentions"], minilm_inputs(tokenizer, text))[0]
                err = max(err, float(np.abs(got - att).max()))
            rows.append((p, path.stat().st_size, err))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "live")
    parser.add_argument(
        "--precision",
        choices=("fp16", "fp32"),
        default="fp16",
        help="how MiniLM's weights are stored (arithmetic is float32 either way)",
    )
    parser.add_argument(
        "--study", action="store_true", help="print size and attention error per precision"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.study:
        for p, size, err in study():
            print(f"{p}: {size / 1e6:.1f} MB, max abs attention error {err:.2e}")
        return 0
    start = time.time()
    manifest = export_all(args.out, args.precision)
    sizes = ", ".join(f"{k} {v['bytes'] / 1e6:.1f} MB" for k, v in manifest["models"].items())
    print(f"exported to {args.out}/models in {time.time() - start:.0f} s: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
