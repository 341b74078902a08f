"""No word in angle brackets that the browser would swallow as an unknown HTML tag.

MyST passes raw HTML through, in Markdown cells and in figure captions (``mystnb.figure.caption`` is
parsed as Markdown too). A token written bare, ``between <bos> and <eos>``, reaches the page as the
elements ``<bos>`` and ``<eos>``, which the browser does not know and shows as nothing: the reader of
chapter 13 saw "between and" under Fig. 13.8. Inside a code span (`` `<bos>` ``), a code block or math
the text is escaped and shows as written. Alt text (``mystnb.image.alt``) is an attribute value, which
the build escapes, so a bare ``<bos>`` there is read out as written and is not checked here.

This test reads the sources, fast, without a build: every chapter's Markdown cells and figure captions,
and the book's own Markdown pages.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))

# The elements of HTML (WHATWG living standard), with SVG and MathML's roots: a tag of one of these is
# meant as HTML; any other word in angle brackets is a token written without its code span. Left out:
# <s>, strikethrough, which the book never writes but a tokenizer's <s> and </s> would become.
HTML_ELEMENTS = frozenset(
    """a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption
    cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset
    figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins
    kbd label legend li link main map mark math menu meta meter nav noscript object ol optgroup option
    output p picture pre progress q rp rt ruby samp script search section select slot small source
    span strong style sub summary sup svg table tbody td template textarea tfoot th thead time title tr
    track u ul var video wbr""".split()
)

# A fenced block (``` or ~~~, three or more) whose info string names code: its body is shown as
# written. A fence of a MyST directive ({note}, {admonition}...) holds Markdown and is read.
FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[`~]*[ \t]*$", re.M | re.S
)
CODE_DIRECTIVES = ("{code", "{code-block", "{code-cell", "{literalinclude", "{math", "{raw")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.S)  # `x`, ``x``, {math}`x`
MATH = re.compile(r"\$\$.+?\$\$|(?<!\\)\$[^$\n]+?(?<!\\)\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?/?>")


def _without_code_and_math(text: str) -> str:
    """The text with what MyST shows as written removed: code blocks, code spans, math, comments."""

    def fence(match: re.Match) -> str:
        info = match.group("info").strip()
        if info.startswith("{") and not info.startswith(CODE_DIRECTIVES):
            return match.group("body")  # a directive's Markdown body
        return ""

    text = FENCE.sub(fence, text)
    text = CODE_SPAN.sub("", text)
    return COMMENT.sub("", MATH.sub("", text))


def unknown_tags(text: str) -> list[str]:
    """Each ``<word>`` or ``</word>`` of ``text`` outside code and math that is no HTML element."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    return [
        match.group(0)
        for match in TAG.finditer(_without_code_and_math(text))
        if match.group(1).lower() not in HTML_ELEMENTS
    ]


def _rendered_texts(path: Path):
    """(where, text) for each piece of ``path`` that MyST renders as Markdown."""
    if path.suffix == ".md":
        yield path.name, path.read_text(encoding="utf-8")
        return
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "markdown":
            yield f"{path.name} cell {index}", cell.source
        caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            yield f"{path.name} cell {index}'s caption", caption


def test_the_check_finds_a_bare_token_and_only_that():
    assert unknown_tags("between <bos> and <eos>, the state of </s>") == ["<bos>", "<eos>", "</s>"]
    assert unknown_tags("between `<bos>` and ``<eos>``; $\\texttt{<unk>}$; $$a<b>c$$") == []
    assert unknown_tags("```python\nx = '<pad>'\n```\n<!-- <todo> -->") == []
    assert unknown_tags("```{note}\nthe <mask> token\n```") == ["<mask>"]
    assert unknown_tags('<span class="x">ok</span><br/> a < b > c <https://a.org>') == []
    with pytest.raises(TypeError, match="text"):
        unknown_tags(None)


def test_every_chapter_and_page_is_read():
    assert len(CHAPTERS) == 18 and len(PAGES) >= 5


@pytest.mark.parametrize("path", CHAPTERS + PAGES, ids=lambda p: p.name)
def test_no_token_is_swallowed_as_an_html_tag(path):
    found = {where: tags for where, text in _rendered_texts(path) if (tags := unknown_tags(text))}
    assert not found, (
        f"words in angle brackets that the page would drop as unknown HTML tags: {found}; "
        "write them as code (`<bos>`)"
    )
