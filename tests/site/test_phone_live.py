"""Every live figure on a phone (issue 25), at the sizes of test_phone.py: each figure loads its model,
computes, and everything it draws lies within the screen or in a box that scrolls sideways and says so.
(The `phone` fixture, in conftest.py, emulates each size in turn. A file of its own so that
`make test`'s workers can run it beside the page layouts of test_phone.py.)
"""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("page", LIVE_PAGES)
def test_live_figures_compute_and_fit_the_phone(site, server, browser, phone, page):
    width, height = phone
    open_page(browser, f"{server}/{page}")
    count = browser.execute_script(START_ALL)
    assert count >= 1, f"{page}: no live figure"
    # each figure loads its model (the click above) and computes, or waits "ready" for a click
    wait_until(
        browser, f"{STATES}.every(s => ['computed', 'ready', 'error'].includes(s))", timeout=150
    )
    browser.execute_script(COMPUTE_REST)
    wait_until(browser, f"{STATES}.every(s => s === 'computed' || s === 'error')", timeout=120)
    figures = browser.execute_script(LIVE_GEOMETRY)
    assert all(f["state"] == "computed" for f in figures), f"{page} at {width}x{height}: {figures}"
    assert all(f["drawn"] > 0 for f in figures), f"{page}: a figure drew nothing: {figures}"
    bad = [f for f in figures if f["bad"]]
    assert not bad, f"{page} at {width}x{height}: parts past the screen's edge: {bad}"
