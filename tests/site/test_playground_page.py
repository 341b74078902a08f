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

from .conftest import emulate, stop_emulating
from .test_browser import console_errors, open_page, requests_to_other_hosts, wait_until

pytestmark = pytest.mark.browser

CH08 = "notebooks/08_positional_encoding.html"
CH18 = "notebooks/18_attention_at_scale.html"  # its preset: copy, ALiBi, causal, test length 32
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
    steps(browser, 280)  # how fast: benchmarks/playground.py (make bench), not a test
    assert wait_until(browser, f"{ROOT}.playground.held.some((h) => h[0] === 300)")
    held = dict(browser.execute_script(f"return {ROOT}.playground.held;"))[300]
    assert abs(held - ref.held_out()[1]) <= 0.02, (held, ref.held_out())
    assert held >= 0.95
    # the probe's maps (asked for again by editing the probe): one per head, and the model's answer
    browser.execute_script(
        f"{ROOT}.querySelector('.book-pg-probe').dispatchEvent(new Event('change'));"
    )
    assert wait_until(
        browser, f"{ROOT}.querySelector('.book-pg-answer').textContent.includes('all right')"
    )
    assert (
        browser.execute_script(f"return {ROOT}.querySelectorAll('.book-pg-map svg').length;") == 2
    )
    text = browser.execute_script(f"return {ROOT}.querySelector('.book-pg-answer').textContent;")
    assert "right answer 6 2 9 5 1 4 1 3 (all right)" in text, text


def test_without_positions_reverse_is_not_learned(site, server, browser):
    load(browser, server, DEFAULT.replace("pos=learned", "pos=none"))
    steps(browser, 300)
    assert wait_until(browser, f"{ROOT}.playground.held.some((h) => h[0] === 300)")
    held = dict(browser.execute_script(f"return {ROOT}.playground.held;"))[300]
    assert held <= 0.05


def text_of(browser, selector: str) -> list[str]:
    return browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll({selector!r})).map((e) => e.textContent);"
    )


def test_the_chart_has_axes_a_legend_and_token_labelled_maps_before_play(site, server, browser):
    """Before any click: the chapter's run as a chart (ticks on three axes, their titles, a legend
    naming each colour) and its attention maps on the probe, with the probe's tokens on both axes."""
    load(browser, server)
    assert browser.execute_script(f"return {ROOT}.dataset.run;") in (None, "")  # no worker yet
    assert text_of(browser, ".book-pg-xtick") == ["0", "100", "200", "300"]
    assert (
        text_of(browser, ".book-pg-ytick")[0] == "0"
        and len(text_of(browser, ".book-pg-ytick")) >= 3
    )
    assert text_of(browser, ".book-pg-y2tick") == ["0", "25", "50", "75", "100"]
    assert text_of(browser, ".book-pg-xlabel") == ["step"]
    assert text_of(browser, ".book-pg-ylabel") == ["loss"]
    assert text_of(browser, ".book-pg-y2label") == ["held-out right (%)"]
    legend = text_of(browser, ".book-pg-legend-item")
    assert legend[0] == "training loss (left axis)"
    assert legend[1].startswith("held-out sequences right, % (right axis")
    stats = text_of(browser, ".book-pg-stats")[0]
    assert stats.startswith("step 300: loss ") and "held-out sequences right 100.0%" in stats
    # the maps of the library's run after its 300 steps: one per head, tokens on both axes
    tokens = ["3", "1", "4", "1", "5", "9", "2", "6"]
    maps = browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll('.book-pg-map svg')).map((s) => [JSON.parse(s.dataset.rows), JSON.parse(s.dataset.cols), Array.from(s.querySelectorAll('.book-pg-key')).map((t) => t.textContent), Array.from(s.querySelectorAll('.book-pg-query')).map((t) => t.textContent)]);"
    )
    assert maps == [[tokens, tokens, tokens, tokens]] * 2
    assert browser.execute_script(f"return {ROOT}.dataset.mapsStep;") == "300"
    assert "after step 300 (the library's run)" in text_of(browser, ".book-pg-maps-note")[0]
    assert "(all right)" in text_of(browser, ".book-pg-answer")[0]


def test_the_chart_and_maps_are_legible_on_a_phone_and_a_desktop(site, server, browser):
    """At 360 and 1280 CSS px: every label of the chart and the maps at 9 CSS px or more, on the screen."""
    sizes = """
    const W = document.documentElement.clientWidth;
    return Array.from(ROOT.querySelectorAll('.book-pg-curve text, .book-pg-map svg text')).map((t) => {
      const svg = t.ownerSVGElement;
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      const r = t.getBoundingClientRect();
      return [parseFloat(getComputedStyle(t).fontSize) * scale, r.left >= -1 && r.right <= W + 1];
    });
    """.replace("ROOT", ROOT)
    for width in (360, 1280):
        if width == 360:
            emulate(browser, 360, 740)
        try:
            load(browser, server)
            labels = browser.execute_script(sizes)
            assert len(labels) > 40
            assert min(size for size, _ in labels) >= 9, (width, labels)
            assert all(inside for _, inside in labels), (width, labels)
        finally:
            if width == 360:
                stop_emulating(browser)


def test_the_chart_reads_at_13_px_on_a_phone(site, server, browser):
    """On chapter 18's page at 360 CSS px: the chart is drawn at the width it is shown (it was drawn
    at the Playground's width with its padding, and shrunk 7%), its ticks and titles at 13 px on the
    screen (at 11 a reader found them at the edge of legibility, s24); 11 px on a desktop."""
    measure = """
    const svg = ROOT.querySelector('.book-pg-curve');
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return [scale, Array.from(svg.querySelectorAll('text')).map(
      (t) => parseFloat(getComputedStyle(t).fontSize) * scale)];
    """.replace("ROOT", ROOT)
    for width, size in ((360, 13), (1280, 11)):
        if width == 360:
            emulate(browser, 360, 760)
        try:
            load(browser, server, hash_="", page=CH18)
            scale, sizes = browser.execute_script(measure)
            assert abs(scale - 1) < 0.01, (width, scale)
            assert len(sizes) > 10 and min(sizes) >= size - 0.2, (width, sizes)
        finally:
            if width == 360:
                stop_emulating(browser)


def test_reset_and_a_new_setting_clear_the_previous_run(site, server, browser):
    load(browser, server)
    steps(browser, 30)
    browser.execute_script(
        f"{ROOT}.querySelector('.book-pg-probe').dispatchEvent(new Event('change'));"
    )
    assert wait_until(browser, f"{ROOT}.dataset.mapsStep === '30'")
    assert text_of(browser, ".book-pg-stats")[0].startswith("step 30: loss ")
    # Reset: at once (before the new worker is ready) no curve, status or map of the old run
    state = browser.execute_script(
        f"{ROOT}.querySelector('.book-pg-reset').click();"
        f"return [{ROOT}.querySelector('.book-pg-stats').textContent, {ROOT}.playground.losses.length,"
        f" {ROOT}.querySelectorAll('.book-pg-map').length, {ROOT}.querySelectorAll('.book-pg-loss').length];"
    )
    assert state == ["step 0: no training yet", 0, 0, 0]
    # then the maps of the new run's initial weights
    assert wait_until(browser, f"{ROOT}.dataset.mapsStep === '0'", timeout=60)
    assert "at step 0 (the initial weights" in text_of(browser, ".book-pg-maps-note")[0]
    # the chapter's run before any click, then a new setting: the 300-step run is gone
    load(browser, server)
    assert "100.0%" in text_of(browser, ".book-pg-stats")[0]
    state = browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-pos'); s.value = 'none'; s.dispatchEvent(new Event('change'));"
        f"return [{ROOT}.querySelector('.book-pg-stats').textContent, {ROOT}.playground.held.length,"
        f" {ROOT}.querySelectorAll('.book-pg-map').length];"
    )
    assert state == ["step 0: no training yet", 0, 0]
    assert "pos=none" in browser.execute_script("return location.hash;")
    assert "settings now chosen" in browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-caption').innerText;"
    )
    assert wait_until(browser, f"{ROOT}.dataset.mapsStep === '0'", timeout=60)
    steps(browser, 1)
    assert text_of(browser, ".book-pg-stats")[0].startswith("step 1: loss ")


def test_play_stops_at_its_step_budget_or_when_held_out_accuracy_stops_changing(
    site, server, browser
):
    load(browser, server)
    assert browser.execute_script(
        f"return [{ROOT}.playground.budget, {ROOT}.playground.patience];"
    ) == [
        300,
        6,
    ]
    browser.execute_script(f"{ROOT}.playground.budget = 50;")
    play = f"{ROOT}.querySelector('.book-pg-play')"
    browser.execute_script(f"{play}.click();")
    assert wait_until(browser, f"{ROOT}.dataset.stopped === 'budget'", timeout=120)
    assert browser.execute_script(f"return [{ROOT}.playground.t, {play}.textContent];") == [
        50,
        "Play",
    ]
    stats = text_of(browser, ".book-pg-stats")[0]
    assert stats.startswith("step 50: loss ")
    assert "Stopped: step budget of 50 steps reached" in stats
    # Play again: on to the next 50
    browser.execute_script(f"{play}.click();")
    assert "Stopped" not in text_of(browser, ".book-pg-stats")[0]
    assert wait_until(
        browser, f"{ROOT}.dataset.stopped === 'budget' && {ROOT}.playground.t === 100", timeout=120
    )
    # reverse is learned by step 75 (held-out 100%): with patience 2 Play stops two checks later
    browser.execute_script(f"{ROOT}.playground.budget = 1000; {ROOT}.playground.patience = 2;")
    browser.execute_script(f"{play}.click();")
    assert wait_until(browser, f"{ROOT}.dataset.stopped === 'plateau'", timeout=120)
    t = browser.execute_script(f"return {ROOT}.playground.t;")
    assert t == 150, t
    stats = text_of(browser, ".book-pg-stats")[0]
    assert stats.startswith("step 150: loss ") and "held-out sequences right 100.0%" in stats
    assert "Stopped: held-out accuracy unchanged for 2 evaluations (50 steps" in stats
    assert not console_errors(browser)


def test_settings_live_in_the_url(site, server, browser):
    load(
        browser,
        server,
        "#task=sort&layers=2&heads=4&width=16&pos=none&mask=causal&lr=0.01&batch=64&seed=7&test=16",
    )
    values = browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll('.book-pg-controls select, .book-pg-controls input')).map((e) => e.value);"
    )
    assert values == [
        "sort", "2", "4", "4", "16", "none", "layernorm", "causal", "0.01", "64", "7", "16"
    ]  # fmt: skip
    browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-task'); s.value = 'copy'; s.dispatchEvent(new Event('change'));"
    )
    assert wait_until(browser, "location.hash.includes('task=copy')")
    assert "seed=7" in browser.execute_script("return location.hash;")
    assert "test=16" in browser.execute_script("return location.hash;")


def test_a_link_with_other_settings_does_not_show_the_chapters_run(site, server, browser):
    """The chapter's curve and caption describe its own run; a link that sets another, or a run
    trained in the page at the chapter's settings, says so."""
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
    assert "describes the chapter's run, not the settings now chosen" in caption
    # its maps: the link's run before training (its initial weights), computed in the page
    assert wait_until(browser, f"{ROOT}.dataset.mapsStep === '0'", timeout=60)
    assert "at step 0 (the initial weights" in browser.execute_script(
        f"return {ROOT}.querySelector('.book-pg-maps-note').textContent;"
    )
    # the chapter's own settings in the link: its run, its caption as written
    load(browser, server)
    assert browser.execute_script(f"return {ROOT}.dataset.example;") == "chapter"
    assert browser.execute_script(f"return {ROOT}.playground.losses.length;") == 300
    assert "settings now chosen" not in browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-caption').innerText;"
    )
    # Play at the chapter's settings: the maps become this page's run, and the caption says so
    steps(browser, 1)
    caption = browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-caption').innerText;"
    )
    assert "describes the chapter's run, not the run trained in this page" in caption
    assert "settings now chosen" not in caption


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


def test_a_valid_probe_takes_down_the_warning_of_an_earlier_one(site, server, browser):
    """Reader s39b (chapter 9): the box emptied on the way to a new probe warned "needs 8 symbols;
    got 0", and the warning stayed beside the valid probe's answer."""
    load(browser, server)
    change = f"const p = {ROOT}.querySelector('.book-pg-probe'); p.value = arguments[0]; p.dispatchEvent(new Event('change'));"
    browser.execute_script(change, "")
    message = f"return {ROOT}.querySelector('.book-live-message');"
    assert "got 0" in browser.execute_script(message).get_attribute("textContent")
    browser.execute_script(change, "7 3 5 1 0 2 2 6")
    steps(browser, 1)
    box = browser.execute_script(message)
    assert box.get_attribute("hidden") is not None or not box.get_attribute("textContent"), (
        box.get_attribute("textContent")
    )


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
    CH18: pg.PlaygroundConfig(task="copy", positional="alibi", causal=True),
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
    # the form: task, layers, heads, key/value heads, width, positions, norm, attention, ...
    assert values[:8] == [
        config.task, str(config.n_layers), str(config.n_heads), str(config.n_heads),
        str(config.d_model), config.positional, "layernorm", mask,
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
    assert wait_until(browser, f"{ROOT}.querySelectorAll('.book-pg-map svg').length === {n_maps}")
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)


# --- a test length beyond the training length (issue 32) -----------------------------------------

COPY = "#task=copy&layers=1&heads=2&width=32&mask=causal&lr=0.003&batch=32&seed=0"


def held_at(browser, t: int) -> tuple[float, float]:
    """The page's held-out sequence accuracy at step t: at the training length and at the test one."""
    assert wait_until(browser, f"{ROOT}.playground.heldTest.some((h) => h[0] === {t})")
    state = browser.execute_script(f"return [{ROOT}.playground.held, {ROOT}.playground.heldTest];")
    return dict(state[0])[t], {h[0]: h[1] for h in state[1]}[t]


def test_alibi_copies_at_a_longer_length_and_sinusoidal_does_not(site, server, browser):
    """Copy, causal, 100 steps on sequences of 8: held out at 16, ALiBi copies nearly every
    sequence and the sinusoidal table few (lib, seed 0: 1.00 and 0.13); each equal to the library's
    ``Run.held_out(16)`` within 2 points. Learned positions train at 8 and are offered no test length,
    with the reason on the form."""
    held = {}
    for kind in ("alibi", "sinusoidal"):
        load(browser, server, f"{COPY}&pos={kind}&test=16", CH18)
        steps(browser, 100)
        held[kind] = held_at(browser, 100)
        ref = library_run(
            pg.PlaygroundConfig(task="copy", positional=kind, causal=True, seed=0), 100
        )
        assert abs(held[kind][0] - ref.held_out()[1]) <= 0.02, (kind, held[kind])
        assert abs(held[kind][1] - ref.held_out(16)[1]) <= 0.02, (kind, held[kind])
        assert len(text_of(browser, ".book-pg-held-test")) == 1  # the dashed curve is drawn
        legend = text_of(browser, ".book-pg-legend-item")
        assert "held out at length 16: sequences right" in legend[2], legend
        assert "(at length 16: " in text_of(browser, ".book-pg-stats")[0]
    assert held["alibi"][0] >= 0.95 and held["sinusoidal"][0] >= 0.95  # both learn at 8
    assert held["alibi"][1] >= 0.95 and held["sinusoidal"][1] <= 0.5, held
    # learned positions: a link asking for 16 gets 8 and the reason; the form disables 16 and 32
    load(browser, server, f"{COPY}&pos=learned&test=16", CH18)
    message = browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-message').textContent;"
    )
    assert "test length 16 is not offered: learned positions have a table of 8 rows" in message
    assert browser.execute_script(f"return {ROOT}.querySelector('.book-pg-test').value;") == "8"
    disabled = browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll('.book-pg-test option')).map((o) => o.disabled);"
    )
    assert disabled == [False, True, True]
    assert "no vector for position 8" in text_of(browser, ".book-pg-offer")[0]
    steps(browser, 100)
    assert wait_until(browser, f"{ROOT}.playground.held.some((h) => h[0] === 100)")
    assert browser.execute_script(f"return {ROOT}.playground.heldTest.length;") == 0
    assert browser.execute_script(f"return {ROOT}.dataset.state;") == "computed"
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)


def test_rope_and_alibi_are_offered_at_width_32_and_the_form_says_so(site, server, browser):
    load(browser, server, f"{COPY.replace('width=32', 'width=64')}&pos=rope", CH18)
    message = browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-message').textContent;"
    )
    assert "width 64 is not offered with RoPE" in message and "width set to 32" in message
    assert browser.execute_script(f"return {ROOT}.querySelector('.book-pg-width').value;") == "32"
    assert (
        "width 16 and 64 not offered: in the browser, RoPE models come in width 32 only"
        in text_of(browser, ".book-pg-offer")[0]
    )
    # choosing a position table again offers every width
    browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-pos'); s.value = 'none'; s.dispatchEvent(new Event('change'));"
    )
    assert text_of(browser, ".book-pg-offer")[0] == ""
    # RoPE trains in the page as the library does
    browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-pos'); s.value = 'rope'; s.dispatchEvent(new Event('change'));"
    )
    steps(browser, 10)
    losses = browser.execute_script(f"return {ROOT}.playground.losses;")
    ref = library_run(pg.PlaygroundConfig(task="copy", positional="rope", causal=True), 10)
    assert max(abs(a - b[0]) for (_, a), b in zip(losses, ref.history)) < 1e-4


def test_chapter_18_shows_the_run_at_length_32_before_play(site, server, browser):
    """The chapter's preset (copy, ALiBi, causal, test length 32): its two held-out curves, computed
    by the library, drawn before any click, and the settings in the form."""
    load(browser, server, "", CH18)
    assert browser.execute_script(f"return {ROOT}.dataset.example;") == "chapter"
    assert browser.execute_script(
        f"return [{ROOT}.querySelector('.book-pg-pos').value, {ROOT}.querySelector('.book-pg-test').value];"
    ) == ["alibi", "32"]
    assert len(text_of(browser, ".book-pg-held-test")) == 1
    assert "held out at length 32" in text_of(browser, ".book-pg-legend-item")[2]
    # a link with another test length does not show the chapter's run
    load(browser, server, "#test=16", CH18)
    assert browser.execute_script(f"return {ROOT}.dataset.example;") == "other"
    assert "test length 16 (the chapter's: 32)" in text_of(browser, ".book-pg-stats")[0]


# --- RMSNorm and grouped-query attention (issue 32) ---------------------------------------------

MODERN = "#task=copy&layers=2&heads=4&kv=2&width=32&pos=rope&norm=rmsnorm&mask=causal&lr=0.003&batch=32&seed=0"


def test_rmsnorm_and_grouped_query_attention_train_as_the_library_does(site, server, browser):
    """Chapter 17's layer in the page (RMSNorm, 2 key/value heads for 4 heads, RoPE): its settings
    in the form and the link, its losses the library's within 1e-4 over 10 steps, and the sizes it is
    not exported at disabled with the reason; a link asking for RMSNorm at another size gets the
    exported one, and says so."""
    load(browser, server, MODERN)
    assert browser.execute_script(f"return {ROOT}.dataset.example;") == "other"
    assert browser.execute_script(
        f"return [{ROOT}.querySelector('.book-pg-norm').value, {ROOT}.querySelector('.book-pg-kv').value];"
    ) == ["rmsnorm", "2"]
    offer = text_of(browser, ".book-pg-offer")[0]
    titles = browser.execute_script(
        f"return Array.from({ROOT}.querySelectorAll('.book-pg-kv option')).map((o) => [o.disabled, o.title]);"
    )
    assert (
        titles[0][0]
        and "1 key/value head for 4 heads is not available in the browser" in titles[0][1]
    )
    assert titles[1] == [False, ""] and titles[2] == [False, ""]
    assert (
        "layers 1, heads 1 and 2, positions learned and sinusoidal and none and alibi not offered: "
        "RMSNorm and 2 key/value heads for 4 heads: in the browser, such models come at 2 layers"
        in offer
    )
    assert offer.count("RMSNorm and 2 key/value heads for 4 heads:") == 1  # each reason said once
    assert "with RoPE only (chapter 17's layer)" in offer
    steps(browser, 10)
    losses = browser.execute_script(f"return {ROOT}.playground.losses;")
    ref = library_run(
        pg.PlaygroundConfig(
            task="copy",
            n_layers=2,
            n_heads=4,
            n_kv_heads=2,
            positional="rope",
            norm="rmsnorm",
            causal=True,
        ),
        10,
    )
    assert max(abs(a - b[0]) for (_, a), b in zip(losses, ref.history)) < 1e-4
    assert "norm=rmsnorm" in browser.execute_script("return location.hash;")
    assert not console_errors(browser)
    # a link asking for RMSNorm at one layer: the exported size, and the message says why
    load(browser, server, "#task=copy&layers=1&heads=2&norm=rmsnorm&kv=1")
    message = browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-message').textContent;"
    )
    assert "key/value heads 1 is not offered" in message and "layers set to 2" in message
    assert browser.execute_script(
        f"return ['layers', 'heads', 'kv', 'norm'].map((k) => {ROOT}.querySelector(`.book-pg-${{k}}`).value);"
    ) == ["2", "4", "4", "rmsnorm"]


def test_more_heads_keep_multi_head_attention(site, server, browser):
    """With as many key/value heads as heads, choosing more heads keeps it so (kv follows heads): the
    size is not moved to grouped-query attention's."""
    load(browser, server)
    browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-heads'); s.value = '4'; s.dispatchEvent(new Event('change'));"
    )
    assert wait_until(browser, "location.hash.includes('heads=4')")
    assert browser.execute_script(
        f"return ['layers', 'heads', 'kv', 'norm'].map((k) => {ROOT}.querySelector(`.book-pg-${{k}}`).value);"
    ) == ["1", "4", "4", "layernorm"]
    assert "kv=4" in browser.execute_script("return location.hash;")


# --- a new test length, a new run beside the previous one (readers of chapters 8 and 18) ---------


def choose(browser, name: str, value: str) -> None:
    browser.execute_script(
        f"const s = {ROOT}.querySelector('.book-pg-{name}'); s.value = {value!r};"
        " s.dispatchEvent(new Event('change'));"
    )


def test_a_new_test_length_evaluates_the_same_run_and_the_form_says_why_not(site, server, browser):
    """Only the test length changes: the run trained so far stays (its steps, its curve at 8) and is
    evaluated at the new length from its weights now, as the library's run at that step is (within 2
    points). The position task then replaces 32 by 8, and says why in words of the task (no value the
    selector does not show)."""
    load(browser, server, f"{COPY}&pos=none&test=32")
    steps(browser, 25)
    assert wait_until(browser, f"{ROOT}.playground.heldTest.some((h) => h[0] === 25)")
    choose(browser, "test", "16")
    assert wait_until(browser, f"{ROOT}.dataset.retested === '16'", timeout=60)
    run = browser.execute_script(
        f"const s = {ROOT}.playground; return [s.t, s.losses.length, s.held.length, s.heldTest];"
    )
    assert run[:2] == [25, 25] and run[2] >= 1 and [h[0] for h in run[3]] == [25], run
    ref = library_run(pg.PlaygroundConfig(task="copy", positional="none", causal=True, seed=0), 25)
    assert abs(run[3][0][1] - ref.held_out(16)[1]) <= 0.02, (run[3], ref.held_out(16))
    assert "the same run, evaluated on held-out sequences of 16 from step 25" in (
        browser.execute_script(f"return {ROOT}.querySelector('.book-live-message').textContent;")
    )
    assert "test=16" in browser.execute_script("return location.hash;")
    steps(browser, 25)
    assert wait_until(browser, f"{ROOT}.playground.heldTest.some((h) => h[0] === 50)")
    assert "(at length 16: " in text_of(browser, ".book-pg-stats")[0]
    # back to 32, then the position task (answers 0 to 15: sequences of at most 16)
    choose(browser, "test", "32")
    assert wait_until(browser, f"{ROOT}.dataset.retested === '32'", timeout=60)
    choose(browser, "task", "position")
    assert wait_until(browser, f"{ROOT}.dataset.run === 'ready'", timeout=60)
    assert browser.execute_script(f"return {ROOT}.querySelector('.book-pg-test').value;") == "8"
    message = browser.execute_script(
        f"return {ROOT}.querySelector('.book-live-message').textContent;"
    )
    offer = text_of(browser, ".book-pg-offer")[0]
    assert "test length 32 is not offered" in message and "test length set to 8" in message
    assert "test length 32 not offered: the position task answers with positions" in offer
    assert "got" not in message + offer and "at most 16 long" in offer
    assert browser.execute_script(f"return {ROOT}.playground.t;") == 0  # a new task: a new run
    # back to a task that has sequences of 32: the length the reader chose comes back, and is said
    choose(browser, "task", "copy")
    assert wait_until(browser, f"{ROOT}.dataset.run === 'ready'", timeout=60)
    assert browser.execute_script(f"return {ROOT}.querySelector('.book-pg-test').value;") == "32"
    assert wait_until(
        browser,
        f"{ROOT}.querySelector('.book-live-message').textContent"
        ".includes('test length set back to 32, the length you chose')",
    )
    assert not console_errors(browser)


def test_a_new_run_after_a_settings_change_shows_the_previous_one_faded(site, server, browser):
    """Chapter 18's comparison: its ALiBi run's held-out curves stay drawn, faded and labelled, when
    positions change and the new run trains; Reset keeps them; the next change replaces them by the
    run it ends (one previous run)."""
    load(browser, server, "", CH18)
    prev = f"{ROOT}.querySelectorAll('.book-pg-prev-held, .book-pg-prev-held-test').length"
    legend = f"{ROOT}.querySelector('.book-pg-legend-prev')"
    # the previous run's settings, in the legend above the chart; nothing of it written inside the plot
    label = (
        f"[{legend}.textContent.match(/[(]([^;]*);/)[1], Array.from({ROOT}.querySelectorAll("
        "'.book-pg-curve text')).filter((e) => /previous|prev[.]/.test(e.textContent)).length]"
    )
    assert browser.execute_script(f"return [{prev}, {legend}.hidden];") == [0, True]
    chapter = browser.execute_script(f"return {ROOT}.playground.heldTest.map((h) => h[0]);")
    choose(browser, "pos", "sinusoidal")
    assert browser.execute_script(f"return [{prev}, {label}, {legend}.hidden];") == [
        2,
        ["positions ALiBi", 0],
        False,
    ]
    assert "positions ALiBi" in browser.execute_script(f"return {legend}.textContent;")
    assert (
        browser.execute_script(f"return {ROOT}.playground.prev.heldTest.map((h) => h[0]);")
        == chapter
    )
    steps(browser, 25)
    assert wait_until(browser, f"{ROOT}.playground.heldTest.some((h) => h[0] === 25)")
    assert len(text_of(browser, ".book-pg-held-test")) == 1  # the new run's dashed curve, and
    assert browser.execute_script(f"return [{prev}, {label}];") == [
        2,
        ["positions ALiBi", 0],
    ]
    browser.execute_script(f"{ROOT}.querySelector('.book-pg-reset').click();")
    assert browser.execute_script(f"return {prev};") == 2  # Reset: the same settings, kept
    steps(browser, 25)
    assert wait_until(browser, f"{ROOT}.playground.heldTest.some((h) => h[0] === 25)")
    ran = browser.execute_script(f"return {ROOT}.playground.held.map((h) => h[0]);")
    choose(browser, "pos", "none")
    assert browser.execute_script(f"return [{prev}, {label}];") == [
        2,
        ["positions sinusoidal", 0],
    ]
    assert browser.execute_script(f"return {ROOT}.playground.prev.held.map((h) => h[0]);") == ran
    # another task: no previous run drawn, another task's share is no mark for this one
    choose(browser, "task", "position")
    assert browser.execute_script(f"return [{prev}, {legend}.hidden];") == [0, True]
    assert not console_errors(browser)
