"""Benchmark 5: the book itself. Each chapter's execution time, the cold `make book` time, and the time
of a rebuild in which no notebook changed.

Measuring these takes long (a cold build executes every chapter: 10 minutes and more on 2 cores), so
the measurements are stored in ``benchmarks/book_timings.json`` and the results table is written from
that file. What gets measured, and when:

- chapters (``measure_chapters``): every chapter executed in a fresh kernel, offline, by
  ``tools/time_chapters.py``'s ``time_chapter`` (the same numbers as ``make chapter-times``);
- cold build (``measure_builds``): ``_build`` removed (no site, no execution cache), then ``make book``
  (the virtual environment and the npm assets already installed: their one-time installation is not
  counted);
- rebuild: right after, every notebook's modification time set to now with its content unchanged,
  then ``make book`` again. Make sees newer sources and runs Jupyter Book; Sphinx re-reads every
  chapter, and Jupyter Book's execution cache (``execute_notebooks: cache``) serves every notebook's
  outputs, so no chapter is executed (checked: the number of notebooks the cache re-executed is
  reported). With no file touched at all, ``make book`` does nothing and takes a fraction of a second.

The runner (``python -m benchmarks.run``) reads the file by default and measures when asked:
``BENCH_BOOK=chapters`` (chapters only), ``BENCH_BOOK=build`` (cold build and rebuild), ``BENCH_BOOK=1``
(both). When ``_build/.jupyter_cache`` exists, the execution time Jupyter Book recorded for each
chapter during the last build that executed it is shown too.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import Column, Section, _cpu_model, yes_no

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ROOT / "benchmarks" / "book_timings.json"
# The cold build prints the PDF and the ePub and exports the Playground's graphs too: 20 minutes.
CHAPTER_BUDGET_S, COLD_BUDGET_S, REBUILD_BUDGET_S = 90.0, 20 * 60.0, 60.0
# What a build's time depends on: a stored build time measured at a commit where any of these differed
# from the working tree is stale, and its goal reads "not re-measured", never "yes".
BUILD_INPUTS = (
    "notebooks",
    "lib",
    "book",
    "tools",
    "web",
    "_config.yml",
    "_toc.yml",
    "Makefile",
    "requirements.txt",
    "package.json",
    "package-lock.json",
)
# What a chapter's time depends on besides its notebook (whose sha256 is stored): the library and the
# pinned packages.
CHAPTER_INPUTS = ("lib", "requirements.txt")
NOT_REMEASURED = "not re-measured"
MODES = {
    "": set(),
    "0": set(),
    "chapters": {"chapters"},
    "build": {"build"},
    "1": {"chapters", "build"},
    "all": {"chapters", "build"},
}


def mode_from_env() -> set[str]:
    """What $BENCH_BOOK asks to measure: a subset of {"chapters", "build"}."""
    value = os.environ.get("BENCH_BOOK", "").strip().lower()
    if value not in MODES:
        raise ValueError(
            f"BENCH_BOOK: expected one of {sorted(k for k in MODES if k)} or nothing, got {value!r}"
        )
    return MODES[value]


def chapters(root: Path = ROOT) -> list[Path]:
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def changed_since(root: Path, commit: str | None, paths) -> bool:
    """Whether any of ``paths`` differs between ``commit`` and the working tree (True when the commit is
    unknown or not in this clone's history: a figure that cannot be placed is treated as stale)."""
    if not commit:
        return True
    try:
        out = subprocess.run(
            ["git", "diff", "--quiet", commit, "--", *paths], cwd=root, capture_output=True
        )
    except OSError:
        return True
    return out.returncode != 0  # 0: no difference; 1: differences; 128: unknown commit


def _now() -> str:
    return datetime.datetime.now().isoformat(timespec="seconds")


def load_timings(path: Path = TIMINGS) -> dict:
    if not path.exists():
        return {"chapters": {}, "builds": {}}
    data = json.loads(path.read_text())
    data.setdefault("chapters", {})
    data.setdefault("builds", {})
    return data


def save_timings(data: dict, path: Path = TIMINGS) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


# --- measuring ---------------------------------------------------------------------------------------


def measure_chapters(
    prefixes=(), root: Path = ROOT, path: Path = TIMINGS, time_chapter=None
) -> dict:
    """Execute the chapters (those whose file name starts with one of ``prefixes``; all if none) in a
    fresh kernel each, and store their times in the timings file. Returns the updated timings."""
    if time_chapter is None:
        sys.path.insert(0, str(root / "tools"))
        from time_chapters import time_chapter  # tools/time_chapters.py
    data = load_timings(path)
    for nb in chapters(root):
        if prefixes and not any(nb.name.startswith(p) for p in prefixes):
            continue
        seconds = time_chapter(nb)
        data["chapters"][nb.stem] = {
            "seconds": round(seconds, 1),
            "sha256": _sha256(nb),
            "measured": _now(),
            "commit": _commit(root),
            "cores": os.cpu_count(),
            "cpu": _cpu_model(),
        }
        save_timings(data, path)
        print(f"  {nb.stem}: {seconds:.1f} s", flush=True)
    return data


def _cache_records(build_dir: Path) -> dict:
    """{notebook stem: (execution seconds, created timestamp, matches the notebook now)} from
    Jupyter Book's execution cache in build_dir, if there is one."""
    cache_dir = build_dir / ".jupyter_cache"
    if not cache_dir.exists():
        return {}
    try:
        import nbformat
        from jupyter_cache import get_cache
    except ImportError:
        return {}
    try:
        cache = get_cache(str(cache_dir))
        records = cache.list_cache_records()
    except Exception as error:  # e.g. a build writing the database right now
        print(f"benchmarks/book.py: could not read {cache_dir}: {error}", file=sys.stderr)
        return {}
    out = {}
    for record in records:
        stem = Path(record.uri).stem
        seconds = (record.data or {}).get("execution_seconds")
        matches = False
        nb_path = Path(record.uri)
        if nb_path.exists():
            try:
                matches = (
                    cache.match_cache_notebook(nbformat.read(nb_path, as_version=4)).pk == record.pk
                )
            except KeyError:
                matches = False
        out[stem] = (seconds, record.created.timestamp(), matches)
    return out


def measure_builds(root: Path = ROOT, path: Path = TIMINGS, command=None) -> dict:
    """Time a cold `make book` (``_build`` removed first) and a rebuild with every notebook touched
    but unchanged; store both in the timings file. ``command`` replaces ["make", "book"] (tests)."""
    command = command or [os.environ.get("MAKE", "make"), "book"]
    build_dir = root / "_build"
    data = load_timings(path)
    shutil.rmtree(build_dir, ignore_errors=True)
    start = time.perf_counter()
    cold = subprocess.run(command, cwd=root)
    cold_s = time.perf_counter() - start
    data["builds"]["cold"] = {
        "seconds": round(cold_s, 1),
        "ok": cold.returncode == 0,
        "measured": _now(),
        "commit": _commit(root),
        "command": " ".join(command),
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
    }
    save_timings(data, path)
    before = _cache_records(build_dir)
    for nb in chapters(root):
        nb.touch()  # newer mtime, same content
    start = time.perf_counter()
    rebuild = subprocess.run(command, cwd=root)
    rebuild_s = time.perf_counter() - start
    after = _cache_records(build_dir)
    executed = sum(
        1 for stem, rec in after.items() if stem not in before or rec[1] != before[stem][1]
    )
    data["builds"]["rebuild"] = {
        "seconds": round(rebuild_s, 1),
        "ok": rebuild.returncode == 0,
        "measured": _now(),
        "commit": _commit(root),
        "command": " ".join(command),
        "executed_notebooks": executed,
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
    }
    save_timings(data, path)
    return data


# --- reporting ---------------------------------------------------------------------------------------


def run(
    measure=(),
    prefixes=(),
    root: Path = ROOT,
    path: Path = TIMINGS,
    command=None,
    time_chapter=None,
) -> Section:
    """Measure what ``measure`` names ("chapters", "build"), then report everything the timings file
    and the execution cache hold."""
    measure = set(measure)
    if "chapters" in measure:
        measure_chapters(prefixes, root, path, time_chapter)
    if "build" in measure:
        measure_builds(root, path, command)
    data = load_timings(path)
    cached = _cache_records(root / "_build")
    rows = []
    for nb in chapters(root):
        stored = data["chapters"].get(nb.stem)
        cache = cached.get(nb.stem)
        row = {
            "chapter": nb.stem,
            "fresh_s": None,
            "measured": None,
            "cache_s": None,
            "budget": CHAPTER_BUDGET_S,
            "within": None,
            "stale": False,
        }
        if stored is not None:
            notebook_changed = stored.get("sha256") != _sha256(nb)
            lib_changed = changed_since(root, stored.get("commit"), CHAPTER_INPUTS)
            row["stale"] = notebook_changed or lib_changed
            row["fresh_s"] = stored["seconds"]
            row["measured"] = f"{stored['measured'][:10]} ({stored.get('commit') or '?'})" + (
                " (notebook changed since)"
                if notebook_changed
                else " (lib or requirements changed since)"
                if lib_changed
                else ""
            )
        fresh_is_stale = row["stale"]
        if cache is not None and cache[0] is not None and cache[2]:
            row["cache_s"] = cache[0]
            row["stale"] = False  # the last build executed this very notebook: a current figure
        # a fresh-kernel time older than the notebook is shown in its column with its note, but
        # judged by only where no current figure exists (then the goal reads "not re-measured")
        current = [row["cache_s"]] if row["cache_s"] is not None else []
        if row["fresh_s"] is not None and not (fresh_is_stale and current):
            current.append(row["fresh_s"])
        row["judged_s"] = max(current) if current else None
        row["judged_from"] = (
            "during the last make book"
            if current and row["judged_s"] == row["cache_s"]
            else row["measured"]
        )
        seen = current
        row["within"] = max(seen) <= CHAPTER_BUDGET_S if seen else None
        if row["within"] and row["stale"]:
            row["within"] = NOT_REMEASURED
        rows.append(row)
    method = "Each chapter executed top to bottom in a fresh kernel, offline, by `tools/time_chapters.py` (*fresh kernel*, the same as `make chapter-times`; the date it was measured and whether the notebook changed since), and the execution time that Jupyter Book's cache recorded for the chapter during the last `make book` that executed it (*during make book*; shown only while the cached notebook matches the current one). The timings are stored in `benchmarks/book_timings.json`; `BENCH_BOOK=chapters make bench` measures the chapters again, `BENCH_BOOK=build make bench` the builds, `BENCH_BOOK=1 make bench` both (about half an hour on 2 cores). *Cold build*: `_build` removed (no site, no execution cache), then `make book` with the virtual environment and npm assets already installed. *Rebuild, nothing changed*: right after, every notebook touched (newer modification time, same content) and `make book` again: Jupyter Book runs, Sphinx re-reads every chapter, the execution cache serves every notebook's outputs (the number of notebooks executed again is shown). With no file touched, `make book` is a no-op."
    columns = [
        Column("chapter", "chapter"),
        Column("fresh_s", "fresh kernel (s)", ".1f"),
        Column("measured", "measured"),
        Column("cache_s", "during make book (s)", ".1f"),
        Column("budget", "budget (s)", ".0f"),
        Column("within", "within budget", yes_no),
    ]
    section = Section(
        "book",
        "5. The book: chapter execution times, cold build, rebuild",
        method,
        columns,
        rows,
        uses_torch_threads=False,
    )
    builds = []
    for key, label, budget in (
        ("cold", "cold `make book`", COLD_BUDGET_S),
        ("rebuild", "rebuild, nothing changed", REBUILD_BUDGET_S),
    ):
        b = data["builds"].get(key)
        stale = b is None or changed_since(root, b.get("commit"), BUILD_INPUTS)
        builds.append(
            {
                "build": label,
                "seconds": None if b is None else b["seconds"],
                "ok": None if b is None else b["ok"],
                "measured": None
                if b is None
                else f"{b['measured'][:10]} ({b.get('commit') or '?'})",
                "executed": None if b is None else b.get("executed_notebooks"),
                "budget": budget,
                "within": None
                if b is None
                else NOT_REMEASURED
                if b["ok"] and b["seconds"] <= budget and stale
                else b["ok"] and b["seconds"] <= budget,
                "stale": stale,
            }
        )
    build_columns = [
        Column("build", "build"),
        Column("seconds", "seconds", ".1f"),
        Column("ok", "succeeded", yes_no),
        Column("measured", "measured (commit)"),
        Column("executed", "notebooks executed"),
        Column("budget", "budget (s)", ".0f"),
        Column("within", "within budget", yes_no),
    ]
    section.extra_tables.append(("Builds:", build_columns, builds))
    missing = [r["chapter"] for r in rows if r["fresh_s"] is None and r["cache_s"] is None]
    if missing:
        section.findings.append(
            f"Not measured yet: {', '.join(missing)} (run `BENCH_BOOK=chapters make bench`)."
        )
    if any(b["seconds"] is None for b in builds):
        section.findings.append(
            "The builds have not been measured yet (run `BENCH_BOOK=build make bench`)."
        )
    measured = [r for r in rows if r["within"] is not None]

    def seconds(row):
        return row["judged_s"]

    slowest = max(measured, key=seconds, default=None)
    slowest_s = None if slowest is None else seconds(slowest)
    stale = [r["chapter"] for r in rows if r["stale"]]
    met = None if len(measured) < len(rows) else all(r["within"] for r in rows)
    if met and stale:
        met = NOT_REMEASURED  # a figure older than what it measures is never "yes"
    section.goals.append(
        {
            "goal": f"every chapter <= {CHAPTER_BUDGET_S:.0f} s",
            "measured": "not measured"
            if slowest is None
            else f"slowest {slowest_s:.1f} s ({slowest['chapter']}, {slowest['judged_from']}); "
            f"{len(measured)} of {len(rows)} chapters measured"
            + (f", {len(stale)} of them changed since" if stale else ""),
            "met": met,
        }
    )
    for b in builds:
        section.goals.append(
            {
                "goal": f"{b['build']} <= {b['budget']:.0f} s",
                "measured": "not measured"
                if b["seconds"] is None
                else f"{b['seconds']:.1f} s ({b['measured']})"
                + (" (the build's sources changed since)" if b["stale"] else ""),
                "met": b["within"],
            }
        )
    if stale:
        section.findings.append(
            f"Measured before their notebook or the library last changed: {', '.join(stale)} "
            "(run `BENCH_BOOK=chapters make bench`)."
        )
    if any(b["stale"] for b in builds):
        section.findings.append(
            "A build time was measured before the build's sources last changed (run "
            "`BENCH_BOOK=build make bench`)."
        )
    over = [r["chapter"] for r in rows if r["within"] is False]
    if over:
        section.findings.append(f"Over the {CHAPTER_BUDGET_S:.0f} s budget: {', '.join(over)}.")
    return section
