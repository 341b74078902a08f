"""A reveal.js slide deck per chapter (issue 14): `make slides`, and `make book` does it too.

    python tools/make_slides.py                 # every chapter -> _build/html/slides/<chapter>.html
    python tools/make_slides.py 05 13           # chapters whose file name starts with 05 or 13
    python tools/make_slides.py --exclude-answers   # without what answers a graded exercise

The decks are made from the *executed* chapters that the book's build keeps in its execution cache
(``_build/.jupyter_cache``, so a deck shows the same figures and numbers as the page), by
nbconvert's slides exporter with the template in ``tools/slides/book_reveal``. They live in the site
(``slides/``), use reveal.js from the npm registry bundled with the book's ``web/src/slides.js`` and
the site's own MathJax, so a deck works offline and from any static host. The build's extension
(``book/_ext/slides.py``) writes that bundle and reveal.js's style sheets into ``_static/slides``,
calls :func:`write_decks` and links each chapter page to its deck; ``make slides`` rewrites the
decks of the last build.

What goes on a slide is decided cell by cell (:func:`deck`), so that a slide holds one idea:

- each ``#``/``##`` heading starts a slide and each ``###`` heading a sub-slide, with the section's
  first paragraph (cut to its first sentences when long); the rest of the prose goes to the speaker
  notes (press ``s`` in the deck);
- display equations, tables and short lists of the prose stay on the slide (a new sub-slide when
  the slide is full);
- every figure a cell draws gets a sub-slide of its own, without the code that drew it, and its
  caption's first sentence (the whole caption, if longer, in the speaker notes); a figure whose text
  the slide would show under 11 px at 1280x720 (one the chapter stacks for a phone) is cut across
  its white bands between panels and shown side by side (:func:`readable`);
- a table a cell prints gets a sub-slide; a short visible code cell (at most 6 lines) with a short
  printed result is shown with it; longer code, hidden cells and the checks are left to the chapter;
- every page has a title: a figure, an equation or a table that starts a page gets its section's;
- a section's first paragraph never ends on a sentence that announces what the slide does not show
  ("... makes the point:"): the equation, list or table it announces comes with it, or the sentence goes to
  the notes; a section that opens on a list (a summary) shows its first items, as many as fit the
  slide in wrapped lines (:data:`LIST_BUDGET`);
- the exercises are left out (they are the students' work) but come back as **questions for the
  class**, one per exercise (its title and the first question it asks), on the slide before the
  licence; an interactive figure shows its picture at its first setting, saying where it is live
  (one with no picture, drawn by JavaScript, is left to the chapter);
- a lecturer's own slides for a chapter, ``slides/<chapter>.md`` in the repository (slides
  separated by ``---`` lines, speaker notes after ``Note:``), go before the questions: the file is
  the lecturer's, so a rebuild keeps them;
- every deck ends on the book's licence, the site footer's line (``_config.yml``'s ``extra_footer``:
  text and figures CC BY 4.0, code MIT), and a short form of it stays in a corner of every slide, so
  a deck handed out or shown on its own still says how it may be reused.
"""

from __future__ import annotations

import argparse
import base64
import html
import re
import sys
from pathlib import Path

import nbformat

# the smallest text of a figure the build drew, its width and height: the measure the site's figure
# test reads too (tests/site/test_chapters_executed.py)
from lib.viz.interactive import svg_text

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tools" / "slides"

MAX_CODE_LINES = 6  # a longer code cell stays in the chapter
MAX_OUTPUT_LINES = 12  # a longer printed result stays in the chapter
MAX_TABLE_LINES = 16  # a longer table stays in the chapter (printed) or the notes (in the prose)
SHORT_LIST = 450  # characters: a list of the prose this short is shown on its slide
SLIDE_BUDGET = 14  # lines of text a slide holds before the next item starts a sub-slide
FIRST_PARAGRAPH = 320  # characters of a section's first paragraph shown on its slide
# characters of a figure's caption shown under it: a longer caption shows its first sentence (cut to
# this length) and goes whole to the speaker notes (course review s36, m1: at 1280x720 a caption of
# several lines ran below the slide, under a figure that fills it)
CAPTION_LINE = 110
SKIPPED_SECTIONS = ("exercises",)
# What a deck shows that answers a graded exercise, as the teachers' page lists it (lecturer review
# s21, M9): ``--exclude-answers`` (``make slides EXCLUDE_ANSWERS=1``) leaves these out. A key is a
# code cell's id (its figures and tables), a section's heading (all of its slides) or a list item's
# opening words ("- ...": a summary's bullet); the value says which exercise it answers. A key
# "<opening words> ... <closing words>" is a passage of prose, from a sentence's opening words to the
# closing words that end it (lecturer review s22, S5: chapter 13's top-p argument, chapter 18's
# six-head slopes and their interleaving), cut from the slides and the notes.
ANSWERS: dict[str, dict[str, str]] = {
    "17_modern_decoder": {
        # the key/value heads in consecutive groups, as repeat_interleave orders them
        "ch17-gqa-figure": "exercise 2",
        # the KiB per token: Qwen3 0.6B's row times its context is qwen3_cache_gib
        "ch17-kv-table": "exercise 4",
        # the cache keeps the last W - 1 positions; L layers reach L(W - 1)
        "## Sliding-window attention": "exercise 4",
        # the summary's bullets on them (a list item, by its opening words)
        "- **Grouped-query attention** shares": "exercise 2",
        "- A **sliding window** of": "exercise 4",
    },
    "07_multi_head_attention": {
        # one head removed at a time, the table and the drop per head (40.2%, 1.5%, 28.2%, 0.2%):
        # which pair costs the most, and most of which the least (lecturer review s29, m8)
        "## Removing one head at a time": "exercise 3",
        # the summary's sentence on it: a single removal cushioned, almost fully for the weaker head
        "Removing heads shows that ... 40% of the answers are lost).": "exercise 3",
    },
    "03_scoring_functions": {
        # the summary's last sentence: half of exercise 1's written part 1 (lecturer review s23, M6)
        "Exercise 1 shows that one ... score with a low-rank $\\mathbf W_a$.": "exercise 1",
    },
    "13_gpt": {
        # top-p's set follows the model's confidence: exercise 1's written answer (one k for all steps)
        "Top-p keeps a set whose size ... nucleus sampling.": "exercise 1",
        # the same claim on two shown slides (lecturer review s38, M1): the decoding section's opening
        # sentence ("top-p cuts the tail according to the model's confidence") and the summary's bullet
        # ("top-p a number that follows the model's confidence")
        "This section's two lessons: top-p ... the likeliest document.": "exercise 1",
        "- **Decoding** is a choice made after training": "exercise 1",
    },
    "18_attention_at_scale": {
        # the slopes of 6 and 12 heads, and how the new ones interleave: exercise 2's rule, printed
        "ch18-alibi-slopes": "exercise 2",
        "Six heads get the four slopes ... the others between two of them.": "exercise 2",
    },
}
PASSAGE = " ... "  # a passage's opening and closing words, in a key of ANSWERS
LEFT_OUT = (
    "*Left out of this deck until the deadline of {exercise}, which it answers: see the chapter"
    " (or `make slides` without `EXCLUDE_ANSWERS=1`).*"
)
# the slide after the title of a deck made with --exclude-answers, when it left something out
LEFT_OUT_SLIDE = (
    "## Left out of these slides\n\nUntil the deadline of the graded exercise it answers (`make"
    " slides EXCLUDE_ANSWERS=1`, `--exclude-answers`), this deck leaves out:\n\n{items}\n\nThe"
    " chapter has them all."
)
IMAGES = ("image/png", "image/svg+xml", "image/jpeg")


# --------------------------------------------------------------------------------------------------
# MyST to plain Markdown: citations as author-year text, directives unwrapped


def citations(bib: Path = ROOT / "book" / "references.bib") -> dict[str, tuple[str, str]]:
    """{key: (authors as cited, year)} from the book's bibliography."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author", [])
        names = [" ".join(p.last_names) for p in people]
        if len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        elif names:
            who = f"{names[0]} et al."
        else:
            who = entry.fields.get("title", key)
        out[key] = (who.replace("{", "").replace("}", ""), entry.fields.get("year", ""))
    return out


def citations_as_text(text: str, cite: dict[str, tuple[str, str]]) -> str:
    """{cite:t}/{cite:p} roles as author-year text: "Bahdanau et al. (2015)" / "(Bahdanau et al.,
    2015)"; ``cite`` maps a key to (authors, year), as :func:`citations` reads them."""

    def one(key: str) -> tuple[str, str]:
        return cite.get(key.strip(), (key.strip(), ""))

    def textual(m: re.Match) -> str:
        return "; ".join(f"{w} ({y})" for w, y in map(one, m.group(1).split(",")))

    def parenthetical(m: re.Match) -> str:
        return "(" + "; ".join(f"{w}, {y}" for w, y in map(one, m.group(1).split(","))) + ")"

    text = re.sub(r"\{cite:t\}`([^`]+)`", textual, text)
    return re.sub(r"\{cite:p\}`([^`]+)`", parenthetical, text)


def plain_markdown(text: str, cite: dict[str, tuple[str, str]]) -> str:
    """The chapter's MyST as Markdown that nbconvert renders: {cite:t}/{cite:p} roles become
    "Bahdanau et al. (2015)" / "(Bahdanau et al., 2015)", directive fences are unwrapped, links to the
    book's pages point to their HTML."""

    text = citations_as_text(text, cite)
    text = re.sub(r"\{[a-z:]+\}`([^`<]*?)\s*(<[^`]*>)?`", r"\1", text)  # other roles: their text
    text = re.sub(r"^(:::+|```+)\{[a-z-]+\}[^\n]*\n(:[a-z-]+:[^\n]*\n)*", "", text, flags=re.M)
    text = re.sub(r"^(:::+|```+)\s*$", "", text, flags=re.M)
    # links to the book's pages ([BLEU](../book/glossary.md#term-BLEU)): their built pages
    text = re.sub(r"\]\((\.\./book/[\w-]+)\.md(#[^)\s]*)?\)", r"](\1.html\2)", text)
    return text.strip()


def blocks(markdown: str) -> list[str]:
    """Paragraph-level blocks: split at blank lines; a $$ display equation is a block of its own,
    whole, even where the text before or after it has no blank line between."""
    out, current, in_math = [], [], False

    def flush():
        if current and current[0][:1].isspace() and out:  # a list item's next paragraph
            out[-1] += "\n\n" + "\n".join(current)
        elif current:
            out.append("\n".join(current))
        current.clear()

    for line in markdown.splitlines():
        s = line.strip()
        if in_math:
            current.append(line)
            if s.endswith("$$"):
                in_math = False
                flush()
        elif s.startswith("$$"):
            flush()
            current.append(line)
            if s.endswith("$$") and len(s) > 2:
                flush()
            else:
                in_math = True
        elif not s:
            flush()
        else:
            current.append(line)
    flush()
    return out


def is_math(block: str) -> bool:
    s = block.strip()
    return s.startswith("$$") or s.startswith("\\begin{")


def is_prose(block: str) -> bool:
    """A paragraph of text (not an equation, code, a table, a list, HTML or a directive)."""
    return (
        not is_math(block)
        and not block[:1].isspace()
        and not block.lstrip().startswith(("```", "|", "<", ":::", "- ", "* ", "1. ", ">"))
    )


def shortened(paragraph: str, limit: int = FIRST_PARAGRAPH, ends: str = ".!?:") -> str:
    """The paragraph, or its first sentences up to about ``limit`` characters; a sentence ends on
    one of ``ends``."""
    if len(paragraph) <= limit:
        return paragraph
    # not "et al. (2018)"
    sentence_end = rf"(?<=[{ends}])(?<!\bal\.)(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z*])"
    sentences = re.split(sentence_end, paragraph.replace("\n", " "))
    out = sentences[0]
    for s in sentences[1:]:
        if len(out) + len(s) + 1 > limit:
            break
        out += " " + s
    return out


LEAD_IN = 200  # characters: the longest sentence before an equation shown above it on its slide


def lead_in(paragraph: str, limit: int = LEAD_IN) -> str:
    """The last sentence of the prose paragraph before a display equation, shown above it (course
    review s40, m6: chapter 10's "(9 log 9 - 70 log 70) - ... = 28.02 nats" and chapter 5's output
    equation were slides of a bare equation, what it is said only in the speaker notes); the whole
    paragraph stays in the notes. "" where the block is not prose or its last sentence is longer
    than ``limit``."""
    if not is_prose(paragraph) or paragraph.lstrip().startswith("#"):
        return ""
    sentence_end = r"(?<=[.!?:])(?<!\bal\.)(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z*$`(])"
    sentences = re.split(sentence_end, " ".join(paragraph.split()))
    last = sentences.pop()
    while sentences and len(last) < LEAD_IN // 3:  # "The gain is": the sentence before it too
        if len(sentences[-1]) + len(last) + 1 > limit:
            break
        last = f"{sentences.pop()} {last}"
    return last if len(last) <= limit else ""


def caption_line(caption: str, limit: int = CAPTION_LINE) -> str:
    """What a figure's slide shows of its caption: the caption if it is one short line, else its
    first sentence, cut at a word before ``limit`` characters (with "...") if still longer."""
    text = " ".join(caption.split())
    if len(text) <= limit:
        return text
    first = shortened(text, limit, ends=".!?")
    if len(first) <= limit:
        return first
    cut = first[: first.rfind(" ", 0, limit - 3)]
    if cut.count("$") % 2:  # not inside an equation
        cut = cut[: cut.rfind("$")]
    for mark in ("**", "`"):  # nor inside bold text or code
        if cut.count(mark) % 2:
            cut = cut[: cut.rfind(mark)]
    if cut.count("[") > cut.count("](") or cut.count("](") > cut.count(")"):  # nor a link
        cut = cut[: cut.rfind("[")]
    return cut.rstrip(" ,;:") + "..."


def is_list(block: str) -> bool:
    return block.lstrip().startswith(("- ", "* ", "1. "))


def is_table(block: str) -> bool:
    """A Markdown table of the prose short enough for a slide."""
    return block.lstrip().startswith("|") and block.strip().count("\n") <= MAX_TABLE_LINES


def is_short_list(block: str) -> bool:
    """A list of the prose short enough to be shown whole on a slide."""
    return is_list(block) and len(" ".join(block.split())) <= SHORT_LIST


def without_loose_end(paragraph: str, following: str) -> str:
    """A section's first paragraph as its slide shows it: shortened, and never ending on a sentence
    that announces what comes next ("... makes the point:") unless what it announces follows on the
    slide (a display equation, a list or a table right after a paragraph that ends there)."""
    short = shortened(paragraph)
    if not short.endswith(":"):
        return short
    if short == " ".join(paragraph.split()) or short == paragraph:
        if is_math(following) or is_list(following) or is_table(following):
            return short
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z*])", short)
    return " ".join(sentences[:-1]).strip()


# lines of text a display equation fills on a slide, with its margins; a row after its first (an
# aligned block's "\\") fills 2 more. Counted as one line each, chapter 13's slide "A Transformer
# decoder as a language model" held five equations and measured 812 px at 1280x720 (lecturer review
# s38, m2)
EQUATION_LINES = 3
# a row with a big operator or a fraction (its limits above and below it, in display style) fills one
# more: chapter 12's "The bidirectional language model", two products and an aligned block of two
# sums, 14 lines as counted without it, measured 833 px of Reveal's 800 (lecturer review s39, m1)
TALL_ROW = re.compile(
    r"\\(?:sum|prod|int|oint|frac|dfrac|binom)(?![a-zA-Z])|\\(?:lim|max|min|argmax|argmin)\s*_"
)


def lines_of(text: str) -> int:
    """The lines of text ``text`` fills on a slide (70 characters a line); a display equation,
    :data:`EQUATION_LINES` and 2 more per row after its first, and one more per row with a big
    operator or a fraction (:data:`TALL_ROW`)."""
    if not text:
        return 0
    total = 0
    for block in blocks(text):
        if is_math(block):
            rows = block.split("\\\\")
            tall = sum(bool(TALL_ROW.search(row)) for row in rows)
            total += EQUATION_LINES + 2 * (len(rows) - 1) + tall
        else:
            total += sum(max(1, len(ln) // 70 + 1) for ln in block.splitlines())
    return total


# --------------------------------------------------------------------------------------------------
# A figure's text on its slide, at 1280x720 (a projector's): lecturer review s40 measured 9-10 px in
# the stacked figures of chapters 10, 12 and 16, which the chapters draw a panel above the other so that
# they read on a 360 px phone, and which the slide's 560 px cap shrank to a narrow column

# Reveal's slide is 1280 x 800 px with a margin of 0.04 (web/src/slides.js): a 1280x720 screen shows it
# at min(1280 * 0.96 / 1280, 720 * 0.96 / 800) = 0.864 of its size, which reveal.js rounds to 0.86
SLIDE_SIZE, SLIDE_MARGIN, SCREEN = (1280, 800), 0.04, (1280, 720)
SCREEN_SCALE = round(
    min(
        SCREEN[0] * (1 - SLIDE_MARGIN) / SLIDE_SIZE[0],
        SCREEN[1] * (1 - SLIDE_MARGIN) / SLIDE_SIZE[1],
    ),
    2,
)
# what a figure's page gives its picture, in the slide's px: the height beside its title and one
# caption line (the template's cap, course review s36, m1), the width of the output area (measured in
# headless Chromium, tests/site/test_slides.py), and the gap between panels shown side by side
FIGURE_HEIGHT, FIGURE_WIDTH, PANEL_GAP = 560, 1236, 24
# the most a figure's page gives a figure whose panel would read under SLIDE_TEXT_PX at FIGURE_HEIGHT
# (chapter 4's local attention, one tall panel): Reveal's 800 px less its title and caption line (the
# 156 px around a 560 px figure, course review s36, m1)
FIGURE_ROOM = 640
SLIDE_TEXT_PX = 11.0  # the smallest figure text on a slide at 1280x720, as on a phone
MAX_PANELS = 3  # a stacked figure is shown in at most this many columns
# a white band of rows at least this tall (px of the PNG, at the figures' 110 dpi) may part two panels
PANEL_CUT_PX = 4


def panel_scale(
    width: float,
    bands: list[tuple[float, float]],
    most: float = FIGURE_WIDTH,
    tall: float = FIGURE_HEIGHT,
) -> float:
    """Slide px per point of a figure ``width`` points wide shown as ``bands`` (its horizontal strips,
    top and bottom in points) side by side, as large as fits ``most`` px (:data:`FIGURE_WIDTH`, or
    less for a picture shown at most at its own size) by ``tall`` (:data:`FIGURE_HEIGHT`)."""
    columns = len(bands)
    tallest = max(b - a for a, b in bands)
    return min((most - PANEL_GAP * (columns - 1)) / (columns * width), tall / tallest)


def white_gaps(png: bytes) -> list[tuple[float, float]]:
    """The white bands across a PNG (rows of white only, at least :data:`PANEL_CUT_PX` tall, not at
    its edges), top and bottom as fractions of its height: where a stacked figure may be cut."""
    import io

    import numpy as np
    from PIL import Image

    picture = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    white = list((picture >= 250).all(axis=1))
    gaps, start = [], None
    for row, is_white in enumerate(white + [False]):
        if is_white and start is None:
            start = row
        elif not is_white and start is not None:
            if row - start >= PANEL_CUT_PX and start > 0 and row < len(white):
                gaps.append((start / len(white), row / len(white)))
            start = None
    return gaps


SVG_NS = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def axes_extents(svg: str) -> list[tuple[float, float]]:
    """The top and bottom (points) of what each axes of matplotlib's SVG draws (its ``<g
    id="axes_N">``: the plot, its tick labels, axis labels and title; not its legend, which may go
    beside it), from the y of its paths, its texts' baselines and its pictures: a cut between two
    panels lies outside every one of them, so that an axis label stays with its plot and a title
    with its panel (chapter 10's BPE figure: a two-line x label has less white under it than above
    it). A diagram's axes (its axis off) have none: it may be cut across any white band."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(svg.encode())
    except ET.ParseError:
        return []
    figure = next((g for g in root.iter(f"{SVG_NS}g") if g.get("id") == "figure_1"), None)
    extents = []
    for axes in figure if figure is not None else []:
        if not (axes.get("id") or "").startswith("axes_"):
            continue
        ys: list[float] = []

        def walk(element) -> None:
            # what is clipped lies within the axes' own rectangle; a legend may go beside its plot
            if element.tag == f"{SVG_NS}defs" or element.get("clip-path"):
                return
            if (element.get("id") or "").startswith("legend_"):
                return
            if element.tag == f"{SVG_NS}path" and not element.get("transform"):
                ys.extend(float(v) for v in NUMBER.findall(element.get("d", ""))[1::2])
            if element.get("transform"):  # a text's glyphs: its baseline, where it is moved to
                moved = re.match(r"translate\(\s*[-\d.e]+[ ,]+([-\d.e]+)", element.get("transform"))
                ys.extend([float(moved.group(1))] if moved else [])
                return
            if element.get("y") is not None and element.tag in (f"{SVG_NS}use", f"{SVG_NS}image"):
                top = float(element.get("y"))
                ys.extend([top, top + float(element.get("height", 0) or 0)])
            for child in element:
                walk(child)

        # a diagram (an axes without its axis) may be cut across any white band it leaves
        axis_on = any((g.get("id") or "").startswith("matplotlib.axis") for g in axes.iter())
        walk(axes)
        if ys and axis_on:
            extents.append((min(ys), max(ys)))
    return extents


def panels(svg: str, png: bytes | None) -> list[tuple[float, float]]:
    """A figure's horizontal strips (top and bottom, in points) to show side by side on its slide: a
    figure stacked for a phone (its panels above each other) is cut in the middle of white bands
    across its PNG (:func:`white_gaps`), never through what it draws nor inside what one axes draws
    (:func:`axes_extents`), into the columns (at most :data:`MAX_PANELS`) whose text shows the
    largest, the fewest where more columns gain less than 5%; one strip, the whole figure, where it
    has no such band. [] for a picture without text."""
    from itertools import combinations

    measured = svg_text(svg)
    if measured is None:
        return []
    _, width, height = measured
    best = [(0.0, height)]
    extents = axes_extents(svg)
    cuts = []
    for top, bottom in white_gaps(png) if png else []:
        cut = (top + bottom) / 2 * height
        if not any(a < cut < b for a, b in extents):
            cuts.append(cut)
    for n in range(1, MAX_PANELS):
        for chosen in combinations(cuts, n):
            edges = [0.0, *chosen, height]
            bands = list(zip(edges, edges[1:]))
            if panel_scale(width, bands) > panel_scale(width, best) * 1.05:
                best = bands
    return best


def panels_html(svg: str, bands: list[tuple[float, float]], alt: str = "") -> str:
    """The figure's strips side by side, each its SVG seen through a window (its viewBox) on the
    strip, all at one scale (:func:`panel_scale`), sized in the slide's px."""
    size, width, _ = svg_text(svg)
    scale = panel_scale(width, bands)
    if size * scale * SCREEN_SCALE < SLIDE_TEXT_PX:  # a panel too tall to read at FIGURE_HEIGHT
        needed = SLIDE_TEXT_PX / SCREEN_SCALE / size * 1.001  # not 10.999 px
        scale = min(needed, panel_scale(width, bands, tall=FIGURE_ROOM))
    svg = re.sub(r"<\?xml[^>]*>\s*|<!DOCTYPE[^>]*>\s*", "", svg)
    head = re.search(r"<svg[^>]*>", svg)
    pictures = []
    for number, (top, bottom) in enumerate(bands, 1):
        tag = re.sub(r'\sheight="[\d.]+pt"', f' height="{bottom - top:.3f}pt"', head.group(0))
        window = f"0 {top:.3f} {width:.3f} {bottom - top:.3f}"
        tag = re.sub(r'\sviewBox="[^"]*"', f' viewBox="{window}"', tag)
        data = base64.b64encode((svg[: head.start()] + tag + svg[head.end() :]).encode()).decode()
        style = f"width:{width * scale:.1f}px;height:{(bottom - top) * scale:.1f}px"
        part = f" (part {number} of {len(bands)})" if len(bands) > 1 else ""
        pictures.append(
            f'<img src="data:image/svg+xml;base64,{data}" alt="{alt}{part}" style="{style}">'
        )
    return f'<div class="book-panels">{"".join(pictures)}</div>'


def readable(svg: str, png: bytes | None, most: float = FIGURE_WIDTH, alt: str = "") -> str | None:
    """None where the picture ``svg`` (matplotlib's) shows its text at :data:`SLIDE_TEXT_PX` or more
    on its slide as the template shows it (at most ``most`` px wide and :data:`FIGURE_HEIGHT` tall),
    else the HTML that shows it larger (:func:`panels`, :func:`panels_html`): lecturer review s40
    measured 9-10 px in the stacked figures of chapters 10, 12 and 16 at 1280x720."""
    measured = svg_text(svg)
    if measured is None:
        return None
    size, width, height = measured
    if size * panel_scale(width, [(0.0, height)], most) * SCREEN_SCALE >= SLIDE_TEXT_PX:
        return None
    return panels_html(svg, panels(svg, png), html.escape(alt, quote=True))


def slide_text_px(cell) -> list[float]:
    """The smallest text of each picture a deck's cell shows, in px on a 1280x720 screen, from its
    matplotlib SVG (inf for one without text; a PNG alone is not measured): a figure (as wide as
    :data:`FIGURE_WIDTH`, at most :data:`FIGURE_HEIGHT` tall), a picture in the Markdown (an
    interactive figure's first setting, the same but at most its own size, 4/3 px a point) or the
    strips of :func:`panels_html`, at the size their style sets."""
    shown = []
    if cell.cell_type == "markdown":
        html_text, figures = cell.source, []
    else:
        outputs = [o.get("data", {}) for o in cell.get("outputs", [])]
        html_text = "".join(data.get("text/html", "") for data in outputs)
        figures = [data["image/svg+xml"] for data in outputs if "image/svg+xml" in data]
    for svg in figures:
        if measured := svg_text(svg):
            size, width, height = measured
            shown.append(size * panel_scale(width, [(0.0, height)]) * SCREEN_SCALE)
        else:
            shown.append(float("inf"))
    for data, style in re.findall(
        r'<img src="data:image/svg\+xml;base64,([^"]+)"[^>]*?(?:style="([^"]*)")?>', html_text
    ):
        measured = svg_text(base64.b64decode(data).decode())
        if measured is None:
            shown.append(float("inf"))
            continue
        size, width, height = measured
        if sized := re.search(r"width:([\d.]+)px", style):
            shown.append(size / width * float(sized.group(1)) * SCREEN_SCALE)
        else:
            most = min(FIGURE_WIDTH, width * 4 / 3)
            shown.append(size * panel_scale(width, [(0.0, height)], most) * SCREEN_SCALE)
    return shown


# --------------------------------------------------------------------------------------------------
# The deck: which cell goes where


class Deck:
    def __init__(self, answers: dict[str, str] | None = None):
        self.cells, self.used = [], SLIDE_BUDGET
        self.title = ""  # the section the deck is in: the title of a page that starts without one
        self.answers = answers or {}  # what to leave out (ANSWERS[chapter]), with --exclude-answers
        self.dropping = False  # inside a section left out
        self.left_out: list[str] = []  # what was left out, for the tool's output
        self.said: list[str] = []  # the same, as the deck's slide says it (no answer's words)
        self.measured: set[int] = set()  # the exercises the course titles "measure, then check"

    def add(self, cell, *, kind: str, lines: int) -> None:
        """kind: "slide", "subslide" (a new page), "-" (same page if it fits), "notes"."""
        if kind == "-" and self.used + lines > SLIDE_BUDGET:
            kind = "subslide"
        titled = cell.cell_type == "markdown" and cell.source.lstrip().startswith("#")
        if kind in ("slide", "subslide") and not titled and self.title:
            # every page has a title: a figure, an equation or a table that starts a page gets
            # its section's
            heading = nbformat.v4.new_markdown_cell(f"### {self.title}")
            heading.metadata["slideshow"] = {"slide_type": kind}
            self.cells.append(heading)
            self.used, kind = 0, "-"
        if kind in ("slide", "subslide"):
            self.used = 0
        if kind != "notes":
            self.used += lines
        cell.metadata["slideshow"] = {"slide_type": kind}
        self.cells.append(cell)

    def markdown(self, text: str, kind: str) -> None:
        if text.strip():
            self.add(nbformat.v4.new_markdown_cell(text), kind=kind, lines=lines_of(text))

    def notes(self, parts: list[str]) -> None:
        if parts:
            self.add(nbformat.v4.new_markdown_cell("\n\n".join(parts)), kind="notes", lines=0)


_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def static_picture(outputs, widget_state: dict) -> str | None:
    """The first PNG (base64) an interactive figure's outputs hold: in a live figure's HTML (its static
    form) or in the state of the widgets it shows (a slider's picture at its first setting, which the
    build saved in the notebook's widget state), following a box's children; None if there is none."""
    for o in outputs:
        if m := _PNG.search(o.get("data", {}).get("text/html", "")):
            return m.group(1)
    seen, todo = (
        set(),
        [
            o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
            for o in outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        ],
    )
    while todo:
        model = todo.pop(0)
        if model in seen or model not in widget_state:
            continue
        seen.add(model)
        state = widget_state[model].get("state", {})
        for value in state.values():
            if isinstance(value, str) and (m := _PNG.search(value)):
                return m.group(1)
        for child in state.get("children", []):
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                todo.append(child.removeprefix("IPY_MODEL_"))
    return None


def _text(output) -> str:
    if output.output_type == "stream":
        return output.text
    return output.get("data", {}).get("text/plain", "")


SENTENCE_END = r"(?<=[.!?])(?<!\bal\.)(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z*`$(])"
# a question that needs the sentence before it: "... work there?", "What does that say ...?"
DEICTIC = r"\b(?:there|this|that|it|them|these|those)\?$|^\w+ (?:does|do|is|are) (?:this|that|it)\b"
QUESTIONS_SHOWN = 400  # characters of an exercise's questions on the class's slide


# what the class reads is a slide, not the notebook: an aside on where to write ("(a comment in the
# cell below will do)") is left out (lecturer review s34, m6)
NOTEBOOK_ASIDE = re.compile(r"\s*\([^()]*\b(?:cell|comment|checker)s?\b[^()]*\)")
PREDICT, MEASURE = "(predict, then check)", "(measure, then check)"


def measured(chapter: str) -> set[int]:
    """The exercises of ``chapter`` (``12_elmo``) whose checked answers are measurements (its checker
    module's ``MEASURED``, as tools/make_course.py reads it): the course titles them "measure, then
    check" (lecturer review s34, m6)."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    from make_course import _measured

    return _measured(chapter)


def class_question(
    parts: list[str], measurements: set[int] = frozenset(), chapter: str = ""
) -> str | None:
    """An exercise's statement ("**Exercise 2 (implement): NTM sharpening.** After ...") as a question
    for the class: its title and the questions it asks, the sentences that end in "?" in any of its
    paragraphs, as its rubric takes them (lecturer review s23, M6: the slide showed the first
    paragraph's instructions, not "which of the two separates the pairs better?"), else those its
    list asks ("- Predict `same_for_singular`: does it give ...?"). Every statement of the book asks
    one (lecturer review s38: those that asked none end on a question now, in the chapter); one
    that does not gets its first sentence. ``chapter`` (the notebook's name) is not read."""
    if not parts or not (m := re.match(r"\*\*(Exercise \d+[^*]*?)\.?\*\*\s*(.*)", parts[0], re.S)):
        return None
    title = m.group(1)
    number = int(re.match(r"Exercise (\d+)", title).group(1))
    if number in measurements:  # as the course titles it (lecturer review s34, m6)
        title = title.replace(PREDICT, MEASURE)
    paragraphs, listed = [m.group(2)], []
    for part in parts[1:]:
        if part.lstrip().startswith("**Exercise"):
            break  # the next exercise
        if is_list(part):
            listed += re.split(r"\n(?=[-*] |\d+\. )", part.strip())
        elif not part.lstrip().startswith(("-", "```", "|", "<", "#", "1.")):
            paragraphs.append(part)
    asked, first = [], ""
    for paragraph in paragraphs:
        sentences = re.split(SENTENCE_END, NOTEBOOK_ASIDE.sub("", " ".join(paragraph.split())))
        first = first or (sentences[0] if sentences else "")
        for i, x in enumerate(sentences):
            # "(d) **Explain.** ...", "*The questions.* When ...?" (lecturer review s41, m5)
            x = re.sub(r"^(?:\([a-z]\)\s*(?:\*\*[^*]+\*\*\s*)?|\*[A-Z][^*]{0,40}[.:]\*\s+)", "", x)
            if not x.endswith("?") or x.startswith("("):
                continue
            if not asked and i and re.search(DEICTIC, x):
                # "Why does reading the first position work there?": the sentence before says
                # where (lecturer review s13: a question out of its context on the slide); not
                # "Which digit does it get right ...?" (lecturer review s23, M6)
                x = f"{sentences[i - 1]} {x}"
            asked.append(x)
    if not asked:  # the questions a list asks, one an item (chapter 11's exercise 2)
        items = [re.sub(r"^(?:[-*]|\d+\.)\s+", "", " ".join(i.split())) for i in listed]
        for item in items:
            asked += [x for x in re.split(SENTENCE_END, item) if x.endswith("?")][:1]
    title += "" if title.endswith(("?", "!")) else "."  # not "model error?." (s34, m6)
    return f"**{title}** {shortened(' '.join(asked) or first, QUESTIONS_SHOWN)}"


def own_slides_of(chapter: str, folder: Path) -> list[str]:
    """A lecturer's own slides for a chapter: ``<folder>/<chapter>.md``, slides separated by lines
    ``---``, each slide's speaker notes after a line ``Note:``. The file is the lecturer's, outside
    the build's output, so a rebuild keeps it; the deck shows its slides before the questions."""
    path = folder / f"{chapter}.md"
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    return [part.strip() for part in re.split(r"^---\s*$", text, flags=re.M) if part.strip()]


def sections(parts: list[str]) -> list[list[str]]:
    """A markdown cell's blocks, cut before each heading of level 1 to 3."""
    out = []
    for part in parts:
        if not out or re.match(r"#{1,3} ", part):
            out.append([])
        out[-1].append(part)
    return out


def section_slides(d: "Deck", parts: list[str], level: int) -> None:
    """A section's heading with its first paragraph (or its list's first items) on a slide, its
    display equations, tables and short lists on the slide or the next, the rest of its prose in
    the speaker notes."""
    head = parts[0]
    if not head.startswith("#"):  # a cell that continues a section: its first block is prose
        head = _without_answers(d, head)
    parts = [head] + [_without_answers(d, p) for p in parts[1:]]
    if level and not head.startswith("#### "):
        d.title = re.sub(r"\s*¶\s*$", "", head.lstrip("# ")).strip()
        rest = parts[1:]
        prose = next((i for i, p in enumerate(rest[:2]) if is_prose(p)), None)
        shown = [head]
        notes = []
        if rest and is_list(rest[0]):
            # a summary's list, also when a closing sentence follows it (reader s36, T1); the
            # whole list goes to the notes
            shown.append(first_items(rest[0], budget=LIST_BUDGET - lines_of(head)))
            notes, rest = rest[:1], rest[1:]
        elif prose is not None:
            following = rest[prose + 1] if prose + 1 < len(rest) else ""
            first = without_loose_end(rest[prose], following)
            if first:
                shown.append(first)
            if first.endswith(":") and any(
                is_kind(following) for is_kind in (is_list, is_math, is_table)
            ):
                shown.append(following)  # "three kinds of input:" and the three, on one page
        d.markdown("\n\n".join(shown), "slide" if level <= 2 else "subslide")
        rest = [p for p in rest if p not in shown[1:]]
    else:
        rest, notes = parts, []
    for part in rest:
        # an equation, a table or a short list of the prose is shown (reader s36, T1: chapter 10's
        # table comparing BPE and WordPiece reached only the notes); the rest of the prose is not
        if is_math(part) or is_table(part) or is_short_list(part):
            lead = lead_in(notes[-1]) if is_math(part) and notes else ""
            d.notes(notes)
            notes = []
            d.markdown(f"{lead}\n\n{part}" if lead else part, "-")
        else:
            notes.append(part)
    d.notes(notes)


def _without_answers(d: "Deck", block: str) -> str:
    """A list without its items that answer a graded exercise (keys of ``d.answers`` that begin
    with "- ", the item's opening words: a summary's bullet), and prose without its passages that do
    (keys "<opening words> ... <closing words>"), on the slide and in the notes."""
    for key in (k for k in d.answers if PASSAGE in k):
        opening, closing = key.split(PASSAGE)
        words = [r"\s+".join(map(re.escape, part.split())) for part in (opening, closing)]
        found = re.search(rf"{words[0]}.*?{words[1]}\s*", block, re.S)
        if found:
            d.left_out.append(f"{opening}{PASSAGE.rstrip()} ({d.answers[key]})")
            d.said.append(f"a passage of the prose, which answers {d.answers[key]}")
            block = (block[: found.start()] + block[found.end() :]).strip()
    drop = [k for k in d.answers if k.startswith("- ")]
    if not drop or not is_list(block):
        return block
    items = re.split(r"\n(?=[-*] |\d+\. )", block.strip())
    kept = []
    for item in items:
        key = next((k for k in drop if item.startswith(k)), None)
        if key:
            d.left_out.append(f"{key.removeprefix('- ')} ({d.answers[key]})")
            d.said.append(f"a point of a list, which answers {d.answers[key]}")
        else:
            kept.append(item)
    return "\n".join(kept)


# lines, as lines_of counts them, that a section's opening slide of a list (a summary: its heading and
# its first items) holds. Plain list text fills less of a line than lines_of's 70 characters: in
# headless Chromium at 1280x720 the summaries of chapters 6 to 18 measured 16 lines 524 to 608 px of
# Reveal's 800, 17 lines 649 and 691, 19 lines 649, 20 and 21 lines 733 to 774; chapter 17's, 25 lines,
# 900 px, ran below the slide (lecturer review s39, m1)
LIST_BUDGET = 21


def first_items(block: str, n: int = 5, limit: int = 160, budget: int = LIST_BUDGET - 1) -> str:
    """A list's first ``n`` items, each cut to its first sentences (about ``limit`` characters),
    never after a colon: an item does not end on what it announces (reader s36, T1); and no more
    items than fill ``budget`` lines as :func:`lines_of` counts them (wrapped, 70 characters a line),
    at least the first, cut at a word if it alone is longer. A first sentence can be far longer than
    ``limit``: chapter 17's *Summary* showed five items of 1,500 characters, 25 lines, and ran below
    the slide at 1280x720 (774 px of 688; lecturer review s39, m1). The slide's heading fills the
    rest of :data:`LIST_BUDGET`."""
    items = re.split(r"\n(?=[-*] |\d+\. )", block.strip())
    shown = []
    for item in items[:n]:
        line = item[:2] + shortened(" ".join(item[2:].split()), limit, ends=".!?")
        if shown and lines_of("\n".join(shown + [line])) > budget:
            break
        if not shown and lines_of(line) > budget:  # one item longer than a slide: cut at a word
            line = item[:2] + caption_line(line[2:], budget * 70 - 70)
        shown.append(line)
    return "\n".join(shown)


def deck(
    nb, cite: dict, chapter_url: str, own_slides: list[str] = (), answers: dict | None = None
) -> nbformat.NotebookNode:
    """The slide notebook of an executed chapter (see the module's docstring for the rules).
    ``answers`` (the chapter's :data:`ANSWERS`, with ``--exclude-answers``): the figures, tables
    and sections that answer a graded exercise, left out; a section left out keeps a title slide
    that says so. What was left out is in the deck's metadata ``left_out``."""
    d = Deck(answers)
    d.chapter = Path(chapter_url).stem  # "../notebooks/12_elmo.html"
    d.measured = measured(d.chapter)
    skipping = False
    questions = []  # the exercises' questions, for the class
    widget_state = (
        nb.metadata.get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "remove-cell" in tags or "solution" in tags:
            continue
        if cell.cell_type == "markdown":
            skipping = markdown_slides(d, cell, cite, skipping, questions)
        elif not skipping and not d.dropping and cell.cell_type == "code":
            if cell.get("id") in d.answers:
                d.left_out.append(f"{cell.get('id')} ({d.answers[cell.get('id')]})")
                d.said.append(f"a figure or table, which answers {d.answers[cell.get('id')]}")
                continue
            if not output_slides(d, cell, cite, chapter_url, widget_state):
                code_slide(d, cell)
    closing_slides(d, own_slides, questions, chapter_url)
    if d.said:  # a slide that says what was left out and why, in every chapter's deck (s32, m10)
        said = nbformat.v4.new_markdown_cell(
            LEFT_OUT_SLIDE.format(items="\n".join(f"- {item}" for item in d.said))
        )
        said.metadata["slideshow"] = {"slide_type": "slide"}
        starts = [
            i for i, c in enumerate(d.cells) if c.metadata["slideshow"]["slide_type"] == "slide"
        ]
        d.cells.insert(starts[1] if len(starts) > 1 else len(d.cells), said)
    for number, cell in enumerate(
        d.cells
    ):  # fixed ids: the same deck gives the same HTML every build
        cell.id = f"slide-cell-{number}"
    slides = nbformat.v4.new_notebook(cells=d.cells)
    slides.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    title = next(
        (c.source.splitlines()[0].lstrip("# ") for c in nb.cells if c.cell_type == "markdown"), ""
    )
    slides.metadata["title"] = title
    if d.left_out:
        slides.metadata["left_out"] = d.left_out
    return slides


def markdown_slides(d: Deck, cell, cite: dict, skipping: bool, questions: list) -> bool:
    """A markdown cell's slides, section by section (a cell may hold several: "## Summary ...
    ## Exercises"); a skipped section's questions go to ``questions``. Returns whether the section
    it ends in is skipped."""
    for parts in sections(blocks(plain_markdown(cell.source, cite))):
        head = parts[0]
        level = len(head) - len(head.lstrip("#")) if head.startswith("#") else 0
        if level in (1, 2):
            skipping = head.lstrip("# ").lower().startswith(SKIPPED_SECTIONS)
            d.dropping = head in d.answers
            if d.dropping:  # a section that answers a graded exercise: its title only, and why
                exercise = d.answers[head]
                d.left_out.append(f"{head.lstrip('# ')} ({exercise})")
                d.said.append(f"the section *{head.lstrip('# ')}*, which answers {exercise}")
                d.markdown(f"{head}\n\n{LEFT_OUT.format(exercise=exercise)}", "slide")
        if skipping:
            if q := class_question(parts, d.measured, d.chapter):
                questions.append(q)
            continue
        if d.dropping:
            continue
        section_slides(d, parts, level)
    return skipping


def output_slides(d: Deck, cell, cite: dict, chapter_url: str, widget_state: dict) -> bool:
    """A code cell's figures (with the chapter's caption), short tables and the first picture of an
    interactive figure, each on a page of its own. Returns whether the cell shows any of them (its
    code then stays in the chapter)."""
    outputs = cell.get("outputs", [])
    figures = [o for o in outputs if any(k in o.get("data", {}) for k in IMAGES)]
    tables = [o for o in outputs if "text/markdown" in o.get("data", {})]
    live = [o for o in outputs if "text/html" in o.get("data", {}) and not figures and not tables]
    widgets = [
        o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
    alt = " ".join(re.sub(r"[*_`$\\{}]", "", caption or "A figure of the chapter").split())
    for o in figures:
        image = {k: v for k, v in o.data.items() if k in IMAGES}
        svg, png = image.get("image/svg+xml"), image.get("image/png")
        if svg and (larger := readable(svg, png and base64.b64decode(png), alt=alt)):
            image = {"text/html": larger}  # a figure stacked for a phone: its panels side by side
        out = nbformat.v4.new_output("display_data", data=image)
        fig = nbformat.v4.new_code_cell("", outputs=[out], metadata={"tags": ["remove-input"]})
        d.add(fig, kind="subslide", lines=SLIDE_BUDGET)  # what follows starts a new page
    if figures and caption:  # the chapter's caption, under its figure: one short line
        text = plain_markdown(caption, cite)
        line = caption_line(text)
        d.add(nbformat.v4.new_markdown_cell(f"<small>{line}</small>"), kind="-", lines=0)
        if line != text:  # the whole caption in the speaker notes
            d.notes([f"Caption: {text}"])
    for o in tables:
        text = o.data["text/markdown"]
        if picture := re.match(r"\s*(<img [^>]*>)\s*(.*)", text, re.S):
            markdown_picture(d, *picture.groups(), png=static_picture([o], widget_state))
            continue
        # a short table gets a slide; a piece of the library's source (lib.viz.show_source, a
        # fenced code block) stays in the chapter, as longer code does
        if text.count("\n") <= MAX_TABLE_LINES and "```" not in text:
            d.markdown(plain_markdown(text, cite), "subslide")
    if (live or widgets) and not figures and not tables:
        # an interactive figure: its picture at the first setting, with where it is live; one
        # that has no picture (a progress bar, bertviz's views, drawn by JavaScript) is left to
        # the chapter
        picture = static_picture(live + widgets, widget_state)
        if picture:
            out = nbformat.v4.new_output("display_data", data={"image/png": picture})
            fig = nbformat.v4.new_code_cell("", outputs=[out], metadata={"tags": ["remove-input"]})
            d.add(fig, kind="subslide", lines=SLIDE_BUDGET)
            d.add(
                nbformat.v4.new_markdown_cell(
                    f"<small>Interactive on [the chapter's page]({chapter_url}): "
                    "this is its first setting.</small>"
                ),
                kind="-",
                lines=0,
            )
    return bool(figures or tables or live or widgets)


def markdown_picture(d: Deck, img: str, rest: str, png: str | None = None) -> None:
    """A picture a cell shows as Markdown (an interactive figure's static form, lib.viz.interactive:
    the picture, the notes under it, a line saying where it is live) on a page of its own: the
    picture, capped in height as a figure is, and its last paragraph as one short caption line; the
    rest of the text goes to the speaker notes. Shown whole, chapter 18's *Attention in tiles* ran
    below the slide at 1280x720 (lecturer review s38, m2). A picture whose text it would show under
    :data:`SLIDE_TEXT_PX` is shown larger, its panels side by side (:func:`readable`; ``png``, the
    same picture from the widget's state, base64, says where they are)."""
    svg = re.match(r'<img src="data:image/svg\+xml;base64,([^"]+)"', img)
    if svg:
        svg = base64.b64decode(svg.group(1)).decode()
        alt = re.search(r'\salt="([^"]*)"', img)
        most = min(FIGURE_WIDTH, svg_text(svg)[1] * 4 / 3) if svg_text(svg) else FIGURE_WIDTH
        png = base64.b64decode(png) if png else None
        img = readable(svg, png, most, html.unescape(alt.group(1)) if alt else "") or img
    d.add(nbformat.v4.new_markdown_cell(img), kind="subslide", lines=SLIDE_BUDGET)
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", rest) if p.strip()]
    if not paragraphs:
        return
    last = paragraphs[-1].strip("*_ ")
    line = caption_line(last)
    d.add(nbformat.v4.new_markdown_cell(f"<small>{line}</small>"), kind="-", lines=0)
    d.notes(paragraphs[:-1] + ([last] if line != last else []))


def code_slide(d: Deck, cell) -> None:
    """A short code cell that prints a short result, shown with it (not a hidden cell, not one of
    assertions only)."""
    code = cell.source.strip()
    printed = "".join(_text(o) for o in cell.get("outputs", [])).rstrip()
    hidden = {"hide-input", "hide-cell", "remove-input", "hide-output", "remove-output"} & set(
        cell.metadata.get("tags", [])
    )
    short = 0 < code.count("\n") + 1 <= MAX_CODE_LINES and all(
        len(ln) <= 90 for ln in code.splitlines()
    )
    if hidden or not short or not printed or printed.count("\n") + 1 > MAX_OUTPUT_LINES:
        return
    if all(ln.lstrip().startswith(("assert", "#")) for ln in code.splitlines()):
        return
    stream = nbformat.v4.new_output("stream", name="stdout", text=printed + "\n")
    shown = nbformat.v4.new_code_cell(code, outputs=[stream])
    d.add(shown, kind="-", lines=code.count("\n") + printed.count("\n") + 3)


def closing_slides(d: Deck, own_slides: list[str], questions: list[str], chapter_url: str) -> None:
    """The deck's last slides: the chapter's own (``slides/<chapter>.md``), the questions for the
    class, the licence."""
    for text in own_slides:
        d.title = ""
        body, _, notes = text.partition("\nNote:")
        d.markdown(body.strip(), "slide")
        d.notes([notes.strip()] if notes.strip() else [])
    if questions:
        d.title = ""
        d.markdown(
            "## Questions for the class\n\n"
            + "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1))
            + f"\n\n<small>The exercises, with checkers, are in [the chapter]({chapter_url}).</small>",
            "slide",
        )
    d.markdown(f"## Licence\n\n{licence()}", "slide")


# --------------------------------------------------------------------------------------------------
# Writing the decks into the site

LICENCE_SHORT = (
    'Text and figures <a rel="license" href="https://creativecommons.org/licenses/by/4.0/">'
    "CC BY 4.0</a>, code MIT"
)


def licence(config: Path = ROOT / "_config.yml") -> str:
    """The licence line of the site's footer (``html.extra_footer`` of ``_config.yml``), as HTML."""
    import yaml

    footer = yaml.safe_load(config.read_text(encoding="utf-8"))["html"]["extra_footer"]
    inner = re.sub(r"^\s*<p[^>]*>|</p>\s*$", "", footer.strip())
    if "CC BY 4.0" not in inner:
        raise ValueError(f"the site footer in {config} states no CC BY 4.0 licence: {footer!r}")
    return " ".join(inner.split())


def executed_chapters(cache_dir: Path, prefixes=()) -> list[tuple[str, nbformat.NotebookNode]]:
    """[(chapter, executed notebook)]: each chapter with the outputs of its last build, from the
    execution cache of Jupyter Book (a chapter edited since, or never built, is an error)."""
    from jupyter_cache import get_cache

    if not cache_dir.is_dir():
        raise FileNotFoundError(
            f"no execution cache at {cache_dir}: build the book first (make book)"
        )
    cache = get_cache(str(cache_dir))
    out = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if prefixes and not any(path.name.startswith(x) for x in prefixes):
            continue
        try:
            _, nb = cache.merge_match_into_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            raise FileNotFoundError(
                f"{path.name} has no executed version in the build's cache (it failed to run, or changed since the last build): run make book"
            ) from None
        out.append((path.stem, nb))
    return out


OWN_SLIDES = ROOT / "slides"  # a lecturer's own slides, <chapter>.md (own_slides_of)


def write_decks(
    site: Path, cache_dir: Path, prefixes=(), own: Path = OWN_SLIDES, exclude_answers: bool = False
) -> list[Path]:
    """One deck per executed chapter: ``site/slides/<chapter>.html``. Returns the decks written.
    ``exclude_answers``: without the slides that answer a graded exercise (:data:`ANSWERS`)."""
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    chapters = executed_chapters(cache_dir, prefixes)
    config = Config()
    config.SlidesExporter.extra_template_basedirs = [str(TEMPLATES)]
    config.SlidesExporter.template_name = "book_reveal"
    config.SlidesExporter.reveal_url_prefix = "../_static/slides"
    config.SlidesExporter.reveal_theme = "white"
    config.SlidesExporter.exclude_input_prompt = True
    config.SlidesExporter.exclude_output_prompt = True
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    exporter = SlidesExporter(config=config)
    cite = citations()
    out = site / "slides"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter, executed in chapters:
        chapter_url = f"../notebooks/{chapter}.html"
        answers = ANSWERS.get(chapter) if exclude_answers else None
        nb = deck(executed, cite, chapter_url, own_slides_of(chapter, own), answers)
        for item in nb.metadata.get("left_out", []):
            print(f"{chapter}: left out {item}")
        resources = {
            "book": {
                "mathjax_url": "../_static/vendor/mathjax/tex-chtml.js",
                "chapter_url": chapter_url,
                "licence": LICENCE_SHORT,
            },
            "metadata": {"name": nb.metadata["title"]},
        }
        html, _ = exporter.from_notebook_node(nb, resources=resources)
        target = out / f"{chapter}.html"
        target.write_text(html)
        written.append(target)
    return written


# what a deck links beside it (``../_static/slides/``): reveal.js's style sheets and the bundle
SITE_ASSETS = ("_static/slides/dist/reveal.css", "_static/slides/slides.js")
# the maths: the site's own MathJax, which every deck loads (``mathjax_url`` above)
MATHS_ASSET = "_static/vendor/mathjax/tex-chtml.js"


def missing_assets(site: Path) -> str | None:
    """The warning for decks written into a ``site`` without the build's ``_static/slides``
    (lecturer review s31, M10: in a clone that never built the site, a deck showed as one unstyled
    page with its speaker notes inline) or without its ``_static/vendor/`` MathJax (lecturer review
    s39, m3: the decks showed their maths as raw TeX, with no warning), else None."""
    warnings = []
    missing = [a for a in SITE_ASSETS if not (site / a).exists()]
    if missing:
        warnings.append(
            f"warning: {site / missing[0]} is missing: the decks in {site / 'slides'} link"
            " ../_static/slides/ (reveal.js, its styles and the deck's script), and without them"
            " show as one unstyled page with the speaker notes inline. Build the site once (make"
            " book), or pass --site a built site's folder (one with _static/slides/ and"
            " _static/vendor/) to write the decks into it."
        )
    if not (site / MATHS_ASSET).exists():
        warnings.append(
            f"warning: {site / MATHS_ASSET} is missing: the decks in {site / 'slides'} load their"
            " maths from ../_static/vendor/mathjax/, and without it show it as raw TeX. Copy a"
            " built site's _static/vendor/ beside _static/slides/ (make book writes both)."
        )
    return "\n".join(warnings) or None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="file-name prefixes (default: every chapter)")
    parser.add_argument(
        "--site",
        type=Path,
        default=ROOT / "_build" / "html",
        help="the built site the decks go into (slides/), beside its _static/slides/ (default:"
        " _build/html)",
    )
    parser.add_argument("--cache", type=Path, default=ROOT / "_build" / ".jupyter_cache")
    parser.add_argument(
        "--exclude-answers",
        action="store_true",
        help="leave out the figures, tables and sections that answer a graded exercise (the "
        "teachers' page lists them; make slides EXCLUDE_ANSWERS=1)",
    )
    args = parser.parse_args(argv)
    decks = write_decks(args.site, args.cache, args.chapters, exclude_answers=args.exclude_answers)
    for deck_path in decks:
        print(f"{deck_path.relative_to(args.site)}: {deck_path.stat().st_size // 1024} KB")
    if decks and (warning := missing_assets(args.site)):
        print(warning, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
