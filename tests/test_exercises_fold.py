"""book/_ext/exercises.py: one exercise's solution cells and model answer fold into one box, whatever
their order (chapter 5 checks its model answers' numbers after them: the site showed 5 folds for 3
exercises, tests/site/test_exercises_folded.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import exercises as ext  # noqa: E402


def _solution(text: str) -> nodes.container:
    cell = nodes.container(classes=["cell", "tag_solution"])
    cell += nodes.paragraph(text=text)
    return cell


def _exercise(order: list[str]) -> list[nodes.Node]:
    parts = {
        "code": [_solution("worked solution")],
        "check": [_solution("check of the model answer's numbers")],
        "answer": [
            nodes.raw(
                "", '<details class="model-answer">\n<summary>Model answer</summary>', format="html"
            ),
            nodes.paragraph(text="the model answer"),
            nodes.raw("", "</details>", format="html"),
        ],
    }
    return [nodes.paragraph(text="Exercise statement")] + [n for name in order for n in parts[name]]


def test_a_check_after_the_model_answer_folds_with_it():
    for order in (["code", "answer", "check"], ["code", "check", "answer"]):
        section = nodes.section()
        section.extend(_exercise(order) + _exercise(order))  # two exercises, one after the other
        assert ext.fold(section) == 2, order
        boxes = [c for c in section.children if isinstance(c, ext.exercise_solution)]
        assert len(boxes) == 2 and len(section.children) == 4  # statement, box, statement, box
        text = boxes[0].astext()
        assert "worked solution" in text and "model answer" in text and "numbers" in text
        assert "</details>" not in text


def test_without_solutions_the_cells_are_removed():
    section = nodes.section()
    section.extend(_exercise(["code", "answer", "check"]))
    assert ext.fold(section, keep=False) == 1
    assert section.astext() == "Exercise statement"
