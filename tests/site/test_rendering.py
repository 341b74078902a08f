"""What the chapters print renders as it should on the site: no raw Markdown left in the outputs, no warnings.

Chapters print tables with ``display(Markdown(...))``. myst-nb renders such outputs as CommonMark unless
told otherwise (``nb_render_markdown_format``), and CommonMark has no tables and no ``$math$``: the page
then shows a paragraph of pipes, "| tensor | shape | |---|---|". This test reads every built chapter.
"""

from __future__ import annotations

import re

import pytest

from .conftest import site_pages

pytestmark = pytest.mark.site

RAW_TABLE = re.compile(r"\|\s*:?-{3,}:?\s*\|")  # a Markdown table's separator row, |---|
TAG = re.compile(r"<[^>]+>")


def _output_text(html: str) -> str:
    # The text of the cell outputs: myst-nb writes each cell as <div class="cell ..."> holding a
    # <div class="cell_input ..."> (the code) and then a <div class="cell_output ...">.
    cells = re.split(r'<div class="cell[ "]', html)[1:]
    return "\n".join(
        TAG.sub(" ", c.split('<div class="cell_output', 1)[1])
        for c in cells
        if '<div class="cell_output' in c
    )


def test_markdown_tables_in_outputs_are_rendered(site):
    chapters = [p for p in site_pages(site) if "notebooks" in p.parts]
    assert chapters, "no chapter pages in the built site"
    raw = {
        p.name: m.group(0)
        for p in chapters
        if (m := RAW_TABLE.search(_output_text(p.read_text(encoding="utf-8"))))
    }
    assert not raw, f"raw Markdown tables in the outputs of {sorted(raw)}"
    tables = sum(p.read_text(encoding="utf-8").count("<table") for p in chapters)
    assert tables > 10, f"only {tables} tables in all chapters: are the Markdown outputs rendered?"


def test_every_page_with_widgets_carries_their_state(site):
    # A widget output is only a reference to a model; without the page's widget-state script the static
    # site shows nothing where the interactive figure should be.
    pages = [
        p
        for p in site_pages(site)
        if "application/vnd.jupyter.widget-view+json" in p.read_text(encoding="utf-8")
    ]
    assert len(pages) >= 5, f"only {len(pages)} pages with widgets: {pages}"
    missing = [
        p.name
        for p in pages
        if 'type="application/vnd.jupyter.widget-state+json"' not in p.read_text(encoding="utf-8")
    ]
    assert not missing, f"widget outputs without their state on {missing}"


# The book's floor for a plot's text on a phone: 11 CSS px, as for every static figure
# (tests/site/test_chapters_executed.py); a slider's pictures were drawn at 6-8 px (reader s32, chapter 8),
# and readers still called 9-10 px too small
SLIDER_TEXT_PX = 11.0
PHONE_PX = re.compile(r'data-phone-px=\\*"([\d.]+)')


def test_every_slider_picture_reads_on_a_phone(site):
    # viz.interactive writes each picture's smallest text on a 360 px phone into its <img>; the pictures
    # live in the page's widget state
    small, count = {}, 0
    for page in site_pages(site):
        values = [float(v) for v in PHONE_PX.findall(page.read_text(encoding="utf-8"))]
        count += len(values)
        if values and min(values) < SLIDER_TEXT_PX:
            small[page.stem] = (min(values), sum(v < SLIDER_TEXT_PX for v in values), len(values))
    assert count >= 50, f"only {count} slider pictures carry data-phone-px"
    assert not small, (
        f"slider pictures under {SLIDER_TEXT_PX} CSS px on a phone (smallest, how many, of): {small}"
    )


# not errors: chapters print the ValueError of bad input on purpose
WARNING = re.compile(r"\b\w*Warning: .{0,80}")


def test_no_warning_is_printed_in_the_outputs(site):
    # A reader should not see "UserWarning: The figure layout has changed to tight" (plt.tight_layout()
    # under the constrained layout of lib.viz.set_style) or any other warning a chapter lets through.
    chapters = [p for p in site_pages(site) if "notebooks" in p.parts]
    found = {
        p.name: m.group(0)
        for p in chapters
        if (m := WARNING.search(_output_text(p.read_text(encoding="utf-8"))))
    }
    assert not found, f"warnings printed in the outputs: {found}"
