"""The marker a grading run leaves in the course folder while it writes scores (lecturer review s29,
M3: an export taken while ``grade_course.py 16_beyond_bert`` was still running uploaded points the
students had not earned, with no warning).

``tools/grade_course.py CHAPTER`` writes ``course/grading-CHAPTER.lock`` (JSON: the chapter, when it
started, its process and machine) before it grades and removes it when the run ends. A run stopped by
an error, Ctrl-C or a kill signal rewrites it as interrupted, saying why, and leaves it: the gradebook
may then hold a part of the run. ``tools/export_grades.py`` refuses to export while a marker is there
(``--force`` exports anyway). A run killed outright (``kill -9``, the machine shut down) cannot say
so: its marker still says "grading", and its process is gone.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from pathlib import Path

SUFFIX = ".lock"


def path(course: Path, chapter: str) -> Path:
    """The marker of ``chapter``'s grading in ``course``."""
    return Path(course) / f"grading-{chapter}{SUFFIX}"


def start(course: Path, chapter: str, students: list[str]) -> Path:
    """Write the marker of a grading run that begins now; return its path."""
    marker = path(course, chapter)
    marker.write_text(
        json.dumps(
            {
                "chapter": chapter,
                "state": "grading",
                "started": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "students": len(students),
            },
            indent=1,
        )
    )
    return marker


def interrupted(marker: Path, why: str) -> None:
    """Say in the marker that its run stopped before the end (``why``), and leave it."""
    try:
        info = json.loads(marker.read_text())
    except (OSError, ValueError):
        info = {}
    info.update(
        state="interrupted",
        why=why,
        stopped=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    marker.write_text(json.dumps(info, indent=1))


def finished(marker: Path) -> None:
    """The run ended: its scores are all in the gradebook."""
    marker.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def describe(marker: Path) -> str:
    """One sentence on a marker: which chapter, since when, and how to proceed."""
    try:
        info = json.loads(marker.read_text())
    except (OSError, ValueError):
        info = {}
    chapter = str(info.get("chapter") or marker.name[len("grading-") : -len(SUFFIX)])
    started = info.get("started", "an unknown time")
    rerun = (
        f"grade it again (`python tools/grade_course.py {chapter}`, which removes the marker "
        f"when it ends)"
    )
    if info.get("state") == "interrupted":
        return (
            f"the grading of {chapter} started at {started} was interrupted at "
            f"{info.get('stopped', 'an unknown time')} ({info.get('why', 'no reason given')}), "
            f"so the gradebook may hold a part of it: {rerun} ({marker})"
        )
    pid, host = info.get("pid"), info.get("host")
    if isinstance(pid, int) and host == socket.gethostname() and not _alive(pid):
        return (
            f"the grading of {chapter} started at {started} ended without finishing (its process "
            f"{pid} is gone: killed?), so the gradebook may hold a part of it: {rerun} ({marker})"
        )
    return (
        f"grade_course.py has been grading {chapter} since {started} (process {pid} on {host}): "
        f"its scores are not all in the gradebook yet; wait until it ends, then export again "
        f"({marker})"
    )


def markers(course: Path, chapters: list[str] | None = None) -> list[Path]:
    """The markers in ``course`` (of ``chapters`` only, if given)."""
    found = sorted(Path(course).glob(f"grading-*{SUFFIX}"))
    if chapters is not None:
        found = [m for m in found if m.name[len("grading-") : -len(SUFFIX)] in chapters]
    return found
