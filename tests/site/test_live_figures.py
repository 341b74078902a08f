"""The other live figures in a real browser with the network off (issue 13): the translator of chapter 4.

The translator is exported in float32, so the page's greedy translation must be the library's word for
word and its alignment within 1e-4 (float32 kernels that sum in another order differ by ~1e-6).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ..test_accessibility import contrast_ratio, relative_luminance
from .conftest import emulate, stop_emulating
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
        f"const root = document.querySelector({TRANSLATOR!r}); root.dataset.state = 'typing';root.querySelector('.book-live-input').value = arguments[0];root.querySelector('.book-live-compute').click();",
        text,
    )
    return wait_state(driver, TRANSLATOR, ("computed", "ready", "error"), timeout=60)


def read(driver):
    root = f"document.querySelector({TRANSLATOR!r})"
    return (
        json.loads(driver.execute_script(f"return {root}.dataset.tokens;")),
        np.array(json.loads(driver.execute_script(f"return {root}.dataset.values;"))),
    )


@pytest.fixture(scope="module")
def translator(site, server, browser):
    open_page(browser, f"{server}/{CH04}")
    assert (
        browser.execute_script(f"return document.querySelector({TRANSLATOR!r}).dataset.state;")
        == "example"
    )
    assert wait_until(
        browser, f"document.querySelector({TRANSLATOR!r}).querySelector('.book-live-button')"
    )
    # the button states the sizes of the files it fetches: the two ONNX files and their vocabulary
    # are 0.5 MB, not "1 MB" (review s23, 7)
    live = site / "_static" / "live"
    manifest = json.loads((live / "models" / "manifest.json").read_text())
    model = sum(
        (live / "models" / e["file"]).stat().st_size + (live / "models" / e["vocab"]).stat().st_size
        for e in (manifest["models"][f"translator_{part}"] for part in ("encoder", "decoder"))
    )
    runtime = manifest["runtime_bytes"]
    # the load button sits just under the input box, not at the figure's bottom (reader s30, ch04, 5)
    above = browser.execute_script(
        f"return document.querySelector({TRANSLATOR!r}).querySelector('.book-live-load')"
        ".previousElementSibling.className;"
    )
    assert above == "book-live-controls", above
    label = browser.execute_script(
        f"return document.querySelector({TRANSLATOR!r}).querySelector('.book-live-button')"
        ".textContent;"
    )
    assert (
        f"(downloads {(model + runtime) / 1e6:.0f} MB once: the model {model / 1e6:.1f} MB, "
        f"the runtime {runtime / 1e6:.0f} MB)" in label
    ), label
    browser.execute_script(
        f"document.querySelector({TRANSLATOR!r}).querySelector('.book-live-button').click();"
    )
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
    # the previous translation and heatmap are gone: nothing on screen reads as the empty input's
    root = f"document.querySelector({TRANSLATOR!r})"
    assert (
        browser.execute_script(
            f"return {root}.querySelector('.book-live-translation').textContent;"
        )
        == ""
    )
    assert (
        browser.execute_script(f"return {root}.querySelector('.book-live-map').children.length;")
        == 0
    )
    assert browser.execute_script(f"return {root}.dataset.tokens;") is None
    assert translate(browser, "the zebra runs 🙂") == "computed"
    # the unknown words quoted, so that one with its full stop reads “sleeps.” (reader s20, chapter 4)
    assert "“zebra”, “🙂”" in message(browser, TRANSLATOR)
    # and what an <unk> does to the output: a likely word in its place, usually wrong (reader s24),
    # or none ("the cat sleeps." gave "le chat": reader s36b)
    assert "usually a wrong word, or no word at all" in message(browser, TRANSLATOR)
    assert translate(browser, " ".join(["the cat sleeps"] * 20)) == "computed"
    assert "cut to 40 words" in message(browser, TRANSLATOR)
    assert (
        translate(browser, "The girl SLEEPS") == "computed" and message(browser, TRANSLATOR) == ""
    )
    assert read(browser)[0] == ["la", "fille", "dort", "<eos>"]


def test_nothing_leaves_the_site_and_no_console_error(translator, browser):
    assert not console_errors(browser)
    assert not requests_to_other_hosts(browser)


CH13 = "notebooks/13_gpt.html"
GPT = ".book-live[data-live='gpt']"


def set_prompt(driver, text: str, button: str = ".book-live-compute") -> str:
    driver.execute_script(
        f"const root = document.querySelector({GPT!r}); root.dataset.state = 'typing';if (arguments[0] !== null) root.querySelector('.book-live-input').value = arguments[0];root.querySelector({button!r}).click();",
        text,
    )
    return wait_state(driver, GPT, ("computed", "ready", "error"), timeout=60)


def gpt_values(driver):
    return np.array(
        json.loads(driver.execute_script(f"return document.querySelector({GPT!r}).dataset.values;"))
    )


@pytest.fixture(scope="module")
def gpt_page(site, server, browser):
    open_page(browser, f"{server}/{CH13}")
    assert (
        browser.execute_script(f"return document.querySelector({GPT!r}).dataset.state;")
        == "example"
    )
    assert wait_until(
        browser, f"document.querySelector({GPT!r}).querySelector('.book-live-button')"
    )
    browser.execute_script(
        f"document.querySelector({GPT!r}).querySelector('.book-live-button').click();"
    )
    return wait_state(browser, GPT, ("computed", "error"), timeout=60)


def test_the_page_predicts_as_the_library_does(gpt_page, browser, reference):
    assert gpt_page == "computed", message(browser, GPT)
    for ref in reference["gpt"]:
        assert set_prompt(browser, ref["prompt"]) == "computed", message(browser, GPT)
        # float32 logits equal to 1e-4 (tests/test_export.py); probabilities then within 1e-5
        assert np.abs(gpt_values(browser) - np.array(ref["next_probs"])).max() < 1e-5
        last = json.loads(
            browser.execute_script(
                f"return document.querySelector({GPT!r}).querySelector('.book-live-heatmap').dataset.values;"
            )
        )
        expected = np.array(ref["last_attention"])  # [L, H, T]
        assert np.abs(np.array(last) - expected.reshape(-1, expected.shape[-1])).max() < 1e-4


def test_greedy_steps_write_the_librarys_continuation(gpt_page, browser, reference):
    ref = reference["gpt"][0]
    assert set_prompt(browser, ref["prompt"]) == "computed"
    for _ in range(len(ref["greedy"])):
        assert set_prompt(browser, None, ".book-live-greedy") == "computed"
    words = browser.execute_script(
        f"return document.querySelector({GPT!r}).querySelector('.book-live-input').value;"
    )
    assert words.split()[len(ref["prompt"].split()) :] == ref["greedy"]


def test_sampling_settings_follow_the_librarys_rules(gpt_page, browser, reference):
    ref = reference["gpt"][0]
    assert set_prompt(browser, ref["prompt"]) == "computed"
    probs = np.array(ref["next_probs"])

    def with_settings(t, k, p):
        browser.execute_script(
            f"const root = document.querySelector({GPT!r});for (const [cls, v] of [['temperature', arguments[0]], ['top-k', arguments[1]], ['top-p', arguments[2]]]) {{  const box = root.querySelector('.book-live-' + cls); box.value = v;  box.dispatchEvent(new Event('input')); }}",
            t,
            k,
            p,
        )
        return gpt_values(browser)

    assert with_settings("0", "0", "1").tolist() == np.eye(len(probs))[probs.argmax()].tolist()
    top3 = with_settings("1", "3", "1")
    assert (top3 > 0).sum() == 3 and abs(top3.sum() - 1) < 1e-9
    expected = np.where(probs >= np.sort(probs)[-3], probs, 0.0)
    assert np.abs(top3 - expected / expected.sum()).max() < 1e-5
    nucleus = with_settings("1", "0", "0.9")
    kept = np.sort(probs)[::-1]
    n = int(
        np.searchsorted(np.cumsum(kept) - kept, 0.9 * kept.sum())
    )  # the smallest set reaching 0.9
    assert (nucleus > 0).sum() == n
    # a bad setting is said, as an unknown word is, and draws no bars (review 13c, point 15)
    for t, k, p, box in [("-1", "0", "1", "Temperature"), ("1", "-3", "1", "Top-k"),
                         ("1", "0", "1.5", "Top-p")]:  # fmt: skip
        assert with_settings(t, k, p).tolist() == [] and box in message(browser, GPT)
        # nor the previous prompt's map beside the error (reader s32, chapter 13, point 7)
        assert (
            browser.execute_script(
                f"return document.querySelector({GPT!r}).querySelector('.book-live-map').childElementCount;"
            )
            == 0
        )
    # top-p 0: the most probable token alone, greedy, and the figure says so
    assert with_settings("1", "0", "0").tolist() == np.eye(len(probs))[probs.argmax()].tolist()
    assert "greedy" in message(browser, GPT)
    # its one bar, not the tokens at 0 after it in vocabulary order (reader s27, ch13, point 6)
    bars = browser.execute_script(
        f"return document.querySelector({GPT!r}).querySelectorAll('.book-live-bars rect').length;"
    )
    assert bars == 1
    with_settings("1", "0", "1")
    assert message(browser, GPT) == ""


def test_steps_stop_at_eos(gpt_page, browser, reference):
    # reader s32, chapter 13, point 7: steps ran on past <eos> into <bos> and a new document
    ref = reference["gpt"][1]
    n = ref["greedy"].index("<eos>") + 1
    assert set_prompt(browser, ref["prompt"]) == "computed"
    for _ in range(n):
        assert set_prompt(browser, None, ".book-live-greedy") == "computed"
    words = f"return document.querySelector({GPT!r}).querySelector('.book-live-input').value;"
    written = browser.execute_script(words)
    assert written.split()[len(ref["prompt"].split()) :] == ref["greedy"][:n]
    assert "<eos>" in message(browser, GPT)
    for button in (".book-live-greedy", ".book-live-sample"):
        browser.execute_script(
            f"document.querySelector({GPT!r}).querySelector({button!r}).click();"
        )
        assert browser.execute_script(words) == written
    assert set_prompt(browser, ref["prompt"]) == "computed" and message(browser, GPT) == ""


def test_gpt_bad_input_gets_a_message(gpt_page, browser):
    assert set_prompt(browser, "the zebra slept") == "computed" and "zebra" in message(browser, GPT)
    # the heatmap's labels are the tokens the model read: <unk> for the unknown word
    tokens = json.loads(
        browser.execute_script(f"return document.querySelector({GPT!r}).dataset.tokens;")
    )
    assert tokens == ["<bos>", "the", "<unk>", "slept"]
    # the note sits under the controls, above the bars and the map (reader s17, chapter 13: it was
    # appended under the map, 900 px below the prompt box on a phone)
    assert browser.execute_script(
        f"const r = document.querySelector({GPT!r}); const m = r.querySelector('.book-live-message');"
        "const v = r.querySelector('.book-live-views');"
        "return !!(m.compareDocumentPosition(v) & Node.DOCUMENT_POSITION_FOLLOWING);"
    )
    # a bare "." is labelled "(period)" under the map's column, as in Fig. 13.4
    assert set_prompt(browser, "mia had a cat .") == "computed"
    labels = browser.execute_script(
        f"return [...document.querySelector({GPT!r}).querySelectorAll('.book-live-map svg text')]"
        ".map(t => t.textContent);"
    )
    assert "(period)" in labels and "." not in labels, labels
    assert set_prompt(browser, "") == "computed" and "empty" in message(browser, GPT)
    assert set_prompt(browser, "mia had a cat . " * 20) == "computed"
    assert "cut to the last 64 tokens" in message(browser, GPT)
    assert not console_errors(browser) and not requests_to_other_hosts(browser)


STEP_BUTTONS_TOPS = (
    "const r = document.querySelector(arguments[0]);"
    "return ['.book-live-greedy', '.book-live-sample']"
    ".map(s => r.querySelector(s).getBoundingClientRect().top);"
)


def test_step_buttons_stay_on_one_line(gpt_page, browser):
    # reader at 1280 px, chapter 13: "Sample step" wrapped alone onto a line under "Greedy step"
    for width in (1280, 360):
        if width == 360:
            emulate(browser, 360, 740)
        try:
            tops = browser.execute_script(STEP_BUTTONS_TOPS, GPT)
        finally:
            if width == 360:
                stop_emulating(browser)
        assert abs(tops[0] - tops[1]) < 1, (width, tops)


def set_fields(driver, selector: str, values: dict) -> str:
    driver.execute_script(
        f"const root = document.querySelector({selector!r});for (const [cls, v] of Object.entries(arguments[0])) {{  const box = root.querySelector('.book-live-' + cls); box.value = v;  box.dispatchEvent(new Event('input')); }}",
        values,
    )
    return driver.execute_script(f"return document.querySelector({selector!r}).dataset.state;")


def test_positional_encoding_for_any_position_dimension_and_base(server, browser):
    from lib.positional import sinusoidal_encoding

    sel = ".book-live[data-live='positional-encoding']"
    open_page(browser, f"{server}/notebooks/08_positional_encoding.html")
    assert (
        browser.execute_script(f"return document.querySelector({sel!r}).dataset.state;")
        == "computed"
    )
    for P, D, base, p in [
        (100, 128, 10000, 10),
        (20, 512, 10000, 19),
        (300, 64, 100, 250),
        (5, 6, 2.5, 0),
    ]:
        assert (
            set_fields(browser, sel, {"positions": P, "d_model": D, "base": base, "position": p})
            == "computed"
        )
        got = np.array(
            json.loads(
                browser.execute_script(f"return document.querySelector({sel!r}).dataset.values;")
            )
        )
        expected = sinusoidal_encoding(P, D, float(base))[p].numpy()  # float32
        assert got.shape == (D,) and np.abs(got - expected).max() < 1e-5
    assert (
        set_fields(browser, sel, {"positions": 10, "d_model": 16, "base": 0.5, "position": 3})
        == "error"
    )
    assert "base" in message(browser, sel)
    assert set_fields(browser, sel, {"base": 10000, "position": 10}) == "error"
    assert "position: a whole number from 0 to 9" in message(browser, sel)
    assert set_fields(browser, sel, {"position": 9}) == "computed" and message(browser, sel) == ""
    # with no valid number of positions, the position's range is said in words (was "0 to -6")
    assert set_fields(browser, sel, {"positions": -5}) == "error"
    said = message(browser, sel)
    assert "positions: a whole number from 1 to 512" in said and "-6" not in said
    assert set_fields(browser, sel, {"position": -1}) == "error"
    assert "position: a whole number from 0 to positions - 1" in message(browser, sel)
    assert set_fields(browser, sel, {"position": 9}) == "error"  # positions still -5
    assert set_fields(browser, sel, {"positions": 10}) == "computed" and message(browser, sel) == ""
    axes = browser.execute_script(
        f"return document.querySelector({sel!r}).querySelector('.book-live-axes').textContent;"
    )
    assert "0 at the top, 9 at the bottom" in axes and "0 at the left, 15 at the right" in axes
    # sines and cosines come in pairs: an odd d_model is refused (its wavelengths would be wrong), and
    # the status no longer describes a table of that size
    assert set_fields(browser, sel, {"d_model": 33}) == "error"
    assert "d_model: an even number (sines and cosines come in pairs), got 33" in message(
        browser, sel
    )
    status = browser.execute_script(
        f"return document.querySelector({sel!r}).querySelector('.book-live-status').textContent;"
    )
    assert status.startswith("Not redrawn") and "wavelengths" not in status
    assert set_fields(browser, sel, {"d_model": 32}) == "computed" and message(browser, sel) == ""
    assert not console_errors(browser) and not requests_to_other_hosts(browser)


def test_masked_softmax_table_with_the_readers_scores(server, browser):
    import torch

    from lib.attention import causal_mask, masked_softmax

    sel = ".book-live[data-live='masked-softmax']"
    open_page(browser, f"{server}/notebooks/03_scoring_functions.html")
    assert (
        browser.execute_script(f"return document.querySelector({sel!r}).dataset.state;")
        == "computed"
    )
    boxes = f"document.querySelector({sel!r}).querySelectorAll('table input')"
    scores = torch.tensor(
        [[0.3, -1.0, 2.0, 0.0], [5.0, 1.5, 0.0, 0.2], [0.0, 0.0, 0.0, 9.0], [-2, 1, 3, 0.5]]
    )
    for causal in (True, False):
        browser.execute_script(
            f"const boxes = {boxes}; arguments[0].flat().forEach((v, i) => {{ boxes[i].value = v; boxes[i].dispatchEvent(new Event('input')); }});const c = document.querySelector({sel!r}).querySelector('.book-live-causal');if (c.checked !== arguments[1]) {{ c.click(); }}",
            scores.tolist(),
            causal,
        )
        got = np.array(
            json.loads(
                browser.execute_script(f"return document.querySelector({sel!r}).dataset.values;")
            )
        )
        mask = causal_mask(4) if causal else torch.ones(4, 4, dtype=torch.bool)
        assert np.abs(got - masked_softmax(scores, mask).numpy()).max() < 1e-6
        heading = browser.execute_script(
            f"return document.querySelector({sel!r}).querySelector('table caption').textContent;"
        )
        assert ("a query never sees a later key" in heading) == causal, heading
    browser.execute_script(
        f"const b = {boxes}[0]; b.value = ''; b.dispatchEvent(new Event('input'));"
    )
    assert "must be a number" in message(browser, sel)
    assert not console_errors(browser) and not requests_to_other_hosts(browser)


def test_masked_softmax_numbers_stay_open_as_the_figure_is_redrawn(server, browser):
    """Reader s30, chapter 3: the folded "The numbers, as a table" closed again each time the figure
    was drawn anew (the causal-mask box switched): a reader who opened it had to reopen it."""
    sel = ".book-live[data-live='masked-softmax']"
    open_page(browser, f"{server}/notebooks/03_scoring_functions.html")
    state = (
        f"const root = document.querySelector({sel!r});"
        "const d = root.querySelectorAll('details.book-live-numbers');"
    )
    assert browser.execute_script(state + "return [...d].every((x) => !x.open) && d.length > 0;")
    browser.execute_script(state + "d.forEach((x) => { x.open = true; });")
    for _ in range(2):  # on, then off
        browser.execute_script(state + "root.querySelector('.book-live-causal').click();")
        assert browser.execute_script(state + "return d.length > 0 && [...d].every((x) => x.open);")
    assert not console_errors(browser)


def _rgb(css: str) -> tuple[int, int, int]:
    """(r, g, b) of a computed colour, 'rgb(87, 96, 106)' or 'rgba(...)'."""
    return tuple(int(float(x)) for x in css[css.index("(") + 1 : -1].split(",")[:3])


def test_masked_softmax_table_tells_masked_cells_apart(server, browser):
    """Review s24, chapter 3: a masked score's box was told from the others by a pale grey alone
    (1.1:1 against white). Now it is hatched and edged with a dark dashed line, 3:1 at least against
    the page: a pattern, not a colour, and only where the mask says so."""
    sel = ".book-live[data-live='masked-softmax']"
    open_page(browser, f"{server}/notebooks/03_scoring_functions.html")
    styles = browser.execute_script(
        f"""const root = document.querySelector({sel!r});
        const c = root.querySelector('.book-live-causal'); if (!c.checked) {{ c.click(); }}
        const page = getComputedStyle(root.closest('.text_html') || document.body).backgroundColor;
        return [...root.querySelectorAll('table input')].map((box) => {{
          const s = getComputedStyle(box);
          return {{masked: box.disabled, cell: box.parentElement.classList.contains('book-live-masked'),
                   style: s.borderTopStyle, width: parseFloat(s.borderTopWidth), edge: s.borderTopColor,
                   image: s.backgroundImage, page: page}};
        }});"""
    )
    assert len(styles) == 16
    masked = [s for s in styles if s["masked"]]
    assert len(masked) == 6  # above the diagonal of a 4 x 4 causal mask
    for s in styles:
        assert s["cell"] == s["masked"], s
        if s["masked"]:
            assert s["style"] == "dashed" and s["width"] >= 2 and "gradient" in s["image"], s
            page = _rgb(s["page"]) if "0, 0, 0, 0" not in s["page"] else (255, 255, 255)
            assert contrast_ratio(_rgb(s["edge"]), page) >= 3, s
        else:
            assert s["style"] != "dashed" and s["image"] == "none", s
    assert not console_errors(browser)


def test_score_functions_follow_the_dragged_points(server, browser):
    import torch

    from lib.attention import cosine_score, dot_product_score, scaled_dot_product_score

    sel = ".book-live[data-live='score-functions']"
    open_page(browser, f"{server}/notebooks/03_scoring_functions.html")
    assert (
        browser.execute_script(f"return document.querySelector({sel!r}).dataset.state;")
        == "computed"
    )
    example = json.loads(
        browser.execute_script(
            f"return document.querySelector({sel!r}).querySelector('.book-live-example').textContent;"
        )
    )
    p = {k: torch.tensor(v) for k, v in example["params"].items()}
    # the plane fits the vectors (review ch03_s22, point 10: at -4 .. 4 they were 35-40 px long)
    own = [example["query"], *example["keys"]]
    assert plane_fits(browser, sel, own) >= 0.6 * 150  # every vector, in the 300 px plane
    long_k2 = [own[0], own[1], [0.0, 3.0], own[3]]
    set_fields(browser, sel, {"k2-0": 0, "k2-1": 3})  # the chapter's experiment: the plane grows
    plane_fits(browser, sel, long_k2)
    set_fields(browser, sel, {"k2-1": 1})  # ... and shrinks back
    plane_fits(browser, sel, own)
    for q, keys in [
        ([2.0, -1.0], [[0.5, 0.5], [2.0, 0.0], [-1.0, 1.5]]),
        ([0.0, 0.1], [[1, 1], [1, 1], [0, -2]]),
    ]:
        values = {f"q-{c}": q[c] for c in (0, 1)}
        values.update({f"k{i + 1}-{c}": keys[i][c] for i in range(3) for c in (0, 1)})
        set_fields(browser, sel, values)
        got = json.loads(
            browser.execute_script(f"return document.querySelector({sel!r}).dataset.values;")
        )
        qt, kt = torch.tensor([[q]]), torch.tensor([keys], dtype=torch.float32)
        hidden = torch.tanh(qt @ p["W_q"].T + (kt @ p["W_k"].T))  # [1, 3, H]
        expected = {
            "dot": dot_product_score(qt, kt),
            "scaled dot": scaled_dot_product_score(qt, kt),
            "cosine": cosine_score(qt, kt),
            "general": qt @ p["W_a"] @ kt.transpose(1, 2),
            "additive": (hidden @ p["v_a"])[None],
        }
        for name, s in expected.items():
            assert (
                np.abs(np.array(got[name]) - torch.softmax(s.reshape(-1), -1).numpy()).max() < 1e-5
            ), name
    # dragging moves the point and recomputes
    plane = browser.find_element("css selector", f"{sel} .book-live-plane")
    from selenium.webdriver import ActionChains

    before = browser.execute_script(f"return document.querySelector({sel!r}).dataset.values;")
    handle = browser.find_element("css selector", f"{sel} g.pt[data-index='1'] circle")
    ActionChains(browser).click_and_hold(handle).move_by_offset(40, -30).release().perform()
    assert (
        browser.execute_script(f"return document.querySelector({sel!r}).dataset.values;") != before
    )
    assert plane is not None
    moved = [
        [
            float(
                browser.find_element("css selector", f"{sel} .book-live-{n}-{c}").get_attribute(
                    "value"
                )
            )
            for c in (0, 1)
        ]
        for n in ("q", "k1", "k2", "k3")
    ]
    plane_fits(browser, sel, moved)  # refitted once the point is let go
    # the table: rows in the order of the static picture's bars, each weight shaded by its value
    # (a darker shade for a smaller weight) with its number readable on it (reader: "I had to read
    # digits"); the numbers stay in the cells
    table_shading(browser, sel, example)
    set_fields(browser, sel, {"q-0": "x"})
    assert "must be a number" in message(browser, sel)
    assert not console_errors(browser) and not requests_to_other_hosts(browser)


PLANE_POINTS = """
const svg = document.querySelector(arguments[0]).querySelector('.book-live-plane');
const box = svg.getBoundingClientRect(), k = 300 / box.width;
return [...svg.querySelectorAll('g.pt')].map(g => {
  const c = g.querySelector('circle'), t = g.querySelector('text').getBoundingClientRect();
  return {cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')),
          label: [(t.left - box.left) * k, (t.top - box.top) * k,
                  (t.right - box.left) * k, (t.bottom - box.top) * k]};
});
"""


def plane_fits(browser, sel: str, points: list) -> float:
    """The plane's span is lib.viz.live.score_plane_span's for these points, every point and its
    label lie inside the 300 px plane; returns the shortest vector drawn, in px."""
    from lib.viz.live import score_plane_span

    span = browser.execute_script(f"return document.querySelector({sel!r}).dataset.span;")
    assert float(span) == score_plane_span(points), (span, points)
    drawn = browser.execute_script(PLANE_POINTS, sel)
    for point, d in zip(points, drawn):
        expected = (150 + point[0] / float(span) * 150, 150 - point[1] / float(span) * 150)
        assert abs(d["cx"] - expected[0]) < 0.5 and abs(d["cy"] - expected[1]) < 0.5, (point, d)
        assert 0 <= min(d["label"]) and max(d["label"]) <= 300, (point, d)
    return min(math.hypot(d["cx"] - 150, d["cy"] - 150) for d in drawn)


TABLE_CELLS = """
const rows = [...document.querySelector(arguments[0]).querySelectorAll('table tbody tr')];
const rgb = c => c.match(/[0-9.]+/g).slice(0, 3).map(Number);
return rows.map(tr => ({
  name: tr.querySelector('th').textContent,
  cells: [...tr.querySelectorAll('td')].map(td => {
    const s = getComputedStyle(td);
    return {text: td.textContent, weight: Number(td.dataset.weight),
            background: rgb(s.backgroundColor), color: rgb(s.color)};
  }),
}));
"""


def table_shading(browser, sel: str, example: dict) -> None:
    from lib.viz.live import score_functions_figure

    values = {f"q-{c}": example["query"][c] for c in (0, 1)}
    values.update({f"k{i + 1}-{c}": k[c] for i, k in enumerate(example["keys"]) for c in (0, 1)})
    set_fields(browser, sel, values)  # back to the figure's own points
    rows = browser.execute_script(TABLE_CELLS, sel)
    assert [c["text"] for c in rows[0]["cells"]] == [
        f"{w:.2f}" for w in example["weights"]["cosine"]
    ]
    static = list(score_functions_figure([1.0, 0.5], [[1.0, 0.0]]).example["weights"])
    # the chapter's order, as its tables and the slider figure (reader s23, chapter 3)
    chapter = ["cosine", "additive", "general", "dot", "scaled dot"]
    assert [r["name"] for r in rows] == list(example["weights"]) == static == chapter
    cells = [c for r in rows for c in r["cells"]]
    assert len(cells) == 5 * 3
    for c in cells:
        assert c["text"] == f"{c['weight']:.2f}"  # the number kept in its cell
        assert contrast_ratio(c["color"], c["background"]) >= 4.5, c  # WCAG AA for normal text
    # the shade follows the value: a larger weight, a lighter cell (cividis grows in lightness)
    by_weight = sorted(cells, key=lambda c: c["weight"])
    shades = [relative_luminance(c["background"]) for c in by_weight]
    assert all(a <= b + 1e-9 for a, b in zip(shades, shades[1:])), shades
    assert shades[-1] - shades[0] > 0.2
