"""The other live figures in a real browser with the network off (issue 13): the translator of chapter 4.

The translator is exported in float32, so the page's greedy translation must be the library's word for
word and its alignment within 1e-4 (float32 kernels that sum in another order differ by ~1e-6).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from .test_browser import console_errors, open_page, requests_to_other_hosts, wait_until
from .test_live_minilm import message, wait_state

pytestmark = pytest.mark.browser

CH04 = "notebooks/04_bahdanau_and_luong.html"
TRANSLATOR = ".book-live[data-live='translator']"


@pytest.fixture(scope="module")
def reference(site):
    return json.loads((site / "_static" / "live" / "reference.json").read_text())


def translate(driver, text: str) -> str:
    driver.execute_script(
        f"const root = document.querySelector({TRANSLATOR!r}); root.dataset.state = 'typing';"
        "root.querySelector('.book-live-input').value = arguments[0];"
        "root.querySelector('.book-live-compute').click();", text)
    return wait_state(driver, TRANSLATOR, ("computed", "ready", "error"), timeout=60)


def read(driver):
    root = f"document.querySelector({TRANSLATOR!r})"
    return (json.loads(driver.execute_script(f"return {root}.dataset.tokens;")),
            np.array(json.loads(driver.execute_script(f"return {root}.dataset.values;"))))


@pytest.fixture(scope="module")
def translator(site, server, browser):
    open_page(browser, f"{server}/{CH04}")
    assert browser.execute_script(f"return document.querySelector({TRANSLATOR!r}).dataset.state;") == "example"
    assert wait_until(browser, f"document.querySelector({TRANSLATOR!r}).querySelector('.book-live-button')")
    browser.execute_script(f"document.querySelector({TRANSLATOR!r}).querySelector('.book-live-button').click();")
    return wait_state(browser, TRANSLATOR, ("computed", "error"), timeout=60)


def test_the_page_translates_as_the_library_does(translator, browser, reference):
    assert translator == "computed", message(browser, TRANSLATOR)
    for ref in reference["translator"]:
        assert translate(browser, ref["source"]) == "computed", message(browser, TRANSLATOR)
        tokens, attention = read(browser)
        assert tokens == ref["tokens"]
        assert np.abs(attention - np.array(ref["attention"])).max() < 1e-4


def test_bad_input_gets_a_message(translator, browser):
    assert translate(browser, "   ") == "ready" and "empty" in message(browser, TRANSLATOR)
    assert translate(browser, "the zebra runs 🙂") == "computed"
    assert "zebra, 🙂" in message(browser, TRANSLATOR)
    assert translate(browser, " ".join(["the cat sleeps"] * 20)) == "computed"
    assert "cut to 40 words" in message(browser, TRANSLATOR)
    assert translate(browser, "The girl SLEEPS") == "computed" and message(browser, TRANSLATOR) == ""
    assert read(browser)[0] == ["la", "fille", "dort", "<eos>"]


def test_nothing_leaves_the_site_and_no_console_error(translator, browser):
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)
