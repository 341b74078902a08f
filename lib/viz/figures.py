"""The drawings of single chapters that are not attention matrices: vectors as arrows (chapter 3),
images cut into regions and a captioner's attention over them, a document's two levels of
attention (chapter 5), a block of numbers tinted by head (chapter 7), the Transformer's
architecture diagram (chapter 9), a soft lookup among 2-D values (chapter 2), one vector or one
dimension of the sinusoidal table (chapter 8), labels placed clear of a scatter's points (chapter
11), BERT's four fine-tuning set-ups (chapter 14) and the training curve of any chapter that trains.

Each function draws into the Axes it is given (``ax``) and returns what the chapter needs next;
none of them computes anything a model does. Inputs are checked, with a ``TypeError`` or
``ValueError`` that names the argument.
"""

from __future__ import annotations

import math
from contextlib import nullcontext

import matplotlib as mpl
import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path
from matplotlib.transforms import Bbox

from lib._validate import check_bool, is_number
from lib.viz.diagrams import _arrow, _box
from lib.viz.heatmap import SEQUENTIAL_CMAP, _to_numpy

__all__ = [
    "vectors",
    "image_regions",
    "region_attention",
    "document_attention",
    "tinted_block",
    "transformer_diagram",
    "soft_lookup",
    "encoding_vector",
    "encoding_dimension",
    "fine_tuning_task",
    "training_curve",
    "word_rows",
    "label_points",
]


def _check_ax(ax) -> None:
    if not isinstance(ax, Axes):
        raise TypeError(f"ax: expected a matplotlib Axes, got {type(ax).__name__}")


def _image(image, name: str = "image") -> np.ndarray:
    """[3, H, W] in [0, 1] (channels first, as torch images) -> [H, W, 3]."""
    a = _to_numpy(image, name)
    if a.ndim != 3 or a.shape[0] != 3:
        raise ValueError(f"{name}: expected an RGB image [3, H, W], got shape {a.shape}")
    return a.transpose(1, 2, 0)


def vectors(ax, xy, labels, color, *, lw=2.0, alpha=1.0, side=1, lim=3.6):
    """Arrows from the origin to 2-D vectors ``xy`` [N, 2], each labelled beside its tip (``side``
    1: to the left of the arrow, -1: to the right), on square axes [-lim, lim]^2 with light
    axis lines. Returns the Axes."""
    _check_ax(ax)
    xy = _to_numpy(xy, "xy")
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"xy: expected 2-D vectors [N, 2], got shape {xy.shape}")
    labels = list(labels)
    if len(labels) != len(xy):
        raise ValueError(f"labels: expected {len(xy)} labels (one per vector), got {len(labels)}")
    if side not in (1, -1):
        raise ValueError(f"side: expected 1 (left) or -1 (right), got {side!r}")
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal")
    ax.axhline(0, color="0.88", lw=0.8, zorder=0)
    ax.axvline(0, color="0.88", lw=0.8, zorder=0)
    for (x, y), label in zip(xy.tolist(), labels):
        arrow = dict(arrowstyle="-|>", color=color, lw=lw, alpha=alpha, shrinkA=0, shrinkB=0)
        ax.annotate("", xy=(x, y), xytext=(0, 0), arrowprops=arrow)
        r = math.hypot(x, y) or 1.0
        ux, uy = x / r, y / r  # the label: just past the tip, a little to one side
        ax.text(
            x + 0.12 * ux - side * 0.28 * uy,
            y + 0.12 * uy + side * 0.28 * ux,
            label,
            color=color,
            ha="center",
            va="center",
            fontweight="bold",
        )
    return ax


def image_regions(ax, image, grid=(3, 3), cell=16):
    """An image [3, H, W] (values in [0, 1]) with thin grey lines between its ``grid`` of regions,
    each ``cell`` pixels wide. Returns the Axes."""
    _check_ax(ax)
    picture = _image(image)
    H, W, _ = picture.shape
    if H != grid[0] * cell or W != grid[1] * cell:
        raise ValueError(
            f"image: expected {grid[0] * cell} x {grid[1] * cell} pixels (grid={grid}, cell={cell}), got {H} x {W}"
        )
    ax.imshow(picture, interpolation="nearest")
    for k in range(1, grid[0]):
        ax.axhline(k * cell - 0.5, color="0.8", lw=0.6)
    for k in range(1, grid[1]):
        ax.axvline(k * cell - 0.5, color="0.8", lw=0.6)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_color("0.6")
        spine.set_linewidth(0.6)
    return ax


def region_attention(ax, image, weights, grid=(3, 3), cell=16, mix=0.75):
    """The image with the attention over its regions, ``weights`` [R] in [0, 1] (R = grid[0] *
    grid[1]), as a heatmap behind the shapes: every white pixel takes its region's colour of
    :data:`SEQUENTIAL_CMAP`, mixed with white (``mix`` of the colour), and the shapes keep their
    own colours. Returns a ScalarMappable for a colour bar of the colours as drawn."""
    _check_ax(ax)
    picture = _image(image)
    w = _to_numpy(weights, "weights").reshape(-1)
    if w.size != grid[0] * grid[1]:
        raise ValueError(
            f"weights: expected {grid[0] * grid[1]} region weights (grid={grid}), got {w.size}"
        )
    if not 0 < mix <= 1:
        raise ValueError(f"mix: expected a number in (0, 1], got {mix!r}")
    cmap = mpl.colormaps[SEQUENTIAL_CMAP]
    heat = np.kron(w.reshape(grid), np.ones((cell, cell)))  # [H, W], one value per region
    background = mix * cmap(heat)[..., :3] + (1 - mix)
    ink = (picture != 1).any(-1, keepdims=True)  # pixels of a shape
    image_regions(ax, np.where(ink, picture, background).transpose(2, 0, 1), grid, cell)
    mixed = ListedColormap(mix * cmap(np.linspace(0, 1, 256))[:, :3] + (1 - mix))
    return plt.cm.ScalarMappable(norm=plt.Normalize(0, 1), cmap=mixed)


class _RightOf:
    """A zero-width box at the height of ``row`` (a Text), right of every Text of ``texts``: an
    annotation placed from it (its ``xycoords``) is placed when the figure is drawn, after its
    layout, so it never overlaps them whatever the figure's width. A class rather than a closure,
    so that the figure pickles: the printed book's SVG is drawn from a pickled copy
    (lib.viz.heatmap._svg_of_a_copy), and a figure that does not pickle printed as a PNG."""

    def __init__(self, row, texts):
        self.row, self.texts = row, list(texts)

    def __call__(self, renderer):
        x = max(t.get_window_extent(renderer).x1 for t in self.texts)
        height = self.row.get_window_extent(renderer)
        return Bbox.from_extents(x, height.y0, x, height.y1)


# Long by design: the arguments' checks at the door, then one line of words after another.
def document_attention(
    ax, sentences, word_weights, sentence_weights, keys=(), title=None, fontsize=9
):
    """A hierarchical attention network's reading of one document: one sentence per line, a bar
    as long as the sentence's weight, then its words, each shaded by its weight inside the
    sentence (white = 0, the colour map's top colour = 1); the sentences in ``keys`` are marked
    "(key)".

    sentences: lists of words; word_weights: one row per sentence (at least as long as it);
    sentence_weights: one number per sentence; fontsize: of the words and weights, in points
    (the title is 1 point larger). Returns the Axes."""
    _check_ax(ax)
    if not is_number(fontsize):
        raise TypeError(f"fontsize: expected a number of points, got {type(fontsize).__name__}")
    if not fontsize > 0:
        raise ValueError(f"fontsize: expected a positive number of points, got {fontsize!r}")
    sentences = [list(s) for s in sentences]
    sentence_weights = _to_numpy(sentence_weights, "sentence_weights").reshape(-1)
    if len(sentence_weights) != len(sentences):
        raise ValueError(
            f"sentence_weights: expected {len(sentences)} weights (one per sentence), got {len(sentence_weights)}"
        )
    if len(word_weights) != len(sentences):
        raise ValueError(
            f"word_weights: expected {len(sentences)} rows (one per sentence), got {len(word_weights)}"
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(len(sentences) - 0.5, -0.8)
    ax.axis("off")
    top = np.array(mpl.colormaps[SEQUENTIAL_CMAP](0.95)[:3])

    header = ax.text(0, -0.65, "weight", fontsize=fontsize, color="0.3", va="center")
    numbers = []
    for i in range(len(sentences)):
        s = float(sentence_weights[i])
        ax.add_patch(plt.Rectangle((0, i - 0.3), 0.15 * s, 0.6, color=top))
        ax.add_patch(plt.Rectangle((0, i - 0.3), 0.15, 0.6, fill=False, ec="0.6", lw=0.6))
        # the number a little clear of its box, at any width of the figure
        numbers.append(
            ax.annotate(
                f"{s:.2f}",
                (0.15, i),
                xytext=(fontsize / 3, 0),
                textcoords="offset points",
                va="center",
                fontsize=fontsize,
                color="0.3",
            )
        )

    def after_the_weights(row):
        return _RightOf(row, [header, *numbers])

    gap = fontsize / 4  # points between two words
    for i, (sentence, w_row) in enumerate(zip(sentences, word_weights)):
        anchor, where, offset = after_the_weights(numbers[i]), (0, 0.5), fontsize / 2
        for word, w in zip(sentence, _to_numpy(w_row, "word_weights").tolist()):
            box = dict(boxstyle="square,pad=0.15", fc=(1 - w) + w * top, ec="none")
            anchor = ax.annotate(
                word,
                xy=where,
                xycoords=anchor,
                xytext=(offset, 0),
                textcoords="offset points",
                va="center",
                fontsize=fontsize,
                bbox=box,
            )  # the next word starts where this one ends
            where, offset = (1, 0.5), gap
        if i in keys:
            ax.annotate(
                "(key)",
                xy=(1, 0.5),
                xycoords=anchor,
                xytext=(2 * gap, 0),
                textcoords="offset points",
                va="center",
                fontsize=fontsize,
                color="0.35",
                style="italic",
            )
    ax.annotate(
        "words, shaded by their weight",
        xy=(0, 0.5),
        xycoords=after_the_weights(header),
        xytext=(fontsize / 2, 0),
        textcoords="offset points",
        va="center",
        fontsize=fontsize,
        color="0.3",
    )
    if title:
        ax.set_title(title, fontsize=fontsize + 1, loc="left")
    return ax


def tinted_block(ax, values, heads_of_columns, columns, title, head_colors, fontsize=7):
    """A block of numbers ``values`` [T, n], written in its cells (one decimal), each column
    tinted with a light version (0.55 + 0.45 c) of the colour of the head it belongs to
    (``heads_of_columns``: one index into ``head_colors`` per column); the columns are labelled
    ``columns``, the rows t=0, t=1, ... ``fontsize``: of the numbers and tick labels (the title
    is 2 points larger). Returns the Axes."""
    _check_ax(ax)
    v = _to_numpy(values, "values")
    if v.ndim != 2:
        raise ValueError(f"values: expected a block [T, n], got shape {v.shape}")
    heads_of_columns, columns = list(heads_of_columns), list(columns)
    for name, seq in (("heads_of_columns", heads_of_columns), ("columns", columns)):
        if len(seq) != v.shape[1]:
            raise ValueError(
                f"{name}: expected {v.shape[1]} entries (one per column), got {len(seq)}"
            )
    if any(not 0 <= h < len(head_colors) for h in heads_of_columns):
        raise ValueError(
            f"heads_of_columns: expected indices in [0, {len(head_colors)}) (head_colors), got {heads_of_columns}"
        )
    tint = np.array([[0.55 + 0.45 * c for c in head_colors[h][:3]] for h in heads_of_columns])
    ax.imshow(np.broadcast_to(tint[None], (v.shape[0], *tint.shape)), aspect="auto")  # [T, n, 3]
    for t in range(v.shape[0]):
        for j in range(v.shape[1]):
            text = f"{round(float(v[t, j]), 1) + 0.0:.1f}"  # + 0.0 turns -0.0 into 0.0
            ax.text(j, t, text, ha="center", va="center", fontsize=fontsize)
    ax.set_xticks(range(len(columns)), columns, fontsize=fontsize)
    ax.set_yticks(range(v.shape[0]), [f"t={t}" for t in range(v.shape[0])], fontsize=fontsize)
    ax.set_title(title, fontsize=fontsize + 2)
    return ax


# the narrow drawing's canvas in inches (width, height), aspect equal. At the notebooks' 110 dpi it
# is 473 px wide (495 with the inline backend's margin), under the 600 px above which
# book/_static/reader.js takes a picture for a desktop one and shows it in a box that scrolls
# sideways on a phone instead of shrinking it to the column; a phone shrinks it to 328 px, so its
# 11-point text shows at 11 CSS px. The drawing's units are 0.86 inch (_NARROW_UNITS: the box and
# line layout of a 5.0 by 7.35 inch canvas, drawn smaller), and its text keeps 11 points.
TRANSFORMER_DIAGRAM_NARROW = (4.3, 6.32)
_NARROW_UNITS = (5.0, 7.35)


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def transformer_diagram(ax, *, narrow=False):
    """The encoder-decoder of Vaswani et al. 2017, Figure 1, as the library implements it by
    default (post-LN): boxes for the sub-layers, arrows for the data, thin lines for the residual
    connections, the encoder's output feeding every decoder layer's cross-attention. ``narrow``:
    drawn for a phone, 11-point text with the long names on two or three lines and the paper's
    "Add & Norm" for "Add & LayerNorm", for an Axes filling a figure of
    ``TRANSFORMER_DIAGRAM_NARROW`` inches (4.3 x 6.32); the default is drawn for a figure 8 inches
    wide. Returns the Axes."""
    _check_ax(ax)
    check_bool(narrow, "narrow")
    if narrow:
        return _transformer_diagram_narrow(ax)

    def box(x, y, text, kind, w=2.6, h=0.5):
        _box(ax, x, y, text, kind, w=w, h=h)

    def arrow(x0, y0, x1, y1):
        _arrow(ax, x0, y0, x1, y1)

    def residual(x, y_from, y_to, side):
        # the skip connection: from below a sub-layer, around it, into its Add & LayerNorm
        ax.plot([x, x + 1.55 * side, x + 1.55 * side], [y_from, y_from, y_to], color="0.35", lw=1)
        arrow(x + 1.55 * side, y_to, x + 1.3 * side, y_to)

    def stack(x, ys, names, side):
        kinds = {"feed-forward": "ff", "Add & LayerNorm": "norm"}
        for y, name in zip(ys, names):
            w = 3.0 if "attention" in name else 2.6
            h = 0.4 if name.startswith("Add") else 0.5
            box(x, y, name, kinds.get(name, "attn"), w=w, h=h)
        for a, b in zip(ys, ys[1:]):
            arrow(x, a + 0.25, x, b - 0.22)
        for i in range(0, len(ys), 2):
            residual(x, ys[i] - (0.5 if i == 0 else 0.42), ys[i + 1], side)
        ax.add_patch(
            mpatches.FancyBboxPatch(
                (x - 1.85, ys[0] - 0.6),
                3.7,
                ys[-1] - ys[0] + 1.0,
                fc="none",
                ec="0.5",
                ls="--",
                lw=1,
                boxstyle="round,pad=0.05",
            )
        )
        ax.text(x + 1.95, ys[-1] + 0.3, "$\\times N$", fontsize=10, ha="left")

    xe, xd = 2.0, 7.6
    for x, text in [(xe, "source tokens"), (xd, "target tokens, shifted right")]:
        box(x, 0.3, text, "io", h=0.4)
        arrow(x, 0.5, x, 0.9)
        box(x, 1.15, "embedding $\\times\\sqrt{d_{model}}$ + positions", "emb", w=3.0)
        arrow(x, 1.4, x, 2.05)
    ye, yd = [2.3, 3.0, 3.9, 4.6], [2.3, 3.0, 3.9, 4.6, 5.5, 6.2]
    encoder = ["multi-head self-attention", "Add & LayerNorm", "feed-forward", "Add & LayerNorm"]
    stack(xe, ye, encoder, -1)
    decoder = [
        "masked multi-head self-attention",
        "Add & LayerNorm",
        "multi-head cross-attention",
        "Add & LayerNorm",
        "feed-forward",
        "Add & LayerNorm",
    ]
    stack(xd, yd, decoder, +1)
    # memory -> cross-attention
    ax.plot([xe, xe, 4.6, 4.6], [ye[-1] + 0.2, 6.0, 6.0, yd[2]], color="0.2", lw=1)
    arrow(4.6, yd[2], xd - 1.5, yd[2])
    ax.text(
        4.68, yd[2] + 0.1, "keys and values\n(the memory)", fontsize=7.5, ha="left", va="bottom"
    )
    ax.text(xe, 6.15, "encoder output = memory", fontsize=8, ha="center")
    arrow(xd, yd[-1] + 0.2, xd, 6.95)
    box(xd, 7.2, "linear (weights = target embedding)", "io", w=3.2)
    arrow(xd, 7.45, xd, 7.75)
    box(xd, 8.0, "softmax: next-token probabilities", "io", w=3.2)
    ax.text(xe, -0.35, "encoder", fontsize=12, ha="center", va="center", weight="bold")
    ax.text(xd, -0.35, "decoder", fontsize=12, ha="center", va="center", weight="bold")
    ax.set(xlim=(-0.2, 10.2), ylim=(-0.6, 8.4), aspect="equal")
    ax.axis("off")
    return ax


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def _transformer_diagram_narrow(ax):
    """transformer_diagram's phone drawing: the same boxes and lines, 11-point text."""
    font = 11
    width, height = _NARROW_UNITS
    xe, xd, x_mem = 1.42, 3.95, 2.62  # the two columns' centres, the memory's vertical line
    out, gap = 0.88, 0.22  # the residual lines' distance from a column's centre; between boxes

    def box(x, y, text, kind, w=1.45, h=0.3):
        _box(ax, x, y, text, kind, w=w, h=h, fontsize=font)

    def arrow(x0, y0, x1, y1):
        _arrow(ax, x0, y0, x1, y1)

    kinds = {"feed-forward": "ff", "Add & Norm": "norm"}

    def stack(x, names, bottom, side):
        """The sub-layers from ``bottom`` up; returns the centre and half-height of each box."""
        placed = []
        for name in names:
            h = 0.3 + 0.2 * name.count("\n")
            w = 1.62 if "attention" in name else 1.45
            box(x, bottom + h / 2, name, kinds.get(name, "attn"), w=w, h=h)
            placed.append((bottom + h / 2, h / 2))
            bottom += h + gap
        for (y0, h0), (y1, h1) in zip(placed, placed[1:]):
            arrow(x, y0 + h0, x, y1 - h1)
        for i in range(0, len(placed), 2):  # from below each sub-layer into its Add & LayerNorm
            y_from = placed[i][0] - placed[i][1] - gap / 2
            y_to = placed[i + 1][0]
            ax.plot([x, x + out * side, x + out * side], [y_from, y_from, y_to], color="0.35", lw=1)
            arrow(x + out * side, y_to, x + 0.73 * side, y_to)
        lo, hi = placed[0][0] - placed[0][1] - 0.2, placed[-1][0] + placed[-1][1] + 0.1
        ax.add_patch(
            mpatches.FancyBboxPatch(
                (x - 0.98, lo),
                1.96,
                hi - lo,
                fc="none",
                ec="0.5",
                ls="--",
                lw=1,
                boxstyle="round,pad=0.03",
            )
        )
        ax.text(x - 1.02, hi - 0.12, "$\\times N$", fontsize=font, ha="right")  # both on the left
        return placed, hi

    ax.text(xe, 0.15, "encoder", fontsize=12, ha="center", va="center", weight="bold")
    ax.text(xd, 0.15, "decoder", fontsize=12, ha="center", va="center", weight="bold")
    for x, text in [(xe, "source tokens"), (xd, "target tokens,\nshifted right")]:
        box(x, 0.6, text, "io", h=0.5)
        arrow(x, 0.85, x, 1.05)
        box(x, 1.4, "embedding\n$\\times\\sqrt{d_{model}}$\n+ positions", "emb", w=1.62, h=0.7)
        arrow(x, 1.75, x, 2.05)
    encoder = ["multi-head\nself-attention", "Add & Norm", "feed-forward", "Add & Norm"]
    decoder = [
        "masked\nmulti-head\nself-attention",
        "Add & Norm",
        "multi-head\ncross-attention",
        "Add & Norm",
        "feed-forward",
        "Add & Norm",
    ]
    _, top_e = stack(xe, encoder, 2.05, -1)
    placed, top_d = stack(xd, decoder, 2.05, +1)
    # memory -> every decoder layer's cross-attention
    y_cross, y_mem = placed[2][0], top_e + 0.3
    ax.plot([xe, xe, x_mem, x_mem], [top_e, y_mem, y_mem, y_cross], color="0.2", lw=1)
    arrow(x_mem, y_cross, xd - 0.81, y_cross)
    ax.text(
        xe,
        y_mem + 0.08,
        "encoder output = memory\n(keys and values)",
        fontsize=font,
        ha="center",
        va="bottom",
    )
    arrow(xd, top_d, xd, top_d + 0.22)
    box(xd, top_d + 0.47, "linear (weights =\ntarget embedding)", "io", w=1.9, h=0.5)
    arrow(xd, top_d + 0.72, xd, top_d + 0.92)
    box(xd, top_d + 1.17, "softmax: next-\ntoken probabilities", "io", w=1.9, h=0.5)
    ax.set(xlim=(0, width), ylim=(-0.05, height - 0.05), aspect="equal")
    ax.axis("off")
    return ax


# Long by design: one drawing step after another of one picture, in the order they are drawn.
def soft_lookup(
    weights, values, labels, colors, *, path=None, chord=None, title="", narrow=False, fmt="%.2f"
):
    """One state of a soft lookup: the weights over the keys as labelled bars (left) and, among the
    2-D values [N, 2] (their polygon, in the given order, shaded), the output sum_i w_i v_i as a
    star (right); ``path`` [P, 2], if given, is drawn as the line the output follows (e.g. as the
    sharpness grows). ``chord`` (i, j), if given, draws the segment from value i to value j as a
    thin dashed line. ``labels`` and ``colors``: one per key. ``narrow``: drawn for a phone, 5.2
    inches wide with 13-point text, the weights above the values and the legend beside them, 6.2
    inches tall (682 px at 110 dpi: with its slider it fits a 900 px desktop window). ``fmt``: the
    bars' labels, a format string or a function (as ``bar_label``'s). Returns the Figure."""
    w = _to_numpy(weights, "weights").reshape(-1)
    v = _to_numpy(values, "values")
    if v.ndim != 2 or v.shape != (len(w), 2):
        raise ValueError(
            f"values: expected [N, 2] with N = {len(w)} (one 2-D value per weight), got shape {v.shape}"
        )
    labels, colors = list(labels), list(colors)
    for name, seq in (("labels", labels), ("colors", colors)):
        if len(seq) != len(w):
            raise ValueError(f"{name}: expected {len(w)} entries (one per key), got {len(seq)}")
    if not (isinstance(fmt, str) or callable(fmt)):
        raise TypeError(f"fmt: expected a format string or a function, got {type(fmt).__name__}")
    if chord is not None:
        pair = list(chord) if isinstance(chord, (tuple, list)) else None
        if (
            pair is None
            or len(pair) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
            or not all(0 <= i < len(w) for i in pair)
        ):
            raise ValueError(
                f"chord: expected a pair (i, j) of value indices from 0 to {len(w) - 1}, got {chord!r}"
            )
    o = w @ v  # [2], the output
    size = 13 if narrow else 9  # points; 13 on 5.2 inches is 11.4 CSS px in a phone's 328 px column
    with (
        plt.rc_context(
            {
                "font.size": size,
                "axes.titlesize": size,
                "axes.labelsize": size,
                "xtick.labelsize": size,
                "ytick.labelsize": size,
            }
        )
        if narrow
        else nullcontext()
    ):
        if narrow:
            # placed by hand, in inches from the bottom left: the weights across the width, the
            # values below them at the left and their legend at the right
            fig = plt.figure(figsize=(5.2, 6.2), layout="none")
            ax_w = fig.add_axes([0.75 / 5.2, 3.95 / 6.2, 4.25 / 5.2, 1.75 / 6.2])
            ax_v = fig.add_axes([0.7 / 5.2, 0.4 / 6.2, 2.5 / 5.2, 2.75 / 6.2])
        else:
            # 8.8 inches wide: on a page about 730 px wide its 9-point text stays at 10 px or more
            fig, (ax_w, ax_v) = plt.subplots(1, 2, figsize=(8.8, 3.8), width_ratios=[1, 1.3])
        ax_w.bar(labels, w, color=colors)
        ax_w.bar_label(ax_w.containers[0], fmt=fmt, fontsize=size, padding=2)
        ax_w.set_ylim(0, 1.15)
        ax_w.set_ylabel("weight $\\alpha_i$")
        ax_w.set_title(title)
        br = "\n" if narrow else " "  # narrow: the legend's words in a column beside the values
        ax_v.fill(v[:, 0], v[:, 1], color="0.92", zorder=0, label=f"convex hull{br}of the values")
        if path is not None:
            p = _to_numpy(path, "path")
            ax_v.plot(p[:, 0], p[:, 1], color="0.55", lw=1, label=f"output as{br}$\\lambda$ grows")
        if chord is not None:
            i, j = chord
            ax_v.plot(v[[i, j], 0], v[[i, j], 1], color="0.35", lw=0.8, ls="--", zorder=1)
        ax_v.scatter(v[:, 0], v[:, 1], color=colors, zorder=2)
        for i, (x, y) in enumerate(v.tolist()):
            r = math.hypot(x, y) or 1.0  # the label 14 points outwards from the point
            ax_v.annotate(
                f"$v_{i}$",
                (x, y),
                xytext=(14 * x / r, 14 * y / r),
                textcoords="offset points",
                ha="center",
                va="center",
            )
        ax_v.plot(
            o[0],
            o[1],
            marker="*",
            ms=15,
            color="C5",
            ls="none",
            zorder=3,
            label="output $\\mathbf{o}$",
        )
        ax_v.set(
            xlim=(-1.45, 1.45), ylim=(-1.3, 1.4), aspect="equal", title="values and the output"
        )
        if narrow:  # the legend beside the values: the picture stays short enough for a desktop
            # whole-number ticks: at 13 points on 2.5 inches, "-1.0" and "-0.5" ran together
            ax_v.set_xticks([-1, 0, 1])
            ax_v.set_yticks([-1, 0, 1])
            ax_v.legend(
                loc="center left",
                bbox_to_anchor=(1.0, 0.5),
                fontsize=size,
                frameon=False,
                handlelength=1.2,
                handletextpad=0.4,
            )
        else:
            ax_v.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9)
    return fig


# A slider's picture on a 360 px phone is shown 308 CSS px wide (the 328 px column less the
# captioned figure's padding and the widget's margins, measured in Chromium's mobile emulation):
# 13-point text on 5.2 inches is 13 / 72 * 308 / 5.2, about 10.7 CSS px high there, no smaller
# than a static 5.2-inch figure's 12-point text in the 328 px column (10.5 px).
_NARROW_PT = 13


def _wide_figure(narrow=False):
    if not isinstance(narrow, bool):
        raise TypeError(f"narrow: expected True or False, got {narrow!r}")
    if narrow:  # drawn for a phone: 5.2 inches wide, 13-point text
        fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
        for item in [ax.xaxis.label, ax.yaxis.label, ax.title]:
            item.set_fontsize(_NARROW_PT)
        ax.tick_params(labelsize=_NARROW_PT)
        return fig, ax
    fig, ax = plt.subplots(figsize=(9, 3), layout="none")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.17, top=0.88)
    return fig, ax


def encoding_vector(vector, title, *, narrow=False):
    """One position's encoding vector [D] as bars over its dimensions: the even ones (sines) in
    C0, the odd ones (cosines) in C1. ``narrow``: drawn for a phone (5.2 inches, 13-point text,
    the key below the bars). Returns the Figure."""
    vec = _to_numpy(vector, "vector").reshape(-1)
    D = len(vec)
    fig, ax = _wide_figure(narrow)
    ax.bar(range(0, D, 2), vec[0::2], width=0.9, color="C0", label="sin (even dimensions)")
    ax.bar(range(1, D, 2), vec[1::2], width=0.9, color="C1", label="cos (odd dimensions)")
    ax.set(ylim=(-1.1, 1.1 if narrow else 1.55), xlim=(-1, D), xlabel="dimension", ylabel="value")
    ax.set_title(title, fontsize=_NARROW_PT if narrow else None)
    ax.set_yticks([-1, 0, 1] if narrow else [-1, -0.5, 0, 0.5, 1])
    if narrow:
        fig.legend(loc="outside lower center", ncols=1, fontsize=_NARROW_PT)
    else:
        ax.legend(loc="upper right", fontsize=9, ncols=2)
    return fig


def encoding_dimension(values, title, color="C0", *, narrow=False):
    """One dimension of an encoding table over the positions, ``values`` [P], as a line with
    markers. ``narrow``: drawn for a phone (5.2 inches, 13-point text). Returns the Figure."""
    col = _to_numpy(values, "values").reshape(-1)
    fig, ax = _wide_figure(narrow)
    ax.plot(range(len(col)), col, "o-", ms=2.5, lw=1.2, color=color)
    ax.set(ylim=(-1.1, 1.1), xlim=(0, len(col) - 1), xlabel="position", ylabel="value")
    ax.set_title(title, fontsize=_NARROW_PT if narrow else None)
    return fig


_BOX_HALF_WIDTH = 0.45  # a token's box spans its position +- this, in data units


def _label_anchor(position, n_tokens):
    """Where an output label over token ``position`` of ``n_tokens`` is anchored: (x, ha)."""
    if position == 0:
        return position - _BOX_HALF_WIDTH, "left"
    if position == n_tokens - 1:
        return position + _BOX_HALF_WIDTH, "right"
    return position, "center"


def fine_tuning_task(ax, title, first, second, outputs, top_label, *, fontsize=9):
    """One of BERT's fine-tuning set-ups (after Devlin et al. 2019, Figure 4): the input tokens
    [CLS] first [SEP] (second [SEP]) with segment A blue and B orange, the encoder as one box, its
    outputs C, T1, T2 ..., and arrows from the outputs the head reads (``outputs``: position ->
    label) to their labels. ``top_label`` names the tasks. ``fontsize``: the text's size in points
    (the title's is one more). Returns the Axes."""
    _check_ax(ax)
    first, second = list(first), list(second)
    tokens = ["[CLS]"] + first + ["[SEP]"] + (second + ["[SEP]"] if second else [])
    if any(not 0 <= i < len(tokens) for i in outputs):
        raise ValueError(
            f"outputs: expected positions in [0, {len(tokens)}), got {sorted(outputs)}"
        )
    n_first = len(first) + 2
    for i, t in enumerate(tokens):
        color = "#c6dbef" if i < n_first else "#fdd0a2"
        ax.add_patch(plt.Rectangle((i - 0.45, 0), 0.9, 0.7, facecolor=color, edgecolor="0.3"))
        ax.text(i, 0.35, t, ha="center", va="center", fontsize=fontsize)
        ax.add_patch(plt.Rectangle((i - 0.45, 2.3), 0.9, 0.7, facecolor="white", edgecolor="0.3"))
        ax.text(i, 2.65, "C" if i == 0 else f"T{i}", ha="center", va="center", fontsize=fontsize)
    ax.add_patch(plt.Rectangle((-0.5, 1.0), len(tokens), 1.0, facecolor="#e5e5e5", edgecolor="0.3"))
    ax.text(
        (len(tokens) - 1) / 2,
        1.5,
        "BERT (pretrained, then fine-tuned)",
        ha="center",
        va="center",
        fontsize=fontsize,
    )
    raised, previous = set(), None
    for i, label in sorted(outputs.items()):
        # a label next to another, one of them longer than 3 characters, goes one step higher
        # ("O" beside "ANIMAL" read as one label, reader s39)
        if previous is not None and previous[0] == i - 1 and previous[0] not in raised:
            if max(len(label), len(previous[1])) > 3:
                raised.add(i)
        previous = (i, label)
        lift = 0.5 if i in raised else 0.0
        arrow = mpatches.FancyArrowPatch(
            (i, 3.0), (i, 3.6 + lift), arrowstyle="-|>", mutation_scale=10, color="0.2"
        )
        ax.add_artist(arrow)
        # a label over the first or the last box starts or ends at that box's edge, so that it
        # stays inside the axes and the figure keeps its width (a phone scrolls a wider one)
        x, ha = _label_anchor(i, len(tokens))
        ax.text(x, 3.85 + lift, label, ha=ha, va="center", fontsize=fontsize, fontweight="bold")
    ax.set_xlim(-0.7, max(len(tokens), 9) - 0.3)
    ax.set_ylim(-0.2, 5.1 if raised else 4.6)
    ax.set_title(f"{title}\n{top_label}", fontsize=fontsize + 1)
    ax.axis("off")
    return ax


def training_curve(
    ax,
    history,
    window=20,
    *,
    labels=("each step", "mean of the last {window} steps"),
    references=None,
    lw=1.0,
):
    """A training run's loss: every step's loss in light grey and the trailing mean over
    ``window`` steps (``lib.train.History.smoothed``) in C0, with ``references`` ({label: value}),
    if given, as dashed horizontal lines in C1, C2, ... (e.g. the loss of guessing). ``history``: a
    ``lib.train.History``. ``labels``: the legend of the two curves ("{window}" is filled in); the
    axes, the title and the legend's place are the caller's. Returns the Axes."""
    _check_ax(ax)
    if not hasattr(history, "losses") or not hasattr(history, "smoothed"):
        raise TypeError(f"history: expected a lib.train.History, got {type(history).__name__}")
    raw_label, mean_label = labels
    ax.plot(history.losses, color="0.75", lw=lw, label=raw_label)
    ax.plot(history.smoothed(window), color="C0", lw=2, label=mean_label.format(window=window))
    for k, (label, value) in enumerate((references or {}).items()):
        ax.axhline(value, color=f"C{k + 1}", ls="--", lw=1.2, label=label)
    return ax


WORD_RIGHT, WORD_WRONG = "#cfe3f3", "#f6c28b"  # light blue, light orange (colour-blind safe pair)


# Long by its docstring (each argument explained); the code is about 40 lines.
def word_rows(
    rows,
    *,
    reference=None,
    colors=None,
    legend=None,
    title=None,
    width=84,
    figsize=None,
    fontsize=9,
    narrow=False,
):
    """Sentences as rows of word boxes, e.g. a reference and two translations, one under the other.

    Args:
        rows: a list of ``(label, words)``: the row's name (left) and its list of words.
        reference: None, or the label of one row; every row below it has its words coloured by
            whether they equal the reference word at the same position (light blue) or not (light
            orange, and bold), and the legend says so.
        colors: None, or one entry per row: None (white boxes, or the reference colouring) or a list
            of one matplotlib colour per word; overrides the reference colouring for that row.
        legend: None, or a list of ``(colour, text)`` entries drawn under the rows.
        title: the figure's title.
        width: the length of a line (about 1.3 characters per unit at 9 points, 11 inches wide)
            before a row wraps; each box is at least as wide as its word measured in the font.
        figsize: (w, h) in inches; None fits the height to the rows at a width of 11 inches, and
            (w, None) at a width of w (a fixed size keeps the states of an interactive figure the same
            size, with empty room below the shorter ones).
        fontsize: the size of the words, labels and legend in points; the boxes, the wrapping and the
            height fitted to the rows grow with it (a larger size fills more of ``width``).
        narrow: drawn for a phone's column: each row's name above its words instead of to their
            left, the words across the whole figure, the legend one entry a line.

    Returns:
        the matplotlib Figure.

    Raises:
        ValueError: no rows, an unknown reference label, or colours of the wrong length.
    """
    if not is_number(fontsize) or not fontsize > 0:
        raise ValueError(f"fontsize: expected a positive number of points, got {fontsize!r}")
    check_bool(narrow, "narrow")
    scale = fontsize / 9  # the layout below is measured at 9 points
    rows = [(str(label), [str(w) for w in words]) for label, words in rows]
    if not rows:
        raise ValueError("rows: expected at least one (label, words) pair, got none")
    labels = [label for label, _ in rows]
    if reference is not None and reference not in labels:
        raise ValueError(f"reference: expected one of the row labels {labels}, got {reference!r}")
    colors = list(colors) if colors is not None else [None] * len(rows)
    if len(colors) != len(rows):
        raise ValueError(
            f"colors must have one entry per row: expected {len(rows)}, got {len(colors)}"
        )
    ref = dict(rows).get(reference)
    below = labels.index(reference) if ref is not None else len(rows)  # rows compared with ref
    fixed_size = figsize is not None and figsize[1] is not None
    fig_width = 11 if figsize is None else figsize[0]
    # the height is fitted below, once the words are placed; the width sets the x-units' size
    fig, ax = plt.subplots(figsize=(fig_width, figsize[1] if fixed_size else 4))
    if narrow and fig.get_layout_engine() is None:  # constrained layout (set_style) fits itself
        fig.subplots_adjust(left=0.02, right=0.98)
    ax.set_xlim(-0.5, width + 2)
    ax.axis("off")
    text_width = _text_width(fig, ax, fontsize, [] if narrow else labels)
    placed, label_line, n_lines = _place_words(
        rows, colors, ref, below, width, scale, narrow, text_width
    )
    narrow_keys = narrow and bool(legend)  # the key one entry a line, under the rows
    if not fixed_size:
        if narrow_keys:  # the key's lines, in lines of words, below the last row
            fitted = _LINE_INCHES * scale * _narrow_bottom(n_lines, len(legend)) + 0.9
        else:
            fitted = _LINE_INCHES * scale * n_lines + 0.9 + (0.35 if legend else 0)
        fig.set_size_inches(fig_width, fitted)
    _draw_words(ax, placed, labels, label_line, fontsize, scale, narrow)
    _word_legend(ax, legend, ref is not None, fontsize, narrow)
    if narrow_keys:
        bottom = _narrow_bottom(max(n_lines, 2), len(legend))
    else:
        bottom = max(n_lines, 2) + (0.9 if (legend or ref is not None) else 0)
    if fixed_size:  # the same spacing in every state: rows at the top, room left below
        bottom = max(bottom, (figsize[1] - 0.9) / (_LINE_INCHES * scale))
    ax.set_ylim(-bottom, 0.8 if not narrow else 0.3)
    if title:
        ax.set_title(title, fontsize=max(10, fontsize), loc="left")
    return fig


_LINE_INCHES = 0.32  # a line of word boxes at 9 points
# a narrow figure's key, one entry a line, in lines of words (the book's style, constrained
# layout): an entry takes about 0.52 of a line at any font size, and the key starts 0.4 of a line
# above where the gap under the last row would end (tests/test_viz_interactive_chapters.py)
_KEY_ENTRY_LINES, _KEY_OVERLAP_LINES = 0.52, 0.4


def _narrow_bottom(n_lines, n_keys):
    """The lowest line of a narrow word_rows figure whose key has ``n_keys`` entries, one a line,
    under ``n_lines`` lines of words: the key just below the words (not a band of blank lines)."""
    return n_lines - _KEY_OVERLAP_LINES + _KEY_ENTRY_LINES * n_keys


def _points(text, fontsize, **font):
    """The width of ``text`` at ``fontsize`` points, in points."""
    font = FontProperties(size=fontsize, **font)
    return text_to_path.get_text_width_height_descent(text, font, ismath=False)[0]


def _text_width(fig, ax, fontsize, names):
    """``width(word, bold)``: the x-units that ``word`` takes in ``ax``, in word_rows' monospace
    font at ``fontsize`` points (measured from the font, so a box fits its word at any figure
    width and font size). ``names``: the row names drawn to the left of the axes, or none."""
    engine = fig.get_layout_engine()
    if engine is not None:  # where the layout puts the axes
        engine.execute(fig)
    axes_points = ax.get_position().width * fig.get_figwidth() * 72
    if engine is not None:  # and the room it will make for the names, left of the axes
        axes_points -= max((_points(n, fontsize, weight="bold") for n in names), default=0)
    x0, x1 = ax.get_xlim()
    per_point = (x1 - x0) / axes_points

    def width(word, bold):
        weight = "bold" if bold else "normal"
        return per_point * _points(word, fontsize, family="monospace", weight=weight)

    return width


def _place_words(rows, colors, ref, below, width, scale, narrow, text_width):
    """word_rows' layout: each word's (row, line, x, word, colour, bold), rows wrapping at
    ``width``, the words of the rows after index ``below`` coloured by whether they equal
    ``ref``'s; with the line of each row's name (narrow: above its words) and the lines in all.
    ``text_width(word, bold)`` is a word's width in x-units (_text_width)."""
    placed = []
    line = 0
    label_line = {}
    for r, ((label, words), row_colors) in enumerate(zip(rows, colors)):
        if narrow:
            label_line[r] = line - 0.1
            line += 1.05
        if row_colors is not None and len(row_colors) != len(words):
            raise ValueError(
                f"colors of row {label!r}: expected one per word ({len(words)}), got {len(row_colors)}"
            )
        x = 0.0
        for j, w in enumerate(words):
            if row_colors is not None:
                color, bold = row_colors[j], False
            elif r > below:
                right = j < len(ref) and w == ref[j]
                color, bold = (WORD_RIGHT if right else WORD_WRONG), not right
            else:
                color, bold = "white", False
            # a monospace character is about 0.76 x-units at 9 points in an 11-inch figure
            # 84 units wide; more in a narrower figure, where the word itself is measured
            size = max(0.76 * len(w) * scale, text_width(w, bold)) + 1.1 * scale
            if x > 0 and x + size > width:
                line, x = line + 1, 0.0
            placed.append((r, line, x, w, color, bold))
            x += size + 0.5 * scale
        line += 1.1 if narrow else 1.35  # a gap between rows
    return placed, label_line, line


def _draw_words(ax, placed, labels, label_line, fontsize, scale, narrow):
    """word_rows' boxes, and each row's name at its first line (narrow: above it)."""
    first_line = {}
    for r, ln, x, w, color, bold in placed:
        first_line.setdefault(r, ln)
        ax.text(
            x + 0.8 * scale,
            -ln,
            w,
            ha="left",
            va="center",
            fontsize=fontsize,
            family="monospace",
            fontweight="bold" if bold else "normal",
            bbox=dict(boxstyle="round,pad=0.25", facecolor=color, edgecolor="0.55", lw=0.6),
        )
    for r, ln in first_line.items():
        if narrow:
            ax.text(
                0,
                -label_line[r],
                labels[r],
                ha="left",
                va="center",
                fontsize=fontsize,
                fontweight="bold",
            )
        else:
            ax.text(
                -1, -ln, labels[r], ha="right", va="center", fontsize=fontsize, fontweight="bold"
            )


def _word_legend(ax, legend, compared, fontsize, narrow):
    """word_rows' legend under the rows: ``legend``'s entries, else, where rows were ``compared``
    with the reference, what the two colours mean."""
    if legend:
        handles = [mpatches.Patch(facecolor=c, edgecolor="0.55", label=t) for c, t in legend]
        ncol = 1 if narrow else len(handles)
    elif compared:
        handles = [
            mpatches.Patch(
                facecolor=WORD_RIGHT, edgecolor="0.55", label="same word as the reference"
            ),
            mpatches.Patch(facecolor=WORD_WRONG, edgecolor="0.55", label="another word (bold)"),
        ]
        ncol = 2
    else:
        return
    ax.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, -0.02),
        ncol=ncol,
        fontsize=fontsize,
        frameon=False,
    )


# Long by design: one pass that measures every point, then each label on its freest side.
def label_points(
    ax, xy, labels, names, *, placed=(), distance=6, margin=4, fontsize=8, leader=None, **text_kw
):
    """Label some points of a scatter plot, each label on the side of its point where it covers
    the fewest points and no other label (a hand-made, one-pass version of adjustText).

    Args:
        ax: the Axes that holds the scatter, its limits and layout final (call it last).
        xy: every point of the plot, [N, 2] (array, tensor or list): the labelled ones and those a
            label should not cover.
        labels: the names to write; each is placed at ``xy[names.index(label)]``.
        names: the name of every point of ``xy``, in order.
        placed: artists already on the plot to keep clear of: a previous call's Annotations, a
            Legend.
        distance: how far from its point a label starts, in points; eight sides are tried,
            above right first.
        margin: the room kept around a label, in points: a point or label that near counts as
            covered (so that no other marker sits close enough to be taken for the label's).
        fontsize, text_kw: passed to ``ax.annotate`` (color, weight, bbox...).
        leader: None, or the properties of a thin line drawn from each point to its label
            (``dict(color="0.3", lw=0.7)``). Then eight more sides, twice as far, are tried
            where the near ones are crowded; a side also counts as taken where its line
            would cross another label's line or pass through a label, and a labelled point
            covered, or nearer the label than its own, weighs ten times a plain one (a label
            must not be read as another point's).

    Returns:
        the list of Annotations, in the order of ``labels``.
    """
    _check_ax(ax)
    xy = _to_numpy(xy, "xy")
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"xy: expected an array of shape [N, 2], got shape {tuple(xy.shape)}")
    names = [str(n) for n in names]
    if len(names) != len(xy):
        raise ValueError(f"names: expected one per point ({len(xy)}), got {len(names)}")
    missing = [label for label in labels if label not in names]
    if missing:
        raise ValueError(f"labels: {missing} are not among the names of the points")
    ax.figure.canvas.draw()  # the final limits and layout: measure where the labels will be
    renderer = ax.figure.canvas.get_renderer()
    points = ax.transData.transform(xy)  # [N, 2], in pixels
    weight = np.ones(len(xy))  # [N]: what covering each point costs
    if leader is not None:
        weight[[names.index(label) for label in labels]] = 10
    boxes = [a.get_window_extent(renderer) for a in placed]
    lines = []  # the leader lines drawn so far, as (start, end) in pixels
    d = distance
    pad = margin * ax.figure.dpi / 72  # in pixels
    sides = [  # (dx, dy) in points, alignment
        (d, d, "left", "bottom"),
        (d, -d, "left", "top"),
        (-d, d, "right", "bottom"),
        (-d, -d, "right", "top"),
        (0, 1.5 * d, "center", "bottom"),
        (0, -1.5 * d, "center", "top"),
        (1.5 * d, 0, "left", "center"),
        (-1.5 * d, 0, "right", "center"),
    ]
    if leader is not None:  # then a crowded point's label may go twice as far, for a price
        sides += [(2 * dx, 2 * dy, ha, va) for dx, dy, ha, va in sides]
    out = []
    for label in labels:
        i = names.index(label)
        others = [names.index(o) for o in labels if o != label]
        best = None  # (cost, annotation, box, line)
        for dx, dy, ha, va in sides:
            ann = ax.annotate(
                label,
                xy[i],
                xytext=(dx, dy),
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=fontsize,
                **text_kw,
            )
            ann.set_in_layout(False)  # the layout stays the one measured
            box = ann.get_window_extent(renderer).padded(pad)
            inside = ((points >= [box.x0, box.y0]) & (points <= [box.x1, box.y1])).all(1)
            cost = float(weight[inside].sum()) + 100 * sum(box.overlaps(b) for b in boxes)
            cost += 0.5 * (abs(dx) + abs(dy) > 2 * d)  # the far ring
            line = (points[i], points[i] + np.array([dx, dy]) * ax.figure.dpi / 72)
            if leader is not None:
                tight = ann.get_window_extent(renderer)
                near = _distance_to_box(points[others], tight)  # [labelled]
                cost += 10 * int((near < _distance_to_box(points[i : i + 1], tight)).sum())
                cost += 100 * sum(_segments_cross(*line, *other) for other in lines)
                cost += 100 * sum(_segment_in_box(*line, b) for b in boxes)
                cost += 100 * sum(_segment_in_box(*other, tight) for other in lines)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, ann, box, line)
            else:
                ann.remove()
            if cost == 0:
                break
        boxes.append(best[2])
        lines.append(best[3])
        out.append(best[1])
        if leader is not None:  # from the corner of the label to its point, under the markers
            ax.annotate(
                "",
                xy[i],
                xytext=best[1].xyann,
                textcoords="offset points",
                arrowprops=dict(arrowstyle="-", shrinkA=0, shrinkB=0, **leader),
                zorder=leader.get("zorder", 2.5),
            ).set_in_layout(False)
    return out


def _segments_cross(a, b, c, d):
    """Whether the segments ab and cd cross (touching at an end does not count)."""

    def side(p, q, r):  # > 0 where r is left of pq
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def _segment_in_box(a, b, box):
    """Whether the segment ab passes through the box (tested at 20 points along it)."""
    t = np.linspace(0.05, 0.95, 20)[:, None]  # [20, 1]
    along = a + t * (b - a)  # [20, 2]
    return bool(((along > [box.x0, box.y0]) & (along < [box.x1, box.y1])).all(1).any())


def _distance_to_box(points, box):
    """The distance of each point [N, 2] to the box, 0 inside: [N]."""
    dx = np.maximum(np.maximum(box.x0 - points[:, 0], points[:, 0] - box.x1), 0)
    dy = np.maximum(np.maximum(box.y0 - points[:, 1], points[:, 1] - box.y1), 0)
    return np.hypot(dx, dy)
