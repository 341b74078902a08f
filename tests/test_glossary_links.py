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
