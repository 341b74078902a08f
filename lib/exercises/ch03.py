"""Checkers for the exercises of the chapter *Scoring functions*.

- :func:`check_projected_as_general`: exercise 1 (implement): projections + scaled dot = a general score.
- :func:`check_key_strength`: exercise 2 (predict, then check): the NTM's key strength beta on q1.
- :func:`check_unit_length`: exercise 3 (change and explain): all vectors of length 1.
- :func:`check_masked_softmax`: exercise 4 (implement): a masked softmax written by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NoReturn

import torch
from torch import Tensor

from lib import attention
from lib.attention import GeneralScore

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
    plain,
    refusing,
    replaced,
    row_sum_problem,
)

__all__ = [
    "check_projected_as_general",
    "check_key_strength",
    "check_unit_length",
    "check_masked_softmax",
]


# --- exercise 1: projections followed by the scaled dot product are a general score -------------------


# The seed of each exercise's cases: practice values here; a course's grader sets its own (grading/,
# lib/exercises/__init__.py says how).
SEEDS = {"projection": 12, "masked_softmax": 4}
# how far below the lowest score the masked scores go when a diagnosis reruns the reader's masked
# softmax with every masked score out of the way (at least as far again as the lowest score lies from
# 0: float32 cannot hold -1e10 - 1e3 apart from -1e10)
MASKED_BELOW = 1e3


def _below(scores: Tensor) -> float:
    """A score below every one of ``scores``, by a margin float32 can hold."""
    lowest = scores.min().item()
    return lowest - max(MASKED_BELOW, abs(lowest))


def _score(value: float) -> str:
    """A score as the messages write it: -29999, or -1e+10 once it is too long to read."""
    return f"{value:.0f}" if abs(value) < 1e6 else f"{value:.0e}"


def _finite_fill_named(top: float) -> str:
    """The finite fill a reader likely used whose masked scores beat a row's allowed ones, at most ``top``."""
    return "-1e9" if top < -1e9 else "-1e4"


def _projection_cases() -> list[tuple[int, int, Tensor, Tensor, Tensor, Tensor]]:
    """(d, d_k, W_Q [d_k, d], W_K [d_k, d], x [2, 3, d], x2 [2, 4, d]) for three widths."""
    g = torch.Generator().manual_seed(SEEDS["projection"])
    cases = []
    for d, d_k in [(8, 2), (5, 3), (6, 6)]:
        cases.append(
            (
                d,
                d_k,
                torch.randn(d_k, d, generator=g),
                torch.randn(d_k, d, generator=g),
                torch.randn(2, 3, d, generator=g),
                torch.randn(2, 4, d, generator=g),
            )
        )
    return cases


def _projected_scores(W_Q: Tensor, W_K: Tensor, x: Tensor, x2: Tensor) -> Tensor:
    q, k = x.double() @ W_Q.double().T, x2.double() @ W_K.double().T  # [2, 3, d_k], [2, 4, d_k]
    return q @ k.transpose(-2, -1) / math.sqrt(W_Q.shape[0])  # [2, 3, 4]


def _factor(result: Tensor, expected: Tensor) -> float | None:
    """c if result = c * expected (to 0.1%), else None."""
    c = float((result * expected).sum() / (expected * expected).sum())
    return c if torch.allclose(result, c * expected, rtol=1e-3, atol=1e-4) else None


def _general_weight(module: Any, case: str, d: int, d_k: int) -> Tensor:
    """The W_a.weight [d, d] of the reader's GeneralScore, as float64; anything else returned is
    reported."""
    if module is None:
        fail(
            f"on the case {case}, `projected_as_general` returned None. Did you forget the `return` statement?"
        )
    if isinstance(module, Tensor):
        if tuple(module.shape) == (d, d):
            fail(
                f"on the case {case}, you returned the matrix W_a itself. Return a GeneralScore(d, d) module whose W_a.weight holds it (copy it in under torch.no_grad())."
            )
        fail(
            f"on the case {case}, you returned a tensor of shape {list(module.shape)}; expected a GeneralScore({d}, {d}) module."
        )
    if not isinstance(module, GeneralScore):
        fail(
            f"on the case {case}, you returned a {type(module).__name__}; expected a lib.attention.GeneralScore({d}, {d})."
        )
    shape = tuple(module.W_a.weight.shape)
    if shape != (d, d):
        fail(
            f"on the case {case}, your GeneralScore's W_a.weight has shape {list(shape)}; expected [d, d] = [{d}, {d}], because it compares raw {d}-dimensional vectors. Your matrix has the shape of one that compares projected ({d_k}-dimensional) vectors: write down the shape of each factor of your product."
        )
    # The score q^T W_a k computed here from the module's weight tensor: the module's own forward (a
    # subclass could override it) is not what is graded.
    weight = plain(module.W_a.weight).detach().double()  # [d, d]
    if not torch.isfinite(weight).all():
        fail(f"on the case {case}, your W_a.weight contains NaN or inf.")
    return weight


def _name_projection_mistake(
    case: str, d: int, d_k: int, W_Q: Tensor, W_K: Tensor, x: Tensor, x2: Tensor, weight: Tensor
) -> NoReturn:
    """Fail with the mistake behind wrong scores x W_a x'^T: a wrong scale, swapped or shared
    projections, a sign, a constant factor or a W_a never copied in; else the largest difference."""
    result = x.double() @ weight @ x2.double().transpose(-2, -1)  # [2, 3, 4]
    expected = _projected_scores(W_Q, W_K, x, x2)
    c = _factor(result, expected)
    if c is not None and abs(c - math.sqrt(d_k)) < 1e-3 and d_k > 1:
        fail(
            f"on the case {case}, your scores are sqrt(d_k) = {math.sqrt(d_k):.3g} times too large: which part of the scaled dot product is missing from your W_a?"
        )
    if c is not None and abs(c - 1 / math.sqrt(d_k)) < 1e-3 and d_k > 1:
        fail(
            f"on the case {case}, your scores are sqrt(d_k) = {math.sqrt(d_k):.3g} times too small: did you divide by d_k instead of sqrt(d_k), or twice?"
        )
    if c is not None and d != d_k and abs(c - math.sqrt(d_k / d)) < 1e-3:
        fail(
            f"on the case {case}, you divided by sqrt(d) = {math.sqrt(d):.3g}, the width of the raw vectors: which vectors does the scaled dot product compare, and how wide are they?"
        )
    swapped = _projected_scores(W_K, W_Q, x, x2)
    if _factor(result, swapped) is not None:
        fail(
            f"on the case {case}, your W_a is transposed: you get the scores with the roles of W_Q and W_K swapped. GeneralScore computes x^T W_a x' with the query's x on the left of W_a.weight and the key's x' on the right: which projection belongs on which side?"
        )
    for used, other in (("W_Q", W_Q), ("W_K", W_K)):
        if _factor(result, _projected_scores(other, other, x, x2)) is not None:
            fail(
                f"on the case {case}, your scores are those of a W_a built from {used} alone, used for the queries and for the keys: each side of the score has its own projection."
            )
    if c is not None and c < 0:
        fail(
            f"on the case {case}, your scores are {c:.3g} times the expected ones: the sign is wrong. Look for a minus sign, or a difference taken the wrong way round."
        )
    if c is not None:
        fail(
            f"on the case {case}, your scores are {c:.3g} times the expected ones: check the constant factor."
        )
    # rank with a tolerance for float32 rounding (a float32 rank-2 matrix has 6 tiny, non-zero
    # singular values, which a float64 default tolerance would count)
    singular = torch.linalg.svdvals(weight)
    rank = int((singular > 1e-5 * singular.max()).sum()) if singular.max() > 0 else 0
    if rank > d_k:
        fail(
            f"on the case {case}, your GeneralScore's W_a.weight has rank {rank}, but a score that compares the vectors only through their {d_k}-dimensional projections has a W_a of rank at most d_k = {d_k}: the module still holds other weights (its random initialisation?). Did you copy your matrix into it, `general.W_a.weight.copy_(...)` under torch.no_grad(), rather than only compute it or assign it to a local name?"
        )
    fail(f"on the case {case}, {largest_difference(result, expected)}.")


@checker("projected_as_general")
def check_projected_as_general(projected_as_general: Any) -> str:
    """Check ``projected_as_general(W_Q, W_K) -> GeneralScore(d, d)`` whose score on raw vectors x, x'
    equals (W_Q x) . (W_K x') / sqrt(d_k), for W_Q, W_K of shape [d_k, d]."""
    attempted(projected_as_general, "projected_as_general")
    cases = _projection_cases()
    for d, d_k, W_Q, W_K, x, x2 in cases:
        case = f"d = {d}, d_k = {d_k}"
        module = call(
            projected_as_general,
            W_Q,
            W_K,
            name="projected_as_general",
            case=case,
            grad=True,  # as the reader calls it: a copy into the weight must bring its own no_grad
            hints={
                "leaf Variable that requires grad": "W_a.weight is a parameter that requires grad, and autograd refuses an in-place write into it while it records: copy into the parameter under `torch.no_grad()`.",
                "as parameter": "A module's weight is an nn.Parameter that the module registered: copy your matrix into it, `general.W_a.weight.copy_(W_a)` under `torch.no_grad()`, rather than assigning a plain tensor to it.",
                "must match the size of tensor": "The matrix you copied into W_a.weight does not have its shape [d, d]: W_a sits between two raw d-dimensional vectors. Write down the shape of each factor of your product.",
            },
        )
        weight = _general_weight(module, case, d, d_k)
        scores = x.double() @ weight @ x2.double().transpose(-2, -1)  # [2, 3, 4]
        if not torch.allclose(scores, _projected_scores(W_Q, W_K, x, x2), rtol=1e-4, atol=1e-4):
            _name_projection_mistake(case, d, d_k, W_Q, W_K, x, x2, weight)
    described = "; ".join(f"d = {d}, d_k = {d_k}" for d, d_k, *_ in cases)
    return f"`projected_as_general` is right on all {len(cases)} hidden cases ({described})."


# --- exercise 2: the key strength beta -----------------------------------------------------------------

KEY_LABELS = ("k1", "k2", "k3", "k4", "k5", "k6")


def _labels(
    value: Any, what: str, valid: tuple[str, ...], aliases: dict[str, str] | None = None
) -> set[str]:
    """A set of labels from a str, set, list or tuple of str (case and '_'/'-' do not matter); a str
    with commas is refused: the reader's own names, shown split, without saying which are right."""
    if isinstance(value, str) and "," in value:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        fail(
            f"{what}: {value!r} is one string; give a set of separate names, each in its own quotes: {{{', '.join(repr(p) for p in parts)}}}."
        )
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (set, frozenset, list, tuple)):
        fail(
            f"{what} should be a set of names, each one of {', '.join(valid)}; got {type(value).__name__} {fmt(value)}."
        )
    labels = set()
    for item in value:
        if not isinstance(item, str):
            fail(f"{what}: name each one by its label, one of {', '.join(valid)}; got {fmt(item)}.")
        name = " ".join(item.lower().replace("_", " ").replace("-", " ").split())
        name = (aliases or {}).get(name, name)
        if name not in valid:
            fail(f"{what}: {item!r} is not one of {', '.join(valid)}.")
        labels.add(name)
    return labels


def _check_heaviest_keys(heaviest_keys: Any) -> None:
    """Exercise 2's first part: the keys that keep weight as beta grows."""
    keys = _labels(heaviest_keys, "heaviest_keys", KEY_LABELS)
    if not keys:
        fail(
            "heaviest_keys: you named no key. As beta grows, which keys keep weight? Compare the cosines of q1 with every key (what does a cosine do with a key's length?)."
        )
    if keys != {"k1", "k2"}:
        extra = sorted(keys - {"k1", "k2"})
        if extra:
            fail(
                f"heaviest_keys: {', '.join(extra)} {'has' if len(extra) == 1 else 'have'} a smaller cosine with q1 than some other key. As beta grows, the gap beta * (difference of the cosines) grows without bound, so such a weight goes to 0."
            )
        fail(
            f"heaviest_keys: {'the key you named keeps' if len(keys) == 1 else 'the keys you named keep'} weight, but you left out a key whose score beta * cos(q1, k) is just as large. Compare the cosines of q1 with every key (what does a cosine do with a key's length?)."
        )


def _check_k2_limit(k2_limit: Any) -> None:
    """Exercise 2's second part: the number the weight of k2 approaches."""
    limit = expect_number(k2_limit, "k2_limit")
    if abs(limit - 0.5) <= 0.01:
        return
    if abs(limit - 1) <= 0.01:
        fail(
            "k2_limit: the weight of k2 approaches 1 only if k2's score beats every other key's. Does it? Compare the cosines of q1 with each key."
        )
    if abs(limit - 0.31) <= 0.01:
        fail(
            f"k2_limit = {fmt(limit)} is the weight of k2 at beta = 1; the question is where it goes as beta grows."
        )
    if abs(limit - 0.489) <= 0.005:
        fail(
            f"k2_limit = {fmt(limit)} is the weight of k2 at beta = 5: close, but the question is where it goes as beta grows without bound."
        )
    if abs(limit - 1 / 6) <= 0.01:
        fail("k2_limit: uniform weights, 1/6 each, are the limit beta -> 0, not beta -> infinity.")
    if abs(limit) <= 0.01:
        fail(
            "k2_limit: the weight of k2 vanishes only if some key has a larger cosine with q1 than k2. Does one?"
        )
    fail(
        f"k2_limit = {fmt(limit)} is not the limit. Hint: how many keys share the largest score, and how does the softmax split the weight between equal scores?"
    )


@checker("key strength")
def check_key_strength(heaviest_keys: Any, k2_limit: Any) -> str:
    """Check the predictions of exercise 2 for q1 under softmax(beta * cos): ``heaviest_keys``, the keys
    that keep weight as beta grows, and ``k2_limit``, the number the weight of k2 approaches. Both
    wrong: both named in one message."""
    if heaviest_keys is None and k2_limit is None:
        not_attempted(
            "write your two predictions (heaviest_keys and k2_limit) in the cell above, then run this cell again."
        )
    parts = {  # called here, so that the messages keep the lower-case names they begin with
        "heaviest_keys": lambda v: _check_heaviest_keys(v),
        "k2_limit": lambda v: _check_k2_limit(v),
    }
    wrong = failures(parts, {"heaviest_keys": heaviest_keys, "k2_limit": k2_limit})
    if len(wrong) > 1:
        fail(f"{len(wrong)} of your answers are not right yet. " + " ".join(wrong))
    if wrong:
        fail(wrong[0])
    if heaviest_keys is None:
        not_attempted("k2_limit is right; now say which keys keep the weight (heaviest_keys).")
    if k2_limit is None:
        not_attempted(
            "heaviest_keys is right; now predict the number k2's weight approaches (k2_limit)."
        )
    return "both predictions are right: k1 and k2 share the largest cosine, 1, so as beta grows they split the weight, 1/2 each, whatever their lengths."


# --- exercise 3: vectors of length 1 ------------------------------------------------------------------

# Exercise 3's answers are two sets of six names that the student is asked to predict: a live check
# over so small a space is an oracle (a blind search finds them in 68 calls), so a graded course
# treats them as predictions, checked at collection with 0 points, though the title says "change and
# explain" (tools/make_course.py; course review s35, M1).
PREDICTED = {3}
SCORE_NAMES = ("cosine", "additive", "location", "general", "dot", "scaled dot")
_ALIASES = {
    "dot product": "dot",
    "scaled dot product": "scaled dot",
    "scaled": "scaled dot",
    "content": "cosine",
    "content based": "cosine",
    "cos": "cosine",
    "concat": "additive",
    "location based": "location",
    "bilinear": "general",
}
_WHY_CHANGES = {  # a hint, as a question, why a function's weights change (the exercise's "explain")
    "dot": "what does q . k do when the lengths of q and k change?",
    "scaled dot": "what does q . k / sqrt(2) do when the lengths of q and k change?",
    "general": "does q^T W_a k depend on the lengths of q and k?",
    "additive": "its tanh network reads W_q q + W_k k: did its inputs change?",
    "location": "it reads only the query, W_a q; did the queries change?",
}
IDENTICAL, UNCHANGED = {"cosine", "dot"}, {"cosine"}


@checker("unit length")
def check_unit_length(identical: Any, unchanged: Any) -> str:
    """Check the answers of exercise 3 after normalising queries and keys: ``identical``, the score
    functions whose weights are now identical to each other, and ``unchanged``, those whose weights
    do not change at all (names as in the chapter: cosine, additive, location, general, dot, scaled dot)."""
    if identical is None and unchanged is None:
        not_attempted(
            "write your two answers (identical and unchanged) in the cell above, then run this cell again."
        )
    # Feedback names only what is wrong with the names given (never a name that is missing), so
    # that one wrong guess does not hand over the answer.
    problems = []
    if identical is not None:
        names = _labels(identical, "identical", SCORE_NAMES, _ALIASES)
        extra = sorted(names - IDENTICAL, key=SCORE_NAMES.index)
        for name in extra:
            problems.append(
                f"identical: {name} does not belong: with unit vectors its weights equal no other score function's."
            )
        if not extra and names != IDENTICAL:
            problems.append(
                f"identical: you named {len(names)} score function{'s' if len(names) != 1 else ''}; two give identical weights. Which formula becomes another one when every length is 1?"
            )
    if unchanged is not None:
        names = _labels(unchanged, "unchanged", SCORE_NAMES, _ALIASES)
        for name in sorted(names - UNCHANGED, key=SCORE_NAMES.index):
            problems.append(f"unchanged: {name} does not belong: {_WHY_CHANGES[name]}")
        if not names & UNCHANGED:
            problems.append(
                "unchanged: a score function whose weights do not change at all is missing. Which formula does not depend on the lengths of its inputs?"
            )
    if problems:
        fail(" ".join(problems))
    if identical is None:
        not_attempted(
            "unchanged is right; now say which score functions give identical weights (identical)."
        )
    if unchanged is None:
        not_attempted(
            "identical is right; now say which score functions do not change at all (unchanged)."
        )
    return "both answers are right: cosine does not change at all, the dot product becomes the cosine, and the other four change."


# --- exercise 4: a masked softmax by hand ----------------------------------------------------------------


def _masked_softmax_cases() -> list[tuple[str, Tensor, Tensor]]:
    """The cases: (description, scores, mask bool broadcastable to scores, True = may attend)."""
    g = torch.Generator().manual_seed(SEEDS["masked_softmax"])
    scores_4x4 = torch.tensor(
        [
            [0.11, 0.00, 0.81, 0.79],
            [0.19, 0.50, 0.30, 0.48],
            [0.53, 0.98, 0.95, 0.14],
            [0.81, 0.86, 0.38, 0.90],
        ]
    )
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    padding = torch.arange(5)[None, None, :] < torch.tensor([5, 3])[:, None, None]  # [2, 1, 5]
    fully = torch.tensor(
        [[True, True, False, True], [False, False, False, False], [True, False, False, False]]
    )
    large = torch.tensor([[1e4, 1e4 - 1, 1e4 - 2, -1e4], [3e4, -3e4, 2e4, 0.0]])
    large_mask = torch.tensor([[True, True, False, True], [False, True, True, True]])
    # allowed scores below any finite fill value: a fill of -1e4 lets the masked key win
    low = torch.tensor([[-3e4, -3e4 + 1, 5.0, 3.0], [-5e3, -5e3 + 1, 0.0, 2.0]])
    low_mask = torch.tensor([[True, True, False, False], [True, True, False, False]])
    # allowed scores below -1e9, the usual finite fill, still in float32 (which reaches 3e38)
    lower = torch.tensor([[-1e10, -1e10, 5.0, 3.0], [-2e10, -1e10, 0.0, 2.0]])
    return [
        ("a 4x4 table of scores with a causal mask", scores_4x4, causal),
        (
            "a batch of 2 with a padding mask of shape [2, 1, 5]",
            2 * torch.randn(2, 3, 5, generator=g),
            padding,
        ),
        ("3 rows, of which row 1 is fully masked", torch.randn(3, 4, generator=g), fully),
        ("scores up to 3e4 in size, of either sign", large, large_mask),
        ("allowed scores far below zero, down to -3e4", low, low_mask),
        ("allowed scores below -1e9, down to -2e10", lower, low_mask),
    ]


def _overflows(scores: Tensor, allowed: Tensor, rows: Tensor) -> bool:
    """True if exp of some allowed score in one of ``rows`` is inf in float32 (a softmax without the
    shift by the row maximum overflows there)."""
    big = scores.float().expand(allowed.shape).masked_fill(~allowed, 0).exp().isinf()
    return bool(big[rows].any())


_LIBRARY_MASKED_SOFTMAX = attention.masked_softmax


_refuse_library = refusing(
    "masked_softmax",
    ", which the exercise asks you to write yourself (torch.softmax and the other torch functions are fine)",
)


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The private _masked_softmax too: every library function that computes a masked softmax (attend,
# scaled_dot_product_attention, the layers) goes through it, so its weights are refused as well.
REFUSALS = {
    "check_masked_softmax": [
        ("lib.attention.masked_softmax", None, _refuse_library),
        ("lib.attention._masked_softmax", None, _refuse_library),
    ]
}
_LIBRARY_PRIVATE_MASKED_SOFTMAX = attention._masked_softmax


def _without_library_masked_softmax(func: Any):
    """While it runs, the reader's function finds lib.attention.masked_softmax and its private twin
    _masked_softmax (through which attend and the layers go), under any name in its module's globals
    or as attributes of lib.attention, replaced by one that raises."""
    return replaced(
        {
            _LIBRARY_MASKED_SOFTMAX: _refuse_library,
            _LIBRARY_PRIVATE_MASKED_SOFTMAX: _refuse_library,
        },
        attention,
        func,
    )


def _check_finite(
    case: str,
    scores: Tensor,
    mask: Tensor,
    result: Tensor,
    has_allowed: Tensor,
    empty_row: str,
    rerun: Callable,
) -> None:
    """Fail if a weight is NaN or inf: a fully masked row, an overflowing exp, or else where.
    ``rerun`` as in :func:`_name_masked_maximum`: right once every masked score is made lower than
    the allowed ones, the function let a large masked score reach its exp (masked after the exp)."""
    bad = ~torch.isfinite(result)
    if bad.any():
        if (~has_allowed).any() and bad[~has_allowed].any():
            fail(
                f"on the case '{case}', {empty_row} is fully masked and your weights there are NaN: with no allowed key, either the sum the row is divided by (of the exps, or of the weights left after masking) is 0, and 0/0 is NaN (a softmax over a row of -inf divides 0 by 0 too); or, if you subtracted the row's maximum over its allowed keys, that maximum is -inf, the score minus it is +inf, and exp(+inf) times the mask's 0 is NaN. A row with nothing to attend to must be all zeros, not NaN."
            )
        if scores.abs().max() >= 1e4:
            allowed = mask.expand(result.shape)
            lower = scores.expand(allowed.shape).masked_fill(~allowed, _below(scores))
            again = rerun(lower)
            if (
                isinstance(again, Tensor)
                and again.shape == allowed.shape
                and torch.allclose(
                    again.double(), _LIBRARY_MASKED_SOFTMAX(lower.double(), mask), atol=1e-5
                )
            ):
                fail(
                    f"with {case} your weights are NaN or inf, but they are right once every masked score is made lower than the allowed ones: a large masked score reached your exp. Its exp overflows to inf (the largest float32 is about 3e38 = e^88), and multiplying by the mask afterwards gives inf*0 = NaN (or, if the maximum you subtract includes the masked scores, every allowed exp underflows to 0, and 0/0 = NaN). Mask before the exp, not after it: the masked scores must be out of the way before anything is computed from the row."
                )
            fail(
                f"with {case} your weights are NaN or inf: the exp of any score above 88 overflows to inf (the largest float32 is about 3e38 = e^88), and inf/inf = NaN. The exp of the raw scores is where it goes wrong: which change to a row of scores leaves its softmax the same but keeps every exp in range?"
            )
        fail(
            f"on the case '{case}', your weights contain NaN or inf at index {bad.nonzero()[0].tolist()}."
        )


def _fill_is_finite(rerun: Callable, scores: Tensor, allowed: Tensor) -> bool:
    """Whether the reader's masked scores still take weight once every allowed score is -1e30: a
    finite fill value such as -1e9 does, -inf (then NaN made uniform) does not. ``rerun`` as in
    :func:`_name_masked_maximum`; True when that cannot be told."""
    again = rerun(scores - 1e30)
    if not (isinstance(again, Tensor) and again.shape == allowed.shape):
        return True
    rows = allowed.any(dim=-1)  # rows with something to attend to
    return bool(again.masked_fill(allowed, 0)[rows].abs().max() > 0.1)


def _check_leak(
    case: str, scores: Tensor, mask: Tensor, result: Tensor, empty_row: str, rerun: Callable
) -> None:
    """Fail if a masked position has a weight: the usual fills of the masked scores, each named.
    ``rerun`` as in :func:`_name_masked_maximum`."""
    shape = result.shape
    allowed = mask.expand(shape)
    has_allowed = allowed.any(dim=-1)  # rows with something to attend to
    leak = result.masked_fill(allowed, 0).abs()
    if leak.max() > 0:
        index = tuple(leak.nonzero()[0].tolist())
        where = f"(row {index[-2]}, key {index[-1]}, counting from 0)"
        low_allowed = scores.expand(shape).masked_fill(~allowed, float("-inf")).amax(-1)
        # allowed scores of the row below -1e3: a fill of 0 and one of -1e9 look alike there
        below_fill = leak.max() > 0.1 and low_allowed[index[:-1]] < -1e3
        if not below_fill and torch.allclose(
            result, torch.softmax(scores.double() * mask, dim=-1), atol=1e-5
        ):
            fail(
                f"on the case '{case}', masked positions get weight {fmt(leak.max().item())}: a masked score set to 0 (by multiplying the scores by the mask, or filling with 0) is still a score: exp(0) = 1 counts like any other. A masked score must contribute exactly nothing to the softmax: which score has exp equal to 0?"
            )
        empty = ~has_allowed
        if empty.any() and leak[~empty].max() == 0:
            row = result[empty][0]
            if not _fill_is_finite(rerun, scores, allowed):
                fail(
                    f"on the case '{case}', {empty_row} is fully masked and your weights there are {fmt(row)}: with nothing to attend to, a row must be all zeros, not spread evenly over keys that are all masked."
                )
            fail(
                f"on the case '{case}', {empty_row} is fully masked and your weights there are {fmt(row)}: filling the masked scores with a large finite number (like -1e9) makes every entry of such a row equal, so the row becomes uniform. A row with nothing to attend to must be all zeros."
            )
        if below_fill:
            fail(
                f"on the case '{case}', masked positions get weight {fmt(leak.max().item())} {where}: the allowed scores of that row are at most {_score(low_allowed[index[:-1]].item())}, below a finite fill value such as {_finite_fill_named(low_allowed[index[:-1]].item())}, so the filled masked score is the largest in the row and takes the weight. A finite fill value only works while every allowed score lies far above it: which fill value lies below every possible score?"
            )
        fail(
            f"on the case '{case}', masked positions get weight {fmt(leak.max().item())} {where}: a masked key must get weight exactly 0, and a finite fill value leaves it a little (exp(-10) is still above 0)."
        )


def _name_masked_maximum(
    case: str, scores: Tensor, allowed: Tensor, index: tuple, rerun: Callable
) -> NoReturn:
    """Fail for a row that may attend but whose weights are all 0 while its largest score is masked:
    a fill value not below the allowed scores, or the maximum of the raw scores subtracted. ``rerun``
    gives the reader's weights for other scores (None if that fails): with every masked score made
    lower than every allowed one, a fixed fill value still starves the row, the raw maximum no
    longer does."""
    row = scores.expand(allowed.shape)[index]
    top = int(row.argmax())
    lowest = row[allowed[index]].min().item()
    highest = row[allowed[index]].max().item()
    start = f"on the case '{case}', row {index[-1]} (counting from 0) of your weights is all 0 although it may attend to keys {allowed[index].nonzero().flatten().tolist()}"
    starves = "makes every allowed exp underflow to 0, and zeroing the masked entries afterwards leaves nothing"
    # weights all 0 even for scores all 0, where no fill value matters: the answer returns zeros, not
    # a fill value's mistake (review s32, m8: a zero tensor was told of its fill value)
    flat = rerun(torch.zeros(allowed.shape, dtype=scores.dtype))
    if isinstance(flat, Tensor) and flat.shape == allowed.shape and not flat.abs().sum() > 0:
        fail(
            f"{start}, and your weights stay all 0 for scores that are all 0, where every allowed key should get an equal share: your function returns 0 where a row may attend. A row with something to attend to must have weights that sum to 1."
        )
    lower = scores.expand(allowed.shape).masked_fill(~allowed, _below(scores))
    again = rerun(lower)
    if isinstance(again, Tensor) and again.shape == allowed.shape:
        total = again[index].double().sum().item()
        if abs(total - 1) < 1e-4:
            fail(
                f"{start}: its largest score, {fmt(row[top].item())} at key {top}, is a masked one. Exponentiating relative to it (subtracting the maximum of the raw scores, masked ones included, before masking) {starves}; and exponentiating before masking lets that masked score's exp overflow to inf, and inf*0 = NaN. The masked scores must be out of the way before anything is computed from the row, the exp included."
            )
        if abs(total) < 1e-4:
            fail(
                f"{start}: its allowed scores go down to {_score(lowest)}, below your fill value for the masked scores (a finite one, such as {_finite_fill_named(highest)}), so the filled masked scores are the largest of the row, and exponentiating relative to them {starves}. Which fill value lies below every possible score, and what must a row with nothing to attend to get then?"
            )
    fail(
        f"{start}: its largest score, {fmt(row[top].item())} at key {top}, is a masked one, and its allowed scores go down to {_score(lowest)}. Exponentiating relative to a masked score, whether the maximum of the raw scores (masked ones included) or a fill value that is not below the allowed scores (such as -1e4), {starves}. The masked scores must be out of the way before anything is computed from the row."
    )


def _check_row_sums(
    case: str, scores: Tensor, mask: Tensor, result: Tensor, rerun: Callable
) -> None:
    """Fail if a row that may attend does not sum to 1: overflow, a masked maximum, masking after the
    softmax, or the wrong dimension. ``rerun`` as in :func:`_name_masked_maximum`."""
    shape = result.shape
    allowed = mask.expand(shape)
    has_allowed = allowed.any(dim=-1)  # rows with something to attend to
    problem = row_sum_problem(result, has_allowed)
    starved = has_allowed & (result.sum(dim=-1) < 1e-4)  # rows that may attend, all weights ~0
    # a starved row whose largest score is allowed: exp overflowed (a masked largest score is
    # another mistake, diagnosed below)
    top_allowed = allowed.gather(-1, scores.expand(shape).argmax(-1, keepdim=True))[..., 0]
    overflowed = starved & top_allowed
    if overflowed.any() and _overflows(scores, allowed, overflowed):
        index = tuple(overflowed.nonzero()[0].tolist())
        fail(
            f"with {case}, row {index[-1]} (counting from 0) of your weights is all 0 although it may attend to keys {allowed[index].nonzero().flatten().tolist()}: the exp of any score above 88 overflows to inf (the largest float32 is about 3e38 = e^88), inf/inf = NaN, and whatever turned the NaN into 0 hid it. The exp of the raw scores is where it goes wrong: which change to a row of scores leaves its softmax the same but keeps every exp in range?"
        )
    if problem and starved.any():
        index = tuple(starved.nonzero()[0].tolist())
        if not allowed[index][int(scores.expand(shape)[index].argmax())]:
            _name_masked_maximum(case, scores, allowed, index, rerun)
    if problem:
        if torch.allclose(result, torch.softmax(scores.double(), dim=-1) * mask, atol=1e-5):
            fail(
                f"on the case '{case}', the masked positions are 0, but {problem}: you set the masked weights to 0 after the softmax, so the allowed ones no longer sum to 1. The masked entries must be removed before the normalisation, not after."
            )
        if torch.allclose(result.sum(dim=-2), torch.ones(()).double(), atol=1e-4):
            fail(
                f"on the case '{case}', {problem}, but your columns sum to 1: normalise over the last dimension (the keys), dim=-1."
            )
        if _log_sum_exp_rounding(scores, allowed, result):
            # course review s39, M2: exp(s - logsumexp(s)) rounds logsumexp at the scores' size
            fail(
                f"on the case '{case}', {problem}: your weights look like exp(s - logsumexp(s)). That never overflows, but in float32 logsumexp(s) of scores this large is rounded to the scores' own precision (float32 keeps about 7 significant digits: at 1e4 a step of about 0.001, at 1e10 one of about 1000), so s - logsumexp(s) is off by that much and the weights no longer sum to 1. Subtract the row's largest allowed score instead: s - max(s) is exact for the scores near the maximum, the ones that carry the weight."
            )
        fail(
            f"on the case '{case}', {problem}: every row that may attend to something must sum to 1 over its allowed keys."
        )


def _log_sum_exp_rounding(scores: Tensor, allowed: Tensor, result: Tensor) -> bool:
    """Whether ``result`` is exp(s - logsumexp(s)) over the allowed scores, computed in float32 (the
    masked ones -inf, fully masked rows 0): right in exact arithmetic, off by the rounding of
    logsumexp at large scores."""
    s = scores.float().expand(allowed.shape).masked_fill(~allowed, float("-inf"))
    candidate = torch.nan_to_num(torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True)))
    return bool(torch.allclose(torch.nan_to_num(result.float()), candidate, atol=1e-6))


def _name_softmax_mistake(
    case: str, scores: Tensor, mask: Tensor, result: Tensor, expected: Tensor, rerun: Callable
) -> NoReturn:
    """Fail with the mistake behind wrong weights: the usual ones, one after the other, else the
    largest difference. ``rerun`` as in :func:`_name_masked_maximum`."""
    allowed = mask.expand(result.shape)
    has_allowed = allowed.any(dim=-1)  # rows with something to attend to
    empty_row = f"row {(~has_allowed).nonzero()[0][-1].item()}" if (~has_allowed).any() else ""
    if torch.allclose(
        torch.nan_to_num(result), _LIBRARY_MASKED_SOFTMAX(scores.double(), ~mask), atol=1e-5
    ):
        fail(
            f"on the case '{case}', your weights are non-zero exactly where the mask is False. In this book a mask is True where a query MAY attend (torch.nn.MultiheadAttention uses the opposite)."
        )
    _check_finite(case, scores, mask, result, has_allowed, empty_row, rerun)
    _check_leak(case, scores, mask, result, empty_row, rerun)
    _check_row_sums(case, scores, mask, result, rerun)
    if (~has_allowed).any() and result[~has_allowed].abs().max() > 0:
        fail(f"on the case '{case}', {empty_row} is fully masked, so its weights must all be 0.")
    fail(f"on the case '{case}', {largest_difference(result, expected)}.")


def _rerun(my_masked_softmax: Any, mask: Tensor) -> Callable:
    """The reader's function on other scores with the same mask, for a diagnosis: its result, or
    None if it raises."""

    def weights(scores: Tensor) -> Any:
        try:
            with _without_library_masked_softmax(my_masked_softmax):
                return call(my_masked_softmax, scores, mask, name="my_masked_softmax", case="probe")
        except Exception:  # noqa: BLE001 (a diagnosis only: the reader's error was reported or is beside the point)
            return None

    return weights


# indexing with the mask (scores[~mask] = ...) needs the mask in the scores' exact shape
_BROADCAST_HINT = "The mask only broadcasts to the scores (a padding mask has one row for all the queries), and indexing with a boolean mask needs its exact shape: use an operation that broadcasts, such as `masked_fill`, or expand the mask first, `mask.expand_as(scores)`."


@checker("my_masked_softmax")
def check_masked_softmax(my_masked_softmax: Any) -> str:
    """Check ``my_masked_softmax(scores, mask)``: softmax over the last dim, masked entries exactly 0,
    rows with no allowed entry all 0 (no NaN), mask bool broadcastable, True = may attend."""
    attempted(my_masked_softmax, "my_masked_softmax")
    if my_masked_softmax is _LIBRARY_MASKED_SOFTMAX:
        fail("that is the library's masked_softmax; the exercise is to write your own.")
    cases = _masked_softmax_cases()
    for case, scores, mask in cases:
        shape = torch.broadcast_shapes(scores.shape, mask.shape)
        expected = _LIBRARY_MASKED_SOFTMAX(scores.double(), mask)
        with _without_library_masked_softmax(my_masked_softmax):
            answer = call(
                my_masked_softmax,
                scores,
                mask,
                name="my_masked_softmax",
                case=f"'{case}'",
                hints={"The shape of the mask": _BROADCAST_HINT},
            )
        result = expect_tensor(
            answer,
            tuple(shape),
            name="my_masked_softmax",
            case=f"'{case}'",
            allow_nan=True,
        )
        if not (
            torch.allclose(result, expected, atol=1e-5) and (result[~mask.expand(shape)] == 0).all()
        ):
            _name_softmax_mistake(
                case, scores, mask, result, expected, _rerun(my_masked_softmax, mask)
            )
    return f"`my_masked_softmax` is right on all {len(cases)} hidden cases (a causal mask, a padding mask that broadcasts, a fully masked row, scores up to 3e4 in size, allowed scores far below zero, down to -2e10). A finite fill such as -1e9 would fail on scores below it: -inf works for any size, and so does the dtype's lowest, torch.finfo(scores.dtype).min, as the fill value; with it a fully masked row comes out uniform, not NaN, and still needs zeroing."
