"""The ePub on a 6-inch e-reader (issue 33, item 2): its chapters opened in Chromium at 400 CSS px, the
width of such a reader's column, with the ePub's style sheets (Sphinx's epub.css, book.css, then
book/_static/book-epub.css).

Most e-readers cannot scroll a box sideways, so what is wider than its box is cut. In chapters 3 and 9
(the ones with the most code, tables and equations) no code block, table, equation or picture may
be wider than the column: each one's scrollWidth at most its clientWidth + 1, and its right edge
inside the page; a picture as wide as the column is shown that wide. No web-only text is shown
("Show code cell source", "Hide code cell source", the slides' line, which links nowhere in the
ePub), and every equation (MathJax's SVG, role="img") carries its TeX as its name (aria-label) for
a screen reader.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = [pytest.mark.site, pytest.mark.browser]

# override to test another build (tools/print_book.py epub --out ...)
EPUB = Path(os.environ.get("BOOK_EPUB", ROOT / "_build" / "print" / "attention-book.epub"))
COLUMN_PX = 400
CHAPTERS = ["notebooks/03_scoring_functions.xhtml", "notebooks/09_the_transformer.xhtml"]

# What a reader sees of the page: the boxes wider than they may be, the text shown, the equations.
MEASURE = """
const W = document.documentElement.clientWidth;  // the column, less a scroll bar if one is drawn
const shown = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
function cut(el) {
  const r = el.getBoundingClientRect();
  return el.scrollWidth > el.clientWidth + 1 || r.right > W + 1 || r.left < -1;
}
function describe(el) {
  const r = el.getBoundingClientRect();
  return `${el.tagName.toLowerCase()} ${Math.round(r.width)} px (content ${el.scrollWidth}): `
    + (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 60);
}
const count = (sel) => [...document.querySelectorAll(sel)].filter(shown);
const code = count('pre');
const tables = count('table');
const equations = count('.math-svg');
const pictures = count('img');
// a picture at least as wide as the column, shown narrower (the browser's 40 px figure margins)
const narrowed = pictures.filter(i => i.naturalWidth >= W * 0.95 && i.getBoundingClientRect().width < W * 0.9);
const svgs = [...document.querySelectorAll('.math-svg > svg')];  // not the radicals' own, inside
// a line of code the column wraps: where its first piece starts, and its other pieces
const wrapped = [];
for (const line of document.querySelectorAll('pre span.book-line')) {
  const range = document.createRange();
  range.selectNodeContents(line);
  const rects = [...range.getClientRects()].filter(r => r.width > 0);
  const top = Math.min(...rects.map(r => r.top));
  const rest = rects.filter(r => r.top > top + 2);
  if (rest.length) {
    const indent = line.textContent.length - line.textContent.trimStart().length;
    wrapped.push({
      text: line.textContent.slice(0, 50), indent: indent,
      first: Math.min(...rects.filter(r => r.top <= top + 2).map(r => r.left)),
      rest: Math.min(...rest.map(r => r.left)),
    });
  }
}
const probe = document.createElement('span');
probe.textContent = '0'.repeat(10);
(code[0] || document.body).appendChild(probe);  // a code block that is shown
const charWidth = probe.getBoundingClientRect().width / 10;
probe.remove();
return {
  width: window.innerWidth, column: W,
  page: document.documentElement.scrollWidth,
  code: code.length, tables: tables.length, equations: equations.length,
  cut_code: code.filter(cut).map(describe),
  cut_tables: tables.filter(cut).map(describe),
  cut_equations: equations.filter(e => cut(e) || cut(e.querySelector('svg'))).map(describe),
  pictures: pictures.length, cut_pictures: pictures.filter(cut).map(describe),
  narrowed: narrowed.map(i => `${Math.round(i.getBoundingClientRect().width)} px: ${i.alt.slice(0, 50)}`),
  unlabelled: svgs.filter(s => !(s.getAttribute('aria-label') || '').trim()).length,
  wrapped: wrapped, char_width: charWidth,
  svgs: svgs.length,
  text: document.body.innerText,
};
"""


@pytest.fixture(scope="module")
def pages(browser, tmp_path_factory):
    if not EPUB.exists():
        pytest.fail(f"no {EPUB}: run `make epub`")
    folder = tmp_path_factory.mktemp("epub")
    with zipfile.ZipFile(EPUB) as z:
        z.extractall(folder)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": COLUMN_PX, "height": 800, "deviceScaleFactor": 1, "mobile": False},
    )
    seen = {}
    try:
        for chapter in CHAPTERS:
            browser.get((folder / chapter).as_uri())
            seen[chapter] = browser.execute_script(MEASURE)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return seen


def test_the_page_is_an_e_reader_s_column(pages):
    for chapter, page in pages.items():
        assert page["width"] == COLUMN_PX, chapter
        assert page["page"] <= page["column"] + 1, f"{chapter} scrolls sideways: {page['page']} px"


@pytest.mark.parametrize("what", ["code", "tables", "equations", "pictures"])
def test_nothing_is_cut_at_the_column_s_edge(pages, what):
    for chapter, page in pages.items():
        assert page[what] > 3, f"{chapter}: only {page[what]} {what} seen"  # the measure saw them
        assert page[f"cut_{what}"] == [], f"{chapter}: {what} wider than the column"


def test_pictures_are_as_wide_as_the_column(pages):
    """A figure drawn for a phone's 330 px column (5.2 inches at 110 dpi, 572 px) is shown as wide as the
    reader's column, not indented: its 11-point text then reads at about 11 px."""
    for chapter, page in pages.items():
        assert page["narrowed"] == [], chapter


def test_no_web_only_text(pages):
    for chapter, page in pages.items():
        for text in ("Show code cell source", "Hide code cell source", "Slides for this chapter"):
            assert text not in page["text"], f"{chapter}: {text!r}"


def test_every_equation_is_named_by_its_tex(pages):
    for chapter, page in pages.items():
        assert page["svgs"] > 20 and page["unlabelled"] == 0, (chapter, page["unlabelled"])


def test_a_wrapped_line_of_code_goes_on_right_of_its_own_indentation(pages):
    """Wrapped at the column's edge, a line's continuation hangs four characters right of where the
    line's own text starts (tools/print_book.py: HANG_CHARS), so it cannot be read as a line of its
    own, less indented than its block."""
    for chapter, page in pages.items():
        assert len(page["wrapped"]) > 20, f"{chapter}: only {len(page['wrapped'])} wrapped lines"
        width = page["char_width"]
        assert 4 < width < 12, width
        for line in page["wrapped"]:
            starts = line["first"] + line["indent"] * width
            assert line["rest"] >= starts + 3.5 * width, (chapter, line)
