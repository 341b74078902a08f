"""The bibliography and the back matter: every cited key has an entry in book/references.bib, every entry
is cited somewhere, papers are cited with the {cite} role rather than in plain text, and the references
and glossary pages are in the book."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
# {cite}`a`, {cite:p}`a,b`, {cite:t}`a`, {cite:ps}`a` ... (the MyST forms of sphinxcontrib-bibtex's roles)
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
# "Vaswani et al. 2017", "Bahdanau et al. (2015)", "(Luong et al., 2015)", "(Graves, Wayne and Danihelka, 2014)"
PLAIN_CITATION = re.compile(
    r"\b[A-Z][a-z]+ et al\.,? \(?(19|20)\d\d\b|\b[A-Z][a-z]+, [A-Z][a-z]+ and [A-Z][a-z]+,? (19|20)\d\d\b"
)


def config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [
        chapter["file"] for part in toc.get("parts", []) for chapter in part["chapters"]
    ]


def documents() -> dict[str, str]:
    """The markdown text of every page in the table of contents (for notebooks: their markdown cells)."""
    texts = {}
    for entry in toc_files():
        md, ipynb = ROOT / f"{entry}.md", ROOT / f"{entry}.ipynb"
        if md.exists():
            texts[entry] = md.read_text(encoding="utf-8")
        elif ipynb.exists():
            nb = nbformat.read(ipynb, as_version=4)
            texts[entry] = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return texts


def cited_keys(text: str) -> list[str]:
    return [key.strip() for keys in CITE.findall(text) for key in keys.split(",")]


def bib_keys() -> set[str]:
    return set(parse_file(str(BIB), bib_format="bibtex").entries.keys())


def test_the_patterns_find_citations():
    """The checks below must be able to fail."""
    text = (
        "as {cite:t}`luong2015effective` show, and others {cite:p}`a2020x, b2021y` {cite}`c2019z`."
    )
    assert cited_keys(text) == ["luong2015effective", "a2020x", "b2021y", "c2019z"]
    for plain in [
        "Vaswani et al. 2017",
        "Bahdanau et al. (2015)",
        "(Luong et al., 2015)",
        "(Graves, Wayne and Danihelka, 2014)",
    ]:
        assert PLAIN_CITATION.search(plain), plain
    assert not PLAIN_CITATION.search("Bahdanau's and Luong's translation models; the 2015 paper")


def test_the_bibliography_is_configured_and_has_a_page():
    sphinx = config()["sphinx"]
    assert "sphinxcontrib.bibtex" in sphinx["extra_extensions"]
    assert sphinx["config"]["bibtex_bibfiles"] == ["book/references.bib"]
    assert "book/references" in toc_files() and "book/glossary" in toc_files()
    assert re.search(
        r"^```\{bibliography\}", (ROOT / "book" / "references.md").read_text(), re.MULTILINE
    )


def test_every_entry_is_complete():
    entries = parse_file(str(BIB), bib_format="bibtex").entries
    assert {
        "graves2014neural",
        "bahdanau2015neural",
        "luong2015effective",
        "vaswani2017attention",
    } <= set(entries)
    for key, entry in entries.items():
        assert entry.persons.get("author"), f"{key}: no author"
        for field in ("title", "year"):
            assert entry.fields.get(field), f"{key}: no {field}"
        assert re.fullmatch(r"[a-z]+\d{4}[a-z]+", key), (
            f"{key}: keys read author + year + first title word"
        )


def test_no_two_entries_cite_alike():
    """An author-year citation names the first author, "et al." past two, and the year: two papers
    that would read alike get a and b after the year (reader s36, ch01 pt 4: parsing and image
    captioning were both "Vinyals et al., 2015")."""
    seen = {}
    for key, entry in parse_file(str(BIB), bib_format="bibtex").entries.items():
        last = [" ".join(p.last_names) for p in entry.persons["author"]]
        who = last[0] + (" et al." if len(last) > 2 else "".join(f" and {n}" for n in last[1:]))
        label = f"{who}, {entry.fields['year']}"
        assert label not in seen, f"{key} and {seen.get(label)} both cite as {label}"
        seen[label] = key


def test_the_references_page_labels_keep_the_year_and_its_letter():
    """Reader s42, ch11 m7: pybtex's alpha labels cut "2013a" to "3a" ([MCCD3a]); book/_ext/bib_labels.py
    keeps two digits and the letter."""
    import sys

    from pybtex.plugin import find_plugin

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import bib_labels  # noqa: F401  (registers the style)

    sphinx = config()["sphinx"]
    assert sphinx["local_extensions"]["bib_labels"] == "book/_ext"
    assert sphinx["config"]["bibtex_default_style"] == "alpha_year"
    entries = parse_file(str(BIB), bib_format="bibtex").entries
    style = find_plugin("pybtex.style.formatting", "alpha_year")()
    labels = dict(zip(entries, style.label_style.format_labels(list(entries.values()))))
    assert labels["mikolov2013efficient"] == "MCCD13a"
    assert labels["mikolov2013distributed"] == "MSC+13b"
    assert labels["bengio2003neural"] == "BDVJ03"
    for key, label in labels.items():
        year = entries[key].fields["year"]
        assert year[2:] in label, (key, label, year)


def test_every_cited_key_is_in_the_bib_and_every_entry_is_cited():
    cited = {key: entry for entry, text in documents().items() for key in cited_keys(text)}
    keys = bib_keys()
    missing = {key: entry for key, entry in cited.items() if key not in keys}
    unused = keys - set(cited)
    assert cited, "no citation found: are the chapters still citing with {cite}?"
    assert not missing, f"cited but not in {BIB.name}: {missing}"
    assert not unused, f"in {BIB.name} but never cited: {sorted(unused)}"


@pytest.mark.parametrize("entry", toc_files())
def test_papers_are_cited_with_the_cite_role_not_in_plain_text(entry):
    text = documents().get(entry, "")
    plain = [m.group(0) for m in PLAIN_CITATION.finditer(CITE.sub("", text))]
    assert not plain, f"{entry}: cite these with {{cite:t}}`key` or {{cite:p}}`key`: {plain}"


GLOSSARY_TERMS = [
    "query",
    "key",
    "value",
    "score function",
    "attention weights",
    "softmax",
    "masked softmax",
    "mask",
    "content-based addressing",
    "key strength",
    "soft attention",
    "hard attention",
    "head",
    "head view",
    "neural Turing machine",
]


def test_the_glossary_defines_the_chapters_terms():
    text = (ROOT / "book" / "glossary.md").read_text()
    block = re.search(r"^```\{glossary\}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert block, "book/glossary.md needs a {glossary} directive"
    terms = set(re.findall(r"^(\S[^\n]*)$", block.group(1), re.MULTILINE))
    assert not [t for t in GLOSSARY_TERMS if t not in terms], sorted(terms)
    for ref in re.findall(r"\{term\}`(?:[^`<]*<)?([^`>]+)>?`", text):
        assert ref in terms, f"glossary links to an undefined term: {ref}"
