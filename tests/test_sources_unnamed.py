"""The book stands on its own (issue 37): its reader never saw the lecture decks it was built from, so the
chapters do not mention them, not in prose, captions, alt text, code, comments or printed strings, nor do
their checkers' messages. An example is introduced by what it is; a formula often shown wrong becomes a
short "common mistake" note. Checked here for the chapters whose text has been rewritten so far."""

from __future__ import annotations

import json
import re

import pytest

from tests.test_bibliography import ROOT

REWRITTEN = ["01", "02", "03", "04", "05"]
# "slides" is left out: the chapters use the verb (a query that slides along a segment)
SOURCES = re.compile(r"\blectures?\b|\bdecks?\b", re.IGNORECASE)


def _chapter(prefix: str):
    return next((ROOT / "notebooks").glob(f"{prefix}_*.ipynb"))


@pytest.mark.parametrize("prefix", REWRITTEN)
def test_the_chapter_does_not_name_its_sources(prefix):
    raw = json.loads(_chapter(prefix).read_text(encoding="utf-8"))
    found = []
    for cell in raw["cells"]:
        text = "".join(cell["source"]) + json.dumps(cell["metadata"], ensure_ascii=False)
        found += [(cell.get("id"), m.group(0)) for m in SOURCES.finditer(text)]
    assert not found, f"{_chapter(prefix).name}: {found}"


@pytest.mark.parametrize("prefix", REWRITTEN)
def test_the_checkers_do_not_name_the_sources(prefix):
    text = (ROOT / "lib" / "exercises" / f"ch{prefix}.py").read_text(encoding="utf-8")
    assert not SOURCES.findall(text)


def test_the_pattern_finds_what_it_must():
    assert SOURCES.search("One of the lectures writes") and SOURCES.search("the lecture's 4x4")
    assert SOURCES.search("the deck's sample") and not SOURCES.search("a lectern")
