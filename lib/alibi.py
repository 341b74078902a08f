"""ALiBi, attention with linear biases (Press, Smith and Lewis 2022, "Train short, test long"): no
position vector anywhere; each head h adds -s_h * (distance between query and key) to its scores.

Shape legend (used in every docstring and shape comment below):

    H    heads            Tq   queries (the last Tq of the Tk positions)            Tk   keys

The bias is added to the scaled scores, q . k / sqrt(Dh) - s_h |i - j|, before the softmax
(Press et al. 2022, sec. 3, fig. 3); nothing is learned. The slopes s_h (the paper's m; the book
keeps m for the softmax's running maximum) form a geometric sequence
that starts at 2^(-8/H) and has that ratio (for 8 heads: 1/2, 1/4, ..., 1/256), so each head looks
at its own distance scale. For a head count that is not a power of two the paper's released code
takes the 2^k slopes of the largest power of two below H, then every other slope of 2^(k+1) heads
for the rest (``alibi_slopes``).

Deviation: the paper uses ALiBi in causal models, where a key never follows its query; without a
causal mask a key j > i gets the same -s_h (j - i) as the key as far before it (the symmetric form).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lib._checks.alibi import check_alibi_args, check_alibi_bias_args

__all__ = ["alibi_slopes", "alibi_bias"]


def alibi_slopes(n_heads: int) -> Tensor:
    """The slopes s_h of ``n_heads`` heads, float64 [H], as in Press et al.'s released code.

    H a power of two: s_h = 2^(-8 (h + 1) / H), h = 0 ... H - 1 (sec. 3). Otherwise, with 2^k the
    largest power of two below H: the 2^k slopes of 2^k heads, then the slopes 0, 2, 4, ... of
    2^(k + 1) heads, as many as are missing (H = 6: 1/4, 1/16, 1/64, 1/256, then 1/2, 1/8)."""
    check_alibi_args(n_heads)
    return torch.tensor(_slopes(n_heads), dtype=torch.float64)


def _slopes(n: int) -> list[float]:
    # a power of two: start at 2^(-8/n), each next slope times the same ratio
    if n & (n - 1) == 0:
        start = 2 ** (-8 / n)
        return [start ** (h + 1) for h in range(n)]
    below = 2 ** math.floor(math.log2(n))  # the largest power of two below n
    return _slopes(below) + _slopes(2 * below)[0::2][: n - below]


def alibi_bias(slopes: Tensor, Tq: int, Tk: int) -> Tensor:
    """The bias -s_h |i - j| that head h adds to the score of query i and key j: [H, Tq, Tk] in
    the slopes' dtype. Query i sits at position Tk - Tq + i (the last Tq positions, as with a key/value
    cache, and as ``lib.attention.causal_mask(Tq, past=Tk - Tq)`` places it)."""
    check_alibi_bias_args(slopes, Tq, Tk)
    rows = torch.arange(Tk - Tq, Tk, device=slopes.device)  # [Tq], the queries' positions
    return _alibi(slopes, rows, torch.arange(Tk, device=slopes.device))


def _alibi(slopes: Tensor, rows: Tensor, cols: Tensor) -> Tensor:
    """-s_h |row - col| for the query positions ``rows`` [Tq] and key positions ``cols`` [Tk] ->
    [H, Tq, Tk]: the whole bias, or one tile of it (``lib.flash`` computes each tile's own)."""
    distance = (rows[:, None] - cols[None, :]).abs().to(slopes.dtype)  # [Tq, Tk]
    return -slopes[:, None, None] * distance  # [H, Tq, Tk]
