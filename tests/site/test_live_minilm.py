"""The live MiniLM figures of chapter 15, in a real browser with the network off (issue 13).

The reader's flow: the page shows the precomputed example at once; the button downloads the model
(from this site only) and the page computes; typing a sentence computes its attention, which must equal
what the library computed in PyTorch when the site was built (``_static/live/reference.json``, written
by tools/export_models.py). The shipped model keeps its weights as float16 (float32 arithmetic):
tests/test_export.py measured its attention within 7.2e-4 of PyTorch and allows 2e-3; so does this
test (the same numbers, now computed by onnxruntime-web's WebAssembly kernels). Bad input gets a message
in the figure. No request leaves the site, no console error, and the page costs little until the reader
asks for the model.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from .test_browser import console_errors, open_page, requests_to_other_hosts, wait_until

pytestmark = pytest.mark.browser

PAGE = "notebooks/15_inside_a_pretrained_model.html"
FIG = ".book-live[data-live='minilm-attention']"
PAIR = ".book-live[data-live='minilm-pair']"
TOL = 2e-3
PAGE_BUDGET = 500_000  # bytes a page may grow by for its live figures before the reader clicks


def state(driver, selector: str) -> str:
    return driver.execute_script(f"return document.querySelector({selector!r}).dataset.state;")


def wait_state(driver, selector: str, wanted: tuple[str, ...], timeout: float = 90) -> str:
    script = f"{list(wanted)!r}.includes(document.querySelector({selector!r}).dataset.state)"
    return wait_until(driver, script, timeout=timeout, interval=0.1) and state(driver, selector)


def message(driver, selector: str) -> str:
    return driver.execute_script(
        f"const m = document.querySelector({selector!r}).querySelector('.book-live-message');return m && !m.hidden ? m.textContent : '';"
    )


def type_and_compute(driver, text: str) -> str:
    driver.execute_script(
        f"const root = document.querySelector({FIG!r});root.dataset.state = 'typing';const input = root.querySelector('.book-live-input'); input.value = arguments[0];root.querySelector('.book-live-compute').click();",
        text,
    )
    return wait_state(driver, FIG, ("computed", "ready", "error"))


def values(driver, selector: str):
    return json.loads(
        driver.execute_script(f"return document.querySelector({selector!r}).dataset.values;")
    )


def transferred(driver) -> list[tuple[str, int]]:
    """(url, bytes) of every response of the current page so far, from the DevTools log."""
    urls, sizes = {}, {}
    for entry in driver.get_log("performance"):
        m = json.loads(entry["message"])["message"]
        if m.get("method") == "Network.requestWillBeSent":
            urls[m["params"]["requestId"]] = m["params"]["request"]["url"]
        elif m.get("method") == "Network.loadingFinished":
            sizes[m["params"]["requestId"]] = m["params"]["encodedDataLength"]
    return [(urls.get(r, "?"), n) for r, n in sizes.items()]


@pytest.fixture(scope="module")
def reference(site):
    return json.loads((site / "_static" / "live" / "reference.json").read_text())


@pytest.fixture(scope="module")
def loaded(site, server, browser):
    """Chapter 15 open, the model loaded by the button, the example computed in the browser."""
    open_page(browser, f"{server}/{PAGE}")
    before = transferred(browser)
    example_state = state(browser, FIG)
    live_html = browser.execute_script(
        "return Array.from(document.querySelectorAll('.book-live')).map(e => e.outerHTML.length).reduce((a, b) => a + b, 0);"
    )
    example_values = values(browser, f"{FIG} .book-live-heatmap")
    start = time.monotonic()
    assert wait_until(
        browser, f"document.querySelector({FIG!r}).querySelector('.book-live-button')"
    )
    browser.execute_script(
        f"document.querySelector({FIG!r}).querySelector('.book-live-button').click();"
    )
    final = wait_state(browser, FIG, ("computed", "error"))
    seconds = time.monotonic() - start
    return {
        "before": before,
        "example_state": example_state,
        "live_html": live_html,
        "example_values": example_values,
        "final": final,
        "seconds": seconds,
        "errors": console_errors(browser),
        "external": requests_to_other_hosts(browser),
    }


def test_the_page_shows_the_example_at_once_and_costs_little(loaded):
    assert loaded["example_state"] == "example"
    m = np.array(loaded["example_values"])
    assert m.shape == (17, 17) and np.allclose(m.sum(1), 1, atol=0.01)  # layer 3, head 1
    urls = [u for u, _ in loaded["before"]]
    assert not [u for u in urls if u.endswith((".onnx", ".wasm", "worker.js"))], urls
    live_bytes = loaded["live_html"] + sum(n for u, n in loaded["before"] if "/_static/live/" in u)
    assert live_bytes <= PAGE_BUDGET, live_bytes


def test_the_browser_computes_the_librarys_attention(loaded, browser, reference):
    assert loaded["final"] == "computed", message(browser, FIG)
    first = reference["minilm"][0]
    assert first["text"].startswith("The trophy")
    got = np.array(values(browser, FIG))
    assert (
        json.loads(
            browser.execute_script(f"return document.querySelector({FIG!r}).dataset.tokens;")
        )
        == first["tokens"]
    )
    assert np.abs(got - np.array(first["attentions"])).max() < TOL


@pytest.mark.parametrize("index", [1, 3])
def test_a_typed_sentence(loaded, browser, reference, index):
    ref = reference["minilm"][index]
    assert type_and_compute(browser, ref["text"]) == "computed", message(browser, FIG)
    got = np.array(values(browser, FIG))
    assert got.shape == np.array(ref["attentions"]).shape
    assert np.abs(got - np.array(ref["attentions"])).max() < TOL


def caption_shown(driver, selector: str) -> bool:
    """Whether the chapter's "As it opens" caption of the figure is shown (it is a direct child)."""
    return driver.execute_script(
        f"const c = document.querySelector({selector!r}).querySelector(':scope > .book-live-caption');"
        "return c === null ? null : !c.hidden;"
    )


def test_the_chapters_caption_shows_only_beside_the_example(loaded, browser, reference):
    """Reader s31, ch15, 5: the caption's numbers describe the example; beside the reader's sentence
    it hides, and it comes back with the example's sentence (at the example's layer and head)."""
    assert caption_shown(browser, PAIR) is True  # not yet used
    assert type_and_compute(browser, reference["minilm"][1]["text"]) == "computed"
    assert caption_shown(browser, FIG) is False
    assert type_and_compute(browser, reference["minilm"][0]["text"]) == "computed"
    assert caption_shown(browser, FIG) is True


def test_bad_input_gets_a_message(loaded, browser):
    assert type_and_compute(browser, "   ") == "ready"
    assert "empty" in message(browser, FIG)
    assert type_and_compute(browser, "the trophy was too big " * 40) == "computed"
    assert "cut to 128 tokens" in message(browser, FIG)
    tokens = json.loads(
        browser.execute_script(f"return document.querySelector({FIG!r}).dataset.tokens;")
    )
    assert len(tokens) == 128 and tokens[-1] == "[SEP]"
    assert type_and_compute(browser, "I love 🙂 and ქართული") == "computed"
    assert "[UNK]" in message(browser, FIG)
    assert (
        type_and_compute(browser, "a plain sentence") == "computed" and message(browser, FIG) == ""
    )


def test_the_head_ranking_for_the_readers_words(loaded, browser, reference):
    pair = reference["minilm_pairs"][0]
    assert wait_state(browser, PAIR, ("ready",), timeout=30) == "ready"
    browser.execute_script(
        f"const root = document.querySelector({PAIR!r}); root.dataset.state = 'typing';root.querySelector('.book-live-a').value = arguments[0];root.querySelector('.book-live-b').value = arguments[1];root.querySelector('.book-live-compute').click();",
        pair["a"],
        pair["b"],
    )
    assert wait_state(browser, PAIR, ("computed", "ready", "error")) == "computed", message(
        browser, PAIR
    )
    got = values(browser, PAIR)
    assert [r[:2] for r in got] == [r[:2] for r in pair["top_heads"]]
    assert np.abs(np.array([r[2] for r in got]) - [r[2] for r in pair["top_heads"]]).max() < 2 * TOL
    browser.execute_script(
        f"const root = document.querySelector({PAIR!r}); root.dataset.state = 'typing';root.querySelector('.book-live-from').value = 'zebra';root.querySelector('.book-live-compute').click();"
    )
    assert wait_state(browser, PAIR, ("computed", "ready", "error")) == "ready"
    assert "must each be one token" in message(browser, PAIR)
    assert '"zebra" is not a token of sentence A' in message(browser, PAIR)
    # a word moved in B: the message names both places and shows B's tokens, so the reader sees where
    browser.execute_script(
        f"const root = document.querySelector({PAIR!r}); root.dataset.state = 'typing';root.querySelector('.book-live-from').value = arguments[0];root.querySelector('.book-live-b').value = 'oh ' + arguments[1];root.querySelector('.book-live-compute').click();",
        pair["from"],
        pair["b"],
    )
    assert wait_state(browser, PAIR, ("computed", "ready", "error")) == "ready"
    moved = message(browser, PAIR)
    assert "of A but token" in moved and "Tokens of B: [CLS] oh " in moved, moved
    # the earlier words' table is gone, not left above the message as if it were their result
    assert not browser.execute_script(
        f"return document.querySelector({PAIR!r}).querySelector('.book-live-ranking');"
    )


def test_nothing_leaves_the_site_and_no_console_error(loaded, browser):
    assert not loaded["errors"], loaded["errors"]
    assert not loaded["external"], loaded["external"]
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)


def test_a_browser_without_webassembly_is_told(server, browser, loaded):
    open_page(browser, f"{server}/{PAGE}")
    assert wait_until(
        browser, f"document.querySelector({FIG!r}).querySelector('.book-live-button')"
    )
    browser.execute_script(
        f"delete window.WebAssembly;document.querySelector({FIG!r}).querySelector('.book-live-button').click();"
    )
    assert wait_state(browser, FIG, ("error",), timeout=10) == "error"
    assert "WebAssembly" in message(browser, FIG)


def test_chapter_6_has_the_same_live_figure(server, browser, reference):
    open_page(browser, f"{server}/notebooks/06_self_attention.html")
    assert state(browser, FIG) == "example"
    assert wait_until(
        browser, f"document.querySelector({FIG!r}).querySelector('.book-live-button')"
    )
    browser.execute_script(
        f"document.querySelector({FIG!r}).querySelector('.book-live-button').click();"
    )
    assert wait_state(browser, FIG, ("computed", "error")) == "computed", message(browser, FIG)
    ref = reference["minilm"][1]
    assert type_and_compute(browser, ref["text"]) == "computed"
    assert np.abs(np.array(values(browser, FIG)) - np.array(ref["attentions"])).max() < TOL
    assert not console_errors(browser) and not requests_to_other_hosts(browser)
