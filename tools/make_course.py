"""Write an nbgrader course from the chapters (issue 14): `make course` -> course/ (never
committed).

    python tools/make_course.py                 # every chapter ->
    course/source/<chapter>/<chapter>.ipynb python tools/make_course.py --out DIR 02    # chapters
    whose file name starts with 02, into DIR

The course directory is nbgrader's (https://nbgrader.readthedocs.io): ``source/`` holds one
assignment per chapter, ``nbgrader_config.py`` the settings, and nbgrader itself creates the
gradebook (``gradebook.db``, SQLite) and the ``release/``, ``submitted/``, ``autograded/`` and
``feedback/`` folders as the teacher runs its commands (the "For teachers" page lists them).

Each chapter's assignment is the whole chapter, so that a student's answers run on the models the
chapter trains; every cell of the story is locked (read-only). Each exercise becomes:

- its **answer cell**, autograded: the template the chapter gives, then the worked solution between
  nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers (``generate_assignment`` removes
  it, so the student sees the template and a ``# YOUR CODE HERE`` line);
- its **test cell**, locked, worth the exercise's points: it calls the same ``lib.exercises``
  checker as the chapter and asserts that it passed, so a wrong answer fails with the checker's own
  feedback (the reason the student reads in nbgrader's feedback) and an untouched one with "not
  attempted"; the checker's hidden cases are in ``lib.exercises``, never in the notebook, so no test
  gives the answer away;
- its **model answer** (the chapter's folded prose answer), as a manually graded cell: the student
  writes an explanation in its place, and the model answer stays in the instructor's source as the
  rubric.

Points: :data:`POINTS` (one place): every checked exercise is worth ``POINTS["checked"]``, every
written explanation ``POINTS["written"]``.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
POINTS = {"checked": 2, "written": 1}
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
EXERCISE = re.compile(r"^\*\*Exercise (\d+)")

CONFIG = """# nbgrader configuration of the course written by tools/make_course.py (the chapters).
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "attention-book"
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = "sqlite:///" + {db!r}
# The student sees the template and this line where the worked solution was; no exception is raised,
# so an untouched notebook still runs top to bottom (its checkers answer "not attempted").
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE"}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# A chapter's cells train small models: allow two minutes per cell, as the book's build does.
c.ExecutePreprocessor.timeout = 120
# A test cell a student deleted is put back from the gradebook and graded
# (nbgrader's default: lost).
c.OverwriteCells.add_missing_cells = True
c.Exchange.root = {exchange!r}
"""


def _nbgrader(
    cell, grade_id: str, *, grade=False, solution=False, locked=False, points=None
) -> None:
    meta = {
        "grade": grade,
        "solution": solution,
        "locked": locked,
        "grade_id": grade_id,
        "schema_version": 3,
    }
    if points is not None:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _test_source(check_source: str) -> str:
    """The check cell as an autograder test: its last expression (the checker's verdict) must
    pass."""
    tree = ast.parse(check_source)
    last = tree.body[-1]
    if not isinstance(last, ast.Expr):
        raise ValueError(f"check cell does not end with a checker call: {check_source!r}")
    lines = check_source.rstrip().splitlines()
    head, expr = lines[: last.lineno - 1], "\n".join(lines[last.lineno - 1 :])
    return "\n".join([*head, f"verdict = {expr}", "assert verdict.passed, str(verdict)"])


def course_notebook(
    nb: nbformat.NotebookNode, chapter: str
) -> tuple[nbformat.NotebookNode, list[dict]]:
    """The instructor's version of a chapter (nbgrader metadata on every cell) and its exercises
    [{"number", "answer", "test", "points", "written"}]."""
    nb = nbformat.from_dict(nb)
    cells, exercises, current = [], [], None
    used: set[str] = set()

    def unique(grade_id: str) -> str:  # an exercise may have several answer or check cells
        k, name = 1, grade_id
        while name in used:
            k += 1
            name = f"{grade_id}_{k}"
        used.add(name)
        return name

    pending_template = None
    for i, cell in enumerate(nb.cells):
        src = cell.source
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown" and EXERCISE.match(src):
            current = {
                "number": int(EXERCISE.match(src).group(1)),
                "answer": None,
                "test": None,
                "points": 0,
                "written": None,
            }
            exercises.append(current)
            pending_template = None
            _nbgrader(cell, unique(f"ex{current['number']}_text"), locked=True)
            cells.append(cell)
            continue
        if current is not None and cell.cell_type == "markdown" and src.startswith("## "):
            current = None  # the exercises section ended
        if current is None:
            _nbgrader(cell, f"cell_{i}", locked=True)
            cells.append(cell)
            continue
        if cell.cell_type == "code" and "solution" in _tags(cell):
            template = (
                pending_template.source.rstrip() + "\n" if pending_template is not None else ""
            )
            answer = pending_template if pending_template is not None else cell
            answer.source = f"{template}{BEGIN}\n{src.rstrip()}\n{END}"
            answer.metadata["tags"] = [
                t for t in _tags(answer) if t not in ("solution", "hide-cell")
            ]
            grade_id = unique(f"ex{current['number']}_answer")
            _nbgrader(answer, grade_id, solution=True)
            current["answer"] = grade_id
            if pending_template is None:
                cells.append(answer)
            pending_template = None
            continue
        if cell.cell_type == "code" and re.search(r"\bcheck_\w+\(", src) and current["answer"]:
            cell.source = _test_source(src)
            grade_id = unique(f"ex{current['number']}_test")
            _nbgrader(cell, grade_id, grade=True, locked=True, points=POINTS["checked"])
            current["test"], current["points"] = grade_id, current["points"] + POINTS["checked"]
            cells.append(cell)
            continue
        if cell.cell_type == "markdown" and "solution" in _tags(cell):
            body = re.sub(r"^:::\{admonition\}[^\n]*\n(:class:[^\n]*\n)?", "", src).rstrip()
            body = re.sub(r"\n?:::$", "", body).rstrip()
            prompt = nbformat.v4.new_markdown_cell(
                f"**Exercise {current['number']}, in words.** Explain your answer in a few sentences (graded by your teacher)."
            )
            _nbgrader(prompt, unique(f"ex{current['number']}_prompt"), locked=True)
            answer = nbformat.v4.new_markdown_cell(f"{body}")
            written = unique(f"ex{current['number']}_written")
            _nbgrader(answer, written, grade=True, solution=True, points=POINTS["written"])
            current["written"] = written
            current["points"] += POINTS["written"]
            cells += [prompt, answer]
            continue
        if (
            cell.cell_type == "code"
            and current["answer"] is None
            and "solution" not in _tags(cell)
            and not re.search(r"\bcheck_\w+\(", src)
            and not src.lstrip().startswith(("from ", "import "))
        ):
            pending_template = cell  # the template: kept as the answer cell
            cells.append(cell)
            continue
        _nbgrader(cell, f"cell_{i}", locked=True)
        cells.append(cell)
    for k, cell in enumerate(cells):  # every cell needs its own id
        cell["id"] = f"{chapter[:2]}-{k:03d}"
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    return nb, exercises


def write_course(out: Path, prefixes: list[str]) -> list[tuple[str, list[dict]]]:
    out = out.resolve()
    written = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if prefixes and not any(path.name.startswith(p) for p in prefixes):
            continue
        chapter = path.stem
        nb, exercises = course_notebook(nbformat.read(path, as_version=4), chapter)
        target = out / "source" / chapter / f"{chapter}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append((chapter, exercises))
    (out / "exchange").mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(
        CONFIG.format(root=str(out), db=str(out / "gradebook.db"), exchange=str(out / "exchange"))
    )
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="file-name prefixes (default: every chapter)")
    parser.add_argument("--out", type=Path, default=ROOT / "course")
    args = parser.parse_args(argv)
    for chapter, exercises in write_course(args.out, args.chapters):
        total = sum(e["points"] for e in exercises)
        print(f"{chapter}: {len(exercises)} exercises, {total} points")
    print(
        f"course written to {args.out}; next: cd {args.out} && nbgrader generate_assignment <chapter>"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
