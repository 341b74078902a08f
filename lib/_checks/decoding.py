"""The input checks of lib.decoding, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lib._validate import check_int, is_number


def check_sampling(temperature, top_k, top_p, logits=None) -> None:
    """Sampling arguments: temperature a finite number >= 0, top_k None or an int >= 1, top_p None
    or in (0, 1]; logits, if given, a floating-point tensor [..., V]."""
    if logits is not None and (
        not isinstance(logits, Tensor) or not logits.is_floating_point() or logits.dim() < 1
    ):
        got = (
            f"dtype {logits.dtype}, shape {tuple(logits.shape)}"
            if isinstance(logits, Tensor)
            else type(logits).__name__
        )
        raise TypeError(f"logits: expected a floating-point tensor [..., V], got {got}")
    if not is_number(temperature) or not 0 <= temperature < math.inf:
        raise ValueError(
            f"temperature: expected a finite number >= 0 (0 = greedy), got {temperature!r}"
        )
    if top_k is not None:
        check_int(top_k, "top_k", 1)
    if top_p is not None and (not is_number(top_p) or not 0 < top_p <= 1):
        raise ValueError(f"top_p: expected None or a number in (0, 1], got {top_p!r}")


def check_decoding(start, max_len, eos_id=None, pad_id=0, beam_width=None) -> None:
    """A decoder's arguments: start a tensor of token ids [B, t] (t >= 1; [1, t] when beam_width
    is given, beam search decoding one sequence), max_len >= 1, eos_id None or an int >= 0, pad_id
    an int >= 0, beam_width (if given) an int >= 1."""
    one = beam_width is not None
    if not isinstance(start, Tensor) or start.dtype not in (torch.int64, torch.int32):
        got = start.dtype if isinstance(start, Tensor) else type(start).__name__
        raise TypeError(f"start: expected a tensor of token ids [B, t], got {got}")
    if start.dim() != 2 or start.shape[1] < 1 or (one and start.shape[0] != 1):
        want = "[1, t] (one sequence)" if one else "[B, t] with t >= 1"
        raise ValueError(f"start: expected shape {want}, got {tuple(start.shape)}")
    check_int(max_len, "max_len", 1)
    if one:
        check_int(beam_width, "beam_width", 1)
    if eos_id is not None:
        check_int(eos_id, "eos_id", 0)
    check_int(pad_id, "pad_id", 0)


def check_length_penalty(length_penalty) -> None:
    """GNMT's alpha: a finite number >= 0."""
    if not is_number(length_penalty) or not 0 <= length_penalty < math.inf:
        raise ValueError(f"length_penalty: expected alpha >= 0, got {length_penalty!r}")
