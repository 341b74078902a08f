"""Checkers for the exercises of the chapter *Attention as soft lookup*.

- :func:`check_duplicate_key`: exercise 1 (predict, then check): a seventh item whose key copies k_2.
- :func:`check_sharpen`: exercise 2 (implement): the neural Turing machine's sharpening step.

Exercise 3 (rows of different lengths) is answered in prose; the chapter's solution computes it.

Exercise 2's checker runs on practice cases (``SEEDS``) against the statement's formula computed
exactly (``_sharpened``); a course's grader puts its own cases and its reference in their place
(grading/ch02.py of the repository, which the package does not ship: lib/exercises/__init__.py says
how).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NoReturn

import numpy as np
import torch
from torch import Tensor

from . import (
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    failures,
    fmt,
    largest_difference,
    not_attempted,
    row_sum_problem,
)

__all__ = ["check_duplicate_key", "check_sharpen"]


# --- exercise 1: a duplicated key -------------------------------------------------------------------


def _values() -> Tensor:
    """The values of the chapter's memory (hexagon corners, no randomness) and the new item's: [7, 2]."""
    angles = torch.arange(6, dtype=torch.float64) * (2 * math.pi / 6)
    radii = torch.tensor([1.0, 0.8, 1.2, 0.9, 1.1, 0.7], dtype=torch.float64)
    hexagon = radii[:, None] * torch.stack([angles.cos(), angles.sin()], dim=1)  # [6, 2]
    return torch.cat([hexagon, torch.tensor([[0.0, -1.5]], dtype=torch.float64)])  # [7, 2]


BEST, COPY = 2, 6  # the query is a noisy copy of k_2; the new item (index 6) has the same key
TOLERANCE = 0.05  # a prediction made by hand from v_2's coordinates is good to two decimals


def _point(value: Any, what: str) -> Tensor:
    if isinstance(value, (Tensor, np.ndarray)) and math.prod(value.shape) == 2:  # torch or NumPy
        value = value.reshape(-1).tolist()
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{what} should be a point (x, y): a pair of two numbers, got {fmt(value)}.")
    return torch.tensor(
        [expect_number(v, f"each coordinate of {what}") for v in value], dtype=torch.float64
    )


@checker("duplicated key")
def check_duplicate_key(soft_limit: Any, hard_key: Any) -> str:
    """Check the predictions of exercise 1: ``soft_limit``, the point (x, y) that the soft output for
    ``q`` approaches as lambda -> infinity, and ``hard_key``, the index of the key the hard lookup picks."""
    if soft_limit is None and hard_key is None:
        not_attempted(
            "write your two predictions (soft_limit and hard_key) in the cell above, then run this cell again."
        )
    values = _values()
    midpoint = (values[BEST] + values[COPY]) / 2

    def check_soft(soft: Any) -> None:
        p = _point(soft, "soft_limit")
        if (p - midpoint).norm() <= TOLERANCE:
            return
        where = f"({fmt(p[0].item())}, {fmt(p[1].item())})"
        if (p - values[BEST]).norm() <= TOLERANCE:
            fail(
                f"soft_limit {where} is v_2, the value of k_2 alone, as if k_2 were the only key with the highest score. Look at the scores of the seven keys, then ask what a softmax does with two scores that are exactly equal, at every lambda."
            )
        if (p - values[COPY]).norm() <= TOLERANCE:
            fail(
                f"soft_limit {where} is the new value alone, as if its key beat every other. Compare its score with that of the key it copies."
            )
        if (p - values.mean(dim=0)).norm() <= TOLERANCE:
            fail(
                f"soft_limit {where} is the average of all seven values: the output at lambda = 0, where every weight is 1/7. As lambda grows, the weight leaves every key whose score is not the highest."
            )
        if (p.flip(0) - midpoint).norm() <= TOLERANCE:
            fail(
                f"soft_limit {where} is the right point with its coordinates swapped: write it as (x, y), x first."
            )
        fail(
            f"soft_limit {where} is not where the soft output goes (it is {(p - midpoint).norm():.2f} away). Which keys share the highest score, and how does a softmax split the weight between equal scores as lambda grows?"
        )

    def check_hard(key: Any) -> None:
        if isinstance(key, np.ndarray) and key.size == 1 and key.dtype.kind in "iu":
            key = int(key.item())  # a NumPy integer array of one element
        if isinstance(key, Tensor) and key.numel() == 1 and not key.is_floating_point():
            key = int(key.item())
        if isinstance(key, float) and key.is_integer():
            key = int(key)  # 2.0: the right index, written as a float
        if isinstance(key, bool) or not isinstance(key, int):
            fail(
                f"hard_key should be the index of a key (an int from 0 to 6), got {type(key).__name__} {fmt(key)}."
            )
        if key == COPY:
            fail(
                "hard_key = 6, the copy. Its score ties exactly with another key's: read in torch.argmax's documentation which index it returns when several entries share the maximum."
            )
        if key != BEST:
            fail(
                f"hard_key = {key}: key {key} does not have the highest score. Which key was the query made from, and which key is a copy of it?"
            )

    # both predictions judged at once, so that two wrong ones take one run, not two
    wrong = failures(
        {"soft_limit": check_soft, "hard_key": check_hard},
        {"soft_limit": soft_limit, "hard_key": hard_key},
    )
    if len(wrong) > 1:
        fail("Neither prediction is right yet. " + " ".join(wrong))
    if wrong:  # one prediction wrong: say whether the other one is right
        other = "hard_key" if "soft_limit" in wrong[0] else "soft_limit"
        given = hard_key if other == "hard_key" else soft_limit
        fail(wrong[0] if given is None else f"{other} is right. {wrong[0]}")
    if soft_limit is None:
        not_attempted("hard_key is right; now predict soft_limit too.")
    if hard_key is None:
        not_attempted("soft_limit is right; now predict hard_key too.")
    return "both predictions are right: the soft output tends to the midpoint of v_2 and the new value, and the hard lookup returns v_2 alone (index 2, the first of the two tied keys)."


# --- exercise 2: NTM sharpening -----------------------------------------------------------------------


def _weights(g: torch.Generator, rows: int, n: int, spread: float = 1.0) -> Tensor:
    return torch.softmax(spread * torch.randn(rows, n, generator=g), dim=-1)  # [rows, n]


# The seed of each exercise's cases: practice values here; a course's grader sets its own (grading/).
SEEDS = {"sharpen": 2}


def _sharpen_cases() -> list[tuple[str, Tensor, float]]:
    """The cases: (description, w [B, N] float32, gamma), drawn from ``SEEDS["sharpen"]``."""
    g = torch.Generator().manual_seed(SEEDS["sharpen"])
    with_zeros = _weights(g, 2, 8)
    with_zeros[:, [1, 5]] = 0.0  # e.g. masked slots
    with_zeros = with_zeros / with_zeros.sum(dim=-1, keepdim=True)
    # at gamma = 1 an epsilon before the log leaves a zero weight at about epsilon, not at epsilon**4
    zeros_at_1 = torch.tensor([[0.4, 0.0, 0.3, 0.2, 0.0, 0.1]])
    return [
        ("gamma = 1 on a batch of 2 rows of 5 weights", _weights(g, 2, 5), 1.0),
        ("gamma = 2 on a batch of 3 rows of 6 weights", _weights(g, 3, 6), 2.0),
        ("gamma = 4 on 2 rows of 8 weights, two of them exactly 0", with_zeros, 4.0),
        ("gamma = 3.5 (not an integer) on one row of 5 weights", _weights(g, 1, 5), 3.5),
        ("gamma = 10 on uniform weights", torch.full((2, 4), 0.25), 10.0),
        ("gamma = 300 on one row of 32 weights near 1/32", _weights(g, 1, 32, spread=0.3), 300.0),
        ("gamma = 1 on one row of 6 weights, two of them exactly 0", zeros_at_1, 1.0),
    ]


def _sharpened(w: Tensor, gamma: float) -> Tensor:
    """The statement's formula, w**gamma / sum_j w_j**gamma, in exact rational arithmetic (Python's
    fractions; a gamma that is not an integer in float64): no power underflows, at any gamma. Slow,
    and not how to compute it in floating point, which is the exercise. [B, N] -> [B, N] float64."""
    rows = []
    for row in w.double().tolist():
        if float(gamma).is_integer():
            powered = [Fraction(v) ** int(gamma) for v in row]
        else:
            powered = [Fraction(v**gamma) for v in row]
        total = sum(powered)
        rows.append([float(p / total) if total else math.nan for p in powered])
    return torch.tensor(rows, dtype=torch.float64)


def _check_epsilon(case: str, w: Tensor, gamma: float, result: Tensor, expected: Tensor) -> None:
    """Fail if the weights are those of w + eps, or a weight of exactly 0 did not stay 0."""
    w64, zero = w.double(), expected == 0
    for eps in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10):
        shifted = _sharpened(w64 + eps, gamma)
        if torch.allclose(result, shifted, atol=1e-5, rtol=1e-4):
            fail(
                f"on the case '{case}', your weights are those of w + {eps:g}: an epsilon added before the power or the log (to avoid log 0) changes every weight, by up to {(shifted - expected).abs().max().item():.2g} here. Leave w as it is, and find what a weight of exactly 0 becomes at each step of your computation."
            )
    if zero.any() and result[zero].abs().max() > 1e-6:
        i, j = (zero & (result.abs() > 1e-6)).nonzero()[0].tolist()
        fail(
            f"on the case '{case}', slot {j} of row {i} has weight 0, and yours gives it {fmt(result[i, j].item())}: 0**gamma = 0, so a zero weight must stay 0 (an epsilon added before the power or the log changes that)."
        )


def _name_sharpen_mistake(
    case: str, w: Tensor, gamma: float, result: Tensor, expected: Tensor
) -> NoReturn:
    """Fail with the mistake behind wrong weights: underflow hidden, a missing or wrong
    normalisation, softmax(gamma w), 1/gamma, an epsilon, a zero weight not kept; else the largest
    difference."""
    w64, powered = w.double(), w.double() ** gamma
    zero_rows = (result == 0).all(dim=-1)
    if gamma >= 100 and zero_rows.any():
        fail(
            f"for gamma = {gamma:g}, row {int(zero_rows.nonzero()[0])} of your weights is all 0 (it should sum to 1): every w(i)**gamma underflows to 0 ((1/32)**300 is about 1e-451, far below the smallest float), so the sum is 0 too, and 0/0 = NaN. Replacing the NaNs by 0 (nan_to_num, a mask) or adding an epsilon to the sum hides the underflow instead of avoiding it: find a way to compute the same ratio without forming numbers that small."
        )
    if torch.allclose(result, powered, atol=1e-6):
        fail(
            f"on the case '{case}', {row_sum_problem(result)}: your result is w**gamma without the division. Divide each row by its sum over the N slots."
        )
    if w.shape[0] > 1 and torch.allclose(
        result, powered / powered.sum(dim=0, keepdim=True), atol=1e-5
    ):
        fail(
            f"on the case '{case}', {row_sum_problem(result)}: you normalised over the first dimension (across the batch). Sum over the last dimension, the N slots: .sum(dim=-1, keepdim=True)."
        )
    if torch.allclose(result, torch.softmax(gamma * w64, dim=-1), atol=1e-5):
        fail(
            f"on the case '{case}', your result is softmax(gamma * w): that multiplies the weights by gamma. Sharpening raises them to the power gamma: w**gamma / sum(w**gamma)."
        )
    if gamma != 1 and torch.allclose(result, w64, atol=1e-6):
        fail(f"on the case '{case}', your result equals w: gamma = {gamma:g} was not applied.")
    if torch.allclose(result, expected.log(), atol=1e-5, equal_nan=True):
        fail(
            f"on the case '{case}', your result is the logarithm of the sharpened weights (its entries are negative and the rows sum to {result.sum(dim=-1)[0].item():.3g}): log_softmax returns log-probabilities. Return the weights themselves, not their logarithm."
        )
    if gamma != 1 and torch.allclose(result, _sharpened(w, 1 / gamma), atol=1e-5):
        fail(
            f"on the case '{case}', your result is w**(1/gamma): it flattens the weights instead of sharpening them (compare the largest weight of a row before and after). Check where gamma enters your formula."
        )
    if torch.allclose(result, powered / powered.sum(), atol=1e-6):
        fail(
            f"on the case '{case}', {row_sum_problem(result)}: you divided by the sum of the whole tensor (.sum() without a dim adds every row of the batch). Divide each row by its own sum: .sum(dim=-1, keepdim=True)."
        )
    row_max = w64.amax(dim=-1, keepdim=True)
    if torch.allclose(result, (w64 / row_max) ** gamma, atol=1e-5):
        fail(
            f"on the case '{case}', {row_sum_problem(result)}: dividing by the row maximum keeps w**gamma from underflowing, but the result is not yet normalised. Divide each row by its sum too."
        )
    _check_epsilon(case, w, gamma, result, expected)
    problem = row_sum_problem(result)
    if problem:
        fail(
            f"on the case '{case}', {problem}: did you normalise over the last dimension (the N slots)?"
        )
    fail(f"on the case '{case}', {largest_difference(result, expected)}.")


@checker("sharpen")
def check_sharpen(sharpen: Any) -> str:
    """Check ``sharpen(w, gamma)``: w [B, N] (rows sum to 1), gamma >= 1 -> w**gamma / sum_j w_j**gamma."""
    attempted(sharpen, "sharpen")
    cases = _sharpen_cases()
    for case, w, gamma in cases:
        expected = _sharpened(w, gamma)
        result = expect_tensor(
            call(sharpen, w, gamma, name="sharpen", case=f"'{case}'"),
            tuple(w.shape),
            name="sharpen",
            case=f"'{case}'",
            allow_nan=True,
        )
        if not torch.isfinite(result).all():
            if gamma >= 100:
                fail(
                    f"for gamma = {gamma:g} your weights are NaN or inf: on 32 weights near 1/32, every w(i)**gamma underflows to 0 ((1/32)**300 is about 1e-451, far below the smallest float), so the sum you divide by is 0 and the division gives 0/0 = NaN. The power is the step that leaves the range of floats: find a way to compute the same ratio without forming numbers that small."
                )
            fail(f"on the case '{case}' your weights contain NaN or inf.")
        zero = expected == 0
        if torch.allclose(result, expected, atol=1e-5, rtol=1e-4):
            if not (result[zero] != 0).any():
                continue
            i, j = (zero & (result != 0)).nonzero()[0].tolist()
            fail(
                f"on the case '{case}', slot {j} of row {i} has weight exactly 0, and yours gives it {fmt(result[i, j].item())}: tiny, but not 0. 0**gamma = 0, so a zero weight (a masked slot) must stay exactly 0; an epsilon added before the power or the log, however small, changes that."
            )
        _name_sharpen_mistake(case, w, gamma, result, expected)
    return f"`sharpen` is right on all {len(cases)} hidden cases (gamma from 1 to 300, weights that are exactly 0, batches of 1 to 3 rows)."
