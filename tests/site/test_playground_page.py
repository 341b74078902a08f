"""The Attention Playground in a real browser with the network off (issue 24), on chapter 8's page,
and with their own presets on the Lab page and chapters 7 and 9.

The page trains with the graph exported from lib.playground, on the batches and initial weights that
web/src/playground/tasks.js draws as lib does (tests/test_playground.py), so its losses are
PyTorch's: within 1e-4 over the first 20 steps (the tolerance tests/test_playground.py measures for
onnxruntime; the WebAssembly kernels sum in their own order, as the native ones do), and after 300
steps its held-out accuracy within 2 points of the library's.
"""

from __future__ import annotations

import time

import pytest
import torch

from lib import playground as pg

from .test_browser import console_errors, open_page, requests_to_other_hosts, wait_until

pytestmark = pytest.mark.browser

CH08 = "notebooks/08_positional_encoding.html"
PG = ".book-live[data-live='playground']"
ROOT = f"document.querySelector({PG!r})"
DEFAULT = "#task=reverse&layers=1&heads=2&width=32&pos=learned&mask=bidirectional&lr=0.003&batch=32&seed=0"


def load(browser, server, hash_: str = DEFAULT, page: str = CH08):
    browser.get("about:blank")  # a new document: the same page with another #hash would not reload
    open_page(browser, f"{server}/{page}{hash_}")
    assert wait_until(browser, f"{ROOT} && {ROOT}.playground")


def steps(browser, n: int, timeout: float = 120) -> float:
    """Train n more steps from the page's current run (starting it first if needed); seconds taken."""
    t0 = browser.execute_script(f"return {ROOT}.playground.worker ? {ROOT}.playground.t : 0;")
    start = time.perf_counter()
    browser.execute_script(f"{ROOT}.querySelector('.book-pg-step').click();")
    assert wait_until(
        browser,
        f"{ROOT}.playground.t >= {t0 + 1} || {ROOT}.dataset.state === 'error'",
        timeout=timeout,
    )
    if n > 1:
        browser.execute_script(
            f"{ROOT}.playground.worker.postMessage({{type: 'step', n: {n - 1}, probe: null}});"
        )
        assert wait_until(
            browser,
            f"{ROOT}.playground.t >= {t0 + n} || ['error', 'diverged'].includes({ROOT}.dataset.state)",
            timeout=timeout,
        )
    return time.perf_counter() - start


def library_run(config: pg.PlaygroundConfig, n: int) -> pg.Run:
    torch.set_num_threads(1)
    run = pg.Run(config)
    for _ in range(n):
        run.step()
    return run


def test_the_page_trains_as_the_library_does(site, server, browser):
    load(browser, server)
    steps(browser, 20)
    losses = browser.execute_script(f"return {ROOT}.playground.losses;")
    ref = library_run(pg.PlaygroundConfig(task="reverse", positional="learned", seed=0), 300)
    assert [t for t, _ in losses] == list(range(1, 21))
    assert max(abs(a - b[0]) for (_, a), b in zip(losses, ref.history[:20])) < 1e-4
    seconds = steps(browser, 280)
    assert wait_until(browser, f"{ROOT}.playground.held.some((h) => h[0] === 300)")
    held = dict(browser.execute_script(f"return {ROOT}.playground.held;"))[300]
    assert abs(held - ref.held_out()[1]) <= 0.02, (held, ref.held_out())
    assert held >= 0.95 and seconds < 60
    # the probe's maps (asked for again by editing the probe): one per head, and the model's answer
    browser.execute_script(
        f"{ROOT}.querySelector('.book-pg-probe').dispatchEvent(new Event('change'));"
    )
    assert wait_until(
        browser, f"{ROOT}.querySelector('.book-pg-answer').textContent.includes('all right')"
    )
    assert (
        browser.execute_script(f"return {ROOT}.querySelectorAll('.book-pg-map canvas').length;")
        == 2
    )
    text = browser.execute_script(f"return {ROOT}.querySelector('.book-pg-answer').textContent;")
    assert "right answer 6 2 9 5 1 4 1 3 (all right)" in text, text


def test_without_positions_reverse_is_not_learned(site, server, browser):
    load(browser, server, DEFAULT.replace("pos=learned", "pos=none"))
    steps(browser, 300)
    assert wait_until(browser, f"{ROOT}.playground.held.some((h) => h[0] === 300)")
    held = dict(browser.execute_script(f"return {ROOT}.playground.held;"))[300]
    assert held <= 0.05


def test_settings_live_in_the_url(site, server, browser):
    load(
        browser,
        server,
        "#task=sort&layers=2&heads=4&width=16&pos=none&mask=causal&lr=0.01&batch=64&seed=7",
    )
    values = browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll('.book-pg-controls select, .book-pg-controls input')).map((e) => e.value);"
    )
    assert values == ["sort", "2", "4", "16", "none", "causal", "0.01", "64", "7"]
    browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-task'); s.value = 'copy'; s.dispatchEvent(new Event('change'));"
    )
    assert wait_until(browser, "location.hash.includes('task=copy')")
    assert "seed=7" in browser.execute_script("return location.hash;")


def test_a_link_with_other_settings_does_not_show_the_chapters_run(site, server, browser):
    """The chapter's curve and caption describe its own run; a link that sets another says so."""
    load(browser, server, "#task=sort&pos=none")
    assert browser.execute_script(f"return {ROOT}.dataset.example;") == "other"
    assert browser.execute_script(f"return {ROOT}.playground.losses.length;") == 0
    stats = browser.execute_script(f"return {ROOT}.querySelector('.book-pg-stats').textContent;")
    assert (
        "task sort (the chapter's: reverse)" in stats
        and "positions none (the chapter's: learned)" in stats
    )
    caption = browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-caption').textContent;"
    )
    assert caption.startswith("The Playground: reverse with learned positions")
    assert "describes the chapter's run, not the link's settings" in caption
    # the chapter's own settings in the link: its run, its caption as written
    load(browser, server)
    assert browser.execute_script(f"return {ROOT}.dataset.example;") == "chapter"
    assert browser.execute_script(f"return {ROOT}.playground.losses.length;") == 300
    assert "link's settings" not in browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-caption').textContent;"
    )


def test_bad_settings_are_clamped_and_named(site, server, browser):
    load(browser, server, "#task=shuffle&layers=9&seed=-1&colour=red")
    text = browser.execute_script(f"return {ROOT}.querySelector('.book-live-message').textContent;")
    for part in ("task=shuffle", "layers=9", "seed=-1", "colour (not a setting)"):
        assert part in text, text
    assert (
        browser.execute_script(f"return {ROOT}.querySelector('.book-pg-task').value;") == "reverse"
    )


def test_a_diverging_rate_stops_training_and_says_why(site, server, browser):
    load(browser, server, DEFAULT.replace("lr=0.003", "lr=1"))
    steps(browser, 1)
    browser.execute_script(
        f"{ROOT}.playground.worker.postMessage({{type: 'step', n: 20, probe: null}});"
    )
    assert wait_until(browser, f"{ROOT}.dataset.state === 'diverged'", timeout=60)
    text = browser.execute_script(f"return {ROOT}.querySelector('.book-live-message').textContent;")
    assert "smaller" in text and "Training stopped at step" in text


def test_a_probe_outside_the_alphabet_gets_a_message(site, server, browser):
    load(browser, server)
    browser.execute_script(
        f"const p = {ROOT}.querySelector('.book-pg-probe'); p.value = '3 1 x 9'; p.dispatchEvent(new Event('change'));"
    )
    steps(browser, 1)
    text = browser.execute_script(f"return {ROOT}.querySelector('.book-live-message').textContent;")
    assert "not in its alphabet: x" in text, text


def test_nothing_leaves_the_site_and_no_console_error(site, server, browser):
    load(browser, server)
    steps(browser, 5)
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)


PRESETS = {
    "book/lab.html": pg.PlaygroundConfig(task="reverse"),
    "notebooks/07_multi_head_attention.html": pg.PlaygroundConfig(task="brackets", n_heads=2),
    "notebooks/09_the_transformer.html": pg.PlaygroundConfig(
        task="induction", n_layers=2, causal=True
    ),
}


@pytest.mark.parametrize("page", PRESETS)
def test_each_page_has_a_computing_playground_with_its_preset(site, server, browser, page):
    config = PRESETS[page]
    load(browser, server, "", page)
    assert browser.execute_script(f"return document.querySelectorAll({PG!r}).length;") == 1
    values = browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll('.book-pg-controls select, .book-pg-controls input')).map((e) => e.value);"
    )
    mask = "causal" if config.causal else "bidirectional"
    assert values[:6] == [
        config.task, str(config.n_layers), str(config.n_heads), str(config.d_model),
        config.positional, mask,
    ]  # fmt: skip
    steps(browser, 10)
    losses = browser.execute_script(f"return {ROOT}.playground.losses;")
    ref = library_run(config, 10)
    assert [t for t, _ in losses] == list(range(1, 11))
    assert max(abs(a - b[0]) for (_, a), b in zip(losses, ref.history)) < 1e-4
    browser.execute_script(
        f"{ROOT}.querySelector('.book-pg-probe').dispatchEvent(new Event('change'));"
    )
    n_maps = config.n_layers * config.n_heads
    assert wait_until(
        browser, f"{ROOT}.querySelectorAll('.book-pg-map canvas').length === {n_maps}"
    )
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)
