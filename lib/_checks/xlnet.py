"""The input checks of lib.xlnet, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from lib._validate import check_int, is_int


def check_permutation(order) -> None:
    """``order`` is a permutation of 0..T-1: a 1-D integer tensor or a sequence of ints."""
    if isinstance(order, Tensor):
        if order.dim() != 1 or order.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"order: expected a 1-D tensor of positions, got {order.dtype} {tuple(order.shape)}"
            )
        values = order.tolist()
    elif isinstance(order, Sequence) and not isinstance(order, (str, bytes)):
        values = list(order)
    else:
        raise TypeError(
            f"order: expected a sequence of positions (a permutation of 0..T-1), got {type(order).__name__}"
        )
    if (
        not values
        or not all(is_int(v) for v in values)
        or sorted(values) != list(range(len(values)))
    ):
        raise ValueError(f"order: expected a permutation of 0..T-1, got {values!r:.80}")


def check_square_mask(mask, name: str = "mask") -> None:
    """``mask`` is a square bool tensor [T, T]."""
    if (
        not isinstance(mask, Tensor)
        or mask.dtype != torch.bool
        or mask.dim() != 2
        or mask.shape[0] != mask.shape[1]
    ):
        raise ValueError(
            f"{name}: expected a square bool tensor [T, T], got {getattr(mask, 'dtype', type(mask).__name__)} {tuple(getattr(mask, 'shape', ()))}"
        )


def check_segments(length, segment_length, memory_length) -> None:
    """``length`` and ``segment_length`` ints >= 1, ``memory_length`` None or an int >= 0."""
    check_int(length, "length", 1)
    check_int(segment_length, "segment_length", 1)
    if memory_length is not None:
        check_int(memory_length, "memory_length", 0)
