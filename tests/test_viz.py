"""Tests of lib.viz: heatmap, masked-softmax table, head view, and the interactive-figure mechanism."""

import matplotlib

matplotlib.use("Agg")

import base64  # noqa: E402
import re  # noqa: E402

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from ipywidgets.widgets.widget_link import Link  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lib import viz  # noqa: E402
from lib.viz.heatmap import MASKED_COLOR, text_color_for  # noqa: E402
from tests.tolerance import assert_float_close  # noqa: E402

# The 4 x 4 example of the lectures, with a causal mask.
SCORES = torch.tensor(
    [
        [0.11, 0.00, 0.81, 0.79],
        [0.19, 0.50, 0.30, 0.48],
        [0.53, 0.98, 0.95, 0.14],
        [0.81, 0.86, 0.38, 0.90],
    ]
)
CAUSAL = torch.ones(4, 4, dtype=torch.bool).tril()
TOKENS = ["the", "cat", "sat", "down"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _texts(ax):
    return [t.get_text() for t in ax.texts]


# ------------------------------------------------------------------------------------------------
# attention_heatmap


def test_heatmap_image_holds_the_input_tensor():
    w = torch.softmax(SCORES, dim=-1).requires_grad_()
    ax = viz.attention_heatmap(w, TOKENS, TOKENS, title="t")
    assert isinstance(ax, Axes)
    shown = np.ma.getdata(ax.images[0].get_array())
    assert np.abs(shown - w.detach().numpy()).max() == 0
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert ax.get_title() == "t" and ax.get_xlabel() == "keys" and ax.get_ylabel() == "queries"


def test_heatmap_accepts_numpy_and_squeezes_leading_ones():
    a = np.arange(6, dtype=float).reshape(1, 1, 2, 3) / 6
    ax = viz.attention_heatmap(a)
    assert np.abs(np.ma.getdata(ax.images[0].get_array()) - a[0, 0]).max() == 0


@pytest.mark.parametrize("shape", [(4,), (2, 3, 3), (1, 2, 3, 3)])
def test_heatmap_rejects_non_2d(shape):
    with pytest.raises(ValueError, match=r"weights.*2-D.*" + re.escape(str(shape))):
        viz.attention_heatmap(torch.zeros(shape))


def test_heatmap_rejects_wrong_label_lengths():
    with pytest.raises(ValueError, match=r"x_labels.*expected 4.*got 3"):
        viz.attention_heatmap(SCORES, x_labels=TOKENS[:3])
    with pytest.raises(ValueError, match=r"y_labels.*expected 4.*got 5"):
        viz.attention_heatmap(SCORES, y_labels=TOKENS + ["extra"])


def test_heatmap_annotates_small_matrices_only():
    ax = viz.attention_heatmap(SCORES)
    assert _texts(ax) == [f"{v:.2f}" for v in SCORES.flatten().tolist()]
    big = torch.rand(13, 13)
    assert _texts(viz.attention_heatmap(big)) == []
    assert len(_texts(viz.attention_heatmap(big, annotate=True))) == 13 * 13
    assert _texts(viz.attention_heatmap(SCORES, annotate=False)) == []
    assert _texts(viz.attention_heatmap(SCORES, fmt=".1f"))[0] == "0.1"


def test_annotation_colour_contrasts_with_cell():
    # cividis: 0 is dark blue (needs white text), 1 is light yellow (needs black text)
    ax = viz.attention_heatmap(torch.tensor([[0.0, 1.0]]))
    assert [t.get_color() for t in ax.texts] == ["white", "black"]
    assert text_color_for((0, 0, 0, 1)) == "white" and text_color_for((1, 1, 1, 1)) == "black"


def test_heatmap_draws_masked_and_neg_inf_cells_grey_with_text():
    a = np.array([[0.5, -np.inf], [0.2, 0.8]])
    for data in (
        a,
        torch.tensor(a),
        np.ma.masked_array(np.array([[0.5, 9.0], [0.2, 0.8]]), [[0, 1], [0, 0]]),
    ):
        ax = viz.attention_heatmap(data)
        image = ax.images[0]
        assert np.ma.getmaskarray(image.get_array()).tolist() == [[False, True], [False, False]]
        assert _texts(ax) == ["0.50", "-inf", "0.20", "0.80"]
        grey = matplotlib.colors.to_rgba(MASKED_COLOR)
        assert np.abs(image.to_rgba(image.get_array())[0, 1] - grey).max() < 1e-6


def test_heatmap_draws_into_given_axes_without_colorbar():
    fig, ax = plt.subplots()
    out = viz.attention_heatmap(SCORES, ax=ax, colorbar=False, xlabel=None, ylabel=None)
    assert out is ax and len(fig.axes) == 1 and ax.get_xlabel() == ""


def test_long_x_labels_are_rotated():
    labels = ["a-rather-long-token"] * 10
    ax = viz.attention_heatmap(torch.rand(10, 10), labels, labels)
    assert ax.get_xticklabels()[0].get_rotation() == 45
    ax = viz.attention_heatmap(SCORES, TOKENS, TOKENS)
    assert ax.get_xticklabels()[0].get_rotation() == 0


def test_short_math_x_labels_stay_horizontal():
    # "$k_0$" shows two characters, not five: slanted, a k read as the key matrix K
    labels = [f"$k_{i}$" for i in range(6)]
    with plt.rc_context({key: 13 for key in viz.PHONE_RC}):
        fig, ax = plt.subplots(figsize=(5.2, 3.8))
        viz.attention_heatmap(torch.rand(5, 6).softmax(-1), labels, list("abcde"), ax=ax)
    assert ax.get_xticklabels()[0].get_rotation() == 0


def test_set_style_is_deterministic():
    viz.set_style()
    first = dict(matplotlib.rcParams)
    matplotlib.rcParams["font.size"] = 3
    viz.set_style()
    assert dict(matplotlib.rcParams) == first
    assert matplotlib.rcParams["image.cmap"] == viz.SEQUENTIAL_CMAP
    matplotlib.rcdefaults()


def test_the_printed_books_svg_leaves_the_sites_png_as_it_was():
    """The SVG that a notebook's figure carries for the PDF (lib.viz.set_style) is drawn from a copy:
    the figure's PNG, drawn after it, is byte for byte the PNG of the same figure drawn without it (a
    figure with a layout engine draws differently the second time), and the copy is closed."""
    from IPython.core.pylabtools import print_figure

    from lib.viz.heatmap import _svg_of_a_copy

    def figure():
        fig, ax = plt.subplots(figsize=(3, 2))
        viz.attention_heatmap(SCORES, TOKENS, TOKENS, ax=ax)
        return fig

    viz.set_style()
    alone = figure()
    expected = print_figure(alone, "png", bbox_inches="tight")
    fig = figure()
    figures = plt.get_fignums()
    svg = _svg_of_a_copy(fig)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert re.search(r"<image [^>]*width=", svg)  # the heatmap's pixels, embedded
    assert plt.get_fignums() == figures
    assert print_figure(fig, "png", bbox_inches="tight") == expected
    plt.close("all")
    matplotlib.rcdefaults()


# ------------------------------------------------------------------------------------------------
# masked_softmax_table


def test_masked_softmax_table_panels():
    from lib.attention import masked_softmax

    fig = viz.masked_softmax_table(SCORES, CAUSAL, TOKENS, TOKENS)
    assert isinstance(fig, Figure)
    panels = fig.axes[:3]
    assert [ax.get_title() for ax in panels] == [
        "scores",
        "masked scores",
        "weights (masked softmax)",
    ]
    scores_img, masked_img, weights_img = (np.ma.getdata(ax.images[0].get_array()) for ax in panels)
    assert np.abs(scores_img - SCORES.numpy()).max() == 0
    expected = masked_softmax(SCORES, CAUSAL).numpy()
    assert np.abs(weights_img - expected).max() < 1e-7
    assert (weights_img[~CAUSAL.numpy()] == 0).all()  # exactly 0, not just small
    assert np.abs(weights_img.sum(-1) - 1).max() < 1e-6
    assert np.isneginf(masked_img[~CAUSAL.numpy()]).all()
    middle = _texts(panels[1])
    assert middle.count("-inf") == 6 and "0.11" in middle and "0.90" in middle
    assert "-inf" not in _texts(panels[0]) and "-inf" not in _texts(panels[2])
    # scores of one sign (0 to 0.98) use the sequential colormap over their range, not half of a
    # diverging one; weights the sequential one on [0, 1]
    lo, hi = panels[0].images[0].get_clim()
    assert lo == 0 and hi == pytest.approx(0.98)
    assert panels[0].images[0].get_cmap().name.startswith(viz.SEQUENTIAL_CMAP)
    assert panels[1].images[0].get_clim() == (lo, hi)
    assert panels[2].images[0].get_clim() == (0.0, 1.0)
    assert panels[2].images[0].get_cmap().name.startswith(viz.SEQUENTIAL_CMAP)


def test_masked_softmax_table_scores_of_both_signs_use_a_symmetric_diverging_range():
    fig = viz.masked_softmax_table(SCORES - 0.5, CAUSAL)
    lo, hi = fig.axes[0].images[0].get_clim()
    assert lo == -hi and hi == pytest.approx(0.5)
    assert fig.axes[0].images[0].get_cmap().name.startswith(viz.DIVERGING_CMAP)
    plt.close(fig)


def test_masked_softmax_table_broadcast_mask_and_numpy():
    padding = np.array([[True, True, True, False]])  # [1, Tk]: the last key is padding
    fig = viz.masked_softmax_table(SCORES.numpy(), padding)
    weights = np.ma.getdata(fig.axes[2].images[0].get_array())
    assert (weights[:, 3] == 0).all() and np.abs(weights.sum(-1) - 1).max() < 1e-6


def test_masked_softmax_table_stacked_with_larger_numbers():
    """Chapter 6's Fig 6.5: the three panels one under the other, numbers at 11 points."""
    fig = viz.masked_softmax_table(SCORES, CAUSAL, TOKENS, TOKENS, stacked=True, annotate_size=11)
    panels = fig.axes[:3]
    x0 = [ax.get_position().x0 for ax in panels]
    y0 = [ax.get_position().y0 for ax in panels]
    assert max(x0) - min(x0) < 0.05 and y0[0] > y0[1] > y0[2]  # one column, top to bottom
    assert {t.get_fontsize() for ax in panels for t in ax.texts} == {11}
    assert fig.get_figheight() > fig.get_figwidth()
    with pytest.raises(TypeError, match="stacked"):
        viz.masked_softmax_table(SCORES, CAUSAL, stacked="yes")


def test_masked_softmax_table_takes_a_function_as_format():
    """Chapter 6's Fig. 6.5 (reader's report rv06b, 4): a row of '0.00' ran together at 11 points;
    a function as ``fmt`` writes an exact 0 as '0' and every other value as before."""

    def short(v):
        return "0" if v == 0 else f"{v:.2f}"

    zeros = SCORES.clone()
    zeros[0] = 0.0  # a row of exact zeros
    fig = viz.masked_softmax_table(zeros, CAUSAL, TOKENS, TOKENS, fmt=short)
    scores, middle, weights = (_texts(ax) for ax in fig.axes[:3])
    assert scores[:4] == ["0", "0", "0", "0"] and "0.00" not in scores
    assert middle.count("-inf") == 6 and "0.90" in middle
    assert weights[:4] == ["1.00", "0", "0", "0"]  # the first query sees itself only
    plt.close(fig)
    with pytest.raises(TypeError, match="fmt"):
        viz.masked_softmax_table(SCORES, CAUSAL, fmt=2)
    assert plt.get_fignums() == []


def test_masked_softmax_table_without_colour_bars_gives_the_cells_the_width():
    """Chapter 6's Fig. 6.5: without its colour bars, each panel's cells are wider, so that 11-point
    numbers such as '-inf' and '0.33' do not run together."""
    kw = dict(stacked=True, figsize=(5.0, 14.0), annotate_size=11)  # as chapter 6 draws it
    with_bars = viz.masked_softmax_table(SCORES, CAUSAL, TOKENS, TOKENS, **kw)
    without = viz.masked_softmax_table(SCORES, CAUSAL, TOKENS, TOKENS, stacked=True, colorbar=False)
    assert len(with_bars.axes) == 6 and len(without.axes) == 3
    for a, b in zip(with_bars.axes[:3], without.axes[:3]):
        a_box = a.get_window_extent(with_bars.canvas.get_renderer())
        b_box = b.get_window_extent(without.canvas.get_renderer())
        assert b_box.width > 1.1 * a_box.width
    plt.close("all")
    with pytest.raises(TypeError, match="colorbar"):
        viz.masked_softmax_table(SCORES, CAUSAL, colorbar="no")


def test_masked_softmax_table_takes_a_figure_size():
    """Chapter 3's Fig 3.4: three 4 x 4 panels side by side in 8.8 x 3.1 inches, so that on a page
    column about 730 px wide its text is drawn larger than at the default size (12.2 inches)."""
    default = viz.masked_softmax_table(SCORES, CAUSAL, TOKENS, TOKENS)
    fig = viz.masked_softmax_table(SCORES, CAUSAL, TOKENS, TOKENS, figsize=(8.8, 3.1))
    assert tuple(fig.get_size_inches()) == (8.8, 3.1) and default.get_figwidth() > 12
    x0 = [ax.get_position().x0 for ax in fig.axes[:3]]
    assert x0[0] < x0[1] < x0[2]  # still side by side
    plt.close(default)
    plt.close(fig)
    for bad in [(8.8,), (0, 3), "wide"]:
        with pytest.raises(ValueError, match="figsize"):
            viz.masked_softmax_table(SCORES, CAUSAL, figsize=bad)


def test_masked_softmax_table_rejects_bad_input():
    with pytest.raises(ValueError, match="scores"):
        viz.masked_softmax_table(torch.zeros(2, 3, 3), CAUSAL[:3, :3])
    with pytest.raises(ValueError, match="mask"):
        viz.masked_softmax_table(SCORES, torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask"):
        viz.masked_softmax_table(SCORES, CAUSAL.int())
    with pytest.raises(ValueError, match="x_labels"):
        viz.masked_softmax_table(SCORES, CAUSAL, TOKENS[:2])
    assert plt.get_fignums() == []  # no half-drawn figure left behind


# ------------------------------------------------------------------------------------------------
# head_view

# 2 layers, 2 heads, 3 tokens; every number exactly representable and distinct from the others
KNOWN = [
    torch.tensor(
        [
            [
                [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]],
                [[0.125, 0.875, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            ]
        ]
    ),
    torch.tensor(
        [
            [[0.375, 0.625, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
            [[0.0625, 0.9375, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
        ]
    ),  # 3-D: promoted
]


def test_head_view_html_holds_tokens_and_numbers():
    view = viz.head_view(KNOWN, ["alpha", "beta", "gamma"])
    from IPython.display import HTML

    assert isinstance(view, HTML)
    page = view.data
    assert "bertviz" in page
    for token in ("alpha", "beta", "gamma"):
        assert f'"{token}"' in page
    for number in ("0.875", "0.375", "0.625", "0.0625", "0.9375"):
        assert number in page
    # the JSON of the attention holds exactly the tensors given, layer by layer
    expected = [t.reshape(2, 3, 3).tolist() for t in KNOWN]
    assert str(expected).replace(" ", "").replace("'", '"') in page.replace(" ", "")


def test_head_view_accepts_a_single_tensor_and_initial_selection():
    page = viz.head_view(KNOWN[0], ["a", "b", "c"], layer=0, heads=[1]).data
    assert '"layer": 0' in page and '"heads": [1]' in page


def test_head_view_rounds_numbers():
    att = torch.full((1, 1, 3, 3), 1 / 3)
    page = viz.head_view([att], ["a", "b", "c"]).data
    assert "0.3333," in page and "0.33333" not in page


@pytest.mark.parametrize(
    "attention, tokens, pattern",
    [
        (KNOWN, ["a", "b"], r"tokens.*expected 3.*got 2"),
        ([KNOWN[0], torch.rand(1, 3, 3, 3)], ["a", "b", "c"], r"attention.*heads"),
        ([KNOWN[0], torch.rand(1, 2, 4, 4)], ["a", "b", "c"], r"attention.*T=4"),
        ([torch.rand(2, 2, 3, 3)], ["a", "b", "c"], r"attention\[0\].*\(2, 2, 3, 3\)"),
        ([torch.rand(1, 2, 3, 4)], ["a", "b", "c"], r"attention\[0\]"),
        ([], [], r"attention"),
    ],
)
def test_head_view_rejects_mismatched_shapes(attention, tokens, pattern):
    with pytest.raises(ValueError, match=pattern):
        viz.head_view(attention, tokens)


def test_head_view_rejects_bad_layer_and_heads():
    with pytest.raises(ValueError, match="layer"):
        viz.head_view(KNOWN, ["a", "b", "c"], layer=2)
    with pytest.raises(ValueError, match="heads"):
        viz.head_view(KNOWN, ["a", "b", "c"], heads=[0, 2])


# ------------------------------------------------------------------------------------------------
# model_view and encoder_decoder_view


def _compact(page):
    return page.replace(" ", "")


def _json_of(tensors, shape):
    return str([t.reshape(shape).tolist() for t in tensors]).replace(" ", "").replace("'", '"')


def test_model_view_html_holds_tokens_and_numbers():
    from IPython.display import HTML

    view = viz.model_view(KNOWN, ["alpha", "beta", "gamma"])
    assert isinstance(view, HTML)
    page = view.data
    assert "bertviz" in page and "total_heads" in page
    for token in ("alpha", "beta", "gamma"):
        assert f'"{token}"' in page
    for number in ("0.875", "0.375", "0.625", "0.0625", "0.9375"):
        assert number in page
    assert _json_of(KNOWN, (2, 3, 3)) in _compact(page)  # layers x heads x T x T, as given
    assert '"include_layers": [0, 1]' in page and '"include_heads": [0, 1]' in page
    assert "Layer: <select" not in page  # the model view shows every layer at once


def test_model_view_rounds_and_accepts_one_tensor():
    page = viz.model_view(torch.full((2, 3, 3), 1 / 3), ["a", "b", "c"]).data
    assert "0.3333," in page and "0.33333" not in page and '"include_layers": [0]' in page


@pytest.mark.parametrize(
    "attention, tokens, pattern",
    [
        (KNOWN, ["a", "b"], r"tokens.*expected 3.*got 2"),
        ([KNOWN[0], torch.rand(1, 3, 3, 3)], ["a", "b", "c"], r"attention.*heads"),
        ([KNOWN[0], torch.rand(1, 2, 4, 4)], ["a", "b", "c"], r"attention.*T=4"),
        ([torch.rand(2, 2, 3, 3)], ["a", "b", "c"], r"attention\[0\].*\(2, 2, 3, 3\)"),
        ([torch.rand(1, 2, 3, 4)], ["a", "b", "c"], r"attention\[0\]"),
        ([], [], r"attention"),
    ],
)
def test_model_view_rejects_mismatched_shapes(attention, tokens, pattern):
    with pytest.raises(ValueError, match=pattern):
        viz.model_view(attention, tokens)


def test_model_view_rejects_bad_types():
    with pytest.raises(TypeError, match="attention"):
        viz.model_view("not a tensor", ["a"])
    with pytest.raises(TypeError, match="tokens"):
        viz.model_view(KNOWN, [1, 2, 3])


# 2 layers, 2 heads; 3 source tokens, 2 target tokens; distinct, exactly representable numbers
ENC = [
    torch.tensor([[[[0.5, 0.25, 0.25]] * 3] * 2]),
    torch.tensor([[[[0.125, 0.125, 0.75]] * 3] * 2]),
]
DEC = [
    torch.tensor([[[[1.0, 0.0], [0.3125, 0.6875]]] * 2]),
    torch.tensor([[[[1.0, 0.0], [0.4375, 0.5625]]] * 2]),
]
CROSS = [
    torch.tensor([[[[0.1875, 0.8125, 0.0]] * 2] * 2]),
    torch.tensor([[[[0.0, 0.0625, 0.9375]] * 2] * 2]),
]
SRC, TGT = ["le", "chat", "noir"], ["the", "cat"]


@pytest.mark.parametrize("view", ["head", "model"])
def test_encoder_decoder_view_html_holds_all_three(view):
    page = viz.encoder_decoder_view(ENC, DEC, CROSS, SRC, TGT, view=view).data
    for name in ("Encoder", "Decoder", "Cross"):  # the drop-down of the three attentions
        assert f">{name}</option>" in page
    for token in SRC + TGT:
        assert f'"{token}"' in page
    for number in ("0.3125", "0.6875", "0.4375", "0.1875", "0.8125", "0.0625", "0.9375"):
        assert number in page
    compact = _compact(page)
    assert _json_of(ENC, (2, 3, 3)) in compact and _json_of(DEC, (2, 2, 2)) in compact
    assert _json_of(CROSS, (2, 2, 3)) in compact  # cross: decoder queries x encoder keys
    assert ("Layer: <select" in page) == (view == "head")


def test_encoder_decoder_view_cross_only_and_initial_selection():
    page = viz.encoder_decoder_view(None, None, CROSS, SRC, TGT, layer=1, heads=[0]).data
    # one attention: no menu
    assert ">Cross</option>" not in page and '"layer": 1' in page and '"heads": [0]' in page
    assert _json_of(CROSS, (2, 2, 3)) in _compact(page)


@pytest.mark.parametrize(
    "args, pattern",
    [
        ((ENC, DEC, CROSS, SRC[:2], TGT), r"encoder_tokens.*expected 3.*got 2"),
        ((ENC, DEC, CROSS, SRC, TGT + ["x"]), r"decoder_tokens.*expected 2.*got 3"),
        ((ENC, DEC, [torch.rand(1, 2, 2, 4)] * 2, SRC, TGT), r"cross_attention.*S=3"),
        ((ENC, DEC, [torch.rand(1, 2, 3, 3)] * 2, SRC, TGT), r"cross_attention.*T=2"),
        (
            (ENC, DEC[:1], CROSS, SRC, TGT),
            r"decoder_attention has 1 layers.*encoder_attention has 2",
        ),
        ((ENC, [torch.rand(1, 3, 2, 2)] * 2, CROSS, SRC, TGT), r"decoder_attention has 3 heads"),
        (([torch.rand(1, 2, 3, 2)] * 2, DEC, CROSS, SRC, TGT), r"encoder_attention\[0\].*square"),
        ((ENC, [DEC[0], torch.rand(1, 2, 3, 3)], CROSS, SRC, TGT), r"decoder_attention.*T=3"),
        ((None, None, None, SRC, TGT), r"at least one"),
    ],
)
def test_encoder_decoder_view_rejects_mismatched_shapes(args, pattern):
    with pytest.raises(ValueError, match=pattern):
        viz.encoder_decoder_view(*args)


def test_encoder_decoder_view_rejects_bad_options():
    with pytest.raises(ValueError, match="view"):
        viz.encoder_decoder_view(ENC, DEC, CROSS, SRC, TGT, view="neuron")
    with pytest.raises(ValueError, match="layer"):
        viz.encoder_decoder_view(ENC, DEC, CROSS, SRC, TGT, layer=2)
    with pytest.raises(ValueError, match="heads"):
        viz.encoder_decoder_view(ENC, DEC, CROSS, SRC, TGT, heads=[5])
    with pytest.raises(ValueError, match="model"):
        viz.encoder_decoder_view(ENC, DEC, CROSS, SRC, TGT, view="model", layer=0)
    with pytest.raises(TypeError, match="encoder_tokens"):
        viz.encoder_decoder_view(ENC, DEC, CROSS, None, TGT)


# ------------------------------------------------------------------------------------------------
# interactive


def _draw(value):
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, value])
    ax.set_ylim(-3, 3)
    return fig


def _png_of(html_widget):
    match = re.search(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html_widget.value)
    assert match, html_widget.value[:80]
    return base64.b64decode(match.group(1))


def test_interactive_precomputes_one_png_per_option():
    open_before = plt.get_fignums()
    box = viz.interactive(
        _draw,
        [("low", -2), ("flat", 0), ("high", 2)],
        description="slope",
        alt=lambda v: f"A line of slope {v}",
    )
    assert plt.get_fignums() == open_before  # every figure drawn was closed
    assert isinstance(box, widgets.VBox)
    slider, stack = box.children
    assert isinstance(slider, widgets.SelectionSlider) and isinstance(stack, widgets.Stack)
    assert list(slider.options) == ["low", "flat", "high"]
    assert slider.index == 0 and stack.selected_index == 0
    assert slider.description == "slope" and slider.continuous_update and slider.readout
    assert len(stack.children) == 3
    pngs = []
    for child, v in zip(stack.children, (-2, 0, 2)):
        assert isinstance(child, widgets.HTML)
        assert '<img src="data:image/png;base64,' in child.value
        assert f'alt="A line of slope {v}"' in child.value
        png = _png_of(child)
        assert png.startswith(b"\x89PNG")
        pngs.append(png)
    assert len(set(pngs)) == 3  # different options give different pictures


def test_phone_text_px_counts_the_text_a_phone_shows():
    from lib.viz.interactive import phone_text_px

    # 11 points on 5.2 inches, shown in the 328 px column: 11 / 72 * 328 / 5.2 CSS px, at any dpi
    for dpi in (72, 110):
        with plt.rc_context({**viz.PHONE_RC, "figure.dpi": dpi}):
            fig, ax = plt.subplots(figsize=(5.2, 3))
        ax.plot([0, 1])
        ax.set_title("a title", fontsize=14)
        assert phone_text_px(fig) == pytest.approx(11 / 72 * 328 / 5.2, rel=1e-12)
        # a legend's 8 points count; the ticks of axes that are off do not
        ax.legend(["line"], fontsize=8)
        assert phone_text_px(fig) == pytest.approx(8 / 72 * 328 / 5.2, rel=1e-12)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(5.2, 3))
    ax.text(0.5, 0.5, "words", fontsize=12)
    ax.tick_params(labelsize=6)
    ax.axis("off")
    assert phone_text_px(fig) == pytest.approx(12 / 72 * 328 / 5.2, rel=1e-12)
    plt.close(fig)
    # a picture wider than 600 px scrolls at twice the column, 656 px: 10 points at 100 dpi on 10 inches
    fig, ax = plt.subplots(figsize=(10, 3), dpi=100)
    ax.tick_params(labelsize=10)
    ax.set_xlabel("x", fontsize=10)
    assert phone_text_px(fig) == pytest.approx(10 / 72 * 100 * 656 / 1000, rel=1e-12)
    plt.close(fig)


def test_interactive_pictures_carry_their_phone_text_size():
    box = viz.interactive(_draw, [1, 2])
    for child in box.children[1].children:
        size = float(re.search(r'data-phone-px="([\d.]+)"', child.value).group(1))
        # _draw's 2-inch figure at the default 10-point ticks: its own width on a phone, 10 points
        assert size == pytest.approx(10 / 72 * plt.rcParams["figure.dpi"], abs=0.05)


def test_interactive_links_slider_to_stack_in_the_browser():
    box = viz.interactive(_draw, [1, 2])
    slider, stack = box.children
    link = box.link
    # the JS-side link (jslink), not dlink
    assert isinstance(link, Link) and link._model_name == "LinkModel"
    assert link.source == (slider, "index") and link.target == (stack, "selected_index")
    assert list(slider.options) == ["1", "2"]
    assert 'alt="Figure for value = 2"' in stack.children[1].value


def test_interactive_alt_string_is_escaped_and_labelled():
    box = viz.interactive(_draw, [0.5], description="d", alt='A "line" <plot>')
    assert 'alt="A &quot;line&quot; &lt;plot&gt; (d = 0.5)"' in box.children[1].children[0].value


def test_interactive_notes_are_page_text_under_each_picture():
    """Numbers the reader must read go under the picture as the page's text, escaped, lines kept,
    and into the static form under its first picture."""
    box = viz.interactive(_draw, [1, 2], notes=lambda v: f"slope {v}\nmax <{v * 3}>")
    first, second = (child.value for child in box.children[1].children)
    assert first.startswith("<img") and first.endswith(
        '<p class="book-figure-notes" style="margin:0.3em 0 0;line-height:1.5;font-size:16px">'
        "slope 1<br>max &lt;3&gt;</p>"
    )
    assert "slope 2<br>max &lt;6&gt;" in second
    assert "slope 1  \nmax &lt;3&gt;\n\n*Interactive figure" in box.static_markdown
    assert "book-figure-notes" not in viz.interactive(_draw, [1]).children[1].children[0].value
    with pytest.raises(TypeError, match="notes"):
        viz.interactive(_draw, [1], notes="slope")
    with pytest.raises(TypeError, match="notes"):
        viz.interactive(_draw, [1], notes=lambda v: v)


def test_interactive_closes_figures_even_on_error():
    open_before = plt.get_fignums()

    def bad(value):
        plt.figure()
        return "not a figure"

    with pytest.raises(TypeError, match="Figure"):
        viz.interactive(bad, [1])
    assert plt.get_fignums() == open_before
    with pytest.raises(ValueError, match="distinct"):
        viz.interactive(_draw, [("a", 1), ("a", 2)])
    with pytest.raises(ValueError, match="options"):
        viz.interactive(_draw, [])


# ------------------------------------------------------------------------------------------------
# ready-made interactive figures: the causal-mask table and the sampling-temperature control

from lib.viz.interactive import (  # noqa: E402
    causal_mask_explorer,
    rope_explorer,
    rope_scores,
    sampling_explorer,
    sampling_probabilities,
)


def _state_pngs(box):
    return [_png_of(child) for child in box.children[1].children]


def _static_page(box) -> str:
    """The HTML a static page embeds for the widget: its saved state, as the book's site stores it."""
    from ipywidgets.embed import dependency_state, embed_snippet

    return embed_snippet(views=[box], state=dependency_state(box))  # this figure's widgets only


LOGITS = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0])
WORDS = ["cat", "dog", "mat", "hat", "the"]


def test_sampling_probabilities_temperature():
    # against float64: the division by the temperature and the softmax over 5, of probabilities
    # summing to 1 (the coarser dtype's eps)
    assert_float_close(
        sampling_probabilities(LOGITS), torch.softmax(LOGITS.double(), -1), terms=1 + 5, scale=1
    )
    assert_float_close(
        sampling_probabilities(LOGITS, 0.5),
        torch.softmax(2 * LOGITS.double(), -1),
        terms=1 + 5,
        scale=1,
    )
    hot = sampling_probabilities(LOGITS, 4.0)
    assert (hot.max() - hot.min()) < (
        sampling_probabilities(LOGITS).max() - sampling_probabilities(LOGITS).min()
    )
    greedy = sampling_probabilities([1.0, 3.0, 3.0, 0.0], 0)  # ties: the first largest logit
    assert greedy.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_sampling_probabilities_top_k_and_top_p_known_values():
    p = torch.softmax(LOGITS.double(), -1)  # 0.563, 0.207, 0.126, 0.076, 0.028
    k2 = sampling_probabilities(LOGITS, top_k=2)
    assert torch.allclose(k2[:2], p[:2] / p[:2].sum()) and (k2[2:] == 0).all()
    # ties kept
    assert (sampling_probabilities([1.0, 2.0, 2.0, 0.0], top_k=1) > 0).tolist() == [
        False,
        True,
        True,
        False,
    ]
    nucleus = sampling_probabilities(LOGITS, top_p=0.8)  # 0.563 + 0.207 = 0.770 < 0.8: 3 tokens
    assert (nucleus > 0).tolist() == [True, True, True, False, False]
    assert torch.allclose(nucleus[:3], p[:3] / p[:3].sum())
    # the top token alone holds 0.56
    assert (sampling_probabilities(LOGITS, top_p=0.5) > 0).sum() == 1
    assert torch.equal(sampling_probabilities(LOGITS, top_p=1.0), sampling_probabilities(LOGITS))
    # temperature first, then the cuts: at τ = 2 the distribution is flatter, so top-p 0.8 keeps more tokens
    assert (sampling_probabilities(LOGITS, 2.0, top_p=0.8) > 0).sum() == 4
    # renormalised top-3: 0.63, 0.23, 0.14
    both = sampling_probabilities(LOGITS, 1.0, top_k=3, top_p=0.7)
    assert (both > 0).tolist() == [True, True, False, False, False]
    for q in (k2, nucleus, both):
        assert abs(q.sum().item() - 1) < 1e-12


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(temperature=-1.0), "temperature"),
        (dict(temperature=float("inf")), "temperature"),
        (dict(top_k=0), "top_k"),
        (dict(top_k=2.5), "top_k"),
        (dict(top_p=0.0), "top_p"),
        (dict(top_p=1.5), "top_p"),
    ],
)
def test_sampling_probabilities_rejects_bad_settings(kwargs, pattern):
    # a float top_k is the wrong type (TypeError), the others wrong values (ValueError)
    with pytest.raises((ValueError, TypeError), match=pattern):
        sampling_probabilities(LOGITS, **kwargs)
    with pytest.raises(ValueError, match="logits"):
        sampling_probabilities(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="logits"):
        sampling_probabilities([1.0, float("nan")])


def test_sampling_explorer_one_state_per_setting_all_different():
    box = sampling_explorer(LOGITS, WORDS, [0, 0.5, 1.0, 2.0], top_p=[None, 0.8])
    slider, stack = box.children
    assert len(stack.children) == 8
    assert slider.options[:3] == ("τ = 0, top-p none", "τ = 0, top-p 0.8", "τ = 0.5, top-p none")
    assert slider.description == "temperature, top-p"
    pngs = _state_pngs(box)
    assert len(set(pngs)) == 8  # every state its own picture
    assert (
        'alt="Bar chart of the next-token probabilities for τ = 0.5, top-p none: &#x27;cat&#x27; gets 0.83'
        in stack.children[2].value
    )


def test_sampling_figure_marks_other_as_cut_only_when_all_its_mass_is_removed():
    import matplotlib.pyplot as plt

    from lib.viz.interactive import _CUT_COLOR, _sampling_figure

    logits = torch.tensor([3.0, 2.0, 1.0, 0.0, -1.0])
    reference = torch.softmax(logits, -1)
    shown = torch.arange(3)  # "other": the last two tokens

    def red_names(t, p):
        probs = sampling_probabilities(logits, t, top_p=p).float()
        fig = _sampling_figure((t, None, p, probs), reference, shown, WORDS)
        ax = fig.axes[0]
        names = [label.get_text() for label in ax.get_xticklabels()]
        red = [
            n for n, label in zip(names, ax.get_xticklabels()) if label.get_color() == _CUT_COLOR
        ]
        crosses = len(ax.lines[0].get_xdata())  # the red crosses, one a cut bar
        plt.close(fig)
        return red, crosses

    # top-p 0.9 keeps cat, dog and mat (0.636 + 0.234 reach 0.9 only with mat): "other" all cut
    assert red_names(1.0, 0.9) == (["other"], 1)
    # top-p 0.7 also cuts mat
    assert red_names(1.0, 0.7) == (["mat", "other"], 2)
    # no cut, or a cut that keeps part of "other": nothing red
    assert red_names(1.0, None) == ([], 0)
    assert red_names(1.0, 0.99) == ([], 0)
    assert red_names(0, 0.9) == ([], 0)  # greedy: its zeros are not a cut's


def test_sampling_explorer_narrow_stays_under_600_px_whatever_n_shown():
    import struct

    import matplotlib.pyplot as plt

    logits = torch.arange(40.0)
    words = [f"token{i}" for i in range(40)]
    with plt.rc_context({"figure.dpi": 110}):  # the notebooks' dpi
        wide = sampling_explorer(logits, words, [1.0], n_shown=30)
        narrow = sampling_explorer(logits, words, [1.0], n_shown=30, narrow=True)
    width = {
        name: struct.unpack(">II", _state_pngs(box)[0][16:24])[0]
        for name, box in [("wide", wide), ("narrow", narrow)]
    }
    # over 600 px the site shows a picture in a sideways-scrolling box on a phone
    assert width["wide"] > 600 and width["narrow"] <= 600
    with pytest.raises(TypeError, match="narrow"):
        sampling_explorer(LOGITS, WORDS, [1.0], narrow="yes")


def test_sampling_explorer_static_page_embeds_every_state():
    box = sampling_explorer(LOGITS, WORDS, [0.5, 1.0, 2.0])
    assert list(box.children[0].options) == ["τ = 0.5", "τ = 1", "τ = 2"]
    page = _static_page(box)
    assert "application/vnd.jupyter.widget-state+json" in page
    for png in _state_pngs(box):
        assert base64.b64encode(png).decode("ascii") in page
    assert "LinkModel" in page  # the slider-stack link lives in the page


def test_sampling_explorer_uses_a_given_distribution_and_groups_the_rest():
    calls = []

    def uniform(logits, temperature, top_k, top_p):
        calls.append((temperature, top_k, top_p))
        return torch.full_like(logits, 1 / logits.numel())

    box = sampling_explorer(
        torch.arange(30.0),
        [f"t{i}" for i in range(30)],
        [0.7, 1.3],
        top_k=5,
        distribution=uniform,
        n_shown=10,
    )
    assert calls == [(0.7, 5, None), (1.3, 5, None)]  # fixed top-k passed to every state
    # the bars show what it returned
    assert "&#x27;t0&#x27; gets 0.03" in box.children[1].children[0].value
    with pytest.raises(ValueError, match="sum to 1"):
        sampling_explorer(LOGITS, WORDS, [1.0], distribution=lambda z, t, k, p: torch.ones(5))
    with pytest.raises(TypeError, match="distribution"):
        sampling_explorer(LOGITS, WORDS, [1.0], distribution="softmax")
    with pytest.raises(ValueError, match="labels"):
        sampling_explorer(LOGITS, WORDS[:4], [1.0])
    with pytest.raises(ValueError, match="repeat"):
        sampling_explorer(LOGITS, WORDS, [1.0, 1.0])
    with pytest.raises(ValueError, match="temperature"):
        sampling_explorer(LOGITS, WORDS, [-0.5])


def test_causal_mask_explorer_one_state_per_query():
    from lib.attention import masked_softmax

    box = causal_mask_explorer(SCORES, TOKENS)
    slider, stack = box.children
    assert (
        list(slider.options) == ["0 the", "1 cat", "2 sat", "3 down"]
        and slider.description == "query"
    )
    pngs = _state_pngs(box)
    assert len(pngs) == 4 and len(set(pngs)) == 4
    weights = masked_softmax(SCORES, CAUSAL)
    top = int(weights[2].argmax())
    assert (
        f"it may attend to keys 0 to 2; its largest weight is {weights[2, top]:.2f} on &#x27;{TOKENS[top]}&#x27;"
        in stack.children[2].value
    )
    # query 0 sees itself only; the same key's weight without the mask follows
    full = masked_softmax(SCORES)
    assert (
        f"key 0 only; its largest weight is 1.00 on &#x27;the&#x27;, which had {full[0, 0]:.2f} "
        "without the mask" in stack.children[0].value
    )
    page = _static_page(box)
    assert all(base64.b64encode(png).decode("ascii") in page for png in pngs)
    assert plt.get_fignums() == []


def test_causal_mask_alt_reports_ties_and_the_same_key_without_the_mask():
    from lib.attention import masked_softmax
    from lib.viz.interactive import _causal_mask_alt

    # row 1: keys 0 and 1 tie under the mask; without it key 3 wins, which the text must not compare
    scores = torch.tensor([[0.0, 0, 0, 0], [1.0, 1, 0, 3], [0.0, 0, 0, 0], [2.0, 0, 0, 0]])
    masked, full = masked_softmax(scores, CAUSAL), masked_softmax(scores)
    alt = [_causal_mask_alt(t, masked, full, CAUSAL, TOKENS) for t in range(4)]
    assert alt[1].endswith(
        f"its largest weight is 0.50 each on 'the' and 'cat', which had {full[1, 0]:.2f} each "
        "without the mask"
    )
    assert alt[2].endswith(
        "its largest weight is 0.33 each on 'the', 'cat' and 'sat', which had 0.25 each without the mask"
    )
    assert alt[3].endswith(
        f"its largest weight is {masked[3, 0]:.2f} on 'the', which had {full[3, 0]:.2f} without the mask"
    )
    # more ties than MAX_NAMED_TIES are counted, not named
    many = torch.ones(5, 5, dtype=torch.bool).tril()
    weights = masked_softmax(torch.zeros(5, 5), many)
    text = _causal_mask_alt(4, weights, masked_softmax(torch.zeros(5, 5)), many, list("abcde"))
    assert text.endswith("0.20 each on all 5 of them, which had 0.20 each without the mask")


def smallest_text_px(monkeypatch, column_px):
    """The smallest text of every picture an explorer draws, in CSS px once the picture is shrunk to a
    page column column_px wide (a list, filled as the explorer draws its states)."""
    import importlib

    from matplotlib.text import Text

    module = importlib.import_module("lib.viz.interactive")
    smallest = []

    def measured(fig):
        fig.canvas.draw()
        scale = min(1.0, column_px / (fig.get_figwidth() * fig.dpi)) * fig.dpi  # page px per inch
        sizes = [
            t.get_fontsize() / 72 * scale
            for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()
        ]
        smallest.append(min(sizes))
        return b"png"

    monkeypatch.setattr(module, "figure_png", measured)
    return smallest


@pytest.mark.parametrize("column_px", [313, 720])
def test_causal_mask_explorer_text_is_legible_on_a_phone(monkeypatch, column_px):
    """Every state's smallest text is at least 10 CSS px (em) once the picture is shrunk to the 313 px
    a 360 px phone can give a figure (issue 33; at 11 points it was 9.2 and read as 6-8 px, a
    reader's report on Fig. 6.6), and so in a 720 px page column too; chapter 6's nine-token
    sentence, whose cells carry their weights (the panels one above the other)."""
    smallest = smallest_text_px(monkeypatch, column_px)
    torch.manual_seed(0)
    tokens = "The FBI is chasing a criminal on the run".split()
    causal_mask_explorer(torch.randn(9, 9), tokens)
    assert len(smallest) == 9 and min(smallest) >= 10, smallest


def test_causal_mask_explorer_numbers_fit_their_cells(monkeypatch):
    """Every weight written in the table is narrower than its cell, on chapter 6's nine-token
    sentence at 13 points: a weight of 1 is written "1" (its "1.00" ran into the frame of row 0,
    review ch06 s32, item 3), the others without their leading 0 (".27")."""
    import importlib

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    module = importlib.import_module("lib.viz.interactive")
    figures = []
    monkeypatch.setattr(module, "figure_png", lambda fig: figures.append(fig) or b"png")
    torch.manual_seed(0)
    tokens = "The FBI is chasing a criminal on the run".split()
    causal_mask_explorer(torch.randn(9, 9), tokens)
    fig = figures[0]
    FigureCanvasAgg(fig).draw()
    table = fig.axes[0]
    cell = table.transData.transform((1, 0))[0] - table.transData.transform((0, 0))[0]
    renderer = fig.canvas.get_renderer()
    widths = {t.get_text(): t.get_window_extent(renderer).width for t in table.texts}
    assert "1" in widths and "1.00" not in widths  # query 0 sees itself only: weight 1
    assert max(widths.values()) < 0.9 * cell, (cell, widths)


def test_sampling_explorer_text_is_legible_on_a_phone(monkeypatch):
    """Every state's smallest text is at least 9 px high once the picture is shrunk to the ~330 px of a
    360 px phone's column (chapter 13's explorer: 15 tokens and "other"; review 13c, point 12)."""
    smallest = smallest_text_px(monkeypatch, 330)
    logits = torch.randn(40, generator=torch.Generator().manual_seed(0))
    words = [f"word{i}" for i in range(40)]
    sampling_explorer(logits, words, [0, 1.0, 2.0], top_p=[None, 0.9], n_shown=15)
    assert len(smallest) == 6 and min(smallest) >= 9, smallest


def test_sampling_explorer_narrow_is_legible_and_marks_cuts_without_words(monkeypatch):
    """Chapter 13 draws it narrow: every text at least 10 CSS px at the 328 px of a 360 px phone's
    column (at 11 points the title and tick words read at 8-9 px, a reader's report on Fig. 13.6);
    the cut tokens get a red cross and a red name, named in the legend, no rotated word "cut"
    over the outlines."""
    import importlib

    from matplotlib.text import Text

    module = importlib.import_module("lib.viz.interactive")
    figures = []
    monkeypatch.setattr(module, "figure_png", lambda fig: figures.append(fig) or b"png")
    logits = torch.randn(40, generator=torch.Generator().manual_seed(0))
    words = [f"word{i}" for i in range(40)]
    sampling_explorer(logits, words, [1.0, 2.0], top_p=[None, 0.5], n_shown=15, narrow=True)
    assert len(figures) == 4
    for fig in figures:
        fig.canvas.draw()
        scale = min(1.0, 328 / (fig.get_figwidth() * fig.dpi)) * fig.dpi
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        assert min(t.get_fontsize() / 72 * scale for t in texts) >= 10
        assert not any(t.get_text() == "cut" for t in texts)
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend[-1].startswith("cut (probability set to 0)")
    # top-p 0.5 at temperature 1 cuts some of the 15 tokens: as many red names as red crosses
    ax = figures[1].axes[0]
    red = [t for t in ax.get_xticklabels() if t.get_color() == "#d62728"]
    (crosses,) = [ln for ln in ax.lines if ln.get_marker() == "x"]
    assert 0 < len(red) == len(crosses.get_xdata())
    assert not [t for t in figures[0].axes[0].get_xticklabels() if t.get_color() == "#d62728"]


def test_causal_mask_explorer_takes_another_mask_and_rejects_bad_input():
    padding = torch.tensor([True, True, True, False]).expand(4, 4)  # the last key is padding
    box = causal_mask_explorer(SCORES, TOKENS, mask=padding.clone())
    assert "may attend to keys 0 to 2" in box.children[1].children[0].value
    with pytest.raises(ValueError, match="square"):
        causal_mask_explorer(torch.zeros(3, 4), ["a", "b", "c"])
    with pytest.raises(ValueError, match="tokens"):
        causal_mask_explorer(SCORES, TOKENS[:3])
    with pytest.raises(TypeError, match="mask"):
        causal_mask_explorer(SCORES, TOKENS, mask=CAUSAL.int())
    with pytest.raises(ValueError, match="mask"):
        causal_mask_explorer(SCORES, TOKENS, mask=CAUSAL[:3, :3])


def test_sampling_probabilities_agree_with_the_gpt_library():
    """The figure's arithmetic and the GPT chapter's sampler (lib.gpt, when present) give the same distribution."""
    gpt = pytest.importorskip("lib.gpt")
    g = torch.Generator().manual_seed(0)
    for trial in range(20):
        z = 3 * torch.randn(30, generator=g, dtype=torch.float64)
        z[3] = z[7] if trial % 4 == 0 else z[3]  # ties at the cut, now and then
        for t in (0, 0.3, 1.0, 2.5):
            for k in (None, 1, 5, 40):
                for p in (None, 0.5, 0.9, 1.0):
                    ours, theirs = (
                        sampling_probabilities(z, t, k, p),
                        gpt.sampling_distribution(z, t, k, p),
                    )
                    assert (ours - theirs).abs().max() < 1e-12, (trial, t, k, p)


def test_markdown_table_escapes_tags_outside_code_and_checks_rows():
    from lib.viz import markdown_table

    md = markdown_table(["word", "tokens"], [["low", "l o w </w>"], ["`<pad>`", 3]])
    assert md.splitlines() == [
        "| word | tokens |",
        "|---|---|",
        "| low | l o w &lt;/w> |",
        "| `<pad>` | 3 |",
    ]
    # a line break inside a cell stays a line break
    assert (
        markdown_table(["w"], [["lo·w<br>ne·w</w>"]]).splitlines()[2] == "| lo·w<br>ne·w&lt;/w> |"
    )
    with pytest.raises(ValueError, match="rows: expected 2 cells in every row .*got 1 in row 0"):
        markdown_table(["a", "b"], [["only one"]])
    with pytest.raises(ValueError, match="header: expected at least one column"):
        markdown_table([], [])


def test_rope_scores_depend_on_the_offset_only_and_equal_the_model_s_rotation():
    from lib.rope import apply_rope, rope_cos_sin, rope_frequencies

    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(16, generator=g), torch.randn(16, generator=g)
    same = rope_scores(q, k, [(3, 0), (40, 37), (900, 897)])
    assert max(same) - min(same) < 1e-9
    assert abs(rope_scores(q, k, [(0, 3)])[0] - same[0]) > 1e-3  # the sign of the offset matters
    cos, sin = rope_cos_sin(torch.tensor([5, 2]), rope_frequencies(16), torch.float64)
    q5 = apply_rope(q.double()[None], cos[:1], sin[:1])[0]
    k2 = apply_rope(k.double()[None], cos[1:], sin[1:])[0]
    assert abs(rope_scores(q, k, [(5, 2)])[0] - float(q5 @ k2)) < 1e-12
    with pytest.raises(ValueError, match="q, k"):
        rope_scores(torch.zeros(5), torch.zeros(5), [(0, 0)])


def test_rope_explorer_one_state_per_setting_each_on_the_curve():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    box = rope_explorer(q, k, [(2, 0), (9, 7), (3, 8)], max_offset=6)
    slider, stack = box.children
    assert list(slider.options) == ["m=2, n=0", "m=9, n=7", "m=3, n=8"]
    assert len(stack.children) == 3 and box.offsets == list(range(-6, 7))
    for (m, n), score in box.scores.items():
        assert abs(score - box.curve[m - n + 6]) < 1e-9
    assert "offset 2" in stack.children[0].value and "offset -5" in stack.children[2].value
    # the text can name the positions of the grey curve: the alt text (and the legend) say them
    assert "key at 20 and the query at 20 + offset" in stack.children[0].value
    with pytest.raises(ValueError, match="settings"):
        rope_explorer(q, k, [(20, 0)], max_offset=6)


def test_rope_explorer_text_is_the_static_figures_size_on_a_phone():
    # 14 pt on 5.2 inches, as chapter 17's diagrams: 14 / 72 * 328 / 5.2 = 12.26 CSS px in a
    # 360 px phone's column (13 pt gave 11.4, which a reader s39 found small)
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    box = rope_explorer(q, k, [(2, 0), (3, 8), (16, 4)])
    for page in box.children[1].children:
        px = float(re.search(r'data-phone-px="([0-9.]+)"', page.value).group(1))
        assert px >= 12.2, px


# --- label_points: labels clear of the points and of each other ------------------------------------


def test_label_points_moves_a_label_off_the_points_and_off_other_labels():
    fig, ax = plt.subplots(figsize=(4, 4))
    # a crowd above right of the point "a" (the first side tried), nothing below left
    crowd = np.array([[0.02 * i, 0.02 * j] for i in range(1, 15) for j in range(1, 8)])
    xy = np.vstack([[[0.0, 0.0], [0.01, -0.002]], crowd])
    names = ["a", "b"] + [f"c{k}" for k in range(len(crowd))]
    ax.scatter(xy[:, 0], xy[:, 1])
    ax.set(xlim=(-0.4, 0.4), ylim=(-0.4, 0.4))
    first = viz.label_points(ax, xy, ["a"], names)
    second = viz.label_points(ax, xy, ["b"], names, placed=first)
    renderer = fig.canvas.get_renderer()
    box_a, box_b = (a.get_window_extent(renderer) for a in first + second)
    pixels = ax.transData.transform(crowd)
    for box in (box_a, box_b):
        assert not any(box.contains(x, y) for x, y in pixels)
    assert not box_a.overlaps(box_b)
    assert first[0].get_text() == "a" and tuple(first[0].xy) == (0.0, 0.0)
    assert first[0].get_position()[1] < 0  # below: not the first side tried, under the crowd


def test_label_points_with_leaders_draws_lines_that_do_not_cross():
    """Reader s42, ch11 m1: two labels of Fig. 11.3 sat at each other's points, their leader lines
    crossed. With ``leader``, each label gets a line to its point, no two lines cross and no label is
    nearer another labelled point than its own."""
    from lib.viz.figures import _distance_to_box, _segments_cross

    fig, ax = plt.subplots(figsize=(4, 4))
    xy = np.random.default_rng(0).normal(size=(40, 2)) * [1.0, 0.6]
    names = [f"w{i}" for i in range(len(xy))]
    ax.scatter(xy[:, 0], xy[:, 1], s=20)
    labels = names[:12]
    out = viz.label_points(ax, xy, labels, names, distance=8, leader=dict(color="0.3", lw=0.7))
    assert [a.get_text() for a in out] == labels
    renderer = fig.canvas.get_renderer()
    pixels = ax.transData.transform(xy)
    lines = [(pixels[i], pixels[i] + np.array(a.xyann) * fig.dpi / 72) for i, a in enumerate(out)]
    assert len(ax.texts) == 2 * len(labels)  # the labels and their lines
    for j, line in enumerate(lines):
        assert not any(_segments_cross(*line, *other) for other in lines[:j])
    for i, a in enumerate(out):
        box = a.get_window_extent(renderer)
        near = _distance_to_box(pixels[: len(labels)], box)
        assert near.argmin() == i, (a.get_text(), near)
    plt.close(fig)


def test_label_points_rejects_bad_input_naming_the_argument():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="xy"):
        viz.label_points(ax, np.zeros((3, 3)), ["a"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="names"):
        viz.label_points(ax, np.zeros((3, 2)), ["a"], ["a", "b"])
    with pytest.raises(ValueError, match="labels"):
        viz.label_points(ax, np.zeros((3, 2)), ["z"], ["a", "b", "c"])
    with pytest.raises(TypeError, match="ax"):
        viz.label_points(fig, np.zeros((3, 2)), ["a"], ["a", "b", "c"])


def test_a_slider_figures_static_form_shows_its_labels_as_text():
    """The token "<s>" as a slider label is text in the figure's Markdown form (the ePub's and the
    PDF's): left as markup it struck through every later page of the printed book."""
    fig_of = {}
    for label in ["<s>", "the"]:
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.set_title(label)
        fig_of[label] = fig
    box = viz.interactive(
        lambda label: fig_of[label], [(label, label) for label in fig_of], description="after"
    )
    data = box._repr_mimebundle_()
    static = (data[0] if isinstance(data, tuple) else data)["text/markdown"]
    assert "&lt;s&gt;" in static and "<s>" not in static
    plt.close("all")
