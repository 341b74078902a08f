"""Checkers for the exercises of the chapter *Positional encoding*.

- :func:`check_sinusoidal`: exercise 1 (implement): the sinusoidal table from its formula.
- :func:`check_small_base`: exercise 2 (predict, then check): the table with base 100 instead of 10000.

Exercise 3 (the literal reading of the formula, change and explain) is answered in prose; the chapter's
solution computes it.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from lib.positional import sinusoidal_encoding

from . import (
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    not_attempted,
)

__all__ = ["check_sinusoidal", "check_small_base"]


# --- exercise 1: the table from its formula ---------------------------------------------------------------

# (max_len, d_model); d_model even, as the exercise says
CASES = [(50, 16), (7, 2), (200, 128), (1, 4)]
TOLERANCE = 1e-4  # float32 angles pos * w are off by up to pos * 6e-8


def _table(
    max_len: int,
    d_model: int,
    *,
    exponent=None,
    first="sin",
    layout="interleaved",
    start=0,
    divide=True,
) -> Tensor:
    """Variants of the table [max_len, d_model] in float64: the right one by default, or a typical mistake."""
    pos = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]  # [P, 1]
    j = torch.arange(d_model, dtype=torch.float64)  # [D] column index
    pair = torch.div(j, 2, rounding_mode="floor") if layout == "interleaved" else j % (d_model // 2)
    power = {"2i/d": 2 * pair / d_model, "j/d": j / d_model, "i/d": pair / d_model}[
        exponent or "2i/d"
    ]
    angle = pos / 10000.0**power if divide else pos * 10000.0**power  # [P, D]
    if layout == "interleaved":
        use_sin = (j % 2 == 0) if first == "sin" else (j % 2 == 1)
    else:  # [sin ... | cos ...]
        use_sin = j < d_model // 2
    return torch.where(use_sin, torch.sin(angle), torch.cos(angle))


_MISTAKES = [
    (
        dict(exponent="j/d"),
        "your odd (cosine) columns use their own frequency 1/10000^(j/d) with j the column index, as one lecture's formula reads literally. Columns 2i and 2i + 1 share the frequency 1/10000^(2i/d): one clock, a point (sin, cos) on a circle",
    ),
    (
        dict(first="cos"),
        "your columns are swapped: sin belongs in the even columns (0, 2, 4, ...), cos in the odd ones, so that row 0 is [0, 1, 0, 1, ...]",
    ),
    (
        dict(exponent="i/d"),
        "your exponent is i/d with i the pair index; the formula's exponent is 2i/d (the even column's index over d), so the slowest pair turns once in about 2 pi 10000 positions",
    ),
    (
        dict(divide=False),
        "you multiplied the position by 10000^(2i/d); divide by it: the frequencies fall from 1 to almost 1/10000",
    ),
    (
        dict(layout="halves"),
        "you put all the sines first and all the cosines after them (a layout some code uses); the paper and this book interleave them: column 2i is a sine, column 2i + 1 its cosine",
    ),
    (
        dict(start=1),
        "your row 0 is the encoding of position 1: positions start at 0, whose row is [0, 1, 0, 1, ...]",
    ),
]


@checker("my_sinusoidal")
def check_sinusoidal(my_sinusoidal: Any) -> str:
    """Check ``my_sinusoidal(max_len, d_model) -> [max_len, d_model]`` against the formula
    PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i + 1] = cos(pos / 10000^(2i/d)), for even d_model."""
    attempted(my_sinusoidal, "my_sinusoidal")
    if my_sinusoidal is sinusoidal_encoding:
        fail(
            "that is the library's sinusoidal_encoding; the exercise is to write it from the formula."
        )
    for max_len, d_model in CASES:
        case = f"max_len = {max_len}, d_model = {d_model}"
        result = call(my_sinusoidal, max_len, d_model, name="my_sinusoidal", case=case)
        if (
            isinstance(result, Tensor)
            and tuple(result.shape) == (d_model, max_len)
            and max_len != d_model
        ):
            fail(
                f"on the case {case}, `my_sinusoidal` returned shape [{d_model}, {max_len}]: transposed. One row per position, one column per dimension: [max_len, d_model]."
            )
        result = expect_tensor(result, (max_len, d_model), name="my_sinusoidal", case=case)
        expected = _table(max_len, d_model)
        if (result - expected).abs().max() <= TOLERANCE:
            continue
        for variant, why in _MISTAKES:
            if (result - _table(max_len, d_model, **variant)).abs().max() <= TOLERANCE:
                fail(f"on the case {case}, {why}.")
        fail(
            f"on the case {case}, {largest_difference(result, expected)} (row = position, column = dimension)."
        )
    return f"`my_sinusoidal` equals the formula on all {len(CASES)} hidden cases ({'; '.join(f'{p} x {d}' for p, d in CASES)})."


# --- exercise 2: a smaller base --------------------------------------------------------------------------

BASE, D, N = 100, 128, 1000
FAR = 20  # "far apart": at least 20 positions


def _last_wavelength(base: float = BASE, d_model: int = D) -> float:
    return 2 * math.pi * base ** ((d_model - 2) / d_model)


def _distances(base: float = BASE) -> tuple[float, float]:
    """(distance between neighbouring positions, smallest distance of two positions >= FAR apart) among 0..N-1."""
    table = sinusoidal_encoding(N, D, base=base).double()  # [N, D]
    dist = torch.cdist(table, table)  # [N, N]
    index = torch.arange(N)
    far = (index[:, None] - index[None]).abs() >= FAR
    return dist[0, 1].item(), dist[far].min().item()


@checker("smaller base")
def check_small_base(last_wavelength: Any, distant_collision: Any) -> str:
    """Check the predictions of exercise 2 for sinusoidal_encoding(1000, 128, base=100): ``last_wavelength``,
    the wavelength of the last pair (columns 126, 127), and ``distant_collision`` (True/False): do two
    positions at least 20 apart get nearly the same vector, closer than two neighbours?"""
    if last_wavelength is None and distant_collision is None:
        not_attempted(
            "write your two predictions (last_wavelength and distant_collision) in the cell above, then run this cell again."
        )
    right = _last_wavelength()
    if last_wavelength is not None:
        w = expect_number(last_wavelength, "last_wavelength")
        if abs(w / right - 1) > 0.01:
            near = lambda value: abs(w / value - 1) <= 0.01  # noqa: E731
            if near(2 * math.pi * BASE):
                fail(
                    f"last_wavelength = {fmt(w)} is 2 pi x 100, the limit for a very wide table. The last pair is i = 63, with exponent 2i/d = 126/128: 2 pi x 100^(126/128)."
                )
            if near(_last_wavelength(10000)):
                fail(
                    f"last_wavelength = {fmt(w)} is the last wavelength of the chapter's table, base 10000."
                )
            if near(2 * math.pi * BASE ** (127 / 128)):
                fail(
                    "last_wavelength: the last pair is columns 126 and 127, and both use the exponent of the even column, 2i/d = 126/128, not 127/128."
                )
            if near(right / (2 * math.pi)):
                fail(
                    f"last_wavelength = {fmt(w)} is 100^(126/128), the number of positions per radian. A full turn is 2 pi radians: multiply by 2 pi."
                )
            if near(2 * math.pi):
                fail(
                    f"last_wavelength = {fmt(w)} is the wavelength of the first pair (frequency 1), not the last."
                )
            fail(
                f"last_wavelength = {fmt(w)} is not it. Pair i turns at 1 / base^(2i/d) radians per position, so its wavelength is 2 pi base^(2i/d) positions."
            )
    if distant_collision is not None:
        if not isinstance(distant_collision, bool):
            fail(f"distant_collision should be True or False, got {fmt(distant_collision)}.")
        if distant_collision:
            neighbours, far = _distances()
            fail(
                f"distant_collision: no. The slowest clock now repeats after {right:.0f} positions, but a position is read from all 64 clocks together, and they never all come back at once. Among positions 0 to 999, two neighbours are {neighbours:.2f} apart and no two positions {FAR} or more apart come closer than {far:.2f}."
            )
    if last_wavelength is None:
        not_attempted(
            "your distant_collision is right; now predict the wavelength of the last pair (last_wavelength)."
        )
    if distant_collision is None:
        not_attempted(
            "your last_wavelength is right; now predict whether distant positions collide (distant_collision)."
        )
    return f"both predictions are right: the last pair turns once every 2 pi x 100^(126/128) = {right:.1f} positions, yet no two distant positions get nearly the same vector."
