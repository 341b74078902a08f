"""The input checks of lib.bert, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import check_ids, check_int, check_number, check_probability


def check_bert_config(c) -> None:
    """The fields of a ``lib.bert.BertConfig``: sizes positive ints, heads dividing the width,
    dropout probabilities in [0, 1), layer_norm_eps and initializer_range positive."""
    for name in (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
        "type_vocab_size",
    ):
        check_int(getattr(c, name), name, 1)
    if c.hidden_size % c.num_attention_heads:
        raise ValueError(
            f"hidden_size={c.hidden_size} is not divisible by num_attention_heads={c.num_attention_heads}"
        )
    for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
        check_probability(getattr(c, name), name, "[0, 1)")
    for name in ("layer_norm_eps", "initializer_range"):
        check_number(getattr(c, name), name, "a positive number", lambda v: v > 0)


def check_bert_inputs(c, input_ids, token_type_ids=None, attention_mask=None) -> None:
    """The inputs of a BERT-family encoder (BERT, ALBERT) with config ``c``: ids within the
    vocabulary and the position table, segment ids of input_ids' shape, and the attention mask
    ([B, T] or [B, T, T], bool or 0/1)."""
    check_ids(input_ids, "input_ids", c.vocab_size, "the vocabulary")
    B, T = input_ids.shape
    if T > c.max_position_embeddings:
        raise ValueError(
            f"input_ids: expected at most max_position_embeddings={c.max_position_embeddings} tokens per sequence (the position table), got shape {tuple(input_ids.shape)}"
        )
    if token_type_ids is not None:
        segments = "segment ids: 0 for sentence A, 1 for sentence B"
        what = segments if c.type_vocab_size == 2 else "the segment table"
        check_ids(token_type_ids, "token_type_ids", c.type_vocab_size, what)
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids: expected shape {tuple(input_ids.shape)} (that of input_ids), got shape {tuple(token_type_ids.shape)}"
            )
    if attention_mask is None:
        return
    m = attention_mask
    if not isinstance(m, Tensor) or m.is_floating_point() or m.is_complex():
        got = m.dtype if isinstance(m, Tensor) else type(m).__name__
        raise TypeError(
            f"attention_mask: expected a bool or integer tensor (1/True = real token), got {got}"
        )
    if m.shape not in ((B, T), (B, T, T)):
        raise ValueError(
            f"attention_mask: expected shape [B, T] = {(B, T)} (1 = real token, 0 = padding) or [B, T, T] = {(B, T, T)}, got shape {tuple(m.shape)}"
        )
    if m.dtype != torch.bool and m.numel() and ((m != 0) & (m != 1)).any():
        raise ValueError(
            f"attention_mask: expected values 0 and 1, got values from {m.min().item()} to {m.max().item()}"
        )
