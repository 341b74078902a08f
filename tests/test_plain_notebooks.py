"""The chapters as plain Jupyter Markdown (tools/plain_notebooks.py), for the student edition, the
course and the notebook Colab opens (the branch `published`): no MyST markup is left, a citation is the
bibliography's author-year text linked to the site's References, an admonition a fold or a blockquote,
a link to a page of the book or to a chapter the site's page, each captioned figure has a caption
cell numbered as the site numbers it, and the code cells are the chapter's own, byte for byte."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student_edition  # noqa: E402
import plain_notebooks  # noqa: E402

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BASE = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["baseurl"]
REFS = f"{BASE}book/references.html"
# MyST constructs that Jupyter and Colab show as raw text
LEFT_OVER = {
    "citation role": re.compile(r"\{cite"),
    "colon fence": re.compile(r"^\s*:::", re.M),
    "directive option": re.compile(r"^:class:", re.M),
    "link to ../book/": re.compile(r"\]\(\.\./book/"),
    "link to a notebook": re.compile(r"\]\([^)\s]*\.ipynb[)#]"),
    "ref role": re.compile(r"\{(ref|numref)\}`"),
    "label target": re.compile(r"^\([\w:.-]+\)=\s*$", re.M),
}


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _captioned(nb) -> list:
    return [c for c in nb.cells if plain_notebooks.caption_of(c) is not None]


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> dict[str, tuple]:
    """Every chapter through the command line, as the deploy workflow runs it: {stem: (chapter, plain)}."""
    out = tmp_path_factory.mktemp("plain")
    assert plain_notebooks.main(["--out", str(out)]) == 0
    return {
        p.stem: (nbformat.read(p, as_version=4), nbformat.read(out / p.name, as_version=4))
        for p in CHAPTERS
    }


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem[:2])
def test_no_myst_is_left_and_the_code_is_the_chapters(converted, path):
    chapter, plain = converted[path.stem]
    nbformat.validate(plain)
    ids = [c.id for c in plain.cells]
    assert len(set(ids)) == len(ids)
    text = _markdown(plain)
    left = {name: rx.findall(text)[:3] for name, rx in LEFT_OVER.items() if rx.search(text)}
    assert not left, left
    # every code cell unchanged, in order: source, tags, metadata, id
    assert [c for c in plain.cells if c.cell_type == "code"] == [
        c for c in chapter.cells if c.cell_type == "code"
    ]
    assert plain.metadata == chapter.metadata
    # a figure's caption right after it, numbered in the site's order
    number = int(path.stem[:2])
    figures = _captioned(chapter)
    captions = [c for c in plain.cells if plain_notebooks.CAPTION_TAG in c.metadata.get("tags", [])]
    assert len(captions) == len(figures) > 0
    for k, (figure, caption) in enumerate(zip(figures, captions), 1):
        i = next(i for i, c in enumerate(plain.cells) if c is caption)
        assert plain.cells[i - 1] == figure
        assert caption.source.startswith(f"**Figure {number}.{k}.** ")
        assert not any(rx.search(caption.source) for rx in LEFT_OVER.values())
        assert ("solution" in caption.metadata.tags) == (
            "solution" in figure.metadata.get("tags", [])
        )
    # the cells in between: the chapter's markdown cells, each converted
    originals = [c for c in chapter.cells if c.cell_type == "markdown"]
    assert len(originals) == len([c for c in plain.cells if c.cell_type == "markdown"]) - len(
        captions
    )


def test_each_citation_is_the_bibliographys_author_year(converted):
    cite = plain_notebooks.citations()
    keys = {
        key
        for chapter, _ in converted.values()
        for m in plain_notebooks.CITE.finditer(_markdown(chapter))
        for key in m["keys"].split(",")
    }
    assert len(keys) > 100 and all(k.strip() in cite for k in keys)
    assert cite["bahdanau2015neural"] == ("Bahdanau et al.", "2015")
    assert cite["cho2014learning"] == ("Cho et al.", "2014a")  # the .bib's year tells them apart
    assert cite["kalchbrenner2013recurrent"] == ("Kalchbrenner and Blunsom", "2013")
    assert cite["graves2013generating"] == ("Graves", "2013")
    one = _markdown(converted["04_bahdanau_and_luong"][1])
    assert f"([Bahdanau et al., 2015]({REFS}))" in one
    assert f"[Luong et al. (2015)]({REFS})" in one
    two = _markdown(converted["02_attention_as_soft_lookup"][1])
    # several works: in the bibliography's order, as the site lists them
    assert f"([Nadaraya, 1964]({REFS}); [Watson, 1964]({REFS}))" in two
    six = _markdown(converted["06_self_attention"][1])
    assert f"([Dehghani et al., 2023]({REFS}); [Henry et al., 2020]({REFS}))" in six


def test_admonitions_links_and_captions_read_as_the_site(converted):
    chapter, plain = converted["04_bahdanau_and_luong"]
    text = _markdown(plain)
    folds = len(re.findall(r"^:class: dropdown", _markdown(chapter), re.M))
    assert text.count("<details>\n<summary>Details: ") == folds > 0
    assert (
        "<summary>Details: the paper's model, the first step, and which $W_a$ is which</summary>\n\n"
        in text
    )
    assert "\n> **Indices**\n>\n> This chapter counts from 0" in text  # a note: a blockquote
    assert f"[LSTM]({BASE}book/glossary.html#term-LSTM)" in text
    assert f"]({BASE}notebooks/01_seq2seq_to_attention.html)" in text
    first = next(c for c in plain.cells if c.source.startswith("**Figure 4.1.**"))
    assert first.source.startswith("**Figure 4.1.** One decoder step of Bahdanau attention")


def test_the_markdown_conversion_on_its_own():
    cite = {"a2020x": ("Alpha et al.", "2020"), "b2019y": ("Beta and Gamma", "2019")}
    base = "https://example.org/book/"
    refs = f"{base}book/references.html"
    text = (
        "(sec-x)=\n## X\n\nSee {cite:t}`a2020x` and {cite:p}`b2019y, a2020x`, the [term](../book/glossary.md#term-x)"
        " and [chapter 6](06_self_attention.ipynb#self-attention).\n\n"
        "::::{admonition} Outer\n:class: dropdown\nout\n\n:::{note}\nin *it*\n:::\n::::\n\n"
        "```python\n:::{not} a fence in code\n```\n"
    )
    out = plain_notebooks.plain_markdown(text, cite, base)
    assert out.startswith("## X\n\nSee ")
    assert f"[Alpha et al. (2020)]({refs})" in out
    assert f"([Alpha et al., 2020]({refs}); [Beta and Gamma, 2019]({refs}))" in out
    assert f"[term]({base}book/glossary.html#term-x)" in out
    assert f"[chapter 6]({base}notebooks/06_self_attention.html#self-attention)" in out
    assert (
        "<details>\n<summary>Outer</summary>\n\nout\n\n> **Note**\n>\n> in *it*\n\n</details>"
        in out
    )
    assert "```python\n:::{not} a fence in code\n```" in out
    # a course whose own site is elsewhere (make_student_edition --answers-withheld): text, no site
    bare = plain_notebooks.plain_markdown(text, cite, base, links=False)
    assert "://" not in bare and "](" not in bare
    assert (
        "See Alpha et al. (2020) and (Alpha et al., 2020; Beta and Gamma, 2019), the term and chapter 6."
        in bare
    )
    with pytest.raises(KeyError, match="nope"):
        plain_notebooks.plain_markdown("{cite:p}`nope`", cite, base)
    with pytest.raises(ValueError, match="unclosed"):
        plain_notebooks.plain_markdown(":::{note}\nopen", cite, base)


def test_a_ref_role_links_to_its_target_on_the_site(monkeypatch):
    monkeypatch.setattr(
        plain_notebooks, "labels", lambda: {"sec-x": ("notebooks/06_self_attention.html", "X")}
    )
    base = "https://example.org/book/"
    out = plain_notebooks.plain_markdown("as {ref}`sec-x` and {ref}`there <sec-x>`", {}, base)
    assert out == (
        f"as [X]({base}notebooks/06_self_attention.html#sec-x) and"
        f" [there]({base}notebooks/06_self_attention.html#sec-x)"
    )


def test_the_site_address_and_the_chapter_numbers_come_from_the_books_config():
    assert plain_notebooks.site_url() == BASE.rstrip("/") + "/"
    numbers = plain_notebooks.chapter_numbers()
    assert [numbers[f"notebooks/{p.stem}"] for p in CHAPTERS] == [int(p.stem[:2]) for p in CHAPTERS]


def test_the_file_is_written_in_the_repositorys_format(tmp_path):
    path = CHAPTERS[0]
    plain_notebooks.convert_file(path, tmp_path / path.name)
    written = (tmp_path / path.name).read_text(encoding="utf-8")
    assert written == json.dumps(json.loads(written), indent=1, ensure_ascii=False) + "\n"
    # a notebook without markup comes back byte for byte
    bare = {
        "cells": [json.loads(path.read_text())["cells"][0]],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "bare.ipynb").write_text(json.dumps(bare, indent=1, ensure_ascii=False) + "\n")
    plain_notebooks.convert_file(tmp_path / "bare.ipynb", tmp_path / "out.ipynb")
    assert (tmp_path / "out.ipynb").read_bytes() == (tmp_path / "bare.ipynb").read_bytes()


def test_the_student_edition_is_plain(tmp_path):
    path = ROOT / "notebooks" / "14_bert.ipynb"
    edition = make_student_edition.student_notebook(nbformat.read(path, as_version=4), path.stem)
    text = _markdown(edition)
    assert not [name for name, rx in LEFT_OVER.items() if rx.search(text)]
    assert "**Figure 14.1.** " in text
    assert not [c for c in edition.cells if "solution" in c.metadata.get("tags", [])]


def test_the_deploy_workflow_runs_the_tool():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    runs = [s.get("run", "") for s in flow["jobs"]["published-ref"]["steps"]]
    assert any("python tools/plain_notebooks.py --in-place" in r for r in runs)
