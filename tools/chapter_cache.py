"""Keep the build's execution cache honest about the library the chapters import.

    python tools/chapter_cache.py   # before the build (make book does it): empty the cache if lib changed

The build executes every chapter in a fresh kernel (`execute_notebooks: cache`, `allow_errors: false`)
and keeps the results in _build/.jupyter_cache, keyed on each notebook's code cells alone. A change to
lib/ that leaves a chapter's code as it was would otherwise leave that chapter's cached outputs, and
its passing assertions, from the old library. This script compares a fingerprint of lib/ and
requirements.txt with the one it recorded in the cache last time, empties the cache when they differ
(or when none is recorded), so that the build executes every chapter again, and records the current
one: every execution the cache holds after the build was made against the recorded library.

`make test` reads these executions instead of running every chapter a second time
(tests/site/test_chapters_executed.py): each chapter was executed from its current source, against the
current lib, without an error (`make bench` reports the times it recorded against the 90 s budget). `make test-notebooks` still runs them under
nbval, for a developer who wants that run by itself.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
STAMP = CACHE / "lib-fingerprint.txt"


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


if __name__ == "__main__":
    if len(sys.argv) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(prepare())
