"""Checkers for the exercises of the chapter *Positional encoding*.

- :func:`check_sinusoidal`: exercise 1 (implement): the sinusoidal table from its formula, and the
  rotation M_k that shifts it by k positions, built from its 2 x 2 blocks.
- :func:`check_small_base`: exercise 2 (predict, then check): the table with base 100 instead of 10000.

Exercise 3 (the literal reading of the formula, change and explain) is answered in prose; the chapter's
solution computes it.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from lib.positional import relative_rotation, sinusoidal_encoding

from . import (
    CheckFailed,
    ExerciseFailed,
    attempted,
    call,
    checker,
    expect_bool,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    is_stub,
    largest_difference,
    near,
    not_attempted,
    passing_everywhere,
    refusing,
    replaced,
)

__all__ = ["check_sinusoidal", "check_small_base"]


# --- exercise 1: the table from its formula ---------------------------------------------------------------

# (max_len, d_model); d_model even, as the exercise says
CASES = [(50, 16), (7, 2), (200, 128), (1, 4)]

# The seed of exercise 1's cases: a practice value here; a course's grader sets its own (grading/ch08.py
# of the repository, which the package does not ship: lib/exercises/__init__.py). Seed 0 is the
# practice lists CASES and ROTATIONS as they are; another seed draws cases of the same kinds from it.
SEEDS = {"my_sinusoidal": 0}


def _even(g: torch.Generator, low: int, high: int) -> int:
    """An even number from low to high (both even) drawn from ``g``."""
    return 2 * int(torch.randint(low // 2, high // 2 + 1, (1,), generator=g))


def _draw(g: torch.Generator, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=g))


def _table_cases() -> list[tuple[int, int]]:
    """(max_len, d_model) of the cases: CASES at seed 0; else a table of some positions and widths,
    a pair of columns alone (d_model = 2), a long and wide table, and one position, from the seed."""
    seed = SEEDS["my_sinusoidal"]
    if seed == 0:
        return list(CASES)
    g = torch.Generator().manual_seed(seed)
    return [
        (_draw(g, 20, 90), _even(g, 10, 40)),
        (_draw(g, 3, 12), 2),
        (_draw(g, 150, 300), _even(g, 64, 160)),
        (1, _even(g, 4, 10)),
    ]


def _rotation_cases() -> list[tuple[int, int]]:
    """(k, d_model) of my_rotation's cases: ROTATIONS at seed 0; else shifts forward, by 1, far, by 0
    and backwards, from the seed."""
    seed = SEEDS["my_sinusoidal"]
    if seed == 0:
        return list(ROTATIONS)
    g = torch.Generator().manual_seed(seed + 1)
    return [
        (_draw(g, 2, 12), _even(g, 10, 16)),
        (1, 2),
        (_draw(g, 20, 50), _even(g, 6, 10)),
        (0, _even(g, 4, 8)),
        (-_draw(g, 1, 6), _even(g, 4, 8)),
    ]


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
    angle_scale=1.0,
    base=10000.0,
) -> Tensor:
    """Variants of the table [max_len, d_model] in float64: the right one by default, or a typical mistake."""
    pos = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]  # [P, 1]
    j = torch.arange(d_model, dtype=torch.float64)  # [D] column index
    pair = torch.div(j, 2, rounding_mode="floor") if layout == "interleaved" else j % (d_model // 2)
    power = {
        "2i/d": 2 * pair / d_model,
        "j/d": j / d_model,
        "i/d": pair / d_model,
        "4i/d": 4 * pair / d_model,  # 2 * j / d over the even columns j = 2i
        "0": 0 * j,  # 10000 ** (i // d) with integer division: every exponent 0
    }[exponent or "2i/d"]
    angle = pos / base**power if divide else pos * base**power  # [P, D]
    angle = angle * angle_scale  # pi / 180 or 180 / pi: a degree mix-up
    if layout == "interleaved":
        use_sin = (j % 2 == 0) if first == "sin" else (j % 2 == 1)
    else:  # [sin ... | cos ...]
        use_sin = j < d_model // 2
    return torch.where(use_sin, torch.sin(angle), torch.cos(angle))


_MISTAKES = [
    (
        dict(exponent="j/d"),
        "your odd (cosine) columns use their own frequency 1/10000^(j/d) with j the column index, as the formula is sometimes written. Columns 2i and 2i + 1 share the frequency 1/10000^(2i/d): one clock, a point (sin, cos) on a circle",
    ),
    (
        dict(first="cos"),
        "your columns are swapped: sin belongs in the even columns (0, 2, 4, ...), cos in the odd ones, so that row 0 is [0, 1, 0, 1, ...]",
    ),
    (
        dict(exponent="i/d"),
        "your exponent is i/d with i the pair index; the formula's exponent is 2i/d (the even column's index over d). With i/d the slowest pair of d_model = {d} turns once every 2 pi 10000^({half_last}/{d}) = {wrong:,.0f} positions; with 2i/d once every 2 pi 10000^({last}/{d}) = {right:,.0f}",
    ),
    (
        dict(exponent="4i/d"),
        "your exponent is twice the formula's, 4i/d with i the pair index: a loop over the even columns j = 2i has the exponent j/d (= 2i/d), not 2j/d",
    ),
    (
        dict(base=1000.0),
        "your frequencies use the base 1000; the formula's is 10000: w_i = 1 / 10000^(2i/d)",
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
        dict(exponent="0"),
        "every pair of yours turns at frequency 1 (sin(pos), cos(pos) in every pair): the exponent came out 0, as integer division does (i // d is 0 for every i < d). The exponent is the fraction 2i/d, so use float division: 2 * i / d_model",
    ),
    (
        dict(angle_scale=math.pi / 180),
        "your angles went through a degree conversion (you took pos / 10000^(2i/d) as degrees): it is already an angle in radians, which is what torch.sin and torch.cos take",
    ),
    (
        dict(angle_scale=180 / math.pi),
        "your angles went through a degree conversion (multiplied by 180 / pi): pos / 10000^(2i/d) is already an angle in radians, which is what torch.sin and torch.cos take",
    ),
    (
        dict(start=1),
        "your row 0 is the encoding of position 1: positions start at 0, whose row is [0, 1, 0, 1, ...]",
    ),
]


# (k, d_model) of the hidden cases of M_k: the chapter's, a single pair, a long shift, no shift, backwards
_refuse_sinusoidal = refusing(
    "sinusoidal_encoding", ", which the exercise asks you to write from the formula"
)


_refuse_rotation = refusing(
    "relative_rotation", ", which the exercise asks you to build from its 2 x 2 blocks"
)


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's functions
# run in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# Under any name: a wrapper (`def my_sinusoidal(m, d): return sinusoidal_encoding(m, d)`) is refused too.
REFUSALS = {
    "check_sinusoidal": [
        ("lib.positional.sinusoidal_encoding", None, _refuse_sinusoidal),
        ("lib.positional.relative_rotation", None, _refuse_rotation),
    ]
}


def _without_library(reader_function: Any):
    """While inside, the library's sinusoidal_encoding and relative_rotation raise, under any name in
    the reader's notebook (or module) and as attributes of lib.positional (the notebook's side of
    REFUSALS)."""
    import lib.positional

    return replaced(
        {sinusoidal_encoding: _refuse_sinusoidal, relative_rotation: _refuse_rotation},
        lib.positional,
        reader_function,
    )


ROTATIONS = [(5, 16), (1, 2), (37, 8), (0, 4), (-3, 6)]


def _rotation(k: int, d_model: int, *, exponent: str = "2i/d", angle_scale: float = 1.0) -> Tensor:
    """M_k in float64 (PE[pos + k] = M_k PE[pos]), or one with the pair index i in the exponent, or
    one whose angles k w_i are multiplied by ``angle_scale`` (pi / 180 or 180 / pi: a degree mix-up)."""
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    power = {"2i/d": 2 * pair / d_model, "i/d": pair / d_model, "0": 0 * pair}[exponent]
    theta = k / 10000.0**power  # [D/2]
    theta = theta * angle_scale
    even = torch.arange(0, d_model, 2)
    m = torch.zeros(d_model, d_model, dtype=torch.float64)
    m[even, even], m[even, even + 1] = theta.cos(), theta.sin()
    m[even + 1, even], m[even + 1, even + 1] = -theta.sin(), theta.cos()
    return m


def _diagnose_rotation(result, expected, k: int, d_model: int, case: str) -> None:
    """Fail with the usual mistake that gives ``result`` instead of M_k (``expected``), or with the
    largest difference when it is none of them."""
    if k != 0 and (result - expected.T).abs().max() <= TOLERANCE:
        fail(
            f"on the case {case}, your M_k is the transpose of the rotation, M_(-k): it shifts by -k positions, because the two sin w k entries of each block have swapped signs. Write out sin(w (pos + k)) with the addition theorem to see which row gets which sign."
        )
    if k != 0 and (result - _rotation(k, d_model, exponent="i/d")).abs().max() <= TOLERANCE:
        fail(
            f"on the case {case}, your blocks turn by k / 10000^(i/d) with i the pair index; each pair turns by k w_i with the table's own frequency w_i = 1 / 10000^(2i/d)."
        )
    if k != 0 and (result - torch.eye(d_model, dtype=torch.float64)).abs().max() <= TOLERANCE:
        fail(
            f"on the case {case}, your M_k is the identity, which is M_0: it shifts by 0 positions. Pair i must turn by the angle k w_i, with w_i = 1 / 10000^(2i/d)."
        )
    if k not in (0, 1) and (result - _rotation(1, d_model)).abs().max() <= TOLERANCE:
        fail(
            f"on the case {case}, your M_k turns pair i by w_i whatever k is: that is M_1, the shift by one position. For a shift of k positions, pair i turns by k w_i."
        )
    if (result - result.T).abs().max() <= TOLERANCE and k != 0:
        fail(
            f"on the case {case}, your M_k is symmetric, so it is not a rotation (a rotation's transpose turns the other way): the two sin w k entries of a block must have opposite signs."
        )
    off_block = result.clone()
    for i in range(0, d_model, 2):
        off_block[i : i + 2, i : i + 2] = 0
    if off_block.abs().max() > TOLERANCE:
        fail(
            f"on the case {case}, your M_k has non-zero entries outside its 2 x 2 diagonal blocks (largest {fmt(off_block.abs().max().item())}): each pair (columns 2i, 2i + 1) turns on its own circle, so M_k is block-diagonal."
        )
    if (
        k != 0
        and d_model > 2
        and (result - _rotation(k, d_model, exponent="0")).abs().max() <= TOLERANCE
    ):
        fail(
            f"on the case {case}, every block of your M_k turns by the same angle k, the angle of pair 0. Pair i turns by k w_i, with its own frequency w_i = 1 / 10000^(2i/d): the slow pairs turn by much less."
        )
    if k != 0 and any(
        (result - _rotation(k, d_model, angle_scale=scale)).abs().max() <= TOLERANCE
        for scale in (math.pi / 180, 180 / math.pi)
    ):
        fail(
            f"on the case {case}, your angles went through a degree conversion: k w_i is already an angle in radians, which is what torch.sin and torch.cos take."
        )
    fail(
        f"on the case {case}, your M_k is not the shift by k (PE[pos] @ M_k.T is not PE[pos + k]): in M_k, {largest_difference(result, expected)}."
    )


def _check_rotation(my_rotation: Any) -> str | None:
    """None if ``my_rotation(k, d_model)`` is M_k on every hidden case, else (by fail) what is wrong."""
    if my_rotation is relative_rotation:
        fail(
            "that is the library's relative_rotation; the exercise is to build M_k from its 2 x 2 blocks."
        )
    for k, d_model in _rotation_cases():
        case = f"k = {k}, d_model = {d_model}"
        with _without_library(my_rotation):
            answer = call(my_rotation, k, d_model, name="my_rotation", case=case)
        result = expect_tensor(
            answer,
            (d_model, d_model),
            name="my_rotation",
            case=case,
        )
        expected = _rotation(k, d_model)
        if (result - expected).abs().max() <= TOLERANCE:
            continue
        _diagnose_rotation(result, expected, k, d_model, case)
    return None


def _mistakes_passing_table() -> list[str]:
    """The known mistakes (``_MISTAKES``) whose tables are right on every case."""
    cases = _table_cases()

    def right(variant: dict) -> bool:
        return all(
            (_table(n, d, **variant) - _table(n, d)).abs().max() <= TOLERANCE for n, d in cases
        )

    return passing_everywhere(_MISTAKES, right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"my_sinusoidal": _mistakes_passing_table}


@checker("my_sinusoidal")
def check_sinusoidal(my_sinusoidal: Any, my_rotation: Any = None) -> str:
    """Check ``my_sinusoidal(max_len, d_model) -> [max_len, d_model]`` against the formula
    PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i + 1] = cos(pos / 10000^(2i/d)), for even d_model,
    then ``my_rotation(k, d_model) -> M_k [d_model, d_model]`` with PE[pos + k] = M_k PE[pos]: the
    rotation by k w_i in each pair (columns 2i, 2i + 1)."""
    attempted(my_sinusoidal, "my_sinusoidal")
    if my_sinusoidal is sinusoidal_encoding:
        fail(
            "that is the library's sinusoidal_encoding; the exercise is to write it from the formula."
        )
    cases = _table_cases()
    for max_len, d_model in cases:
        case = f"max_len = {max_len}, d_model = {d_model}"
        with _without_library(my_sinusoidal):
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
                last = d_model - 2  # the last pair's even column
                numbers = dict(
                    d=d_model,
                    last=last,
                    half_last=last // 2,
                    right=2 * math.pi * 10000 ** (last / d_model),
                    wrong=2 * math.pi * 10000 ** (last / 2 / d_model),
                )
                fail(f"on the case {case}, {why.format(**numbers)}.")
        fail(
            f"on the case {case}, {largest_difference(result, expected)} (row = position, column = dimension)."
        )
    table = f"`my_sinusoidal` equals the formula on all {len(cases)} hidden cases ({'; '.join(f'{p} x {d}' for p, d in cases)})"
    if my_rotation is None or is_stub(my_rotation):
        not_attempted(
            f"{table}; now build M_k in `my_rotation` and run this cell again.", "my_rotation"
        )
    if not callable(my_rotation):
        fail(
            f"expected `my_rotation` to be a function, got {type(my_rotation).__name__} {fmt(my_rotation)}."
        )
    try:
        _check_rotation(my_rotation)
    except CheckFailed as error:  # the feedback is about my_rotation, not my_sinusoidal
        raise ExerciseFailed("my_rotation", str(error)) from None
    ks, widths = zip(*_rotation_cases())
    return f"{table}, and `my_rotation` is M_k on all {len(ks)} hidden cases (k from {min(ks)} to {max(ks)}, d_model from {min(widths)} to {max(widths)})."


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
    the wavelength of the last pair (columns 126, 127), and ``distant_collision`` (True/False): among positions
    0 to 999, are some two positions at least 20 apart closer than two neighbours are?"""
    if last_wavelength is None and distant_collision is None:
        not_attempted(
            "write your two predictions (last_wavelength and distant_collision) in the cell above, then run this cell again."
        )
    right = _last_wavelength()
    if last_wavelength is not None:
        w = expect_number(last_wavelength, "last_wavelength")
        if not near(w, right, 0.01):
            if near(w, 2 * math.pi * BASE, 0.01):
                fail(
                    f"last_wavelength = {fmt(w)} is 2 pi x 100, the limit for a very wide table: it takes an exponent 2i/d of 1, which no pair of the table reaches. Which pair is the last, and what is its exponent?"
                )
            if near(w, _last_wavelength(10000), 0.01):
                fail(
                    f"last_wavelength = {fmt(w)} is the last wavelength of the chapter's table, base 10000."
                )
            if near(w, 2 * math.pi * BASE ** (127 / 128), 0.01):
                fail(
                    "last_wavelength: you put the odd column's index in the exponent. Both columns of a pair turn at one frequency: which column's index does the formula's exponent use?"
                )
            if near(w, right / (2 * math.pi), 0.01):
                fail(
                    f"last_wavelength = {fmt(w)} is the number of positions per radian. A wavelength is the number of positions per full turn: how many radians make one turn?"
                )
            if near(w, 2 * math.pi, 0.01):
                fail(
                    f"last_wavelength = {fmt(w)} is the wavelength of the first pair (frequency 1), not the last."
                )
            fail(
                f"last_wavelength = {fmt(w)} is not it. Start from the frequency w_i of pair i in the section The sinusoidal table, with base 100 in place of 10000: which i is the last pair, and how many positions does one full turn take?"
            )
    if distant_collision is not None:
        if expect_bool(distant_collision, "distant_collision"):
            fail(
                f"distant_collision: measure it before you keep this answer. The slowest clock repeats much sooner with base 100, but a position is read from all 64 clocks together: over positions 0 to 999, do they all come back close together at once? Compare the distance between two neighbours with the smallest distance of two positions {FAR} or more apart, among positions 0 to 999 (torch.cdist on the table)."
                + (
                    " last_wavelength is still None: not attempted yet."
                    if last_wavelength is None
                    else ""
                )
            )
    if last_wavelength is None:
        not_attempted(
            "your distant_collision is right; now predict the wavelength of the last pair (last_wavelength)."
        )
    if distant_collision is None:
        not_attempted(
            "your last_wavelength is right; now predict whether distant positions collide (distant_collision)."
        )
    neighbours, far = _distances()
    return f"both predictions are right: the last pair turns once every 2 pi x 100^(126/128) = {right:.1f} positions, yet no two distant positions get nearly the same vector: among positions 0 to 999, two neighbours are {neighbours:.2f} apart and no two positions {FAR} or more apart come closer than {far:.2f}."
