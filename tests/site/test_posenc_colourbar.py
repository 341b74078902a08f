"""Chapter 8's positional-encoding table, static and live, on one colour scale with its colour bar (issue
23, item 13): the static picture (lib.viz.live.positional_encoding_figure, matplotlib) and the page's live
table (web/src/figures/posenc.js) both colour PE values with cividis over [-1, 1] and both show a colour
bar with that range, so the picture a printed book or an e-reader shows reads like the live one."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest

from .test_browser import console_errors, open_page

CIVIDIS_ENDS = {-1: (0x00, 0x22, 0x4E), 1: (0xFE, 0xE8, 0x38)}  # matplotlib's cividis at 0 and 1


def _near(pixels: np.ndarray, rgb, tol: int = 12) -> np.ndarray:
    return (np.abs(pixels[..., :3].astype(int) - np.array(rgb)) <= tol).all(-1)


def test_static_picture_has_a_cividis_colour_bar_beside_the_table():
    import matplotlib.image as mpimg

    from lib.viz.live import positional_encoding_figure

    fig = positional_encoding_figure(positions=100, d_model=128, base=10000.0, position=10)
    png = fig.png if isinstance(fig.png, bytes) else base64.b64decode(fig.png)
    pixels = (mpimg.imread(io.BytesIO(png), format="png") * 255).round().astype(np.uint8)
    h, w = pixels.shape[:2]
    # the table fills the left of the top panel; right of it, a vertical strip holds the bar: a column
    # that runs from cividis' yellow (+1, top) to its dark blue (-1, bottom)
    right = pixels[: int(0.75 * h), int(0.85 * w) :]
    top = _near(right, CIVIDIS_ENDS[1]).any(0)
    bottom = _near(right, CIVIDIS_ENDS[-1]).any(0)
    columns = np.flatnonzero(top & bottom)
    assert columns.size >= 5, "no colour bar with both ends of cividis right of the table"
    col = right[:, columns[columns.size // 2]]
    rows_top = np.flatnonzero(_near(col, CIVIDIS_ENDS[1]))
    rows_bottom = np.flatnonzero(_near(col, CIVIDIS_ENDS[-1]))
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
    assert got["bottom"] == "rgb({},{},{})".format(*CIVIDIS_ENDS[-1])
    assert got["top"] == "rgb({},{},{})".format(*CIVIDIS_ENDS[1])
    # beside the table, as tall as it
    assert got["bar"][0] >= got["table"][0] and abs(got["bar"][1] - got["table"][1]) < 12
    assert abs(got["bar"][2] - got["table"][2]) <= 14, got
    assert "-1" in got["title"] and "+1" in got["title"]
    assert not console_errors(browser)
