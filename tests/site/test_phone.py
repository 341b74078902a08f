"""Every page and every live figure on a phone (issue 25): Chromium's mobile emulation at 360 x 740 and
412 x 915 CSS pixels (touch, device scale 2).

On every page: the page itself does not scroll sideways, and no visible element reaches past the screen's
edges unless it lies in a box that scrolls sideways and says so (book/_static/reader.js gives such a
box the class ``book-scrolls``, whose "scroll sideways" line book.css draws; the box itself must fit the
screen). Elements the theme keeps out of view (the closed navigation drawer, visually hidden text) are not
what a reader sees and are skipped. On every page with live figures: each figure loads its model,
computes, and everything it draws lies within the screen or in such a box.
"""

from __future__ import annotations

import time

import pytest

from .conftest import site_pages
from .test_browser import open_page, wait_until

pytestmark = pytest.mark.browser


# Elements wider than the screen, not inside a marked scroll box that fits it. Skipped: elements with no
# box, invisible ones, and those clipped away by an ancestor that hides its overflow (off-canvas drawers).
OVERFLOWING = """
const W = document.documentElement.clientWidth;
if (window.bookScrollCues) window.bookScrollCues();
const fits = r => r.left >= -1 && r.right <= W + 1;
function hiddenOrClipped(el) {
  for (let p = el; p && p !== document.documentElement; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') return true;
    if (p.getAttribute('aria-hidden') === 'true' && p.closest('nav, aside, dialog, header')) return true;
    if (p !== el && (s.overflowX === 'hidden' || s.overflowX === 'clip') && fits(p.getBoundingClientRect())) {
      return !p.classList.contains('book-scrolls');
    }
    if (s.position === 'fixed' && !fits(p.getBoundingClientRect()) && p.getBoundingClientRect().right <= 0) return true;
  }
  return false;
}
function describe(el) {
  const cls = (el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className) || '';
  const r = el.getBoundingClientRect();
  return `${el.tagName.toLowerCase()}.${String(cls).split(' ').slice(0, 2).join('.')} `
    + `[${Math.round(r.left)}, ${Math.round(r.right)}] ${(el.textContent || '').trim().slice(0, 50)}`;
}
const bad = [];
for (const el of document.body.getElementsByTagName('*')) {
  const r = el.getBoundingClientRect();
  if (!r.width || !r.height || fits(r)) continue;
  if (hiddenOrClipped(el)) continue;
  const box = el.parentElement && el.parentElement.closest('.book-scrolls');
  if (box && fits(box.getBoundingClientRect())) continue;
  // report only the outermost offender of a subtree
  if (el.parentElement && bad.some(b => b.el.contains(el))) continue;
  bad.push({el, text: describe(el)});
}
// cues drawn with no height of their own (inside a MathJax equation, whose line height is 0), which
// the box's content then covers
const flat = [...document.querySelectorAll('.book-scrolls')]
  .filter(b => parseFloat(getComputedStyle(b, '::before').height) < 8).map(describe);
return {page: document.documentElement.scrollWidth, width: W, bad: bad.slice(0, 12).map(b => b.text),
        n: bad.length, cues: document.querySelectorAll('.book-scrolls').length, flat: flat.slice(0, 12)};
"""


# The figures of a page: each picture of a cell's output, its own width, the width it is shown at, its
# cell output's width (the column) and whether it lies in the box of book/_static/reader.js that scrolls.
FIGURES = """
return [...document.querySelectorAll('main .cell_output img')]
  .filter(img => img.getBoundingClientRect().width > 0)
  .map(img => ({natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
                column: img.closest('.cell_output').clientWidth,
                boxed: img.parentElement.classList.contains('book-figure-box'),
                captioned: img.parentElement.tagName === 'FIGURE',
                alt: (img.alt || '').slice(0, 40)}));
"""


CUES_DRAWN = (
    "!document.querySelector('script[src*=\"reader.js\"]')"
    " || document.documentElement.dataset.scrollCues === 'ready'"
)


@pytest.fixture(scope="module")
def layouts(site, server, browser, phone):
    seen = {}
    for page in site_pages(site):
        rel = page.relative_to(site).as_posix()
        open_page(browser, f"{server}/{rel}")
        # book/_static/reader.js marks its scroll cues drawn; pages without it (the slides) have none
        assert wait_until(browser, CUES_DRAWN, timeout=10), (
            f"{rel}: reader.js never drew its scroll cues"
        )
        seen[rel] = browser.execute_script(OVERFLOWING)
        seen[rel]["figures"] = browser.execute_script(FIGURES)
    return phone, seen


def test_the_emulation_is_a_phone(layouts):
    (width, _), seen = layouts
    wider = {p: i["width"] for p, i in seen.items() if i["width"] > width}
    assert not wider, f"pages laid out wider than the {width} px screen: {wider}"


def test_no_page_scrolls_sideways(layouts):
    (width, height), seen = layouts
    bad = {p: i["page"] for p, i in seen.items() if i["page"] > i["width"] + 1}
    assert not bad, f"at {width}x{height} these pages are wider than the screen: {bad}"


def test_nothing_reaches_past_the_screen_outside_a_marked_scroll_box(layouts):
    (width, height), seen = layouts
    bad = {p: i["bad"] for p, i in seen.items() if i["bad"]}
    assert not bad, f"at {width}x{height}, elements past the screen's edge: {bad}"
    # the chapters' wide equations and code do scroll in their boxes, with the cue
    assert sum(i["cues"] for i in seen.values()) > 10


def test_every_scroll_cue_has_a_line_of_its_own(layouts):
    """The "scroll sideways" cue is a line above the box's content. Inside a MathJax equation, whose
    style sets line-height 0, a cue without its own line height had no height: the top of its text was
    cut off and the equation was drawn over the rest (a reader's review, at 360 px)."""
    (width, height), seen = layouts
    flat = {p: i["flat"] for p, i in seen.items() if i["flat"]}
    assert not flat, f"at {width}x{height}, scroll cues without a line of their own: {flat}"


def test_figures_drawn_for_the_desktop_are_shown_twice_as_wide_in_a_box_that_scrolls(layouts):
    """Issue 33, item 3: a figure drawn for the desktop's column (wider than 600 px: 8 to 11 inches at
    100 dpi, with 9 to 10 pt labels) shrunk to a phone's column of about 330 px shows its labels at 4 to
    6 px (tools/figure_text.py measures them). On a phone it is shown at twice the column's width, or its
    own width if less, in a box that scrolls sideways, so its labels are twice as large; a figure drawn
    for narrow screens (600 px or less) fits the column."""
    (width, height), seen = layouts
    wide = narrow = 0
    bad = []
    for page, info in seen.items():
        for f in info["figures"]:
            if f["natural"] > 600:
                wide += 1
                expected = min(f["natural"], 2 * f["column"])
                if not (f["boxed"] and abs(f["shown"] - expected) <= 1):
                    bad.append((page, f))
            else:
                narrow += 1
                if f["shown"] > f["column"] + 1:
                    bad.append((page, f))
                # a captioned figure drawn for phones gets the whole column, not the column less the
                # theme's 8 px padding on each side (book.css): 5% larger text
                if f["captioned"] and f["shown"] < min(f["natural"], f["column"]) - 1:
                    bad.append((page, f))
    assert not bad, f"at {width}x{height}, figures not shown as reader.js shows them: {bad[:8]}"
    # the chapters' figures were seen; most are now drawn for phones (fewer and fewer desktop ones:
    # reader.js's box for those is also tested on a page of its own, test_desktop_figures.py)
    assert wide + narrow > 80 and narrow > 60, (wide, narrow)


# Chapter 14's tables printed by code cells, with the first words of their headings: those that fit a
# 360 px phone's column whole (review p33b: they ran 334 and 459 px wide; the fine-tuning heads' table
# has short headings now, the pretraining arithmetic one column per model; review s32, item 1: the
# parameter table, 457 px, gives the two BERTs in millions and the chapter's model on a line below)
FIT_ON_A_PHONE = ["head (Figure 4)", "pretraining", "part"]

TABLES = """
if (window.bookScrollCues) window.bookScrollCues();
const W = document.documentElement.clientWidth;
return [...document.querySelectorAll('main .cell_output table')].map(t => {
  const r = t.getBoundingClientRect();
  return {head: t.querySelector('th') ? t.querySelector('th').textContent.trim() : '',
          fits: r.left >= -1 && r.right <= W + 1, scrolls: !!t.closest('.book-scrolls')};
});
"""


def test_chapter_14s_tables_fit_a_phone(site, server, browser, phone):
    width, height = phone
    open_page(browser, f"{server}/notebooks/14_bert.html")
    wait_until(browser, CUES_DRAWN, timeout=10)
    tables = {t["head"]: t for t in browser.execute_script(TABLES)}
    for head in FIT_ON_A_PHONE:
        assert head in tables, f"no table headed {head!r}: {list(tables)}"
        t = tables[head]
        assert t["fits"] and not t["scrolls"], f"at {width}x{height}, {head!r}: {t}"


# Chapter 4 on a phone (review s22, item 4, and the round before): the alignment table (334 px in 328
# with its 'argmax on the gold source word'), the beam-search tables (one per
# decoder, short headings: the single table ran 427 px in a 328 px column and cut "outputs that differ
# from greedy" mid-word) and exercise 1's table (436 px in 300, now without the count and Bahdanau's
# columns) fit whole; the display equations fit the column without scrolling (an automatic line
# break broke them badly; review s25 asked for two lines each, set with aligned).
CHAPTER_4_TABLES = ["target words", "beam width", "target words (Luong global)"]

EQUATIONS = """
for (const d of document.querySelectorAll('details')) d.open = true;
if (window.bookScrollCues) window.bookScrollCues();
return [...document.querySelectorAll('main mjx-container[display="true"]')].map(m => {
  const inner = m.querySelector('mjx-math').getBoundingClientRect();
  const box = m.getBoundingClientRect();
  return {tex: m.textContent.slice(0, 40), fits: inner.width <= box.width + 1,
          width: Math.round(inner.width), room: Math.round(box.width),
          scrolls: !!m.closest('.book-scrolls'), nabla: !!m.querySelector('mjx-c.mjx-c2207')};
});
"""

# Review s25, items 2-3: the reviewer's 360 px window had a 15 px scroll bar, which left 313 px of the
# emulated phone's 328 (the alignment table's narrowest layout ran 321 px, the REINFORCE gradient 320 and
# local-p's a_t(s) 350). Each display equation and that table keep 16 px of room to spare.
SPARE = 16
NARROWEST = """
return [...document.querySelectorAll('main table')].map(t => {
  const width = t.style.width;
  t.style.width = 'min-content';  // its narrowest layout: every cell wrapped as far as it goes
  const narrowest = t.getBoundingClientRect().width;
  t.style.width = width;
  return {head: t.querySelector('th') ? t.querySelector('th').textContent.trim() : '',
          narrowest: Math.round(narrowest), room: t.parentElement.clientWidth};
});
"""


def test_chapter_4s_tables_and_reinforce_equations_fit_a_phone(site, server, browser, phone):
    width, height = phone
    open_page(browser, f"{server}/notebooks/04_bahdanau_and_luong.html")
    wait_until(browser, CUES_DRAWN, timeout=10)
    equations = browser.execute_script(EQUATIONS)  # opens the folded solutions too
    tables = browser.execute_script(TABLES)
    for head in CHAPTER_4_TABLES:
        found = [t for t in tables if t["head"].startswith(head)]
        assert found, f"no table headed {head!r}: {[t['head'] for t in tables]}"
        assert all(t["fits"] and not t["scrolls"] for t in found), f"at {width}x{height}: {found}"
    assert len([t for t in tables if t["head"].startswith("beam width")]) == 2
    reinforce = [e for e in equations if e["nabla"]]
    assert len(reinforce) == 3, equations
    # review s25, items 2-3: every display equation (local-p's a_t(s), the REINFORCE gradient and the
    # baseline identity on two lines each) fits the column with room to spare, and so does the
    # alignment table at its narrowest
    assert all(e["width"] <= e["room"] - SPARE and not e["scrolls"] for e in equations), (
        f"at {width}x{height}: {equations}"
    )
    alignment = [t for t in browser.execute_script(NARROWEST) if t["head"] == "target words"]
    assert alignment and all(t["narrowest"] <= t["room"] - SPARE for t in alignment), (
        f"at {width}x{height}: {alignment}"
    )


def test_chapter_5s_display_equations_fit_a_phone(site, server, browser, phone):
    """Review s33, item 6: at 360 px the HAN's two-column equations ran 523 px in a 328 px column,
    the deep output layer (eq. 7) 344 and Jensen's bound 428, each scrolling sideways. Stacked, one
    equation per line (the bound on two; eq. 7 as two equations, its sum o_t and then p(y_t), which
    read the same on a desktop: review s37 item M3), each fits with room to spare."""
    width, height = phone
    open_page(browser, f"{server}/notebooks/05_attention_beyond_translation.html")
    wait_until(browser, CUES_DRAWN, timeout=10)
    equations = browser.execute_script(EQUATIONS)
    assert len(equations) >= 4, equations
    assert all(e["width"] <= e["room"] - SPARE and not e["scrolls"] for e in equations), (
        f"at {width}x{height}: {equations}"
    )


# A slider's row at its last state: its elements past the row's own box, or past the screen, and each
# ancestor up to the cell's output that scrolls sideways because of it (a VBox scrolls: a handle 2 px
# past the row gave the figure a scroll bar and its cue, and clipped the row's label on the left).
SLIDER_AT_ITS_END = """
const handle = arguments[0], W = document.documentElement.clientWidth;
const row = handle.closest('.widget-hslider, .jupyter-widget-hslider');
const box = row.getBoundingClientRect();
const past = [...row.querySelectorAll('*')].filter(el => {
  const r = el.getBoundingClientRect();
  return r.width && (r.left < Math.max(box.left, 0) - 1 || r.right > Math.min(box.right, W) + 1);
}).map(el => `${String(el.className).split(' ')[0]} [${Math.round(el.getBoundingClientRect().left)}, `
             + `${Math.round(el.getBoundingClientRect().right)}] in [${Math.round(box.left)}, ${Math.round(box.right)}]`);
const scrolls = [];
for (let p = row; p && !p.classList.contains('cell_output'); p = p.parentElement) {
  if (p.scrollWidth > p.clientWidth + 1) scrolls.push(`${String(p.className).split(' ').slice(0, 3).join('.')} ${p.scrollWidth} > ${p.clientWidth}`);
}
const editable = [...row.querySelectorAll('.widget-readout, .jupyter-widget-readout')].some(r => r.isContentEditable);
return {value: handle.getAttribute('aria-valuetext') || handle.getAttribute('aria-valuenow'), past, scrolls, editable};
"""


def test_every_slider_fits_a_phone_at_its_last_state(site, server, browser, phone):
    """Review ch13_s22, point 7: at 360 px, chapter 13's sampling slider moved to its right end
    ("τ = 2, top-p 0.9") put its handle 2 px past the widget (ipywidgets' track ends half a handle less
    the border before the row's edge, and on a phone the row is the column's whole width): the figure
    scrolled sideways, with its cue, and the label was clipped; chapter 1's Fig. 1.8 at its last state
    too. Every slider of every page, moved to its last state with the arrow key."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    width, height = phone
    pages = [p for p in site_pages(site) if "SliderModel" in p.read_text(encoding="utf-8")]
    assert len(pages) >= 10, [p.name for p in pages]
    bad, seen = [], 0
    for page in pages:
        rel = page.relative_to(site).as_posix()
        open_page(browser, f"{server}/{rel}")
        wait_until(
            browser, "document.querySelectorAll('.noUi-handle[role=slider]').length", timeout=20
        )
        for handle in browser.find_elements(By.CSS_SELECTOR, ".noUi-handle[role=slider]"):
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", handle)
            for _ in range(100):  # to the last state: until a step changes nothing
                before = handle.get_attribute("aria-valuenow")
                handle.send_keys(Keys.ARROW_RIGHT)
                deadline = time.monotonic() + 0.3
                while (
                    handle.get_attribute("aria-valuenow") == before and time.monotonic() < deadline
                ):
                    time.sleep(0.02)
                if handle.get_attribute("aria-valuenow") == before:
                    break
            time.sleep(0.2)  # the figure of the last state drawn
            found = browser.execute_script(SLIDER_AT_ITS_END, handle)
            seen += 1
            # its readout is read-only (review s39, ch. 16: typing there changed nothing else)
            if found["past"] or found["scrolls"] or found["editable"]:
                bad.append((rel, found))
    assert seen >= 10, seen
    assert not bad, (
        f"at {width}x{height}, sliders past their row, or with an editable readout, at their "
        f"last state: {bad}"
    )


# Chapter 1 on a phone (review s24, item 7): the names in the table of tensors' shapes stay whole. Code
# in running text may break anywhere on a phone (book.css), but a name that a table cell broke
# (`.src_le` / `ngths`, `state['` / `h']`) is harder to read and to copy, and reads as two tokens. Each
# code element of the table lies on one line, and the table fits the screen or scrolls in its own box.
NAMES_IN_TABLES = """
if (window.bookScrollCues) window.bookScrollCues();
const W = document.documentElement.clientWidth;
const table = [...document.querySelectorAll('main table')]
  .find(t => t.querySelector('th') && t.querySelector('th').textContent.trim() === 'tensor');
if (!table) return null;
const r = table.getBoundingClientRect();
const box = table.closest('.book-scrolls');
const b = box ? box.getBoundingClientRect() : r;
return {fits: b.left >= -1 && b.right <= W + 1, scrolls: !!box,
        broken: [...table.querySelectorAll('td code')]
          .filter(c => c.getClientRects().length > 1).map(c => c.textContent)};
"""


def test_chapter_1s_names_in_tables_stay_whole_on_a_phone(site, server, browser, phone):
    width, height = phone
    open_page(browser, f"{server}/notebooks/01_seq2seq_to_attention.html")
    wait_until(browser, CUES_DRAWN, timeout=10)
    table = browser.execute_script(NAMES_IN_TABLES)
    assert table is not None, "no table headed 'tensor' in chapter 1"
    assert not table["broken"], f"at {width}x{height}, names broken across lines: {table['broken']}"
    assert table["fits"], (
        f"at {width}x{height}, the table (or its scroll box) is wider than the screen"
    )
