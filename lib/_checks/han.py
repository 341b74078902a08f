"""The input checks of lib.han, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import check_padding_mask, check_sizes


def check_han(vocab_size, n_classes, d_emb, d_word, d_sentence, d_attn) -> None:
    """Every size of the network an int >= 1."""
    check_sizes(
        vocab_size=vocab_size,
        n_classes=n_classes,
        d_emb=d_emb,
        d_word=d_word,
        d_sentence=d_sentence,
        d_attn=d_attn,
    )


def check_documents(input_ids, attention_mask, vocab_size: int, pad_id: int) -> None:
    """input_ids [B, S, W] long ids in [0, vocab_size); attention_mask None or a bool or 0/1 tensor of
    their shape, True on a prefix of every sentence; every document with at least one real word."""
    if not isinstance(input_ids, Tensor) or input_ids.dtype != torch.long or input_ids.dim() != 3:
        got = (
            f"shape {tuple(input_ids.shape)} and dtype {input_ids.dtype}"
            if isinstance(input_ids, Tensor)
            else type(input_ids).__name__
        )
        raise ValueError(f"input_ids: expected a long tensor [B, S, W], got {got}")
    if input_ids.numel() == 0:
        raise ValueError(
            f"input_ids: expected a non-empty [B, S, W] tensor, got shape {tuple(input_ids.shape)}"
        )
    if input_ids.min() < 0 or input_ids.max() >= vocab_size:
        raise ValueError(
            f"input_ids: expected token ids in [0, {vocab_size}), got min {int(input_ids.min())} and max {int(input_ids.max())}"
        )
    if attention_mask is not None:
        B, S, W = input_ids.shape
        same = isinstance(attention_mask, Tensor) and attention_mask.shape == input_ids.shape
        mask = attention_mask.reshape(B * S, W) if same else attention_mask
        check_padding_mask(mask, input_ids.reshape(B * S, W))  # one row per sentence
    words = input_ids != pad_id if attention_mask is None else attention_mask.bool()
    empty = ~words.any(-1).any(-1)  # [B]
    if empty.any():
        raise ValueError(
            f"input_ids: document {int(empty.nonzero()[0])} has no word (all pad_id={pad_id}, or masked)"
        )
