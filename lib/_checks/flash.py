"""The input checks of lib.flash, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._validate import check_bool, check_bool_mask, check_int, check_tensor


def check_online_softmax_args(x, block) -> None:
    """``lib.flash.online_softmax``: scores x [..., N] (N >= 1), a block size >= 1."""
    check_tensor(x, "x", "[..., N]", 1)
    if x.shape[-1] == 0:
        raise ValueError(
            f"x: expected at least one score along the last dim, got shape {tuple(x.shape)}"
        )
    check_int(block, "block", 1)


def check_tiled_attention_args(q, k, v, mask, causal, alibi_slopes, block_q, block_k) -> None:
    """``lib.flash.tiled_attention`` / ``flash_attention``: q [..., Tq, D], k [..., Tk, D],
    v [..., Tk, Dv] with the same leading dims; mask None or bool broadcastable to [..., Tq, Tk];
    causal a bool (then Tq <= Tk); alibi_slopes None or [H] with H = q.shape[-3]; blocks >= 1."""
    check_tensor(q, "q", "[..., Tq, D]", 2)
    D, lead = q.shape[-1], tuple(q.shape[:-2])
    check_tensor(k, "k", f"[..., Tk, {D}] (same width D as q)", 2, q.dtype, "q", width=D)
    check_tensor(v, "v", "[..., Tk, Dv]", 2, q.dtype, "q")
    for name, x in (("k", k), ("v", v)):
        if tuple(x.shape[:-2]) != lead:
            raise ValueError(
                f"{name}: expected the leading dims {lead} of q (tiled attention does not broadcast them), got shape {tuple(x.shape)}"
            )
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v: expected shape [..., {k.shape[-2]}, Dv] (same length Tk as k), got shape {tuple(v.shape)}"
        )
    Tq, Tk = q.shape[-2], k.shape[-2]
    if mask is not None:
        check_bool_mask(mask, lead + (Tq, Tk), "[Tq, Tk], [B, 1, 1, Tk], [B, H, Tq, Tk]")
    check_bool(causal, "causal")
    if causal and Tq > Tk:
        raise ValueError(
            f"causal: expected Tq <= Tk (the queries are the last Tq positions), got Tq={Tq}, Tk={Tk}"
        )
    if alibi_slopes is not None:
        check_tensor(alibi_slopes, "alibi_slopes", "[H]", 1, exact=True)
        if q.dim() < 3 or alibi_slopes.shape[0] != q.shape[-3]:
            raise ValueError(
                f"alibi_slopes: expected one slope per head, shape [H] with H = q.shape[-3] of q [..., H, Tq, D] {tuple(q.shape)}, got shape {tuple(alibi_slopes.shape)}"
            )
    check_int(block_q, "block_q", 1)
    check_int(block_k, "block_k", 1)
