"""Grade exports for Canvas and Moodle, the term plan and its late policy (issue 36, item 7).

The gradebook is nbgrader's own, made in a temporary folder with nbgrader's API: two chapters, three
students (one late, one who submitted nothing), automatic and manual points.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import export_grades  # noqa: E402
import term_plan  # noqa: E402

A, B = "02_attention_as_soft_lookup", "03_scoring_functions"
DUE = dt.datetime(2026, 1, 24, 22, 59)  # UTC, passed: missing work is 0
# nbgrader's add_submission makes SQLAlchemy note objects not yet in its session (harmless)
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


@pytest.fixture
def gradebook(tmp_path):
    from nbgrader.api import Gradebook

    path = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{path}") as gb:
        for name, cells in (
            (A, [("t1", 2, "code"), ("w1", 1, "markdown")]),
            (B, [("t1", 2, "code")]),
        ):
            gb.add_assignment(name, duedate=DUE)
            gb.add_notebook(name, name)
            for cell, points, kind in cells:
                gb.add_grade_cell(cell, name, name, max_score=points, cell_type=kind)
        gb.add_assignment("04_bahdanau_and_luong", duedate=DUE)  # a deadline only: not exported
        gb.add_student("alice", first_name="Alice", last_name="Liddell", email="alice@uni.example")
        gb.add_student("bob", first_name="Bob", last_name="Marley", email="bob@uni.example")
        gb.add_student("carol", first_name="Carol", last_name="Ann")  # no e-mail; submits nothing
        gb.add_submission(A, "alice", timestamp=DUE - dt.timedelta(hours=1))
        gb.add_submission(A, "bob", timestamp=DUE + dt.timedelta(days=1.5))  # late: 20% off
        gb.add_submission(B, "alice", timestamp=DUE)
        for student, cell, score in (("alice", "t1", 2), ("bob", "t1", 2)):
            gb.find_grade(cell, A, A, student).auto_score = score
        gb.find_grade("w1", A, A, "alice").manual_score = 0.5
        gb.find_grade("w1", A, A, "bob").manual_score = 1
        gb.find_grade("t1", B, B, "alice").auto_score = 0
        for sub in gb.assignment_submissions(A) + gb.assignment_submissions(B):
            for grade in sub.notebooks[0].grades:  # graded, as nbgrader and the Formgrader leave it
                grade.needs_manual_grade = False
        gb.db.commit()
    changed = term_plan.recompute_penalties(f"sqlite:///{path}")
    assert changed == [(A, "bob", pytest.approx(0.6))]  # 20% of 3 points
    return path


def _read(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_canvas_layout(gradebook, tmp_path):
    out = tmp_path / "canvas.csv"
    ids = tmp_path / "ids.csv"
    ids.write_text(f"assignment,canvas_id\n{A},4711\n")
    export_grades.main(
        ["--gradebook", str(gradebook), "--canvas", str(out), "--canvas-ids", str(ids)]
    )
    rows = _read(out)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{A} (4711)", B]
    assert rows[1] == ["    Points Possible", "", "", "", "", "3", "2"]
    assert rows[2:] == [
        ["Liddell, Alice", "", "", "alice", "", "2.5", "0"],
        ["Marley, Bob", "", "", "bob", "", "2.4", "0"],  # 3 points less 20% for 1.5 days late
        ["Ann, Carol", "", "", "carol", "", "0", "0"],
    ]


def test_exports_are_readable_by_their_owner_only(gradebook, tmp_path):
    """Lecturer review s21, S4: the course folder is passable (0711) when the exchange is inside
    it, so canvas.csv/moodle.csv are 0600 like gradebook.db, also when they existed before."""
    import os
    import stat

    canvas, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    moodle.write_text("old\n")
    moodle.chmod(0o644)
    old = os.umask(0o022)
    try:
        code = export_grades.main(
            ["--gradebook", str(gradebook), "--canvas", str(canvas), "--moodle", str(moodle)]
        )
    finally:
        os.umask(old)
    assert code == 0
    for path in (canvas, moodle):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert _read(moodle)[0][0] == "Username"


def test_canvas_roster(gradebook, tmp_path):
    roster = tmp_path / "roster.csv"
    lines = ["Student,ID,SIS User ID,SIS Login ID,Section", "    Points Possible,,,,"]
    lines += [f"{n},{i},S{i},{n.lower()},Tue" for i, n in enumerate(["Alice", "Bob", "Carol"], 100)]
    roster.write_text("\n".join(lines) + "\n")
    grades = export_grades.read_gradebook(gradebook, [A])
    rows = export_grades.canvas_rows(grades, export_grades._read_csv(roster, "roster"))
    assert rows[2] == ["Alice", "100", "S100", "alice", "Tue", "2.5"]
    with pytest.raises(ValueError, match="match: the roster has no column 'Login'"):
        export_grades.canvas_rows(grades, export_grades._read_csv(roster, "roster"), match="Login")
    short = [r for r in export_grades._read_csv(roster, "roster") if r["Student"] != "Bob"]
    with pytest.raises(ValueError, match=r"roster: .*\['bob'\].*--skip-unmatched"):
        export_grades.canvas_rows(grades, short)


def test_canvas_roster_matches_logins_in_any_case(gradebook, tmp_path):
    """An SIS login is often mixed-case (``Alice``) where nbgrader's id is the hub's ``alice``."""
    roster = tmp_path / "roster.csv"
    lines = ["Student,ID,SIS User ID,SIS Login ID,Section"]
    lines += [
        f"{n},{i},S{i},{n.upper() if i % 2 else n},Tue"
        for i, n in enumerate(["Alice", "Bob", "Carol"], 100)
    ]
    roster.write_text("\n".join(lines) + "\n")
    grades = export_grades.read_gradebook(gradebook, [A])
    read = export_grades._read_csv(roster, "roster")
    rows = export_grades.canvas_rows(grades, read)
    assert rows[2] == ["Alice", "100", "S100", "Alice", "Tue", "2.5"]
    assert [r[3] for r in rows[2:]] == ["Alice", "BOB", "Carol"]
    assert export_grades.unmatched(grades, read) == []
    roster.write_text("\n".join(lines + ["Alice Two,200,S200,ALICE,Tue"]) + "\n")
    with pytest.raises(ValueError, match="differ only in case"):
        export_grades.canvas_rows(grades, export_grades._read_csv(roster, "roster"))


def test_roster_without_a_student(gradebook, tmp_path, capsys):
    """A student the roster lacks: a one-line error, or with --skip-unmatched a CSV without them and
    their names listed."""
    roster = tmp_path / "roster.csv"
    lines = ["Student,ID,SIS User ID,SIS Login ID,Section"]
    lines += [f"{n},{i},S{i},{n.lower()},Tue" for i, n in enumerate(["Alice", "Carol"], 100)]
    roster.write_text("\n".join(lines) + "\n")
    out = tmp_path / "canvas.csv"
    command = ["--gradebook", str(gradebook), "--canvas", str(out), "--roster", str(roster)]
    assert export_grades.main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "['bob']" in err and "Traceback" not in err
    assert export_grades.main([*command, "--skip-unmatched"]) == 0
    assert "left out (no row of the roster): bob" in capsys.readouterr().out
    assert [r[3] for r in _read(out)[2:]] == ["alice", "carol"]
    moodle = tmp_path / "moodle.csv"
    command = ["--gradebook", str(gradebook), "--moodle", str(moodle), "--moodle-id", "email"]
    assert export_grades.main(command) == 2
    assert export_grades.main([*command, "--skip-unmatched"]) == 0
    assert "left out (no e-mail in the gradebook): carol" in capsys.readouterr().out
    assert [r[0] for r in _read(moodle)[1:]] == ["alice@uni.example", "bob@uni.example"]


def test_an_export_stopped_by_the_roster_does_not_say_it_is_written(gradebook, tmp_path, capsys):
    """Lecturer review s17, M2: with a problem in the gradebook and a roster without a student, the
    export printed "the export is written, but these grades are not final" and then stopped on the
    roster, writing nothing. It says "not written" now, and writes no file."""
    (gradebook.parent / "reports").mkdir()  # a flag of the grader: a warning
    (gradebook.parent / "reports" / f"{A}-flags.json").write_text('{"alice": ["possible copy"]}')
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\nAlice,100,S100,alice,Tue\n")
    out, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    command = ["--gradebook", str(gradebook), "--canvas", str(out), "--roster", str(roster)]
    assert export_grades.main([*command, "--moodle", str(moodle)]) == 2
    err = capsys.readouterr().err
    assert "problems above; the export is not written" in err, err
    assert "the export is written" not in err and "no row whose" in err
    assert not out.exists() and not moodle.exists()
    assert export_grades.main([*command, "--skip-unmatched"]) == 0
    assert "the export is written, but these grades are not final" in capsys.readouterr().err
    assert out.exists()


def test_moodle_layout(gradebook, tmp_path):
    out = tmp_path / "moodle.csv"
    export_grades.main(["--gradebook", str(gradebook), "--moodle", str(out)])
    assert _read(out) == [
        ["Username", A, B],
        ["alice", "2.5", "0"],
        ["bob", "2.4", "0"],
        ["carol", "0", "0"],
    ]
    grades = export_grades.read_gradebook(gradebook)
    with pytest.raises(ValueError, match=r"identifier: 'email' .*\['carol'\]"):
        export_grades.moodle_rows(grades, "email")
    grades.students = grades.students[:2]
    assert export_grades.moodle_rows(grades, "email")[1] == ["alice@uni.example", "2.5", "0"]


def test_extension(gradebook, capsys):
    url = f"sqlite:///{gradebook}"
    (gradebook.parent / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "{url}"\n'
        f"{term_plan.ZONE_MARK}Europe/Berlin\n"
    )
    term_plan.main(["extend", "--course", str(gradebook.parent), A, "alice", "1"])
    # the course's zone, as `deadlines` prints its dates: 22:59 UTC is 23:59 in Berlin
    assert f"{A}  alice  due Sun 2026-01-25 23:59 CET" in capsys.readouterr().out
    term_plan.main(["extend", "--course", str(gradebook.parent), A, "alice", "0"])
    assert term_plan.extend(url, A, "bob", 2) == DUE + dt.timedelta(days=2)
    assert term_plan.recompute_penalties(url) == []  # 1.5 days late, 2 days more: on time
    assert export_grades.read_gradebook(gradebook).scores["bob", A] == 3
    with pytest.raises(ValueError, match="assignment, student: no graded submission"):
        term_plan.extend(url, B, "bob", 1)
    with pytest.raises(ValueError, match="days: expected"):
        term_plan.extend(url, A, "bob", -1)


def test_remove_takes_a_student_out_of_the_gradebook_the_folders_and_the_exchange(
    gradebook, capsys
):
    """Course review s40, m3: after ``nbgrader db student remove`` alone, the fake students'
    submitted/, autograded/ and feedback/ folders made the export warn "collected but not graded",
    and ``nbgrader collect --update`` brought them back from the exchange's inbound copies.
    ``term_plan.py remove`` removes all of it, and nothing of another student."""
    course = gradebook.parent
    exchange = course / "exchange"
    (course / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "sqlite:///{gradebook}"\n'
        f'c.CourseDirectory.course_id = "attention-book"\nc.Exchange.root = "{exchange}"\n'
    )
    made = [
        course / part / who / A
        for part in ("submitted", "autograded", "feedback")
        for who in ("bob", "alice")
    ]
    inbound = exchange / "attention-book" / "inbound"
    made += [inbound / f"bob+{A}+2026-01-24 21:00:00.000000 UTC", inbound / f"alice+{A}+x"]
    for path in made:
        path.mkdir(parents=True)
        (path / "timestamp.txt").write_text("x")
    # the feedback nbgrader release_feedback put in the exchange, named by the hash of the
    # submission's secret and the notebook's name (lecturer review s41, m7: it stayed there)
    from nbgrader.utils import notebook_hash

    released = exchange / "attention-book" / "feedback"
    released.mkdir()
    pages = {}
    for who in ("bob", "alice"):
        secret = f"secret of {who}'s submission"
        for part, name in (("submitted", f"{A}.ipynb"), ("feedback", f"{A}.html")):
            (course / part / who / A / "submission_secret.txt").write_text(secret)
            (course / part / who / A / name).write_text("{}")
        pages[who] = released / f"{notebook_hash(secret=secret, notebook_id=A)}.html"
        pages[who].write_text("<html>feedback</html>")
    term_plan.main(["remove", "--course", str(course), "bob"])
    out = capsys.readouterr().out
    assert "bob: removed from the gradebook, with their submissions" in out
    assert f"bob: removed {pages['bob']} (feedback released to them)" in out
    assert not pages["bob"].exists() and pages["alice"].exists()
    assert "--reviewed <chapter>" in out
    assert [p.exists() for p in made] == [False, True, False, True, False, True, False, True]
    grades = export_grades.read_gradebook(gradebook)
    assert ("bob", A) not in grades.scores and grades.scores["alice", A] == 2.5
    term_plan.main(["remove", "--course", str(course), "bob"])  # again: nothing left, no error
    assert "bob: not in the gradebook" in capsys.readouterr().out
    with pytest.raises(ValueError, match="students: expected nbgrader student ids, got '../x'"):
        term_plan.remove_students(course, ["../x"])


def test_bad_input(gradebook, tmp_path, capsys):
    with pytest.raises(ValueError, match="gradebook: expected nbgrader's gradebook.db"):
        export_grades.read_gradebook(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()  # no empty gradebook made
    with pytest.raises(TypeError, match="gradebook: expected a path"):
        export_grades.read_gradebook(3)
    with pytest.raises(ValueError, match=r"assignments: \['99_x'\] not in the gradebook"):
        export_grades.read_gradebook(gradebook, ["99_x"])
    grades = export_grades.read_gradebook(gradebook)
    with pytest.raises(ValueError, match="identifier: expected one of"):
        export_grades.moodle_rows(grades, "idnumber")
    bad = tmp_path / "ids.csv"
    bad.write_text("chapter,id\n02,1\n")
    code = export_grades.main(
        ["--gradebook", str(gradebook), "--canvas", "x.csv", "--canvas-ids", str(bad)]
    )
    assert code == 2  # one line, no traceback
    assert "error: canvas_ids: expected the columns assignment,canvas_id" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"canvas_ids: assignments \['99_x'\]"):
        export_grades.canvas_rows(grades, canvas_ids={"99_x": "1"})


# --- the term plan --------------------------------------------------------------------------------


def test_late_plugin_penalty():
    plugin = term_plan.LatePenalty()
    day = 86400
    assert plugin.late_submission_penalty("s", 10.0, 0) == 0.0
    # 1.5 days late: two days begun, 20%
    assert plugin.late_submission_penalty("s", 10.0, 1.5 * day) == pytest.approx(2.0)
    assert plugin.late_submission_penalty("s", 10.0, 7 * day) == pytest.approx(7.0)
    assert plugin.late_submission_penalty("s", 10.0, 8 * day) == 10.0  # after 7 days: 0 points
    with pytest.raises(ValueError, match="total_seconds_late"):
        plugin.late_submission_penalty("s", 10.0, -1)
    assert term_plan.penalty_fraction(1.5) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="days_late"):
        term_plan.penalty_fraction(-1)


def test_plan_covers_the_book():
    toc = (ROOT / "_toc.yml").read_text()
    assert term_plan.chapters() == re.findall(r"notebooks/(\d\d_\w+)", toc)
    weeks = [w for w, _ in term_plan.WEEKS]
    assert weeks == list(range(1, 14))  # 13 weeks
    for _, names in term_plan.WEEKS:  # two 90-minute lectures a week at most
        assert sum(term_plan.CLASS_MINUTES[n[:2]] for n in names) <= 180
    # the class and home times are the teachers' page's
    page = (ROOT / "book" / "teachers.md").read_text()
    times = re.findall(r"^\| (\d+) [^|]+\|[^|]+\| (\d+) min \| ([^|(]+) \(", page, flags=re.M)
    assert len(times) == 18
    home = term_plan.home_minutes()
    for number, minutes, shown in times:
        key = f"{int(number):02d}"
        assert term_plan.CLASS_MINUTES[key] == int(minutes)
        assert term_plan._minutes(home[key]) == shown.strip()


def test_page_shows_the_table():
    page = (ROOT / "book" / "teachers.md").read_text()
    assert term_plan.table() in page


def test_schedule_and_bad_input():
    rows = term_plan.schedule("2027-01-11", "Europe/Berlin")
    assert len(rows) == 18
    first, last = rows[0], rows[-1]
    assert first["release"].isoformat() == "2027-01-11T09:00:00+01:00"
    assert first["due"].isoformat() == "2027-01-24T23:59:00+01:00"
    assert last["chapter"] == "18_attention_at_scale" and last["due"].date() == dt.date(2027, 4, 11)
    with pytest.raises(ValueError, match="start: expected a Monday"):
        term_plan.schedule("2027-01-12")
    with pytest.raises(ValueError, match="start: expected a date"):
        term_plan.schedule("next monday")
    with pytest.raises(ValueError, match="tz: expected an IANA time zone"):
        term_plan.schedule("2027-01-11", "Mars/Olympus")


def test_a_course_order_dates_its_chapters_one_a_week(tmp_path):
    """Lecturer review s33, M3: a course on chapters 10, 15, 7 and 11, in that order."""
    from nbgrader.api import Gradebook

    rows = term_plan.schedule("2026-11-23", "Europe/Berlin", order=["10", "15", "7", "11"])
    assert [(r["week"], r["chapter"][:2]) for r in rows] == [
        (1, "10"),
        (2, "15"),
        (3, "07"),
        (4, "11"),
    ]
    assert rows[0]["due"].isoformat() == "2026-12-06T23:59:00+01:00"
    assert rows[-1]["due"].date() == dt.date(2026, 12, 27)
    for bad, message in [(["10", "10"], "given twice"), (["19"], "not a chapter"), ("10", "list")]:
        with pytest.raises((ValueError, TypeError), match=message):
            term_plan.schedule("2026-11-23", order=bad)
    db = tmp_path / "gradebook.db"
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = "attention-book"\n'
        f'c.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    for chapter in ["07_multi_head_attention", "10_subword_tokenization"]:
        (tmp_path / "source" / chapter).mkdir(parents=True)
    rows = term_plan.write_deadlines(tmp_path, "2026-11-23", order=["10", "07"])
    assert [(r["week"], r["chapter"][:2]) for r in rows] == [(1, "10"), (2, "07")]
    with Gradebook(f"sqlite:///{db}", course_id="attention-book") as gb:
        due = {a.name[:2]: a.duedate for a in gb.assignments}
    assert due == {"10": dt.datetime(2026, 12, 6, 23, 59), "07": dt.datetime(2026, 12, 13, 23, 59)}
    with pytest.raises(ValueError, match="07_multi_head_attention have no week"):
        term_plan.write_deadlines(tmp_path, "2026-11-23", order=["10"])


def test_late_policy_in_nbgrader_autograde(tmp_path):
    """nbgrader's own autograde, on a one-cell course, applies the policy the deadlines command set."""
    import subprocess

    import nbformat

    name = A
    folder = tmp_path / "source" / name
    folder.mkdir(parents=True)
    answer = nbformat.v4.new_code_cell("x = 1\n### BEGIN SOLUTION\nx = 2\n### END SOLUTION")
    test = nbformat.v4.new_code_cell("assert x == 2")
    meta = dict(solution=False, locked=False, schema_version=3)
    answer.metadata["nbgrader"] = {**meta, "solution": True, "grade": False, "grade_id": "a"}
    test.metadata["nbgrader"] = {
        **meta,
        "locked": True,
        "grade": True,
        "grade_id": "t",
        "points": 10,
    }
    nb = nbformat.v4.new_notebook()
    nb.cells = [answer, test]
    nbformat.write(nb, folder / f"{name}.ipynb")
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = "attention-book"\n'
        f'c.CourseDirectory.root = "{tmp_path}"\nc.CourseDirectory.db_url = "sqlite:///{tmp_path}/gradebook.db"\n'
    )
    term_plan.main(
        ["deadlines", "--course", str(tmp_path), "--start", "2027-01-11", "--tz", "Europe/Berlin"]
    )
    bin = Path(sys.executable).parent
    subprocess.run([bin / "nbgrader", "generate_assignment", name], cwd=tmp_path, check=True)
    submitted = tmp_path / "submitted" / "bob" / name
    submitted.mkdir(parents=True)
    nbformat.write(nb, submitted / f"{name}.ipynb")  # the worked solution: 10 of 10 points
    # due Sunday 2027-01-24 23:59 CET; handed in on Tuesday 11:00 CET, 1.46 days late
    (submitted / "timestamp.txt").write_text("2027-01-26 10:00:00.000000 UTC")
    subprocess.run([bin / "nbgrader", "autograde", name], cwd=tmp_path, check=True)
    moodle = tmp_path / "moodle.csv"
    export_grades.main(["--course", str(tmp_path), "--moodle", str(moodle)])
    assert _read(moodle) == [["Username", name], ["bob", "8"]]  # 10 points less 20%


def test_deadlines_into_nbgrader(tmp_path):
    from nbgrader.api import Gradebook
    from traitlets.config.loader import PyFileConfigLoader

    config = tmp_path / "nbgrader_config.py"
    db = tmp_path / "gradebook.db"
    config.write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = "attention-book"\n'
        f'c.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    term_plan.main(
        ["deadlines", "--course", str(tmp_path), "--start", "2027-01-11", "--tz", "Europe/Berlin"]
    )
    term_plan.main(
        ["deadlines", "--course", str(tmp_path), "--start", "2027-01-11", "--tz", "Europe/Berlin"]
    )
    text = config.read_text()
    assert text.count(term_plan.MARK_BEGIN) == 1  # a second run replaces the block
    loaded = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    assert loaded.AssignLatePenalties.plugin_class.__name__ == "LatePenalty"
    with Gradebook(f"sqlite:///{db}", course_id="attention-book") as gb:
        due = {a.name: a.duedate for a in gb.assignments}
    assert len(due) == 18
    assert due[A] == dt.datetime(2027, 1, 24, 22, 59)  # 23:59 in Berlin, stored in UTC
    assert term_plan.course_zone(tmp_path) == "Europe/Berlin"  # extend prints its dates there
    with pytest.raises(ValueError, match="course: expected a course folder"):
        term_plan.write_deadlines(tmp_path / "nowhere", "2027-01-11")


def test_a_course_of_two_chapters_gets_two_deadlines(tmp_path):
    """Lecturer review s9: deadlines added all 18 chapters to a course that has two."""
    from nbgrader.api import Gradebook

    db = tmp_path / "gradebook.db"
    (tmp_path / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = "attention-book"\n'
        f'c.CourseDirectory.db_url = "sqlite:///{db}"\n'
    )
    chapters = ["02_attention_as_soft_lookup", "09_the_transformer"]
    for chapter in chapters:
        (tmp_path / "source" / chapter).mkdir(parents=True)
    rows = term_plan.write_deadlines(tmp_path, "2027-01-11")
    assert [row["chapter"] for row in rows] == chapters
    with Gradebook(f"sqlite:///{db}", course_id="attention-book") as gb:
        assert sorted(a.name for a in gb.assignments) == chapters


def test_feedback_waits_for_the_late_period(gradebook):
    """Lecturer review s11, M5: feedback released while late work still counts shows a student who
    has not submitted which of the grader's cases each answer failed. The grader's output warns
    until the deadline plus the late policy's days; after it, and without a deadline, nothing."""
    (gradebook.parent / "nbgrader_config.py").write_text("c = get_config()\n")
    course = gradebook.parent
    closes = DUE + dt.timedelta(days=term_plan.ZERO_AFTER_DAYS)
    early = term_plan.feedback_too_early(course, A, now=DUE + dt.timedelta(days=1))
    assert early.startswith(f"not yet time for feedback: {A} was due 2026-01-24 22:59 UTC")
    assert f"until {closes:%Y-%m-%d %H:%M} UTC (7 days, the late policy)" in early
    assert term_plan.feedback_too_early(course, A, now=closes) is None
    assert term_plan.feedback_too_early(course, "05_not_in_the_gradebook", now=DUE) is None


def test_writing_the_course_again_keeps_the_term_plan(tmp_path, capsys):
    """Lecturer review s13: `make course GRADED=1` run again (to change a rubric) rewrote
    nbgrader_config.py without the term plan's block, dropping the late policy without a word."""
    import make_course

    course = tmp_path / "course"
    make_course.write_course(course, ["02"])
    term_plan.write_deadlines(course, "2027-01-11", tz="Europe/Berlin")
    config = course / "nbgrader_config.py"
    block = config.read_text().split(term_plan.MARK_BEGIN, 1)[1]
    block = term_plan.MARK_BEGIN + block.split(term_plan.MARK_END, 1)[0] + term_plan.MARK_END
    edited = block.replace("percent_per_day = 10.0", "percent_per_day = 5.0")
    assert edited != block  # a lecturer's own change to the policy
    config.write_text(config.read_text().replace(block, edited))
    capsys.readouterr()
    make_course.write_course(course, ["02"])
    text = config.read_text()
    assert text.count(term_plan.MARK_BEGIN) == 1 and edited in text
    assert "kept the term plan's deadlines and late policy" in capsys.readouterr().out
    assert term_plan.course_zone(course) == "Europe/Berlin"


def _quiet_grader(monkeypatch, *, flagged=None, repaired=None):
    """grade_course's _print_flags on its own: this run's flagged times and repairs as given, no
    refusals, no copies, no release advice, feedback not too early."""
    import grade_course
    import term_plan

    monkeypatch.setattr(grade_course, "FLAGGED", flagged or {})
    monkeypatch.setattr(grade_course, "REFUSED", {})
    monkeypatch.setattr(grade_course, "REPAIRED", repaired or {})
    monkeypatch.setattr(grade_course, "copy_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "code_copy_flags", lambda *a: [])
    monkeypatch.setattr(grade_course, "release_advice", lambda *a: None)
    monkeypatch.setattr(term_plan, "feedback_too_early", lambda *a: None)


def test_the_graders_flags_are_saved_and_the_export_warns_about_them(tmp_path, monkeypatch, capsys):
    """Lecturer review s15, M2: the copy flags lived only in grade_course.py's terminal output, and
    the export warned about none. They are saved in reports/, and export_grades warns per student."""
    import grade_course

    chapter = "06_self_attention"
    repair = "ex1_answer was in 2 cells: kept copy 1 (the last that defines the exercise's names)"
    _quiet_grader(monkeypatch, repaired={"alice": {"ex1_answer": repair}})  # s17, S3
    monkeypatch.setattr(
        grade_course, "copy_flags", lambda *a: ["frank ex2_written: like the model answer"]
    )
    monkeypatch.setattr(grade_course, "strong_and_weak", lambda flags: (flags, []))
    review = grade_course.Result("carol", "ex2_test", 1.0, 0.0, "needs manual review: ...", 0.1)
    review.review = True
    grade_course._print_flags(tmp_path, chapter, ["alice", "carol", "frank"], [review])
    assert "possible copies" in capsys.readouterr().out
    (text,) = (tmp_path / "reports").glob(f"{chapter}-*.txt")
    # in groups, one line per group (course review s27, M3)
    assert "ex2_written: 1 answer is near-verbatim the model answer: frank" in text.read_text()
    warnings = export_grades.flag_warnings(tmp_path / "reports", [chapter])
    assert len(warnings) == 3
    assert warnings[0].startswith(f"alice {chapter}: flagged when graded (notebook repaired: ex1_")
    assert warnings[1].startswith(f"carol {chapter}: flagged when graded (ex2_test needs manual")
    assert warnings[2].startswith(
        f"frank {chapter}: answers of 1 student are near-verbatim the model answer (flagged when"
        " graded;"
    )


def test_a_flagged_submission_time_reaches_the_flags_and_the_export(tmp_path, monkeypatch):
    """Lecturer review s33, m9: frank's timestamp.txt set back 336 minutes was caught, then said only
    in reports/*.txt, not in the flags file or the export's warnings."""
    import grade_course

    chapter = "07_multi_head_attention"
    why = "timestamp.txt says 2026-12-06 08:00:00 UTC, 336 min from the exchange's time (...)"
    _quiet_grader(monkeypatch, flagged={"frank": why})
    grade_course._print_flags(tmp_path, chapter, ["alice", "frank"], [])
    flags = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    said = "submission time flagged (timestamp.txt 336 min off the exchange's clock; the late"
    assert list(flags) == ["frank"] and flags["frank"][0].startswith(said), flags
    (warning,) = export_grades.flag_warnings(tmp_path / "reports", [chapter])
    assert warning.startswith(f"frank {chapter}: flagged when graded ({said}"), warning


def test_a_group_whose_order_is_known_says_it(tmp_path):
    """Lecturer review s33, m10: the export said "order unknown" where every pair's order was known
    but no one student was first of all."""
    reports = tmp_path / "reports"
    reports.mkdir()
    flags = {
        "alice": ["alike with gina; alice submitted first"],
        "bob": ["alike with gina; bob submitted first"],
        "gina": ["alike with alice; alice submitted first", "alike with bob; bob submitted first"],
    }
    (reports / f"{A}-flags.json").write_text(json.dumps(flags))
    (warning,) = export_grades.flag_warnings(reports, [A])
    assert warning.startswith(
        f"alice, bob and gina {A}: these 3 answers are alike (alice and bob submitted before gina;"
    ), warning


def test_a_submission_without_a_time_is_named_everywhere(gradebook, monkeypatch, capsys):
    """Lecturer review s16, S2: a notebook put in submitted/ by hand has no timestamp.txt, so
    nbgrader never finds it late and applies no penalty, silently. The grader's output and its saved
    report, ``term_plan.py penalties`` and the export each name it, with what to do; no time is
    made up for it."""
    import grade_course
    from nbgrader.api import Gradebook

    url = f"sqlite:///{gradebook}"
    course = gradebook.parent
    (course / "nbgrader_config.py").write_text(
        f'c = get_config()  # noqa: F821\nc.CourseDirectory.db_url = "{url}"\n'
    )
    with Gradebook(url) as gb:
        gb.add_submission(A, "carol")  # by hand: no timestamp.txt, so no time
        gb.find_grade("t1", A, A, "carol").auto_score = 2
        gb.db.commit()
    assert term_plan.untimed_submissions(url) == [(A, "carol")]
    said = term_plan.untimed_warning(A, "carol")
    assert said.startswith(f"carol {A}: submission time unknown")
    assert "no late penalty was applied" in said
    assert f"submitted/carol/{A}/timestamp.txt" in said
    assert f"grade_course.py {A} --student carol" in said

    term_plan.main(["penalties", "--course", str(course)])
    out = capsys.readouterr().out
    assert f"WARNING: carol {A}: submission time unknown" in out
    assert "1 submissions have no submission time and were not checked" in out
    with Gradebook(url) as gb:  # nothing invented: still no time, no penalty
        sub = gb.find_submission(A, "carol")
        assert sub.timestamp is None and sub.notebooks[0].late_submission_penalty is None

    warnings = export_grades.read_gradebook(gradebook).warnings
    assert [w for w in warnings if "submission time unknown" in w] == [said]

    # the export refuses while a time is unknown (lecturer review s22, S7), unless told to go on
    out = gradebook.parent / "canvas.csv"
    capsys.readouterr()
    assert export_grades.main(["--gradebook", str(gradebook), "--canvas", str(out)]) == 2
    err = capsys.readouterr().err
    assert not out.exists() and "no submission time" in err and f"carol {A}" in err
    assert "--allow-unknown-times" in err
    args = ["--gradebook", str(gradebook), "--canvas", str(out), "--allow-unknown-times"]
    assert export_grades.main(args) == 0 and out.exists()

    _quiet_grader(monkeypatch)
    grade_course._print_flags(course, A, ["alice", "bob", "carol"], [])
    assert f"WARNING: {said}" in capsys.readouterr().out
    (text,) = (course / "reports").glob(f"{A}-2*.txt")
    assert said in text.read_text()
    grade_course._print_flags(course, A, ["alice", "bob"], [])  # carol not in this run
    assert "submission time unknown" not in capsys.readouterr().out


def test_two_students_alike_are_one_problem_that_names_the_pair(tmp_path):
    """Lecturer review s23, M1: the export listed the honest first submitter as "source of copies"
    and counted her among the problems; a pair of alike answers is one problem, said of the pair."""
    reports = tmp_path / "reports"
    reports.mkdir()
    flags = {
        "alice": ["alike with dave; alice submitted first"],
        "dave": ["alike with alice; alice submitted first", "t1 needs manual review"],
        "frank": ["alike with grace; order unknown"],
        "grace": ["alike with frank; order unknown"],
        "carol": ["alike with the worked solution"],
    }
    (reports / f"{A}-flags.json").write_text(json.dumps(flags))
    warnings = export_grades.flag_warnings(reports, [A])
    assert len(warnings) == 4, warnings
    assert warnings[0].startswith(f"alice and dave {A}: answers alike (alice submitted first;")
    assert warnings[1].startswith(
        f"carol {A}: answers of 1 student are the book's worked solution (flagged when graded;"
    )
    assert warnings[2].startswith(f"dave {A}: flagged when graded (t1 needs manual review;")
    assert warnings[3].startswith(f"frank and grace {A}: answers alike (order unknown;")
    assert not [w for w in warnings if "possible copy" in w or "source of" in w]


def test_alike_answers_are_one_warning_per_group(tmp_path):
    """Course review s27, M3: 6 students gave 84 warnings, one per pair ("X and Y ... answers
    alike"), and one per student who used the book's worked solution; 40 students would give up to
    780 per exercise. Pairs that share a student are one group, one warning, with who submitted
    first where every order is known; the worked solution's students are one warning."""
    reports = tmp_path / "reports"
    reports.mkdir()
    flags = {
        "ann": ["alike with bo; ann submitted first", "alike with cy; ann submitted first"],
        "bo": ["alike with ann; ann submitted first", "alike with cy; bo submitted first"],
        "cy": ["alike with ann; ann submitted first", "alike with bo; bo submitted first"],
        "dan": ["alike with the worked solution"],
        "eve": ["alike with the worked solution", "alike with fay; order unknown"],
        "fay": ["alike with eve; order unknown", "alike with gus; fay submitted first"],
        "gus": ["alike with fay; fay submitted first", "alike with the worked solution"],
    }
    (reports / f"{A}-flags.json").write_text(json.dumps(flags))
    warnings = export_grades.flag_warnings(reports, [A])
    assert len(warnings) == 3, warnings
    assert warnings[0].startswith(
        f"ann, bo and cy {A}: these 3 answers are alike (ann submitted first;"
    )
    assert warnings[1].startswith(
        f"dan, eve and gus {A}: answers of 3 students are the book's worked solution (flagged when"
        " graded;"
    )
    assert "whether your course does is yours to decide" in warnings[1]
    assert warnings[2].startswith(
        f"eve, fay and gus {A}: these 3 answers are alike (order unknown;"
    )


def test_a_flag_whose_cell_has_a_manual_grade_is_not_pending(gradebook):
    """Lecturer review s22, M5: after the teacher gave a held test cell its grade in the gradebook,
    the export still said "flagged when graded (ex1_test needs manual review ...)"."""
    from nbgrader.api import Gradebook

    reports = gradebook.parent / "reports"
    reports.mkdir()
    flags = {
        "alice": ["t1 needs manual review", "possible copy"],
        "bob": ["t1 needs manual review"],
    }
    (reports / f"{A}-flags.json").write_text(json.dumps(flags))
    with Gradebook(f"sqlite:///{gradebook}") as gb:
        for student in ("alice", "bob"):
            gb.find_grade("t1", A, A, student).manual_score = 0
        gb.db.commit()
    warnings = [w for w in export_grades.read_gradebook(gradebook).warnings if "flagged" in w]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"alice {A}: flagged when graded (possible copy;"
    )
    assert "needs manual review" not in warnings[0]


def test_the_graders_flags_show_in_the_formgrader(gradebook):
    """Course review s27, m7: the Formgrader said `flagged: False` for every submission the grader
    flagged (the flags were in its output and reports/ only). The grader sets nbgrader's own flag
    on each flagged student's submitted notebook, and never clears one."""
    import grade_course
    from nbgrader.api import Gradebook

    course = gradebook.parent
    (course / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    # carol submitted nothing: no notebook to flag
    assert grade_course.flag_in_gradebook(course, A, ["alice", "carol"]) == ["alice"]
    assert grade_course.flag_in_gradebook(course, A, []) == []
    with Gradebook(f"sqlite:///{gradebook}") as gb:
        assert gb.find_submission_notebook(A, A, "alice").flagged is True
        assert gb.find_submission_notebook(A, A, "bob").flagged is False
        assert gb.find_submission_notebook(B, B, "alice").flagged is False
        # what the Formgrader's submitted_notebooks page reads
        assert sorted((s["student"], s["flagged"]) for s in gb.notebook_submission_dicts(A, A)) == [
            ("alice", True),
            ("bob", False),
        ]


def test_likeness_warnings_are_grouped_per_exercise(tmp_path, monkeypatch):
    """Lecturer review s41, m3: the export warned "alice, carol, ivan and judy 04: these 4 answers are
    alike", merging alice~ivan (exercise 1), alice~judy (exercises 2 and 3, and the code) and
    carol~ivan (exercise 3) into one group, which tied alice, honest, to carol's likeness with ivan.
    The grader's flags name the answers alike, and the export groups per answer, as the grader's
    report does: one warning per group, naming the answers it shares."""
    import grade_course

    chapter = "04_bahdanau_and_luong"
    runs = "(similarity 1.00, 12 runs of 8 words in common)"
    written = [
        f"alice ex1_written: like ivan's answer {runs}, alice first",
        f"alice ex2_written: like judy's answer {runs}, alice first",
        f"alice ex3_written: like judy's answer {runs}, alice first",
        f"carol ex3_written: like ivan's answer {runs}, carol first",
    ]
    code = ["alice ex2_answer: the same code as judy's (up to names), alice first"]
    _quiet_grader(monkeypatch)
    monkeypatch.setattr(grade_course, "copy_flags", lambda *a: list(written))
    monkeypatch.setattr(grade_course, "code_copy_flags", lambda *a: list(code))
    for name in ("book_numbers_flags", "edited_locked_cells", "typed_outputs"):
        monkeypatch.setattr(grade_course, name, lambda *a: [])
    monkeypatch.setattr(grade_course, "_flags", lambda *a: None)
    monkeypatch.setattr(grade_course, "worked_solutions_setting", lambda course: "flag")
    monkeypatch.setattr(grade_course, "flag_in_gradebook", lambda *a: [])
    grade_course._print_flags(tmp_path, chapter, ["alice", "carol", "ivan", "judy"], [])
    saved = json.loads((tmp_path / "reports" / f"{chapter}-flags.json").read_text())
    assert saved["alice"] == [
        "alike with ivan in ex1_written; alice submitted first",
        "alike with judy in ex2_answer, ex2_written, ex3_written; alice submitted first",
    ]
    warnings = export_grades.flag_warnings(tmp_path / "reports", [chapter])
    assert [w.split(": ", 1)[0] for w in warnings] == [
        f"alice and ivan {chapter} ex1_written",
        f"alice and judy {chapter} ex2_answer, ex2_written, ex3_written",
        f"carol and ivan {chapter} ex3_written",
    ], warnings
    assert all("answers alike (" in w and "these 4" not in w for w in warnings), warnings
    # a group of three in one exercise is still one warning; an older grader's flags, which name
    # no answer, are grouped as before
    flags = {
        "ann": ["alike with bo in ex1_written; ann submitted first"],
        "bo": [
            "alike with ann in ex1_written; ann submitted first",
            "alike with cy in ex1_written; bo submitted first",
        ],
        "cy": ["alike with bo in ex1_written; bo submitted first"],
        "dan": ["alike with eve; dan submitted first"],
        "eve": ["alike with dan; dan submitted first"],
    }
    (tmp_path / "reports" / f"{chapter}-flags.json").write_text(json.dumps(flags))
    warnings = export_grades.flag_warnings(tmp_path / "reports", [chapter])
    assert [w.split(" (", 1)[0] for w in warnings] == [
        f"ann, bo and cy {chapter} ex1_written: these 3 answers are alike",
        f"dan and eve {chapter}: answers alike",
    ], warnings
