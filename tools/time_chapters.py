"""Execute every chapter in a fresh kernel, offline, and print its wall time as a Markdown table.

    python tools/time_chapters.py            # all chapters
    python tools/time_chapters.py 03         # chapters whose file name starts with 03
    python tools/time_chapters.py --no-budget   # run them all (their asserts must hold), times not judged

The numbers go into README.md's table of chapter times; the budget is 90 s per chapter on 2 cores.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 90.0


def time_chapter(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main(prefixes: list[str]) -> int:
    judge = "--no-budget" not in prefixes  # make test-kernels: slower kernel paths, asserts only
    prefixes = [p for p in prefixes if p != "--no-budget"]
    paths = [
        p
        for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        if not prefixes or any(p.name.startswith(x) for x in prefixes)
    ]
    print("| chapter | seconds |\n|---|---|")
    over = []
    for path in paths:
        seconds = time_chapter(path)
        print(f"| {path.stem} | {seconds:.1f} |", flush=True)
        if judge and seconds > BUDGET_S:
            over.append(path.name)
    if over:
        print(f"over the {BUDGET_S:.0f} s budget: {over}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
