"""The input checks of lib.word2vec, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import check_int


def check_skipgram_pairs(center, context, negatives, vocab_size: int) -> None:
    for name, x, dims in (
        ("center", center, 1),
        ("context", context, 1),
        ("negatives", negatives, 2),
    ):
        if not isinstance(x, Tensor) or x.dtype != torch.long or x.dim() != dims:
            got = (
                f"shape {tuple(x.shape)}, dtype {x.dtype}"
                if isinstance(x, Tensor)
                else type(x).__name__
            )
            raise ValueError(f"{name}: expected a long tensor with {dims} dims, got {got}")
        if x.numel() and (x.min() < 0 or x.max() >= vocab_size):
            raise ValueError(
                f"{name}: expected ids in [0, {vocab_size}), got min {int(x.min())} and max {int(x.max())}"
            )
    if not (center.shape[0] == context.shape[0] == negatives.shape[0] > 0):
        raise ValueError(
            f"center, context, negatives: expected the same N > 0 rows, got {center.shape[0]}, {context.shape[0]} and {negatives.shape[0]}"
        )


def check_skipgram_batches(center, context, noise, batch_size, negatives) -> None:
    check_int(batch_size, "batch_size", 1)
    check_int(negatives, "negatives", 1)
    if center.shape != context.shape or center.dim() != 1:
        raise ValueError(
            f"center, context: expected two [N] tensors, got {tuple(center.shape)} and {tuple(context.shape)}"
        )
    if (
        not isinstance(noise, Tensor)
        or noise.dim() != 1
        or (noise < 0).any()
        or not noise.sum() > 0
    ):
        got = tuple(noise.shape) if isinstance(noise, Tensor) else noise
        raise ValueError(
            f"noise: expected a 1-D tensor of non-negative weights [V] with a positive sum, got {got}"
        )


def check_neighbours(vectors, vocab, word, k) -> None:
    if not isinstance(vectors, Tensor) or vectors.dim() != 2 or vectors.shape[0] != len(vocab):
        got = tuple(vectors.shape) if isinstance(vectors, Tensor) else type(vectors).__name__
        raise ValueError(f"vectors: expected a tensor [V={len(vocab)}, D], got {got}")
    if word not in vocab.stoi:
        raise ValueError(f"word: {word!r} is not in the vocabulary")
    check_int(k, "k", 1)
