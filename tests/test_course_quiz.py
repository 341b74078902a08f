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


def test_the_key_its_chapters_and_its_file(tmp_path, capsys):
    """Course review s27, m10: --chapters 01 05 08 11 said nothing of chapters 1 and 5, which have
    no questions; the key gave "-0.49" for a question that asks for three decimals; the key was
    written 0644 where the course's other secrets are 0600."""
    paper = tmp_path / "exam.md"
    assert qb.main(["--markdown", str(paper), "--chapters", "01", "05", "08", "11"]) == 0
    out = capsys.readouterr().out
    # chapter 1 has questions since lecturer review s34, m5, chapter 5 since course review s36, M1
    assert "no questions for chapter" not in out
    assert qb.missing_chapters(["01", "05", "08", "11"]) == []
    assert qb.missing_chapters(["05", "19"]) == ["19"]
    key = qb.key_path(paper)
    assert key.stat().st_mode & 0o777 == 0o600
    questions = qb.bank(1, 0, ["01", "05", "08", "11"], repeats=False)  # as the command, no repeats
    text, checked = key.read_text(), 0
    for i, q in enumerate(questions, 1):
        asked = re.search(r"Give (\w+) decimals", q.text)
        if q.kind == "numerical" and asked:
            line = re.search(rf"^{i}\. (\S+) \(", text, re.M)[1]
            assert len(line.partition(".")[2]) == qb.DECIMALS[asked[1]], line
            checked += 1
    assert checked >= 1
