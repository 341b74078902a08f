"""Attention heatmaps, the masked-softmax table, and the book's matplotlib style.

Shape legend: Tq queries (rows of a heatmap), Tk keys (columns). Weights are drawn with
:data:`SEQUENTIAL_CMAP` on the fixed range [0, 1], so that two heatmaps of weights can be compared by
colour; raw scores, which can be negative, with :data:`DIVERGING_CMAP` on a range symmetric about 0.
Masked cells (a masked array, or the value -inf) are drawn light grey and hatched, with the text "-inf".

Nothing here chooses a matplotlib backend: notebooks keep their inline backend, tests use Agg.
"""

from __future__ import annotations

import re

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from lib._validate import check_bool

SEQUENTIAL_CMAP = "cividis"  # colour-blind-safe, monotone in lightness: attention weights in [0, 1]
DIVERGING_CMAP = "PuOr"  # colour-blind-safe diverging: raw scores that can be negative
MASKED_COLOR = "#d9d9d9"  # light grey; the hatching tells it apart from cividis's grey middle
MASKED_HATCH_COLOR = "#8c8c8c"
ANNOTATE_MAX = 12  # annotate=None writes the numbers into the cells up to 12 x 12


def set_style() -> None:
    """Apply the book's matplotlib defaults (call once at the top of a chapter).

    Starts from matplotlib's own defaults, so the result does not depend on what ran before; then sets
    the resolution, font sizes, a colour-blind-safe colour cycle (tableau-colorblind10), the default
    colormap (:data:`SEQUENTIAL_CMAP`) and constrained layout (titles and labels are never clipped).
    A fixed SVG hash salt makes SVG output byte-identical between runs. The backend is left alone; in
    a notebook, its inline figures carry an SVG beside the PNG (:func:`_inline_svg`).
    """
    mpl.rcdefaults()
    mpl.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "figure.figsize": (6.0, 4.0),
            "figure.constrained_layout.use": True,
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
            "legend.fontsize": 9,
            "axes.prop_cycle": mpl.style.library["tableau-colorblind10"]["axes.prop_cycle"],
            "axes.spines.top": False,
            "axes.spines.right": False,
            "image.cmap": SEQUENTIAL_CMAP,
            "svg.hashsalt": "attention-book",
        }
    )
    _inline_svg()


def _inline_svg() -> None:
    """In a notebook, each inline figure is output as PNG and SVG: the site shows the PNG, the printed
    book (jupyter-book's singlehtml build, which ``make pdf`` prints) the SVG, whose lines and text stay
    sharp at any size (_config.yml's ``nb_mime_priority_overrides``), with its heatmaps' pixels at
    300 dpi. The SVG is drawn from a copy of the figure, so the PNG is drawn as before (a second drawing
    of a figure with a layout engine can move it and warn). Outside IPython, nothing."""
    try:
        from IPython import get_ipython
        from matplotlib.figure import Figure
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or "inline" not in mpl.get_backend():
        return
    set_matplotlib_formats("png", "svg")
    shell.display_formatter.formatters["image/svg+xml"].for_type(Figure, _svg_of_a_copy)


def _svg_of_a_copy(fig) -> str | None:
    """The SVG of a copy of ``fig`` (None, so only the PNG is output, for a figure that cannot be copied)."""
    import pickle
    import warnings

    from IPython.core.pylabtools import print_figure

    try:
        copy = pickle.loads(pickle.dumps(fig))
    except Exception:  # noqa: BLE001 - an unpicklable artist: the figure keeps its PNG alone
        return None
    try:
        with warnings.catch_warnings():
            # the PNG, drawn from the figure itself, shows any warning
            warnings.simplefilter("ignore")
            return print_figure(copy, "svg", bbox_inches="tight", dpi=300)
    finally:
        plt.close(copy)


# ----------------------------------------------------------------------------------------------
# input handling


def _to_numpy(x, name: str) -> np.ndarray:
    """A float numpy array (or masked array) from a tensor, array or nested list."""
    if isinstance(x, np.ma.MaskedArray):
        return np.ma.asarray(x, dtype=float)  # keeps the mask
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (torch is not imported here)
        x = x.detach().cpu()
        if x.is_floating_point():
            x = x.float()  # bfloat16 has no numpy dtype
        x = x.numpy()
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name}: expected a tensor or an array of numbers, got {type(x).__name__}"
        ) from err


def _squeeze_2d(a: np.ndarray, name: str) -> np.ndarray:
    """Drop leading dims of size 1 (a batch or head of one) and check that a 2-D [Tq, Tk] remains."""
    shape = a.shape
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 2:
        raise ValueError(
            f"{name}: expected 2-D [Tq, Tk] (leading dims of size 1 are squeezed), got shape {tuple(shape)}"
        )
    if a.size == 0:
        raise ValueError(f"{name}: expected not empty, got shape {tuple(shape)}")
    return a


def _check_labels(labels, n: int, name: str, what: str, shape) -> list[str] | None:
    if labels is None:
        return None
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(
            f"{name} must have one entry per {what}: expected {n} (the matrix has shape {tuple(shape)}), got {len(labels)}"
        )
    return labels


# ----------------------------------------------------------------------------------------------
# drawing helpers


def _relative_luminance(rgb) -> float:
    """WCAG 2 relative luminance of an sRGB colour with components in [0, 1]."""
    c = np.asarray(rgb[:3], dtype=float)
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])


def text_color_for(rgba) -> str:
    """ "white" or "black", whichever has the higher WCAG contrast ratio against the cell colour."""
    lum = _relative_luminance(rgba)
    contrast_black = (lum + 0.05) / 0.05
    contrast_white = 1.05 / (lum + 0.05)
    return "white" if contrast_white > contrast_black else "black"


def _heatmap_size(tq: int, tk: int, colorbar: bool, ylabel_chars: int) -> tuple[float, float]:
    """A figure size (inches) that gives square cells about 0.5 inch wide when the matrix is small."""
    cell = 0.5 if max(tq, tk) <= ANNOTATE_MAX else max(0.15, 6.0 / max(tq, tk))
    width = tk * cell + 1.0 + 0.08 * ylabel_chars + (0.9 if colorbar else 0.0)
    height = tq * cell + 1.4
    return (float(np.clip(width, 3.0, 10.0)), float(np.clip(height, 2.4, 8.0)))


def _shown(label) -> str:
    """A tick label's visible characters: in "$...$" the markup ($, _, ^, braces) is dropped and each
    TeX command (\\alpha) counts as one character."""
    text = str(label)
    if "$" not in text:
        return text
    text = re.sub(r"\\[A-Za-z]+", "x", text)
    return re.sub(r"[$_^{}]", "", text)


def _labels_too_wide(ax, labels: list[str], tq: int, tk: int, colorbar: bool) -> bool:
    """Estimate whether the x tick labels would overlap if written horizontally."""
    fig = ax.figure
    box = ax.get_position()
    width_pt = box.width * fig.get_figwidth() * 72 * (0.85 if colorbar else 1.0)
    height_pt = box.height * fig.get_figheight() * 72
    cell_pt = min(width_pt / tk, height_pt / tq)  # the image keeps square cells (aspect="equal")
    size_pt = FontProperties(size=mpl.rcParams["xtick.labelsize"]).get_size_in_points()
    # average glyph ~0.6 em; mathtext markup ("$k_0$") is counted by what it shows ("k0")
    widest_pt = 0.6 * size_pt * max(len(_shown(label)) for label in labels)
    return widest_pt > 0.9 * cell_pt


# Long by its docstring (each argument explained); the drawing steps are the helpers below.
def attention_heatmap(
    weights,
    x_labels=None,
    y_labels=None,
    *,
    ax=None,
    title=None,
    cmap=None,
    annotate=None,
    fmt=".2f",
    vmin=0.0,
    vmax=1.0,
    colorbar=True,
    xlabel="keys",
    ylabel="queries",
    frames=(),
    annotate_size=None,
):
    """Draw one attention matrix as a heatmap: queries are rows, keys are columns.

    Args:
        weights: tensor or array [Tq, Tk]; leading dims of size 1 (a batch or head of one) are
            squeezed. Entries that are -inf, or masked in a numpy masked array, are drawn light grey
            and hatched, with the text "-inf".
        x_labels, y_labels: one label per key (column) / per query (row), e.g. the tokens.
        ax: the Axes to draw into; by default a new figure sized to the matrix.
        title: the Axes title.
        cmap: colormap name or object; default :data:`SEQUENTIAL_CMAP`.
        annotate: write the values into the cells; None means "when the matrix is at most 12 x 12".
            The text is white or black, whichever contrasts more with the cell (WCAG luminance).
        annotate_size: font size of the annotations in points; None means 9 up to 8 x 8, else 7.
        fmt: format spec of the annotations, or a function from a value to its text (e.g. one
            that writes an exact 0 as "0", so that a row of zeros does not run together).
        vmin, vmax: colour range; default [0, 1] for weights. None lets matplotlib pick from the
            data.
        colorbar: draw a colorbar next to the Axes.
        xlabel, ylabel: axis labels (None or "" for none).
        frames: (row, column) cells to outline in white on black, e.g. a gold alignment: for target word t
            aligned to source word j, the cell (t, j).

    Returns:
        The Axes. Its image is ``ax.images[0]``; ``ax.images[0].get_array()`` holds the data drawn.

    Raises:
        ValueError: the matrix is not 2-D after squeezing, or a label list has the wrong length.
    """
    a = _squeeze_2d(_to_numpy(weights, "weights"), "weights")
    tq, tk = a.shape
    if not (isinstance(fmt, str) or callable(fmt)):
        raise TypeError(f"fmt: expected a format spec or a function, got {type(fmt).__name__}")
    x_labels = _check_labels(x_labels, tk, "x_labels", "key (column)", a.shape)
    y_labels = _check_labels(y_labels, tq, "y_labels", "query (row)", a.shape)

    values = np.ma.getdata(a)
    masked = np.ma.getmaskarray(a) | np.isneginf(values)
    data = np.ma.masked_array(values, mask=masked)  # [Tq, Tk]

    if ax is None:
        ylabel_chars = max((len(label) for label in y_labels), default=2) if y_labels else 2
        _, ax = plt.subplots(
            figsize=_heatmap_size(tq, tk, colorbar, ylabel_chars), layout="constrained"
        )
    base = mpl.colormaps[cmap or SEQUENTIAL_CMAP] if isinstance(cmap, str) or cmap is None else cmap
    colormap = base.with_extremes(bad=MASKED_COLOR)  # a copy; the registered colormap is untouched
    image = ax.imshow(
        data, cmap=colormap, vmin=vmin, vmax=vmax, interpolation="nearest", aspect="equal"
    )

    _hatch(ax, masked)
    _frame_cells(ax, frames, tq, tk)
    if annotate is None:
        annotate = tq <= ANNOTATE_MAX and tk <= ANNOTATE_MAX
    if annotate:
        fontsize = annotate_size or (9 if max(tq, tk) <= 8 else 7)
        _annotate(ax, image, data, fmt, fontsize)
    _label_axes(ax, x_labels, y_labels, (tq, tk), xlabel, ylabel, colorbar)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.9)
    return ax


def _hatch(ax, masked):
    """Hatch the masked cells of a heatmap, so that they never read as a colour value."""
    for i, j in zip(*np.nonzero(masked)):
        ax.add_patch(
            Rectangle(
                (j - 0.5, i - 0.5),
                1,
                1,
                fill=False,
                hatch="///",
                edgecolor=MASKED_HATCH_COLOR,
                lw=0,
            )
        )


def _frame_cells(ax, frames, tq, tk):
    """Outline the (row, column) cells ``frames`` of a tq x tk heatmap in white on black."""
    for cell in frames:
        if len(cell) != 2 or not (0 <= cell[0] < tq and 0 <= cell[1] < tk):
            raise ValueError(
                f"frames: expected (row, column) cells inside the {tq} x {tk} matrix, got {cell!r}"
            )
        i, j = cell
        # a black outline under the white one: the frame shows on bright cells as well as dark ones
        for color, lw in (("black", 3.6), ("white", 1.8)):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=color, lw=lw))


def _annotate(ax, image, data, fmt, fontsize):
    """Write each cell's value, or "-inf" for a masked one, in white or black, whichever contrasts
    more with the cell."""
    values, masked = np.ma.getdata(data), np.ma.getmaskarray(data)
    tq, tk = data.shape
    rgba = image.to_rgba(data)  # [Tq, Tk, 4]; masked cells get the grey "bad" colour
    for i in range(tq):
        for j in range(tk):
            color = text_color_for(rgba[i, j])
            # a patch of the grey under the text, so the hatching does not cross it
            if masked[i, j]:
                box = dict(boxstyle="square,pad=0.15", facecolor=MASKED_COLOR, edgecolor="none")
                ax.text(
                    j,
                    i,
                    "-inf",
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    color=color,
                    bbox=box,
                )
            else:
                value = float(values[i, j])
                text = fmt(value) if callable(fmt) else format(value, fmt)
                ax.text(j, i, text, ha="center", va="center", fontsize=fontsize, color=color)


def _label_axes(ax, x_labels, y_labels, shape, xlabel, ylabel, colorbar):
    """A heatmap's tick labels (slanted where they would not fit), no ticks or frame, and the axes'
    names."""
    tq, tk = shape
    if x_labels is not None:
        ax.set_xticks(range(tk), x_labels)
        if _labels_too_wide(ax, x_labels, tq, tk, colorbar):
            plt.setp(ax.get_xticklabels(), rotation=45, ha="right", rotation_mode="anchor")
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if y_labels is not None:
        ax.set_yticks(range(tq), y_labels)
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)


# Long by its docstring (each argument explained); the code is its checks, then three panels.
def masked_softmax_table(
    scores,
    mask,
    x_labels=None,
    y_labels=None,
    *,
    fmt=".2f",
    stacked=False,
    annotate_size=None,
    figsize=None,
    colorbar=True,
):
    """Three panels side by side: scores, masked scores, and the weights the masked softmax makes.

    The middle panel shows what the softmax sees: the score where the mask is True (the query may
    attend) and -inf where it is False (grey, hatched, "-inf"). The right panel is
    ``lib.attention.masked_softmax(scores, mask)``: masked cells are exactly 0 and each row that has an
    allowed cell sums to 1. Scores of both signs use :data:`DIVERGING_CMAP` on a range symmetric
    about 0; scores of one sign use :data:`SEQUENTIAL_CMAP` from 0 to the largest magnitude, so that
    no half of the colour bar is left unused (the range is shared by both score panels); weights use
    :data:`SEQUENTIAL_CMAP` on [0, 1].

    Args:
        scores: tensor or array [Tq, Tk] (leading dims of size 1 are squeezed).
        mask: boolean tensor or array, True where a query may attend, broadcastable to [Tq, Tk]
            (e.g. a causal mask ``torch.ones(T, T, dtype=torch.bool).tril()``); None masks nothing.
        x_labels, y_labels: labels of the keys (columns) and queries (rows).
        fmt: format spec of the numbers in the cells, or a function from a value to its text (see
            :func:`attention_heatmap`).
        stacked: False puts the panels side by side; True one under the other, each as wide as the
            page allows (for matrices whose numbers would be too small side by side).
        annotate_size: font size of the numbers in points (see :func:`attention_heatmap`).
        figsize: (width, height) of the figure in inches; None sizes it from the matrix (cells
            about half an inch wide). A narrower figure shows its text larger on a page whose
            column is narrower than the figure.
        colorbar: a colour bar next to each panel; False gives the cells its width (the numbers
            in the cells say what the colours do).

    Returns:
        The matplotlib Figure; ``fig.axes[:3]`` are the panels in order.
    """
    import torch

    # imported here: lib.attention imports nothing from viz
    from lib.attention import masked_softmax

    s, m = _scores_and_mask(scores, mask)
    # validates the mask: bool (TypeError), broadcastable (ValueError)
    weights = masked_softmax(s, m)
    try:
        fits = m is None or torch.broadcast_shapes(m.shape, s.shape) == s.shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask: expected to broadcast to scores' shape {tuple(s.shape)}, got shape {tuple(m.shape)}"
        )
    allowed = torch.ones(s.shape, dtype=torch.bool) if m is None else torch.broadcast_to(m, s.shape)

    s_np = s.float().numpy()  # [Tq, Tk]
    allowed_np = allowed.numpy()
    masked_np = np.where(allowed_np, s_np, -np.inf)  # [Tq, Tk]
    score_colors = _score_colors(s_np)

    tq, tk = s_np.shape
    # before any figure exists
    x_labels = _check_labels(x_labels, tk, "x_labels", "key (column)", s_np.shape)
    y_labels = _check_labels(y_labels, tq, "y_labels", "query (row)", s_np.shape)
    check_bool(stacked, "stacked")
    check_bool(colorbar, "colorbar")
    if not (isinstance(fmt, str) or callable(fmt)):
        raise TypeError(f"fmt: expected a format spec or a function, got {type(fmt).__name__}")
    size = _table_size(tq, tk, y_labels, stacked, figsize)
    rows, cols = (3, 1) if stacked else (1, 3)
    fig, axes = plt.subplots(rows, cols, figsize=size, layout="constrained")
    common = dict(
        x_labels=x_labels,
        y_labels=y_labels,
        fmt=fmt,
        annotate_size=annotate_size,
        colorbar=colorbar,
    )
    attention_heatmap(s_np, ax=axes[0], title="scores", **score_colors, **common)
    attention_heatmap(masked_np, ax=axes[1], title="masked scores", **score_colors, **common)
    attention_heatmap(
        weights.float().numpy(), ax=axes[2], title="weights (masked softmax)", **common
    )
    return fig


def _scores_and_mask(scores, mask):
    """masked_softmax_table's scores [Tq, Tk] and mask as tensors, leading dims of size 1 squeezed."""
    import torch

    if isinstance(scores, torch.Tensor):
        s = scores.detach().cpu()
    else:
        s = torch.as_tensor(np.ma.getdata(_to_numpy(scores, "scores")))
    shape = tuple(s.shape)
    while s.ndim > 2 and s.shape[0] == 1:
        s = s[0]
    if s.ndim != 2 or s.numel() == 0:
        raise ValueError(
            f"scores: expected 2-D [Tq, Tk] (leading dims of size 1 are squeezed), got shape {shape}"
        )
    if mask is None:
        return s, None
    m = mask.detach().cpu() if isinstance(mask, torch.Tensor) else torch.as_tensor(np.asarray(mask))
    while m.ndim > 2 and m.shape[0] == 1:
        m = m[0]
    return s, m


def _score_colors(s_np):
    """The scores' colours: a sequential map over the data's range where the scores have one sign,
    else a diverging one centred on 0."""
    finite = s_np[np.isfinite(s_np)]
    lim = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
    if finite.size and finite.min() >= 0:
        return dict(cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=lim)
    if finite.size and finite.max() <= 0:
        return dict(cmap=SEQUENTIAL_CMAP + "_r", vmin=-lim, vmax=0.0)
    return dict(cmap=DIVERGING_CMAP, vmin=-lim, vmax=lim)


def _table_size(tq, tk, y_labels, stacked, figsize):
    """masked_softmax_table's figure size: ``figsize`` (checked), else three panels sized to the
    matrix, side by side or stacked (each about 7 inches wide)."""
    ylabel_chars = max(len(label) for label in y_labels) if y_labels else 2
    width_one, height = _heatmap_size(tq, tk, True, ylabel_chars)
    if stacked:
        scale = 7.0 / width_one  # each panel about 7 inches wide
        size = (7.0, 3 * height * scale + 0.4)
    else:
        size = (min(3 * width_one, 16.0), height + 0.2)
    if figsize is not None:
        try:
            size = tuple(float(x) for x in figsize)
        except (TypeError, ValueError):
            size = ()
        if len(size) != 2 or not all(x > 0 for x in size):
            raise ValueError(
                f"figsize: expected (width, height) in inches, both > 0; got {figsize!r}"
            )
    return size
