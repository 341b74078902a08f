"""lib.viz.figures: the chapters' drawings moved into the library (issue 16), checked by what they
put on the Axes."""

import io
import struct

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402

from lib import viz  # noqa: E402
from lib.data import shapes  # noqa: E402
from lib.viz.interactive import phone_text_px  # noqa: E402
from tests.tolerance import assert_float_close  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_vectors_draws_one_arrow_and_one_label_per_vector(ax):
    xy = torch.tensor([[1.0, 0.0], [0.0, 2.0], [-1.5, -1.5]])
    viz.vectors(ax, xy, ["a", "b", "c"], "C0", side=-1)
    tips = [t.xy for t in ax.texts if isinstance(t, Annotation)]
    assert [tuple(t) for t in tips] == [(1.0, 0.0), (0.0, 2.0), (-1.5, -1.5)]
    labels = [t for t in ax.texts if t.get_text()]
    assert [t.get_text() for t in labels] == ["a", "b", "c"]
    # each label sits just past its tip, to the right of the arrow (side=-1)
    x, y = labels[0].get_position()
    assert x > 1.0 and y < 0.0
    assert ax.get_xlim() == (-3.6, 3.6) and ax.get_aspect() == 1.0
    with pytest.raises(ValueError, match=r"xy: expected 2-D vectors \[N, 2\]"):
        viz.vectors(ax, torch.zeros(3), ["a"], "C0")
    with pytest.raises(ValueError, match="labels: expected 3 labels"):
        viz.vectors(ax, xy, ["a"], "C0")
    with pytest.raises(TypeError, match="ax: expected a matplotlib Axes"):
        viz.vectors(None, xy, ["a", "b", "c"], "C0")


def test_image_regions_and_region_attention():
    example = shapes.generate_images(1, seed=0)[0]
    fig, (a, b) = plt.subplots(1, 2)
    viz.image_regions(a, example.image)
    drawn = a.images[0].get_array()
    assert drawn.shape == (48, 48, 3)
    assert np.allclose(drawn, example.image.permute(1, 2, 0).numpy())
    assert len(a.lines) == 4  # two lines between the three rows, two between the columns
    weights = torch.zeros(9)
    weights[4] = 1.0  # all the attention on the centre region
    mappable = viz.region_attention(b, example.image, weights)
    heat = b.images[0].get_array()
    picture = example.image.permute(1, 2, 0).numpy()
    white = (picture == 1).all(-1)
    # white pixels take their region's colour: the centre is the map's top colour mixed with
    # white, the others its bottom colour; the shapes' pixels are unchanged
    top = 0.75 * np.array(matplotlib.colormaps[viz.SEQUENTIAL_CMAP](1.0)[:3]) + 0.25
    bottom = 0.75 * np.array(matplotlib.colormaps[viz.SEQUENTIAL_CMAP](0.0)[:3]) + 0.25
    centre = np.zeros((48, 48), bool)
    centre[16:32, 16:32] = True
    # the same blend computed elsewhere: a product, a sum and the colour map's value (3), colours <= 1
    assert_float_close(
        heat[white & centre], np.broadcast_to(top, heat[white & centre].shape).copy(), terms=3
    )
    assert_float_close(
        heat[white & ~centre], np.broadcast_to(bottom, heat[white & ~centre].shape).copy(), terms=3
    )
    assert np.array_equal(heat[~white], picture[~white])
    assert mappable.get_clim() == (0.0, 1.0)
    with pytest.raises(ValueError, match="weights: expected 9 region weights"):
        viz.region_attention(b, example.image, torch.ones(4))
    with pytest.raises(ValueError, match=r"image: expected an RGB image \[3, H, W\]"):
        viz.image_regions(a, torch.ones(48, 48))
    with pytest.raises(ValueError, match="image: expected 48 x 48 pixels"):
        viz.image_regions(a, torch.ones(3, 32, 32))
    plt.close(fig)


def test_document_attention_writes_every_word_and_weight(ax):
    sentences = [["the", "film", "was", "great"], ["i", "ate", "soup"]]
    words = [torch.tensor([0.1, 0.2, 0.1, 0.6]), torch.tensor([0.3, 0.3, 0.4])]
    viz.document_attention(ax, sentences, words, torch.tensor([0.8, 0.2]), keys=(0,), title="doc")
    texts = [t.get_text() for t in ax.texts]
    for word in ["the", "film", "was", "great", "i", "ate", "soup"]:
        assert word in texts
    assert "0.80" in texts and "0.20" in texts and texts.count("(key)") == 1
    # the word with weight 0.6 is shaded darker than the one with 0.1
    shade = {
        t.get_text(): t.get_bbox_patch().get_facecolor() for t in ax.texts if t.get_bbox_patch()
    }
    assert sum(shade["great"][:3]) < sum(shade["the"][:3])
    # words of a line are laid out left to right without overlapping, once the figure is drawn
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    line = [t.get_window_extent(renderer) for t in ax.texts]
    line = [b for t, b in zip(ax.texts, line) if t.get_text() in ("the", "film", "was", "great")]
    assert all(a.x1 < b.x0 for a, b in zip(line, line[1:]))
    assert ax.get_title(loc="left") == "doc"
    with pytest.raises(ValueError, match="sentence_weights: expected 2 weights"):
        viz.document_attention(ax, sentences, words, torch.tensor([1.0]))
    with pytest.raises(ValueError, match="word_weights: expected 2 rows"):
        viz.document_attention(ax, sentences, words[:1], torch.tensor([0.5, 0.5]))


def test_document_attention_prints_as_svg():
    """The figure pickles (its words are placed from a callable object, not a closure), so the
    printed book gets its SVG (lib.viz.heatmap._svg_of_a_copy draws it from a pickled copy; a figure
    that does not pickle printed as a 137 ppi PNG), and the copy places the words as the figure does."""
    import pickle

    from lib.viz.heatmap import _svg_of_a_copy

    fig, ax = plt.subplots(figsize=(4.2, 2.0))
    sentences = [["the", "soup", "was", "superb", "."], ["we", "sat", "down", "."]]
    words = [torch.full((5,), 0.2), torch.full((4,), 0.25)]
    viz.document_attention(ax, sentences, words, torch.tensor([0.9, 0.1]), keys=(0,))
    copy = pickle.loads(pickle.dumps(fig))
    boxes = []
    for f in (fig, copy):
        f.canvas.draw()
        renderer = f.canvas.get_renderer()
        boxes.append([t.get_window_extent(renderer).bounds for t in f.axes[0].texts])
    np.testing.assert_allclose(boxes[1], boxes[0], rtol=1e-6)
    svg = _svg_of_a_copy(fig)
    assert svg is not None and "<svg" in svg
    plt.close("all")


def test_document_attention_on_a_narrow_figure_keeps_words_clear_of_the_weights():
    """fontsize sets the text; the words start after the weights and the header, whatever the
    figure's width (a narrow figure stays legible on a phone)."""
    fig, ax = plt.subplots(figsize=(4.9, 2.0))
    sentences = [["the", "soup", "was", "superb", "."], ["we", "sat", "down", "."]]
    words = [torch.full((5,), 0.2), torch.full((4,), 0.25)]
    viz.document_attention(ax, sentences, words, torch.tensor([0.9, 0.1]), fontsize=9.5)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
    assert {t.get_fontsize() for t in ax.texts} == {9.5}
    assert box["the"].x0 > max(box["0.90"].x1, box["weight"].x1)
    assert box["soup"].x0 > box["the"].x1  # a space between two words
    plt.close(fig)
    with pytest.raises(TypeError, match="fontsize"):
        viz.document_attention(ax, sentences, words, torch.tensor([0.9, 0.1]), fontsize="9")
    with pytest.raises(ValueError, match="fontsize"):
        viz.document_attention(ax, sentences, words, torch.tensor([0.9, 0.1]), fontsize=0)


def test_tinted_block_writes_the_values_over_the_heads_colours(ax):
    values = torch.tensor([[1.04, -0.04], [2.25, 3.0]])
    colors = [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)]
    viz.tinted_block(ax, values, [0, 1], ["q1", "q2"], "block", colors)
    assert [t.get_text() for t in ax.texts] == ["1.0", "0.0", "2.2", "3.0"]  # -0.0 written 0.0
    tint = ax.images[0].get_array()
    assert tint.shape == (2, 2, 3)
    assert np.allclose(tint[0, 0], [1.0, 0.55, 0.55]) and np.allclose(tint[1, 1], [0.55, 0.55, 1.0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["q1", "q2"]
    assert {t.get_fontsize() for t in ax.texts} == {7.0} and ax.title.get_fontsize() == 9.0
    ax.clear()
    viz.tinted_block(ax, values, [0, 1], ["q1", "q2"], "block", colors, fontsize=10)
    assert {t.get_fontsize() for t in ax.texts} == {10.0} and ax.title.get_fontsize() == 12.0
    assert ax.get_xticklabels()[0].get_fontsize() == 10.0
    with pytest.raises(ValueError, match="heads_of_columns: expected indices in"):
        viz.tinted_block(ax, values, [0, 2], ["q1", "q2"], "block", colors)
    with pytest.raises(ValueError, match="columns: expected 2 entries"):
        viz.tinted_block(ax, values, [0, 1], ["q1"], "block", colors)


def test_transformer_diagram_has_every_sublayer_of_figure_1(ax):
    viz.transformer_diagram(ax)
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("Add & LayerNorm") == 2 + 3  # encoder 2, decoder 3
    for name in [
        "multi-head self-attention",
        "masked multi-head self-attention",
        "multi-head cross-attention",
        "softmax: next-token probabilities",
        "encoder",
        "decoder",
    ]:
        assert name in texts
    assert texts.count("feed-forward") == 2 and texts.count("$\\times N$") == 2
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(boxes) == 16 + 2 and len(arrows) >= 15  # 16 boxes with text, 2 dashed stacks
    assert not ax.axison


def test_transformer_diagram_narrow_has_the_same_boxes_in_legible_text():
    width, height = viz.figures.TRANSFORMER_DIAGRAM_NARROW
    fig = plt.figure(figsize=(width, height), layout="none")
    ax = viz.transformer_diagram(fig.add_axes((0, 0, 1, 1)), narrow=True)
    texts = [t.get_text().replace("\n", " ") for t in ax.texts]
    # the paper's "Add & Norm" in the narrow drawing: "Add & LayerNorm" is too wide for its boxes
    assert texts.count("Add & Norm") == 2 + 3 and texts.count("feed-forward") == 2
    for name in [
        "multi-head self-attention",
        "masked multi-head self-attention",
        "multi-head cross-attention",
        "encoder",
        "decoder",
    ]:
        assert name in texts
    assert texts.count("$\\times N$") == 2
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    assert len(boxes) == 16 + 2
    # a phone shows it 328 px wide: 11-point text on 4.3 inches (4.5 with the margin) is 11 CSS px
    assert 4.0 <= width <= 4.35 and height <= 8
    assert min(t.get_fontsize() for t in ax.texts) / width >= 2.0
    # saved as a notebook shows it (110 dpi, tight box with its 0.1-inch margin), at most 600 px
    # wide: book/_static/reader.js shrinks such a picture to a phone's column; a wider one it
    # takes for a desktop drawing and shows at full size in a box that scrolls sideways
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    png_width = struct.unpack(">I", buffer.getvalue()[16:20])[0]
    assert 450 <= png_width <= 600, png_width
    assert 11 * 328 / (png_width / 110 * 72) >= 11, png_width  # its text on a phone, CSS px
    # every text inside the canvas
    fig.canvas.draw()
    canvas = fig.bbox
    for t in ax.texts:
        box = t.get_window_extent()
        assert canvas.x0 <= box.x0 and box.x1 <= canvas.x1, t.get_text()
        assert canvas.y0 <= box.y0 and box.y1 <= canvas.y1, t.get_text()
    with pytest.raises(TypeError, match="narrow: expected a bool, got int 1"):
        viz.transformer_diagram(ax, narrow=1)
    plt.close(fig)


def test_attention_heatmap_frames_cells(ax):
    viz.attention_heatmap(torch.full((3, 4), 0.25), ax=ax, colorbar=False, frames=[(0, 2), (2, 1)])
    framed = [p for p in ax.patches if p.get_edgecolor()[:3] == (1.0, 1.0, 1.0) and not p.fill]
    assert sorted(p.get_xy() for p in framed) == [(0.5, 1.5), (1.5, -0.5)]
    # review ch04 s8, item 2: a black outline under each white one, so the frame shows on bright cells
    dark = [p for p in ax.patches if p.get_edgecolor()[:3] == (0.0, 0.0, 0.0) and not p.fill]
    assert sorted(p.get_xy() for p in dark) == [(0.5, 1.5), (1.5, -0.5)]
    assert all(d.get_linewidth() > w.get_linewidth() for d, w in zip(dark, framed))
    with pytest.raises(
        ValueError, match=r"frames: expected \(row, column\) cells inside the 3 x 4"
    ):
        viz.attention_heatmap(torch.full((3, 4), 0.25), ax=ax, frames=[(3, 0)])


def test_soft_lookup_puts_the_output_at_the_weighted_mean_of_the_values():
    values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    weights = torch.tensor([0.5, 0.25, 0.25])
    path = torch.tensor([[0.0, 0.0], [0.25, 0.25]])
    fig = viz.soft_lookup(
        weights, values, ["a", "b", "c"], ["C0", "C1", "C0"], path=path, title="t"
    )
    ax_w, ax_v = fig.axes
    heights = [bar.get_height() for bar in ax_w.containers[0]]
    assert heights == [0.5, 0.25, 0.25] and ax_w.get_title() == "t"
    star = next(line for line in ax_v.lines if line.get_marker() == "*")
    assert np.allclose(star.get_xydata(), [[0.25, 0.25]])  # 0.5 v_0 + 0.25 v_1 + 0.25 v_2
    assert any(np.allclose(line.get_xydata(), path.numpy()) for line in ax_v.lines)
    plt.close(fig)
    with pytest.raises(ValueError, match=r"values: expected \[N, 2\] with N = 3"):
        viz.soft_lookup(weights, values[:2], ["a", "b", "c"], ["C0"] * 3)
    with pytest.raises(ValueError, match="colors: expected 3 entries"):
        viz.soft_lookup(weights, values, ["a", "b", "c"], ["C0"])


def test_encoding_vector_and_dimension():
    vec = torch.tensor([0.0, 1.0, 0.5, 0.8])
    fig = viz.encoding_vector(vec, "position 0")
    (ax,) = fig.axes
    sin, cos = ax.containers
    assert [b.get_x() + b.get_width() / 2 for b in sin] == [0, 2]
    heights = [[b.get_height() for b in bars] for bars in (sin, cos)]
    assert np.allclose(heights, [[0.0, 0.5], [1.0, 0.8]])
    assert ax.get_title() == "position 0"
    plt.close(fig)
    fig = viz.encoding_dimension(torch.sin(torch.arange(10.0)), "dim 0", color="C1")
    (line,) = fig.axes[0].lines
    assert np.allclose(line.get_ydata(), np.sin(np.arange(10.0))) and fig.axes[0].get_xlim() == (
        0,
        9,
    )
    plt.close(fig)


def test_encoding_vector_and_dimension_narrow_are_legible_on_a_phone():
    """Chapter 8's sliders draw them narrow: 5.2 inches wide with 13-point text, at least 10.5 CSS
    px high when a 360 px phone shows the picture 308 px wide, as large as the chapter's static
    12-point figures in the 328 px column (a reader measured 11-point text there at 9.0 px and
    found 12-point sliders the smallest text on the page), the same bars and line as the wide
    ones."""
    vec = torch.tensor([0.0, 1.0, 0.5, 0.8])
    for fig in (
        viz.encoding_vector(vec, "position 0", narrow=True),
        viz.encoding_dimension(vec, "dim 0", narrow=True),
    ):
        fig.canvas.draw()
        assert tuple(fig.get_size_inches()) == (5.2, 3.6)
        texts = [t for t in fig.findobj(plt.Text) if t.get_text() and t.get_visible()]
        smallest = min(t.get_fontsize() for t in texts)
        assert smallest / 72 * 308 / 5.2 >= 9.5, [t.get_text() for t in texts]
        assert smallest / 72 * 308 / 5.2 >= 12 / 72 * 328 / 5.2, smallest  # the static ones
        assert phone_text_px(fig) >= 11, phone_text_px(fig)  # data-phone-px: 11.4
        plt.close(fig)
    fig = viz.encoding_vector(vec, "position 0", narrow=True)
    sin, cos = fig.axes[0].containers
    assert [b.get_height() for b in cos] == pytest.approx([1.0, 0.8])
    assert len(fig.legends) == 1 and fig.axes[0].get_title() == "position 0"
    plt.close(fig)
    with pytest.raises(TypeError, match="narrow"):
        viz.encoding_vector(vec, "position 0", narrow="yes")


def test_fine_tuning_task_draws_tokens_outputs_and_labels(ax):
    viz.fine_tuning_task(ax, "(a) pairs", ["mia", "ran"], ["she", "won"], {0: "IsNext"}, "MNLI")
    texts = [t.get_text() for t in ax.texts]
    for token in ["[CLS]", "mia", "ran", "[SEP]", "she", "won", "C", "T1", "T6", "IsNext"]:
        assert token in texts
    assert texts.count("[SEP]") == 2 and ax.get_title() == "(a) pairs\nMNLI"
    # segment A (with [CLS] and its [SEP]) blue, segment B orange: 4 + 3 token boxes
    faces = [p.get_facecolor()[:3] for p in ax.patches if getattr(p, "get_y", lambda: 1)() == 0]
    blue, orange = matplotlib.colors.to_rgb("#c6dbef"), matplotlib.colors.to_rgb("#fdd0a2")
    assert faces == [blue] * 4 + [orange] * 3
    with pytest.raises(ValueError, match=r"outputs: expected positions in \[0, 4\)"):
        viz.fine_tuning_task(ax, "t", ["a", "b"], [], {9: "x"}, "")


def test_fine_tuning_task_keeps_the_labels_of_the_end_boxes_inside_the_axes():
    # a long label over [CLS] (or the last token) used to stick out left of the axes, which made
    # the chapter's saved figure 622 px wide instead of under 600 px (a phone then scrolls it)
    fig, ax = plt.subplots(figsize=(5.2, 3.1), layout="none")
    fig.subplots_adjust(left=0.01, right=0.99)
    tokens = "mia had a cat".split()
    viz.fine_tuning_task(
        ax, "t", tokens, [], {0: "IsNext / NotNext,", 5: "a long label"}, "top", fontsize=11
    )
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    first, last = (t for t in ax.texts if t.get_text() in ("IsNext / NotNext,", "a long label"))
    assert (first.get_ha(), last.get_ha()) == ("left", "right")
    for label in (first, last):
        extent = label.get_window_extent(renderer)
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1
    plt.close(fig)


def test_fine_tuning_task_draws_a_start_and_an_end_arrow_for_a_span(ax):
    # the chapter's question answering panel: an answer of three tokens, one arrow from its
    # first token and one from its last, each under its own label, centred on its box
    viz.fine_tuning_task(
        ax,
        "(c)",
        ["who", "ran", "?"],
        ["the", "old", "dog", "ran"],
        {5: "start", 7: "end"},
        "SQuAD",
    )
    arrows = [a for a in ax.get_children() if isinstance(a, FancyArrowPatch)]
    assert len(arrows) == 2
    labels = {t.get_text(): t for t in ax.texts if t.get_text() in ("start", "end")}
    assert labels["start"].get_position()[0] == 5 and labels["end"].get_position()[0] == 7
    assert {t.get_ha() for t in labels.values()} == {"center"}


def test_fine_tuning_task_sets_the_text_size(ax):
    viz.fine_tuning_task(ax, "t", ["a"], [], {1: "x"}, "top", fontsize=11)
    assert {t.get_fontsize() for t in ax.texts} == {11} and ax.title.get_fontsize() == 12


def test_training_curve_draws_the_losses_their_mean_and_the_references(ax):
    from lib.train import History

    history = History(losses=[4.0, 2.0, 3.0, 1.0])
    viz.training_curve(ax, history, window=2, references={"guess": 3.5, "val": 1.5})
    raw, mean, guess, val = ax.lines
    assert list(raw.get_ydata()) == [4.0, 2.0, 3.0, 1.0]
    assert list(mean.get_ydata()) == [4.0, 3.0, 2.5, 2.0]  # trailing mean of 2 steps
    assert list(guess.get_ydata()) == [3.5, 3.5] and list(val.get_ydata()) == [1.5, 1.5]
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["each step", "mean of the last 2 steps", "guess", "val"]
    with pytest.raises(TypeError, match="history: expected a lib.train.History"):
        viz.training_curve(ax, [1.0, 2.0])


def test_soft_lookup_narrow_stacks_the_panels_for_a_phone():
    values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    weights = torch.tensor([0.5, 0.25, 0.25])
    wide = viz.soft_lookup(weights, values, ["a", "b", "c"], ["C0", "C1", "C0"], title="t")
    narrow = viz.soft_lookup(
        weights, values, ["a", "b", "c"], ["C0", "C1", "C0"], title="t", narrow=True
    )
    assert tuple(wide.get_size_inches()) == (8.8, 3.8)  # the default drawing is unchanged
    assert abs(narrow.get_size_inches()[0] - 5.2) < 1e-9
    ax_w, ax_v = narrow.axes
    assert ax_w.get_position().y0 > ax_v.get_position().y1  # the weights above the values
    star = next(line for line in ax_v.lines if line.get_marker() == "*")
    assert np.allclose(star.get_xydata(), [[0.25, 0.25]])
    sizes = [t.get_fontsize() for ax in narrow.axes for t in ax.texts]
    sizes += [ax_w.title.get_fontsize(), ax_w.yaxis.label.get_fontsize()]
    sizes += [t.get_fontsize() for t in ax_v.get_legend().get_texts()]
    assert min(sizes) >= 13  # 13 points on 5.2 inches: 11.4 CSS px in a phone's 328 px column
    assert phone_text_px(narrow) >= 11
    # short enough that the picture and its slider fit a 1280 x 900 desktop window together
    assert narrow.get_size_inches()[1] <= 6.2
    narrow.draw_without_rendering()  # the legend beside the values, inside the picture
    box = ax_v.get_legend().get_window_extent()
    assert box.x1 <= narrow.bbox.x1 and box.x0 >= ax_v.get_window_extent().x1
    plt.close(wide)
    plt.close(narrow)


def test_soft_lookup_narrow_tick_labels_do_not_touch():
    # review s34: in the chapter's style "-1.0" and "-0.5" ran together under the values
    values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    with plt.rc_context():
        viz.set_style()  # the chapter's style (110 dpi), undone when the block ends
        fig = viz.soft_lookup(
            torch.tensor([0.5, 0.25, 0.25]), values, list("abc"), ["C0"] * 3, narrow=True
        )
        fig.draw_without_rendering()
        ax_v = fig.axes[1]
        lo, hi = ax_v.get_xlim()
        shown = [t for t in ax_v.get_xticklabels() if lo <= t.get_position()[0] <= hi]
        boxes = [t.get_window_extent() for t in shown if t.get_text()]
        assert len(boxes) >= 3 and all(b.x0 - a.x1 >= 20 for a, b in zip(boxes, boxes[1:]))
        plt.close(fig)


def test_soft_lookup_labels_the_bars_with_fmt():
    values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    weights = torch.tensor([0.986, 0.014, 0.0])
    args = (weights, values, ["a", "b", "c"], ["C0", "C1", "C0"])
    fig = viz.soft_lookup(*args, narrow=True, fmt="%.3f")
    assert [t.get_text() for t in fig.axes[0].texts] == ["0.986", "0.014", "0.000"]
    plt.close(fig)
    fig = viz.soft_lookup(*args)  # two decimals unless told
    assert [t.get_text() for t in fig.axes[0].texts] == ["0.99", "0.01", "0.00"]
    plt.close(fig)
    with pytest.raises(TypeError, match="fmt: expected a format string or a function, got int"):
        viz.soft_lookup(*args, fmt=3)


def test_soft_lookup_draws_a_dashed_chord_and_rejects_a_bad_one():
    weights = torch.tensor([0.2, 0.5, 0.3])
    values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    fig = viz.soft_lookup(weights, values, ["a", "b", "c"], ["C0"] * 3, chord=(0, 2), narrow=True)
    dashed = [line for ax in fig.axes for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and dashed[0].get_xydata().tolist() == [[1.0, 0.0], [-1.0, 0.0]]
    plt.close(fig)
    with pytest.raises(ValueError, match="chord: expected a pair"):
        viz.soft_lookup(weights, values, ["a", "b", "c"], ["C0"] * 3, chord=(0, 3))
