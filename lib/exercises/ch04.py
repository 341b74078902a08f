"""Checkers for the exercises of the chapter *Bahdanau and Luong attention*.

- :func:`check_luong_looks_left`: exercise 1 (predict, then check): does the Luong global model, like the
  Bahdanau model, put its largest weight one word to the left of the gold word for articles after another
  word, and for *ne*?
- :func:`check_local_m`: exercise 2 (implement): Luong et al. (2015, sec. 3.2) local-m weights, p_t = t:
  a_t(s) = softmax(score(h_t, h̄_s)), the softmax of the scores taken inside the window [t - D, t + D]
  only, 0 outside. No Gaussian: the paper multiplies by exp(-(s - p_t)^2 / (2 sigma^2)) only in local-p, whose
  centre p_t is predicted (``lib.seq2seq.LuongDecoder.local_weights``).

Exercise 3 (length normalisation) is answered in prose; the chapter's solution computes its numbers.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from lib.attention import masked_softmax
from lib.checkpoints import load_seq2seq
from lib.data import build_vocabs, generate_pairs, make_batch, split_pairs
from lib.seq2seq import LuongDecoder

from . import (
    attempted,
    call,
    checker,
    expect_bool,
    expect_number,
    expect_tensor,
    fail,
    fail_as_percentage,
    largest_difference,
    not_attempted,
    passing_everywhere,
)

__all__ = ["check_luong_looks_left", "check_local_m"]


# --- exercise 1: does Luong's decoder look one word to the left? ----------------------------------------

ARTICLE_WORDS = {"le", "la", "un", "une"}
ARTICLE_SOURCES = {"the", "a"}  # an article's gold word; la for "her" and le for "him" are pronouns
# the Bahdanau model's share of the ne one word to the left, the chapter's alignment table (the text: 93%)
BAHDANAU_NE_LEFT = 0.927


@lru_cache(maxsize=1)
def luong_left_shares() -> dict[str, float]:
    """The shipped luong_global model on the chapter's test pairs, as its alignment table computes it: for
    articles after another word and for *ne*, the share of the target words whose largest teacher-forced
    weight is on the source word before the gold one (Bahdanau's: 0.89 and 0.93), and under "articles_gold"
    the articles' share on the gold word itself. An article is a le, la, un or une whose gold word is *the*
    or *a*, as in the chapter's table."""
    pairs = generate_pairs(4000, seed=0)  # the chapter's corpus, split and vocabularies
    train_pairs, _, test_pairs = split_pairs(pairs, seed=0)
    src_vocab, tgt_vocab = build_vocabs(train_pairs)
    decoder = LuongDecoder(len(tgt_vocab), 32, 64, 128, score="concat")
    model, _, _ = load_seq2seq(
        "luong_global", decoder, pairs=pairs, src_vocab=src_vocab, tgt_vocab=tgt_vocab
    )
    left: dict[str, list[bool]] = {"articles": [], "ne": []}
    on_gold = []  # articles after another word: largest weight on the gold word
    for lo in range(0, len(test_pairs), 100):  # the chapter's chunks of 100 sentences
        chunk = test_pairs[lo : lo + 100]
        batch = make_batch(chunk, src_vocab, tgt_vocab)
        with torch.no_grad():
            out = model(batch.src, batch.src_lengths, batch.tgt_in, return_attention=True)
        argmax = out.cross_attentions[0][:, 0].argmax(-1).tolist()  # [B, 1, T, S] -> [B][T]
        for b, pair in enumerate(chunk):
            for t, (word, j) in enumerate(zip(pair.tgt, pair.alignment)):
                article = word in ARTICLE_WORDS and pair.src[j] in ARTICLE_SOURCES
                group = "articles" if article and j > 0 else word
                if group in left:
                    left[group].append(argmax[b][t] == j - 1)
                if group == "articles":
                    on_gold.append(argmax[b][t] == j)
    shares = {group: sum(is_left) / len(is_left) for group, is_left in left.items()}
    return shares | {"articles_gold": sum(on_gold) / len(on_gold)}


def __getattr__(name: str) -> float:
    """LUONG_ARTICLES_LEFT and LUONG_NE_LEFT, computed on first use (``luong_left_shares``)."""
    groups = {"LUONG_ARTICLES_LEFT": "articles", "LUONG_NE_LEFT": "ne"}
    if name in groups:
        return luong_left_shares()[groups[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _prediction(value: Any, what: str) -> bool:
    """A prediction written as the bool True or False; a string such as "no" is refused by name."""
    if isinstance(value, str):
        fail(
            f"{what} should be the bool True or False, got the string {value!r} (a str, not a bool): write True or False without quotes."
        )
    return expect_bool(value, what)


@checker("Luong looks left")
def check_luong_looks_left(articles_left: Any, ne_left: Any, ne_share_left: Any = None) -> str:
    """Check exercise 1: ``articles_left`` and ``ne_left`` (True or False): does the Luong global model put its
    largest weight on the word before the gold one for most articles after another word, and for most *ne*?
    ``ne_share_left``: the share of the *ne* for which it does, computed from the table, so that two right
    guesses do not pass alone (review ch04 s18, item 9)."""
    if articles_left is None and ne_left is None:
        not_attempted(
            "write your two predictions (articles_left and ne_left) in the cell above, then run this cell again."
        )
    # both read first, so that a wrong type is named before anything is judged
    articles = None if articles_left is None else _prediction(articles_left, "articles_left")
    ne = None if ne_left is None else _prediction(ne_left, "ne_left")
    # a part still to write is named in the headline ("ne_share_left: not attempted"), as chapter 8's
    # checker does: "Luong looks left: not attempted" read as if the predictions were ignored (reader s36b)
    if articles is None:
        not_attempted("now predict articles_left as well.", "articles_left")
    if ne is None:
        not_attempted("now predict ne_left as well.", "ne_left")
    if ne_share_left is None:
        # review ch04 s21, item 2: the predictions are judged only once the table is computed, so that
        # the check cannot be run on two guesses to learn the answer before measuring it
        not_attempted(
            "your two predictions are written; now compute the table and set ne_share_left to the share of the 'ne' whose largest weight is on the word before the gold one. The checker judges your predictions only beside that measurement, and it does not keep them: leave the ones you wrote first.",
            "ne_share_left",
        )
    left = luong_left_shares()
    share = expect_number(ne_share_left, "ne_share_left")
    if 1 < share <= 100 and abs(share - 100 * left["ne"]) <= 0.05:
        fail_as_percentage(share, "ne_share_left")
    if share > 1 and share == int(share):
        # review ch04 s22, item 7: the count of the ne on the word before, not yet divided
        fail(
            f"ne_share_left = {share:g} is a whole number above 1: this looks like a count. The share is a fraction of 1: divide the number of 'ne' whose largest weight is on the word before the gold one by the number of all 'ne'."
        )
    if abs(share - BAHDANAU_NE_LEFT) <= 0.0005 or share == round(BAHDANAU_NE_LEFT, 2):
        # review ch04 s21, item 1: the alignment section's 93% (92.7%) is the Bahdanau model's
        fail(
            f"ne_share_left = {share:g} is the Bahdanau model's share, the one the alignment section gives. Compute the table for luong_global, rates_table(attention_records(luong_global, test_pairs)), and read its row for 'ne'."
        )
    decimals = len(f"{share:g}".partition(".")[2])
    if abs(share - left["ne"]) > 0.0005 and share == round(left["ne"], decimals):
        # reader s20: 0.94 (93.8% rounded) got the "count again" message of a wrong count
        fail(
            f"ne_share_left = {share:g} is close but rounded: give the share unrounded (or to at least 3 decimals), as the table's count divided by the number of 'ne' gives it."
        )
    if abs(share - left["ne"]) > 0.0005:
        fail(
            "ne_share_left is not the share the table gives for 'ne'. In rates_table(attention_records(luong_global, test_pairs)), the row for 'ne' gives it: the 'ne' whose largest weight is on the source word just before the gold one, divided by the number of 'ne'."
        )
    wrong = []  # every wrong prediction, named in one message
    if articles:
        wrong.append(
            "articles_left: your prediction is not what the Luong global model does. Compare the row 'articles after another word' of your table, rates_table(attention_records(luong_global, test_pairs)), with Bahdanau's; then explain what you find from what each decoder's query has read when it writes an article."
        )
    if not ne:
        wrong.append(
            "ne_left: your prediction is not what the Luong global model does. Look at your table's row for 'ne' (rates_table(attention_records(luong_global, test_pairs))); to explain it, reread that section's paragraph on what an annotation holds."
        )
    # reader s39: a wrong prediction beside a right measurement read as a failed measurement
    measured = "your ne_share_left is right (keep it); "
    if len(wrong) == 2:
        fail(measured + "both predictions are wrong. 1. " + wrong[0] + " 2. " + wrong[1])
    if wrong:
        fail(measured + wrong[0])
    return f"both predictions are right: Luong's global model reads the gold word for {left['articles_gold']:.1%} of the articles after another word ({left['articles']:.1%} one to the left), but still reads the word before 'not' for {left['ne']:.1%} of the 'ne'."


# --- exercise 2: local-m ----------------------------------------------------------------------------------


def local_m_reference(
    scores: Tensor,
    t: float | Tensor,
    D: int,
    *,
    strict: bool = False,
    softmax_everywhere: bool = False,
    gaussian: bool = False,
    zero_outside: bool = True,
    window_kind: str = "both ends",
    mask_scores: bool = False,
    python_slice: bool = False,
    rounded: str | None = None,
    shift: int = 0,
    uniform: bool = False,
    renormalised: bool = False,
) -> Tensor:
    """Local-m weights of one step, scores [S] -> [S] (the answer, and with the keywords, the usual mistakes:
    ``gaussian`` multiplies by local-p's exp(-(s - t)^2 / (2 sigma^2)), sigma = D / 2; ``window_kind``
    "one-sided" is [t, t + D], "twice as wide" [t - 2D, t + 2D], "half-open" [t - D, t + D), "no left
    end" s - t <= D and "no right end" t - s <= D (no absolute value), "half as wide" |s - t| <= D / 2;
    ``mask_scores`` multiplies the scores by the 0/1 window and takes the softmax over all positions;
    ``python_slice`` softmaxes ``scores[t - D : t + D + 1]``, whose negative start wraps around; ``rounded``
    "nearest" or "down" centres the window on round(t) or int(t) instead of the real t; ``shift`` -1 or 1
    centres it on t - 1 or t + 1, a position counted from 1 or one too far; ``uniform`` gives every position
    of the window the same weight, whatever the scores; ``renormalised`` divides the weights by their sum,
    with ``gaussian`` local-p's Gaussian renormalised). ``t`` may be real, like local-p's p_t."""
    scores = scores.double()
    roundings = {None: float, "nearest": round, "down": int}
    if rounded not in roundings:
        raise ValueError(f"rounded: expected one of {tuple(roundings)}, got {rounded!r}")
    t = roundings[rounded](float(t)) + shift
    if python_slice:
        window_slice = slice(int(t) - D, int(t) + D + 1)
        out = torch.zeros_like(scores)
        inside = scores[window_slice]
        if len(inside):
            out[window_slice] = torch.softmax(inside, -1)
        return out
    positions = torch.arange(len(scores), dtype=torch.float64)
    distance = positions - t
    if strict:
        window_kind = "strict"
    windows = {
        "both ends": distance.abs() <= D,
        "strict": distance.abs() < D,
        "one-sided": (distance >= 0) & (distance <= D),
        "twice as wide": distance.abs() <= 2 * D,
        "half-open": (distance >= -D) & (distance < D),
        "no left end": distance <= D,
        "no right end": distance >= -D,
        "half as wide": distance.abs() <= D / 2,
        "right of t": (distance >= 0) & (distance <= 2 * D),
        "left of t": (distance <= 0) & (distance >= -2 * D),
    }
    if window_kind not in windows:
        raise ValueError(f"window_kind: expected one of {tuple(windows)}, got {window_kind!r}")
    window = windows[window_kind]
    if mask_scores:
        return torch.softmax(scores * window, -1)
    if uniform:
        return window.double() / window.sum()
    weights = torch.softmax(scores, -1) if softmax_everywhere else masked_softmax(scores, window)
    if zero_outside:
        weights = weights * window
    sigma = D / 2
    if gaussian:
        weights = weights * torch.exp(-(distance**2) / (2 * sigma**2))
    return weights / weights.sum() if renormalised else weights


# the real centre of the last case: the exercise's next step passes local-p's p_t, a 0-dim float tensor
REAL_CENTRE = 4.6


# The seed of the implement exercise's cases: a practice value here; a course's grader sets its own
# (grading/ch04.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"local_m_weights": 4}
PRACTICE_SEED = 4
# On drawn scores, a window centred on round(t) or int(t) passed where the position it adds has a
# weight below 1e-5 (1 seed in 30: course-kit review s33, S1); a course's cases also hold these scores.
RISING = torch.linspace(-1.0, 1.0, 10)


def _cases() -> list[tuple[str, Tensor, int | Tensor, int]]:
    g = torch.Generator().manual_seed(SEEDS["local_m_weights"])
    cases = []
    for S, t, D in [(10, 4, 2), (6, 0, 3), (8, 9, 3), (15, 7, 7), (12, 5, 4)]:
        cases.append((f"S = {S}, t = {t}, D = {D}", 3 * torch.randn(S, generator=g), t, D))
    real_t = torch.tensor(REAL_CENTRE)
    name = f"S = 10, t = torch.tensor({REAL_CENTRE}) (real, like p_t), D = 2"
    cases.append((name, 3 * torch.randn(10, generator=g), real_t, 2))
    if SEEDS["local_m_weights"] != PRACTICE_SEED:  # drawn scores can hide a rounded centre
        cases.append(
            (f"S = 10, t = torch.tensor({REAL_CENTRE}), D = 2, scores rising", RISING, real_t, 2)
        )
    return cases


# what to do when a slice meets a real centre (the exercise's next step replaces t by p_t)
_REAL_CENTRE_ADVICE = (
    "Here t is a real number, a 0-dim float tensor like the p_t that the exercise's next step passes: a "
    "slice needs whole numbers, and rounding t would move the window. Build the window from each position's "
    "distance to t instead of from a slice."
)
_HINTS = {
    "only integer tensors": _REAL_CENTRE_ADVICE,
    "slice indices must be integers": _REAL_CENTRE_ADVICE,
}


_MISTAKES = [
    (
        dict(softmax_everywhere=True),
        "you took the softmax over all S positions and then cut the window. The softmax must be taken inside the window only, so that the weights a_t(s) sum to 1 there.",
    ),
    (
        dict(softmax_everywhere=True, zero_outside=False),
        "positions outside the window [t - D, t + D] get weight: the softmax covers the window only, weight 0 elsewhere.",
    ),
    (
        dict(gaussian=True),
        "you multiplied by the Gaussian exp(-(s - t)^2 / (2 sigma^2)). That factor belongs to local-p, whose centre p_t is predicted; local-m's weights are the softmax inside the window alone, a_t(s) = softmax(score(h_t, h̄_s)) over s in [t - D, t + D].",
    ),
    (
        dict(gaussian=True, renormalised=True),
        "you multiplied by the Gaussian exp(-(s - t)^2 / (2 sigma^2)) and then divided by the sum so that the weights sum to 1. That factor belongs to local-p, whose centre p_t is predicted; local-m's weights are the softmax inside the window alone, a_t(s) = softmax(score(h_t, h̄_s)) over s in [t - D, t + D], with no Gaussian and nothing to renormalise.",
    ),
    (
        dict(uniform=True),
        "your weights do not depend on the scores: every position inside the window gets the same weight. The window says which positions may get weight; inside it, the weights are the softmax of the scores, a_t(s) = softmax(score(h_t, h̄_s)) over s in [t - D, t + D].",
    ),
    (
        dict(strict=True),
        "your window leaves out s = t - D and s = t + D: the window [t - D, t + D] includes both ends.",
    ),
    (
        dict(mask_scores=True),
        "you multiplied the scores by a 0/1 window mask and took the softmax over all S positions. A score of 0 is not a weight of 0: every position outside the window keeps the weight exp(0) / sum, and the softmax is not taken inside the window alone. Give the positions outside the window a score of -inf (masked_softmax does) or their weight 0 after a softmax over the window only.",
    ),
    *(
        (
            dict(rounded=rounded),
            "you centred the window on a whole number, not on t itself. t can be real, like the p_t of the exercise's next step, and rounding it moves the window: decide which positions are inside from their distance to t itself.",
        )
        for rounded in ("nearest", "down")
    ),
    (
        dict(python_slice=True),
        "for t < D your slice scores[t - D : t + D + 1] starts at a negative index, which Python reads from the end of the sequence (the slice wraps around): instead of stopping at position 0, your window takes its start from the sequence's end or comes out empty. Build the window from the distances s - t instead (a slice also fails on a real t, such as the p_t of the exercise's next step).",
    ),
    (
        dict(window_kind="one-sided"),
        "your window is [t, t + D], one side only: local-m's window reaches D positions on each side of t, [t - D, t + D].",
    ),
    # review ch04 s21, item 3: a window of the right width, all on one side of t
    (
        dict(window_kind="right of t"),
        "your window is [t, t + 2D], all to the right of t: position t - D gets weight 0. Local-m's window is centred on t; it reaches D positions to the left of t as well, [t - D, t + D].",
    ),
    (
        dict(window_kind="left of t"),
        "your window is [t - 2D, t], all to the left of t: position t + D gets weight 0. Local-m's window is centred on t; it reaches D positions to the right of t as well, [t - D, t + D].",
    ),
    (
        dict(window_kind="half-open"),
        "your window leaves out s = t + D (a slice scores[t - D : t + D] stops before its end): the window [t - D, t + D] includes both ends.",
    ),
    (
        dict(shift=-1),
        "your window is centred on t - 1, one position to the left: t counts from 0, like the positions s = 0, 1, ..., S - 1, so the window is [t - D, t + D] with no 1 subtracted.",
    ),
    (
        dict(shift=1),
        "your window is centred on t + 1, one position to the right: t counts from 0, like the positions s = 0, 1, ..., S - 1, so the window is [t - D, t + D] with no 1 added.",
    ),
    (
        dict(window_kind="no left end"),
        "positions left of t - D get weight: your window has no left end (s - t <= D, without the absolute value). Local-m's window reaches D positions on each side of t: |s - t| <= D, that is [t - D, t + D].",
    ),
    (
        dict(window_kind="no right end"),
        "positions right of t + D get weight: your window has no right end (t - s <= D, without the absolute value). Local-m's window reaches D positions on each side of t: |s - t| <= D, that is [t - D, t + D].",
    ),
    (
        dict(window_kind="half as wide"),
        "your window is [t - D/2, t + D/2], half as wide: D is the half-width, the number of positions on each side of t, so the window is [t - D, t + D], 2D + 1 positions at most.",
    ),
    (
        dict(window_kind="twice as wide"),
        "your window is [t - 2D, t + 2D], twice as wide: D is the half-width, so the window is [t - D, t + D], 2D + 1 positions at most.",
    ),
]


# how far from 1 the weights may sum (float32 arithmetic over at most 15 positions) before they are not a softmax
_SUM_TOLERANCE = 1e-4


def _check_sums_to_one(result: Tensor, expected: Tensor, case: str) -> None:
    """Fail, naming the mistake, when the weights ``result`` do not sum to 1: the positions outside the
    window counted in the softmax's sum (the weights inside are in local-m's ``expected`` proportions, review
    ch04 s22, item 6: scores of 0 outside instead of -inf), or no softmax was taken."""
    total = result.double().sum().item()
    if total != total or abs(total - 1) <= _SUM_TOLERANCE:  # total != total: NaN
        return
    inside = expected > 0
    ratio = result.double()[inside] / expected[inside]
    if total < 1 and (result.double()[~inside] == 0).all() and ratio.min() > 0:
        if ratio.max() / ratio.min() - 1 <= _FACTOR_SPREAD:
            fail(
                f"on the case '{case}', your weights inside the window are in the right proportions but sum "
                f"to {total:.4g}, not 1: the positions outside the window took part in the softmax's sum. "
                "A score of 0 does not take a position out of a softmax (it adds exp(0) = 1 to the sum); "
                "the positions outside the window must not count in the normalisation at all."
            )
    fail(
        f"on the case '{case}', your weights sum to {total:.4g}, not 1: these are not softmax weights. "
        "Take the softmax of the scores over the positions inside the window only, so that the weights "
        "a_t(s) sum to 1 there."
    )


def _check_inverted(result: Tensor, t: int | Tensor, D: int, case: str) -> None:
    """Fail, naming the mistake, when every weight lies outside the window and none inside it: a mask
    turned the wrong way round, e.g. masked_fill(|s - t| <= D, -inf) (review ch04 s25, item 4)."""
    distance = (torch.arange(len(result), dtype=torch.float64) - float(t)).abs()
    weighted = result.double().abs() > _FACTOR_FLOOR
    if weighted.any() and not (weighted & (distance <= D)).any():
        fail(
            f"on the case '{case}', your weights are outside the window, not inside it: is the mask the "
            "wrong way round? The positions with |s - t| <= D are the ones that get weight, the others 0."
        )


def _check_wrapped(result: Tensor, t: int | Tensor, D: int, case: str) -> None:
    """Fail, naming the mistake, when the only weight outside the window lies at the end of the sequence
    where the negative indices t - D, ..., -1 of an unclipped range(t - D, t + D + 1) wrap to (review ch04
    s21, item 4: such an answer took a softmax, and was told it had not)."""
    start = float(t) - D
    if start >= 0:
        return
    positions = torch.arange(len(result), dtype=torch.float64)
    outside = ((positions - float(t)).abs() > D) & (result.double().abs() > _FACTOR_FLOOR)
    wrapped = positions >= len(result) + start
    if outside.any() and not (outside & ~wrapped).any():
        where = ", ".join(str(s) for s in outside.nonzero().flatten().tolist())
        fail(
            f"on the case '{case}', positions outside the window get weight, at s = {where}, at the end of "
            f"the sequence: the window starts at t - D = {start:g}, and a negative index counts from the end "
            "in Python (scores[-1] is the last score), so it wraps around. Positions below 0 do not exist: "
            "the window stops at s = 0. Build it from each position's distance to t rather than from indices."
        )


# an extra factor per position: where local-m's weight is at least this, the ratio of the reader's weight to
# it is measured (smaller weights are too close to 0 for a float32 ratio), and the ratio must change by
# more than _FACTOR_SPREAD across the window, the same for two different sets of scores
_FACTOR_FLOOR = 1e-6
_FACTOR_SPREAD = 1e-3
# how far log(ratio) may stray from a - (s - t)^2 / (2 sigma^2) for the factor to be called a Gaussian
_GAUSSIAN_FIT = 1e-3


def _position_factor(
    local_m_weights: Any, scores: Tensor, t: int | Tensor, D: int, result: Tensor, case: str
) -> tuple[Tensor, Tensor] | None:
    """(s - t, factor) at the positions where local-m's weights are measurable, when ``result`` is local-m's
    weights times a factor of the position: 0 wherever local-m's weights are 0, a positive factor that is not
    constant inside the window and stays the same for other scores (a function of the position alone, not
    of the scores). None otherwise."""
    expected = local_m_reference(scores, t, D)
    measured = expected >= _FACTOR_FLOOR
    if measured.sum() < 2 or (result.double()[expected == 0].abs() > _FACTOR_FLOOR).any():
        return None
    ratio = result.double()[measured] / expected[measured]
    if (ratio <= 0).any() or ratio.max() / ratio.min() - 1 <= _FACTOR_SPREAD:
        return None
    others = scores.flip(0)  # the same values at other positions
    again = call(local_m_weights, others, t, D, name="local_m_weights", case=case, hints=_HINTS)
    again = expect_tensor(again, (len(scores),), name="local_m_weights", case=case)
    expected_again = local_m_reference(others, t, D)
    if not torch.equal(expected_again >= _FACTOR_FLOOR, measured):
        return None
    ratio_again = again.double()[measured] / expected_again[measured]
    if not torch.allclose(ratio, ratio_again, rtol=_FACTOR_SPREAD):
        return None
    return (torch.arange(len(scores), dtype=torch.float64) - float(t))[measured], ratio


def _gaussian_sigma(distance: Tensor, ratio: Tensor) -> float | None:
    """The sigma of a factor c exp(-(s - t)^2 / (2 sigma^2)) that ``ratio`` follows over ``distance`` s - t
    (a least-squares fit of log ratio against (s - t)^2), or None when it is no such Gaussian."""
    if len(set(distance.abs().tolist())) < 2:
        return None
    x = torch.stack([torch.ones_like(distance), distance**2], -1)  # [n, 2]
    y = ratio.log()[:, None]  # [n, 1]
    a, b = torch.linalg.lstsq(x, y).solution.flatten().tolist()
    if b >= 0 or (x @ torch.tensor([[a], [b]], dtype=x.dtype) - y).abs().max() > _GAUSSIAN_FIT:
        return None
    return (-1 / (2 * b)) ** 0.5


def _check_extra_factor(
    local_m_weights: Any, scores: Tensor, t: int | Tensor, D: int, result: Tensor, case: str
) -> None:
    """Fail, naming it, when ``result`` is local-m's weights times a factor that depends on the position
    alone (a Gaussian of another sigma than local-p's, or any other); return when it is not."""
    found = _position_factor(local_m_weights, scores, t, D, result, f"'{case}'")
    times_a_factor_of_s = found is not None
    if times_a_factor_of_s:
        distance, ratio = found
        sigma = _gaussian_sigma(distance, ratio)
        what = (
            f"a Gaussian exp(-(s - t)^2 / (2 sigma^2)) with sigma = {sigma:.3g} (D = {D})"
            if sigma is not None
            else f"a factor that changes with the position s (from {ratio.min():.3g} to {ratio.max():.3g} inside the window)"
        )
        fail(
            f"on the case '{case}', your weights are local-m's multiplied by {what}: you took the softmax "
            "inside the window and then multiplied it by something. Local-m has no extra factor (no Gaussian: "
            "that belongs to local-p, whose centre p_t is predicted); its weights are the softmax inside the "
            "window alone, a_t(s) = softmax(score(h_t, h̄_s)) over s in [t - D, t + D]."
        )


class _OnACopy:
    """The reader's ``local_m_weights``, given a copy of the scores: the exercise does not ask it to leave
    ``scores`` as they were (the chapter's loop never uses a step's scores again), so an answer that fills
    the positions outside the window in place, ``scores[outside] = float("-inf")``, is right. ``forward``
    holds the reader's function, where feedback finds the line of an error (``_where``)."""

    def __init__(self, local_m_weights: Any) -> None:
        self.forward = local_m_weights

    def __call__(self, scores: Tensor, t: int | Tensor, D: int) -> Any:
        return self.forward(scores.clone(), t, D)


def _same_on_all(local_m_weights: Any, cases: list, kwargs: dict) -> bool:
    """Whether the reader's weights are the mistake ``kwargs``'s on every case it runs on: on the case
    D = 2 a window |s - t| <= D / 2 and one without its ends, |s - t| < D, give the same weights."""
    for case, scores, t, D in cases:
        try:
            result = call(local_m_weights, scores, t, D, name="local_m_weights", case=f"'{case}'")
            result = expect_tensor(result, (len(scores),), name="local_m_weights", case=case)
        except Exception:  # a case the function fails on (a slice on a real t) tells nothing
            continue
        if not torch.allclose(result, local_m_reference(scores, t, D, **kwargs), atol=1e-5):
            return False
    return True


def _mistakes_passing_local_m() -> list[str]:
    """The known mistakes (``_MISTAKES``) whose weights are right on every case."""
    cases = _cases()

    def right(kwargs: dict) -> bool:
        return all(
            torch.allclose(
                local_m_reference(s, t, D, **kwargs), local_m_reference(s, t, D), atol=1e-5
            )
            for _, s, t, D in cases
        )

    return passing_everywhere(_MISTAKES, right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"local_m_weights": _mistakes_passing_local_m}


@checker("local_m_weights")
def check_local_m(local_m_weights: Any) -> str:
    """Check ``local_m_weights(scores [S], t, D) -> [S]``: the softmax of the scores inside [t - D, t + D], 0
    outside (no Gaussian: that is local-p's). It may change ``scores`` in place: it is given a copy."""
    attempted(local_m_weights, "local_m_weights")
    local_m_weights = _OnACopy(local_m_weights)
    cases = _cases()
    for case, scores, t, D in cases:
        result = call(
            local_m_weights, scores, t, D, name="local_m_weights", case=f"'{case}'", hints=_HINTS
        )
        result = expect_tensor(result, (len(scores),), name="local_m_weights", case=f"'{case}'")
        expected = local_m_reference(scores, t, D)
        if torch.allclose(result, expected, atol=1e-5):
            continue
        named = [
            (kwargs, message)
            for kwargs, message in _MISTAKES
            if torch.allclose(result, local_m_reference(scores, t, D, **kwargs), atol=1e-5)
        ]
        if len(named) > 1:  # two mistakes give these weights on this case: the one true on all
            named = [m for m in named if _same_on_all(local_m_weights, cases, m[0])] or named
        if named:
            fail(f"on the case '{case}', {named[0][1]}")
        _check_inverted(result, t, D, case)
        _check_extra_factor(local_m_weights, scores, t, D, result, case)
        _check_wrapped(result, t, D, case)
        _check_sums_to_one(result, expected, case)
        fail(f"on the case '{case}', {largest_difference(result, expected)}.")
    return f"`local_m_weights` gives Luong's local-m weights on all {len(cases)} hidden cases ({'; '.join(c for c, *_ in cases)})."
