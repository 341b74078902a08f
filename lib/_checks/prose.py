"""The input checks of lib.prose."""

from __future__ import annotations

import numpy as np


def check_claim(claim, measured: str, reasons) -> None:
    """``holds``'s arguments: ``claim`` a bool (or NumPy's bool, from a comparison of NumPy
    numbers), ``measured`` one of ``reasons``."""
    if not isinstance(claim, (bool, np.bool_)):
        kind = type(claim)
        raise TypeError(
            f"claim: expected a bool (or NumPy's bool), got {kind.__module__}.{kind.__qualname__} "
            f"({claim!r})"
        )
    if measured not in reasons:
        raise ValueError(f"measured: expected one of {sorted(reasons)}, got {measured!r}")


def check_written(written) -> None:
    """``stated``'s ``written``: the number as the text writes it, a str."""
    if not isinstance(written, str):
        raise TypeError(
            f"written: expected the number as the text writes it (a str), got {written!r}"
        )


def check_where(where) -> None:
    """``stated``'s ``where``: where the text writes the number, a str ("" when next to the check)."""
    if not isinstance(where, str):
        raise TypeError(
            f"where: expected where the text writes the number (a str such as 'in the paragraph "
            f"below'), got {where!r}"
        )
