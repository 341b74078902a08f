"""Chapter 8's positional-encoding table, static and live, on one colour scale with its colour bar (issue
23, item 13): the static picture (lib.viz.live.positional_encoding_figure, matplotlib) and the page's live
table (web/src/figures/posenc.js) both colour PE values with PuOr over [-1, 1], as the chapter's static
PE table does (reader s36b: one colour map for one table), and both show a colour bar with that range, so
the picture a printed book or an e-reader shows reads like the live one."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest

from .test_browser import console_errors, open_page

PUOR_ENDS = {-1: (0x7F, 0x3B, 0x08), 1: (0x2D, 0x00, 0x4B)}  # matplotlib's PuOr at 0 and 1


def _near(pixels: np.ndarray, rgb, tol: int = 12) -> np.ndarray:
    return (np.abs(pixels[..., :3].astype(int) - np.array(rgb)) <= tol).all(-1)


def test_static_picture_has_a_puor_colour_bar_beside_the_table():
    import matplotlib.image as mpimg

    from lib.viz.live import positional_encoding_figure

    fig = positional_encoding_figure(positions=100, d_model=128, base=10000.0, position=10)
    png = fig.png if isinstance(fig.png, bytes) else base64.b64decode(fig.png)
    pixels = (mpimg.imread(io.BytesIO(png), format="png") * 255).round().astype(np.uint8)
    h, w = pixels.shape[:2]
    # the table fills the left of the top panel; right of it, a vertical strip holds the bar: a column
    # that runs from PuOr's purple (+1, top) to its orange (-1, bottom)
    right = pixels[: int(0.75 * h), int(0.85 * w) :]
    top = _near(right, PUOR_ENDS[1]).any(0)
    bottom = _near(right, PUOR_ENDS[-1]).any(0)
    columns = np.flatnonzero(top & bottom)
    assert columns.size >= 5, "no colour bar with both ends of PuOr right of the table"
    col = right[:, columns[columns.size // 2]]
    rows_top = np.flatnonzero(_near(col, PUOR_ENDS[1]))
    rows_bottom = np.flatnonzero(_near(col, PUOR_ENDS[-1]))
    assert rows_top.max() < rows_bottom.min(), "the bar should run from +1 (top) to -1 (bottom)"
    assert "colour bar" in fig.alt


@pytest.mark.browser
def test_live_table_has_the_same_colour_bar(server, browser):
    sel = ".book-live[data-live='positional-encoding']"
    open_page(browser, f"{server}/notebooks/08_positional_encoding.html")
    got = browser.execute_script(
        f"""
        const root = document.querySelector({sel!r});
        const table = root.querySelector('canvas.book-live-table').getBoundingClientRect();
        const svg = root.querySelector('.book-live-colourbar svg');
        const bar = svg.getBoundingClientRect();
        const fills = Array.from(svg.querySelectorAll('rect[fill^="rgb"]')).map((r) => r.getAttribute('fill'));
        return {{state: root.dataset.state, range: svg.dataset.range, ticks: Array.from(svg.querySelectorAll('text')).map((t) => t.textContent),
                 bottom: fills[0], top: fills[fills.length - 1], table: [table.right, table.top, table.height],
                 bar: [bar.left, bar.top, bar.height], title: svg.querySelector('title').textContent}};
        """
    )
    assert got["state"] == "computed"
    assert json.loads(got["range"]) == [-1, 1]
    assert got["ticks"][:3] == ["\u22121", "0", "1"] and "PE value" in got["ticks"]
    assert got["bottom"] == "rgb({},{},{})".format(*PUOR_ENDS[-1])
    assert got["top"] == "rgb({},{},{})".format(*PUOR_ENDS[1])
    # beside the table, as tall as it
    assert got["bar"][0] >= got["table"][0] and abs(got["bar"][1] - got["table"][1]) < 12
    assert abs(got["bar"][2] - got["table"][2]) <= 14, got
    assert "-1" in got["title"] and "+1" in got["title"]
    assert not console_errors(browser)


ALIGNMENT = """
const root = document.querySelector(arguments[0]);
const table = root.querySelector('canvas.book-live-table').getBoundingClientRect();
const svg = root.querySelector('svg.book-live-curve');
const box = svg.getBoundingClientRect();
const xs = {};
svg.querySelectorAll('polyline').forEach((line) => {
  xs[line.dataset.series] = line.getAttribute('points').split(' ').map((p) => box.left + Number(p.split(',')[0]));
});
const keys = Array.from(svg.querySelectorAll('.book-live-curve-key')).map((t) => t.textContent);
const ticks = Array.from(root.querySelectorAll('svg.book-live-curve text, .book-live-table-ticks text'))
  .map((t) => [t.textContent, t.getBoundingClientRect().height]);
return {table: [table.left, table.width], xs, keys, ticks, W: document.documentElement.clientWidth, right: box.right};
"""


def _column_centres(left: float, width: float, d: int) -> np.ndarray:
    return left + (np.arange(d) + 0.5) * width / d


def _check_alignment(server, browser, d_model: int) -> dict:
    from .test_live_figures import set_fields

    sel = ".book-live[data-live='positional-encoding']"
    open_page(browser, f"{server}/notebooks/08_positional_encoding.html")
    assert set_fields(browser, sel, {"d_model": d_model}) == "computed"
    got = browser.execute_script(ALIGNMENT, sel)
    left, width = got["table"]
    # two curves, the sines (even j) and the cosines (odd j): one line through both zig-zagged
    # between them (reader s32, ch08, 3), each with its key
    assert sorted(got["xs"]) == ["cos", "sin"] and got["keys"] == ["sin (even j)", "cos (odd j)"]
    centres = _column_centres(left, width, d_model)
    for series, first in [("sin", 0), ("cos", 1)]:
        xs = np.array(got["xs"][series])
        assert len(xs) == d_model // 2
        assert np.abs(xs - centres[first::2]).max() < 1.0, got
    labels = [t for t, _ in got["ticks"]]
    assert (
        "0" in labels and str(d_model - 1) in labels and "99" in labels and "dimension j" in labels
    )
    # 13 px text, not scaled down: 15 px high boxes in Chromium (the 11 px text of before: 13)
    assert min(h for _, h in got["ticks"]) >= 14
    assert got["right"] <= got["W"] + 1
    assert not console_errors(browser)
    return got


@pytest.mark.browser
@pytest.mark.parametrize("d_model", [128, 16])
def test_curve_point_j_lies_below_column_j(server, browser, d_model):
    """The curves under the live table share the table's x-extent: point j of the sines (even j) or
    of the cosines (odd j) lies straight below column j (the reader reads a column down to its point),
    with dimension ticks under them and the table's position ticks beside it, 11 px text."""
    got = _check_alignment(server, browser, d_model)
    assert got["W"] > 900 and got["table"][1] >= 400  # the desktop layout: the canvas at full size


@pytest.mark.browser
@pytest.mark.parametrize("d_model", [128, 16])
def test_curve_point_j_lies_below_column_j_on_a_phone(server, browser, phone, d_model):
    """The same on a phone, where the canvas shrinks to the column: the curve is drawn at the canvas's
    shown width, not scaled, so its points stay under their columns and its text stays 11 px."""
    got = _check_alignment(server, browser, d_model)
    assert got["table"][1] < 300
