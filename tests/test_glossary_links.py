"""Links from the chapters to the glossary: a plain Markdown link ``[BLEU](../book/glossary.md#term-BLEU)``
reads right in Jupyter and Colab (a MyST ``{term}`` role shows there as raw text) and, with the book's
extension ``book/_ext/glossary_links.py``, resolves on the site. Each link must name a term the glossary
defines, by the id Sphinx gives the term (``term-`` and the term, spaces as hyphens)."""

from __future__ import annotations

import re

import nbformat
import yaml

from tests.test_bibliography import ROOT

LINK = re.compile(r"\]\((?:\.\./)?book/glossary\.md#([^)\s]+)\)")


def term_id(term: str) -> str:
    # sphinx.util.nodes._make_id, as Sphinx ids a glossary term (ASCII terms)
    text = re.sub(r"[^a-zA-Z0-9._]+", "-", " ".join(f"term-{term}".split()))
    return re.sub(r"^[-0-9._]+|-+$", "", text)


def glossary_ids() -> set[str]:
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    block = re.search(r"^```\{glossary\}\n(.*?)^```", text, re.MULTILINE | re.DOTALL).group(1)
    return {term_id(t) for t in re.findall(r"^(\S[^\n]*)$", block, re.MULTILINE) if t != ":sorted:"}


def chapter_links() -> list[tuple[str, str]]:
    links = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                links += [(path.name, target) for target in LINK.findall(cell.source)]
    return links


def test_the_term_ids_are_sphinxs():
    assert term_id("BLEU") == "term-BLEU"
    assert term_id("teacher forcing") == "term-teacher-forcing"
    assert term_id("dot-product score") == "term-dot-product-score"


def test_every_glossary_link_names_a_defined_term():
    ids = glossary_ids()
    links = chapter_links()
    assert links, "no chapter links to the glossary"
    unknown = [(chapter, target) for chapter, target in links if target not in ids]
    assert not unknown, f"links to terms the glossary does not define: {unknown}"


def test_the_chapters_one_to_five_link_their_first_uses():
    linked = {(chapter[:2], target) for chapter, target in chapter_links()}
    for target in ["language-model", "LSTM", "teacher-forcing", "nat", "greedy-decoding", "BLEU"]:
        assert ("01", f"term-{target}") in linked, target
    assert ("01", "term-exact-match") in linked


def test_the_extension_that_resolves_them_is_loaded():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "glossary_links" in config["sphinx"]["local_extensions"]
    assert (ROOT / "book" / "_ext" / "glossary_links.py").exists()


def test_the_slide_decks_link_the_built_glossary():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_slides", ROOT / "tools" / "make_slides.py")
    make_slides = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_slides)
    text = "[**BLEU**](../book/glossary.md#term-BLEU) and [notation](../book/notation.md)"
    assert make_slides.plain_markdown(text, {}) == (
        "[**BLEU**](../book/glossary.html#term-BLEU) and [notation](../book/notation.html)"
    )


def glossary_entries() -> list[list[str]]:
    """The glossary's entries in order, each the list of its terms (an entry may have aliases)."""
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    block = re.search(r"^```\{glossary\}\n(.*?)^```", text, re.MULTILINE | re.DOTALL).group(1)
    entries, terms = [], []
    for line in block.splitlines():
        if line and not line[0].isspace() and line != ":sorted:":
            terms.append(line.strip())
        elif terms:
            entries.append(terms)
            terms = []
    return entries + ([terms] if terms else [])


def markdown_cells_in_reading_order() -> list[tuple[str, str, str]]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [
        c["file"] for p in toc["parts"] for c in p["chapters"] if c["file"].startswith("notebooks/")
    ]
    return [
        (file, cell.get("id"), cell.source)
        for file in files
        for cell in nbformat.read(ROOT / f"{file}.ipynb", as_version=4).cells
        if cell.cell_type == "markdown"
    ]


def first_use(terms: list[str], cells) -> tuple[str, str, str] | None:
    """The first markdown cell, in reading order, that uses any of ``terms`` (plural endings included,
    link targets left out)."""
    words = [
        re.compile(rf"(?<![\w-]){re.escape(t)}(?:s|es)?(?![\w-])", re.IGNORECASE) for t in terms
    ]
    for file, cell_id, source in cells:
        text = re.sub(r"\]\([^)]*\)", "]", source)
        if any(w.search(text) for w in words):
            return file, cell_id, source
    return None


def taught_there(terms: list[str], source: str) -> bool:
    """The cell links one of the terms to its glossary entry, or sets it in bold (where it is defined)."""
    linked = any(f"glossary.md#{term_id(t)})" in source for t in terms)
    bold = any(re.search(rf"\*\*{re.escape(t)}(?:s|es)?\*\*", source, re.IGNORECASE) for t in terms)
    return linked or bold


def test_every_glossary_term_is_taught_where_it_is_first_used():
    cells = markdown_cells_in_reading_order()
    untaught = []
    for terms in glossary_entries():
        found = first_use(terms, cells)
        if found is not None and not taught_there(terms, found[2]):
            untaught.append((terms[0], found[0].split("/")[-1], found[1]))
    assert not untaught, (
        "glossary terms whose first use (chapter, cell id) neither defines them in bold nor links "
        f"their glossary entry: {untaught}"
    )


def test_the_first_use_check_finds_what_it_must():
    cells = [("notebooks/01_a", "c1", "no term here"), ("notebooks/02_b", "c2", "two Heads meet")]
    assert first_use(["head"], cells)[1] == "c2"
    assert not taught_there(["head"], "two heads meet")
    assert taught_there(["head"], "a **head** is one attention")
    assert taught_there(["head"], "a head ([glossary](../book/glossary.md#term-head))")
    assert (
        first_use(["key"], [("notebooks/01_a", "c1", "[x](../book/glossary.md#term-key)")]) is None
    )
