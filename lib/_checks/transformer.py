"""The input checks of lib.transformer, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from torch import Tensor

from lib._validate import check_id, check_ids, check_int, check_tensor, is_int


def check_transformer_config(c) -> None:
    """TransformerConfig's sizes, dropout, shared vocabularies and pad_id."""
    for name in (
        "src_vocab_size",
        "tgt_vocab_size",
        "d_model",
        "n_heads",
        "n_layers",
        "d_ff",
        "max_len",
    ):
        check_int(getattr(c, name), name, 1)
    if c.d_model % c.n_heads != 0:
        raise ValueError(f"d_model={c.d_model} is not divisible by n_heads={c.n_heads}")
    if not 0.0 <= c.dropout < 1.0:
        raise ValueError(f"dropout: expected a probability in [0, 1), got {c.dropout!r}")
    if c.share_src_tgt_embeddings and c.src_vocab_size != c.tgt_vocab_size:
        raise ValueError(
            f"share_src_tgt_embeddings needs src_vocab_size == tgt_vocab_size, got {c.src_vocab_size} and {c.tgt_vocab_size}"
        )
    smallest = min(c.src_vocab_size, c.tgt_vocab_size)
    if not 0 <= c.pad_id < smallest:
        raise ValueError(
            f"pad_id: expected an id in [0, {smallest}) (inside both vocabularies), got {c.pad_id!r}"
        )


def check_transformer_ids(ids, name: str, vocab_size: int, max_len: int) -> None:
    """check_ids, and a length of at most max_len (the positions the model has)."""
    check_ids(ids, name, vocab_size, layout="[B, L]")
    if ids.shape[1] > max_len:
        raise ValueError(
            f"{name}: expected shape [B, L] with 1 <= L <= max_len={max_len}, got shape {tuple(ids.shape)}"
        )


def check_transformer_inputs(c, src, tgt_in) -> None:
    """Transformer.forward's src [B, S] and tgt_in [B, T], ids in their vocabularies."""
    check_transformer_ids(src, "src", c.src_vocab_size, c.max_len)
    check_transformer_ids(tgt_in, "tgt_in", c.tgt_vocab_size, c.max_len)
    if src.shape[0] != tgt_in.shape[0]:
        raise ValueError(
            f"tgt_in: expected batch size {src.shape[0]} (that of src), got shape {tuple(tgt_in.shape)}"
        )


def check_transformer_decode_inputs(c, tgt_in, memory) -> None:
    """Transformer.decode's tgt_in [B, T] and memory [B, S, D] (the encoder's output)."""
    check_transformer_ids(tgt_in, "tgt_in", c.tgt_vocab_size, c.max_len)
    check_tensor(memory, "memory", f"[B, S, {c.d_model}]", 3, exact=True, width=c.d_model)
    if memory.shape[0] != tgt_in.shape[0]:
        raise ValueError(
            f"memory: expected batch size {tgt_in.shape[0]} (that of tgt_in), got shape {tuple(memory.shape)}"
        )


def check_transformer_decoding(c, src, max_len, bos_id, eos_id, one_sentence: bool = False) -> None:
    """greedy_decode's and beam_search's arguments (beam search: src of one sentence [1, S])."""
    if not is_int(max_len) or not 1 <= max_len <= c.max_len:
        raise ValueError(
            f"max_len: expected an int in [1, {c.max_len}] (the model's max_len), got {max_len!r}"
        )
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_id(value, name, c.tgt_vocab_size, "the target vocabulary")
    if one_sentence and (not isinstance(src, Tensor) or src.dim() != 2 or src.shape[0] != 1):
        got = tuple(src.shape) if isinstance(src, Tensor) else type(src).__name__
        raise ValueError(f"src: expected shape [1, S] (one sentence), got {got}")
