"""The quiz bank's essays are out of their rubric's points (lecturer review r3, problem 9): Moodle's
defaultgrade is the number of the rubric's criteria, a point each, as graderinfo says; a numerical or
multiple-choice question is out of 1."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import quiz_bank as qb  # noqa: E402


def test_an_essay_is_out_of_its_rubrics_points():
    root = ET.fromstring(qb.moodle_xml(qb.bank(variants=1, seed=1)))
    essays = 0
    for q in root:
        if q.get("type") == "category":
            continue
        grade = float(q.find("defaultgrade").text)
        if q.get("type") == "essay":
            info = q.find("graderinfo/text").text
            stated = int(re.search(r"Rubric, (\d+) points", info).group(1))
            assert grade == stated == info.count("<li>"), q.find("name/text").text
            essays += 1
        else:
            assert grade == 1
    assert essays == len(qb.WRITTEN)
