"""Accessibility: colour-blind-safe colormaps, WCAG AA text contrast on the built site, sliders usable with
the keyboard.

(a) Colormaps. Every colormap named in ``lib/`` and in the chapters must be in :data:`ALLOWED_CMAPS`:
    - perceptually uniform maps whose lightness rises monotonically: viridis, cividis, magma, inferno,
      plasma (van der Walt and Smith's maps for matplotlib 2.0; cividis was further optimised for readers
      with deuteranomaly, Nunez et al. 2018, PLoS ONE 13(7): e0199239). A reader who cannot tell hues
      apart still reads the value from the lightness alone;
    - grey scales (Greys, gray, binary) and ColorBrewer's single-hue sequential maps (Blues, Greens,
      Oranges, Purples, Reds): one hue, value encoded by lightness only;
    - ColorBrewer's diverging maps that colorbrewer2.org marks "colorblind safe": PuOr (the book's), RdBu,
      BrBG, PiYG, PRGn, RdYlBu. Their two arms differ in lightness as well as in hue.
    Reversed variants (``_r``) are allowed with their base map. Everything else is refused, in particular
    the rainbow maps (jet, rainbow, hsv, gist_rainbow, nipy_spectral, turbo, Spectral, RdYlGn), whose
    lightness is not monotone and whose red-green arms coincide for deuteranopes.
(b) Contrast. On a few pages of the built site, a headless Chromium renders the text; for body text, links,
    code (inline, code cells and their syntax-highlighted tokens, outputs) and admonition titles the test
    reads the computed colour of the text and of every ancestor's background, composites them (alpha
    included) over the white canvas, and requires the WCAG 2.x contrast ratio of at least 4.5:1 (level AA
    for normal text), in the light mode the site opens in and in the dark mode a reader can switch to.
    :func:`contrast_ratio` is checked on known colour pairs in a unit test that always runs.
(c) Keyboard. The sliders of the interactive figures (lib.viz.interactive) are saved in each page's widget
    state and drawn by the ipywidgets HTML manager: the saved sliders must be enabled, not taken out of
    the tab order, and labelled; in the browser every slider handle must be focusable (tabindex >= 0,
    role "slider") and move with the arrow keys, changing the figure.

The site tests (marked ``site`` / ``browser``) use the fixtures of ``tests/site/conftest.py``: like the other
site tests they need ``make book`` first (a missing site is a failure there, by design) and Chromium.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import time
from pathlib import Path

import matplotlib
import nbformat
import pytest

from tests.site.conftest import site_pages

ROOT = Path(__file__).resolve().parents[1]

# --- (a) colour-blind-safe colormaps ---------------------------------------------------------------------

PERCEPTUALLY_UNIFORM = {"viridis", "cividis", "magma", "inferno", "plasma"}
GREY_AND_SINGLE_HUE = {"Greys", "gray", "binary", "Blues", "Greens", "Oranges", "Purples", "Reds"}
COLORBLIND_SAFE_DIVERGING = {"PuOr", "RdBu", "BrBG", "PiYG", "PRGn", "RdYlBu"}
ALLOWED_CMAPS = PERCEPTUALLY_UNIFORM | GREY_AND_SINGLE_HUE | COLORBLIND_SAFE_DIVERGING
FORBIDDEN_EXAMPLES = {
    "jet",
    "rainbow",
    "hsv",
    "gist_rainbow",
    "nipy_spectral",
    "turbo",
    "Spectral",
    "RdYlGn",
}

_CMAP_FUNCTIONS = {"get_cmap", "get_cmap_by_name"}


def _allowed(name: str) -> bool:
    return name.removesuffix("_r") in ALLOWED_CMAPS


def _dotted(node: ast.AST) -> str:
    """'viz.SEQUENTIAL_CMAP' for an Attribute chain, 'CMAP' for a Name, '' otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def colormap_uses(source: str, origin: str) -> list[tuple[str, int, str, str]]:
    """Every place ``source`` names a colormap: (origin, line, "name" or "reference", the name or the dotted
    reference). Found: cmap=... keywords, get_cmap(...), colormaps[...], a "cmap"/"image.cmap" entry of a
    dict, and assignments to a variable whose name contains "cmap" (e.g. SEQUENTIAL_CMAP = "cividis")."""
    found = []

    def value(node: ast.AST, line: int) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((origin, line, "name", node.value))
        elif _dotted(node) and "cmap" in _dotted(node).rsplit(".", 1)[-1].lower():
            found.append((origin, line, "reference", _dotted(node)))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "cmap":
                    value(keyword.value, node.lineno)
            if _dotted(node.func).rsplit(".", 1)[-1] in _CMAP_FUNCTIONS and node.args:
                value(node.args[0], node.lineno)
        elif (
            isinstance(node, ast.Subscript)
            and _dotted(node.value).rsplit(".", 1)[-1] == "colormaps"
        ):
            value(node.slice, node.lineno)
        elif isinstance(node, ast.Dict):
            for key, item in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value in ("cmap", "image.cmap"):
                    value(item, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (
                any("cmap" in _dotted(t).rsplit(".", 1)[-1].lower() for t in targets)
                and node.value is not None
            ):
                value(node.value, node.lineno)
    return found


def _code_of(path: Path) -> list[tuple[str, str]]:
    """(origin, Python source) of a .py file or of each code cell of a notebook (IPython magics dropped)."""
    if path.suffix == ".py":
        return [(str(path.relative_to(ROOT)), path.read_text())]
    cells = nbformat.read(path, as_version=4).cells
    out = []
    for i, cell in enumerate(cells):
        if cell.cell_type == "code":
            lines = [
                line
                for line in cell.source.splitlines()
                if not line.lstrip().startswith(("%", "!"))
            ]
            out.append((f"{path.relative_to(ROOT)} cell {i}", "\n".join(lines)))
    return out


def repository_colormap_uses() -> list[tuple[str, int, str, str]]:
    files = sorted((ROOT / "lib").rglob("*.py")) + sorted((ROOT / "notebooks").glob("*.ipynb"))
    return [
        use
        for path in files
        for origin, source in _code_of(path)
        for use in colormap_uses(source, origin)
    ]


def test_the_allow_list_names_real_colormaps_and_excludes_the_rainbows():
    assert all(name in matplotlib.colormaps for name in ALLOWED_CMAPS | FORBIDDEN_EXAMPLES)
    assert not ALLOWED_CMAPS & FORBIDDEN_EXAMPLES
    assert (
        _allowed("cividis") and _allowed("PuOr_r") and not _allowed("jet") and not _allowed("jet_r")
    )


def test_the_scanner_finds_colormaps_in_every_form():
    """The repository scan below must be able to fail: it finds names written in each of these ways."""
    source = """
import matplotlib.pyplot as plt
BAD_CMAP = "jet"
ax.imshow(x, cmap="rainbow")
ax.scatter(x, y, c=z, cmap=viz.SEQUENTIAL_CMAP)
m = plt.get_cmap("hsv")
n = matplotlib.colormaps["turbo"]
plt.rcParams.update({"image.cmap": "nipy_spectral"})
fine = plt.get_cmap("viridis_r")
"""
    uses = colormap_uses(source, "example")
    # ast.walk's order is not the source's
    names = sorted((kind, value) for _, _, kind, value in uses)
    assert names == sorted(
        [
            ("name", "jet"),
            ("name", "rainbow"),
            ("reference", "viz.SEQUENTIAL_CMAP"),
            ("name", "hsv"),
            ("name", "turbo"),
            ("name", "nipy_spectral"),
            ("name", "viridis_r"),
        ]
    )
    assert sorted(v for kind, v in names if kind == "name" and not _allowed(v)) == [
        "hsv",
        "jet",
        "nipy_spectral",
        "rainbow",
        "turbo",
    ]


def test_every_colormap_in_the_library_and_the_chapters_is_colour_blind_safe():
    uses = repository_colormap_uses()
    constants = {
        value for origin, _, kind, value in uses if kind == "name" and origin.startswith("lib/viz")
    }
    assert {"cividis", "PuOr"} <= constants, "the scan must see the book's own colormap constants"
    offenders = [
        f"{origin}, line {line}: {value!r}"
        for origin, line, kind, value in uses
        if kind == "name" and not _allowed(value)
    ]
    assert not offenders, (
        "colormaps that are not colour-blind safe (see ALLOWED_CMAPS): " + "; ".join(offenders)
    )
    from lib import viz

    # references must be the book's constants, which are safe
    for origin, line, kind, reference in uses:
        if kind == "reference":
            name = reference.rsplit(".", 1)[-1]
            assert name in ("SEQUENTIAL_CMAP", "DIVERGING_CMAP", "CMAP"), (
                f"{origin}, line {line}: {reference}"
            )
            if hasattr(viz, name):
                assert _allowed(getattr(viz, name)), (
                    f"{origin}, line {line}: {reference} = {getattr(viz, name)}"
                )


def test_the_book_style_uses_a_safe_colormap_and_colour_cycle():
    from lib import viz

    viz.set_style()
    try:
        assert _allowed(matplotlib.rcParams["image.cmap"])
        cycle = [c["color"] for c in matplotlib.rcParams["axes.prop_cycle"]]
        safe = [
            c["color"] for c in matplotlib.style.library["tableau-colorblind10"]["axes.prop_cycle"]
        ]
        assert cycle == safe  # Tableau's colour-blind-safe palette of 10 colours
    finally:
        matplotlib.rcdefaults()


# --- (b) WCAG contrast -------------------------------------------------------------------------------------

AA_NORMAL_TEXT = 4.5


def relative_luminance(rgb) -> float:
    """WCAG 2.x relative luminance of an sRGB colour given as three numbers 0-255."""

    def linear(c: float) -> float:
        c = c / 255
        # WCAG 2.x writes the threshold as 0.03928 (from an old sRGB draft); 0.04045 is the sRGB standard's.
        # No 8-bit value lies between the two (10/255 = 0.0392, 11/255 = 0.0431), so they agree here.
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(float(c)) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground, background) -> float:
    """(L_lighter + 0.05) / (L_darker + 0.05), from 1 (no contrast) to 21 (black on white)."""
    a, b = relative_luminance(foreground), relative_luminance(background)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def composite(top, bottom):
    """``top`` (r, g, b, alpha 0-1) painted over the opaque ``bottom`` (r, g, b): the colour the eye sees."""
    alpha = top[3] if len(top) > 3 else 1.0
    return tuple(alpha * t + (1 - alpha) * u for t, u in zip(top[:3], bottom[:3]))


def test_contrast_ratio_on_known_pairs():
    white, black = (255, 255, 255), (0, 0, 0)
    assert contrast_ratio(black, white) == pytest.approx(21.0)
    assert contrast_ratio(white, white) == pytest.approx(1.0)
    assert contrast_ratio(white, black) == contrast_ratio(black, white)  # order does not matter
    # ratios as published (WebAIM, WCAG), written to 2 decimals: abs=0.005 is that rounding
    # #777 fails AA...
    assert contrast_ratio((0x77, 0x77, 0x77), white) == pytest.approx(4.48, abs=0.005)
    # ...#767676 passes
    assert contrast_ratio((0x76, 0x76, 0x76), white) == pytest.approx(4.54, abs=0.005)
    # pure blue on white
    assert contrast_ratio((0, 0, 255), white) == pytest.approx(8.59, abs=0.005)
    # pure red: fails AA
    assert contrast_ratio((255, 0, 0), white) == pytest.approx(4.00, abs=0.005)
    # written to 4 decimals (rounding <= 5e-5): abs=1e-4
    assert relative_luminance((0x80, 0x80, 0x80)) == pytest.approx(0.2159, abs=1e-4)


def test_composite_blends_semi_transparent_colours():
    assert composite((0, 0, 0, 0.5), (255, 255, 255)) == pytest.approx((127.5, 127.5, 127.5))
    assert composite((10, 20, 30), (255, 255, 255)) == (10, 20, 30)  # opaque: itself
    assert composite((10, 20, 30, 0.0), (1, 2, 3)) == (1, 2, 3)  # transparent: beneath


# The colours of an element's text and of its ancestors' backgrounds, as the browser computes them, turned
# into RGBA bytes by painting each on a 1 x 1 canvas (so any CSS colour syntax, oklch() included, works).
COLOURS_JS = """
const selector = arguments[0], limit = arguments[1];
const canvas = document.createElement('canvas'); canvas.width = canvas.height = 1;
const ctx = canvas.getContext('2d', {willReadFrequently: true});
function rgba(css) {
  ctx.clearRect(0, 0, 1, 1);
  ctx.fillStyle = 'rgba(0, 0, 0, 0)';
  ctx.fillStyle = css;
  ctx.fillRect(0, 0, 1, 1);
  const d = ctx.getImageData(0, 0, 1, 1).data;
  return [d[0], d[1], d[2], d[3] / 255];
}
function ownText(el) {
  const texts = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent);
  return texts.join('').trim();
}
const out = [];
for (const el of document.querySelectorAll(selector)) {
  if (out.length >= limit) break;
  const box = el.getBoundingClientRect(), style = getComputedStyle(el);
  const hidden = box.width === 0 || box.height === 0 || style.visibility === 'hidden';
  if (!ownText(el) || hidden) continue;
  const backgrounds = [];
  for (let a = el; a; a = a.parentElement) {
    backgrounds.push(rgba(getComputedStyle(a).backgroundColor));
  }
  out.push({text: ownText(el).slice(0, 40), color: rgba(style.color),
            backgrounds: backgrounds.reverse(), size: parseFloat(style.fontSize),
            weight: style.fontWeight});
}
return out;
"""


def measured_contrast(sample: dict) -> float:
    """The contrast ratio of one element from COLOURS_JS: backgrounds composited from the root down over white."""
    background = (255, 255, 255)  # the canvas under the root element
    for layer in sample["backgrounds"]:
        background = composite(layer, background)
    return contrast_ratio(composite(sample["color"], background), background)


GROUPS = {
    "body text": ".bd-article p, .bd-article li, .bd-article td, .bd-article th, .bd-article .exercise-verdict",
    "links": ".bd-article a[href], .bd-sidebar-primary a[href], .bd-header a[href], .prev-next-area a[href]",
    "code": ".bd-article code, .bd-article code span, .bd-article pre, .bd-article pre span",
    "admonition titles": ".admonition-title, .admonition > summary, details.dropdown > summary",
}


@pytest.mark.browser
def test_the_contrast_measurement_in_the_browser(browser):
    """The pipeline on a page of known colours: #777 on white fails, black on a 40% transparent blue over
    white is composited correctly, and a colour written as oklch() is read. Needs Chromium, not the site."""
    page = (
        '<html><body style="background:#fff">'
        '<article class="bd-article"><p id="grey" style="color:#777">grey text</p>'
        '<div style="background:rgba(0,0,255,0.4)"><p id="blue">black on 40% blue</p></div>'
        '<p id="ok" style="color:oklch(0 0 0)">oklch black</p></article></body></html>'
    )
    browser.get("data:text/html;charset=utf-8," + page.replace("#", "%23"))
    samples = {s["text"]: s for s in browser.execute_script(COLOURS_JS, GROUPS["body text"], 10)}
    # measured from rendered 8-bit pixels against ratios written to 2 decimals: abs=0.01 (the pixels'
    # rounding to 1/255 and the 0.005 of the written value), not a float-rounding bound
    assert measured_contrast(samples["grey text"]) == pytest.approx(4.48, abs=0.01)
    blue = composite((0, 0, 255, 0.4), (255, 255, 255))  # (153, 153, 255); 0.4 = 102/255 exactly
    assert measured_contrast(samples["black on 40% blue"]) == pytest.approx(
        contrast_ratio((0, 0, 0), blue), abs=0.01
    )
    assert measured_contrast(samples["oklch black"]) == pytest.approx(21.0, abs=0.01)


CONTRAST_PAGES = [
    "book/intro.html",
    "book/how_to_use.html",
    "notebooks/03_scoring_functions.html",
    "notebooks/06_self_attention.html",
]


@pytest.mark.site
@pytest.mark.browser
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_text_contrast_meets_wcag_aa(site, server, browser, mode):
    from .site.test_browser import open_page

    pages = [p for p in CONTRAST_PAGES if (site / p).exists()]
    assert len(pages) >= 3, f"expected the pages {CONTRAST_PAGES} in the built site"
    seen, failures = {group: 0 for group in GROUPS}, []
    for page in pages:
        open_page(browser, f"{server}/{page}")
        browser.execute_script(
            f"document.documentElement.dataset.theme = '{mode}';document.documentElement.dataset.mode = '{mode}';"
        )
        time.sleep(0.3)  # let the theme's transitions settle
        for group, selector in GROUPS.items():
            samples = browser.execute_script(COLOURS_JS, selector, 5000)
            seen[group] += len(samples)
            pairs = {}
            for s in samples:  # one verdict per colour pair
                pairs.setdefault((tuple(s["color"]), json.dumps(s["backgrounds"])), s)
            for s in pairs.values():
                ratio = measured_contrast(s)
                if ratio < AA_NORMAL_TEXT:
                    failures.append(
                        f"{page} ({mode}), {group}: {s['text']!r} colour {s['color']} has contrast {ratio:.2f}:1"
                    )
    assert all(seen.values()), f"some kinds of text were not found on {pages}: {seen}"
    assert not failures, "text below WCAG AA (4.5:1):\n" + "\n".join(failures[:40])


# --- (c) sliders usable with the keyboard -----------------------------------------------------------------

SLIDER_MODELS = {
    "SelectionSliderModel",
    "IntSliderModel",
    "FloatSliderModel",
    "FloatLogSliderModel",
}
WIDGET_STATE = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-state\+json">(.*?)</script>', re.S
)


def widget_states(html: str) -> dict:
    """The saved ipywidgets models of a page: {model id: model}."""
    models = {}
    for block in WIDGET_STATE.findall(html):
        models.update(json.loads(block).get("state", {}))
    return models


WIDGET_VIEW = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)</script>', re.S
)


def drawn_widgets(html: str) -> set[str]:
    """The model names of the widgets a page draws: its views' models and their children, recursively
    (a page also saves the models of widgets it never shows, such as the live figures' kernel forms)."""
    models = widget_states(html)
    todo = [json.loads(v)["model_id"] for v in WIDGET_VIEW.findall(html)]
    seen: set[str] = set()
    while todo:
        model_id = todo.pop()
        if model_id in seen or model_id not in models:
            continue
        seen.add(model_id)
        children = models[model_id].get("state", {}).get("children", [])
        todo += [c.removeprefix("IPY_MODEL_") for c in children if isinstance(c, str)]
    return {models[m]["model_name"] for m in seen}


def test_widget_state_parser_reads_a_saved_slider():
    """The parser used by the site test reads the state that lib.viz.interactive saves."""
    import matplotlib.pyplot as plt
    from ipywidgets.embed import dependency_state, embed_snippet

    from lib.viz import interactive

    matplotlib.use("Agg")

    def draw(value):
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, value])
        return fig

    box = interactive(draw, [1, 2], description="slope")
    # this figure's widgets only
    models = widget_states(embed_snippet(views=[box], state=dependency_state(box)))
    sliders = [m["state"] for m in models.values() if m["model_name"] in SLIDER_MODELS]
    assert (
        len(sliders) == 1
        and sliders[0]["description"] == "slope"
        and not sliders[0].get("disabled", False)
    )
    assert sliders[0].get("tabbable") is not False
    images = [m["state"]["value"] for m in models.values() if m["model_name"] == "HTMLModel"]
    assert len(images) == 2 and all(re.search(r'alt="[^"]{10,}"', v) for v in images)


@pytest.mark.site
def test_saved_sliders_are_enabled_labelled_and_in_the_tab_order(site):
    pages_with_sliders = 0
    for page in site_pages(site):
        html = page.read_text(encoding="utf-8", errors="replace")
        models = widget_states(html)
        sliders = [m["state"] for m in models.values() if m.get("model_name") in SLIDER_MODELS]
        if not sliders:
            continue
        pages_with_sliders += 1
        name = page.relative_to(site).as_posix()
        assert "html-manager/embed-amd.js" in html, (
            f"{name}: widgets saved, but no widget manager loaded"
        )
        for slider in sliders:
            assert not slider.get("disabled"), f"{name}: a disabled slider"
            assert slider.get("tabbable") is not False, (
                f"{name}: a slider taken out of the tab order"
            )
            assert slider.get("description", "").strip(), f"{name}: a slider without a label"
        for model in models.values():  # the pictures of every state have alt text
            if model.get("model_name") == "HTMLModel" and "<img" in model["state"].get("value", ""):
                assert re.search(r'<img [^>]*alt="[^"]{10,}"', model["state"]["value"]), (
                    f"{name}: an image without alt"
                )
    assert pages_with_sliders >= 2, (
        "the interactive figures of the chapters were not found in the built site"
    )


@pytest.mark.site
@pytest.mark.browser
def test_slider_handles_take_the_keyboard_focus_and_move_the_figure(site, server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from .site.test_browser import open_page, wait_until

    # the pages that draw a slider
    pages = [
        p.relative_to(site).as_posix()
        for p in site_pages(site)
        if drawn_widgets(p.read_text(encoding="utf-8", errors="replace")) & SLIDER_MODELS
    ]
    checked = 0
    for page in pages:
        open_page(browser, f"{server}/{page}")
        assert wait_until(
            browser, "document.querySelectorAll('.noUi-handle').length", timeout=30
        ), f"{page}: its saved sliders were not drawn"
        for handle in browser.find_elements(By.CSS_SELECTOR, ".noUi-handle"):
            tabindex = handle.get_attribute("tabindex")
            assert tabindex is not None and int(tabindex) >= 0, (
                f"{page}: a slider handle is not focusable"
            )
            assert (
                handle.get_attribute("role") == "slider"
                and handle.get_attribute("aria-valuenow") is not None
            )
            browser.execute_script(
                "arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", handle
            )
            assert browser.execute_script(
                "return document.activeElement === arguments[0];", handle
            ), f"{page}: a slider handle did not take the focus"
            box = handle.find_element(By.XPATH, "ancestor::div[contains(@class, 'widget-vbox')][1]")
            picture = lambda: browser.execute_script(  # noqa: E731
                "const s = Array.from(arguments[0].querySelectorAll('img')).find(i => i.offsetParent); return s ? s.getAttribute('alt') : null;",
                box,
            )
            before, value = picture(), handle.get_attribute("aria-valuenow")
            handle.send_keys(Keys.ARROW_RIGHT)
            deadline = time.monotonic() + 5
            while handle.get_attribute("aria-valuenow") == value and time.monotonic() < deadline:
                time.sleep(0.1)
            assert handle.get_attribute("aria-valuenow") != value, (
                f"{page}: the arrow key did not move a slider"
            )
            assert picture() != before, (
                f"{page}: moving a slider with the keyboard did not change its figure"
            )
            checked += 1
    assert checked >= 2, f"found only {checked} slider handles on the pages with widgets: {pages}"


# --- (d) a static form for readers without widgets (issue 25) ---------------------------------------------


def test_slider_figure_has_a_static_form_for_print_and_epub():
    """The box's MIME bundle carries text/markdown besides the widget view: the first picture, its alt
    text and a line saying where the figure is interactive and what its slider changes. A widget view
    outranks Markdown wherever a widget manager runs (Jupyter, Colab, the site)."""
    import matplotlib.pyplot as plt

    from lib.viz.interactive import figure_svg, interactive

    def draw(v):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, v])
        return fig

    with plt.rc_context({"svg.hashsalt": "test"}):  # the same SVG bytes for the same figure
        box = interactive(
            draw, [1, 2, 3], description="slope", alt=lambda v: f"A line of slope {v}"
        )
        firsts = [figure_svg(draw(v)) for v in (1, 2)]
    plt.close("all")
    bundle = box._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    md = data["text/markdown"]
    # the picture of the first setting, as the page starts, as a vector (printed sharp): its SVG
    assert md.startswith('<img src="data:image/svg+xml;base64,')
    assert 'alt="A line of slope 1">' in md.split("\n")[0]
    assert "On the book's website a slider sets slope (1, 2, 3: 3 pictures)" in md
    svg = base64.b64decode(re.search(r'data:image/svg\+xml;base64,([^"]+)"', md).group(1))
    assert svg == firsts[0] and svg != firsts[1]
    assert b'width="144pt" height="144pt"' in svg  # the figure's 2 x 2 inches, as its PNG
    # as an ePub may hold it (epubcheck): no DOCTYPE (an external DTD), every path with its d
    assert b"<!DOCTYPE" not in svg
    assert not re.findall(rb"<path(?![^>]*\sd=)", svg)
