"""Attention at scale: the online softmax (Milakov and Gimelshein 2018) and FlashAttention's tiled
attention (Dao et al. 2022; the forward's loop order, the late division and the one saved log-sum-exp
per row of FlashAttention-2, Dao 2023), forward and a backward that recomputes the weights.

Shape legend (used in every docstring and shape comment below):

    ...  leading dims (batch, heads), the same for q, k and v
    H    heads (the dim before Tq, where ALiBi's slopes apply)
    Tq   queries          Tk   keys (= values)          D   query and key width     Dv  value width
    Bq   queries in a tile (``block_q``, fewer in the last)     Bk   keys in a tile (``block_k``)
    N    scores in one row (``online_softmax``)

Plain attention (``lib.attention.scaled_dot_product_attention``) builds the [Tq, Tk] matrix of
scores S = q k^T / sqrt(D), its softmax P, then O = P v: memory and traffic that grow as Tq Tk.
Tiled attention reads q in blocks of Bq rows and, for each, k and v in blocks of Bk rows; it never
holds more than a [Bq, Bk] tile of S and P. What makes that possible is the online softmax: the
softmax's normalizer sum_j exp(s_j - m) can be summed block by block if the running sum is rescaled
by exp(m_old - m_new) whenever the running maximum m grows, and so can the output's numerator.
The result is exact, not an approximation: the same sums, in another order and grouping.

The backward pass (``FlashAttention.backward``) keeps from the forward only O and the log-sum-exp
L_i = m_i + log l_i of each row ([..., Tq] numbers, not [Tq, Tk]): P_ij = exp(S_ij - L_i) is
recomputed tile by tile, and with delta_i = sum_j dO_ij O_ij, the gradient of the scores is
dS = P * (dP - delta) (Dao et al. 2022, appendix B.2).

Masks, as everywhere in this library: boolean, True where a query may attend, broadcastable to
[..., Tq, Tk]; ``causal=True`` builds each tile's causal mask from positions instead and skips the
tiles above the diagonal. Query i sits at position Tk - Tq + i (``causal_mask(Tq, past=Tk - Tq)``).
A row with no allowed key gives a zero output and zero gradients, as ``masked_softmax`` does.
Float16 and bfloat16 inputs are computed in float32, as FlashAttention accumulates, and cast back.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from lib._checks.flash import check_online_softmax_args, check_tiled_attention_args
from lib.alibi import _alibi

__all__ = [
    "OnlineSoftmax",
    "online_softmax",
    "tiled_attention",
    "flash_attention",
    "FlashAttention",
]


# --- the online softmax -------------------------------------------------------------------------------


class OnlineSoftmax(NamedTuple):
    """What ``online_softmax`` computed: the weights and the two running numbers, after each block."""

    weights: Tensor  # [..., N], softmax(x) along the last dim
    maximum: Tensor  # [...], m = max_j x_j
    total: Tensor  # [...], total = sum_j exp(x_j - m)
    steps: list[tuple[Tensor, Tensor]]  # (m, total) after each block, as the loop saw them


def online_softmax(x: Tensor, block: int = 2) -> OnlineSoftmax:
    """softmax(x) along the last dim, reading x in blocks of ``block`` scores and keeping only a
    running maximum m and a running sum ``total`` (Milakov and Gimelshein 2018, algorithm 3).

    x [..., N] -> OnlineSoftmax(weights [..., N], maximum [...], total [...], steps). After each
    block, total = sum over the scores read so far of exp(x_j - m), m their maximum: when a block brings
    a larger maximum, the old sum is multiplied by exp(m_old - m_new), which turns each of its terms
    exp(x_j - m_old) into exp(x_j - m_new). The weights are exp(x - m) / total at the end: equal to
    torch.softmax(x, -1) up to rounding. A row of only -inf gives NaN, as torch.softmax does."""
    check_online_softmax_args(x, block)
    m = x.new_full(x.shape[:-1], -math.inf)  # [...], the largest score read so far
    total = x.new_zeros(x.shape[:-1])  # [...], sum of exp(score - m), scores read
    steps = []
    for start in range(0, x.shape[-1], block):
        x_b = x[..., start : start + block]  # [..., block]
        m_new = torch.maximum(m, x_b.amax(-1))  # update the maximum first ...
        # ... then rescale the old sum to it, add this block's exp(x_j - m_new) <= 1
        total = total * torch.exp(m - m_new) + torch.exp(x_b - m_new[..., None]).sum(-1)
        m = m_new
        steps.append((m, total))
    return OnlineSoftmax(torch.exp(x - m[..., None]) / total[..., None], m, total, steps)


# --- tiled attention: the forward ---------------------------------------------------------------------


def tiled_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    causal: bool = False,
    alibi_slopes: Tensor | None = None,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[Tensor, Tensor]:
    """softmax(q k^T / sqrt(D) + bias, masked) v, computed tile by tile (Dao et al. 2022, algorithm 1,
    in FlashAttention-2's loop order: each block of queries reads every block of keys and values).

    q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv]; mask bool broadcastable to [..., Tq, Tk];
    ``causal``: query i attends keys up to its position; ``alibi_slopes`` [H]: ALiBi's bias
    -s_h |i - j| (``lib.alibi``), computed per tile. -> (output [..., Tq, Dv], lse [..., Tq]), lse
    the log-sum-exp of each row's scores, log sum_j exp(S_ij) (+inf for a row with no allowed key).
    Autograd, if asked, differentiates through every tile's operations and keeps them all;
    ``flash_attention`` is the same forward with FlashAttention's backward, which keeps none."""
    check_tiled_attention_args(q, k, v, mask, causal, alibi_slopes, block_q, block_k)
    out, lse = _tiled_attention(
        _up(q), _up(k), _up(v), mask, causal, alibi_slopes, block_q, block_k
    )
    return out.to(q.dtype), lse


def _up(x: Tensor) -> Tensor:
    """float16 and bfloat16 computed in float32 (FlashAttention's accumulators are float32)."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def _tiled_attention(q, k, v, mask, causal, slopes, block_q, block_k) -> tuple[Tensor, Tensor]:
    Tq, Tk = q.shape[-2], k.shape[-2]
    out = q.new_empty(*q.shape[:-1], v.shape[-1])  # [..., Tq, Dv]
    lse = q.new_empty(q.shape[:-1])  # [..., Tq]
    for i0 in range(0, Tq, block_q):  # one block of queries, rows i0 ... i1 - 1
        i1 = min(i0 + block_q, Tq)
        m = q.new_full((*q.shape[:-2], i1 - i0), -math.inf)  # [..., Bq], maximum
        total = q.new_zeros(m.shape)  # [..., Bq], sum of exp(S - m)
        acc = q.new_zeros(*m.shape, v.shape[-1])  # [..., Bq, Dv], sum exp(S - m) v
        # causal: no tile above the diagonal
        for j0 in range(0, _keys_end(causal, i1, Tq, Tk), block_k):
            j1 = min(j0 + block_k, Tk)
            # the tile's scores, [..., Bq, Bk]
            s = _scores_tile(q, k, mask, causal, slopes, i0, i1, j0, j1)
            m_new = torch.maximum(m, s.amax(-1))
            # a row whose keys so far were all masked has m_new = -inf: subtract 0
            # there, so that exp(-inf - 0) = 0 instead of exp(-inf + inf) = NaN
            m_safe = m_new.masked_fill(m_new == -math.inf, 0.0)  # [..., Bq]
            # [..., Bq, Bk], this tile's unnormalized weights
            p = torch.exp(s - m_safe[..., None])
            rescale = torch.exp(m - m_safe)  # [..., Bq], exp(m_old - m_new): <= 1
            total = rescale * total + p.sum(-1)
            acc = rescale[..., None] * acc + p @ v[..., j0:j1, :]  # [..., Bq, Dv]
            m = m_new
        # divide once at the end (FlashAttention-2), not after every tile;
        # a row with no allowed key gives zeros
        out[..., i0:i1, :] = acc / total.masked_fill(total == 0, 1.0)[..., None]
        lse[..., i0:i1] = torch.where(
            total > 0, m + torch.log(total), math.inf
        )  # L = m + log(total)
    return out, lse


def _keys_end(causal: bool, i1: int, Tq: int, Tk: int) -> int:
    """Where the keys of a block of queries (rows up to i1 - 1) end: Tk, or with ``causal`` the
    position of its last query plus one, Tk - Tq + i1 (the tiles after it are all masked)."""
    return Tk - Tq + i1 if causal else Tk


def _scores_tile(q, k, mask, causal, slopes, i0, i1, j0, j1) -> Tensor:
    """The tile S[i0:i1, j0:j1] of q k^T / sqrt(D), plus ALiBi's bias, masked (-inf where a query
    may not attend): [..., Bq, Bk], recomputed from q and k wherever it is needed."""
    Tq, Tk = q.shape[-2], k.shape[-2]
    s = (q[..., i0:i1, :] / math.sqrt(q.shape[-1])) @ k[..., j0:j1, :].transpose(-2, -1)
    # [Bq] and [Bk]: the positions of the tile's queries and keys
    rows = torch.arange(Tk - Tq + i0, Tk - Tq + i1, device=q.device)
    cols = torch.arange(j0, j1, device=q.device)
    if slopes is not None:
        # [H, Bq, Bk], broadcast over the batch
        s = s + _alibi(slopes.to(s.dtype), rows, cols)
    # a tile that reaches past its first query's position
    if causal and j1 - 1 > Tk - Tq + i0:
        s = s.masked_fill(cols[None, :] > rows[:, None], -math.inf)
    if mask is not None:
        tile = mask[..., i0:i1, :] if mask.dim() >= 2 and mask.shape[-2] > 1 else mask
        tile = tile[..., j0:j1] if tile.shape[-1] > 1 else tile
        s = s.masked_fill(~tile, -math.inf)
    return s


# --- FlashAttention: the forward above, and a backward that recomputes --------------------------------


def flash_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    causal: bool = False,
    alibi_slopes: Tensor | None = None,
    block_q: int = 64,
    block_k: int = 64,
) -> Tensor:
    """``tiled_attention``'s output, differentiable through FlashAttention's backward, which keeps
    only the output and the log-sum-exp from the forward, never the [Tq, Tk] weights.

    Arguments as ``tiled_attention``; -> output [..., Tq, Dv]. Gradients flow to q, k and v (not to
    the mask or ALiBi's slopes, which are fixed)."""
    check_tiled_attention_args(q, k, v, mask, causal, alibi_slopes, block_q, block_k)
    out = FlashAttention.apply(_up(q), _up(k), _up(v), mask, causal, alibi_slopes, block_q, block_k)
    return out.to(q.dtype)


class FlashAttention(torch.autograd.Function):
    """Tiled attention as one autograd node: forward ``_tiled_attention``, backward recomputes each
    tile of weights (Dao et al. 2022, algorithm 4, and its loop order: the keys' blocks outside, so
    dK and dV of a block are summed in one place) from the saved log-sum-exp, FlashAttention-2's
    one number per row in place of algorithm 4's m and l (Dao 2023, sec. 3.1)."""

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, slopes, block_q, block_k):
        out, lse = _tiled_attention(q, k, v, mask, causal, slopes, block_q, block_k)
        ctx.save_for_backward(q, k, v, out, lse, mask, slopes)
        ctx.options = (causal, block_q, block_k)
        return out

    @staticmethod
    def backward(ctx, d_out):
        q, k, v, out, lse, mask, slopes = ctx.saved_tensors
        causal, block_q, block_k = ctx.options
        Tq, Tk, scale = q.shape[-2], k.shape[-2], 1 / math.sqrt(q.shape[-1])
        # [..., Tq], delta_i = sum_j dO_ij O_ij = sum_j P_ij dP_ij
        delta = (d_out * out).sum(-1)
        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        for j0 in range(0, Tk, block_k):  # one block of keys and values
            j1 = min(j0 + block_k, Tk)
            for i0 in range(0, Tq, block_q):
                i1 = min(i0 + block_q, Tq)
                if _keys_end(causal, i1, Tq, Tk) <= j0:  # causal: all masked
                    continue
                s = _scores_tile(q, k, mask, causal, slopes, i0, i1, j0, j1)
                p = torch.exp(s - lse[..., i0:i1, None])  # the weights, recomputed
                do = d_out[..., i0:i1, :]  # [..., Bq, Dv]
                dv[..., j0:j1, :] += p.transpose(-2, -1) @ do  # dV = P^T dO
                dp = do @ v[..., j0:j1, :].transpose(-2, -1)  # dP = dO V^T
                # the softmax's backward: dS = P (dP - delta)
                ds = p * (dp - delta[..., i0:i1, None])
                dq[..., i0:i1, :] += scale * ds @ k[..., j0:j1, :]  # S = q k^T/sqrt(D)
                dk[..., j0:j1, :] += scale * ds.transpose(-2, -1) @ q[..., i0:i1, :]
        return dq, dk, dv, None, None, None, None, None
