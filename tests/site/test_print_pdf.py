"""The PDF as a printed book (issue 33; ``make pdf``, tools/print_book.py), measured from the file.

pypdf reads its outline (a bookmark for every chapter, at the page where the chapter starts), its
contents page (each chapter's printed page number is the outline's), its title page (title, authors,
version, licence), its running heads (a chapter's title over its pages) and the size of every character
of text (body text 10-11 pt). Poppler's pdftoppm renders each page small, to measure how much of a page is
left empty below its last line (no page left mostly empty but the last of a chapter, no empty code box
at a page's foot). No link points at the server it was printed from, and no web control (a fold's
button, a progress bar) is printed as text. tests/site/test_print.py checks the rest (links, figures,
equations, live figures in their static form).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, toc_entries
from .test_print import chapter_title

pytestmark = pytest.mark.site

PDF = Path(os.environ.get("BOOK_PRINT_DIR", ROOT / "_build" / "print")) / "attention-book.pdf"
CHAPTERS = [e for e in toc_entries() if e.startswith("notebooks/")]
# a page may be left this empty below its last line when what follows did not fit (a figure, a short
# code block, a table kept whole), except the last page of a chapter
MAX_EMPTY = 0.45
CAPTION = re.compile(r"\s*(Fig\.|Table) \d+\.\d+")


@pytest.fixture(scope="module")
def book():
    """The PDF read once: its reader, each page's text, the characters' sizes and fonts."""
    pypdf = pytest.importorskip("pypdf", reason="pypdf is in requirements.txt")
    if not PDF.exists():
        pytest.fail(f"no {PDF}: run `make pdf`")
    reader = pypdf.PdfReader(io.BytesIO(PDF.read_bytes()))
    texts, sizes, captions, lowest = [], Counter(), [], []

    for page in reader.pages:
        height = float(page.mediabox.height)
        captions.append([])
        lowest.append((0.0, 0.0, ""))

        def visit(text, cm, tm, font, font_size):
            if not text.strip() or font is None:
                return
            # the size on the page: the font size times the text and current matrices' vertical scale
            c = tm[2] * cm[0] + tm[3] * cm[2]
            d = tm[2] * cm[1] + tm[3] * cm[3]
            size = round(font_size * (c * c + d * d) ** 0.5, 1)
            y = height - (tm[4] * cm[1] + tm[5] * cm[3] + cm[5])  # from the page's top edge
            if CAPTION.match(text):  # where a figure's or table's caption starts
                captions[-1].append(y)
            if 60 < y < height - 60 and y >= lowest[-1][0]:  # the text block's last line
                lowest[-1] = (y, size, text.strip())
            name = str(font.get("/BaseFont", ""))
            sizes[(size, "Mono" in name)] += len(text.strip())

        texts.append(page.extract_text(visitor_text=visit))
    return reader, texts, sizes, captions, lowest


def outline(reader) -> list[tuple[int, str, int]]:
    """(depth, title, page number) of every bookmark, in order."""
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((depth, item.title, reader.get_destination_page_number(item) + 1))

    walk(reader.outline, 0)
    return out


def chapter_pages(reader) -> dict[str, int]:
    """{chapter title as _toc.yml's notebooks have it: first page}, from the outline's first level."""
    top = [(t, p) for depth, t, p in outline(reader) if depth == 0]
    found = {}
    for entry in CHAPTERS:
        title = chapter_title(entry)
        hits = [p for t, p in top if t.rstrip().endswith(title)]
        if hits:
            found[title] = hits[0]
    return found


def test_the_outline_has_every_chapter_at_its_first_level(book):
    reader, texts, _, _, _ = book
    pages = chapter_pages(reader)
    missing = [chapter_title(e) for e in CHAPTERS if chapter_title(e) not in pages]
    assert not missing, f"chapters without a bookmark: {missing}"
    # in reading order, each on a page of its own that opens with its title
    assert list(pages.values()) == sorted(pages.values()) and len(set(pages.values())) == len(pages)
    for title, page in pages.items():
        assert title in texts[page - 1][:400], (title, page, texts[page - 1][:200])
    assert len(outline(reader)) > 3 * len(CHAPTERS)  # sections too


def test_the_contents_gives_each_chapter_its_page(book):
    reader, texts, _, _, _ = book
    pages = chapter_pages(reader)
    contents = next(i for i, t in enumerate(texts[:6]) if re.search(r"^Contents$", t, re.M))
    listed = {}
    for text in texts[contents : contents + 4]:
        for m in re.finditer(r"^(\d+)\. (.+?) (\d+)$", text, re.M):
            listed[m.group(2).strip()] = int(m.group(3))
    assert len(listed) >= len(CHAPTERS), listed
    wrong = {t: (listed.get(t), p) for t, p in pages.items() if listed.get(t) != p}
    assert not wrong, f"contents page vs outline page: {wrong}"
    # the contents' entries are links to the chapters
    annots = [a.get_object() for a in reader.pages[contents].get("/Annots", [])]
    assert sum("/Dest" in a or "/A" in a for a in annots) >= 5


def test_the_title_page(book):
    _, texts, _, _, _ = book
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    first = re.sub(r"\s+", " ", texts[0])
    assert re.sub(r"\s+", " ", config["title"]) in first, first
    for author in cff["authors"]:
        assert author["name"] in first
    assert f"Version {cff['version']}" in first and "printed from commit" in first
    assert "CC BY 4.0" in first and "MIT" in first and config["html"]["baseurl"] in first


def test_running_heads_and_page_numbers(book):
    reader, texts, _, _, _ = book
    pages = chapter_pages(reader)
    starts = sorted(pages.values())
    for title, start in list(pages.items())[::4]:
        following = [s for s in starts if s > start]
        end = following[0] - 1 if following else len(texts)
        for page in range(start + 1, min(end, start + 3) + 1):
            lines = [x.strip() for x in texts[page - 1].splitlines() if x.strip()]
            head = lines[:2] + lines[-2:]
            assert any(x.endswith(title) for x in head), (title, page, head)
            assert str(page) in head, (page, head)


def test_body_text_is_10_to_11_points(book):
    _, _, sizes, _, _ = book
    body = sum(n for (size, mono), n in sizes.items() if not mono)
    in_range = sum(n for (size, mono), n in sizes.items() if not mono and 9.9 <= size <= 11.1)
    assert in_range / body > 0.6, sorted(sizes.items(), key=lambda kv: -kv[1])[:10]
    code = sum(n for (size, mono), n in sizes.items() if mono)
    small = sum(n for (size, mono), n in sizes.items() if mono and size < 7.5)
    assert small / code < 0.05, "code printed smaller than 7.5 pt"


def test_no_heading_ends_a_page(book):
    """No page's last line is a heading (12 pt or larger: pdf.css's h1 to h3) cut off from its text."""
    _, _, _, _, lowest = book
    alone = [(n, text) for n, (_, size, text) in enumerate(lowest, 1) if size >= 11.9]
    assert not alone, f"headings at a page's foot (page, heading): {alone}"


def test_no_web_controls_and_no_loopback_address(book):
    _, texts, _, _, _ = book
    text = "\n".join(texts)
    for control in ["Hide code cell", "Show code cell", "127.0.0.1"]:
        assert control not in text, control
    # the worked solutions' button is gone; the phrase is left where the prose names it
    named = 0
    for entry in toc_entries():
        path = ROOT / (entry + (".ipynb" if entry.startswith("notebooks/") else ".md"))
        named += path.read_text(encoding="utf-8").count("Show a worked solution")
    assert re.sub(r"\s+", " ", text).count("Show a worked solution") <= named
    bars = re.findall(r"\d{1,3}%\|[^\n|]{3,}\|\s*\d+/\d+", text)
    assert not bars, bars[:3]
    assert text.count("the book's website (https://") >= text.count("the book's website") > 0


def _ink_rows(png: Path) -> list[int]:
    """How many pixels of each row of a rendered page are ink (darker than a code box's pale grey)."""
    from PIL import Image

    img = Image.open(png).convert("L")
    w, h = img.size
    px = img.load()
    return [sum(px[x, y] < 170 for x in range(w)) for y in range(h)]


def _rendered(tmp_path, dpi: int) -> list[list[int]]:
    """Each page rendered in grey at ``dpi`` by pdftoppm, as rows of pixel values."""
    from PIL import Image

    if not shutil.which("pdftoppm"):
        pytest.fail("poppler-utils' pdftoppm is required (make browser installs it)")
    out = tmp_path / "p"
    subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", str(PDF), str(out)], check=True)
    pages = []
    for png in sorted(tmp_path.glob("p-*.png")):
        img = Image.open(png).convert("L")
        w, h = img.size
        data = list(img.getdata())
        pages.append([data[y * w : (y + 1) * w] for y in range(h)])
    return pages


@pytest.fixture(scope="module")
def rendered(book, tmp_path_factory):
    return _rendered(tmp_path_factory.mktemp("pages"), DPI)


DPI = 50
MARGIN = round(20 / 25.4 * DPI)  # pdf.css: 20 mm above and below the text block, in pixels


def _caption_end(rows: list[list[int]], start: int, bottom: int) -> int:
    """The row where a caption that starts at row ``start`` ends: the first run of 8 blank rows
    (more than a line's spacing) below it."""
    blank = 0
    for y in range(start, bottom):
        blank = blank + 1 if min(rows[y]) > 200 else 0
        if blank >= 8:
            return y - blank
    return bottom


@pytest.mark.xfail(
    strict=True,
    reason="issue 33, not yet met on the whole book (met on a two-chapter book): the fresh clone of "
    "2026-12-02 printed 11 blank pages (167, 176, 180, 193, 255, 266, 288, 404, 418, 451, 477) and 14 "
    "more than 45% empty (8, 59, 166, 175, 179, 183, 192, 225, 303, 417, 450, 500, 507, 606)",
)
def test_no_page_is_left_mostly_empty(book, rendered):
    """Below a page's last line of text or drawing (the running head and page number aside), at most
    MAX_EMPTY of its text block is empty, on every page but the last of a chapter and a page whose gap a
    figure or table of the next page did not fit in, down to its caption's last line: a figure moves
    whole, as in a printed book."""
    reader, _, _, captions, _ = book
    assert len(rendered) == len(reader.pages)
    starts = {p for depth, _, p in outline(reader) if depth == 0}
    exempt = {p - 1 for p in starts} | {len(rendered)}
    px = DPI / 72  # pixels per point
    empty = {}
    for number, rows in enumerate(rendered, 1):
        if number in exempt:
            continue
        top, bottom = MARGIN, len(rows) - MARGIN
        ink = [y for y in range(top, bottom) if sum(v < 200 for v in rows[y]) >= 2]
        gap = bottom - (ink[-1] if ink else top)
        if gap / (bottom - top) <= MAX_EMPTY:
            continue
        if number < len(rendered) and any(
            _caption_end(rendered[number], round(y * px), bottom) - top + round(30 * px) > gap
            for y in captions[number]
        ):
            continue  # a figure (or table) opening the next page, with its caption and the space
            # around it (30 pt), did not fit
        empty[number] = round(gap / (bottom - top), 2)
    assert not empty, f"pages more than {MAX_EMPTY:.0%} empty (page: share): {empty}"


def test_no_page_ends_in_an_empty_code_box(rendered):
    """A code block either moves whole or breaks between its lines: no page's text block ends in a
    pale grey box with no line in it (the box whose code went to the next page)."""
    boxed = []
    for number, rows in enumerate(rendered, 1):
        top, bottom = MARGIN, len(rows) - MARGIN
        width = len(rows[0])
        ink = {y for y in range(top, bottom) if sum(v < 200 for v in rows[y]) >= 2}
        pale = {y for y in range(top, bottom) if sum(225 <= v <= 252 for v in rows[y]) > width / 3}
        if not pale:
            continue
        end = start = max(pale)  # the lowest box, up to its top edge (its lines of code are in it)
        while start - 1 in pale:
            start -= 1
        if end - start > 4 and not any(start <= y for y in ink):
            boxed.append(number)
    assert not boxed, f"pages ending in an empty code box: {boxed}"


def _raster_resolutions(reader) -> list[tuple[int, float]]:
    """(page, pixels per inch) of every raster image drawn wider than an inch: its width in pixels over
    its width on the page, from the current transformation matrix at its ``Do``."""
    from pypdf.generic import ContentStream

    def mul(m, n):
        a, b, c, d, e, f = m
        A, B, C, D, E, F = n
        return [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E,
                e * B + f * D + F]  # fmt: skip

    found = []

    def scan(content, resources, ctm, number, depth):
        xobjects = (resources or {}).get("/XObject", {})
        stack, cur = [], ctm
        for operands, op in content.operations:
            if op == b"q":
                stack.append(cur)
            elif op == b"Q":
                cur = stack.pop() if stack else ctm
            elif op == b"cm":
                cur = mul([float(x) for x in operands], cur)
            elif op == b"Do" and operands[0] in xobjects:
                x = xobjects[operands[0]].get_object()
                inches = (cur[0] ** 2 + cur[1] ** 2) ** 0.5 / 72
                if x["/Subtype"] == "/Image" and inches > 1:
                    found.append((number, int(x["/Width"]) / inches))
                elif x["/Subtype"] == "/Form" and depth < 4:
                    m = [float(v) for v in x.get("/Matrix", [1, 0, 0, 1, 0, 0])]
                    scan(
                        ContentStream(x, reader),
                        x.get("/Resources"),
                        mul(m, cur),
                        number,
                        depth + 1,
                    )

    for number, page in enumerate(reader.pages, 1):
        if page.get_contents() is not None:
            contents = ContentStream(page.get_contents(), reader)
            scan(contents, page.get("/Resources"), [1, 0, 0, 1, 0, 0], number, 0)
    return found


@pytest.mark.xfail(
    strict=True,
    reason="issue 33, not yet met on the whole book: the fresh clone of 2026-12-02 printed 32 raster "
    "pictures under 300 ppi (30 at 98 ppi, 2 at 137) where the live and slider pictures account for 29",
)
def test_figures_print_as_vectors_or_at_300_ppi(book):
    """The chapters' matplotlib figures print as SVG (lib.viz.set_style: the singlehtml build prefers
    it), their heatmaps' pixels at 300 dpi. Left raster below 300 ppi: the live and slider figures'
    precomputed pictures, drawn for the site's phone column (lib.viz.live, lib.viz.interactive)."""
    import json

    reader, _, _, _, _ = book
    report = json.loads(PDF.with_suffix(".json").read_text(encoding="utf-8"))
    low = [(page, round(ppi)) for page, ppi in _raster_resolutions(reader) if ppi < 290]
    pictures = report["live"] + report["sliders"]
    assert len(low) <= pictures, f"{len(low)} raster images under 300 ppi for {pictures}: {low}"
