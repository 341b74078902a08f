"""The book stands on its own: its reader never saw the lecture courses it was built from, so no chapter,
no page and no library file the reader opens refers to them. The one note on the book's sources (the
admonition labelled ``sources-note`` in book/reading.md) is the only place that names them.

(The teachers' page speaks of the lecture a teacher gives in class, with the book's own decks: that is
not a reference to the sources, and it is left out of the scan.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PAGES = sorted(p for p in (ROOT / "book").glob("*.md") if p.name != "teachers.md")
LIBRARY = sorted((ROOT / "lib").rglob("*.py"))
# "slides" is left out: the chapters use the verb (a query that slides along a segment)
WORD = re.compile(r"lecture|\bdecks?\b", re.IGNORECASE)
NOTE = re.compile(r"\(sources-note\)=\n```\{admonition\}.*?\n```\n", re.DOTALL)


def mentions(text: str) -> list[str]:
    """Each line of ``text`` that says "lecture", trimmed to the words around it."""
    return [line.strip()[:160] for line in text.splitlines() if WORD.search(line)]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_chapter_refers_to_lectures(path):
    nb = nbformat.read(path, as_version=4)
    found = [
        (cell.get("id"), m)
        for cell in nb.cells
        # prose, code, comments and printed strings; captions and alt text live in the metadata
        for m in mentions(cell.source + "\n" + json.dumps(cell.metadata, ensure_ascii=False))
    ]
    assert not found, f"{path.name}: cells that name the lectures or decks (cell id, line): {found}"


def test_no_page_or_library_file_refers_to_lectures_but_the_one_note():
    reading = (ROOT / "book" / "reading.md").read_text()
    notes = NOTE.findall(reading)
    assert len(notes) == 1 and WORD.search(notes[0]), "book/reading.md: the one note on the sources"
    found = {}
    for path in PAGES + LIBRARY:
        text = path.read_text()
        if path.name == "reading.md" and path.parent.name == "book":
            text = NOTE.sub("", text)
        if m := mentions(text):
            found[str(path.relative_to(ROOT))] = m
    assert not found, f"files that say 'lecture' outside the note on the sources: {found}"


def test_the_scan_finds_what_it_looks_for():
    assert mentions("as one Lecture shows\nnothing here") == ["as one Lecture shows"]
    assert mentions("the deck's figure") == ["the deck's figure"] and not mentions("a deckchair")
    note = "(sources-note)=\n```{admonition} Where\nfour lecture courses\n```\n"
    assert NOTE.sub("", f"before\n{note}after the lectures") == "before\nafter the lectures"
