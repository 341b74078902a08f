"""The students' notebooks show no book markup (lecturer review r3, problem 10): a citation is
author-year text, "(Graves et al., 2014)", and a link to a page of the book points to the published
site, not to ../book/..., which a hub does not have beside the notebook."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_the_site_is_the_books():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert make_course.SITE == config["html"]["baseurl"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem[:2])
def test_no_book_markup_in_the_course(path):
    nb, _ = make_course.course_notebook(nbformat.read(path, as_version=4), path.stem)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "{cite:" not in text and "](../book/" not in text
    assert ":::" not in text and ".ipynb)" not in text  # admonitions and links between chapters
    figures = [c for c in nb.cells if c.cell_type == "code" and "mystnb" in c.metadata]
    captions = [c for c in nb.cells if c.source.startswith("**Figure ")]
    # every figure but a worked solution's has its caption (tools/plain_notebooks.py)
    assert len(captions) == len(figures) > 0


def test_chapter_2s_citation_and_glossary_link():
    path = ROOT / "notebooks" / "02_attention_as_soft_lookup.ipynb"
    nb, _ = make_course.course_notebook(nbformat.read(path, as_version=4), path.stem)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "(Graves et al., 2014)" in text
    assert f"]({make_course.SITE}book/glossary.html#term-cosine-score)" in text


def _exercises_text(prefix: str) -> str:
    path = next((ROOT / "notebooks").glob(f"{prefix}_*.ipynb"))
    nb, _ = make_course.course_notebook(nbformat.read(path, as_version=4), path.stem)
    return " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")


def test_cases_are_called_unseen_only_where_they_are_private(monkeypatch, tmp_path):
    """Lecturer review r3, problem 2: every chapter has private grading cases (grading/chNN.py), so its
    course notebook keeps "on cases you do not see"; a chapter without a grading module (a lecturer who
    deletes one) is graded on its practice cases, which the students' package holds, and says so."""
    assert all((ROOT / "grading" / f"ch{p.stem[:2]}.py").exists() for p in CHAPTERS)
    assert "on cases you do not see" in _exercises_text("14")
    # the book itself says the reader's checker runs on practice cases that it names (first readers s11)
    book = (ROOT / "notebooks" / "14_bert.ipynb").read_text()
    assert "cases you do not see" not in book and "practice cases of its own" in book
    empty = tmp_path / "book"
    (empty / "grading").mkdir(parents=True)
    monkeypatch.setattr(make_course, "ROOT", empty)
    fourteen = _exercises_text("14")
    assert "cases you do not see" not in fourteen and make_course.PRACTICE in fourteen


def test_the_graders_verdict_on_practice_cases_does_not_call_them_hidden():
    import grade_course

    verdict = "✓ sharpen: `sharpen` is right on all 7 hidden cases; one hidden case is big."
    assert grade_course.public_wording(verdict) == (
        "✓ sharpen: `sharpen` is right on all 7 practice cases; one practice case is big."
    )
