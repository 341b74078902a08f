"""Train the recurrent translation models of the chapters "From sequence-to-sequence to attention" and
"Bahdanau and Luong" on the book's parallel corpus and save each to lib/checkpoints/seq2seq_<name>.safetensors.

    python tools/train_seq2seq.py                      # every model, in order
    python tools/train_seq2seq.py plain bahdanau       # some of them

Training these models takes minutes per model on a CPU, more than a chapter may spend, so the chapters
load these files (the book's build and tests never train). A file holds the model's weights, the loss
of every training step ("history.losses") and, as metadata, everything needed to rebuild the model and
to check that a chapter uses the same corpus: the configuration, the training settings, the
vocabularies, a fingerprint of the corpus, the seconds it took and the torch version. Deterministic:
one thread, fixed seeds (the same command with the same torch version gives the same weights).

Every model is trained the same way (TRAINING) except where MODELS says otherwise:
- "hard" scales the REINFORCE term by 0.05: the reward (a sentence's log-likelihood) is a sum over
  about 20 words, so with the default weight 1 the noisy REINFORCE gradient swamps the likelihood's;
- "luong_local" starts from the trained "luong_global" (everything but the position network W_p, v_p)
  and is fine-tuned while its window shrinks, D = 16, 12, 10, 9, 8, 7 (80 steps each, a fresh warmup
  for each), ending at D = 7. Trained from scratch (D = 3, 5 or 10), its predicted position p_t drifted
  to 0 or S, where the sigmoid is flat, before the decoder had learned to use any context, and it never
  learned where to look; fine-tuned from the global model at a fixed D = 3, likewise. With the shrinking
  window p_t becomes accurate to about 2 words on average; windows narrower than that (D = 6 and below)
  collapsed the same way.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from lib.data import build_vocabs, corpus_fingerprint, epochs, generate_pairs, split_pairs
from lib.hard_attention import HardAttentionDecoder
from lib.seq2seq import BahdanauDecoder, Encoder, LuongDecoder, PlainDecoder, Seq2Seq
from lib.train import fit

# package data: see lib/checkpoints
OUT = Path(__file__).resolve().parents[1] / "lib" / "checkpoints"
# generate_pairs(n, seed); split_pairs(seed=split_seed)
CORPUS = {"n": 4000, "seed": 0, "split_seed": 0}
WIDTHS = {"d_emb": 32, "d_hidden": 64}  # encoder and decoder; d_enc = 2 * d_hidden
TRAINING = {
    "steps": 1500,
    "lr": 1e-2,
    "warmup_steps": 50,
    "decay": "cosine",
    "clip": 1.0,
    "batch_size": 64,
    "seed": 0,
}
# name: {"decoder": class name, decoder arguments..., optional "training" overrides, "init_from"}
MODELS = {
    "plain": {"decoder": "PlainDecoder"},
    "bahdanau": {"decoder": "BahdanauDecoder", "d_attn": 64},
    "hard": {"decoder": "HardAttentionDecoder", "d_attn": 64, "reinforce_weight": 0.05},
    "luong_global": {"decoder": "LuongDecoder", "score": "concat"},
    "luong_local": {
        "decoder": "LuongDecoder",
        "score": "concat",
        "window": 7,
        "init_from": "luong_global",
        "window_schedule": [16, 12, 10, 9, 8, 7],
        "training": {"steps": 80, "lr": 3e-3, "warmup_steps": 20, "seed": 1},
    },
}
DECODERS = {
    "PlainDecoder": PlainDecoder,
    "BahdanauDecoder": BahdanauDecoder,
    "LuongDecoder": LuongDecoder,
    "HardAttentionDecoder": HardAttentionDecoder,
}


def corpus():
    """(train, validation, test) pairs, the (source, target) vocabularies built from train, and the
    corpus fingerprint (sha256 of every pair, so that a changed generator is caught)."""
    pairs = generate_pairs(CORPUS["n"], seed=CORPUS["seed"])
    train, val, test = split_pairs(pairs, seed=CORPUS["split_seed"])
    return (train, val, test), build_vocabs(train), corpus_fingerprint(pairs)


def build(config: dict, src_vocab_size: int, tgt_vocab_size: int) -> Seq2Seq:
    """The (untrained) model that a MODELS entry describes."""
    E, H = WIDTHS["d_emb"], WIDTHS["d_hidden"]
    extra = {
        k: v
        for k, v in config.items()
        if k not in ("decoder", "training", "init_from", "window_schedule")
    }
    decoder = DECODERS[config["decoder"]](tgt_vocab_size, E, H, 2 * H, **extra)
    return Seq2Seq(Encoder(src_vocab_size, E, H), decoder)


def train(name: str) -> Path:
    (train_pairs, _, _), (src_vocab, tgt_vocab), fingerprint = corpus()
    config = MODELS[name]
    t = {**TRAINING, **config.get("training", {})}
    torch.manual_seed(t["seed"])
    model = build(config, len(src_vocab), len(tgt_vocab))
    if "init_from" in config:
        start = load_file(str(OUT / f"seq2seq_{config['init_from']}.safetensors"))
        weights = {k.removeprefix("model."): v for k, v in start.items() if k.startswith("model.")}
        missing, unexpected = model.load_state_dict(weights, strict=False)
        assert not unexpected, unexpected
        print(f"{name}: starts from {config['init_from']}; new parameters: {missing}")
    stream = epochs(
        train_pairs, src_vocab, tgt_vocab, t["batch_size"], seed=t["seed"], sort_by_length=True
    )
    losses, seconds = [], 0.0
    # one stage unless a schedule
    for stage, window in enumerate(config.get("window_schedule", [None])):
        if window is not None:
            model.decoder.window = window
        history = fit(
            model,
            stream,
            lambda m, b: m.loss(b),
            steps=t["steps"],
            lr=t["lr"],
            warmup_steps=t["warmup_steps"],
            decay=t["decay"],
            clip=t["clip"],
            seed=t["seed"] + stage,
            desc=name if window is None else f"{name}, D = {window}",
        )
        losses, seconds = losses + history.losses, seconds + history.seconds
    assert config.get("window") == getattr(model.decoder, "window", None)
    tensors = {f"model.{k}": v.contiguous() for k, v in model.state_dict().items()}
    tensors["history.losses"] = torch.tensor(losses)
    metadata = {
        "name": name,
        "config": json.dumps({**WIDTHS, **config}),
        "training": json.dumps(t),
        "corpus": json.dumps(CORPUS),
        "corpus_sha256": fingerprint,
        "src_vocab": json.dumps(src_vocab.itos),
        "tgt_vocab": json.dumps(tgt_vocab.itos),
        "seconds": f"{seconds:.0f}",
        "torch": torch.__version__,
    }
    OUT.mkdir(exist_ok=True)
    path = OUT / f"seq2seq_{name}.safetensors"
    save_file(tensors, str(path), metadata=metadata)
    print(
        f"{name}: mean loss of the last 50 steps {sum(losses[-50:]) / 50:.4f}, {seconds:.0f} s -> {path}"
    )
    return path


if __name__ == "__main__":
    torch.set_num_threads(1)  # small recurrent models: one thread is fastest
    names = sys.argv[1:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {unknown}; choose from {list(MODELS)}")
    for name in names:
        train(name)
