"""The input checks of lib.alibi, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._validate import check_int, check_tensor


def check_alibi_args(n_heads) -> None:
    check_int(n_heads, "n_heads", 1)


def check_alibi_bias_args(slopes, Tq, Tk) -> None:
    """``lib.flash.alibi_bias``: slopes [H], lengths Tq, Tk >= 1 with Tq <= Tk (queries last)."""
    check_tensor(slopes, "slopes", "[H]", 1, exact=True)
    check_int(Tq, "Tq", 1)
    check_int(Tk, "Tk", 1)
    if Tq > Tk:
        raise ValueError(
            f"Tq: expected at most Tk={Tk} (the queries are the last Tq of the Tk positions), got {Tq}"
        )
