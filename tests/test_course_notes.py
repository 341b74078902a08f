"""The instructor notes count a refused call in the refusal's row (lecturer review r3, problem 12):
chapter 17's refusal of apply_rope, whose message also fits the checker's generic "on the case ..."
row, is "the answer calls what the exercise forbids"."""

from __future__ import annotations

import re
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


def test_a_graded_course_counts_each_submission_once_in_its_own_row(tmp_path):
    """Lecturer review s21, M6: chapter 16 ex1's hint rows were "‹labels_hint›", a template that is
    one placeholder and fits every message: carol's os._exit (a sandbox stop) was shown in three
    rows; chapter 17 ex1's "your frequencies are theta^(-i/Dh)" belongs in its own row; what a
    collected prediction's verdict adds (its other parts) is not counted again."""
    import nbformat
    from grade_course import ALSO_WRONG

    import lib.exercises.ch16 as ch16

    known = notes.mistakes(ch16, "check_discriminator_loss")
    hints = [m for m in known if m.kind == "hint"]
    assert not any("‹" in m.message for m in hints)  # the hint's text, not its name
    assert sum("The labels of binary_cross_entropy_with_logits" in m.message for m in hints) == 3
    assert notes.matching("✗ x: not yet right. Anything at all", [*known[:0], hints[1]]) is None
    chapter = "16_beyond_bert"
    said = {
        "carol": "✗ discriminator_loss: 0 points. Your code ended the process (exit status 0: "
        "sys.exit or os._exit?) before the check could run.",
        "bob": "✗ discriminator loss: not yet right. On the case A your loss is 2.091, expected "
        "1.219, and it matches none of the mistakes this checker knows. Go back to the definition "
        "of L_Disc in the section on ELECTRA: which tokens the mean runs over, what each token's "
        "label is, and what the loss function expects as its input."
        f"\n{ALSO_WRONG}\n- on the case B your loss is 1.0, expected 2.0: The labels of "
        "binary_cross_entropy_with_logits are float numbers",
    }
    for student, message in said.items():
        path = tmp_path / "autograded" / student / chapter / f"{chapter}.ipynb"
        path.parent.mkdir(parents=True)
        cell = nbformat.v4.new_code_cell(
            "from lib.exercises.ch16 import *\ncheck_discriminator_loss(discriminator_loss)"
        )
        cell.outputs = [
            nbformat.v4.new_output("error", ename="ExerciseFailed", evalue=message, traceback=[])
        ]
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    counts = notes.class_counts(tmp_path, chapter, {"check_discriminator_loss": known})
    counts = counts["check_discriminator_loss"]
    assert counts["graded"] == 2 and counts[notes.HELD] == 1 and counts[None] == 0
    table = notes._mistakes_table(known, counts)
    often = [row.split(" | ")[2] for row in table if row[:3] in {f"| {i}" for i in range(1, 10)}]
    assert often.count("1") == 1 and sum(o.isdigit() and int(o) for o in often) == 1
    # the same hint for three errors: counted once, in the first of its rows
    labels = [
        row.split(" | ")
        for row in table
        if row[:3] in {f"| {i}" for i in range(1, 10)}
        and "The labels of binary_cross_entropy_with_logits" in row
    ]
    first = labels[0][0].strip("| ")
    assert len(labels) == 3
    assert [cells[2] for cells in labels[1:]] == [f"in row {first}", f"in row {first}"]
    rope = notes.mistakes(ch17, "check_rope_halves")
    bob = (
        "✗ rope_halves: not yet right. On the case 'T = 6, Dh = 8, theta = 10000, positions 3 to 8', "
        + ch17._exponent_message(dict(ch17._ROPE_MISTAKES)["exponent i/Dh"], 8, 10000.0)
    )
    # rope[0]: the interleaved pairs; the refusal of apply_rope by name, once first, is now the
    # REFUSALS row the checker applies while the answer runs (reader's report ch17 s31, 1)
    assert notes.matching(bob, rope) is rope[1] and "theta^(-i/Dh)" in rope[1].message


@pytest.mark.parametrize(
    "variant, row",
    [
        ({"layout": "halves"}, "you put all the sines first"),
        ({"exponent": "j/d"}, "your odd (cosine) columns use their own frequency"),
        ({"exponent": "i/d"}, "your exponent is i/d with i the pair index"),
    ],
)
def test_chapter_8s_table_of_mistakes_is_one_row_each(variant, row):
    """Course review s27, M5: carol's sines then cosines and dave's per-column frequency, chapter
    8's commonest mistakes, were counted under "on the case ‹case›, ‹…›. | any other wrong answer":
    the checker fills its table's message in with ``why.format(**numbers)``, which the notes did not
    read. Each is a row of its own, and the student's message is counted there."""
    from lib.exercises import ch08

    known = notes.mistakes(ch08, "check_sinusoidal")
    said = _feedback(
        ch08.check_sinusoidal, lambda max_len, d_model: ch08._table(max_len, d_model, **variant)
    )
    found = notes.matching(said, known)
    assert found is not None and row in found.message and found.condition, (said, found)
    assert sum(row in m.message for m in known) == 1


def test_the_notes_name_no_internal_review():
    """Course review s27, M5: the notes' manual-review row said "(lecturer review s22, M6)", a
    reference of the book's own reviews that a colleague cannot read."""
    table = "\n".join(notes._mistakes_table([], {"graded": 1, "passed": 1}))
    assert not re.search(r"\b(lecturer|reader|course)[- ]?(kit )?review\b|\bs\d\d, [SMm]\d", table)


def test_the_notes_ask_the_questions_the_rubric_grades():
    """Course review s27, m9: the notes listed 5 written questions for chapter 1's exercise 1, its
    ungraded prediction comment ("First write down your prediction ...") among them, and the
    course's rubric 4: the notes take the rubric's questions (tools/rubric_claims.py's PARTS)."""
    import rubric_claims

    chapter = "01"
    written = [ex for ex in notes.exercises(chapter) if ex.written_parts]
    assert [len(ex.written_parts) for ex in written] == notes.rubric_parts(chapter)
    first = next(ex for ex in written if ex.number == 1)
    assert first.written_parts == rubric_claims.PARTS["01"][1]
    assert not any("prediction" in q and "comment" in q for q in first.written_parts)
