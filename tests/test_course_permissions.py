"""A graded course is its instructor's alone (lecturer review r3, problem 4): ``make course GRADED=1``
(``--private-cases``) leaves the course folder 0700, its instructor folders 0700 and the gradebook
0600, and warns loudly when nbgrader's exchange is inside the course folder (the default), where the
course folder must stay passable (0711) for the students to reach it."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("outside", [True, False])
def test_a_graded_course_is_private(tmp_path, capsys, outside):
    out = tmp_path / "course"
    exchange = tmp_path / "srv" / "exchange" if outside else None
    out.mkdir()
    (out / "gradebook.db").write_bytes(b"")  # as nbgrader left it, when the course is written again
    (out / "gradebook.db").chmod(0o644)
    make_course.write_course(out, ["02"], exchange, True, private_cases=True)
    err = capsys.readouterr().err
    assert _mode(out) == (0o700 if outside else 0o711)
    for name in make_course.PRIVATE_FOLDERS:
        assert _mode(out / name) == 0o700, name
    assert _mode(out / "gradebook.db") == 0o600
    assert _mode(exchange or out / "exchange") == 0o1777  # every student writes there
    assert ("WARNING: nbgrader's exchange" in err) != outside
    if not outside:
        assert "make course GRADED=1 EXCHANGE=/srv/nbgrader/exchange" in err
        # lecturer review s32, m5: the flag too, for the path without make
        assert "adding to this command:\n!!!     --exchange /srv/nbgrader/exchange\n" in err


def test_an_ungraded_course_keeps_its_permissions(tmp_path, capsys):
    out = tmp_path / "course"
    make_course.write_course(out, ["02"])
    assert _mode(out / "source") & 0o055 and "WARNING" not in capsys.readouterr().err


def test_the_teachers_page_says_what_the_default_does():
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert "`make course GRADED=1` makes the course folder readable by you alone" in page


def test_the_gradebook_nbgrader_wrote_is_set_back_to_0600(tmp_path, capsys):
    """Lecturer review r4, problem 1: nbgrader writes gradebook.db with the umask's 0644; the tools
    that write the gradebook of a graded course (grade_course.py, term_plan.py) set it back to 0600,
    and make course leaves an empty 0600 gradebook that nbgrader fills and keeps 0600."""
    out = tmp_path / "course"
    make_course.write_course(out, ["02"], None, True, private_cases=True)
    capsys.readouterr()
    assert _mode(out / "gradebook.db") == 0o600 and (out / "gradebook.db").stat().st_size == 0
    assert _mode(out / "nbgrader_config.py") == 0o600
    assert make_course.is_graded(out)
    for name in ("gradebook.db", "nbgrader_config.py"):  # as a 0644 umask would leave them
        (out / name).chmod(0o644)
    import term_plan

    term_plan.main(["penalties", "--course", str(out)])
    assert _mode(out / "gradebook.db") == 0o600 and _mode(out / "nbgrader_config.py") == 0o600
    (out / "gradebook.db").chmod(0o644)
    set_ = make_course.protect_files(out)  # what tools/grade_course.py calls after grading
    assert out / "gradebook.db" in set_ and _mode(out / "gradebook.db") == 0o600


def test_an_ungraded_course_gradebook_is_left_alone(tmp_path):
    out = tmp_path / "course"
    make_course.write_course(out, ["02"])
    (out / "gradebook.db").write_bytes(b"")
    (out / "gradebook.db").chmod(0o644)
    assert make_course.protect_files(out) == [] and _mode(out / "gradebook.db") == 0o644


def test_grade_course_protects_the_gradebook():
    text = (ROOT / "tools" / "grade_course.py").read_text()
    assert "protect_files(course)" in text


def test_the_page_says_that_inbound_folders_are_world_writable():
    """Lecturer review s22, M12: nbgrader submit creates each submission's folder in inbound/ with
    mode 0777; the page says so, and what a hub's teacher does about it."""
    page = " ".join(
        (Path(__file__).resolve().parents[1] / "book" / "teachers.md").read_text().split()
    )
    assert "world-writable, 0777" in page and "collect soon after the deadline" in page
