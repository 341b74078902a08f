"""tools/figure_text.py: the smallest text of a saved figure in CSS px, on a phone's and a laptop's
page column (issue 33, figures legible on a phone)."""

import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import figure_text  # noqa: E402


def synthetic_figure():
    """6 x 4 inches, no axes: texts of 12 and 8 points, and two that are not drawn (hidden; empty)."""
    fig = Figure(figsize=(6, 4), dpi=100)
    fig.text(0.1, 0.5, "twelve", fontsize=12)
    fig.text(0.6, 0.5, "eight", fontsize=8)
    fig.text(0.3, 0.2, "hidden", fontsize=2, visible=False)
    fig.text(0.3, 0.8, "   ", fontsize=3)
    return fig


def test_text_css_px_is_the_font_height_in_the_column():
    # 9 pt at 110 dpi is 13.75 px; a 660 px picture is halved in a 330 px column, whole in 720
    assert figure_text.text_css_px(9, 110 / 72, 660, 330) == 6.875
    assert figure_text.text_css_px(9, 110 / 72, 660, 720) == 13.75


def test_a_saved_figure_is_measured_from_what_was_drawn():
    figure_text.RECORDS.clear()
    uninstall = figure_text.install()
    try:
        synthetic_figure().savefig(io.BytesIO(), format="png", dpi=100)
        tight = io.BytesIO()
        synthetic_figure().savefig(tight, format="png", dpi=150, bbox_inches="tight")
    finally:
        uninstall()
    whole, cropped = figure_text.RECORDS
    figure_text.RECORDS.clear()
    # 600 x 400 px; 8 pt at 100 dpi = 100/9 px, shrunk by 330/600 on a phone, whole at 720
    assert (whole["width_px"], whole["height_px"], whole["dpi"]) == (600, 400, 100.0)
    assert whole["smallest_pt"] == 8 and not whole["tight"]
    assert abs(whole["px_at_330"] - 8 * 100 / 72 * 330 / 600) < 1e-12
    assert abs(whole["px_at_720"] - 8 * 100 / 72) < 1e-12
    # the tight picture's size is read from the PNG itself
    width, height = figure_text.png_size(tight.getvalue())
    assert (cropped["width_px"], cropped["height_px"]) == (width, height) and width < 900
    assert abs(cropped["px_at_330"] - 8 * 150 / 72 * min(1, 330 / width)) < 1e-12


def test_uninstall_puts_matplotlib_back():
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.text import Text

    before = FigureCanvasBase.print_figure, Text.draw
    figure_text.install()()
    assert (FigureCanvasBase.print_figure, Text.draw) == before


def test_the_minilm_live_figure_s_static_picture_is_legible_on_a_phone():
    """The static form of chapters 6 and 15's live attention figure (what print, the ePub and a
    reader without JavaScript see), measured by the tool: its smallest text at least 9 CSS px in a
    phone's 330 px column (issue 33; it was 5.5 px, 9-point text on 7.4 inches at 72 dpi), and
    larger in a laptop's 720 px column."""
    import torch

    from lib.viz import live

    tokens = "[CLS] the animal didn ' t cross the street because it was too tired [SEP]".split()
    weights = torch.softmax(torch.randn(len(tokens), len(tokens)), -1)
    figure_text.RECORDS.clear()
    uninstall = figure_text.install()
    try:
        png = live._heatmap_png(tokens, weights, "layer 3, head 1")
    finally:
        uninstall()
    (record,) = figure_text.RECORDS
    figure_text.RECORDS.clear()
    assert figure_text.png_size(png) == (record["width_px"], record["height_px"])
    assert record["px_at_330"] >= figure_text.LEGIBLE_PX, record
    assert record["px_at_720"] >= 1.5 * figure_text.LEGIBLE_PX, record
