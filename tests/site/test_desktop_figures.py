"""At a desktop's width the figures keep their column (tests/site/test_phone.py holds how a phone shows
the ones drawn for the desktop): book/_static/reader.js widens nothing there. A module of its own: the
phone tests keep Chromium's mobile emulation on for their whole module."""

from __future__ import annotations

import pytest

from .test_browser import open_page
from .test_phone import FIGURES

pytestmark = pytest.mark.browser


def test_on_a_desktop_no_figure_is_widened(server, browser):
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        open_page(browser, f"{server}/notebooks/01_seq2seq_to_attention.html")
        figures = browser.execute_script(FIGURES)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert len(figures) >= 7
    assert all(not f["boxed"] and f["shown"] <= f["column"] + 1 for f in figures), figures
