"""The course's grades in the layouts Canvas and Moodle import (issue 36, item 7).

    python tools/export_grades.py --course course --canvas canvas.csv --moodle moodle.csv
    python tools/export_grades.py --gradebook course/gradebook.db --canvas canvas.csv \\
        --roster canvas_export.csv --canvas-ids assignment_ids.csv

Reads nbgrader's gradebook (``gradebook.db``, with nbgrader's own API) and writes, for each student and
each assignment (a chapter), the score nbgrader's ``export`` gives: the notebook's points (automatic and
manual) less the late penalty, 0 where nothing was submitted once the deadline has passed, and blank
(no grade, not a failing one) where nothing was submitted and the deadline has not passed yet. An
assignment that has no points yet (its deadline is set, but ``nbgrader generate_assignment`` has not
been run for it) is left out, unless ``--assignment`` names it.

It refuses to export while ``tools/grade_course.py`` is grading a chapter, or after a grading run
was interrupted (its marker, ``course/grading-CHAPTER.lock``, is still there: the gradebook holds a
part of the run); ``--force`` exports all the same.

It warns (on stderr, and exports all the same) about a submission whose answers still need a manual
grade (the written answers, or an answer ``grade_course.py`` marked for manual review: the export
counts them as 0), about a score above its cell's maximum (a typing slip in the Formgrader), and
about a submission collected into ``submitted/`` that has no grade yet.

- **Canvas** (*Grades, Import*): the columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then
  one column per assignment, ``<name> (<Canvas assignment id>)``; the second row is ``Points
  Possible``. Canvas matches a row to a student by ``ID`` or the SIS columns: with ``--roster`` (the CSV
  of Canvas's own *Export*), each nbgrader student id is looked up in the roster's ``SIS Login ID``
  in any case, ``Judy`` for ``judy`` (``--match`` picks another column) and the row gets the roster's five columns; without it, the
  student id goes into ``SIS Login ID``. With ``--canvas-ids`` (a CSV ``assignment,canvas_id``), the
  header names Canvas's assignment; without it the header is the chapter's name alone, and Canvas
  creates a new assignment of that name on import.
- **Moodle** (*Grades, Import, CSV file*): an identifier column (``Username``, the nbgrader student id,
  or ``Email address``, with ``--moodle-id email``), then one column per grade item, named after the
  assignment; Moodle maps the identifier and each column to its grade items on import.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# nbgrader's Gradebook runs the `alembic` script it finds on PATH: the one beside this Python,
# also when it is run as .venv/bin/python without the environment activated
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_IDS = {"username": "Username", "email": "Email address"}


@dataclass
class Grades:
    """What the exports need from the gradebook: students, assignments and their maximum, scores."""

    students: list[dict]  # {"id", "first_name", "last_name", "email"}, ordered by id
    assignments: list[tuple[str, float]]  # (name, max_score), ordered by name
    # (student, assignment): None where nothing was submitted and the deadline has not passed
    scores: dict[tuple[str, str], float | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # what a teacher should see before importing
    # "student assignment" of each submission without a submission time (put in submitted/ by hand):
    # never checked against its deadline (lecturer review s22, S7)
    untimed: list[str] = field(default_factory=list)


def read_gradebook(
    gradebook: str | Path, assignments: list[str] | None = None, now: dt.datetime | None = None
) -> Grades:
    """The grades in nbgrader's gradebook: a path to gradebook.db or an SQLAlchemy URL. ``now`` (UTC,
    naive as nbgrader's deadlines; default the clock) decides which deadlines have passed."""
    from nbgrader.api import Gradebook, MissingEntry

    if not isinstance(gradebook, (str, Path)):
        raise TypeError(f"gradebook: expected a path or a URL, got {type(gradebook).__name__}")
    url = str(gradebook)
    if "://" not in url:
        if not Path(url).is_file():  # nbgrader would create an empty gradebook there
            raise ValueError(f"gradebook: expected nbgrader's gradebook.db, no file at {url}")
        url = f"sqlite:///{Path(url).resolve()}"
    with Gradebook(url) as gb:
        names = sorted(a.name for a in gb.assignments)
        if (
            assignments is None
        ):  # an assignment with no points is not generated yet (deadlines only)
            names = [n for n in names if gb.find_assignment(n).max_score > 0]
        else:
            unknown = [a for a in assignments if a not in names]
            if unknown:
                raise ValueError(f"assignments: {unknown} not in the gradebook, which has {names}")
            names = [n for n in names if n in assignments]
        grades = Grades(
            students=[
                {
                    "id": s.id,
                    "first_name": s.first_name or "",
                    "last_name": s.last_name or "",
                    "email": s.email or "",
                }
                for s in sorted(gb.students, key=lambda s: s.id)
            ],
            assignments=[(n, float(gb.find_assignment(n).max_score)) for n in names],
        )
        graded_by_hand = set()  # (student, assignment, cell) with a manual grade
        in_gradebook = set()  # (student, assignment) with a submission in the gradebook
        now = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        due = {n: gb.find_assignment(n).duedate for n in names}
        for student in grades.students:
            for name in names:
                try:
                    sub = gb.find_submission(name, student["id"])
                except MissingEntry:
                    not_yet = due[name] is not None and due[name] > now
                    score = None if not_yet else 0.0
                else:
                    in_gradebook.add((student["id"], name))
                    score = max(0.0, sub.score - (sub.late_submission_penalty or 0.0))
                    grades.warnings += _submission_warnings(sub, student["id"], name)
                    graded_by_hand |= {
                        (student["id"], name, g.name)
                        for notebook in sub.notebooks
                        for g in notebook.grades
                        if g.manual_score is not None
                    }
                    if sub.timestamp is None and sub.duedate is not None:
                        grades.untimed.append(f"{student['id']} {name}")
                grades.scores[student["id"], name] = score
    if "://" not in str(gradebook):
        reports = Path(gradebook).resolve().parent / "reports"
        grades.warnings += flag_warnings(reports, names, graded_by_hand)
        grades.warnings += collected_not_graded(
            Path(gradebook).resolve().parent, names, in_gradebook
        )
    return grades


def collected_not_graded(course: Path, names: list[str], graded: set[tuple[str, str]]) -> list[str]:
    """A warning for each submission collected into ``course/submitted/`` (``nbgrader collect`` or
    ``zip_collect``) of an assignment of ``names`` that the gradebook has no grade of yet: the
    export leaves it out, or counts it as missing work (lecturer review s29, m4)."""
    folder = course / "submitted"
    if not folder.is_dir():
        return []
    said = []
    for student in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for name in names:
            if (student, name) in graded or not any((folder / student / name).glob("*.ipynb")):
                continue
            said.append(
                f"{student} {name}: collected (submitted/{student}/{name}) but not graded yet, so "
                f"the export leaves it out or counts it as missing: grade it "
                f"(python tools/grade_course.py {name} --student {student})"
            )
    return said


def grading_markers(gradebook: str | Path, assignments: list[str] | None = None) -> list[str]:
    """A sentence for each grading run (``tools/grade_course.py``) that is going on, or was
    interrupted, in the course folder of ``gradebook`` (its markers, ``tools/grading_marker.py``);
    none for a gradebook given by URL."""
    if "://" in str(gradebook):
        return []
    tools = str(Path(__file__).resolve().parent)
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import grading_marker

    course = Path(gradebook).resolve().parent
    return [grading_marker.describe(m) for m in grading_marker.markers(course, assignments)]


def flag_warnings(
    reports: Path, assignments: list[str], graded_by_hand: set[tuple[str, str, str]] = frozenset()
) -> list[str]:
    """The students tools/grade_course.py flagged (possible copies, answers for manual review), from
    its ``reports/<chapter>-flags.json`` (lecturer review s15, M2: an export with the worked solutions
    copied verbatim gave no warning). A cell held for manual review that now has a manual grade
    (``graded_by_hand``: (student, assignment, cell)) is no longer pending (lecturer review s22, M5)."""
    found = []
    for name in assignments:
        saved = reports / f"{name}-flags.json"
        if not saved.is_file():
            continue
        read = reviewed(reports, name)  # marked reviewed: silent (lecturer review s29, M2)
        # {the pair: who submitted first, or "order unknown"}, and {the pair: its answers alike}
        pairs: dict[tuple[str, str], str] = {}
        answers: dict[tuple[str, str], set[str]] = {}
        book: dict[str, list[str]] = {}  # {"the worked solution": its students}
        single = []
        for student, flags in sorted(json.loads(saved.read_text()).items()):
            held = [re.fullmatch(r"(\S+) needs manual review", flag) for flag in flags]
            flags = [
                flag
                for flag, match in zip(flags, held)
                if (not match or (student, name, match[1]) not in graded_by_hand)
                and flag not in read.get(student, ())
            ]
            # two students alike: one problem, the pair's, naming no one's role (lecturer review
            # s23, M1); pairs that share a student are one group (course review s27, M3)
            for flag in flags:
                pair = PAIR_FLAG.fullmatch(flag)
                if pair:
                    key = tuple(sorted((student, pair[1])))
                    pairs.setdefault(key, pair[3])
                    # a flag of an older grader names no answer: its pairs are grouped together
                    answers.setdefault(key, set()).update((pair[2] or "").split(", "))
                elif flag in BOOK_FLAGS:
                    book.setdefault(flag.removeprefix("alike with "), []).append(student)
            flags = [f for f in flags if f not in BOOK_FLAGS and not PAIR_FLAG.fullmatch(f)]
            if flags:
                single.append(
                    (
                        student,
                        f"{student} {name}: flagged when graded ({'; '.join(flags)}; "
                        f"reports/{name}-<date>.txt says why): read it before importing",
                    )
                )
        for what, students in sorted(book.items()):
            n, names = len(students), _names(students)
            found.append(
                (
                    students[0],
                    # students, not answers: a student's flag stands for one answer or more
                    # (lecturer review s32, m9: "1 answer" for eve's three)
                    f"{names} {name}: answers of {n} student{'' if n == 1 else 's'} are {BOOK[what]} "
                    f"(flagged when graded; reports/{name}-<date>.txt says which): "
                    + BOOK_ADVICE[what],
                )
            )
        # students whose likeness the teacher marked reviewed: a `--student` regrade of another
        # student alike with them raises their group again; the warning is about the new one
        # (lecturer review s33, M4)
        seen = {s for s, flags in read.items() if any(f.startswith("alike with ") for f in flags)}
        for group, grade_ids in _groups_per_answer(answers):
            inside = {
                p: first
                for p, first in pairs.items()
                if set(p) <= group and answers[p] & set(grade_ids)
            }
            new = sorted(group - seen)
            if new and group & seen and all(set(p) & set(new) for p in inside):
                old = sorted(group & seen)
                found.append(
                    (
                        new[0],
                        f"{_names(new)} {name}: answers alike with {_names(old)}'s, whose likeness "
                        f"you marked reviewed (reports/{name}-<date>.txt says which): read "
                        f"{'it' if len(new) == 1 else 'them'} before importing",
                    )
                )
                continue
            found.append((min(group), _alike(name, sorted(group), inside, grade_ids)))
        found += single
    return [line for _, line in sorted(found, key=lambda x: (x[0], x[1]))]


def reviewed(reports: Path, chapter: str) -> dict[str, list[str]]:
    """{student: flags} of ``chapter`` that the teacher marked reviewed (``reports/<chapter>-
    reviewed.json``, written by :func:`mark_reviewed` or by hand): later exports do not warn of them
    again (lecturer review s29, M2: every export repeated 14 to 21 warnings already read). A flag a
    later grading run raises anew, in other words, warns again."""
    path = reports / f"{chapter}-reviewed.json"
    if not path.is_file():
        return {}
    found = json.loads(path.read_text())
    if not isinstance(found, dict):
        raise ValueError(f"{path}: expected {{student: [flags]}}, got {type(found).__name__}")
    return found


def mark_reviewed(reports: Path, chapter: str, students: list[str] | None = None) -> list[str]:
    """Mark the flags that tools/grade_course.py raised in ``chapter`` (its ``reports/<chapter>-
    flags.json``) as read, for ``students`` (default: all): they go into ``reports/<chapter>-
    reviewed.json``, and later exports stop warning about them. Returns a line per student."""
    saved = reports / f"{chapter}-flags.json"
    if not saved.is_file():
        raise ValueError(f"chapter: no flags to mark reviewed for {chapter} (no {saved})")
    flags = json.loads(saved.read_text())
    unknown = sorted(set(students or ()) - set(flags))
    # "--reviewed 04_... 09_... 17_...": chapters where students go (lecturer review s31, m5: the
    # message read "04_... has no flags for 09_..., 17_...")
    chapters = [
        u for u in unknown if re.match(r"\d\d_", u) or (reports / f"{u}-flags.json").exists()
    ]
    if chapters:
        raise ValueError(
            f"students: {', '.join(chapters)} "
            + (
                "is a chapter, not a student"
                if len(chapters) == 1
                else "are chapters, not students"
            )
            + f" of {chapter}'s flags: --reviewed takes one chapter, then its students"
            " (default all); one chapter per call"
        )
    if unknown:
        raise ValueError(f"students: {chapter} has no flags for {', '.join(unknown)}")
    read = reviewed(reports, chapter)
    said = []
    for student in sorted(students or flags):
        read[student] = sorted(set(read.get(student, [])) | set(flags[student]))
        said.append(f"{student} {chapter}: {len(flags[student])} flags marked reviewed")
    path = reports / f"{chapter}-reviewed.json"
    path.write_text(json.dumps(read, indent=1, sort_keys=True) + "\n")
    path.chmod(0o600)
    return said


# a student's flag about the book's own answer (tools/grade_course.py's _print_flags), and how the
# export says it of a group (course review s27, M3)
BOOK = {
    "the worked solution": "the book's worked solution",
    "the model answer": "near-verbatim the model answer",
}
BOOK_FLAGS = {f"alike with {what}" for what in BOOK}
# what a warning about the book's answers advises, for each (lecturer review s32, M1: one advice, the
# worked solutions', for a written answer copied from the model answer too)
BOOK_ADVICE = {
    "the worked solution": "the book lets its readers use its worked solutions: whether your course"
    " does is yours to decide, once for the course with tools/make_course.py --worked-solutions"
    " allowed (no flag) or zero (no points) (the teachers' page, *Running the course with"
    " nbgrader*, before the weekly checklist)",
    "the model answer": "a written answer in the model answer's words: grade it by the rubric, which"
    " asks for the student's own claim and reason (the teachers' page, *What the public book gives"
    " away*)",
}


def _names(students: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(students[:-1]), students[-1]] if len(students) > 1 else students)


def _groups(pairs: list[tuple[str, str]]) -> list[set[str]]:
    """The students linked by ``pairs``, one set per group (each alike with at least one other)."""
    groups: list[set[str]] = []
    for a, b in pairs:
        joined = [g for g in groups if a in g or b in g]
        groups = [g for g in groups if g not in joined] + [set().union({a, b}, *joined)]
    return groups


def _groups_per_answer(
    answers: dict[tuple[str, str], set[str]],
) -> list[tuple[set[str], list[str]]]:
    """The groups of :func:`_groups`, formed in each answer (grade id) apart, each with the answers
    it is alike in: (students, grade ids), one entry per group however many answers it shares
    (lecturer review s41, m3: alice~ivan in ex1_written, alice~judy in ex2 and carol~ivan in
    ex3_written were one group of four, which tied alice to ivan's likeness with carol). Pairs of an
    older grader's flags, which name no answer (grade id ""), are grouped together as before."""
    per_answer: dict[str, list[tuple[str, str]]] = {}
    for pair, grade_ids in answers.items():
        for grade_id in grade_ids:
            per_answer.setdefault(grade_id, []).append(pair)
    found: dict[frozenset[str], list[str]] = {}
    for grade_id, pairs in sorted(per_answer.items()):
        for group in _groups(pairs):
            found.setdefault(frozenset(group), []).append(grade_id)
    return [(set(group), ids) for group, ids in found.items()]


# a flag of two students alike (tools/grade_course.py's pair_flag): the other, the answers alike
# (absent in an older grader's flags), who submitted first
PAIR_FLAG = re.compile(r"alike with (?!the )(\S+?)(?: in (\S+(?:, \S+)*))?; (.+)")


def _alike(
    name: str,
    students: list[str],
    pairs: dict[tuple[str, str], str],
    grade_ids: list[str] | None = None,
) -> str:
    """One warning for a group of alike answers: the pair as before, a larger group as one line with
    the student who submitted first where every pair's order is known; the answers alike named
    after the chapter where the flags name them."""
    named = [g for g in grade_ids or [] if g]
    where = f" {', '.join(named)}" if named else ""
    later = {b if first == f"{a} submitted first" else a for (a, b), first in pairs.items()}
    known = all(first != "order unknown" for first in pairs.values())
    earliest = [s for s in students if s not in later]
    order = f"{earliest[0]} submitted first" if known and len(earliest) == 1 else "order unknown"
    if known and len(earliest) > 1:  # each pair's order known, not one first (lecturer review s33,
        # m10: "order unknown" where the grader said "in the order submitted")
        order = f"{_names(earliest)} submitted before {_names([s for s in students if s in later])}"
    if len(students) == 2:
        order = next(iter(pairs.values()))
        return (
            f"{_names(students)} {name}{where}: answers alike ({order}; reports/{name}-<date>.txt "
            "says which): read them before importing"
        )
    return (
        f"{_names(students)} {name}{where}: these {len(students)} answers are alike ({order}; "
        f"reports/{name}-<date>.txt says which): read them before importing"
    )


def _submission_warnings(sub, student: str, name: str) -> list[str]:
    """What is wrong with a submission's grades for an export: answers still to grade by hand, scores
    above their cell's maximum."""
    grades = [g for notebook in sub.notebooks for g in notebook.grades]
    ungraded = sorted(
        g.name
        for g in grades
        if g.max_score > 0 and g.needs_manual_grade and g.manual_score is None
    )
    found = []
    if sub.timestamp is None and sub.duedate is not None:  # lecturer review s16, S2
        from term_plan import untimed_warning

        found.append(untimed_warning(name, student))
    if ungraded:
        answers = (
            "1 answer still needs" if len(ungraded) == 1 else f"{len(ungraded)} answers still need"
        )
        found.append(
            f"{student} {name}: {answers} a manual grade, exported as 0 ({', '.join(ungraded)})"
        )
    for g in grades:
        if g.score is not None and g.score > g.max_score + 1e-9:
            found.append(
                f"{student} {name}: {g.name} has {_number(g.score)} points, more than its "
                f"maximum {_number(g.max_score)}"
            )
    return found


def _number(x: float | None) -> str:
    """A grade as the CSV holds it; None (not due yet) is a blank cell."""
    if x is None:
        return ""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _read_csv(path: Path, what: str) -> list[dict]:
    if not Path(path).is_file():
        raise ValueError(f"{what}: no file at {path}")
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def unmatched(grades: Grades, roster: list[dict], match: str = "SIS Login ID") -> list[str]:
    """The students of the gradebook with no row of the roster whose ``match`` column is their id
    (in any case: see :func:`roster_by_id`)."""
    keys = {r[match].strip().casefold() for r in roster if r.get(match)}
    return [s["id"] for s in grades.students if s["id"].casefold() not in keys]


def roster_by_id(roster: list[dict], match: str = "SIS Login ID") -> dict[str, dict]:
    """The roster's rows by their ``match`` column, case-folded: an SIS login is often upper- or
    mixed-case (``Judy``) where the hub's user name, nbgrader's id, is lower-case (``judy``)."""
    by_key: dict[str, dict] = {}
    for row in roster:
        key = (row.get(match) or "").strip().casefold()
        if key and key in by_key:
            raise ValueError(
                f"roster: two rows whose {match!r} differ only in case ({row[match]!r})"
            )
        if key:
            by_key[key] = row
    return by_key


def canvas_rows(
    grades: Grades,
    roster: list[dict] | None = None,
    match: str = "SIS Login ID",
    canvas_ids: dict[str, str] | None = None,
    skip_unmatched: bool = False,
) -> list[list[str]]:
    """Canvas's gradebook import: the header, the "Points Possible" row, one row per student (with
    ``skip_unmatched``, none for a student the roster does not have: see :func:`unmatched`)."""
    canvas_ids = canvas_ids or {}
    unknown = sorted(set(canvas_ids) - {n for n, _ in grades.assignments})
    if unknown:
        raise ValueError(f"canvas_ids: assignments {unknown} are not in the gradebook")
    header = CANVAS_FIXED + [
        f"{name} ({canvas_ids[name]})" if name in canvas_ids else name
        for name, _ in grades.assignments
    ]
    rows = [
        header,
        ["    Points Possible", "", "", "", ""] + [_number(m) for _, m in grades.assignments],
    ]
    by_key = {}
    if roster is not None:
        if roster and match not in roster[0]:
            raise ValueError(
                f"match: the roster has no column {match!r} (its columns: {list(roster[0])})"
            )
        by_key = roster_by_id(roster, match)
        missing = [s["id"] for s in grades.students if s["id"].casefold() not in by_key]
        if missing and not skip_unmatched:
            raise ValueError(
                f"roster: no row whose {match!r} is one of the students {missing} (a test account, "
                "a student who left, another spelling? --skip-unmatched leaves them out)"
            )
    for s in grades.students:
        if roster is not None and s["id"].casefold() not in by_key:
            continue
        if roster is not None:
            fixed = [by_key[s["id"].casefold()].get(c, "") for c in CANVAS_FIXED]
        else:
            name = ", ".join(p for p in (s["last_name"], s["first_name"]) if p) or s["id"]
            fixed = [name, "", "", s["id"], ""]
        rows.append(fixed + [_number(grades.scores[s["id"], n]) for n, _ in grades.assignments])
    return rows


def moodle_rows(
    grades: Grades, identifier: str = "username", skip_unmatched: bool = False
) -> list[list[str]]:
    """Moodle's grade import: an identifier column, then one column per grade item (with
    ``skip_unmatched`` and ``email``, no row for a student without an e-mail)."""
    if identifier not in MOODLE_IDS:
        raise ValueError(f"identifier: expected one of {sorted(MOODLE_IDS)}, got {identifier!r}")
    if identifier == "email":
        missing = [s["id"] for s in grades.students if not s["email"]]
        if missing and not skip_unmatched:
            raise ValueError(
                f"identifier: 'email' needs every student's e-mail in the gradebook; none for {missing}"
                " (nbgrader db student import; --skip-unmatched leaves them out)"
            )
    key = "id" if identifier == "username" else "email"
    rows = [[MOODLE_IDS[identifier]] + [name for name, _ in grades.assignments]]
    for s in grades.students:
        if not s[key]:  # skip_unmatched: a student without an e-mail
            continue
        rows.append([s[key]] + [_number(grades.scores[s["id"], n]) for n, _ in grades.assignments])
    return rows


def write_csv(rows: list[list[str]], path: Path) -> None:
    """Write the export readable by its owner only (0600, as gradebook.db): the course folder is
    passable (0711) when the exchange is inside it, and the file's name is in the public book
    (lecturer review s21, S4). An existing file is truncated and set to 0600 too."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # os.open's mode applies only to a new file, and is masked by the umask
    with open(fd, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--course", type=Path, help="the course folder (its gradebook.db)")
    where.add_argument("--gradebook", help="gradebook.db, or an SQLAlchemy URL")
    parser.add_argument("--assignment", action="append", help="only these assignments (repeat)")
    parser.add_argument("--canvas", type=Path, help="write Canvas's import CSV here")
    parser.add_argument("--roster", type=Path, help="Canvas's own export (its student columns)")
    parser.add_argument(
        "--match", default="SIS Login ID", help="roster column holding nbgrader's ids"
    )
    parser.add_argument("--canvas-ids", type=Path, help="CSV assignment,canvas_id")
    parser.add_argument("--moodle", type=Path, help="write Moodle's import CSV here")
    parser.add_argument("--moodle-id", default="username", choices=sorted(MOODLE_IDS))
    parser.add_argument(
        "--skip-unmatched",
        action="store_true",
        help="leave out (and list) the students the roster, or Moodle's e-mail column, has no row for",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="export even while grade_course.py is grading a chapter, or its run was interrupted",
    )
    parser.add_argument(
        "--allow-unknown-times",
        action="store_true",
        help="export even while a submission has no submission time (not checked for lateness)",
    )
    parser.add_argument(
        "--reviewed",
        nargs="+",
        metavar=("CHAPTER", "STUDENT"),
        help="mark the flags of CHAPTER (of these students; default all) as read: later exports do"
        " not warn of them again",
    )
    args = parser.parse_args(argv)
    try:
        if args.reviewed:
            reports = (args.course or Path("course")) / "reports"
            for line in mark_reviewed(reports, args.reviewed[0], args.reviewed[1:] or None):
                print(line)
            if not (args.canvas or args.moodle):
                return 0
        return _export(args, parser)
    except ValueError as e:  # a roster or a table that does not fit: one line, not a traceback
        print(f"export_grades.py: error: {e}", file=sys.stderr)
        return 2


def _export(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not (args.canvas or args.moodle):
        parser.error("nothing to write: give --canvas and/or --moodle")
    gradebook = args.gradebook or (args.course or Path("course")) / "gradebook.db"
    running = grading_markers(gradebook, args.assignment)
    if running and not args.force:
        # points not yet earned would be exported (lecturer review s29, M3)
        raise ValueError(
            "a grading run has not finished, so the gradebook holds a part of it: "
            + "; ".join(running)
            + ". Wait for it, or grade the chapter again; or export anyway with --force; "
            "nothing is written"
        )
    for line in running:
        print(f"export_grades.py: warning (--force): {line}", file=sys.stderr)
    grades = read_gradebook(gradebook, args.assignment)
    for warning in grades.warnings:
        print(f"export_grades.py: warning: {warning}", file=sys.stderr)
    if grades.untimed and not args.allow_unknown_times:
        # late work handed in by hand would be exported with full marks (lecturer review s22, S7)
        raise ValueError(
            f"{len(grades.untimed)} submission(s) have no submission time, so none was checked "
            f"against its deadline ({', '.join(grades.untimed)}): write each one's timestamp.txt "
            "and grade it again (the warnings above say how), or export anyway with "
            "--allow-unknown-times; nothing is written"
        )
    done = []  # every table is made before the summary says it is written (lecturer review s17, M2:
    # "the export is written", then a roster without a student stopped it and nothing was written)
    try:
        if args.canvas:
            roster = _read_csv(args.roster, "roster") if args.roster else None
            ids = None
            if args.canvas_ids:
                table = _read_csv(args.canvas_ids, "canvas_ids")
                if table and not {"assignment", "canvas_id"} <= set(table[0]):
                    raise ValueError(
                        "canvas_ids: expected the columns assignment,canvas_id, got "
                        f"{list(table[0])}"
                    )
                ids = {r["assignment"]: r["canvas_id"] for r in table}
            rows = canvas_rows(grades, roster, args.match, ids, args.skip_unmatched)
            skipped = unmatched(grades, roster, args.match) if roster is not None else []
            done.append(
                (
                    args.canvas,
                    rows,
                    f"Canvas: {args.canvas} ({len(rows) - 2} students)",
                    f"left out (no row of the roster): {', '.join(skipped)}" if skipped else "",
                )
            )
        if args.moodle:
            rows = moodle_rows(grades, args.moodle_id, args.skip_unmatched)
            skipped = [
                s["id"] for s in grades.students if args.moodle_id == "email" and not s["email"]
            ]
            done.append(
                (
                    args.moodle,
                    rows,
                    f"Moodle: {args.moodle} ({len(rows) - 1} students)",
                    f"left out (no e-mail in the gradebook): {', '.join(skipped)}"
                    if skipped
                    else "",
                )
            )
    except ValueError:
        if grades.warnings:
            print(
                f"export_grades.py: warning: {len(grades.warnings)} problems above; the export is "
                "not written (the error below)",
                file=sys.stderr,
            )
        raise
    if grades.warnings:  # something is pending (lecturer review s29, M2: not once it is not)
        print(
            f"export_grades.py: warning: {len(grades.warnings)} problems above: the export is "
            "written, but these grades are not final until they are resolved (grade what needs a "
            "manual grade; once a chapter's flags are read, mark them: export_grades.py --course . "
            "--reviewed CHAPTER)",
            file=sys.stderr,
        )
    for path, rows, said, left_out in done:
        write_csv(rows, path)
        print(said)
        if left_out:
            print(left_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
