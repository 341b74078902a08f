"""A course's site without worked solutions and model answers (issue 36): ``make book SOLUTIONS=0``.

Chapter 2 is built alone by jupyter-book, with the book's configuration and extensions (but the live
figures' and the slides', which need the whole build), once as the book builds it and once with
``BOOK_SOLUTIONS=0``. The book's page holds every worked solution and model answer, folded; the
course's page holds the statements and the answer cells, and none of them: no line of a worked
solution, no model answer, no fold, no copy of the notebook to download and no Colab button (the
notebook holds the solutions). Not executed (the book's build executes it; here only what the
pages show matters): about 40 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "02_attention_as_soft_lookup"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
NEEDS_THE_WHOLE_BUILD = ("live_lab: book/_ext", "slides: book/_ext")


def _build(work: Path, solutions: bool) -> tuple[str, Path]:
    """The chapter's page as text, and the built site's folder."""
    source = work / "source"
    source.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("_toc.yml", "_config.yml", "_build", "notebooks", ".git"):
            (source / entry.name).symlink_to(entry)
    (source / "notebooks").mkdir()
    (source / "notebooks" / f"{CHAPTER}.ipynb").symlink_to(ROOT / "notebooks" / f"{CHAPTER}.ipynb")
    (source / "_toc.yml").write_text(f"format: jb-book\nroot: notebooks/{CHAPTER}\n")
    config = [
        line
        for line in (ROOT / "_config.yml").read_text().splitlines()
        if not any(ext in line for ext in NEEDS_THE_WHOLE_BUILD)
    ]
    text = "\n".join(config).replace("execute_notebooks: cache", 'execute_notebooks: "off"')
    (source / "_config.yml").write_text(text + "\n")
    env = {**os.environ, "BOOK_SOLUTIONS": "1" if solutions else "0", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(source), "--path-output", str(work / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    site = work / "out" / "_build" / "html"
    page = (site / "notebooks" / f"{CHAPTER}.html").read_text()
    return page, site


def _text(page: str) -> str:
    from bs4 import BeautifulSoup

    return " ".join(BeautifulSoup(page, "html.parser").get_text(" ").split())


def _solution_lines() -> list[str]:
    """Lines of the worked solutions that appear nowhere else in the chapter (a template's ``def``
    line is in both)."""
    cells = nbformat.read(ROOT / "notebooks" / f"{CHAPTER}.ipynb", as_version=4).cells
    elsewhere = "\n".join(c.source for c in cells if "solution" not in c.metadata.get("tags", []))
    lines = []
    for cell in cells:
        if cell.cell_type == "code" and "solution" in cell.metadata.get("tags", []):
            for line in cell.source.splitlines():
                line = line.strip()
                if len(line) > 25 and line not in elsewhere and not line.startswith("#"):
                    lines.append(" ".join(re.sub(r"([()\[\],.:=*+/-])", r" \1 ", line).split()))
    return lines


def _loose(text: str) -> str:
    """Text with a space around punctuation (the highlighter splits code into tokens)."""
    return " ".join(re.sub(r"([()\[\],.:=*+/-])", r" \1 ", text).split())


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return {
        flag: _build(tmp_path_factory.mktemp(f"solutions{int(flag)}"), flag)
        for flag in (True, False)
    }


def test_the_books_page_holds_the_solutions_folded(pages):
    """The control: what the course's page must not hold is on the book's."""
    page, _ = pages[True]
    text = _loose(_text(page))
    lines = _solution_lines()
    assert len(lines) >= 5
    assert sum(line in text for line in lines) >= len(lines) // 2
    assert page.count('class="exercise-solution"') == 3 and "Model answer" in page


def test_the_courses_page_holds_the_exercises_and_no_solution(pages):
    page, site = pages[False]
    text = _text(page)
    assert "Exercise 2 (implement): NTM sharpening" in text and "def sharpen" in text
    assert "check_sharpen" in text  # the check cell stays: the student runs it on their answer
    loose = _loose(text)
    shown = [line for line in _solution_lines() if line in loose]
    assert not shown, shown
    assert "exercise-solution" not in page and "Model answer" not in page
    assert "Show a worked solution" not in page
    # nothing of the notebook to fetch: no copy of it, no download, no Colab
    assert not (site / "_sources").exists()
    assert ".ipynb" not in page and "colab.research.google.com" not in page
