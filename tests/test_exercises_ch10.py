"""The exercises of the chapter *Subword tokenization*: the checkers accept the chapter's solutions and reject
typical wrong answers with the right feedback (layout and student edition: tests/test_exercises.py)."""

from __future__ import annotations

import re
from fractions import Fraction

import nbformat
import numpy as np
import pytest

from lib.bpe import apply_bpe, learn_bpe
from lib.exercises import ExerciseFailed, ch10
from tests.test_exercises import ROOT, defined_functions, exercises, tags

CHAPTER = ROOT / "notebooks" / "10_subword_tokenization.ipynb"


def test_the_chapter_has_both_checked_exercises_and_a_model_answer_for_the_third():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == {"check_pair_score", "check_replay"} == set(ch10.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 3 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


def test_check_replay_accepts_the_chapters_solution_and_the_reference():
    solution = exercises(CHAPTER)[1]
    replay = defined_functions("\n".join(c.source for c in solution["solutions"]))["replay"]
    assert ch10.check_replay(replay).passed
    assert ch10.check_replay(ch10.replay_reference).passed
    message = str(ch10.check_replay(ch10.replay_reference))
    # the two hidden cases of 'aaa' are told apart
    assert (
        "'aaa', 'bananas', 'anaconda', 'nab', 'cabbage', 'b' with the 12 merges learned" in message
    )
    assert "'aaa' with the hand-made merge (a, a)" in message


def _calls_apply_bpe(word, merges):
    return apply_bpe(word, merges)


def _no_marker(word, merges):
    symbols = list(word)
    for a, b in merges:
        out, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    return symbols


def test_check_replay_refuses_apply_bpe_and_a_tuple():
    """The exercise asks to reimplement apply_bpe and return a list: both are named, not passed."""
    assert "calls `apply_bpe`" in verdict(_calls_apply_bpe)
    alias = {"segment": apply_bpe}  # called under another name: caught while it runs
    hidden = eval("lambda w, m: segment(w, m)", alias)
    assert "your `replay` calls `apply_bpe`" in verdict(hidden)
    assert "returned a tuple" in verdict(lambda w, m: tuple(ch10.replay_reference(w, m)))
    import lib.bpe  # restored after the check

    assert lib.bpe.apply_bpe is apply_bpe


def verdict(replay):
    try:
        return str(ch10.check_replay(replay))
    except ExerciseFailed as e:
        return e.message


def test_the_hidden_cases_are_ones_where_replay_and_apply_bpe_agree():
    merges = learn_bpe(ch10.HIDDEN_DICTIONARY, 12)
    for word, m, expected in ch10._cases():
        assert ch10.replay_reference(word, m) == expected
    assert any(m == merges for _, m, _ in ch10._cases())


def _forgot_return(word, merges):
    symbols = list(word) + ["</w>"]  # noqa: F841 (the mistake: computed, never returned)


REPLAY_WRONG = [
    (
        "no end-of-word marker",
        _no_marker,
        "no end-of-word marker",
    ),
    ("first occurrence only", ch10._first_only, "only the first occurrence"),
    ("overlaps from the right", ch10._right_to_left, "from the right"),
    (
        "replace in a joined string",
        ch10._joined_replace,
        "Work on the list of symbols, not on a string",
    ),
    (
        "returns a string",
        lambda w, m: " ".join(ch10.replay_reference(w, m)),
        "returned the string",
    ),
    ("drops characters", lambda w, m: ch10.replay_reference(w, m)[:-1], "do not spell the word"),
    (
        "merges in reverse order",
        lambda w, m: ch10.replay_reference(w, m[::-1]),
        "Apply the merges in their order",
    ),
    ("forgot return", _forgot_return, "forget the `return` statement"),
    ("raises", lambda w, m: m[0][5], "raised IndexError"),
]


@pytest.mark.parametrize("name, wrong, message", REPLAY_WRONG, ids=[w[0] for w in REPLAY_WRONG])
def test_check_replay_rejects(name, wrong, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch10.check_replay(wrong)


def test_the_pair_scores_are_the_chapters():
    scores = ch10.pair_scores()
    assert scores[("w", "##i")] == scores[("##i", "##d")] == 1 / 3
    assert (
        abs(scores[("l", "##o")] - 1 / 7) < 1e-12 and abs(scores[("##e", "##s")] - 1 / 17) < 1e-12
    )


def test_check_pair_score_accepts_the_right_answer_in_several_spellings():
    assert ch10.check_pair_score({("w", "##i"), ("##i", "##d")}, 1 / 3)
    assert ch10.check_pair_score([["##i", "##d"], ("w", "##i")], 0.333)
    assert ch10.check_pair_score({("w", "##i"), ("##i", "##d")}, Fraction(1, 3))
    assert ch10.check_pair_score({("w", "##i"), ("##i", "##d")}, np.float64(1 / 3))
    half = ch10.check_pair_score(None, 1 / 3)
    assert half.status == "not attempted" and "top_pairs" in half.message
    assert ch10.check_pair_score(None, None).status == "not attempted"


PAIR_WRONG = [
    (({("##s", "##t")}, None), "largest likelihood gain"),
    (({("##e", "##s")}, None), "Frequency is not what this score measures"),
    (({("l", "##o"), ("w", "##i")}, None), "1 / its count"),
    (({("w", "##i")}, None), "it is a tie"),
    (({("w", "i")}, None), "did you mean ('w', '##i')?"),
    (({("n", "##e")}, None), "below the best score"),
    (("w ##i", None), "should be a set of pairs"),
    ((None, 3), "is c_ab, the count of the pair"),
    ((None, 1 / 7), "The best pairs are rarer"),
    ((None, 0.5), "is not the best score"),
    ((None, "a third"), "top_score should be a number"),
    ((None, Fraction(1, 2)), "is not the best score"),  # a fraction is a number
]


@pytest.mark.parametrize("args, message", PAIR_WRONG, ids=[m[:30] for _, m in PAIR_WRONG])
def test_check_pair_score_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch10.check_pair_score(*args)
