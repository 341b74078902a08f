"""Keep the build's execution cache honest about the library the chapters import.

    python tools/chapter_cache.py             # empty the cache if lib changed
    python tools/chapter_cache.py --jobs 2    # and execute the chapters it lacks, two at a time (make book)
    python tools/chapter_cache.py --jobs 2 03 07 15   # only those chapters (a course's decks)

The build executes every chapter in a fresh kernel (`execute_notebooks: cache`, `allow_errors: false`)
and keeps the results in _build/.jupyter_cache, keyed on each notebook's code cells alone. A change to
lib/ that leaves a chapter's code as it was would otherwise leave that chapter's cached outputs, and
its passing assertions, from the old library. This script compares a fingerprint of lib/ and
requirements.txt with the one it recorded in the cache last time, empties the cache when they differ
(or when none is recorded), so that the build executes every chapter again, and records the current
one: every execution the cache holds after the build was made against the recorded library.

With ``--jobs N`` it then executes, N at a time, every chapter the cache has no record of, as the
build would (myst-nb's cache mode: jupyter-cache's ``single_nb_execution`` in the chapter's folder,
the timeout and ``allow_errors`` of _config.yml), and stores each run that finished without an error
in the cache the way myst-nb does; the build then finds them there. Each kernel runs torch on
cores/N threads: a chapter's small tensors keep a second thread idle most of the time (chapter 18:
115 s on one thread, 119 s on two, on a 2-core machine), so two chapters at a time on one thread
each roughly halve the build's longest step. A chapter that fails here is left out of the cache:
the build runs it again and fails on it with its usual message. The times the cache records (read
by ``make bench``) are then those of a chapter run beside another one.

`make test` reads these executions instead of running every chapter a second time
(tests/site/test_chapters_executed.py): each chapter was executed from its current source, against the
current lib, without an error (`make bench` reports the times it recorded against the 90 s budget). `make test-notebooks` still runs them under
nbval, for a developer who wants that run by itself.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
STAMP = CACHE / "lib-fingerprint.txt"
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def lib_fingerprint(root: Path = ROOT) -> str:
    """sha256 over the path and bytes of every file the chapters import from the tree, in path order."""
    files = [p for p in (root / "lib").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files.append(root / "requirements.txt")
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def recorded_fingerprint() -> str | None:
    return STAMP.read_text().strip() if STAMP.is_file() else None


def prepare() -> int:
    now, then = lib_fingerprint(), recorded_fingerprint()
    if CACHE.exists() and now != then:
        why = "no record of the library that filled it" if then is None else "lib/ changed"
        print(
            f"chapter_cache: emptying {CACHE.relative_to(ROOT)} ({why}): every chapter runs again"
        )
        shutil.rmtree(CACHE)
    CACHE.mkdir(parents=True, exist_ok=True)
    STAMP.write_text(now + "\n")
    return 0


def execution_settings(root: Path = ROOT) -> tuple[int, bool]:
    """The build's timeout per cell and allow_errors (_config.yml's execute section)."""
    import yaml

    execute = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))["execute"]
    return int(execute["timeout"]), bool(execute["allow_errors"])


def missing(chapters: list[Path] = CHAPTERS, cache_dir: Path = CACHE) -> list[Path]:
    """The chapters whose current code the cache holds no execution of."""
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_dir))
    out = []
    for path in chapters:
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            out.append(path)
    return out


def _execute(path: str, timeout: int, allow_errors: bool, threads: int) -> tuple[str, float, str]:
    """One chapter executed as myst-nb's cache mode executes it, in a process of its own: (the
    executed notebook as JSON, seconds, the error's traceback or "")."""
    os.environ["OMP_NUM_THREADS"] = str(threads)  # the kernel inherits it
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(
        nb,
        cwd=str(Path(path).parent),
        timeout=timeout,
        allow_errors=allow_errors,
        meta_override=True,
    )
    return nbformat.writes(result.nb), result.time, result.exc_string or ""


def fill(jobs: int, chapters: list[Path] | None = None, cache_dir: Path = CACHE) -> int:
    """Execute the chapters the cache lacks, ``jobs`` at a time, and cache each that ran cleanly.
    Returns how many failed (the build runs those again and reports them)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f"jobs must be an int, got {type(jobs).__name__} {jobs!r}")
    if jobs < 1:
        raise ValueError(f"jobs must be 1 or more, got {jobs}")
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    todo = missing(CHAPTERS if chapters is None else chapters, cache_dir)
    if not todo:
        return 0
    timeout, allow_errors = execution_settings()
    threads = int(os.environ.get("OMP_NUM_THREADS") or max(1, (os.cpu_count() or 1) // jobs))
    # the heaviest chapters are the last ones: started first, they do not finish alone at the end
    todo = sorted(todo, reverse=True)
    print(
        f"chapter_cache: executing {len(todo)} chapters, {jobs} at a time, {threads} thread(s) each"
    )
    cache = get_cache(str(cache_dir))
    failed = 0
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = {pool.submit(_execute, str(p), timeout, allow_errors, threads): p for p in todo}
        for run in as_completed(runs):
            path = runs[run]
            name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            try:
                text, seconds, error = run.result()
            except Exception as err:  # the process died: the build runs the chapter itself
                text, seconds, error = "", 0.0, f"{type(err).__name__}: {err}"
            if error:
                failed += 1
                print(f"chapter_cache: {name} failed; the build runs it again:\n{error[-3000:]}")
                continue
            record = cache.add_nb_to_project(str(path))
            cache.cache_notebook_bundle(
                CacheBundleIn(
                    nbformat.reads(text, as_version=4),
                    record.uri,
                    data={"execution_seconds": seconds},
                ),
                check_validity=False,
                overwrite=True,
            )
            print(f"chapter_cache: {name} executed in {seconds:.1f} s")
    print(f"chapter_cache: {len(todo)} chapters in {time.perf_counter() - start:.0f} s")
    return failed


def chosen(prefixes: list[str], chapters: list[Path] = CHAPTERS) -> list[Path] | None:
    """The chapters named by their prefixes ("03", "7", "15_sentence_embeddings"); None (every
    chapter) for none named. A prefix that names no chapter is an error."""
    if not prefixes:
        return None
    out = []
    for prefix in prefixes:
        key = prefix.zfill(2) if prefix.isdigit() else prefix
        found = [p for p in chapters if p.stem.startswith(key)]
        if not found:
            raise ValueError(f"no chapter starts with {prefix!r}")
        out += [p for p in found if p not in out]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="also execute the chapters the cache lacks, this many at a time (0: only check lib/)",
    )
    parser.add_argument(
        "chapters",
        nargs="*",
        help="execute only these chapters (prefixes: 03 07 15); default every chapter (lecturer"
        " review s23, M7: a course's three decks need not execute all 18)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 0:
        parser.error(f"--jobs must be 0 or more, got {args.jobs}")
    try:
        named = chosen(args.chapters)
    except ValueError as e:
        parser.error(str(e))
    prepare()
    if args.jobs:
        fill(args.jobs, named)  # failures: the build runs those chapters and fails on them
    return 0


if __name__ == "__main__":
    sys.exit(main())
