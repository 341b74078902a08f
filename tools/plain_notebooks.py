"""The chapters as plain Jupyter Markdown, for wherever a notebook leaves the site.

    python tools/plain_notebooks.py --out DIR          # every chapter -> DIR/<chapter>.ipynb
    python tools/plain_notebooks.py --in-place         # rewrite notebooks/*.ipynb (the deploy does this)
    python tools/plain_notebooks.py 03 14 --out DIR    # chapters whose file name starts with 03 or 14

The chapters are MyST Markdown for Jupyter Book. Jupyter and Colab show MyST's markup as raw text, so a
notebook that leaves the site is converted first (:func:`plain_notebook`, :func:`plain_markdown`):

- a citation, {cite:t}`key` or {cite:p}`key1,key2`, becomes author-year text taken from
  book/references.bib as the site writes it (sphinxcontrib-bibtex's author_year style): "Bahdanau et
  al. (2015)", "(Bahdanau et al., 2015; Luong et al., 2015)", each linked to the site's References;
- an admonition (``:::{admonition} Title`` ... ``:::``) becomes a ``<details>`` fold if its class is
  ``dropdown`` (as on the site), otherwise a blockquote with its title in bold; nested ones too;
- a link to a page of the book (``../book/glossary.md#term-x``) or to another chapter
  (``06_self_attention.ipynb#a``) points to that page of the site; a ``{ref}`` role becomes a link to
  its target on the site; ``(label)=`` lines go;
- a figure's caption, which the site reads from its code cell's metadata (``mystnb.figure.caption``),
  is written in a Markdown cell after that cell, "**Figure N.k.** caption", numbered as the site
  numbers it (N: the chapter's number in _toc.yml, k: the chapter's k-th captioned figure).

Everything else stays as it was, byte for byte: code cells, their tags and metadata. The site's address
is ``html.baseurl`` in _config.yml (read here, written nowhere else).

Where it is used: the student edition (tools/make_student_edition.py, `make student`), the course's
notebooks (tools/make_course.py) and the notebook Colab opens: the deploy workflow
(.github/workflows/pages.yml, job published-ref) runs ``--in-place`` on the deployed commit, commits
the result on top of it and pushes that commit as the branch ``published`` (README, "Publishing the
book"). The site itself is built from the MyST chapters, unchanged.
"""

from __future__ import annotations

import argparse
import codecs
import copy
import functools
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
CAPTION_TAG = "figure-caption"  # the tag of a caption cell this tool wrote
CAPTION_TAGS_KEPT = (
    "solution",
    "remove-cell",
)  # a figure's tags its caption shares (student edition)

CITE = re.compile(r"\{cite:(?P<kind>[tp])\}`(?P<keys>[^`]+)`")
REF = re.compile(
    r"\{(?:ref|numref)\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<label>[^`]+))`"
)
LABEL_LINE = re.compile(r"^\((?P<label>[\w:.-]+)\)=[ \t]*\n?", re.M)
BOOK_LINK = re.compile(r"\]\(\.\./book/(?P<page>[\w-]+)\.md(?P<anchor>#[^)\s]*)?\)")
CHAPTER_LINK = re.compile(r"\]\((?:\./)?(?P<page>\d\d_[\w-]+)\.ipynb(?P<anchor>#[^)\s]*)?\)")
# a whole link to a page of the book or to a chapter, for links=False
BOOK_PAGE_LINK = re.compile(
    r"\[(?P<text>[^\]]*)\]\((?:\.\./book/[\w-]+\.md|(?:\./)?\d\d_[\w-]+\.ipynb)(?:#[^)\s]*)?\)"
)
FENCE_OPEN = re.compile(r"^(?P<colons>:{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<title>.*?)[ \t]*$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*?)[ \t]*$")
CODE_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


# --------------------------------------------------------------------------------------------------
# The site: its address, its chapters' numbers, its labels


def site_url(config: Path = ROOT / "_config.yml") -> str:
    """The published site, ``html.baseurl`` in _config.yml, ending in "/"."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    base = str((data.get("html") or {}).get("baseurl") or "")
    if not re.match(r"https?://", base):
        raise ValueError(
            f"html.baseurl in {config.name} must be an absolute http(s) address: {base!r}"
        )
    return base.rstrip("/") + "/"


def references_url(base: str | None = None) -> str:
    return f"{base or site_url()}book/references.html"


@functools.cache
def chapter_numbers(toc: Path = ROOT / "_toc.yml") -> dict[str, int]:
    """{"notebooks/01_seq2seq_to_attention": 1, ...}: the numbered files in _toc.yml's order, numbered
    through all parts (_config.yml's use_multitoc_numbering), as the site numbers its chapters."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    numbers: dict[str, int] = {}
    for part in data.get("parts", []):
        if part.get("numbered"):
            for chapter in part.get("chapters", []):
                numbers[chapter["file"]] = len(numbers) + 1
    return numbers


@functools.cache
def labels() -> dict[str, tuple[str, str]]:
    """{label: (page, text)}: the ``(label)=`` targets of the chapters and book pages (text: the
    heading below it) and the chapters' figure names (``mystnb.figure.name``), for {ref} roles."""
    found: dict[str, tuple[str, str]] = {}

    def scan(text: str, page: str) -> None:
        for m in LABEL_LINE.finditer(text):
            heading = re.match(r"\s*#+\s+(.*)", text[m.end() :])
            found[m["label"]] = (page, heading[1].strip() if heading else m["label"])

    for path in sorted((ROOT / "book").glob("*.md")):
        scan(path.read_text(encoding="utf-8"), f"book/{path.stem}.html")
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        page = f"notebooks/{path.stem}.html"
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                scan(_source(cell), page)
            figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            if figure.get("name"):
                found[figure["name"]] = (page, "this figure")
    return found


# --------------------------------------------------------------------------------------------------
# Citations


def _latex_text(text: str) -> str:
    """A BibTeX name or field as the site prints it: LaTeX accents decoded, braces gone."""
    try:
        text = codecs.decode(text, "ulatex")
    except ValueError:  # an odd field is shown as written, not refused
        pass
    return text.replace("{", "").replace("}", "")


@functools.cache
def citations(bib: Path = BIB) -> dict[str, tuple[str, str]]:
    """{key: (authors as cited, year)} from the bibliography, as sphinxcontrib-bibtex's author_year
    style writes them: one author's last name, two joined by "and", three or more "X et al."; the
    year as the .bib writes it ("2014a": the file disambiguates)."""
    # latexcodec registers the "ulatex" codec that _latex_text decodes with
    import latexcodec  # noqa: F401
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_latex_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        others = "others" in names
        names = [n for n in names if n != "others"]
        if not names:
            who = _latex_text(entry.fields.get("title", key))
        elif len(names) == 1 and not others:
            who = names[0]
        elif len(names) == 2 and not others:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        out[key] = (who, _latex_text(entry.fields.get("year", "n.d.")))
    return out


def citation_text(kind: str, keys: list[str], cite: dict, url: str | None) -> str:
    """One {cite:t} (``kind`` "t") or {cite:p} ("p") role's text, each work linked to ``url`` (None:
    text only)."""
    missing = [k for k in keys if k not in cite]
    if missing:
        raise KeyError(f"not in book/references.bib: {', '.join(missing)}")
    if len(keys) > 1:  # in the bibliography's order (author, year), as the site lists them
        keys = sorted(keys, key=lambda k: (cite[k][0].casefold(), cite[k][1]))

    def linked(text: str) -> str:
        return f"[{text}]({url})" if url else text

    if kind == "t":
        return "; ".join(linked(f"{cite[k][0]} ({cite[k][1]})") for k in keys)
    return "(" + "; ".join(linked(f"{cite[k][0]}, {cite[k][1]}") for k in keys) + ")"


# --------------------------------------------------------------------------------------------------
# Admonitions


def _admonition(name: str, title: str, options: dict, body: str) -> str:
    body = body.strip("\n")
    title = title or name.replace("-", " ").capitalize()
    if "dropdown" in options.get("class", "").split():
        return f"<details>\n<summary>{title}</summary>\n\n{body}\n\n</details>"
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in body.splitlines())
    return f"> **{title}**\n>\n{quoted}"


def admonitions(text: str) -> str:
    """Colon-fenced directives (``:::{admonition} Title``, ``:class: dropdown``, ... ``:::``) as plain
    Markdown: a dropdown as a ``<details>`` fold, any other as a blockquote with its title in bold.
    Nested ones (an inner fence with fewer colons, or the same number inside) are converted too."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = FENCE_OPEN.match(line)
        if CODE_FENCE.match(line):  # a code block: copied as it is
            fence = CODE_FENCE.match(line)[1]
            out.append(line)
            i += 1
            while i < len(lines):
                out.append(lines[i])
                i += 1
                if lines[i - 1].strip().startswith(fence[0] * len(fence)):
                    break
            continue
        if not opened:
            out.append(line)
            i += 1
            continue
        colons = opened["colons"]
        i += 1
        options = {}
        while i < len(lines) and (option := OPTION.match(lines[i])):
            options[option["key"]] = option["value"]
            i += 1
        depth, body = 1, []
        while i < len(lines):
            inner = lines[i]
            if FENCE_OPEN.match(inner) and FENCE_OPEN.match(inner)["colons"] == colons:
                depth += 1
            elif inner.strip() == colons:
                depth -= 1
                if depth == 0:
                    i += 1
                    break
            body.append(inner)
            i += 1
        else:
            raise ValueError(f"unclosed {colons}{{{opened['name']}}} {opened['title']!r}")
        out.append(
            _admonition(opened["name"], opened["title"], options, admonitions("\n".join(body)))
        )
    return "\n".join(out)


# --------------------------------------------------------------------------------------------------
# Markdown and notebooks


def plain_markdown(
    text: str,
    cite: dict | None = None,
    base: str | None = None,
    links: bool = True,
    cite_links: bool = True,
) -> str:
    """A Markdown cell's MyST as plain Markdown (the module's docstring says what becomes what);
    ``links=False`` (a course whose own site is elsewhere, make_student_edition --answers-withheld):
    citations, links to the book's pages and {ref} roles become their text, naming no site;
    ``cite_links=False``: citations as text only (tools/make_course.py, whose rubrics quote them)."""
    base = base or site_url()
    cite = citations() if cite is None else cite
    url = references_url(base) if links and cite_links else None
    text = LABEL_LINE.sub("", text)
    text = admonitions(text)
    text = CITE.sub(lambda m: citation_text(m["kind"], _keys(m["keys"]), cite, url), text)

    def ref(m: re.Match) -> str:
        label = (m["target"] or m["label"]).strip()
        if label not in labels():
            raise KeyError(f"{{ref}} to an unknown label: {label!r}")
        page, heading = labels()[label]
        return f"[{m['text'] or heading}]({base}{page}#{label})" if links else m["text"] or heading

    text = REF.sub(ref, text)
    if not links:
        text = BOOK_PAGE_LINK.sub(r"\g<text>", text)
    text = BOOK_LINK.sub(lambda m: f"]({base}book/{m['page']}.html{m['anchor'] or ''})", text)
    return CHAPTER_LINK.sub(
        lambda m: f"]({base}notebooks/{m['page']}.html{m['anchor'] or ''})", text
    )


def _keys(keys: str) -> list[str]:
    return [k.strip() for k in keys.split(",") if k.strip()]


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _set_source(cell, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True) if isinstance(cell["source"], list) else text


def caption_of(cell) -> str | None:
    """The caption the site gives a code cell's figure (``metadata.mystnb.figure.caption``)."""
    if cell.get("cell_type") != "code":
        return None
    return cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")


def plain_notebook(
    nb, chapter: str, cite: dict | None = None, base: str | None = None, links: bool = True
):
    """A copy of the notebook ``nb`` (nbformat's node or the stored JSON's dict) with its Markdown cells
    as plain Markdown and a caption cell after each captioned figure; ``chapter`` is its file's stem
    ("03_scoring_functions"), which gives the figures their chapter's number; ``links``: as in
    :func:`plain_markdown`."""
    base = base or site_url()
    cite = citations() if cite is None else cite
    number = chapter_numbers().get(f"notebooks/{chapter}")
    nb = copy.deepcopy(nb)
    cells, k = [], 0
    ids = {cell.get("id") for cell in nb["cells"]}
    for cell in nb["cells"]:
        cells.append(cell)
        if cell["cell_type"] == "markdown":
            text = _source(cell)
            plain = plain_markdown(text, cite, base, links)
            if plain != text:
                _set_source(cell, plain)
        caption = caption_of(cell)
        if caption is None:
            continue
        k += 1
        label = f"Figure {number}.{k}." if number else "Figure."
        tags = [t for t in cell.get("metadata", {}).get("tags", []) if t in CAPTION_TAGS_KEPT]
        text = f"**{label}** {plain_markdown(caption, cite, base, links)}"
        new = {
            "cell_type": "markdown",
            "id": _new_id(f"{cell.get('id', 'figure')}-caption", ids),
            "metadata": {"tags": [*tags, CAPTION_TAG]},
            "source": text.splitlines(keepends=True) if isinstance(cell["source"], list) else text,
        }
        if type(cell) is not dict:  # nbformat's node: attribute access, as the other cells
            import nbformat

            new = nbformat.from_dict(new)
        cells.append(new)
    nb["cells"] = cells
    return nb


def _new_id(wanted: str, ids: set) -> str:
    """``wanted``, or with a number added, unlike every id in ``ids`` (which it joins); nbformat's
    limit of 64 characters kept."""
    new, k = wanted[:64], 1
    while new in ids:
        k += 1
        new = f"{wanted[: 60 - len(str(k))]}-{k}"
    ids.add(new)
    return new


def chapters(prefixes: list[str] = ()) -> list[Path]:
    return [
        p
        for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        if not prefixes or any(p.name.startswith(x) for x in prefixes)
    ]


def convert_file(path: Path, target: Path) -> None:
    """Write ``path``'s plain form to ``target`` in the repository's format (JSON, indent 1, UTF-8)."""
    nb = plain_notebook(json.loads(path.read_text(encoding="utf-8")), path.stem)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "prefixes", nargs="*", help="only chapters whose file name starts with one of these"
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="write the plain notebooks into this folder")
    where.add_argument("--in-place", action="store_true", help="rewrite notebooks/ itself")
    args = parser.parse_args(argv)
    paths = chapters(args.prefixes)
    if not paths:
        print("no chapter matched", file=sys.stderr)
        return 1
    for path in paths:
        target = path if args.in_place else args.out / path.name
        convert_file(path, target)
        print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
