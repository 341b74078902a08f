"""The instructor notes count a refused call in the refusal's row (lecturer review r3, problem 12):
chapter 17's refusal of apply_rope, whose message also fits the checker's generic "on the case ..."
row, is "the answer calls what the exercise forbids"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import instructor_notes as notes  # noqa: E402

import lib.exercises.ch17 as ch17  # noqa: E402


@pytest.mark.parametrize(
    "checker, library, then",
    [
        ("check_rope_halves", "apply_rope", "; write the rotation yourself, then compare"),
        ("check_ffn_sublayer", "RMSNorm", ", which the exercise asks you to write yourself"),
    ],
)
def test_a_refusal_is_counted_in_its_own_row(checker, library, then):
    known = notes.mistakes(ch17, checker)
    message = (
        f"✗ {checker[6:]}: not yet right. On the case 'a', {checker[6:]} raised RuntimeError: "
        f"it called the library's {library}{then}."
    )
    found = notes.matching(message, known)
    assert found.kind == "refusal" and library in found.pattern.pattern


def test_other_messages_keep_the_checkers_order():
    known = notes.mistakes(ch17, "check_rope_halves")
    message = "on the case 'a', you returned x unchanged: each pair must turn by m w_i."
    assert notes.matching(message, known).kind == "fail"


def test_the_teachers_page_says_one_mistake_per_answer():
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "only the first mistake a checker finds in an answer is counted" in page


def test_a_classic_mistake_is_counted_in_its_row_not_the_catch_all():
    """Lecturer review r4, problem 2: chapter 3's "softmax, then zero the masked weights" (row 13) and
    "every row ... must sum to 1" (row 15) went to the generic row 4 ("on the case ..., <largest
    difference>."), which fits every message that starts the same way: the most specific row wins."""
    import lib.exercises.ch03 as ch03

    known = notes.mistakes(ch03, "check_masked_softmax")
    generic = next(m for m in known if m.message.startswith("on the case '‹case›', ‹largest_diff"))
    said = (
        "on the case 'causal 4x4', the masked positions are 0, but row 1 (counting from 0) sums to "
        "0.731: you set the masked weights to 0 after the softmax, so the allowed ones no longer sum "
        "to 1. The masked entries must be removed before the normalisation, not after."
    )
    assert generic.pattern.search(said)  # the catch-all fits it too
    assert "after the softmax" in notes.matching(said, known).message
    said = (
        "on the case 'padding', row 0 of batch element 0 sums to 0: every row that may attend to "
        "something must sum to 1 over its allowed keys."
    )
    assert "every row that may attend" in notes.matching(said, known).message
    said = "on the case 'padding', the largest difference is 0.5 at index [0, 1, 2]."
    assert notes.matching(said, known) is generic


def _feedback(check, answer) -> str:
    """The message the checker gives ``answer`` (a wrong answer: it must not pass)."""
    from lib.exercises import ExerciseFailed

    with pytest.raises(ExerciseFailed) as failed:
        check(answer)
    return failed.value.message


@pytest.mark.parametrize(
    "checker, answer, row",
    [
        (
            "check_rope_halves",
            lambda x, positions, theta: ch17.rope_reference(
                x, positions, theta, mistake="interleaved"
            ),
            "you paired neighbouring coordinates (2i, 2i + 1)",
        ),
        (
            "check_ffn_sublayer",
            lambda *args: ch17.ffn_reference(*args, mistake="swapped"),
            "the gate and the value are swapped",
        ),
    ],
)
def test_a_table_of_mistakes_is_one_row_each(checker, answer, row):
    """Lecturer review s17, M3: bob's interleaved pairs (exercise 1) and his gate and value swapped
    (exercise 3) were counted under "any other wrong answer", since the checkers' tables of usual
    mistakes (``_ROPE_MISTAKES``, ``_FFN_MISTAKES``) were one row "on the case ‹case›, ‹message›"
    that named none of them. Each is a row of its own, with its message, and counted there."""
    known = notes.mistakes(ch17, checker)
    assert not any("‹message›" in m.message for m in known)
    said = _feedback(getattr(ch17, checker), answer)
    found = notes.matching(said, known)
    assert found is not None and row in found.message, (said, found)
    assert sum(row in m.message for m in known) == 1


def test_every_mistake_of_chapter_17s_tables_has_its_row():
    rope = [m.message for m in notes.mistakes(ch17, "check_rope_halves")]
    for _, message in ch17._ROPE_MISTAKES:
        assert any(message in m for m in rope), message
    ffn = [m.message for m in notes.mistakes(ch17, "check_ffn_sublayer")]
    for _, message in ch17._FFN_MISTAKES:
        assert any(message in m for m in ffn), message
