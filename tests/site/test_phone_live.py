"""Every live figure on a phone (issue 25), at the sizes of test_phone.py: each figure loads its model,
computes, and everything it draws lies within the screen or in a box that scrolls sideways and says so.
Each test has a Chromium of its own (conftest's `fresh_browser`): one tab that loaded page after page
of live figures crashed in a CI run. A file of its own so that `make test`'s workers can run it beside
the page layouts of test_phone.py.
"""

from __future__ import annotations

import pytest

from .conftest import PHONES, emulate
from .test_browser import open_page, wait_until

pytestmark = pytest.mark.browser


LIVE_PAGES = [
    "notebooks/03_scoring_functions.html",
    "notebooks/04_bahdanau_and_luong.html",
    "notebooks/06_self_attention.html",
    "notebooks/08_positional_encoding.html",
    "notebooks/13_gpt.html",
    "notebooks/15_inside_a_pretrained_model.html",
]

START_ALL = """
for (const root of document.querySelectorAll('.book-live[data-live]')) {
  const load = root.querySelector('.book-live-button');
  if (load) load.click();
}
return document.querySelectorAll('.book-live[data-live]').length;
"""

STATES = "Array.from(document.querySelectorAll('.book-live[data-live]')).map(r => r.dataset.state)"

COMPUTE_REST = """
for (const root of document.querySelectorAll('.book-live[data-live]')) {
  if (root.dataset.state !== 'computed') {
    const b = root.querySelector('.book-live-compute');
    if (b && !b.disabled) b.click();
  }
}
"""

LIVE_GEOMETRY = """
const W = document.documentElement.clientWidth;
if (window.bookScrollCues) window.bookScrollCues();
const fits = r => r.left >= -1 && r.right <= W + 1;
return Array.from(document.querySelectorAll('.book-live[data-live]')).map(root => {
  const out = [];
  if (!fits(root.getBoundingClientRect())) out.push('the figure itself');
  for (const el of root.querySelectorAll('svg, canvas, input, select, button, table, p')) {
    const r = el.getBoundingClientRect();
    if (!r.width || fits(r) || el.closest('[hidden], details:not([open])')) continue;
    const box = el.parentElement.closest('.book-scrolls');
    if (!(box && fits(box.getBoundingClientRect()))) out.push(el.tagName + '.' + (el.getAttribute('class') || ''));
  }
  const drawn = root.querySelectorAll('svg rect, svg line, svg polyline, canvas, table tbody tr').length;
  return {kind: root.dataset.live, state: root.dataset.state, bad: out, drawn};
});
"""


# What a phone's reader of the live figures read (review p33b): the figures' SVG text, in CSS px as
# shown (a drawing scaled to the column shrinks its text), the boxes inside a figure that scroll
# sideways (outside a closed "numbers" fold), and for each heatmap that scrolls, whether its row labels
# are still beside the matrix once the box is scrolled to its last column.
PHONE_READING = """
if (window.bookScrollCues) window.bookScrollCues();
return Array.from(document.querySelectorAll('.book-live[data-live]')).map(root => {
  const sizes = [];
  for (const t of root.querySelectorAll('svg text')) {
    if (!t.getBoundingClientRect().width || t.closest('[hidden], details:not([open])')) continue;
    const svg = t.ownerSVGElement;
    const vb = svg.viewBox.baseVal;
    const scale = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
    sizes.push([parseFloat(getComputedStyle(t).fontSize) * scale, svg.getAttribute('class'), t.textContent]);
  }
  const scrolling = Array.from(root.querySelectorAll('.book-scrolls'))
    .filter(b => !b.closest('details:not([open])')).map(b => b.getAttribute('aria-label'));
  const pinned = Array.from(root.querySelectorAll('.book-live-map .book-scrolls'))
    .filter(box => box.querySelector('.book-live-heatmap')).map(box => {
    box.scrollLeft = box.scrollWidth;
    const rows = box.querySelector('.book-live-heatmap-rows');
    if (!rows) return false;
    const b = box.getBoundingClientRect();
    const r = rows.getBoundingClientRect();
    const seen = Array.from(rows.querySelectorAll('text')).every(t => {
      const x = t.getBoundingClientRect();
      return x.left >= b.left - 1 && x.right <= b.right + 1;
    });
    box.scrollLeft = 0;
    return seen && Math.abs(r.left - b.left) <= 1;
  });
  // number boxes whose value is cut (review s21: 0.98 showed as "0.9") and boxes of the figure that
  // scroll sideways, cue or not (its 2-D score table hid half of its k3 column)
  const clipped = Array.from(root.querySelectorAll('input[type="number"]'))
    .filter(b => b.value && b.scrollWidth > b.clientWidth + 1).map(b => b.value);
  const overflowing = Array.from(root.querySelectorAll('*'))
    .filter(b => b.getBoundingClientRect().width && !b.closest('details:not([open])')
      && ['auto', 'scroll'].includes(getComputedStyle(b).overflowX) && b.scrollWidth > b.clientWidth + 1)
    .map(b => b.className || b.tagName);
  return {kind: root.dataset.live, smallest: sizes.sort((a, b) => a[0] - b[0])[0] || null,
          scrolling, pinned, clipped, overflowing};
});
"""

# the figures that fit a 360 px phone whole (review p33b: chapter 3's two figures made the reader
# scroll sideways; chapter 4's alignment scrolled for its colour bar)
FIT_WHOLE = {"masked-softmax", "score-functions", "translator"}


@pytest.fixture(params=list(PHONES))
def phone_browser(request, fresh_browser):
    """A fresh Chromium emulating one phone: (driver, width, height)."""
    width, height = PHONES[request.param]
    emulate(fresh_browser, width, height)
    return fresh_browser, width, height


def load_and_compute(browser, url: str) -> int:
    """Open a page, load every live figure's model and compute it; return the number of figures."""
    open_page(browser, url)
    count = browser.execute_script(START_ALL)
    # each figure loads its model (the click above) and computes, or waits "ready" for a click
    wait_until(
        browser, f"{STATES}.every(s => ['computed', 'ready', 'error'].includes(s))", timeout=150
    )
    browser.execute_script(COMPUTE_REST)
    wait_until(browser, f"{STATES}.every(s => s === 'computed' || s === 'error')", timeout=120)
    return count


# pages whose figures' reading on a phone is checked too (below): text size, fitting whole, pinned rows
READ_PAGES = {
    "notebooks/03_scoring_functions.html",
    "notebooks/04_bahdanau_and_luong.html",
    "notebooks/06_self_attention.html",
    "notebooks/13_gpt.html",
}


@pytest.mark.parametrize("page", LIVE_PAGES)
def test_live_figures_compute_and_fit_the_phone(site, server, phone_browser, page):
    """Every live figure computes, draws, and lies within the screen or in a box that scrolls. On the
    pages of READ_PAGES, also: every live figure's text is 9 CSS px or more (chapter 13's bars were 8.6
    px at 360 px); chapters 3's and 4's figures fit the screen; a heatmap that scrolls (chapter 6's
    MiniLM, 14 tokens) keeps its row labels pinned beside the matrix while the reader scrolls to the
    last column."""
    browser, width, height = phone_browser
    count = load_and_compute(browser, f"{server}/{page}")
    assert count >= 1, f"{page}: no live figure"
    figures = browser.execute_script(LIVE_GEOMETRY)
    assert all(f["state"] == "computed" for f in figures), f"{page} at {width}x{height}: {figures}"
    assert all(f["drawn"] > 0 for f in figures), f"{page}: a figure drew nothing: {figures}"
    bad = [f for f in figures if f["bad"]]
    assert not bad, f"{page} at {width}x{height}: parts past the screen's edge: {bad}"
    if page not in READ_PAGES:
        return
    figures = browser.execute_script(PHONE_READING)
    untexted = [f["kind"] for f in figures if f["smallest"] is None]
    assert not untexted, f"{page} at {width}x{height}: live figures with no text: {untexted}"
    small = [(f["kind"], f["smallest"]) for f in figures if f["smallest"][0] < 9]
    assert not small, f"{page} at {width}x{height}: text under 9 px: {small}"
    wide = [
        (f["kind"], f["scrolling"]) for f in figures if f["kind"] in FIT_WHOLE and f["scrolling"]
    ]
    assert not wide, f"{page} at {width}x{height}: figures that scroll sideways: {wide}"
    wide = [
        (f["kind"], f["overflowing"])
        for f in figures
        if f["kind"] in FIT_WHOLE and f["overflowing"]
    ]
    assert not wide, f"{page} at {width}x{height}: boxes that scroll sideways: {wide}"
    cut = [(f["kind"], f["clipped"]) for f in figures if f["clipped"]]
    assert not cut, f"{page} at {width}x{height}: numbers cut in their boxes: {cut}"
    unpinned = [f["kind"] for f in figures if not all(f["pinned"])]
    assert not unpinned, (
        f"{page} at {width}x{height}: heatmaps whose row labels scroll away: {unpinned}"
    )
    if page.startswith("notebooks/06"):  # the 14-token sentence does scroll, with its labels pinned
        assert all(f["pinned"] for f in figures), figures


# Chapter 4's translator before and after its model is loaded, and its table of numbers opened (review
# s22, items 4 and 8): the greyed Translate button says why it is grey, beside it, until the model is
# loaded; the table, one column per source word, fits the screen or scrolls in its box with the "scroll
# sideways" cue, and no cell's text is cut.
TRANSLATOR = "document.querySelector(\".book-live[data-live='translator']\")"

TRANSLATOR_HINT = f"""
const root = {TRANSLATOR};
const hint = root.querySelector('.book-live-controls .book-live-hint');
const button = root.querySelector('.book-live-compute');
if (!hint) return {{disabled: button.disabled, hint: null}};
const r = hint.getBoundingClientRect();
return {{disabled: button.disabled, hint: hint.textContent, shown: r.width > 0,
        fits: r.left >= -1 && r.right <= document.documentElement.clientWidth + 1,
        described: button.getAttribute('aria-describedby') === hint.id}};
"""

TRANSLATOR_TABLE = f"""
const root = {TRANSLATOR};
const fold = root.querySelector('.book-live-numbers');
fold.open = true;
if (window.bookScrollCues) window.bookScrollCues();
const table = fold.querySelector('table');
const box = table.closest('.book-scroll');
const W = document.documentElement.clientWidth;
const b = box.getBoundingClientRect();
const cut = Array.from(table.querySelectorAll('th, td'))
  .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent);
return {{table: table.getBoundingClientRect().width, box: box.clientWidth,
        boxFits: b.left >= -1 && b.right <= W + 1,
        cue: box.classList.contains('book-scrolls'), cut,
        corner: table.querySelector('thead th').textContent}};
"""


def test_translator_says_why_translate_waits_and_its_table_scrolls_whole(
    site, server, phone_browser
):
    browser, width, height = phone_browser
    open_page(browser, f"{server}/notebooks/04_bahdanau_and_luong.html")
    before = browser.execute_script(TRANSLATOR_HINT)
    assert before["disabled"] and before["hint"] and "Load the model first" in before["hint"]
    assert before["shown"] and before["fits"] and before["described"], before
    browser.execute_script(f"{TRANSLATOR}.querySelector('.book-live-button').click()")
    wait_until(browser, f"{TRANSLATOR}.dataset.state === 'computed'", timeout=150)
    after = browser.execute_script(TRANSLATOR_HINT)
    assert not after["disabled"] and after["hint"] is None, after
    table = browser.execute_script(TRANSLATOR_TABLE)
    assert table["corner"] == "output \\ source", table
    assert table["boxFits"] and not table["cut"], f"at {width}x{height}: {table}"
    # wider than its box only with the cue that says it scrolls
    assert table["table"] <= table["box"] + 1 or table["cue"], f"at {width}x{height}: {table}"


# Chapter 15's head ranking on a phone (review s29, item 5): the column that ranks, A − B, lay past the
# screen's edge, and the table's caption, inside the box that scrolls, was cut mid-line. The example
# table is there before any model is loaded.
RANKING = """
const root = document.querySelector(".book-live[data-live='minilm-pair']");
root.scrollIntoView();
const W = document.documentElement.clientWidth;
const fits = r => r.width > 0 && r.left >= -1 && r.right <= W + 1;
const table = root.querySelector('.book-live-ranking');
const box = table.closest('.book-scroll');
const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.textContent);
const rank = heads.indexOf('A − B');
const column = Array.from(table.querySelectorAll('tr')).map(tr => tr.children[rank]);
const caption = box.parentElement.querySelector(':scope > .book-live-caption');
return {heads, rankFits: column.every(c => fits(c.getBoundingClientRect())),
        caption: caption ? caption.textContent : null,
        captionFits: Boolean(caption) && fits(caption.getBoundingClientRect()),
        captionScrolls: Boolean(caption && caption.closest('.book-scroll')),
        tableFits: table.getBoundingClientRect().width <= box.clientWidth + 1};
"""


def test_head_ranking_shows_its_difference_and_caption_whole_on_a_phone(
    site, server, phone_browser
):
    browser, width, height = phone_browser
    open_page(browser, f"{server}/notebooks/15_inside_a_pretrained_model.html")
    got = browser.execute_script(RANKING)
    assert got["heads"][:3] == ["layer", "head", "A − B"], got
    assert got["rankFits"] and got["tableFits"], f"at {width}x{height}: {got}"
    assert got["caption"].startswith("Heads ranked by how much the weight from"), got
    assert got["captionFits"] and not got["captionScrolls"], f"at {width}x{height}: {got}"


# Chapter 15's head ranking says why "Rank the heads" is grey before the model is loaded, as the
# translator does (reader s32, error 3), and the load button sits just below the controls.
PAIR = "document.querySelector(\".book-live[data-live='minilm-pair']\")"
PAIR_HINT = TRANSLATOR_HINT.replace(TRANSLATOR, PAIR)
PAIR_LOAD = f"""
const root = {PAIR};
const load = root.querySelector('.book-live-button');
return Boolean(load) && root.querySelector('.book-live-controls').nextElementSibling
  === load.closest('.book-live-load');
"""


def test_head_ranking_says_why_rank_waits(site, server, phone_browser):
    browser, width, height = phone_browser
    open_page(browser, f"{server}/notebooks/15_inside_a_pretrained_model.html")
    before = browser.execute_script(PAIR_HINT)
    assert before["disabled"] and before["hint"] and "Load the model first" in before["hint"]
    assert before["shown"] and before["fits"] and before["described"], before
    assert wait_until(browser, f"{PAIR}.querySelector('.book-live-button')")
    assert browser.execute_script(PAIR_LOAD), "the load button is not just below the controls"
    browser.execute_script(f"{PAIR}.querySelector('.book-live-button').click()")
    wait_until(browser, f"{PAIR}.dataset.state === 'ready'", timeout=150)
    after = browser.execute_script(PAIR_HINT)
    assert not after["disabled"] and after["hint"] is None, after
