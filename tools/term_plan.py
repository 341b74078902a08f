"""The term plan (issue 36, item 7): the 18 chapters on 13 weeks, each chapter's release date and
deadline, and the late policy, wired into nbgrader.

    python tools/term_plan.py table                          # the week table (Markdown), as on the page
    python tools/term_plan.py table --order 10 15 07 11      # the same for a course's own order
    python tools/term_plan.py deadlines --course course --start 2027-01-11 [--tz Europe/Berlin]
                                        [--order 10 15 07 11]   # a course's own order, one a week
    python tools/term_plan.py penalties --course course [CHAPTER ...]
    python tools/term_plan.py extend --course course CHAPTER STUDENT DAYS
    python tools/term_plan.py remove --course course STUDENT [STUDENT ...]   # fake students, all gone
    python tools/term_plan.py restore --course course CHAPTER STUDENT FOLDER  # the student's own copy

``deadlines`` writes each chapter's deadline into the course's gradebook (nbgrader's
``Assignment.duedate``, what ``nbgrader collect``, ``autograde`` and the Formgrader read) and sets the
late policy in the course's ``nbgrader_config.py`` (a block between two marker lines, replaced on each
run): ``c.AssignLatePenalties.plugin_class`` is :class:`LatePenalty`. The week table (:data:`WEEKS`) is
the one place the plan is written; the teachers' page shows it (a test checks that the page equals it).

nbgrader computes a late penalty once, in ``autograde``, from the notebook's score at that moment; the
points of the written answers are added later in the Formgrader, and ``tools/grade_course.py`` writes
its sandbox's points after nbgrader's autograde has run. ``penalties`` therefore computes every late
submission's penalty again from its current score, with the same policy: run it after the written
answers are graded, before ``nbgrader export`` or ``tools/export_grades.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import re
import sys
from pathlib import Path

# nbgrader's Gradebook runs the `alembic` script it finds on PATH: the one beside this Python,
# also when it is run as .venv/bin/python without the environment activated
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float

# The plan: (week, chapters taught that week). Each chapter is one nbgrader assignment, released on the
# Monday of the week it is taught and due on the Sunday of the following week (RELEASE, DUE: days and
# times after that Monday). Two lectures of 90 minutes a week at most (180 min of class); the chapters'
# class times are the teachers' page's ("In class"), repeated in CLASS_MINUTES and tested against it.
# The home times are not written here: they are estimated from each chapter's size, the chapter and its
# exercises together, by tools/instructor_notes.py (home_minutes).
# Week 13 teaches no new chapter: it is for the last deadline (chapter 18), questions and review.
WEEKS: list[tuple[int, list[str]]] = [
    (1, ["01_seq2seq_to_attention", "02_attention_as_soft_lookup"]),
    (2, ["03_scoring_functions", "04_bahdanau_and_luong"]),
    (3, ["05_attention_beyond_translation", "06_self_attention"]),
    (4, ["07_multi_head_attention", "08_positional_encoding"]),
    (5, ["09_the_transformer"]),
    (6, ["10_subword_tokenization", "11_language_models"]),
    (7, ["12_elmo"]),
    (8, ["13_gpt"]),
    (9, ["14_bert"]),
    (10, ["15_inside_a_pretrained_model", "16_beyond_bert"]),
    (11, ["17_modern_decoder"]),
    (12, ["18_attention_at_scale"]),
    (13, []),
]
CLASS_MINUTES = {
    "01": 90, "02": 60, "03": 90, "04": 90, "05": 60, "06": 90, "07": 90, "08": 60, "09": 90,
    "10": 60, "11": 90, "12": 90, "13": 90, "14": 90, "15": 60, "16": 90, "17": 90, "18": 90,
}  # fmt: skip
RELEASE = dt.timedelta(hours=9)  # Monday 09:00 of the week the chapter is taught
DUE = dt.timedelta(days=13, hours=23, minutes=59)  # Sunday 23:59 of the following week
# The late policy: PERCENT_PER_DAY of the score for each day or part of a day late, the whole score
# after ZERO_AFTER_DAYS days.
PERCENT_PER_DAY = 10.0
ZERO_AFTER_DAYS = 7.0
MARK_BEGIN = "# --- term plan (tools/term_plan.py deadlines): late policy ---"
MARK_END = "# --- end of term plan ---"
WEEKDAYS = "Mon Tue Wed Thu Fri Sat Sun".split()
ZONE_MARK = "# the course's time zone: "  # in the block, read back by `extend` to print its dates


def course_zone(course: Path) -> str:
    """The time zone ``deadlines`` was given for the course (UTC if it has not been run)."""
    config = Path(course) / "nbgrader_config.py"
    text = config.read_text() if config.is_file() else ""
    for line in text.splitlines():
        if line.startswith(ZONE_MARK):
            return line.removeprefix(ZONE_MARK).strip() or "UTC"
    return "UTC"


def penalty_fraction(days_late: float) -> float:
    """The share of the score a submission `days_late` days late loses (0 to 1)."""
    if isinstance(days_late, bool) or not isinstance(days_late, (int, float)):
        raise TypeError(f"days_late: expected a number of days, got {type(days_late).__name__}")
    if math.isnan(days_late) or days_late < 0:
        raise ValueError(f"days_late: expected a number of days >= 0, got {days_late!r}")
    if days_late == 0:
        return 0.0
    if days_late > ZERO_AFTER_DAYS:
        return 1.0
    return min(1.0, PERCENT_PER_DAY / 100 * math.ceil(days_late))


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission plugin for the term's policy: 10% of the notebook's score per day or
    part of a day late, the whole score after 7 days (``percent_per_day``, ``zero_after_days``)."""

    percent_per_day = Float(PERCENT_PER_DAY, help="Share of the score lost per day late, %").tag(
        config=True
    )
    zero_after_days = Float(ZERO_AFTER_DAYS, help="Days late after which the score is 0").tag(
        config=True
    )

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        if total_seconds_late < 0:
            raise ValueError(f"total_seconds_late: expected >= 0, got {total_seconds_late!r}")
        days = total_seconds_late / 86400
        if days == 0:
            return 0.0
        if days > self.zero_after_days:
            return float(score)
        return float(score) * min(1.0, self.percent_per_day / 100 * math.ceil(days))


def chapters() -> list[str]:
    return [c for _, week in WEEKS for c in week]


def course_weeks(order: list[str]) -> list[tuple[int, list[str]]]:
    """A course's own order of chapters (numbers such as "10" or "7", or names), one a week from
    week 1, in place of :data:`WEEKS` (lecturer review s33, M3: a course on 10, 15, 7 and 11 got the
    book's ten-week spread, in the book's order)."""
    if isinstance(order, str) or not all(isinstance(c, str) for c in order):
        raise TypeError(f"order: expected a list of chapters such as ['10', '15'], got {order!r}")
    by_number = {c[:2]: c for c in chapters()}
    weeks, seen = [], set()
    for k, given in enumerate(order, 1):
        name = by_number.get(given.zfill(2)) if given.isdigit() else given
        if name not in by_number.values():
            raise ValueError(f"order: {given!r} is not a chapter of the book (such as 10 or 07)")
        if name in seen:
            raise ValueError(f"order: chapter {given} is given twice")
        seen.add(name)
        weeks.append((k, [name]))
    return weeks


def schedule(start: dt.date | str, tz: str = "UTC", order: list[str] | None = None) -> list[dict]:
    """Every chapter's week, release and deadline (aware datetimes in `tz`) for a term whose first
    week starts on `start`, a Monday: the book's weeks (:data:`WEEKS`), or with ``order`` the course's
    chapters one a week in that order (:func:`course_weeks`)."""
    if isinstance(start, str):
        try:
            start = dt.date.fromisoformat(start)
        except ValueError:
            raise ValueError(f"start: expected a date YYYY-MM-DD, got {start!r}") from None
    if not isinstance(start, dt.date):
        raise TypeError(f"start: expected a date or 'YYYY-MM-DD', got {type(start).__name__}")
    if start.weekday() != 0:
        raise ValueError(f"start: expected a Monday, got {start} ({WEEKDAYS[start.weekday()]})")
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"tz: expected an IANA time zone such as 'Europe/Berlin', got {tz!r}"
        ) from None
    rows = []
    for week, names in WEEKS if order is None else course_weeks(order):
        monday = dt.datetime.combine(start + dt.timedelta(weeks=week - 1), dt.time(), tzinfo=zone)
        for name in names:
            rows.append(
                {"week": week, "chapter": name, "release": monday + RELEASE, "due": monday + DUE}
            )
    return rows


def _minutes(m: int) -> str:
    return f"{m // 60} h {m % 60:02d}" if m % 60 else f"{m // 60} h"


def home_minutes() -> dict[str, int]:
    """Each chapter's home time in minutes ({"01": ...}): reading and running the chapter and doing its
    exercises, estimated from their size by tools/instructor_notes.py (imported here, when asked: it
    reads every notebook)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import instructor_notes

    return {name[:2]: instructor_notes.home_minutes(name)["total"] for name in chapters()}


def term_weeks(order: list[str] | None = None) -> list[tuple[int, list[str]]]:
    """The term's weeks: :data:`WEEKS`, or with ``order`` the course's chapters one a week
    (:func:`course_weeks`) and a last week that teaches none, in which the last chapter is due."""
    if order is None:
        return WEEKS
    weeks = course_weeks(order)
    return weeks + [(len(weeks) + 1, [])]


def weekly_load(weeks: list[tuple[int, list[str]]] = WEEKS) -> dict[int, int]:
    """The home time a student spends in each week, in minutes: a chapter's home time is spread evenly
    over its two weeks (released on the Monday of its week, due on the Sunday of the next), so a week
    carries half of the chapters taught in it and half of those taught the week before; rounded up to
    a quarter of an hour. ``weeks``: :data:`WEEKS` or a course's own (:func:`term_weeks`)."""
    home = home_minutes()
    taught = {week: sum(home[n[:2]] for n in names) for week, names in weeks}
    return {
        week: 15 * math.ceil((taught[week] + taught.get(week - 1, 0)) / 2 / 15) for week, _ in weeks
    }


def marking_parts(weeks: list[tuple[int, list[str]]] = WEEKS) -> dict[int, int]:
    """The rubric parts of the written answers of the chapters taught each week ({week: parts}),
    counted by tools/instructor_notes.py in the rubric cells make_course writes: what a teacher marks,
    part by part, once those chapters are due (the Sunday of the next week)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import instructor_notes

    return {
        week: sum(sum(instructor_notes.rubric_parts(name)) for name in names)
        for week, names in weeks
    }


def marking_load(students: int = 30) -> dict:
    """The marking load per week of chapters (lecturer review r4, problem 4: an average hid the peaks):
    {"parts": marking_parts(), "max": the most parts of a week's chapters, "max_weeks": those weeks,
    "typical": the median over the weeks that teach a chapter, "hours_max" and "hours_typical":
    (low, high) hours for ``students`` at instructor_notes.GRADING_MINUTES_PER_PART}."""
    import statistics

    import instructor_notes  # marking_parts put tools/ on the path

    parts = marking_parts()
    taught = [parts[week] for week, names in WEEKS if names]
    top, typical = max(taught), statistics.median(taught)
    low, high = instructor_notes.GRADING_MINUTES_PER_PART
    return {
        "parts": parts,
        "max": top,
        "max_weeks": [week for week, _ in WEEKS if parts[week] == top],
        "typical": typical,
        "hours_max": (top * students * low / 60, top * students * high / 60),
        "hours_typical": (typical * students * low / 60, typical * students * high / 60),
    }


def table(order: list[str] | None = None) -> str:
    """The week table in Markdown (the teachers' page's section "A term"); with ``order`` (chapters
    such as ["05", "08"]), the same columns for a course that takes them one a week in that order
    (lecturer review s38, m5: the week's home work was computed by hand)."""
    weeks = term_weeks(order)
    lines = [
        "| Week | Chapters (assignments) | In class | At home, these chapters | Home work this week "
        "| Released | Due | Rubric parts to mark | Marking, per student |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    home, load, parts = home_minutes(), weekly_load(weeks), marking_parts(weeks)
    import instructor_notes  # marking_parts put tools/ on the path

    # course review s40, m5: the minutes a marker spends on one student's written answers of the
    # week's chapters, at instructor_notes.GRADING_MINUTES_PER_PART, next to the parts
    low, high = instructor_notes.GRADING_MINUTES_PER_PART
    for week, names in weeks:
        if not names:
            last = next(n for _, before in reversed(weeks) for n in reversed(before))
            lines.append(
                f"| {week} | review, questions; chapter {int(last[:2])} due | | "
                f"| {_minutes(load[week])} | | | | |"
            )
            continue
        minutes = sum(CLASS_MINUTES[n[:2]] for n in names)
        at_home = sum(home[n[:2]] for n in names)
        listed = ", ".join(f"`{n}`" for n in names)
        lines.append(
            f"| {week} | {listed} | {_minutes(minutes)} | {_minutes(at_home)} "
            f"| {_minutes(load[week])} | Monday of week {week}, 09:00 "
            f"| Sunday of week {week + 1}, 23:59 | {parts[week]} "
            f"| {parts[week] * low:g} to {parts[week] * high:g} min |"
        )
    return "\n".join(lines)


def write_deadlines(
    course: Path, start, tz: str = "UTC", order: list[str] | None = None
) -> list[dict]:
    """Each chapter's deadline into the course's gradebook (the chapters in its source/, or all),
    the late policy into its nbgrader_config.py; returns the schedule of those chapters (the book's
    weeks, or with ``order`` the course's own order, one chapter a week)."""
    from nbgrader.api import Gradebook

    course = Path(course)
    config = course / "nbgrader_config.py"
    if not config.is_file():
        raise ValueError(
            f"course: expected a course folder with nbgrader_config.py (make course), got {course}"
        )
    rows = schedule(start, tz, order)
    # a course of some chapters (make_course.py 02 09): their deadlines only, not 18 assignments
    # in its gradebook (lecturer review s9)
    source = course / "source"
    present = {p.name for p in source.iterdir() if p.is_dir()} if source.is_dir() else set()
    if present and order is not None:
        missing = sorted(present - {row["chapter"] for row in rows})
        if missing:
            raise ValueError(
                f"order: the course's chapters {', '.join(missing)} have no week in it"
            )
    if present:
        rows = [row for row in rows if row["chapter"] in present]
    text = config.read_text()
    if MARK_BEGIN in text:
        text = (
            text[: text.index(MARK_BEGIN)].rstrip("\n")
            + text[text.index(MARK_END) + len(MARK_END) :]
        )
    block = "\n".join(
        [
            MARK_BEGIN,
            f"{ZONE_MARK}{tz}",
            "import sys  # noqa: E402",
            f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})",
            "from term_plan import LatePenalty  # noqa: E402",
            "",
            "c.AssignLatePenalties.plugin_class = LatePenalty",
            f"c.LatePenalty.percent_per_day = {PERCENT_PER_DAY!r}",
            f"c.LatePenalty.zero_after_days = {ZERO_AFTER_DAYS!r}",
            MARK_END,
        ]
    )
    config.write_text(text.rstrip("\n") + "\n\n" + block + "\n")
    url, course_id = _gradebook(course)
    with Gradebook(url, course_id=course_id) as gb:
        for row in rows:
            # nbgrader keeps UTC without a zone
            due = row["due"].astimezone(dt.timezone.utc).replace(tzinfo=None)
            gb.update_or_create_assignment(row["chapter"], duedate=due, course_id=course_id)
    return rows


def _gradebook(course: Path) -> tuple[str, str]:
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    url = config.CourseDirectory.get("db_url") or f"sqlite:///{course / 'gradebook.db'}"
    return url, config.CourseDirectory.get("course_id", "default_course")


def feedback_too_early(course: Path, chapter: str, now: dt.datetime | None = None) -> str | None:
    """A warning if ``chapter``'s feedback would go out while late work is still accepted (its
    deadline plus ``ZERO_AFTER_DAYS``; lecturer review s11, M5): the feedback shows which of the
    grader's cases an answer failed, which a student who has not submitted yet could use. None when
    the chapter has no deadline or that time has passed. ``now``: UTC, without a zone (nbgrader's)."""
    from nbgrader.api import Gradebook, MissingEntry

    url, course_id = _gradebook(course)
    with Gradebook(url, course_id=course_id) as gb:
        try:
            due = gb.find_assignment(chapter).duedate
        except MissingEntry:
            return None
    if due is None:
        return None
    closes = due + dt.timedelta(days=ZERO_AFTER_DAYS)
    now = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    if now >= closes:
        return None
    return (
        f"not yet time for feedback: {chapter} was due {due:%Y-%m-%d %H:%M} UTC and late work "
        f"counts until {closes:%Y-%m-%d %H:%M} UTC ({ZERO_AFTER_DAYS:g} days, the late policy); "
        "the feedback shows which of the grader's cases each answer failed, which a student who "
        "has not submitted could use. Run nbgrader generate_feedback and release_feedback after "
        "that time"
    )


def recompute_penalties(
    url: str, assignments: list[str] | None = None
) -> list[tuple[str, str, float]]:
    """Every late submission's penalty again from its current score (nbgrader's own rule: the
    penalty is at most the score); [(assignment, student, penalty)] of the late ones."""
    from nbgrader.api import Gradebook

    policy = LatePenalty()
    changed = []
    with Gradebook(url) as gb:
        names = [a.name for a in gb.assignments]
        for name in assignments or names:
            if name not in names:
                raise ValueError(f"assignments: {name!r} is not in the gradebook (it has {names})")
            for submission in gb.assignment_submissions(name):
                late = submission.total_seconds_late
                for notebook in submission.notebooks:
                    if late > 0:
                        p = policy.late_submission_penalty(
                            submission.student.id, notebook.score, late
                        )
                        notebook.late_submission_penalty = min(max(p, 0.0), notebook.score)
                        changed.append(
                            (name, submission.student.id, notebook.late_submission_penalty)
                        )
                    else:
                        notebook.late_submission_penalty = None
        gb.db.commit()
    return changed


def untimed_submissions(url: str, assignments: list[str] | None = None) -> list[tuple[str, str]]:
    """[(assignment, student)] of each submission of an assignment with a deadline that has no
    submission time: put in ``submitted/`` by hand or by ``zip_collect``, without a timestamp.txt,
    it is never late for nbgrader, which applies no penalty and says nothing (lecturer review s16,
    S2). No time is made up for it: :func:`untimed_warning` says what to do."""
    from nbgrader.api import Gradebook

    found = []
    with Gradebook(url) as gb:
        names = [a.name for a in gb.assignments]
        for name in assignments or names:
            if name not in names:
                continue
            for submission in gb.assignment_submissions(name):
                if submission.timestamp is None and submission.duedate is not None:
                    found.append((name, submission.student.id))
    return found


def untimed_warning(assignment: str, student: str) -> str:
    """What a teacher reads about a submission without a submission time (``untimed_submissions``)."""
    folder = f"submitted/{student}/{assignment}"
    return (
        f"{student} {assignment}: submission time unknown ({folder}/ has no timestamp.txt: it came "
        "without the exchange), so it was not checked against the deadline and no late penalty "
        f"was applied. Write its hand-in time into {folder}/timestamp.txt "
        "('YYYY-MM-DD HH:MM:SS UTC': the time your LMS or e-mail shows, or the notebook's file "
        f"time, `ls -l --time-style=full-iso {folder}/`, if the copy kept it) and grade it again: "
        f"python ../tools/grade_course.py {assignment} --student {student} (nothing to do if "
        "your LMS applies the late policy)"
    )


def extend(url: str, assignment: str, student: str, days: float) -> dt.datetime:
    """Give `student` `days` more days for `assignment` (nbgrader's per-student extension, on the
    graded submission); returns the student's deadline now."""
    from nbgrader.api import Gradebook, MissingEntry

    if isinstance(days, bool) or not isinstance(days, (int, float)) or not days >= 0:
        raise ValueError(f"days: expected a number of days >= 0, got {days!r}")
    with Gradebook(url) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            raise ValueError(
                f"assignment, student: no graded submission of {assignment!r} by {student!r}"
                " (grade it first; the extension is kept on the submission)"
            ) from None
        submission.extension = dt.timedelta(days=days)
        gb.db.commit()
        return submission.duedate


STUDENT_ID = re.compile(r"[\w@+-][\w.@+-]*")


def remove_students(course: Path, students: list[str]) -> list[str]:
    """Remove ``students`` (fake ones, say) from the course entirely (course review s40, m3: after
    ``nbgrader db student remove`` alone, their submitted/, autograded/ and feedback/ folders made
    every export warn "collected but not graded", and ``nbgrader collect --update`` brought them
    back from the exchange's inbound copies): from the gradebook with their submissions (what
    ``nbgrader db student remove --force`` does), then their folders ``submitted/<id>``,
    ``autograded/<id>``, ``feedback/<id>`` and the exchange's ``inbound/<id>+*``, and the feedback
    released to them in the exchange's ``feedback/`` (:func:`released_feedback`; lecturer review
    s41, m7: it stayed there). Returns what was removed, a line each."""
    import shutil

    from nbgrader.api import Gradebook, MissingEntry
    from traitlets.config.loader import PyFileConfigLoader

    for student in students:
        if not isinstance(student, str) or not STUDENT_ID.fullmatch(student):
            raise ValueError(f"students: expected nbgrader student ids, got {student!r}")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    url, course_id = _gradebook(course)
    inbound = released = None
    if "root" in config.get("Exchange", {}):
        inbound = Path(config.Exchange.root) / course_id / "inbound"
        released = Path(config.Exchange.root) / course_id / "feedback"
    done = []
    with Gradebook(url, course_id=course_id) as gb:
        for student in students:
            try:
                gb.remove_student(student)
                done.append(f"{student}: removed from the gradebook, with their submissions")
            except MissingEntry:
                done.append(f"{student}: not in the gradebook")
    for student in students:
        folders = [course / part / student for part in ("submitted", "autograded", "feedback")]
        if inbound is not None and inbound.is_dir():
            folders += sorted(inbound.glob(f"{student}+*"))
        # before the folders go: their submission secrets name the feedback released to them
        for page in released_feedback(folders, released) if released is not None else []:
            page.unlink()
            done.append(f"{student}: removed {page} (feedback released to them)")
        for folder in folders:
            if folder.exists():
                shutil.rmtree(folder)
                done.append(f"{student}: removed {folder}")
    return done


def cache_folder(inbound_folder: str, course_id: str) -> str:
    """Where ``nbgrader submit`` kept the student's own copy of the submission whose folder in the
    exchange's inbound/ is ``inbound_folder`` (``<student>+<chapter>+<time>+<random>``): in the
    student's home, which no classmate can write, under the folder's name less its random part."""
    return f"~/.local/share/jupyter/nbgrader_cache/{course_id}/{inbound_folder.rsplit('+', 1)[0]}"


def restore_submission(course: Path, chapter: str, student: str, copy: Path) -> list[str]:
    """Put back the notebooks of ``student``'s collected submission of ``chapter`` from ``copy``, the
    copy ``nbgrader submit`` kept in the student's home (:func:`cache_folder`), when the one in the
    exchange's world-writable inbound/ was changed after they submitted it (lecturer review s41, m4:
    a classmate swapped in a blank notebook, and the student's work was gone from the server). The
    copy must carry the collected submission's ``submission_secret.txt`` and ``timestamp.txt``
    (``nbgrader submit`` writes the same ones into both places): then it is that submission, and
    its time stays the collected one. Each notebook replaced is kept as ``NAME.before-restore``.
    Returns what was done, a line each, the last the command that grades it again."""
    import shutil

    for what, value in (("student", student), ("chapter", chapter)):
        if not STUDENT_ID.fullmatch(value):
            raise ValueError(f"{what}: expected an nbgrader id, got {value!r}")
    collected = course / "submitted" / student / chapter
    if not (collected / "submission_secret.txt").is_file():
        raise ValueError(
            f"{student} {chapter}: no collected submission with a submission_secret.txt in "
            f"{collected}: collect it first (nbgrader collect {chapter})"
        )
    copy = copy.expanduser()
    if not (copy / "submission_secret.txt").is_file() or not (copy / "timestamp.txt").is_file():
        raise ValueError(
            f"{copy}: not a copy kept by nbgrader submit (no submission_secret.txt and timestamp.txt)"
        )
    # the student's own time: the grader keeps it as timestamp.txt.student where it set a later one
    stamp = collected / "timestamp.txt.student"
    stamp = stamp if stamp.is_file() else collected / "timestamp.txt"
    same_secret = (copy / "submission_secret.txt").read_text().strip() == (
        (collected / "submission_secret.txt").read_text().strip()
    )
    if not same_secret or (copy / "timestamp.txt").read_text().strip() != stamp.read_text().strip():
        raise ValueError(
            f"{copy}: not the collected submission (its submission_secret.txt or timestamp.txt "
            f"differs from {collected}'s): nbgrader submit keeps one folder per submission, named "
            f"{student}+{chapter}+<its time>; take the one whose timestamp.txt says "
            f"{stamp.read_text().strip()}. If the secret in the exchange was changed too, this tool "
            "cannot tell which is the student's: decide by hand (the teachers' page, *A submission "
            "changed in the exchange*)"
        )
    notebooks = sorted(copy.glob("*.ipynb"))
    if not notebooks:
        raise ValueError(f"{copy}: no notebook in it")
    done = []
    for notebook in notebooks:
        target = collected / notebook.name
        if target.is_file() and target.read_bytes() == notebook.read_bytes():
            done.append(f"{student} {chapter}: {notebook.name} is already the student's copy")
            continue
        if target.is_file():
            kept = target.with_name(target.name + ".before-restore")
            if not kept.exists():
                shutil.copy2(target, kept)
        shutil.copyfile(notebook, target)
        done.append(f"{student} {chapter}: {target} restored from {notebook}")
    done.append(
        f"grade it again: python ../tools/grade_course.py {chapter} --student {student}"
        " (the submission time stays the collected one)"
    )
    return done


def released_feedback(folders: list[Path], released: Path) -> list[Path]:
    """The pages of the exchange's feedback folder ``released`` that ``nbgrader release_feedback``
    released from a submission in ``folders`` (a student's submitted/, autograded/, feedback/ and
    inbound folders): each is named by the hash of the submission's secret and the notebook's name
    (``nbgrader.utils.notebook_hash``), which no one without the secret can tell apart, so every
    secret of the student's submissions is tried with every notebook's name."""
    from nbgrader.utils import notebook_hash

    if not released.is_dir():
        return []
    secrets, notebooks = set(), set()
    for folder in folders:
        for path in folder.rglob("*") if folder.is_dir() else []:
            if path.name == "submission_secret.txt" and path.is_file():
                secrets.add(path.read_text())
            elif path.suffix in (".ipynb", ".html") and path.is_file():
                notebooks.add(path.stem)
    pages = {
        released / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html"
        for secret in secrets
        if secret
        for notebook in notebooks
    }
    return sorted(page for page in pages if page.is_file())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="print the week table (Markdown)")
    t.add_argument(
        "--order",
        nargs="+",
        metavar="CHAPTER",
        help="the course's chapters in its own order, one a week, as deadlines --order takes them",
    )
    d = sub.add_parser("deadlines", help="write the deadlines and the late policy into the course")
    d.add_argument("--course", type=Path, default=Path("course"))
    d.add_argument("--start", required=True, help="the Monday of week 1, YYYY-MM-DD")
    d.add_argument("--tz", default="UTC", help="the course's time zone (IANA), default UTC")
    d.add_argument(
        "--order",
        nargs="+",
        metavar="CHAPTER",
        help="the course's chapters in its own order, one a week from --start (e.g. 10 15 07 11)",
    )
    p = sub.add_parser("penalties", help="compute the late penalties again from the current scores")
    p.add_argument("--course", type=Path, default=Path("course"))
    p.add_argument("chapter", nargs="*")
    e = sub.add_parser("extend", help="give one student more days for one chapter")
    e.add_argument("--course", type=Path, default=Path("course"))
    e.add_argument("chapter")
    e.add_argument("student")
    e.add_argument("days", type=float)
    r = sub.add_parser(
        "remove",
        help="remove students (fake ones) from the gradebook, the course's folders and the exchange",
    )
    r.add_argument("--course", type=Path, default=Path("course"))
    r.add_argument("student", nargs="+")
    b = sub.add_parser(
        "restore",
        help="put back a submission changed in the exchange's inbound/ from the student's own copy",
    )
    b.add_argument("--course", type=Path, default=Path("course"))
    b.add_argument("chapter")
    b.add_argument("student")
    b.add_argument("copy", type=Path, help="the folder nbgrader submit kept in the student's home")
    args = parser.parse_args(argv)
    if args.command == "table":
        try:
            print(table(args.order))
        except ValueError as error:
            parser.error(str(error))
    elif args.command == "deadlines":
        try:
            rows = write_deadlines(args.course, args.start, args.tz, args.order)
        except ValueError as error:
            parser.error(str(error))
        for row in rows:
            release, due = row["release"], row["due"]
            print(
                f"week {row['week']:2d}  {row['chapter']:34s}  released {release:%a %Y-%m-%d %H:%M}"
                f"  due {due:%a %Y-%m-%d %H:%M %Z}"
            )
        print(
            f"late policy: {PERCENT_PER_DAY:g}% per day or part of a day, 0 after {ZERO_AFTER_DAYS:g} days"
        )
    elif args.command == "remove":
        try:
            done = remove_students(args.course, args.student)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        print("\n".join(done))
        print(
            "their lines stay in reports/<chapter>-<date>.txt: once read, "
            "`python ../tools/export_grades.py --course . --reviewed <chapter>` for each chapter "
            "whose flags named them"
        )
    elif args.command == "restore":
        try:
            done = restore_submission(args.course, args.chapter, args.student, args.copy)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        print("\n".join(done))
    elif args.command == "extend":
        url, _ = _gradebook(args.course)
        due = extend(url, args.chapter, args.student, args.days)
        # nbgrader keeps UTC without a zone; printed in the course's zone, as `deadlines` prints it
        due = due.replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(course_zone(args.course)))
        print(f"{args.chapter}  {args.student}  due {due:%a %Y-%m-%d %H:%M %Z}")
    else:
        url, _ = _gradebook(args.course)
        late = recompute_penalties(url, args.chapter)
        for name, student, penalty in late:
            print(f"{name}  {student}  late penalty {penalty:g}")
        untimed = untimed_submissions(url, args.chapter)
        for name, student in untimed:
            print(f"WARNING: {untimed_warning(name, student)}")
        print(f"{len(late)} late submissions; every other submission has no penalty")
        if untimed:
            print(
                f"WARNING: {len(untimed)} submissions have no submission time and were not checked "
                "for lateness (above): " + ", ".join(f"{s} {n}" for n, s in untimed)
            )
    if args.command != "table":  # the gradebook this wrote: 0600 in a graded course
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from make_course import protect_files

        protect_files(args.course)
    return 0


if __name__ == "__main__":
    sys.exit(main())
