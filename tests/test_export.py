"""The ONNX exports of the live figures (tools/export_models.py) equal the library's PyTorch models.

The models are exported once into a temporary folder (about 5 s) and run with onnxruntime (PyPI), one
thread. Tolerances:
- float32 exports (the translator, MiniLM with --precision fp32): 1e-4 on every output, far above the
  ~1e-6 that reordered float32 sums give, far below anything a figure can show.
- the shipped MiniLM keeps its weights as float16 (float32 arithmetic): a weight moves by at most
  2^-11 of itself (4.9e-4 relative); the attention weights measured move by at most 7.2e-4 on the
  chapters' sentences. The test allows 2e-3 (the figure shows two decimals; the issue asks <= 0.01),
  and asks for the same ranking of the top five heads on the chapter's animal/it pair.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import export_models as ex  # noqa: E402
import onnxruntime as ort  # noqa: E402

from tests.tolerance import assert_float_close  # noqa: E402

FP16_ATTENTION_TOL = 2e-3
FP32_TOL = 1e-4


def session(path: Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("live")
    torch.set_num_threads(1)
    manifest = ex.export_all(out, "fp16")
    return out, manifest


@pytest.fixture(scope="module")
def minilm():
    from lib.pretrained import load_minilm

    return load_minilm()


def test_manifest_describes_the_files(exported):
    out, manifest = exported
    on_disk = json.loads((out / "models" / "manifest.json").read_text())
    assert on_disk == manifest
    assert set(manifest["models"]) == {"minilm", "translator_encoder", "translator_decoder", "gpt"}
    for name, entry in manifest["models"].items():
        data = (out / "models" / entry["file"]).read_bytes()
        assert entry["bytes"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
        model = ex.onnx.load(str(out / "models" / entry["file"]))
        assert [i.name for i in model.graph.input] == list(entry["inputs"]), name
        assert [o.name for o in model.graph.output] == list(entry["outputs"]), name
        assert (out / "models" / entry["vocab"]).is_file()
    # the goal: the MiniLM figure downloads <= 60 MB with the runtime (~12 MB of WebAssembly)
    assert manifest["models"]["minilm"]["bytes"] < 46e6


def test_every_output_axis_is_dynamic(exported):
    # onnxruntime-web warns on the console (VerifyOutputSizes) when an output's length is fixed
    out, _ = exported
    expected = {
        "minilm.onnx": {"last_hidden_state": [1], "attentions": [2, 3]},
        "translator_encoder.onnx": {"memory": [1]},
        "translator_decoder.onnx": {"attention": [1]},
        "gpt.onnx": {"logits": [1], "attentions": [2, 3]},
    }
    for file, outputs in expected.items():
        model = ex.onnx.load(str(out / "models" / file))
        for value in model.graph.output:
            dims = value.type.tensor_type.shape.dim
            for axis in outputs.get(value.name, []):
                assert dims[axis].dim_param in ("T", "S"), (file, value.name, axis)


def test_minilm_fp16_equals_pytorch(exported, minilm):
    out, _ = exported
    model, tokenizer = minilm
    sess = session(out / "models" / "minilm.onnx")
    worst = 0.0
    for text in ex.MINILM_SENTENCES + ["a", "Ünïcödé, 日本語 and emoji 🙂 " * 3]:
        tokens, att, hidden = ex.minilm_torch(model, tokenizer, text)
        got_hidden, got_att = sess.run(None, ex.minilm_inputs(tokenizer, text))
        assert got_att.shape == att.shape == (6, 12, len(tokens), len(tokens))
        worst = max(worst, float(np.abs(got_att - att).max()))
        # still distributions: onnxruntime's softmax over T and this sum over T, summing to 1 (float32
        # sums; the float16 weights change the values, not that they sum to 1)
        T = len(tokens)
        sums = got_att.sum(-1)
        assert_float_close(sums, np.ones_like(sums), terms=T + T, scale=1)
        assert np.abs(got_hidden[0] - hidden).max() < 0.05  # 384-dim vectors of size ~1
    assert worst < FP16_ATTENTION_TOL, worst


def test_minilm_fp16_keeps_the_chapters_head_ranking(exported, minilm):
    out, _ = exported
    model, tokenizer = minilm
    sess = session(out / "models" / "minilm.onnx")
    reference = json.loads((out / "reference.json").read_text())
    for pair in reference["minilm_pairs"]:
        runs = [
            sess.run(["attentions"], ex.minilm_inputs(tokenizer, s))[0]
            for s in (pair["a"], pair["b"])
        ]
        tokens = tokenizer.encode(pair["a"]).tokens
        q, k = tokens.index(pair["from"]), tokens.index(pair["to"])
        ours = ex.top_heads(runs[0], runs[1], q, k)
        assert [h[:2] for h in ours] == [h[:2] for h in pair["top_heads"]]
        assert pair["top_heads"][0][:2] == [3, 1]  # chapter 15's head 3-1
        np.testing.assert_allclose(
            [h[2] for h in ours], [h[2] for h in pair["top_heads"]], atol=4e-3
        )


def test_minilm_fp32_export_is_exact(tmp_path, minilm):
    model, tokenizer = minilm
    ex.export_minilm(tmp_path, {}, "fp32")
    sess = session(tmp_path / "minilm.onnx")
    for text in ex.MINILM_SENTENCES[:2]:
        _, att, hidden = ex.minilm_torch(model, tokenizer, text)
        got_hidden, got_att = sess.run(None, ex.minilm_inputs(tokenizer, text))
        assert (
            np.abs(got_att - att).max() < FP32_TOL
            and np.abs(got_hidden[0] - hidden).max() < FP32_TOL
        )


def test_reference_values_are_the_librarys(exported, minilm):
    out, _ = exported
    model, tokenizer = minilm
    reference = json.loads((out / "reference.json").read_text())
    first = reference["minilm"][0]
    assert first["text"] == ex.MINILM_SENTENCES[0]
    assert first["text"] == "The trophy didn't fit in the suitcase because it was too big."
    tokens, att, _ = ex.minilm_torch(model, tokenizer, first["text"])
    assert first["tokens"] == tokens and first["ids"] == tokenizer.encode(first["text"]).input_ids
    assert np.abs(np.array(first["attentions"]) - att).max() <= 1e-6


def greedy_onnx(out: Path, src_ids: list[int], bos: int, eos: int, max_len: int):
    enc, dec = (
        session(out / "models" / f) for f in ("translator_encoder.onnx", "translator_decoder.onnx")
    )
    src = np.array([src_ids], dtype=np.int64)
    memory, state = enc.run(None, {"src_ids": src})
    mask = np.ones_like(src)
    token, ids, rows = bos, [], []
    for _ in range(max_len):
        logits, state, attention = dec.run(
            None,
            {
                "prev_token": np.array([token], dtype=np.int64),
                "state": state,
                "memory": memory,
                "src_mask": mask,
            },
        )
        token = int(logits[0].argmax())
        ids.append(token)
        rows.append(attention[0])
        if token == eos:
            break
    return ids, np.array(rows)


def test_translator_greedy_decoding_equals_the_library(exported):
    out, _ = exported
    model, src_vocab, tgt_vocab, test_pairs = ex.load_translator()
    sentences = [" ".join(p.src) for p in test_pairs[:12]] + [ex.TRANSLATOR_SENTENCES[0]]
    for s in sentences:
        ids, att = ex.translate_torch(model, src_vocab, tgt_vocab, s.split())
        got_ids, got_att = greedy_onnx(
            out,
            src_vocab.encode(s.split()),
            tgt_vocab.bos_id,
            tgt_vocab.eos_id,
            ex.TRANSLATOR_MAX_OUTPUT,
        )
        assert got_ids == ids, s
        assert np.abs(got_att - att).max() < FP32_TOL, s
    reference = json.loads((out / "reference.json").read_text())
    first = reference["translator"][0]
    assert first["source"] == "a heavy green cow rarely runs"
    assert first["translation"] == " ".join(tgt_vocab.decode(first["ids"]))


def test_translator_vocabulary_file(exported):
    out, _ = exported
    _, src_vocab, tgt_vocab, _ = ex.load_translator()
    vocab = json.loads((out / "models" / "translation_vocab.json").read_text())
    assert vocab["source"] == src_vocab.itos and vocab["target"] == tgt_vocab.itos
    assert vocab["specials"]["unk"] == src_vocab.unk_id


def test_story_gpt_equals_the_library_at_any_length(exported):
    from lib.checkpoints import load_story_gpt

    out, manifest = exported
    model, itos, info = load_story_gpt()
    stoi = {t: i for i, t in enumerate(itos)}
    sess = session(out / "models" / "gpt.onnx")
    bos = info["specials"]["bos"]
    for prompt in ex.GPT_PROMPTS + ["the", "mia had a cat . " * 12]:
        ids = [bos] + [stoi[w] for w in prompt.split()][: model.config.block_size - 1]
        with torch.no_grad():
            ref = model(torch.tensor([ids]), return_attention=True)
        logits, att = sess.run(None, {"input_ids": np.array([ids], dtype=np.int64)})
        assert np.abs(logits - ref.logits.numpy()).max() < FP32_TOL
        assert np.abs(att - torch.stack(ref.attentions)[:, 0].numpy()).max() < FP32_TOL
        assert att.shape == (2, 4, len(ids), len(ids))
    # greedy decoding through the ONNX model gives the library's tokens
    reference = json.loads((out / "reference.json").read_text())
    for entry in reference["gpt"]:
        ids = list(entry["ids"])
        for _ in range(8):
            logits = sess.run(["logits"], {"input_ids": np.array([ids], dtype=np.int64)})[0]
            ids.append(int(logits[0, -1].argmax()))
        assert [itos[i] for i in ids[len(entry["ids"]) :]] == entry["greedy"]
    assert entry["greedy"][:2] == ["<eos>", "<bos>"]  # "... too tired ." ends the sentence


def test_story_gpt_checkpoint_is_trained():
    from lib.checkpoints import load_story_gpt

    model, itos, info = load_story_gpt()
    # tools/train_story_gpt.py measured validation loss 0.817 (perplexity 2.26) on held-out stories;
    # chapter 13's 300-step model reaches 2.4. A untrained model has ln V = 5.6.
    assert info["val_loss"] < 0.9 and info["losses"][0] > 5.0
    assert model.config.block_size == 64 and len(itos) == model.config.vocab_size
