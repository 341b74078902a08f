"""Trained models that the book ships, and the function that loads them.

Training the recurrent translation models of the chapters "From sequence-to-sequence to attention" and
"Bahdanau and Luong" takes minutes per model on a CPU, more than a chapter may spend, so
``tools/train_seq2seq.py`` trains them once and saves them here as ``seq2seq_<name>.safetensors``
(``python tools/train_seq2seq.py [names...]`` regenerates them; deterministic with one thread). The files
are package data: ``pip install`` of the book's library brings them along, in Colab too, with no download.

Each file holds the model's weights (``model.*``), the loss of every training step (``history.losses``)
and metadata: the configuration, the training settings, the vocabularies, the fingerprint of the corpus
(:func:`lib.data.corpus_fingerprint`), the seconds training took and the torch version.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import safe_open
from torch import nn

from lib._validate import check_choice
from lib.data.translation import Pair, Vocab, corpus_fingerprint
from lib.seq2seq import Encoder, Seq2Seq

HERE = Path(__file__).resolve().parent
SEQ2SEQ = ("plain", "bahdanau", "hard", "luong_global", "luong_local")
STORY_GPT_PATH = HERE / "gpt_stories.safetensors"  # tools/train_story_gpt.py (chapter 13's recipe)
# tools/train_story_llama.py: chapter 13's GPT and chapter 17's decoder, their losses per step and seed
STORY_LLAMA_CURVES_PATH = HERE / "story_llama_curves.json"
STORY_LLAMA_PATH = HERE / "llama_stories.safetensors"  # its "llama" run of seed 0, in float16


def seq2seq_path(name: str) -> Path:
    """The file of the shipped model `name` (one of SEQ2SEQ)."""
    check_choice(name, "name", SEQ2SEQ)
    return HERE / f"seq2seq_{name}.safetensors"


def load_seq2seq(
    name: str, decoder: nn.Module, *, pairs: list[Pair], src_vocab: Vocab, tgt_vocab: Vocab
) -> tuple[Seq2Seq, torch.Tensor, dict]:
    """The shipped model `name`: a fresh Encoder and `decoder` (built by the caller, untrained) with the
    saved weights, in eval mode; with its training losses (one per step) and its metadata.

    The caller passes the corpus it generated and its vocabularies; they must be the ones the model was
    trained on (same fingerprint, same tokens in the same order), and `decoder` must be of the saved class
    and size, or a ValueError says what differs.
    """
    path = seq2seq_path(name)
    with safe_open(str(path), framework="pt") as f:
        meta, tensors = f.metadata(), {k: f.get_tensor(k) for k in f.keys()}
    config = json.loads(meta["config"])
    if corpus_fingerprint(pairs) != meta["corpus_sha256"]:
        raise ValueError(
            f"pairs: not the corpus {name!r} was trained on ({meta['corpus']}); generate it with those settings, or retrain with tools/train_seq2seq.py"
        )
    for arg, vocab, key in (
        ("src_vocab", src_vocab, "src_vocab"),
        ("tgt_vocab", tgt_vocab, "tgt_vocab"),
    ):
        if vocab.itos != json.loads(meta[key]):
            raise ValueError(
                f"{arg}: not the vocabulary {name!r} was trained with; build it from the training pairs"
            )
    if type(decoder).__name__ != config["decoder"]:
        raise ValueError(
            f"decoder: {name!r} holds a {config['decoder']}, got a {type(decoder).__name__}"
        )
    if getattr(decoder, "window", None) != config.get("window"):
        raise ValueError(
            f"decoder: {name!r} was trained with window={config.get('window')}, got window={getattr(decoder, 'window', None)}"
        )
    model = Seq2Seq(Encoder(len(src_vocab), config["d_emb"], config["d_hidden"]), decoder)
    weights = {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:  # sizes differ: say which argument to change
        raise ValueError(
            f"decoder: its sizes differ from the saved {name!r} (d_emb={config['d_emb']}, d_hidden={config['d_hidden']}): {e}"
        ) from None
    info = {
        **meta,
        "config": config,
        "training": json.loads(meta["training"]),
        "seconds": float(meta["seconds"]),
    }
    return model.eval(), tensors["history.losses"], info


def load_story_gpt():
    """The small GPT trained on the story corpus by tools/train_story_gpt.py (the live figure of
    chapter 13): (lib.gpt.GPT in eval mode, vocabulary as a list of tokens in id order, metadata)."""
    from lib.gpt import GPT, GPTConfig

    if not STORY_GPT_PATH.is_file():
        raise FileNotFoundError(
            f"{STORY_GPT_PATH} is missing: run `python tools/train_story_gpt.py`"
        )
    with safe_open(str(STORY_GPT_PATH), framework="pt") as f:
        meta, tensors = f.metadata(), {k: f.get_tensor(k) for k in f.keys()}
    model = GPT(GPTConfig(**json.loads(meta["config"])))
    weights = {k: v for k, v in tensors.items() if not k.startswith("history.")}
    weights["lm_head.weight"] = weights["transformer.wte.weight"]  # tied: saved once
    model.load_state_dict(weights)
    info = {
        **meta,
        "specials": json.loads(meta["specials"]),
        "training": json.loads(meta["training"]),
        "val_loss": float(meta["val_loss"]),
        "losses": tensors["history.losses"],
    }
    return model.eval(), json.loads(meta["vocab"]), info


def load_story_llama():
    """Chapter 17's modern decoder trained on the story corpus by tools/train_story_llama.py (the
    run "llama", seed 0, stored in float16 to keep the file small): (lib.llama.Llama in eval mode
    and float32, vocabulary as a list of tokens in id order, metadata with its held-out loss in
    float32 before the rounding to float16)."""
    from lib.llama import Llama, LlamaConfig

    if not STORY_LLAMA_PATH.is_file():
        raise FileNotFoundError(
            f"{STORY_LLAMA_PATH} is missing: run `python tools/train_story_llama.py`"
        )
    with safe_open(str(STORY_LLAMA_PATH), framework="pt") as f:
        meta, tensors = f.metadata(), {k: f.get_tensor(k).float() for k in f.keys()}
    model = Llama(LlamaConfig(**json.loads(meta["config"])))
    if model.config.tie_word_embeddings:  # saved once
        tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"]
    model.load_state_dict(tensors)
    info = {**meta, "training": json.loads(meta["training"]), "val_loss": float(meta["val_loss"])}
    return model.eval(), json.loads(meta["vocab"]), info
