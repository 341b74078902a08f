"""The exercises of the chapter *Bahdanau and Luong attention*: the checkers accept the chapter's solutions and
reject typical wrong answers with the right feedback (layout and student edition: tests/test_exercises.py; the
chapter's solution asserts the numbers check_luong_looks_left knows)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch

from lib.attention import masked_softmax
from lib.exercises import ExerciseFailed, ch04
from tests.test_exercises import ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "04_bahdanau_and_luong.ipynb"


def test_the_chapter_has_two_checked_exercises_and_three_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == {"check_luong_looks_left", "check_local_m"} == set(ch04.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    assert sum(c.cell_type == "markdown" and "solution" in tags(c) for c in cells) == 3


def test_check_local_m_accepts_the_chapters_solution_in_float32_and_float64():
    exercise = next(e for e in exercises(CHAPTER) if e["checker"] == "check_local_m")
    solution = defined_functions("\n".join(c.source for c in exercise["solutions"]))[
        "local_m_weights"
    ]
    assert ch04.check_local_m(solution).passed
    assert ch04.check_local_m(lambda s, t, D: ch04.local_m_reference(s, t, D).float()).passed


def test_the_reference_is_luongs_formula_on_a_case_worked_by_hand():
    # local-m (Luong et al. 2015, sec. 3.2): the softmax inside the window, no Gaussian
    scores = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    weights = ch04.local_m_reference(scores, 1, 2)  # window [-1, 3] -> positions 0..3
    align = torch.softmax(torch.tensor([0.0, 1.0, 2.0, 3.0], dtype=torch.float64), -1)
    assert torch.allclose(weights, torch.cat([align, torch.zeros(1, dtype=torch.float64)]))
    assert abs(weights.sum().item() - 1) < 1e-12
    # local-p's Gaussian (sigma = D / 2 = 1) is the mistake the checker names
    gauss = torch.exp(-torch.tensor([1.0, 0.0, 1.0, 4.0, 9.0], dtype=torch.float64) / 2)
    assert torch.allclose(ch04.local_m_reference(scores, 1, 2, gaussian=True), weights * gauss)


def _variant(**kwargs):
    return lambda s, t, D: ch04.local_m_reference(s, t, D, **kwargs)


def _unclipped_range(scores, t, D):
    # the window's indices range(t - D, t + D + 1) without clipping at 0: the negative ones wrap
    inside = torch.arange(int(t) - D, int(t) + D + 1)
    weights = torch.zeros_like(scores)
    weights[inside] = torch.softmax(scores[inside], 0)
    return weights


LOCAL_M_WRONG = [
    (
        "softmax over all, then cut",
        _variant(softmax_everywhere=True),
        "softmax over all S positions",
    ),
    (
        "no window",
        _variant(softmax_everywhere=True, zero_outside=False),
        "positions outside the window",
    ),
    ("local-p's Gaussian", _variant(gaussian=True), "That factor belongs to local-p"),
    ("window without its ends", _variant(strict=True), "includes both ends"),
    ("scores times a 0/1 mask", _variant(mask_scores=True), "A score of 0 is not a weight of 0"),
    ("a slice that wraps around", _variant(python_slice=True), "(the slice wraps around)"),
    # review ch04 s25, item 4: the mask the wrong way round, weight outside the window only
    (
        "an inverted window mask",
        lambda s, t, D: masked_softmax(s, (torch.arange(len(s)) - torch.as_tensor(t)).abs() > D),
        "outside the window, not inside it",
    ),
    (
        "one-sided window",
        _variant(window_kind="one-sided"),
        "your window is [t, t + D], one side only",
    ),
    ("window without its right end", _variant(window_kind="half-open"), "leaves out s = t + D"),
    ("window of 2D", _variant(window_kind="twice as wide"), "[t - 2D, t + 2D], twice as wide"),
    # review ch04 s15, item 8: the window without the absolute value, open on one side, and D
    # taken as the full width (on the case D = 2 the same weights as a window without its ends)
    (
        "s - t <= D, no absolute value",
        lambda s, t, D: ch04.local_m_reference(s, t, D, window_kind="no left end").float(),
        "positions left of t - D get weight: your window has no left end",
    ),
    (
        "t - s <= D, no absolute value",
        _variant(window_kind="no right end"),
        "positions right of t + D get weight: your window has no right end",
    ),
    (
        "D as the full width",
        _variant(window_kind="half as wide"),
        "your window is [t - D/2, t + D/2], half as wide",
    ),
    (
        "D as the full width, by hand",
        lambda s, t, D: masked_softmax(
            s, (torch.arange(len(s)) - torch.as_tensor(t)).abs() <= D / 2
        ),
        "your window is [t - D/2, t + D/2], half as wide",
    ),
    (
        "s - t <= D by hand",
        lambda s, t, D: masked_softmax(s, torch.arange(len(s)) - torch.as_tensor(t) <= D),
        "positions left of t - D get weight",
    ),
    (
        "a batch dimension",
        lambda s, t, D: ch04.local_m_reference(s, t, D)[None],
        "returned shape [1, 10]",
    ),
    # review ch04 s4, item 4: the window one position off, and weights without a softmax
    (
        "centred on t + 1",
        lambda s, t, D: ch04.local_m_reference(s, t + 1, D),
        "your window is centred on t + 1, one position to the right: t counts from 0",
    ),
    (
        "centred on t - 1 (counted from 1)",
        lambda s, t, D: ch04.local_m_reference(s, t - 1, D),
        "your window is centred on t - 1, one position to the left: t counts from 0",
    ),
    (
        "the masked scores, no softmax",
        lambda s, t, D: s * ((torch.arange(len(s)) - t).abs() <= D),
        "not 1: these are not softmax weights",
    ),
    (
        "-inf outside, no softmax",
        lambda s, t, D: s.masked_fill((torch.arange(len(s)) - t).abs() > D, float("-inf")),
        "returned -inf at index [0]",  # expect_tensor names the -inf before any sum is taken
    ),
    # review ch04 s22, item 6: scores of 0 outside the window (not -inf), a softmax over all S, then the
    # weights outside cut: softmax weights, over the wrong set, named as such (not "not softmax weights")
    (
        "0 outside, softmax over all S, then cut",
        lambda s, t, D: torch.softmax(s * (w := (torch.arange(len(s)) - t).abs() <= D), -1) * w,
        "took part in the softmax's sum. A score of 0 does not take a position out of a softmax",
    ),
    (
        "the exponentials, not normalised",
        lambda s, t, D: s.exp() * ((torch.arange(len(s)) - t).abs() <= D),
        "not 1: these are not softmax weights",
    ),
    (
        "sums to 1 but wrong",
        lambda s, t, D: torch.full_like(s, 1 / len(s)),
        "the largest difference is",
    ),
    # review ch04 s13, item 2: changing the scores in place is allowed (the checker passes a copy),
    # so a wrong answer that does is told what is wrong with its weights, not that it changed them
    (
        "changes the scores, and no softmax",
        lambda s, t, D: s.sub_(s.max()).exp(),
        "not 1: these are not softmax weights",
    ),
    # review ch04 s21, items 3 and 4: a window all on one side of t, and an unclipped index range
    (
        "the window [t, t + 2D]",
        lambda s, t, D: ch04.local_m_reference(s, t, D, window_kind="right of t").float(),
        "all to the right of t: position t - D gets weight 0",
    ),
    (
        "range(t - D, t + D + 1), not clipped at 0",
        _unclipped_range,
        "positions outside the window get weight, at s = 4, 5",
    ),
    # review ch04 s13, item 14: the two mistakes that only got a numeric message
    (
        "the same weight everywhere in the window",
        lambda s, t, D: ch04.local_m_reference(s, t, D, uniform=True).float(),
        "your weights do not depend on the scores",
    ),
    (
        "local-p's Gaussian, renormalised",
        lambda s, t, D: ch04.local_m_reference(s, t, D, gaussian=True, renormalised=True),
        "multiplied by the Gaussian exp(-(s - t)^2 / (2 sigma^2)) and then divided by the sum",
    ),
]


def _masked_in_place(scores, t, D):
    # review ch04 s13, item 2: the student's natural answer, which fills the scores in place
    outside = (torch.arange(len(scores)) - t).abs() > D
    scores[outside] = float("-inf")
    return scores.softmax(-1)


def test_check_local_m_accepts_an_answer_that_changes_the_scores_in_place():
    assert ch04.check_local_m(_masked_in_place).passed


def test_check_local_m_gives_the_line_of_an_error_in_the_readers_code():
    def broken(scores, t, D):
        raise ValueError("not yet")

    with pytest.raises(ExerciseFailed, match="at line"):
        ch04.check_local_m(broken)


def _clamped_slice(scores, t, D):
    # the slice answer that the old hint suggested: right for a whole t, but a slice cannot take
    # the real p_t of the exercise's next step
    out = torch.zeros_like(scores)
    start = max(t - D, 0)
    out[start : t + D + 1] = torch.softmax(scores[start : t + D + 1], -1)
    return out


def _rounded_then_masked(scores, t, D):
    # no slice, but the centre rounded to a whole number first
    distance = torch.arange(len(scores)) - int(t)
    return torch.softmax(scores.masked_fill(distance.abs() > D, float("-inf")), -1)


def _times_position_factor(factor):
    # local-m's weights, right inside the window, then multiplied by factor(s - t, D) [S]
    def answer(scores, t, D):
        distance = torch.arange(len(scores), dtype=torch.float64) - float(t)
        return (ch04.local_m_reference(scores, t, D) * factor(distance, D)).float()

    return answer


LOCAL_M_WRONG += [
    # review ch04 s7, item 8: a Gaussian of the wrong width, or any factor of the position, after a
    # right softmax is named as an extra factor, not as "take the softmax"
    (
        "a Gaussian with sigma = D",
        _times_position_factor(lambda d, D: torch.exp(-(d**2) / (2 * D**2))),
        "multiplied by a Gaussian exp(-(s - t)^2 / (2 sigma^2)) with sigma = 2 (D = 2)",
    ),
    (
        "a Gaussian with sigma = D: no extra factor",
        _times_position_factor(lambda d, D: torch.exp(-(d**2) / (2 * D**2))),
        "Local-m has no extra factor",
    ),
    (
        "a factor linear in the position",
        _times_position_factor(lambda d, D: 1 + 0.1 * (d + D)),
        "multiplied by a factor that changes with the position s (from 1 to 1.4",
    ),
]

LOCAL_M_WRONG += [
    ("a clamped slice", _clamped_slice, "Here t is a real number, a 0-dim float tensor"),
    ("a clamped slice", _clamped_slice, "t = torch.tensor(4.6)"),
    ("the centre rounded down", _rounded_then_masked, "you centred the window on a whole number"),
    (
        "the centre rounded",
        lambda s, t, D: ch04.local_m_reference(s, round(float(t)), D),
        "you centred the window on a whole number",
    ),
]


@pytest.mark.parametrize("name, wrong, message", LOCAL_M_WRONG, ids=[w[0] for w in LOCAL_M_WRONG])
def test_check_local_m_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch04.check_local_m(wrong)


def test_check_luong_looks_left_accepts_and_says_what_is_missing():
    share = ch04.LUONG_NE_LEFT
    assert ch04.check_luong_looks_left(False, True, share)
    assert ch04.check_luong_looks_left(torch.tensor(False), torch.tensor(True), torch.tensor(share))
    # review ch04 s18, item 9: two right guesses do not pass alone, the computed share is asked for
    guessed = ch04.check_luong_looks_left(False, True)
    assert guessed.status == "not attempted" and "ne_share_left" in guessed.message
    # reader s36b: the headline names the part still to do, not the exercise as if nothing were written
    assert guessed.exercise == "ne_share_left" and "predictions are written" in guessed.message
    assert ch04.check_luong_looks_left(None, True).exercise == "articles_left"
    assert ch04.check_luong_looks_left(None, None).exercise == "Luong looks left"
    assert ch04.check_luong_looks_left(False, None).status == "not attempted"
    assert "articles_left" in ch04.check_luong_looks_left(None, True).message
    # review ch04 s21, item 2: before the share is measured, wrong guesses are not judged either
    unjudged = ch04.check_luong_looks_left(True, False)
    assert unjudged.status == "not attempted" and "right" not in unjudged.message
    assert "right" not in ch04.check_luong_looks_left(None, True).message


_SHARE = (
    0.9382  # a right ne_share_left (93.8%): the predictions are judged only with the measurement
)

LEFT_WRONG = [
    (
        (True, True, _SHARE),
        "articles_left: your prediction is not what the Luong global model does",
    ),
    ((True, False, _SHARE), "'articles after another word' of your table"),
    ((False, False, _SHARE), "ne_left: your prediction is not what the Luong global model does"),
    ((False, False, _SHARE), "Look at your table's row for 'ne'"),
    # review ch04 s15, item 7: both wrong predictions named in one message
    ((True, False, _SHARE), "both predictions are wrong. 1. articles_left: your prediction"),
    ((True, False, _SHARE), "2. ne_left: your prediction is not what"),
    # reader s39: a right measurement beside a wrong prediction is said to be right
    ((True, True, _SHARE), "your ne_share_left is right (keep it); articles_left: your"),
    (("maybe", True), "articles_left should be the bool True or False"),
    (("no", "yes"), "got the string 'no' (a str, not a bool)"),
    ((False, True, 93.8), "ne_share_left = 93.8 looks like a percentage"),
    ((False, True, 0.5), "ne_share_left is not the share the table gives for 'ne'"),
    # review ch04 s22, item 7: the count of the ne one word to the left, not divided
    ((False, True, 243), "ne_share_left = 243 is a whole number above 1: this looks like a count"),
    ((False, True, 0.94), "is close but rounded"),
    # review ch04 s21, item 1: 0.93 is not 0.938 rounded but the Bahdanau model's share
    ((False, True, 0.93), "is the Bahdanau model's share"),
    ((False, True, 0.927), "is the Bahdanau model's share"),
    ((False, True, 0.935), "is not the share the table gives"),
    ((True, True, 0.5), "is not the share the table gives"),
    ((False, True, "x"), "ne_share_left should be a number"),
    ((False, "yes"), "ne_left should be the bool True or False"),
    ((False, 0.9), "ne_left should be True or False"),
]


@pytest.mark.parametrize("args, message", LEFT_WRONG, ids=[m[:30] for _, m in LEFT_WRONG])
def test_check_luong_looks_left_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch04.check_luong_looks_left(*args)


@pytest.mark.parametrize(
    "args",
    [(True, True, _SHARE), (False, False, _SHARE), (True, False, _SHARE), (False, True, 0.5)],
)
def test_a_wrong_prediction_is_not_told_the_measured_numbers(args):
    # the exercise asks the reader to compute the table: a wrong guess must not print it, nor say
    # in words what the model does instead (only which prediction is wrong, and where to look)
    with pytest.raises(ExerciseFailed) as failed:
        ch04.check_luong_looks_left(*args)
    message = str(failed.value)
    for value in (ch04.LUONG_ARTICLES_LEFT, ch04.LUONG_NE_LEFT):
        assert f"{value:.1%}" not in message and f"{100 * value:.0f}" not in message
    for verdict in ("does not keep", "still get", "keeps the habit", "reads the gold word"):
        assert verdict not in message


def test_the_slice_mistake_is_python_slicing():
    # scores[t - D : t + D + 1] with t < D: the start wraps around to the end of the sequence
    scores = torch.arange(6.0)
    wrapped = ch04.local_m_reference(scores, 0, 3, python_slice=True)
    assert wrapped.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]  # [-3:4] is [3:4]
    assert torch.equal(
        ch04.local_m_reference(scores, 4, 1, python_slice=True),
        ch04.local_m_reference(scores, 4, 1),
    )


@pytest.mark.parametrize("args", [(True, True, _SHARE), (False, False, _SHARE)])
def test_a_wrong_prediction_does_not_write_the_explanation(args):
    # the exercise asks the reader to explain the finding: the message points to where to look
    with pytest.raises(ExerciseFailed) as failed:
        ch04.check_luong_looks_left(*args)
    message = str(failed.value)
    assert "attention_records(luong_global, test_pairs)" in message
    assert "bidirectional" not in message and "computed after" not in message


def test_the_luong_shares_are_computed_from_the_shipped_model():
    # the success message's numbers come from lib/checkpoints' luong_global on the chapter's test
    # pairs, not from the library's text: the chapter's table shows 0.0% (articles: le, la, un, une
    # for "the" or "a", not the pronouns for "him" and "her") and 93.8%; the same on
    # every CPU kernel path (ATEN_CPU_CAPABILITY default, avx2, avx512)
    left = ch04.luong_left_shares()
    assert f"{left['articles']:.1%}" == "0.0%" and f"{left['ne']:.1%}" == "93.8%"
    assert ch04.LUONG_NE_LEFT == left["ne"] and ch04.LUONG_ARTICLES_LEFT == left["articles"]
    assert f"{left['articles_gold']:.1%}" == "99.9%"  # the chapter's table, "on the gold word"
    # the pass message backs "reads the gold word" with the share on it (reader s24, item 2)
    passed = ch04.check_luong_looks_left(False, True, left["ne"]).message
    assert "gold word for 99.9% of the articles" in passed and "93.8%" in passed


def test_check_local_m_has_a_real_centre_like_p_t():
    # the exercise's next step replaces t by local-p's p_t, a 0-dim float tensor: the checker tries one
    cases = ch04._cases()
    real = [t for _, _, t, _ in cases if isinstance(t, torch.Tensor)]
    assert len(real) == 1 and real[0].dim() == 0 and real[0].is_floating_point()
    assert abs(real[0].item() - ch04.REAL_CENTRE) < 1e-6 and ch04.REAL_CENTRE % 1 != 0
    # the window [2.6, 6.6] holds the positions 3 to 6, whose weights sum to 1
    scores = torch.zeros(10)
    weights = ch04.local_m_reference(scores, torch.tensor(ch04.REAL_CENTRE), 2)
    assert weights.nonzero().flatten().tolist() == [3, 4, 5, 6]
    assert torch.allclose(weights[3:7], torch.full((4,), 0.25, dtype=torch.float64))


def test_an_extra_factor_is_not_told_to_take_the_softmax():
    # review ch04 s7, item 8: sigma = D instead of local-p's D / 2 took the softmax right; the checker
    # once answered "your weights sum to 0.627 ... take the softmax"
    with pytest.raises(ExerciseFailed) as failed:
        ch04.check_local_m(_times_position_factor(lambda d, D: torch.exp(-(d**2) / (2 * D**2))))
    assert "not softmax weights" not in str(failed.value)
    # a factor that depends on the scores is not a factor of the position: still "not 1"
    with pytest.raises(ExerciseFailed, match="these are not softmax weights"):
        ch04.check_local_m(lambda s, t, D: s * ((torch.arange(len(s)) - t).abs() <= D))


@pytest.mark.parametrize("wrong", [_rounded_then_masked, _clamped_slice])
def test_a_rounded_or_sliced_centre_gets_a_hint_not_the_line(wrong):
    # review ch04 s8, item 8: the message says what is wrong (a whole-number centre, a slice) without
    # handing over the solution's line that builds the window
    with pytest.raises(ExerciseFailed) as failed:
        ch04.check_local_m(wrong)
    assert "torch.arange" not in str(failed.value) and "distance" in str(failed.value)
