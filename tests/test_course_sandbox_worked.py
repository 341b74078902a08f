"""The worked solutions of chapters 13 to 18 graded by tools/grade_course.py in its sandbox (lecturer
review s22, B1: chapter 18's exercise 1 gave 0 to every answer, the worked solution's included,
because the sandbox refused the checker's own helpers, which its tracking tensor calls).

Each chapter's course is graded with one student who hands in the worked solutions: full marks in the
gradebook. The grader grades the instructor's ``source/`` first (its canary) and stops, naming the
exercise, when the worked solution fails there; the test also checks that stop, with a grader whose
verdicts are given. About 16 minutes on the book's 2-core machine at load average 9 (each chapter's code runs
once, in the sandbox's zygote).
"""

from __future__ import annotations

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
import grade_course  # noqa: E402

CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("1[3-8]_*.ipynb"))
CH18 = "18_attention_at_scale"
# chapter 18 answered wrong: {student: (answer cell, its source, words of the message)}
WRONG = {
    # the checker's own helper, which its tracking tensor may call, is still refused to an answer
    "calls_leaves": (
        "ex1_answer",
        """
import math

from lib.exercises.ch18 import _leaves


def running_max_and_sum(x, block):
    m, total = -math.inf, 0.0
    for start in range(0, len(x), block):
        chunk = list(_leaves(x[start : start + block].tolist()))
        new_max = max(m, *chunk)
        total = total * math.exp(m - new_max) + sum(math.exp(v - new_max) for v in chunk)
        m = new_max
    return m, total
""",
        "_leaves",
    ),
    # the softmax of two passes: right values, read the wrong way (what the sandbox now sees)
    "two_passes": (
        "ex1_answer",
        """
import math


def running_max_and_sum(x, block):
    m = x.max().item()
    return m, (x - m).exp().sum().item()
""",
        "reads all",
    ),
    # "Without `lib.alibi`": its private helper too (lecturer review s22, S3)
    "private_helper": (
        "ex2_answer",
        """
import lib.alibi as _al

slopes_for = lambda n: list(_al._slopes(n))  # noqa: E731
""",
        # named as it is called (lecturer review course46, M3)
        "calls lib.alibi (_slopes);",
    ),
    # the same helper out of the checker's sight: the grader's refusal names it
    "hidden_helper": (
        "ex2_answer",
        """
import importlib

slopes_for = lambda n: list(getattr(importlib.import_module("lib.alibi"), "_" + "slopes")(n))  # noqa: E731
""",
        "it called the library's _slopes; compute the slopes yourself",
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    _generate(root, CHAPTERS, predictions_at_collection=True, private_cases=True)
    expected, runs = {}, {}
    for chapter in CHAPTERS:
        source = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", as_version=4)
        expected[chapter] = _test_points(source)
        _submit(root, "honest", chapter, _solutions(source))
        if chapter == CH18:
            for student, (cell, answer, _) in WRONG.items():
                _submit(root, student, chapter, {**_solutions(source), cell: answer})
        run, records = _grade_json(root, chapter)
        runs[chapter] = (run, {(r["student"], r["test"]): r["message"] for r in records})
    return root, expected, runs


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_worked_solution_gets_full_marks_in_the_sandbox(graded, chapter):
    root, expected, runs = graded
    run, messages = runs[chapter]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    scores = _gradebook_scores(root, "honest", chapter)
    wrong = {k: messages.get(("honest", k)) for k, v in scores.items() if v != expected[chapter][k]}
    assert not wrong and scores == expected[chapter], wrong


@pytest.mark.parametrize("student", sorted(WRONG))
def test_a_wrong_answer_of_chapter_18_gets_zero_with_its_reason(graded, student):
    root, expected, runs = graded
    run, messages = runs[CH18]
    cell, _, words = WRONG[student]
    test = cell.replace("_answer", "_test")
    scores = _gradebook_scores(root, student, CH18)
    assert scores == {**expected[CH18], test: 0}, messages
    assert words in messages[(student, test)]


class _Grader:
    """A grader whose verdicts are given: exercise 1's worked solution fails in its sandbox."""

    def __init__(self, course: Path, chapter: str, **settings):
        self.course, self.chapter, self.variants = course, chapter, None
        self.exercises, self.closed = [], False

    def grade(self, student, submission, **settings):
        assert student == grade_course.CANARY
        failed = (
            "✗ f: not yet right. it called `lib.exercises.ch18._leaves`, the checker's own code"
        )
        return [
            grade_course.Result(student, "ex1_test", 2, 0, failed, 0.1),
            grade_course.Result(student, "ex2_test", 2, 2, "✓ passed", 0.1),
        ]

    def close(self):
        self.closed = True


def test_the_canary_stops_the_grading_and_names_the_exercise(tmp_path, monkeypatch, capsys):
    chapter = "18_attention_at_scale"
    folder = tmp_path / "source" / chapter
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / f"{chapter}.ipynb")
    failing = grade_course.worked_solution_fails(_Grader(tmp_path, chapter))
    assert len(failing) == 1 and failing[0].startswith("ex1_test: 0 / 2: ✗ f")
    graded = []
    monkeypatch.setattr(grade_course, "Grader", _Grader)
    monkeypatch.setattr(grade_course, "submitted_students", lambda course, chapter: ["alice"])
    monkeypatch.setattr(grade_course, "_with_class", lambda course, chapter, students: students)
    monkeypatch.setattr(grade_course, "_grade_students", lambda *a, **k: graded.append(a))
    assert grade_course.main([chapter, "--course", str(tmp_path)]) != 0
    said = capsys.readouterr().err
    assert not graded, "a student was graded by a grader that fails the worked solution"
    assert (
        "the grader could not grade this exercise in its sandbox: the worked solution fails" in said
    )
    assert "ex1_test" in said and "ex2_test" not in said


class _PassingGrader(_Grader):
    """A grader whose verdicts are given: both worked solutions get full marks."""

    def grade(self, student, submission, **settings):
        return [
            grade_course.Result(student, test, 2, 2, "✓ passed", 0.1)
            for test in ("ex1_test", "ex2_test")
        ]


def test_the_canary_says_so_when_it_passes(tmp_path, monkeypatch, capsys):
    """Lecturer review s23, M10: one line in the log, so that a lecturer sees the check ran."""
    chapter = "18_attention_at_scale"
    folder = tmp_path / "source" / chapter
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / f"{chapter}.ipynb")
    graded = []
    monkeypatch.setattr(grade_course, "Grader", _PassingGrader)
    monkeypatch.setattr(grade_course, "submitted_students", lambda course, chapter: ["alice"])
    monkeypatch.setattr(grade_course, "_with_class", lambda course, chapter, students: students)

    def stop(*args, **kwargs):
        graded.append(args)
        raise SystemExit(0)  # the students' grading is not this test's

    monkeypatch.setattr(grade_course, "_grade_students", stop)
    with pytest.raises(SystemExit):
        grade_course.main([chapter, "--course", str(tmp_path)])
    assert graded
    said = capsys.readouterr().out
    assert "worked solutions: 2/2 exercises full marks in the sandbox" in said


def test_a_model_the_checker_hooked_goes_to_the_child_without_its_hooks():
    """Chapter 15's checker counts the model's calls with a local lambda hooked on it, which cannot be
    pickled: the worked solution got 0 in the sandbox (found by the canary). The child gets the model
    without the hook; the checker's model keeps it."""
    import io

    import torch

    model, calls = torch.nn.Linear(2, 2), []
    model.register_forward_hook(lambda *_: calls.append(1))
    sent = grade_course.encode(model)
    torch.save(sent, io.BytesIO())
    assert sent.weight is model.weight and not sent._forward_hooks
    model(torch.zeros(1, 2))
    assert calls == [1]
