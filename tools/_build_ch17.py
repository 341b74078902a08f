"""Scratch builder of notebooks/17_modern_decoder.ipynb (deleted before the last commit)."""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
cells = []
CHECK = '# @title Check the numbers above { display-mode: "form" }\n'
G = "../book/glossary.md#term-"


def md(cid, text, tags=None):
    meta = {"tags": tags} if tags else {}
    cells.append(dict(cell_type="markdown", id=cid, metadata=meta, source=text.strip("\n")))


def code(cid, text, tags=None, fig=None):
    meta = {}
    if fig:
        name, caption, alt = fig
        meta["mystnb"] = {"figure": {"caption": caption, "name": name}, "image": {"alt": alt}}
    if tags:
        meta["tags"] = tags
    cells.append(
        dict(
            cell_type="code",
            id=cid,
            metadata=meta,
            source=text.strip("\n"),
            execution_count=None,
            outputs=[],
        )
    )


def check(cid, text):
    code(cid, CHECK + text.strip("\n"), tags=["remove-input"])


def solution(cid, text):
    cells.append(
        dict(
            cell_type="code",
            id=cid,
            metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}, "cellView": "form"},
            source=text.strip("\n"),
            execution_count=None,
            outputs=[],
        )
    )


exec((ROOT / "tools" / "_ch17_cells.py").read_text())

colab = json.loads((ROOT / "notebooks" / "16_beyond_bert.ipynb").read_text())["cells"][0]
colab = dict(colab, id="ch17-colab")
nb = {
    "cells": [colab] + [{**c, "source": c["source"].splitlines(keepends=True)} for c in cells],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}
ids = [c["id"] for c in nb["cells"]]
assert len(ids) == len(set(ids)), "duplicate cell ids"
path = ROOT / "notebooks" / "17_modern_decoder.ipynb"
path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
print(f"{len(nb['cells'])} cells -> {path}")
