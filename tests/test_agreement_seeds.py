"""Chapter 14's agreement gain over several seeds (tools/agreement_seeds.py, measured offline: the seeds
do not fit in the chapter's time): the spread the chapter states is the one in the script's results."""

from __future__ import annotations

import json
import re

import nbformat

from tests.test_exercises import ROOT

RESULTS = ROOT / "tools" / "agreement_seeds.json"
CHAPTER = ROOT / "notebooks" / "14_bert.ipynb"


def _results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def _prose() -> str:
    cells = nbformat.read(CHAPTER, as_version=4).cells
    return " ".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")


def _points(gain: float) -> str:
    return f"{100 * gain:.1f}".replace("-", "\N{MINUS SIGN}")


def test_the_results_are_several_seeds_of_the_chapters_run():
    runs = _results()["runs"]
    seeds = [r["seed"] for r in runs]
    assert len(runs) >= 5 and len(set(seeds)) == len(seeds) and 0 in seeds  # seed 0: the chapter's
    for r in runs:
        assert abs(r["gain"] - (r["pretrained"] - r["from scratch"])) < 1e-12
        assert all(0 < r[k] < 1 for k in ("pretrained", "from scratch"))


def test_the_chapter_states_the_spread_the_seeds_measured():
    data = _results()
    gains = [r["gain"] for r in data["runs"]]
    prose = _prose()
    n, lo, hi = len(gains), _points(min(gains)), _points(max(gains))
    # the main text and the fold: the range of the gain and the number of seeds
    assert f"from {lo} to {hi} points over {n} seeds" in prose, (n, lo, hi)
    # the fold names the processor the seeds ran on and the script
    assert "tools/agreement_seeds.py" in prose
    maker = "AMD" if "AMD" in data["processor"] else "Intel"
    assert re.search(rf"seeds ran on an? {maker}", prose), data["processor"]
    # how many of the seeds put the pretrained start ahead, as the text says it
    ahead = sum(g > 0 for g in gains)
    words = "zero one two three four five six seven eight nine ten".split()
    said = f"ahead in all {words[n]}" if ahead == n else f"ahead in {words[ahead]} of them"
    assert said in prose, (said, ahead, n)
