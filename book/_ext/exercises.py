"""Sphinx extension: each exercise's worked solution, the checker's verdict on it and its model answer
fold together behind one "Show a worked solution" control (issue 22).

In a chapter, an exercise is its statement, the reader's answer cell and the check of that answer (tagged
``remove-output``: on the site the check has not run on anything of the reader's), then the cells tagged
``solution``: the worked solution, the check run on it (its verdict) and the model answer, a Markdown cell
``<details class="model-answer"><summary>Model answer ...</summary> ... </details>`` (which folds the
answer in Jupyter and Colab as well). This extension moves every run of consecutive solution cells, with
the model answer that follows them, into one ``<details class="exercise-solution">`` element; the model
answer's own ``<details>`` becomes a heading inside it, so one click shows all of it.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx

SUMMARY = "Show a worked solution"
MODEL_OPEN = re.compile(r'^\s*<details class="model-answer">\s*<summary>(.*?)</summary>\s*$', re.S)
MODEL_CLOSE = re.compile(r"^\s*</details>\s*$")


class exercise_solution(nodes.General, nodes.Element):
    """The fold: a <details> element in HTML, its children as they are in other formats."""


def _visit_html(self, node: exercise_solution) -> None:
    self.body.append(f'<details class="exercise-solution">\n<summary>{SUMMARY}</summary>\n')


def _depart_html(self, node: exercise_solution) -> None:
    self.body.append("</details>\n")


def _visit_other(self, node: exercise_solution) -> None:
    pass


def _is_solution_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and "tag_solution" in node.get("classes", [])


def _raw_html(node: nodes.Node, pattern: re.Pattern) -> re.Match | None:
    if isinstance(node, nodes.raw) and "html" in node.get("format", "").split():
        return pattern.match(node.astext())
    return None


def fold(parent: nodes.Element) -> int:
    """Fold the solutions among ``parent``'s children (and, recursively, its sections'); returns how many."""
    folded, children, i = 0, list(parent.children), 0
    kept: list[nodes.Node] = []
    while i < len(children):
        child = children[i]
        if not (_is_solution_cell(child) or _raw_html(child, MODEL_OPEN)):
            if isinstance(child, nodes.Element) and not isinstance(child, nodes.container):
                folded += fold(child)
            kept.append(child)
            i += 1
            continue
        box = exercise_solution()
        while i < len(children) and _is_solution_cell(children[i]):
            box += children[i]
            i += 1
        opened = _raw_html(children[i], MODEL_OPEN) if i < len(children) else None
        if opened:  # the model answer: its title, its paragraphs, up to its closing tag
            title = opened.group(1)
            box += nodes.raw(
                "", f'<p class="model-answer-title"><strong>{title}</strong></p>\n', format="html"
            )
            i += 1
            while i < len(children) and not _raw_html(children[i], MODEL_CLOSE):
                box += children[i]
                i += 1
            i += 1  # the closing tag itself is dropped
        kept.append(box)
        folded += 1
    parent.children = []
    parent.extend(kept)
    return folded


def _fold_doctree(app: Sphinx, doctree: nodes.document) -> None:
    fold(doctree)


def setup(app: Sphinx) -> dict:
    app.add_node(
        exercise_solution,
        html=(_visit_html, _depart_html),
        latex=(_visit_other, _visit_other),
        text=(_visit_other, _visit_other),
        man=(_visit_other, _visit_other),
        texinfo=(_visit_other, _visit_other),
    )
    app.connect("doctree-read", _fold_doctree)
    app.add_css_file("exercises.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}


__all__ = ["fold", "SUMMARY"]
