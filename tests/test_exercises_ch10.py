"""The exercises of the chapter *Subword tokenization*: the checkers accept the chapter's solutions and reject
typical wrong answers with the right feedback (layout and student edition: tests/test_exercises.py)."""

from __future__ import annotations

import re

import nbformat
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
    # a tuple of symbols is fine too
    assert ch10.check_replay(lambda w, m: tuple(apply_bpe(w, m))).passed


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
        lambda w, m: apply_bpe(w, m, end_of_word=None),
        "no end-of-word marker",
    ),
    ("first occurrence only", ch10._first_only, "only the first occurrence"),
    ("overlaps from the right", ch10._right_to_left, "from the right"),
    (
        "replace in a joined string",
        ch10._joined_replace,
        "Work on the list of symbols, not on a string",
    ),
    ("returns a string", lambda w, m: " ".join(apply_bpe(w, m)), "returned the string"),
    ("drops characters", lambda w, m: apply_bpe(w, m)[:-1], "do not spell the word"),
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
]


@pytest.mark.parametrize("args, message", PAIR_WRONG, ids=[m[:30] for _, m in PAIR_WRONG])
def test_check_pair_score_rejects(args, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch10.check_pair_score(*args)
