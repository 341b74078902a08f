"""No exercise's answer is in view on the built site before the reader asks for it (issue 22).

For every exercise of every chapter, in the built HTML: the worked solution, the checker's verdict on it
and the model answer are inside one closed ``<details class="exercise-solution">`` ("Show a worked
solution", made by book/_ext/exercises.py), and outside the folds the page shows no verdict and no line
of a solution or a model answer. The solutions are read from the chapters themselves (the cells tagged
``solution``), so a new exercise is covered without changing this test.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from .conftest import ROOT

pytestmark = pytest.mark.site

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXERCISE = re.compile(r"^\*\*Exercise (\d+)")
CHECK_CALL = re.compile(r"^check_\w+\(.*\)$", re.S)


def squash(text: str) -> str:
    return " ".join(text.split())


def bare(text: str) -> str:
    """``text`` without any whitespace: the HTML splits code into highlighted tokens, and the text of
    those tokens comes back with spaces between them."""
    return re.sub(r"\s+", "", text)


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def solution_texts(path: Path) -> tuple[int, int, list[str], list[str]]:
    """(number of exercises, number of checked ones, lines of the worked solutions that appear nowhere
    else in the chapter, fragments of the model answers' prose)."""
    cells = nbformat.read(path, as_version=4).cells
    exercises = sum(1 for c in cells if c.cell_type == "markdown" and EXERCISE.match(c.source))
    checked = sum(
        1
        for c in cells
        if c.cell_type == "code" and "solution" in tags(c) and CHECK_CALL.match(c.source.strip())
    )
    elsewhere = squash("\n".join(c.source for c in cells if "solution" not in tags(c)))
    lines, prose = [], []
    for cell in cells:
        # a check of the worked solution's numbers ("remove-input") runs on the site, unseen
        if "solution" not in tags(cell) or "remove-input" in tags(cell):
            continue
        if cell.cell_type == "code" and not CHECK_CALL.match(cell.source.strip()):
            for line in cell.source.splitlines():
                line = squash(line)
                if len(line) > 25 and not line.startswith("#") and line not in elsewhere:
                    lines.append(line)
        elif cell.cell_type == "markdown":
            body = re.sub(r"</?details[^>]*>|<summary>.*?</summary>", " ", cell.source)
            # a run of plain words: no math, markup, code, citation or quote inside it (the site
            # renders those differently from their source)
            pieces = re.split(r"\$[^$]*\$|`[^`]*`|\{cite[^}]*\}|[*_'\"()\[\]\u2018-\u201d]", body)
            runs = [
                run.split()
                for piece in pieces
                for run in re.split(r"\S*[^A-Za-z0-9,;:.\s-]\S*", piece)
                if len(run.split()) >= 7
            ]
            if runs:
                prose.append(" ".join(runs[0][:7]))
            else:
                raise AssertionError(
                    f"{path.name}: no plain sentence in a model answer to look for"
                )
    return exercises, checked, lines, prose


def page_parts(page: Path) -> tuple[str, list, str]:
    """(the text outside every fold, the folds, the text inside them) of a built chapter."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup.body
    folds = article.find_all("details", class_="exercise-solution")
    inside = bare(" ".join(f.get_text(" ") for f in folds))
    for fold in folds:
        fold.extract()
    return article.get_text(" "), folds, inside


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_and_no_verdict_is_visible_before_unfolding(site, chapter):
    page = site / "notebooks" / f"{chapter.stem}.html"
    assert page.exists(), f"{page} was not built"
    exercises, checked, lines, prose = solution_texts(chapter)
    outside, folds, inside = page_parts(page)
    assert exercises and len(folds) == exercises, (
        f"{chapter.stem}: {exercises} exercises, {len(folds)} folds"
    )
    for fold in folds:
        assert fold.get("open") is None, "a fold is closed until the reader opens it"
        assert squash(fold.find("summary").get_text()) == "Show a worked solution"
    # the solutions and their verdicts are in the folds...
    assert lines and prose, f"{chapter.stem}: no solution text found to look for"
    for text in lines + prose:
        assert bare(text) in inside, (chapter.stem, text)
    assert len([f for f in folds if f.find(class_="exercise-verdict")]) == checked
    # ...and nothing of them outside
    leaked = [text for text in lines + prose if bare(text) in bare(outside)]
    assert not leaked, f"{chapter.stem}: solution text visible before unfolding: {leaked[:3]}"
    assert not re.search(r"✓ [^.:]{1,60}: passed\.", outside), (
        f"{chapter.stem}: a verdict is visible"
    )


def test_every_verdict_of_a_worked_solution_is_in_a_fold(site):
    """The verdicts on the site are the checkers' verdicts on the worked solutions: every one is folded."""
    total = 0
    for chapter in CHAPTERS:
        from bs4 import BeautifulSoup

        page = site / "notebooks" / f"{chapter.stem}.html"
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        verdicts = soup.find_all(class_="exercise-verdict")
        total += len(verdicts)
        for verdict in verdicts:
            assert verdict.find_parent("details", class_="exercise-solution"), (
                chapter.stem,
                verdict.get_text()[:80],
            )
    assert total >= 30  # one per checked exercise


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_the_student_editions_address_leads_to_the_folds(site, chapter):
    """The student edition sends the reader to each exercise's worked solution on the site
    (tools/make_student_edition.py's notes): its address is this page's section that holds every fold."""
    import sys

    from bs4 import BeautifulSoup

    sys.path.insert(0, str(ROOT / "tools"))
    import make_student_edition

    url = make_student_edition.page_url(chapter.stem)
    base = make_student_edition.base_url()
    assert url.startswith(base)
    path, anchor = url.removeprefix(base).split("#")
    soup = BeautifulSoup((site / path).read_text(encoding="utf-8"), "html.parser")
    section = soup.find("section", id=anchor)
    assert section, f"{path}: no section #{anchor}"
    exercises = solution_texts(chapter)[0]
    assert len(section.find_all("details", class_="exercise-solution")) == exercises
