"""Benchmark 11: grading a class in the course's sandbox (tools/grade_course.py, issue 36). Students per
minute for each chapter measured and for those chapters together, every answer run in its own
sandboxed child process and every verdict decided in the grader's process.

The measurement, in a temporary course written by ``tools/make_course.py`` (no nbgrader: the part this
benchmark times is the sandbox's; nbgrader's autograde without execution adds about a second per
student):

- for each chapter: the sandbox's zygote runs the chapter's code up to its exercises once (``story_s``);
  then ``students`` students with the worked solutions are graded one after another, every test cell
  of the chapter in a child of its own (``per_student_s``: wall time / students). All must get full
  marks (``all_passed``).
- students per minute for a chapter: 60 / per_student_s (the zygote's run is paid once per chapter and
  grading run); for the chapters together: 60 / the sum of their per_student_s; the projection for a
  class of ``CLASS_SIZE``: the story once per chapter plus the students.

It takes a minute or two, so the runner reports the stored measurement
(``benchmarks/sandbox_grading_timings.json``) unless ``BENCH_SANDBOX=1`` asks to measure again:
``BENCH_SANDBOX=1 python -m benchmarks.run --only sandbox``.
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Column, Section, measured_or_stored, yes_no

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ROOT / "benchmarks" / "sandbox_grading_timings.json"
CHAPTERS = ("02", "03", "06")
CLASS_SIZE = 40


def measure_from_env() -> bool:
    value = os.environ.get("BENCH_SANDBOX", "").strip().lower()
    if value not in ("", "0", "1"):
        raise ValueError(f"BENCH_SANDBOX: expected 1, 0 or nothing, got {value!r}")
    return value == "1"


def _honest(source) -> dict[str, str]:
    """The worked solution of each answer cell (what nbgrader's release replaces by the stub)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import make_course

    found = {}
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            body = cell.source.split(make_course.BEGIN + "\n", 1)[1]
            found[meta["grade_id"]] = body.rsplit(make_course.END, 1)[0]
    return found


def measure(chapters=CHAPTERS, students: int = 5) -> dict:
    import nbformat

    sys.path.insert(0, str(ROOT / "tools"))
    import grade_course
    import make_course
    import sandbox

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        written = make_course.write_course(root, list(chapters))
        for chapter, _ in written:
            t0 = time.perf_counter()
            grader = grade_course.Grader(root, chapter)
            try:
                ready = grader.zygote.ready
                story = time.perf_counter() - t0
                source = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", 4)
                answers = _honest(source)
                t0 = time.perf_counter()
                results = [
                    grader.grade_one(f"s{i:03d}", exercise, answers)
                    for i in range(students)
                    for exercise in grader.exercises
                ]
                per_student = (time.perf_counter() - t0) / students
            finally:
                grader.close()
            rows.append(
                {
                    "chapter": chapter,
                    "tests": len(grader.exercises),
                    "story_s": round(story, 2),
                    "story_errors": len(ready.get("errors", [])),
                    "per_student_s": round(per_student, 3),
                    "all_passed": all(r.score == r.points for r in results),
                    "sandbox": results[0].sandbox if results else {},
                }
            )
    return {
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "students": students,
        "landlock_abi": sandbox.landlock_abi(),
        "chapters": rows,
    }


def run(measure_now: bool | None = None, path: Path = TIMINGS, **sizes) -> Section:
    """The section of results.md: measured now if asked (``BENCH_SANDBOX=1``), else the stored one."""
    title = "11. Grading a class in the sandbox"
    if measure_now is None:
        measure_now = measure_from_env()
    result = measured_or_stored(measure_now, path, measure, **sizes)
    if result is None:
        return Section(
            "sandbox",
            title,
            "",
            [],
            status=f"skipped: no stored measurement in {path.name}; run BENCH_SANDBOX=1 python -m benchmarks.run --only sandbox",
        )
    rows = [
        {
            **r,
            "per_minute": 60 / r["per_student_s"],
            "class_min": (r["story_s"] + CLASS_SIZE * r["per_student_s"]) / 60,
        }
        for r in result["chapters"]
    ]
    together = sum(r["per_student_s"] for r in rows)
    rows.append(
        {
            "chapter": "together",
            "tests": sum(r["tests"] for r in rows),
            "story_s": sum(r["story_s"] for r in rows),
            "per_student_s": together,
            "per_minute": 60 / together,
            "class_min": (sum(r["story_s"] for r in rows) + CLASS_SIZE * together) / 60,
            "all_passed": all(r["all_passed"] for r in rows),
        }
    )
    columns = [
        Column("chapter", "chapter"),
        Column("tests", "test cells"),
        Column("story_s", "chapter's code, once (s)", ".1f"),
        Column("per_student_s", "seconds per student", ".2f"),
        Column("per_minute", "students per minute", ".0f"),
        Column("class_min", f"minutes for {CLASS_SIZE} students", ".1f"),
        Column("all_passed", "worked solutions: full marks", yes_no),
    ]
    sandbox = result["chapters"][0].get("sandbox", {}) if result["chapters"] else {}
    method = (
        f"Measured on {result['date']} ({result['cores']} cores, load average {result['load_1min']} at the "
        f"start): for each chapter, tools/grade_course.py's sandbox ran the chapter's code up to its "
        f"exercises once, then graded {result['students']} students with the worked solutions, every test "
        "cell in a child process of its own (forked, resource limits, "
        f"{sandbox.get('landlock', 'Landlock')}, {sandbox.get('user', '')}, an audit hook), the verdict "
        "decided in the grader's process. nbgrader's autograde without execution is not included (about a "
        "second per student). Stored in benchmarks/sandbox_grading_timings.json; `BENCH_SANDBOX=1 python -m "
        "benchmarks.run --only sandbox` measures again."
    )
    findings = [
        f"The chapters together: {60 / together:.0f} students per minute once each chapter's code has run "
        f"({sum(r['story_s'] for r in rows[:-1]):.0f} s, once per grading run); a class of {CLASS_SIZE} "
        f"in {rows[-1]['class_min']:.1f} minutes. A child per test cell costs a fork and the answer's own "
        "run, not a run of the chapter: nbgrader's autograde executes the whole chapter per submission "
        "(benchmark 8)."
    ]
    if result["load_1min"] and result["load_1min"] > result["cores"]:
        findings.append(
            f"The machine was shared (load average {result['load_1min']} on {result['cores']} cores): on an "
            "idle machine expect shorter times."
        )
    return Section("sandbox", title, method, columns, rows, findings, uses_torch_threads=False)
