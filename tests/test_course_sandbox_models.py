"""Checkers whose cases are models, graded by tools/grade_course.py (issue 36): chapter 9's
``pre_ln_layer`` (the checker's layers cross to the sandbox pickled, each refusing its own forward) and
chapter 11's ``backward_agreement`` (the student passes the chapter's backward RNNLM, which comes back
to the grader as data and is rebuilt there as an RNNLM with its weights and settings, to run).

For each chapter: an honest student (the worked solutions) gets full marks, and a student with one
wrong answer gets 0 on it with the checker's own diagnosis, which needs the model on the other side
(the refusal of the layer's forward; the mistake recomputed from the student's model).

The course has per-student variants (``make_course.py --variants``): in chapter 9's exercise 3 each
student predicts parameter counts for their own vocabulary and N. The honest student answers for
theirs (read with ``parameter_variant()`` in the answer cell, which runs in the sandbox with the
student's id), and a student who copies the honest student's numbers gets 0 there: the grader checks
each against their own numbers. About 4 minutes on the book's 2-core machine, shared: the two
chapters' code runs once each in the sandbox.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest

from tests.test_course_sandbox import (
    _generate,
    _grade_json,
    _gradebook_scores,
    _solutions,
    _submit,
    _test_points,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

CH9, CH11 = "09_the_transformer", "11_language_models"
# {student: (chapter, answer cell, source, words of the message)}
WRONG = {
    "calls_the_layer": (
        CH9,
        "ex1_answer",
        """
def pre_ln_layer(layer, x):
    return layer(x)[0]
""",
        "not to call the layer itself",
    ),
    # the class's forward, past the instance's refusal (lecturer review s13, SERIOUS 3)
    "calls_the_class": (
        CH9,
        "ex1_answer",
        """
def pre_ln_layer(layer, x):
    return type(layer).forward(layer, x)[0]
""",
        "not to call the layer itself",
    ),
    "imports_the_class": (
        CH9,
        "ex1_answer",
        """
from lib.transformer import EncoderLayer as E


def pre_ln_layer(layer, x):
    return E.forward(layer, x)[0]
""",
        "not to call the layer itself",
    ),
    "unnormalised_share": (
        CH11,
        "ex2_answer",
        """
backward = models["backward"]
words = "the keys that the man found are old .".split()
ids_ = torch.tensor([vocab.encode(words, add_bos=True, add_eos=True)])
with torch.no_grad():
    p = backward(ids_).logits[0, words.index("old") + 1].softmax(-1)
plural_share = p[vocab.stoi["are"]].item() + p[vocab.stoi["were"]].item()
same_for_singular = True
""",
        "P(are) + P(were) alone",
    ),
}
# chapter 9's exercise 3 answered for one's own numbers (the worked solution answers the book's)
OWN_NUMBERS = """
from lib.exercises.ch09 import parameter_variant

mine = parameter_variant()
gain_separate = mine["vocab"] * 512
loss_half_ff = 12 * (2 * 512 * 1024 + 1024)
total_n12 = count_parameters(TransformerConfig.base(n_layers=mine["n_layers"]))
"""
COPIER = "copies_a_neighbour"


def _numbers_of(student: str) -> dict[str, int]:
    from lib.exercises import ch09

    saved = {k: os.environ.get(k) for k in ("COURSE_VARIANTS", "COURSE_STUDENT")}
    os.environ.update(COURSE_VARIANTS=make_course.COURSE_ID, COURSE_STUDENT=student)
    try:
        return ch09.parameter_variant()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    _generate(root, [CH9, CH11], predictions_at_collection=True, variants=True)
    expected = {}
    for chapter in (CH9, CH11):
        source = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        honest = _solutions(source)
        if chapter == CH9:
            honest["ex3_answer"] = OWN_NUMBERS
        # {test: its points}: a prediction's is worth less in a graded course (make_course.POINTS)
        tests = _test_points(source)
        _submit(root, "honest", chapter, honest)
        expected[("honest", chapter)] = dict(tests)
        for student, (where, answer, text, _) in WRONG.items():
            if where == chapter:
                _submit(root, student, chapter, {**honest, answer: text})
                scores = dict(tests)
                scores[answer.replace("_answer", "_test")] = 0
                expected[(student, chapter)] = scores
        if chapter == CH9:  # the honest student's numbers, copied as they are
            theirs = _numbers_of("honest")
            assert theirs != _numbers_of(COPIER)
            copied = OWN_NUMBERS.replace("mine = parameter_variant()", f"mine = {theirs!r}")
            _submit(root, COPIER, chapter, {**honest, "ex3_answer": copied})
            expected[(COPIER, chapter)] = {**dict(tests), "ex3_test": 0}
    messages = {}
    for chapter in (CH9, CH11):
        run, records = _grade_json(root, chapter)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert "did not run in the sandbox" not in run.stderr, run.stderr[-3000:]
        for r in records:
            messages[(r["student"], chapter, r["test"])] = r["message"]
    return root, expected, messages


@pytest.mark.parametrize("chapter", [CH9, CH11])
def test_honest_student_gets_full_marks(graded, chapter):
    root, expected, messages = graded
    scores = _gradebook_scores(root, "honest", chapter)
    full = expected[("honest", chapter)]
    wrong = {k: messages[("honest", chapter, k)] for k, v in scores.items() if v != full[k]}
    assert not wrong and scores == expected[("honest", chapter)], wrong


def test_the_variant_cell_is_in_the_release_and_a_neighbours_numbers_get_zero(graded):
    root, expected, messages = graded
    release = nbformat.read(root / "release" / CH9 / f"{CH9}.ipynb", as_version=4)
    assert any("parameter_variant()" in c.source for c in release.cells if c.cell_type == "code")
    assert "passed" in messages[("honest", CH9, "ex3_test")]
    assert _gradebook_scores(root, COPIER, CH9) == expected[(COPIER, CH9)], messages
    message = messages[(COPIER, CH9, "ex3_test")]
    assert "not yet right" in message and ("gain_separate =" in message or "total_n12 =" in message)


@pytest.mark.parametrize("student", sorted(WRONG))
def test_wrong_answer_gets_zero_with_the_checkers_diagnosis(graded, student):
    root, expected, messages = graded
    chapter, answer, _, words = WRONG[student]
    assert _gradebook_scores(root, student, chapter) == expected[(student, chapter)], messages
    message = messages[(student, chapter, answer.replace("_answer", "_test"))]
    assert words in message, message
