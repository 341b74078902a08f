"""Write the student edition of the chapters: every cell tagged "solution" removed, outputs cleared.

    python tools/make_student_edition.py              # every chapter -> student/<chapter>.ipynb
    python tools/make_student_edition.py 03           # chapters whose file name starts with 03
    python tools/make_student_edition.py --out DIR    # somewhere else
    python tools/make_student_edition.py --answers-withheld   # for a course that hides the answers

What stays: the whole chapter, each exercise's answer cell (a template: a stub function whose body is
`...`, or predictions set to None) and each exercise's check cell. What goes: everything tagged
["solution"], i.e. the worked solutions, the check run on each worked solution (its verdict) and the
model answers in prose. A student edition therefore runs top to bottom as it is: the checkers answer
"not attempted" until the student writes something (see lib/exercises/__init__.py).

What it says instead (first-time readers of chapters 1, 5 and 8: "compare yours with the model
answer", and no model answer in sight): where each exercise's solutions were, one note says where
they are, the chapter's page of the book's site (`html.baseurl` in _config.yml) at its Exercises
section, behind "Show a worked solution", "unless your course's copy of the book leaves them out"; and
the exercises' introduction, which promises them folded below each check, says so. A course that
publishes its own site without the answers (`make book SOLUTIONS=0`) and hands out this edition writes
it with --answers-withheld (`make student SOLUTIONS=0`): the notes then name no site and say that the
teacher has the answers. nbgrader's release (tools/make_course.py) is not made from this edition: it
says in its own words that the model answers come back with the feedback.

The chapters' MyST markup (citations, admonitions, links to the book's pages, figure captions kept in
cell metadata) is first turned into plain Jupyter Markdown by tools/plain_notebooks.py, so that the
edition reads right in Jupyter and Colab; the figures' numbers are the site's.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
import plain_notebooks  # tools/ is on the path: this script's folder, or the tests' sys.path
import yaml

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_TAG = "solution"
# the note that stands where an exercise's solution cells were (tests/test_exercises.py finds it)
NOTE_TAG = "where-the-solution-is"
EXERCISE = re.compile(r"^\*\*Exercise (\d+)")
MODEL_ANSWER = '<details class="model-answer">'
# The exercises' introduction: "Below the check, folded together under *Show a worked solution* ...
# the student edition of the notebooks leaves the solutions out." (every chapter; tools/make_course.py
# rewrites the same sentence for nbgrader's release)
FOLDED = re.compile(
    r"Below\s+the\s+check,\s+folded\s+together\s.*?leaves\s+the\s+solutions\s+out\.", re.S
)
FOLDED_STUDENT = (
    "This edition of the notebook leaves out the worked solutions, the checker's verdicts on them and"
    " the model answers. Below each exercise's check, a note says where they are: on this chapter's page"
    " of the book's site, folded under *Show a worked solution*. Open them after your attempt."
)
FOLDED_WITHHELD = (
    "This edition of the notebook leaves out the worked solutions, the checker's verdicts on them and"
    " the model answers, and your course's copy of the book leaves them out too: your teacher has them."
)


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def base_url() -> str:
    """The book's site, ``html.baseurl`` in _config.yml, ending in "/"."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["html"]["baseurl"].rstrip("/") + "/"


def page_url(chapter: str) -> str:
    """The chapter's page on the book's site, at its Exercises section (every chapter's `## Exercises`)."""
    return f"{base_url()}notebooks/{chapter}.html#exercises"


def where_note(chapter: str, exercise: str, removed: list, withheld: bool = False) -> str:
    """The note that stands where exercise ``exercise``'s solution cells (``removed``) were."""
    answer = any(c.cell_type == "markdown" and MODEL_ANSWER in c.source for c in removed)
    what, verb, it = (
        ("worked solution and model answer", "are", "them")
        if answer
        else ("worked solution", "is", "it")
    )
    if withheld:
        return (
            f"**Exercise {exercise}'s {what}** {verb} not in this edition of the notebook, and your"
            f" course's copy of the book leaves {it} out: your teacher has {it}."
        )
    url = page_url(chapter)
    return (
        f"**Exercise {exercise}'s {what}** {verb} not in this edition of the notebook. You find {it} on"
        f" this chapter's page of the book's site, <{url}>, under Exercise {exercise}, folded under"
        f" *Show a worked solution*, unless your course's copy of the book leaves {it} out. Open {it}"
        " after your attempt."
    )


def student_notebook(
    nb: nbformat.NotebookNode, chapter: str = "", withheld: bool = False
) -> nbformat.NotebookNode:
    """A copy of ``nb`` in plain Jupyter Markdown (tools/plain_notebooks.py), without solution cells,
    with outputs and execution counts cleared; where an exercise's solution cells were, a note on
    where they are (``chapter``: the notebook's name, for the site's address and the figures'
    numbers; ``withheld``: the course's site leaves them out)."""
    # plain Markdown first: the figures are numbered as on the site, the solutions' figures counted
    # (withheld: the course's site is elsewhere, so links to the book's pages become their text)
    nb = nbformat.from_dict(plain_notebooks.plain_notebook(nb, chapter, links=not withheld))
    cells, removed, exercise = [], [], "?"
    for cell in nb.cells + [None]:
        if cell is not None and is_solution(cell):
            removed.append(cell)
            continue
        if removed:
            note = nbformat.v4.new_markdown_cell(where_note(chapter, exercise, removed, withheld))
            note.id = f"{removed[0].get('id', 'solution')}-where"  # the same on every run
            note.metadata["tags"] = [NOTE_TAG]
            cells.append(note)
            removed = []
        if cell is None:
            break
        if cell.cell_type == "markdown":
            found = EXERCISE.match(cell.source.strip())
            exercise = found[1] if found else exercise
            cell.source = FOLDED.sub(FOLDED_WITHHELD if withheld else FOLDED_STUDENT, cell.source)
        cells.append(cell)
    nb.cells = cells
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


def write_student_edition(
    out: Path, prefixes: list[str] = (), withheld: bool = False
) -> list[Path]:
    """Write one student notebook per chapter into ``out``; returns their paths (``withheld``: the
    course's copy of the book leaves the answers out, see the module's docstring)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapters(list(prefixes)):
        nb = student_notebook(nbformat.read(path, as_version=4), path.stem, withheld)
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
    parser.add_argument(
        "--answers-withheld",
        action="store_true",
        help="your course's copy of the book leaves the answers out (make book SOLUTIONS=0): the notes"
        " where the solutions were name no site and say that the teacher has them",
    )
    args = parser.parse_args(argv)
    written = write_student_edition(args.out, args.prefixes, args.answers_withheld)
    if not written:
        print("no chapter matched", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
