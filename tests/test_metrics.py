"""Tests of lib/metrics.py: BLEU against hand-computed values and its definition's edge cases."""

import math

import pytest

from lib.metrics import corpus_bleu

REF = "le chat noir dort".split()


def test_identical_is_100_and_disjoint_is_0():
    assert corpus_bleu([REF], [REF]) == 100.0
    assert corpus_bleu([["un", "chien"] * 3], [REF]) == 0.0


def test_hand_computed_value_with_brevity_penalty():
    # "le chat dort": unigram precision 3/3, bigram precision 1/2 (only "le chat"); c = 3 < r = 4
    expected = 100 * math.sqrt(1 * 1 / 2) * math.exp(1 - 4 / 3)
    assert corpus_bleu(["le chat dort".split()], [REF], max_n=2) == pytest.approx(
        expected, rel=1e-12
    )


def test_counts_are_clipped_and_pooled_over_the_corpus():
    # "le le le le" against REF: unigram matches are clipped to 1 (REF has one "le"), precision 1/4
    assert corpus_bleu([["le"] * 4], [REF], max_n=1) == pytest.approx(25.0)
    # pooled, not averaged per sentence: 4/4 and 1/4 unigram matches give 5/8, not (1 + 1/4) / 2
    assert corpus_bleu([REF, ["le"] * 4], [REF, REF], max_n=1) == pytest.approx(100 * 5 / 8)


def test_longer_hypotheses_get_no_bonus():
    longer = REF + ["aussi"]
    # BP = 1, precision 4/5
    assert corpus_bleu([longer], [REF], max_n=1) == pytest.approx(100 * 4 / 5)


def test_bad_input():
    with pytest.raises(
        ValueError,
        match="hypotheses and references: expected as many of each, got 1 hypotheses and 2",
    ):
        corpus_bleu([REF], [REF, REF])
    with pytest.raises(ValueError, match="hypotheses: expected at least one sentence"):
        corpus_bleu([], [])
    with pytest.raises(ValueError, match="max_n: expected an int >= 1, got 0"):
        corpus_bleu([REF], [REF], max_n=0)
    with pytest.raises(
        TypeError,
        match=r"hypotheses\[0\]: expected a list of tokens, got the string",
    ):
        corpus_bleu(["le chat noir dort"], [REF])
