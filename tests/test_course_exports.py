"""The grade exports of a course in progress (lecturer review r3, problem 5): work not yet due is a blank
cell (no grade), not a failing 0; an export warns while written answers still need a manual grade
and when a score is above its cell's maximum. The gradebook is tests/test_export_grades.py's."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

from tests.test_export_grades import DUE, A, B, _read, gradebook  # noqa: F401 (the fixture)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import export_grades  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


def test_work_not_yet_due_is_blank(gradebook):  # noqa: F811
    before = export_grades.read_gradebook(gradebook, now=DUE - dt.timedelta(days=1))
    assert before.scores["carol", A] is None and before.scores["bob", B] is None  # not submitted
    assert before.scores["alice", A] == 2.5  # submitted early: graded
    rows = export_grades.canvas_rows(before)
    assert rows[-1] == ["Ann, Carol", "", "", "carol", "", "", ""]
    assert export_grades.moodle_rows(before)[-1] == ["carol", "", ""]
    after = export_grades.read_gradebook(gradebook, now=DUE + dt.timedelta(minutes=1))
    assert after.scores["carol", A] == 0 and after.scores["bob", B] == 0
    assert not after.warnings


def test_an_export_warns_about_ungraded_answers_and_scores_over_the_maximum(
    gradebook,  # noqa: F811
    tmp_path,
    capsys,
):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{gradebook}") as gb:
        w1 = gb.find_grade("w1", A, A, "alice")
        w1.manual_score, w1.needs_manual_grade = None, True  # not graded yet
        gb.find_grade("w1", A, A, "bob").manual_score = 2.5  # a slip: the cell is out of 1
        gb.db.commit()
    out = tmp_path / "canvas.csv"
    assert export_grades.main(["--gradebook", str(gradebook), "--canvas", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: alice 02_attention_as_soft_lookup: 1 answer still needs a manual grade" in err
    assert (
        "warning: bob 02_attention_as_soft_lookup: w1 has 2.5 points, more than its maximum 1"
        in err
    )
    assert "2 problems above" in err
    assert _read(out)[2][5] == "2"  # written all the same: alice's 2 automatic points


def test_an_export_refuses_while_a_grading_run_is_going_on_or_was_interrupted(
    gradebook,  # noqa: F811
    tmp_path,
    capsys,
):
    """Lecturer review s29, M3: an export taken while grade_course.py was still grading chapter 16
    wrote points the students had not earned. grade_course.py leaves a marker in the course folder
    while it grades (tools/grading_marker.py); the export refuses past it, unless --force."""
    import grading_marker

    out = tmp_path / "moodle.csv"
    marker = grading_marker.start(gradebook.parent, A, ["alice", "bob"])
    assert export_grades.main(["--gradebook", str(gradebook), "--moodle", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"grade_course.py has been grading {A} since " in err
    assert "wait until it ends, then export again" in err and "--force" in err
    assert not out.exists()
    grading_marker.interrupted(marker, "interrupted (Ctrl-C)")
    assert export_grades.main(["--gradebook", str(gradebook), "--moodle", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"the grading of {A} started at " in err and "was interrupted at" in err
    assert "(interrupted (Ctrl-C)), so the gradebook may hold a part of it: grade it again" in err
    assert not out.exists()
    # another chapter's export is not held up
    assert (
        export_grades.main(["--gradebook", str(gradebook), "--moodle", str(out), "--assignment", B])
        == 0
    )
    out.unlink()
    assert export_grades.main(["--gradebook", str(gradebook), "--moodle", str(out), "--force"]) == 0
    assert "warning (--force): the grading of" in capsys.readouterr().err and out.exists()
    grading_marker.finished(marker)
    assert not grading_marker.markers(gradebook.parent)


def test_a_killed_grading_run_is_named(gradebook, capsys):  # noqa: F811
    """A run killed outright (kill -9) could not say so: its marker names a process that is gone."""
    import json
    import subprocess

    import grading_marker

    marker = grading_marker.start(gradebook.parent, A, ["alice"])
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True
    )
    info = json.loads(marker.read_text())
    marker.write_text(json.dumps({**info, "pid": int(gone.stdout)}))
    assert export_grades.main(["--gradebook", str(gradebook), "--canvas", "x.csv"]) == 2
    err = capsys.readouterr().err
    assert f"ended without finishing (its process {int(gone.stdout)} is gone" in err


@pytest.mark.parametrize("stop", [RuntimeError("the disk is full"), KeyboardInterrupt()])
def test_grading_leaves_its_marker_only_when_it_stops_before_the_end(tmp_path, monkeypatch, stop):
    import grade_course
    import grading_marker

    course = tmp_path / "course"
    (course / "submitted" / "alice" / A).mkdir(parents=True)
    (course / "submitted" / "alice" / A / f"{A}.ipynb").write_text("{}")
    seen = []

    def run(args, course, chapter, students):
        seen.append([m.name for m in grading_marker.markers(course)])
        return 0

    monkeypatch.setattr(grade_course, "_grade_run", run)
    assert grade_course.main([A, "--course", str(course)]) == 0
    assert seen == [[f"grading-{A}.lock"]]  # there while it grades
    assert not grading_marker.markers(course)  # gone when it ends

    def fails(*args):
        raise stop

    monkeypatch.setattr(grade_course, "_grade_run", fails)
    with pytest.raises(type(stop)):
        grade_course.main([A, "--course", str(course)])
    (marker,) = grading_marker.markers(course)
    said = grading_marker.describe(marker)
    assert "was interrupted at" in said and "grade it again" in said
    assert ("Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "the disk is full") in said


def test_an_export_warns_about_submissions_collected_but_not_graded(
    gradebook,  # noqa: F811
    tmp_path,
    capsys,
):
    """Lecturer review s29, m4: two submissions collected with zip_collect, not yet graded, were
    left out of the export without a word."""
    for student in ("hank", "alice"):  # hank: not in the gradebook at all; alice: graded
        folder = gradebook.parent / "submitted" / student / A
        folder.mkdir(parents=True)
        (folder / f"{A}.ipynb").write_text("{}")
    out = tmp_path / "moodle.csv"
    assert export_grades.main(["--gradebook", str(gradebook), "--moodle", str(out)]) == 0
    err = capsys.readouterr().err
    assert (
        f"warning: hank {A}: collected (submitted/hank/{A}) but not graded yet, so the export "
        f"leaves it out or counts it as missing: grade it (python tools/grade_course.py {A} "
        "--student hank)" in err
    )
    assert "alice" not in err and "1 problems above" in err
