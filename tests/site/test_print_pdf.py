"""The PDF as a printed book (issue 33; ``make pdf``, tools/print_book.py), measured from the file.

pypdf reads its outline (a bookmark for every chapter, at the page where the chapter starts), its
contents page (each chapter's printed page number is the outline's), its index (the glossary's terms,
each page it names holding the term), its title page (title, authors,
version, licence), its running heads (a chapter's title over its pages) and the size of every character
of text (body text 10-11 pt). Poppler's pdftoppm renders each page small, to measure how much of a page is
left empty below its last line (no blank page, no page left mostly empty but the last of a chapter or
one before a figure that did not fit, no empty code box at a page's foot), and its pdfimages lists
the raster pictures' resolutions (the charts print as vectors). No link points at the server it was
printed from, and no web control (a fold's button, a progress bar) is printed as text.
tests/site/test_print.py checks the rest (links, figures, equations, live figures in their static
form). The PDF is read once a session (the ``book`` fixture), and kept in pytest's cache for the next
run on the same file.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import os
import pickle
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
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


@dataclass
class Printed:
    """What the tests measure of the PDF, collected in one pass over it (see ``book``). Per page:
    its text (pypdf), where each figure's or table's caption starts (pt from the top), the text
    block's last line (y, size, text) and every piece of text in it (y, size, font, text), and,
    rendered at DPI, three numbers per row of
    pixels: ink (darker than 200), a code box's pale grey (225 to 252) and the darkest pixel."""

    pages: int
    texts: list[str]
    sizes: Counter  # {(size in pt, monospaced): characters}
    captions: list[list[float]]
    lowest: list[tuple[float, float, str]]
    runs: list[list[tuple[float, float, str, str]]]
    rasters: list[tuple[int, float]]  # (page, pixels per inch), pictures drawn wider than an inch
    dark: list[list[int]]
    pale: list[list[int]]
    darkest: list[list[int]]


DPI = 50
MARGIN = round(20 / 25.4 * DPI)  # pdf.css: 20 mm above and below the text block, in pixels


def _read_text(reader):
    """Each page's text, the characters' sizes and fonts, the captions' and the first and last lines'
    places, from pypdf's text extraction (the size on the page: the font size times the text and
    current matrices' vertical scale)."""
    texts, sizes, captions, lowest, runs = [], Counter(), [], [], []
    for page in reader.pages:
        height = float(page.mediabox.height)
        captions.append([])
        lowest.append((0.0, 0.0, ""))
        runs.append([])

        def visit(text, cm, tm, font, font_size):
            if not text.strip() or font is None:
                return
            c = tm[2] * cm[0] + tm[3] * cm[2]
            d = tm[2] * cm[1] + tm[3] * cm[3]
            size = round(font_size * (c * c + d * d) ** 0.5, 1)
            y = height - (tm[4] * cm[1] + tm[5] * cm[3] + cm[5])  # from the page's top edge
            if CAPTION.match(text):  # where a figure's or table's caption starts
                captions[-1].append(y)
            name = str(font.get("/BaseFont", ""))
            if 60 < y < height - 60:  # in the text block (not the running head or page number)
                if y >= lowest[-1][0]:
                    lowest[-1] = (y, size, text.strip())
                runs[-1].append((y, size, name, text.strip()))
            sizes[(size, "Mono" in name)] += len(text.strip())

        texts.append(page.extract_text(visitor_text=visit))
    return texts, sizes, captions, lowest, runs


def _raster_resolutions(pdf: Path) -> list[tuple[int, float]]:
    """(page, pixels per inch) of every raster image drawn wider than an inch, from poppler's
    ``pdfimages -list``: its width in pixels over its width on the page, from the current
    transformation matrix where it is drawn (inside form XObjects too); soft masks left out."""
    if not shutil.which("pdfimages"):
        pytest.fail("poppler-utils' pdfimages is required (make browser installs it)")
    listing = subprocess.run(
        ["pdfimages", "-list", str(pdf)], check=True, capture_output=True, text=True
    ).stdout
    found = []
    for line in listing.splitlines()[2:]:
        # page num type width height color comp bpc enc interp object-id(2) x-ppi y-ppi size ratio
        f = line.split()
        if len(f) >= 14 and f[2] == "image" and float(f[12]) > 0:
            ppi = float(f[12])
            if int(f[3]) / ppi > 1:
                found.append((int(f[0]), ppi))
    return found


def _render_rows(pdf: Path):
    """Each page rendered in grey at DPI by pdftoppm (PGM, cheaper to write than PNG), reduced to
    three numbers per row of pixels: ink (darker than 200), a code box's pale grey (225 to 252) and
    the darkest pixel."""
    import numpy as np

    if not shutil.which("pdftoppm"):
        pytest.fail("poppler-utils' pdftoppm is required (make browser installs it)")
    dark, pale, darkest = [], [], []
    with tempfile.TemporaryDirectory(prefix="book-pdf-pages-") as tmp:
        subprocess.run(["pdftoppm", "-r", str(DPI), "-gray", str(pdf), f"{tmp}/p"], check=True)
        for pgm in sorted(Path(tmp).glob("p-*.pgm"), key=lambda p: int(p.stem.split("-")[1])):
            data = pgm.read_bytes()
            # P5 <width> <height> <maxval> and one byte per pixel
            magic, w, h, maxval, pixels = data.split(maxsplit=4)
            assert magic == b"P5" and maxval == b"255", pgm
            img = np.frombuffer(pixels, dtype=np.uint8, count=int(w) * int(h))
            img = img.reshape(int(h), int(w))
            dark.append((img < 200).sum(axis=1).tolist())
            pale.append(((img >= 225) & (img <= 252)).sum(axis=1).tolist())
            darkest.append(img.min(axis=1).tolist())
    return dark, pale, darkest


def _collect(pdf: Path) -> Printed:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(pdf.read_bytes()))
    texts, sizes, captions, lowest, runs = _read_text(reader)
    dark, pale, darkest = _render_rows(pdf)
    assert len(dark) == len(reader.pages), (len(dark), len(reader.pages))
    return Printed(
        len(reader.pages), texts, sizes, captions, lowest, runs, _raster_resolutions(pdf),
        dark, pale, darkest,
    )  # fmt: skip


CACHE = Path(tempfile.gettempdir()) / "attention-book-test-cache"


@pytest.fixture(scope="session")
def book() -> Printed:
    """The PDF read once a session, in one pass: pypdf's text extraction, poppler's list of its
    pictures and its pages rendered small. Kept in the system's temporary folder (not in the
    book's source folder: pyproject.toml turns pytest's own cache off) under the PDF's path, size
    and modification time and this collecting code: a second run on the same PDF reads it back
    (the first costs a minute and more on the whole book, mostly pypdf's text extraction)."""
    try:
        import pypdf  # noqa: F401
    except ImportError:  # a skip would let a PDF nobody measured pass
        pytest.fail("pypdf is required (requirements.txt): pip install -r requirements.txt")
    if not PDF.exists():
        pytest.fail(f"no {PDF}: run `make pdf`")
    code = "".join(
        inspect.getsource(f)
        for f in (Printed, _read_text, _raster_resolutions, _render_rows, _collect)
    )
    stat = PDF.stat()
    key = f"{PDF.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{DPI}|{code}"
    stored = CACHE / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".pickle")
    if stored.exists():
        return pickle.loads(stored.read_bytes())
    printed = _collect(PDF)
    CACHE.mkdir(exist_ok=True)
    partial = stored.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(pickle.dumps(printed))
    partial.replace(stored)  # whole or not at all, should two runs write it
    # about 12 MB each: the 4 newest kept (a build and a few copies of it)
    for old in sorted(CACHE.glob("*.pickle"), key=lambda p: p.stat().st_mtime)[:-4]:
        old.unlink(missing_ok=True)
    return printed


@pytest.fixture(scope="session")
def reader(book):
    """pypdf's reader of the PDF, for its outline and links (read lazily: cheap)."""
    import pypdf

    return pypdf.PdfReader(io.BytesIO(PDF.read_bytes()))


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


def test_the_outline_has_every_chapter_at_its_first_level(book, reader):
    texts = book.texts
    pages = chapter_pages(reader)
    missing = [chapter_title(e) for e in CHAPTERS if chapter_title(e) not in pages]
    assert not missing, f"chapters without a bookmark: {missing}"
    # in reading order, each on a page of its own that opens with its title
    assert list(pages.values()) == sorted(pages.values()) and len(set(pages.values())) == len(pages)
    for title, page in pages.items():
        assert title in texts[page - 1][:400], (title, page, texts[page - 1][:200])
    assert len(outline(reader)) > 3 * len(CHAPTERS)  # sections too


def test_the_contents_gives_each_chapter_its_page(book, reader):
    texts = book.texts
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
    texts = book.texts
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    first = re.sub(r"\s+", " ", texts[0])
    assert re.sub(r"\s+", " ", config["title"]) in first, first
    for author in cff["authors"]:
        assert author["name"] in first
    assert f"Version {cff['version']}" in first and "printed from commit" in first
    assert "CC BY 4.0" in first and "MIT" in first and config["html"]["baseurl"] in first


def test_running_heads_and_page_numbers(book, reader):
    texts = book.texts
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
    sizes = book.sizes
    body = sum(n for (size, mono), n in sizes.items() if not mono)
    in_range = sum(n for (size, mono), n in sizes.items() if not mono and 9.9 <= size <= 11.1)
    assert in_range / body > 0.6, sorted(sizes.items(), key=lambda kv: -kv[1])[:10]
    code = sum(n for (size, mono), n in sizes.items() if mono)
    small = sum(n for (size, mono), n in sizes.items() if mono and size < 7.5)
    assert small / code < 0.05, "code printed smaller than 7.5 pt"


def test_no_heading_ends_a_page(book):
    """No page's last line is a heading (12 pt or larger: pdf.css's h1 to h3) cut off from its text.
    A heading has a word: a display equation's tall glyph at a page's foot (the norm bars of chapter
    2's bound, '∥', on 2026-12-06) is as large and is not one."""
    lowest = book.lowest
    alone = [
        (n, text)
        for n, (_, size, text) in enumerate(lowest, 1)
        if size >= 11.9 and re.search(r"[^\W\d_]{2}", text)
    ]
    assert not alone, f"headings at a page's foot (page, heading): {alone}"


def test_no_label_ends_a_page(book):
    """A label printed over what it labels ("Model answer", "Worked solution": pdf.css keeps it with
    the next line) is never a page's last line (print review s6 found three at pages' feet)."""
    labels = re.compile(r"^(Model answer\b.*|Worked solution)$")
    alone = [(n, text) for n, (_, _, text) in enumerate(book.lowest, 1) if labels.match(text)]
    assert not alone, f"labels at a page's foot (page, label): {alone}"


def without_running_heads(texts: list[str], titles: tuple[str, ...]) -> list[str]:
    """The pages' texts without their running heads and page numbers (among a page's first two and
    last two lines: a chapter's title, the page's number), so that a sentence a page break cuts reads
    whole: "hover over" + "9. The Transformer" + "310" + "a token (on a touch screen ...)" ended at
    the head's period, a sentence that never says where it works."""
    out = []
    for n, text in enumerate(texts, 1):
        lines = text.split("\n")
        edge = set(range(min(2, len(lines)))) | set(range(max(0, len(lines) - 2), len(lines)))
        out.append(
            "\n".join(
                line
                for i, line in enumerate(lines)
                if not (i in edge and (line.strip() == str(n) or line.strip().endswith(titles)))
            )
        )
    return out


def test_running_heads_are_taken_out_of_the_text():
    texts = ["1. Intro\n1\nBody of page one, which ends mid", "sentence.\n2. Next\n2"]
    assert without_running_heads(texts, ("Intro", "Next"))[0] == "Body of page one, which ends mid"
    assert without_running_heads(["a\nb\nc"], ("Intro",)) == ["a\nb\nc"]
    page = ["9. The Transformer\n1\nhover over a token (on a touch screen)"]
    assert without_running_heads(page, ("The Transformer",)) == [
        "hover over a token (on a touch screen)"
    ]


def test_sentences_about_web_controls_say_they_are_on_the_website(book, reader):
    """No printed sentence tells the reader to drag a slider, hover over a token or click without
    saying that it is on the website (prepare.js rewords them by tools/print/web_wording.json)."""
    from tools.print_book import web_sentences

    titles = tuple(chapter_pages(reader))
    assert len(titles) == len(CHAPTERS)
    text = re.sub(r"\s+", " ", "\n".join(without_running_heads(book.texts, titles)))
    left = [text[s : s + 100] for s in web_sentences(text)]
    assert not left, f"{len(left)} sentences written for the website: {left[:5]}"


def test_no_web_controls_and_no_loopback_address(book):
    texts = book.texts
    text = "\n".join(texts)
    for control in ["Hide code cell", "Show code cell", "127.0.0.1"]:
        assert control not in text, control
    # the worked solutions' button is gone; the phrase is left where the prose names it
    # (a line of the source or of the PDF may end inside the phrase: counted with its spaces as one)
    named = 0
    for entry in toc_entries():
        path = ROOT / (entry + (".ipynb" if entry.startswith("notebooks/") else ".md"))
        source = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            source = "\n".join("".join(c["source"]) for c in json.loads(source)["cells"])
        named += re.sub(r"\s+", " ", source).count("Show a worked solution")
    assert re.sub(r"\s+", " ", text).count("Show a worked solution") <= named
    bars = re.findall(r"\d{1,3}%\|[^\n|]{3,}\|\s*\d+/\d+", text)
    assert not bars, bars[:3]
    assert text.count("the book's website (https://") >= text.count("the book's website") > 0


def _caption_end(darkest: list[int], start: int, bottom: int) -> int:
    """The row where a caption that starts at row ``start`` ends: the first run of 8 blank rows
    (more than a line's spacing) below it."""
    blank = 0
    for y in range(start, bottom):
        blank = blank + 1 if darkest[y] > 200 else 0
        if blank >= 8:
            return y - blank
    return bottom


def _prose(run: tuple[float, float, str, str]) -> bool:
    """A piece of text of a paragraph (upright serif at body size), of code, or of a heading: what
    a figure does not hold (its caption and its italic notes are sans-serif or italic, a bertviz
    view's tokens sans-serif)."""
    _, size, font, _ = run
    serif = "Serif" in font and "Italic" not in font and size >= 9.9
    return serif or "Mono" in font or size >= 11.9


def _opening_end(book: Printed, index: int, top: int, bottom: int) -> int | None:
    """The last row of the figure that opens page ``index`` (0-based): down to its caption's last
    line when the page's first caption has no paragraph, code or heading above it (a picture, a
    slider's or a head view's note may be), else the picture above the page's first text (a chart's
    lettering is drawn, not text). None when the page opens with text."""
    px = DPI / 72  # pixels per point
    runs = sorted(book.runs[index])
    ink = [y for y in range(top, bottom) if book.dark[index][y] >= 2]
    # text: a paragraph, code, a heading or a caption; a chart's or a bertviz view's own lettering
    # (sans-serif, small) is part of the picture
    texts = [r for r in runs if _prose(r) or CAPTION.match(r[3])]
    first_text = round((texts[0][0] - texts[0][1]) * px) if texts else bottom
    if not any(y < first_text - 1 for y in ink):
        return None  # text first (a table's caption, a paragraph)
    caption = next((r for r in runs if CAPTION.match(r[3])), None)
    # a slider's picture, the lines it prints under it (monospace: prose by font) and its italic
    # "Interactive figure" note are one figure with the caption under them
    note = next((r for r in runs if r[3].lstrip().startswith("Interactive figure")), None)
    slider = note is not None and caption is not None and note[0] < caption[0]
    if caption is not None and (
        slider or not any(_prose(r) for r in runs if r[0] < caption[0] - 1)
    ):
        return _caption_end(book.darkest[index], round(caption[0] * px), bottom)
    return max(y for y in ink if y < first_text - 1)


def test_no_page_is_left_mostly_empty(book, reader):
    """No page is blank, and below a page's last line of text or drawing (the running head and page
    number aside) at most MAX_EMPTY of its text block is empty, on every page but the last of a
    chapter and a page whose gap the figure opening the next page did not fit in (with its caption
    and the space around it, 30 pt): a figure moves whole, as in a printed book. A figure that reaches
    the foot of the next page's text block excuses nothing: it is too tall for a page (cut at its
    foot, and the page before it was blank)."""
    assert len(book.dark) == book.pages == len(reader.pages)
    starts = {p for depth, _, p in outline(reader) if depth == 0}
    exempt = {p - 1 for p in starts} | {book.pages}
    px = DPI / 72  # pixels per point
    empty, blank = {}, []
    for number in range(1, book.pages + 1):
        rows = book.dark[number - 1]
        top, bottom = MARGIN, len(rows) - MARGIN
        ink = [y for y in range(top, bottom) if rows[y] >= 2]
        if not ink:
            blank.append(number)
            continue
        if number in exempt:
            continue
        gap = bottom - ink[-1]
        if gap / (bottom - top) <= MAX_EMPTY:
            continue
        if number < book.pages:
            end = _opening_end(book, number, top, bottom)
            if end is not None and end < bottom - 1 and end - top + round(30 * px) > gap:
                continue  # a figure opening the next page did not fit
        empty[number] = round(gap / (bottom - top), 2)
    assert not blank and not empty, (
        f"blank pages: {blank}; pages more than {MAX_EMPTY:.0%} empty (page: share): {empty}"
    )


def test_no_page_ends_in_an_empty_code_box(book):
    """A code block either moves whole or breaks between its lines: no page's text block ends in a
    pale grey box with no line in it (the box whose code went to the next page)."""
    boxed = []
    for number, (dark, pale_rows) in enumerate(zip(book.dark, book.pale), 1):
        top, bottom = MARGIN, len(dark) - MARGIN
        width = round(210 / 25.4 * DPI)  # A4's width in pixels
        ink = {y for y in range(top, bottom) if dark[y] >= 2}
        pale = {y for y in range(top, bottom) if pale_rows[y] > width / 3}
        if not pale:
            continue
        end = start = max(pale)  # the lowest box, up to its top edge (its lines of code are in it)
        while start - 1 in pale:
            start -= 1
        if end - start > 4 and not any(start <= y for y in ink):
            boxed.append(number)
    assert not boxed, f"pages ending in an empty code box: {boxed}"


def test_figures_print_as_vectors_or_at_300_ppi(book):
    """The chapters' matplotlib figures print as SVG (lib.viz.set_style: the singlehtml build prefers
    it), their heatmaps' pixels at 300 dpi; a slider figure's first state too (lib.viz.interactive's
    static form is its SVG). Left raster below 300 ppi: the live figures' precomputed pictures, drawn
    for the site's phone column (lib.viz.live)."""
    report = json.loads(PDF.with_suffix(".json").read_text(encoding="utf-8"))
    low = [(page, round(ppi)) for page, ppi in book.rasters if ppi < 290]
    pictures = report["live"]
    assert len(low) <= pictures, f"{len(low)} raster images under 300 ppi for {pictures}: {low}"


# a few of the glossary's entries (their names: synonyms), whose pages the index test reads
INDEXED = [
    ("byte-pair encoding", "BPE"),
    ("softmax",),
    ("causal mask",),
    ("perplexity",),
    ("BLEU",),
    ("rotary position embedding", "RoPE"),
]


def index_entries(book, reader) -> tuple[int, dict[str, list[int]]]:
    """The index's first page and its entries, {name: [page, ...]}, read from its text: a line is a
    name and its page numbers (an entry that wraps ends its line with a comma)."""
    starts = [p for depth, title, p in outline(reader) if depth == 0 and title.strip() == "Index"]
    assert starts, "no bookmark for the index at the outline's first level"
    text = "\n".join(book.texts[starts[0] - 1 :])
    text = re.sub(r",\s*\n\s*", ", ", text)
    found = {}
    for m in re.finditer(r"^(\S.*?) (\d{1,3}(?:, \d{1,3})*)$", text, re.M):
        found[m.group(1).strip()] = [int(n) for n in m.group(2).split(", ")]
    return starts[0], found


def _squeezed(text: str) -> str:
    """Lower case, one space for any run of white space, none after a hyphen (a line may end there)."""
    return re.sub(r"-\s+", "-", re.sub(r"\s+", " ", text)).lower()


def test_the_index_is_the_books_end(book, reader):
    """The index (prepare.js) comes after every chapter and the back matter, a bookmark at the
    outline's first level, and its numbers are links."""
    start, entries = index_entries(book, reader)
    assert start > max(chapter_pages(reader).values())
    assert "Index" in book.texts[start - 1][:200]
    last = max(p for depth, _, p in outline(reader) if depth == 0)
    assert start == last, "the index is not the last first-level bookmark"
    annots = [a.get_object() for a in reader.pages[start - 1].get("/Annots", [])]
    assert sum("/Dest" in a or "/A" in a for a in annots) >= 30


def test_the_index_lists_the_glossarys_terms_with_their_pages(book, reader):
    """At least 100 of the glossary's names, each with its pages in order (before the index), and
    for a few known terms every page it names holds the term (or a synonym of it): the glossary's
    entry, or a chapter's bold definition or link to that entry."""
    start, entries = index_entries(book, reader)
    assert len(entries) >= 100, sorted(entries)[:20]
    for name, pages in entries.items():
        assert pages == sorted(set(pages)) and all(0 < p < start for p in pages), (name, pages)
    for names in INDEXED:
        listed = [n for n in names if n in entries]
        assert listed == list(names), f"not in the index: {set(names) - set(listed)}"
        pages = entries[names[0]]
        assert all(entries[n] == pages for n in names), {n: entries[n] for n in names}
        assert len(pages) >= 2, (names, pages)  # the glossary and a chapter at least
        wrong = [
            p for p in pages if not any(_squeezed(n) in _squeezed(book.texts[p - 1]) for n in names)
        ]
        assert not wrong, f"{names[0]}: pages {wrong} of {pages} do not hold it"
