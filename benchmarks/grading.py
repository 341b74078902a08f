"""Benchmark 8: grading a class with nbgrader (issue 22). Seconds per autograded submission, one grader
after another and several graders in parallel against one gradebook, and the projection for 300 students.

Autograding a submission executes the whole chapter (the answers run on the models the chapter trains), so
its cost is about one run of the chapter plus nbgrader's own work. The measurement, in a temporary course
written by ``tools/make_course.py``:

- ``generate_assignment`` for the chapter, then ``per_group * (1 + graders)`` submissions with the worked
  solutions (every test passes, so every cell runs), put in ``submitted/`` as ``zip_collect`` would;
- sequential: one ``nbgrader autograde`` over ``per_group`` students; seconds per submission = its wall
  time / per_group (nbgrader's start-up is shared by the group, as in a real class);
- parallel: ``graders`` processes of ``nbgrader autograde``, each for its own students (a
  ``--CourseDirectory.student_id`` glob), all against the same ``gradebook.db``; seconds per submission
  = wall time / (graders * per_group). Checked afterwards: every process exited 0, every submission is in
  the gradebook with full marks, and SQLite's ``PRAGMA integrity_check`` says "ok".

It takes a few minutes, so the runner reports the stored measurement (``benchmarks/grading_timings.json``)
unless ``BENCH_GRADING=1`` asks to measure again: ``BENCH_GRADING=1 python -m benchmarks.run --only
grading``.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Column, Section, measured_or_stored, yes_no

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ROOT / "benchmarks" / "grading_timings.json"
BIN = Path(sys.executable).parent
CLASS_SIZE = 300


def measure_from_env() -> bool:
    value = os.environ.get("BENCH_GRADING", "").strip().lower()
    if value not in ("", "0", "1"):
        raise ValueError(f"BENCH_GRADING: expected 1, 0 or nothing, got {value!r}")
    return value == "1"


def _nbgrader(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [str(BIN / "nbgrader"), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _run(*args: str, cwd: Path) -> str:
    process = _nbgrader(*args, cwd=cwd)
    out, _ = process.communicate(timeout=3600)
    if process.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{out[-3000:]}")
    return out


def _submission(root: Path, chapter: str):
    """The released notebook with every answer cell of the instructor's copy: a student who gets it all
    right (every test passes, so every cell runs)."""
    import nbformat

    source = nbformat.read(root / "source" / chapter / f"{chapter}.ipynb", as_version=4)
    release = nbformat.read(root / "release" / chapter / f"{chapter}.ipynb", as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return release


def measure(chapter: str = "02", per_group: int = 3, graders: int = 2) -> dict:
    """Grade ``per_group`` submissions with one grader and ``graders * per_group`` with ``graders``
    graders in parallel; returns the timings and the checks (see the module's docstring)."""
    import nbformat

    sys.path.insert(0, str(ROOT / "tools"))
    import make_course
    from nbgrader.api import Gradebook

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        written = make_course.write_course(root, [chapter])
        chapter = written[0][0]
        points = sum(e["points"] - (1 if e["written"] else 0) for e in written[0][1])
        _run("generate_assignment", chapter, "--force", cwd=root)
        submission = _submission(root, chapter)
        groups = {"s": [f"s{i:03d}" for i in range(per_group)]}
        for g in range(graders):
            groups[f"p{g}x"] = [f"p{g}x{i:03d}" for i in range(per_group)]
        students = [s for group in groups.values() for s in group]
        for student in students:
            path = root / "submitted" / student / chapter / f"{chapter}.ipynb"
            path.parent.mkdir(parents=True)
            nbformat.write(submission, path)
        url = f"sqlite:///{root / 'gradebook.db'}"
        with Gradebook(url) as gb:
            for student in students:
                gb.update_or_create_student(student)

        t0 = time.perf_counter()
        _run("autograde", chapter, "--CourseDirectory.student_id=s*", cwd=root)
        sequential = (time.perf_counter() - t0) / per_group

        t0 = time.perf_counter()
        processes = [
            _nbgrader("autograde", chapter, f"--CourseDirectory.student_id={prefix}*", cwd=root)
            for prefix in groups
            if prefix != "s"
        ]
        outputs = [p.communicate(timeout=3600)[0] for p in processes]
        parallel = (time.perf_counter() - t0) / (graders * per_group)
        exit_codes = [p.returncode for p in processes]

        with Gradebook(url) as gb:
            scores = {s: gb.find_submission(chapter, s).score for s in students}
        integrity = (
            sqlite3.connect(root / "gradebook.db").execute("PRAGMA integrity_check").fetchone()[0]
        )
    failed = [o[-2000:] for o, code in zip(outputs, exit_codes) if code != 0]
    return {
        "date": datetime.date.today().isoformat(),
        "chapter": chapter,
        "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "per_group": per_group,
        "graders": graders,
        "points": points,
        "sequential_s": round(sequential, 2),
        "parallel_s": round(parallel, 2),
        "all_graded": all(v == points for v in scores.values()) and len(scores) == len(students),
        "exit_codes": exit_codes,
        "integrity": integrity,
        "errors": failed,
    }


def run(measure_now: bool | None = None, path: Path = TIMINGS, **sizes) -> Section:
    """The section of results.md: measured now if asked (``BENCH_GRADING=1``), else the stored timings."""
    if measure_now is None:
        measure_now = measure_from_env()
    result = measured_or_stored(measure_now, path, measure, **sizes)
    if result is None:
        return Section(
            "grading",
            "8. Grading a class",
            "",
            [],
            status=f"skipped: no stored measurement in {path.name}; run BENCH_GRADING=1 python -m benchmarks.run --only grading",
        )
    rows = [
        {
            "graders": 1,
            "s": result["sequential_s"],
            "class": CLASS_SIZE * result["sequential_s"] / 60,
            "safe": None,
        },
        {
            "graders": result["graders"],
            "s": result["parallel_s"],
            "class": CLASS_SIZE * result["parallel_s"] / 60,
            "safe": result["all_graded"]
            and result["integrity"] == "ok"
            and not any(result["exit_codes"]),
        },
    ]
    columns = [
        Column("graders", "graders in parallel, one gradebook"),
        Column("s", "seconds per submission", ".1f"),
        Column("class", f"projected minutes for {CLASS_SIZE} students", ".0f"),
        Column("safe", "every submission graded, gradebook intact", yes_no),
    ]
    method = (
        f"Measured on {result['date']} ({result['cores']} cores, load average {result['load_1min']} at the start) "
        f"with chapter {result['chapter']}: {result['per_group']} submissions of the worked solutions graded by one "
        f"`nbgrader autograde`, then {result['graders'] * result['per_group']} by {result['graders']} `nbgrader autograde` "
        "processes at once against the same gradebook, each for its own students (a `--CourseDirectory.student_id` glob). "
        "Each submission executes the whole chapter. Stored in benchmarks/grading_timings.json; "
        "`BENCH_GRADING=1 python -m benchmarks.run --only grading` measures again (a few minutes)."
    )
    speedup = result["sequential_s"] / result["parallel_s"]
    findings = [
        f"One grader: {result['sequential_s']:.1f} s per submission, {CLASS_SIZE * result['sequential_s'] / 60:.0f} minutes for {CLASS_SIZE} students. "
        f"{result['graders']} graders in parallel: {result['parallel_s']:.1f} s per submission ({speedup:.1f} times faster), {CLASS_SIZE * result['parallel_s'] / 60:.0f} minutes; "
        f"every submission was graded with full marks, every grader exited 0 and SQLite's integrity check said {result['integrity']!r}."
    ]
    if result["load_1min"] and result["load_1min"] > result["cores"]:
        findings.append(
            f"The machine was shared: load average {result['load_1min']} on {result['cores']} cores at the start. "
            "Each grader got only its share of the CPU, so the times are several times those of an idle machine, "
            "and a second grader also got a second share; on a machine of your own, expect the speed-up of graders "
            "in parallel to be bounded by its free cores."
        )
    return Section(
        "grading",
        "8. Grading a class",
        method,
        columns,
        rows,
        findings,
        uses_torch_threads=False,
    )
