"""Sphinx extension: each exercise's worked solution, the checker's verdict on it and its model answer
fold together behind one "Show a worked solution" control (issue 22).

In a chapter, an exercise is its statement, the reader's answer cell and the check of that answer (tagged
``remove-output``: on the site the check has not run on anything of the reader's), then the cells tagged
``solution``: the worked solution, the check run on it (its verdict) and the model answer, a Markdown cell
``<details class="model-answer"><summary>Model answer ...</summary> ... </details>`` (which folds the
answer in Jupyter and Colab as well). This extension moves every run of consecutive solution cells and
model answers (a check of the model answer's numbers may follow it) into one
``<details class="exercise-solution">`` element; the model answer's own ``<details>`` becomes a heading
inside it, so one click shows all of it.

A course's own site, PDF and ePub can leave them out altogether (issue 36): with the environment
variable ``BOOK_SOLUTIONS=0`` (``make book SOLUTIONS=0``; the Sphinx setting ``exercise_solutions``),
the same cells are removed instead of folded, in every builder, and the pages offer no download of
their notebook and no launch button (the book's notebooks hold the solutions, folded).
"""

from __future__ import annotations

import os
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


def fold(parent: nodes.Element, keep: bool = True) -> int:
    """Fold the solutions among ``parent``'s children (and, recursively, its sections'), or remove them
    if not ``keep``; returns how many."""
    folded, children, i = 0, list(parent.children), 0
    kept: list[nodes.Node] = []
    while i < len(children):
        child = children[i]
        if not (_is_solution_cell(child) or _raw_html(child, MODEL_OPEN)):
            if isinstance(child, nodes.Element) and not isinstance(child, nodes.container):
                folded += fold(child, keep)
            kept.append(child)
            i += 1
            continue
        box = exercise_solution()
        # solution cells and model answers, in any order, until the next cell of neither kind (a check
        # of the model answer's numbers may follow it, so that a note prints under its sentence)
        while i < len(children) and (
            _is_solution_cell(children[i]) or _raw_html(children[i], MODEL_OPEN)
        ):
            while i < len(children) and _is_solution_cell(children[i]):
                box += children[i]
                i += 1
            opened = _raw_html(children[i], MODEL_OPEN) if i < len(children) else None
            if opened:  # the model answer: its title, its paragraphs, up to its closing tag
                title = opened.group(1)
                box += nodes.raw(
                    "",
                    f'<p class="model-answer-title"><strong>{title}</strong></p>\n',
                    format="html",
                )
                i += 1
                while i < len(children) and not _raw_html(children[i], MODEL_CLOSE):
                    box += children[i]
                    i += 1
                i += 1  # the closing tag itself is dropped
        if keep:
            kept.append(box)
        folded += 1
    parent.children = []
    parent.extend(kept)
    return folded


def drop_pointer(doctree: nodes.document) -> int:
    """Remove the sentence that points the reader to the fold ("Below the check, folded together under
    *Show a worked solution* ..., are a worked solution ...") from a page without solutions: from the
    start of that sentence to its end, in its paragraph. Returns how many were removed."""
    removed = 0
    for emphasis in list(doctree.findall(nodes.emphasis)):
        paragraph = emphasis.parent
        if emphasis.astext() != SUMMARY or not isinstance(paragraph, nodes.paragraph):
            continue
        children = list(paragraph.children)
        at = first = children.index(emphasis)
        while first and isinstance(children[first - 1], nodes.Text):  # the text since the markup
            first -= 1
        head = "".join(str(c) for c in children[first:at])
        starts = [m.end() for m in re.finditer(r"[.!?]\s+", head)]
        head = head[: starts[-1]].rstrip() if starts else ""
        tail, end = "", len(children)
        for k in range(at + 1, len(children)):
            found = re.search(r"\.(\s|$)", children[k].astext())
            if isinstance(children[k], nodes.Text) and found:
                tail, end = children[k].astext()[found.end() :].strip(), k + 1
                break
        kept = [nodes.Text(head)] if head else []
        kept += [nodes.Text(" " + tail)] if tail else []
        paragraph.children = []
        paragraph.extend(children[:first] + kept + children[end:])
        removed += 1
    return removed


def _fold_doctree(app: Sphinx, doctree: nodes.document) -> None:
    keep = app.config.exercise_solutions
    fold(doctree, keep=keep)
    if not keep:
        drop_pointer(doctree)


def _without_notebooks(app: Sphinx, config) -> None:
    """A site without solutions offers no copy of the chapters' notebooks, which hold them."""
    if not config.exercise_solutions:
        config.html_copy_source = False
        options = dict(config.html_theme_options or {})
        options.update(use_download_button=False, launch_buttons={})
        config.html_theme_options = options


def setup(app: Sphinx) -> dict:
    app.add_node(
        exercise_solution,
        html=(_visit_html, _depart_html),
        latex=(_visit_other, _visit_other),
        text=(_visit_other, _visit_other),
        man=(_visit_other, _visit_other),
        texinfo=(_visit_other, _visit_other),
    )
    app.add_config_value(
        "exercise_solutions", os.environ.get("BOOK_SOLUTIONS", "1") != "0", "env", [bool]
    )
    app.connect("config-inited", _without_notebooks)
    app.connect("doctree-read", _fold_doctree)
    app.add_css_file("exercises.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}


__all__ = ["fold", "drop_pointer", "SUMMARY"]
