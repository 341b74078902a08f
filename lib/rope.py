"""Rotary position embedding, RoPE (Su et al. 2021, RoFormer, sec. 3.4): the position of a token
enters attention by rotating its query and key, never by adding a vector to its embedding.

Shape legend (used in every docstring and shape comment below):

    B    batch                          T    tokens (positions m = P ... P + T - 1)
    H    heads (query or key heads)     Dh   head_dim, the width of one head (even)
    Dh/2 the number of rotated pairs; pair i turns at the frequency w_i = theta^(-2i / Dh)

Chapter 8 showed that moving k positions turns each column pair (2i, 2i + 1) of the sinusoidal table
by the angle k w_i (``lib.positional.relative_rotation``). RoPE applies that rotation to q and k:
the query of position m is R_m q, the key of position n is R_n k, and as R_m^T R_n = R_{n - m},
(R_m q) . (R_n k) = q . R_{n - m} k, with R_{n - m} = R_{m - n}^T, depends on the offset m - n only
(RoFormer, eq. 16).

Two conventions pair the Dh coordinates of a head differently, with the same frequencies:

- ``"interleaved"``: pairs (2i, 2i + 1), as RoFormer's eq. 34 and Meta's original Llama code;
- ``"halves"``: pairs (i, i + Dh/2), as transformers' ``rotate_half`` (and so every transformers
  checkpoint: its conversion script permuted the rows of Meta's q and k projections once).

A model in one convention equals a model in the other after a fixed permutation of the rows of each
head of its query and key projections (``to_halves``, ``to_interleaved``); loading weights with the
wrong convention silently gives a different model (tests/test_pretrained_llama.py shows it).

The angles m w_i are computed in float64 and rounded once to the model's dtype (as
``lib.positional`` does): a float32 angle would be off by up to m * 6e-8 radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lib._checks.rope import check_rope_args, check_rope_permutation
from lib.positional import _frequencies

__all__ = [
    "Llama3RopeScaling",
    "rope_frequencies",
    "rope_cos_sin",
    "apply_rope",
    "to_halves",
    "to_interleaved",
]


@dataclass(frozen=True)
class Llama3RopeScaling:
    """Llama 3.1's stretch of the low frequencies for a longer context ("rope_type": "llama3" in
    config.json; Grattafiori et al. 2024, the Llama 3 herd of models, and Meta's
    ``apply_scaling``): wavelengths 2 pi / w_i shorter than original / high_freq_factor keep w_i,
    those longer than original / low_freq_factor become w_i / factor, the ones between are blended
    linearly in original / wavelength. Other scalings (linear, dynamic NTK, YaRN) are not
    implemented."""

    factor: float = 8.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192


def rope_frequencies(
    head_dim: int, theta: float = 10000.0, scaling: Llama3RopeScaling | None = None
) -> Tensor:
    """w_i = theta^(-2i / head_dim), i = 0 ... head_dim/2 - 1, float64 [Dh/2]: the frequencies of
    chapter 8's sinusoidal table with base theta (RoFormer, eq. 15), then ``scaling`` if given."""
    check_rope_args(head_dim, theta, scaling, Llama3RopeScaling)
    w = _frequencies(head_dim, theta)  # [Dh/2]
    if scaling is None:
        return w
    s = scaling
    wavelength = 2 * math.pi / w  # [Dh/2], in positions
    original = s.original_max_position_embeddings
    # 0 for wavelengths beyond original / low_freq_factor, 1 below original / high_freq_factor
    smooth = (
        (original / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor)
    ).clamp(0, 1)
    return (1 - smooth) * w / s.factor + smooth * w  # [Dh/2]


def rope_cos_sin(
    positions: Tensor, frequencies: Tensor, dtype=torch.float32
) -> tuple[Tensor, Tensor]:
    """cos(m w_i) and sin(m w_i) for the positions m [T] and frequencies w [Dh/2]: two [T, Dh/2]
    tensors of ``dtype`` (angles in float64, rounded once)."""
    angles = positions.to(torch.float64)[:, None] * frequencies.to(positions.device)  # [T, Dh/2]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor, style: str = "halves") -> Tensor:
    """R_m x: turn each pair (a, b) of coordinates of x [..., T, Dh] by the angle m w_i of its
    position and frequency, (a, b) -> (a cos - b sin, a sin + b cos)  (RoFormer, eq. 34).

    cos, sin [T, Dh/2] from ``rope_cos_sin``. ``style``: which coordinates pair up, "halves"
    (i, i + Dh/2) or "interleaved" (2i, 2i + 1). No input checks: the model checked its input."""
    if style == "halves":
        a, b = x.chunk(2, dim=-1)  # [..., T, Dh/2] each: coordinates i and i + Dh/2
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)  # [..., T, Dh]
    a, b = x[..., 0::2], x[..., 1::2]  # [..., T, Dh/2] each: coordinates 2i and 2i + 1
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)  # [..., T, Dh]


def to_halves(weight: Tensor, n_heads: int) -> Tensor:
    """The rows of a query or key projection [H * Dh, ...] (or a QK-norm weight [Dh], n_heads=1)
    reordered from the interleaved convention to the halves one: in each head, rows 0, 2, 4, ...
    then 1, 3, 5, ..., so that pair (2i, 2i + 1) becomes pair (i, i + Dh/2), with the same
    frequency. Queries and keys permuted alike keep every product q . k (a sum over the same
    pairs in another order). This is the permutation of transformers' Llama conversion script."""
    check_rope_permutation(weight, n_heads)
    # [H, Dh/2, 2, ...] -> [H, 2, Dh/2, ...]: the even rows of each head first, then the odd ones
    return weight.unflatten(0, (n_heads, -1, 2)).transpose(1, 2).flatten(0, 2)


def to_interleaved(weight: Tensor, n_heads: int) -> Tensor:
    """The inverse of ``to_halves``: rows i and i + Dh/2 of each head become rows 2i and 2i + 1."""
    check_rope_permutation(weight, n_heads)
    # [H, 2, Dh/2, ...] -> [H, Dh/2, 2, ...]
    return weight.unflatten(0, (n_heads, 2, -1)).transpose(1, 2).flatten(0, 2)
