"""Chapter 3's exercise 4 checker against its statement: scores "of any size", so a finite fill value
fails once the allowed scores lie below it (reader s24, chapter 3: a fill of -1e9 passed because the
cases stopped at 3e4)."""

import pytest
import torch

from lib.exercises import ExerciseFailed
from lib.exercises.ch03 import check_masked_softmax


def _verdict(answer) -> str:
    try:
        return str(check_masked_softmax(answer))
    except ExerciseFailed as failure:
        return failure.message


RIGHT = [
    (
        "-inf fill, NaN rows to 0",
        lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(~m, float("-inf")), -1)),
    ),
    (
        "the dtype's lowest, times the mask",
        lambda s, m: torch.softmax(s.masked_fill(~m, torch.finfo(s.dtype).min), -1) * m,
    ),
    (
        "a where on the softmax",
        lambda s, m: torch.where(m, torch.softmax(s.masked_fill(~m, float("-inf")), -1), 0.0),
    ),
]


@pytest.mark.parametrize("name, answer", RIGHT, ids=[r[0] for r in RIGHT])
def test_a_fill_below_every_score_passes(name, answer):
    verdict = str(check_masked_softmax(answer))
    assert "right on all 6 practice cases" in verdict
    assert "-inf works for any size, and so does the dtype's lowest" in verdict
    # a finfo.min fill is praised only with its catch (reader s28, chapter 3, point 6): a fully
    # masked row comes out uniform, not zero, and the zeroing step is still needed
    assert (
        "torch.finfo(scores.dtype).min, as the fill value; with it a fully masked row comes out "
        "uniform, not NaN, and still needs zeroing." in verdict
    )


def test_a_finfo_min_fill_without_zeroing_the_fully_masked_row_fails():
    """The pass message's catch is true: the dtype's lowest as the fill value, no zeroing step, gives
    a fully masked row uniform weights, which the checker names."""
    verdict = _verdict(lambda s, m: torch.softmax(s.masked_fill(~m, torch.finfo(s.dtype).min), -1))
    assert "row 1 is fully masked" in verdict and "not spread evenly" in verdict


FINITE = [
    (
        "-1e9, times the mask",
        lambda s, m: torch.softmax(s.masked_fill(~m, -1e9), -1) * m,
        "below your fill value for the masked scores (a finite one, such as -1e9)",
    ),
    (
        "-1e9, fully masked rows zeroed",
        lambda s, m: torch.softmax(s.masked_fill(~m, -1e9), -1) * m.any(-1, keepdim=True),
        "at most -1e+10, below a finite fill value such as -1e9",
    ),
    (
        "-1e4, times the mask",
        lambda s, m: torch.softmax(s.masked_fill(~m, -1e4), -1) * m,
        "below your fill value for the masked scores (a finite one, such as -1e4)",
    ),
]


@pytest.mark.parametrize("name, answer, message", FINITE, ids=[f[0] for f in FINITE])
def test_a_finite_fill_is_refused_and_named(name, answer, message):
    verdict = _verdict(answer)
    assert message in verdict
    assert "which fill value lies below every possible score" in verdict.lower()


def test_weights_of_zeros_are_not_told_of_a_fill_value():
    """Lecturer review s32, m8: an answer that returned a zero tensor (of a torch.Tensor subclass)
    was told "below your fill value for the masked scores (a finite one, such as -1e4)", although no
    fill value was involved. Zeros are named as zeros."""
    verdict = _verdict(lambda s, m: torch.zeros(torch.broadcast_shapes(s.shape, m.shape)))
    assert "your weights stay all 0 for scores that are all 0" in verdict
    assert "fill value" not in verdict


def test_the_case_beyond_1e9_is_float32():
    """The scores below -1e9 are what a reader's float32 scores can hold, not a double-only case."""
    from lib.exercises.ch03 import _masked_softmax_cases

    case = next(s for name, s, _ in _masked_softmax_cases() if "-1e9" in name)
    assert case.dtype == torch.float32 and case.min().item() == -2e10


def test_both_wrong_predictions_of_exercise_2_are_named_at_once():
    """Reader s34, chapter 3: heaviest_keys = {"k2"} with k2_limit = 1.0 was told only of the missing
    key, so the wrong limit took a second run. Both parts are named in one message, neither answer
    given away."""
    from lib.exercises.ch03 import check_key_strength

    with pytest.raises(ExerciseFailed) as failure:
        check_key_strength({"k2"}, 1.0)
    text = failure.value.message
    assert text.startswith("2 of your answers are not right yet. heaviest_keys: ")
    assert "you left out a key" in text
    assert "k2_limit: the weight of k2 approaches 1 only if" in text
    assert "k1" not in text and "0.5" not in text and "1/2" not in text


def test_exercise_1_and_3_hints_do_not_hand_over_the_fix_or_the_explanation():
    """Reader s35b, chapter 3, points 2 and 3: a missing sqrt(d_k) was told "divide W_a by sqrt(d_k)",
    a sqrt(d) "instead of sqrt(d_k)", and a wrong unit-length answer got the exercise's explanation.
    Each now names the mistake and asks a question."""
    import math

    from lib.attention import GeneralScore
    from lib.exercises.ch03 import check_projected_as_general, check_unit_length

    def general(scale):
        def projected_as_general(W_Q, W_K):
            module = GeneralScore(W_Q.shape[1], W_Q.shape[1])
            with torch.no_grad():
                module.W_a.weight.copy_(W_Q.T @ W_K / scale(*W_Q.shape))
            return module

        return projected_as_general

    for scale, said in (
        (lambda d_k, d: 1.0, "times too large: which part"),
        (lambda d_k, d: math.sqrt(d), "the width of the raw vectors: which vectors"),
    ):
        with pytest.raises(ExerciseFailed) as failure:
            check_projected_as_general(general(scale))
        text = failure.value.message
        assert said in text and "divide W_a by" not in text and "instead of sqrt(d_k)" not in text
    with pytest.raises(ExerciseFailed) as failure:
        check_unit_length({"cosine", "dot"}, {"cosine", "location", "dot"})
    text = failure.value.message
    assert (
        "location does not belong: it reads only the query, W_a q; did the queries change?" in text
    )
    assert "dot does not belong: what does q . k do when" in text
    assert "changed length" not in text and "so its weights change" not in text


def test_exp_minus_logsumexp_is_named_with_the_precision_it_loses():
    """Lecturer review s39, M2: exp(s - logsumexp(s)) never overflows, but at scores of 1e4 float32
    rounds logsumexp to about 0.001, and the row sums to 0.99979; the message said "sums to 1". It now
    prints enough digits and names the rounding; log_softmax, which subtracts the maximum, passes."""

    def with_logsumexp(s, m):
        s = s.masked_fill(~m, float("-inf"))
        return torch.nan_to_num(torch.exp(s - torch.logsumexp(s, -1, keepdim=True)))

    verdict = _verdict(with_logsumexp)
    assert "sums to 0.9998" in verdict and "look like exp(s - logsumexp(s))" in verdict
    assert "Subtract the row's largest allowed score" in verdict
    log_softmax = _verdict(
        lambda s, m: torch.nan_to_num(torch.log_softmax(s.masked_fill(~m, float("-inf")), -1).exp())
    )
    assert "right on all 6 practice cases" in log_softmax
