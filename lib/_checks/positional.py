"""The input checks of lib.positional, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import math

from lib._validate import check_int, check_tensor, is_int, is_number


def check_table_args(max_len, d_model, base: float = 10000.0) -> None:
    check_int(max_len, "max_len", 1)
    check_int(d_model, "d_model", 1)
    check_base(base)


def check_base(base) -> None:
    if not is_number(base) or not (0 < base < math.inf):
        raise ValueError(f"base: expected a positive finite number, got {base!r}")


def check_binary_encoding_args(n_positions, n_bits) -> None:
    check_int(n_positions, "n_positions", 1)
    check_int(n_bits, "n_bits", 1)
    if n_bits > 62 or n_positions > 2**n_bits:
        raise ValueError(
            f"n_positions={n_positions} does not fit in n_bits={n_bits} (at most 2**{n_bits} positions, and n_bits <= 62)"
        )


def check_relative_rotation_args(k, d_model, base) -> None:
    if not is_int(k):
        raise TypeError(f"k: expected an int (a shift in positions), got {type(k).__name__}")
    check_int(d_model, "d_model", 2)
    if d_model % 2:
        raise ValueError(
            f"d_model={d_model} must be even: the last sin column of an odd-width table has no cos partner to rotate with"
        )
    check_base(base)


def check_position_input(x, d_model: int, max_len: int, dtype=None) -> None:
    """x [..., T, D] with D = d_model and T <= max_len (ValueError naming T and max_len)."""
    check_tensor(x, "x", f"[B, T, {d_model}]", 2, dtype, "the module's parameters", width=d_model)
    T = x.shape[-2]
    if T > max_len:
        raise ValueError(
            f"x: sequence length T={T} exceeds max_len={max_len} (the table has {max_len} rows; build the module with a larger max_len)"
        )
