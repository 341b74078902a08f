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
