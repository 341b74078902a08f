"""The head-ranking figure's static picture (chapter 15), what print, the ePub and a page without
JavaScript show: drawn at 300 dpi and shown at its size in inches, so that it prints at 300 pixels an
inch and its 11-point text is 9 CSS px or more when a phone shrinks it to a 330 px column."""

import re
import struct

import matplotlib

matplotlib.use("agg")
import pytest  # noqa: E402
import torch  # noqa: E402

from lib.viz.live import LiveFigure, _ranking_png, rank_heads  # noqa: E402


def _top():
    g = torch.Generator().manual_seed(0)
    a, b = (torch.rand(6, 12, 5, 5, generator=g).softmax(-1) for _ in range(2))
    return rank_heads(a, b, 3, 1)


def test_the_ranking_picture_prints_at_300_ppi_and_reads_on_a_phone():
    png = _ranking_png(_top(), "it", "animal")
    width, height = struct.unpack(">II", png[16:24])
    figure = LiveFigure("minilm-pair", {}, png=png, alt="ranking", png_dpi=300)
    shown = re.search(r'width="(\d+)" height="(\d+)"', figure.html())
    css_width = int(shown[1])
    assert css_width == round(width * 96 / 300) and int(shown[2]) == round(height * 96 / 300)
    # print: pixels over inches shown (96 CSS px an inch)
    assert width / (css_width / 96) >= 299
    # a phone: 11-point text at 300 dpi, the picture shrunk from its CSS width to 330 px
    assert 11 * 300 / 72 * 330 / width >= 9 and css_width > 330


def test_without_png_dpi_the_picture_keeps_its_pixel_size_and_bad_values_are_named():
    png = _ranking_png(_top(), "it", "animal")
    assert 'width="' not in LiveFigure("minilm-pair", {}, png=png, alt="ranking").html()
    for bad in (72, 300.0, "300"):
        with pytest.raises(ValueError, match="png_dpi"):
            LiveFigure("minilm-pair", {}, png=png, alt="ranking", png_dpi=bad)
