"""Write the student edition of the chapters: every cell tagged "solution" removed, outputs cleared.

    python tools/make_student_edition.py              # every chapter -> student/<chapter>.ipynb
    python tools/make_student_edition.py 03           # chapters whose file name starts with 03
    python tools/make_student_edition.py --out DIR    # somewhere else

What stays: the whole chapter, each exercise's answer cell (a template: a stub function whose body is
`...`, or predictions set to None) and each exercise's check cell. What goes: everything tagged
["solution"], i.e. the worked solutions, the check run on each worked solution (its verdict) and the
model answers in prose. A student edition therefore runs top to bottom as it is: the checkers answer
"not attempted" until the student writes something (see lib/exercises/__init__.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_TAG = "solution"


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def student_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` without solution cells, with outputs and execution counts cleared."""
    nb = nbformat.from_dict(nb)  # deep copy
    nb.cells = [cell for cell in nb.cells if not is_solution(cell)]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    return nb


def chapters(prefixes: list[str]) -> list[Path]:
    return [
        p
        for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        if not prefixes or any(p.name.startswith(x) for x in prefixes)
    ]


def write_student_edition(out: Path, prefixes: list[str] = ()) -> list[Path]:
    """Write one student notebook per chapter into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapters(list(prefixes)):
        nb = student_notebook(nbformat.read(path, as_version=4))
        nbformat.validate(nb)
        target = out / path.name
        nbformat.write(nb, target)
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "prefixes", nargs="*", help="only chapters whose file name starts with one of these"
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "student", help="output folder (default: student/)"
    )
    args = parser.parse_args(argv)
    written = write_student_edition(args.out, args.prefixes)
    if not written:
        print("no chapter matched", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
