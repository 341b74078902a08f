"""Chapters 11-16 stand on their own: their reader never saw the lectures the book was built from, so
nothing the reader sees (markdown, code and its comments, captions, alt text, checker messages) refers
to them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("1[1-6]_*.ipynb"))
CHECKERS = [ROOT / "lib" / "exercises" / f"ch{n}.py" for n in range(11, 17)]
SOURCES = re.compile(r"\blectures?\b|\bdecks?\b|\bslides?\b", re.IGNORECASE)


@pytest.mark.parametrize("path", CHAPTERS + CHECKERS, ids=lambda p: p.name)
def test_no_reference_to_the_lectures(path):
    text = path.read_text()
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        text = "\n".join("".join(c["source"]) + json.dumps(c["metadata"]) for c in cells)
    found = [m.group(0) for m in SOURCES.finditer(text)]
    assert not found, f"{path.name} refers to its sources: {found}"


def test_the_six_chapters_are_checked():
    assert len(CHAPTERS) == 6 and all(p.exists() for p in CHECKERS)
