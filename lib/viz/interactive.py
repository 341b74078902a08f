"""THE one mechanism for every interactive figure of the book (README, "Decisions": interactive figures).

Why this design: the book is read in two places. In Jupyter or Colab a kernel runs, but on the
published static site no kernel runs, so a figure that redraws itself through a Python callback
(``ipywidgets.interact``) would be frozen there. Instead every state of the figure is drawn once,
up front, as a PNG; the PNGs sit in a ``widgets.Stack`` (only the selected child is visible), and a
``widgets.SelectionSlider`` is linked to the stack with ``widgets.jslink``, a link that lives in the
browser. Moving the slider then shows another precomputed picture without asking Python anything:
the figure responds in Jupyter, in Colab and on the static site alike (the site saves the widget
state and serves the ipywidgets HTML manager itself). The cost is one PNG per state, in the time to
draw it and in the size of the page, so keep the options to a few dozen at most.

Ready-made figures on this mechanism:

- :func:`causal_mask_explorer` -- the masked-softmax table with a slider over the query position.
- :func:`sampling_explorer` -- next-token probabilities as bars, with a slider over temperature, top-k
  and top-p settings; the arithmetic is :func:`sampling_probabilities`, or any sampler passed in.
- :func:`rope_explorer` -- a query and a key rotated by RoPE at positions m and n, with a slider over
  (m, n): their first pair of features as arrows, and their score on the curve of score against m - n.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from lib._validate import is_int

MAX_NAMED_TIES = 3  # the alt text names up to this many keys that tie for the largest weight

# figures drawn for a phone: 11-point text on at most about 4.5 inches is 11 CSS px or more in a phone's
# 328 px column (the book's floor, tests/site), on 5.2 inches only 9.4
# (the slider figures here, the live figures' static pictures in lib.viz.live, the Playground's, and
# a chapter's own phone-sized figures: plt.rc_context(viz.PHONE_RC))
PHONE_RC = {
    key: 11
    for key in (
        "font.size",
        "axes.titlesize",
        "axes.labelsize",
        "xtick.labelsize",
        "ytick.labelsize",
        "legend.fontsize",
    )
}


# causal_mask_explorer's text: 13 points
_CAUSAL_RC = {key: 13 for key in PHONE_RC}


def _labelled(options) -> list[tuple[str, object]]:
    """(label, value) pairs from a list of values or of (label, value) pairs."""
    options = list(options)
    if not options:
        raise ValueError("options: expected at least one value, got an empty list")
    if all(isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str) for o in options):
        pairs = [(label, value) for label, value in options]
    else:
        pairs = [(str(value), value) for value in options]
    labels = [label for label, _ in pairs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"options: expected distinct labels (the slider shows them), got {labels}")
    return pairs


def _alt_text(alt, value, label: str, description: str) -> str:
    if alt is None:
        return f"Figure for {description} = {label}"
    if callable(alt):
        text = alt(value)
        if not isinstance(text, str):
            raise TypeError(
                f"alt(value): expected to return a string, got {type(text).__name__} for value {value!r}"
            )
        return text
    if isinstance(alt, str):
        return f"{alt} ({description} = {label})"
    raise TypeError(
        f"alt: expected None, a string or a callable(value) -> str, got {type(alt).__name__}"
    )


def figure_svg(fig: Figure) -> bytes:
    """The SVG bytes of a figure, the same size as :func:`figure_png`'s picture (its raster parts, such as
    a heatmap's cells, at 300 dpi; no date, so the same figure gives the same bytes)."""
    import warnings

    buffer = io.BytesIO()
    with warnings.catch_warnings():
        # a second drawing of a figure with a layout engine can warn (constrained layout finds no
        # layout grid the second time); the PNG, drawn first, shows any warning the figure has
        warnings.simplefilter("ignore")
        fig.savefig(buffer, format="svg", dpi=300, facecolor="white", metadata={"Date": None})
    return clean_svg(buffer.getvalue())


def clean_svg(svg: bytes) -> bytes:
    """Matplotlib's SVG as an ePub may hold it (epubcheck): without the DOCTYPE, whose external SVG 1.1
    DTD EPUB 3 forbids, and with ``d=""`` on the glyph paths matplotlib writes without one (the space
    character's), which SVG requires."""
    svg = re.sub(rb"<!DOCTYPE[^>]*>\s*", b"", svg, count=1)
    return re.sub(rb"<path(?![^>]*\sd=)", b'<path d=""', svg)


def figure_png(fig: Figure) -> bytes:
    """The PNG bytes of a figure at its own dpi (the same size for every state drawn the same way)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi, facecolor="white")
    return buffer.getvalue()


# Long by its docstring (the widget it returns, each argument); the code is about 45 lines.
# A 360 px phone shows a picture in the page's column, 328 px wide, or one drawn wider than 600 px at
# up to twice that in a box that scrolls sideways (book/_static/reader.js)
PHONE_COLUMN_PX, PHONE_WIDE_PX = 328, 600


def phone_text_px(fig: Figure, *, drawn: bool = False) -> float:
    """The smallest text a figure draws (titles, labels, the ticks of axes that are on, legends,
    annotations) in CSS px where a 360 px phone shows its picture at the figure's own dpi: in the
    328 px column, or one wider than 600 px at twice the column in a box that scrolls. ``drawn``: the
    figure was saved or drawn as it is now (its ticks are laid out), else it is laid out here."""
    if not drawn:
        fig.draw_without_rendering()
    sizes = [t.get_fontsize() for t in _drawn_texts(fig)]
    if not sizes:
        return float("inf")
    natural = fig.get_size_inches()[0] * fig.dpi
    return min(sizes) * fig.dpi / 72 * phone_shown_px(natural) / natural


def phone_shown_px(natural: float) -> float:
    """How wide a 360 px phone shows a picture ``natural`` pixels wide, in CSS px: in the 328 px
    column, or one wider than 600 px at up to twice that in a box that scrolls."""
    return min(natural, (2 if natural > PHONE_WIDE_PX else 1) * PHONE_COLUMN_PX)


# matplotlib's SVG writes each text as glyph paths under "scale(s -s)", s its size in points / 100, on a
# canvas of the SVG's width and height in points
_GLYPH_SCALE = re.compile(r"scale\(([\d.]+) -\1\)")
_SVG_SIZE = re.compile(r'<svg[^>]*?\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"')


def svg_text(svg: str) -> tuple[float, float, float] | None:
    """(smallest text in points, width, height in points) of a figure matplotlib saved as SVG with
    its text as paths (what the build draws); None for a figure without text. The measure of what
    was drawn, beside :func:`phone_text_px`'s of a live figure: the site's figure test and the
    slides both read it."""
    sizes = [float(s) * 100 for s in _GLYPH_SCALE.findall(svg)]
    size = _SVG_SIZE.search(svg)
    if not sizes or not size:
        return None
    return min(sizes), float(size.group(1)), float(size.group(2))


def _drawn_texts(fig: Figure) -> list:
    """The texts with words in them that drawing ``fig`` (laid out) shows: an axis's only where its
    axes are on, its tick labels those of its current ticks."""
    from matplotlib.axis import Axis
    from matplotlib.text import Text

    found = []

    def walk(artist) -> None:
        if not artist.get_visible():
            return
        if isinstance(artist, Axis):
            if artist.axes.axison:
                found.extend(artist.get_ticklabels(which="both"))
                found.extend([artist.label, artist.get_offset_text()])
            return
        if isinstance(artist, Text):
            found.append(artist)
        else:
            for child in artist.get_children():
                walk(child)

    walk(fig)
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def interactive(draw, options, *, description="value", alt=None, notes=None):
    """A figure with a slider over precomputed states; responds with or without a running kernel.

    Args:
        draw: ``draw(value) -> matplotlib.figure.Figure``; called once per option, up front. The
            figure (and any other figure ``draw`` opened) is closed after it is saved.
        options: a list of values (labelled ``str(value)``) or of ``(label, value)`` pairs.
        description: the slider's label, e.g. ``"d_k"``.
        alt: alternative text of each picture: a callable ``alt(value) -> str`` (best: describe what
            this state shows), a string (used for every state, followed by "(description = label)"),
            or None for "Figure for description = label".
        notes: None, or a callable ``notes(value) -> str``: lines of text shown under the picture as
            the page's own text (its font and size, on a phone too), for numbers the reader must read;
            the line breaks are kept.

    Returns:
        ``ipywidgets.VBox([slider, stack])``: ``stack`` is a ``widgets.Stack`` with one
        ``widgets.HTML`` per option, holding ``<img src="data:image/png;base64,..." alt="...">``;
        Each ``<img>`` carries ``data-phone-px``: its smallest text on a phone (:func:`phone_text_px`),
        which the book's site test holds at 11 CSS px or more.
        ``slider`` is a ``widgets.SelectionSlider`` over the labels, starting at index 0, linked in the
        browser by ``widgets.jslink((slider, "index"), (stack, "selected_index"))``. The link is also
        kept as the attribute ``.link`` of the returned box.

    Raises:
        ValueError: no options, or two options with the same label.
        TypeError: ``draw`` did not return a Figure, or ``alt`` or ``notes`` is of the wrong type.
    """
    import ipywidgets as widgets

    pairs = _labelled(options)
    if notes is not None and not callable(notes):
        raise TypeError(
            f"notes: expected None or a callable(value) -> str, got {type(notes).__name__}"
        )
    pages = []
    for label, value in pairs:
        open_before = set(plt.get_fignums())
        fig = None
        try:
            fig = draw(value)
            if not isinstance(fig, Figure):
                raise TypeError(
                    f"draw(value): expected to return a matplotlib Figure, got {type(fig).__name__} for {value!r}"
                )
            png = base64.b64encode(figure_png(fig)).decode("ascii")
            phone_px = phone_text_px(fig, drawn=True)
            if not pages:  # the first state is also the static form's picture, printed: a vector
                first_svg = base64.b64encode(figure_svg(fig)).decode("ascii")
        # never leave a figure open: inline backends would show every state below the widget
        finally:
            if isinstance(fig, Figure):
                plt.close(fig)
            for number in set(plt.get_fignums()) - open_before:
                plt.close(number)
        text = html.escape(_alt_text(alt, value, label, description), quote=True)
        style = "max-width:100%;height:auto"
        img = (
            f'<img src="data:image/png;base64,{png}" alt="{text}" style="{style}" '
            f'data-phone-px="{phone_px:.1f}">'
        )
        pages.append(widgets.HTML(value=img + _notes_html(notes, value)))

    stack = widgets.Stack(children=pages, selected_index=0)
    slider = widgets.SelectionSlider(
        options=[label for label, _ in pairs],
        index=0,
        description=description,
        continuous_update=True,  # the pictures are precomputed, so following the drag costs nothing
        readout=True,
        style={"description_width": "initial"},
        layout=widgets.Layout(width="100%", max_width="40em"),
    )
    # runs in the browser, no kernel
    link = widgets.jslink((slider, "index"), (stack, "selected_index"))
    box = widgets.VBox([slider, stack])
    box.link = link  # keeps the link reachable (tests, and anyone who wants to unlink)
    _add_static_form(box, pages[0].value, [label for label, _ in pairs], description, first_svg)
    return box


def _notes_html(notes, value) -> str:
    """The lines of ``notes(value)`` as HTML under the picture ("" without notes)."""
    if notes is None:
        return ""
    text = notes(value)
    if not isinstance(text, str):
        raise TypeError(
            f"notes(value): expected to return a string, got {type(text).__name__} for value {value!r}"
        )
    lines = "<br>".join(html.escape(line) for line in text.splitlines())
    # 16 px, the site's body text: a widget's HTML is 13 px, which a reader measured at 9-10 px
    # letters on a phone (Fig. 18.2's notes, s27)
    style = "margin:0.3em 0 0;line-height:1.5;font-size:16px"
    return f'<p class="book-figure-notes" style="{style}">{lines}</p>'


def _add_static_form(
    box, first_page: str, labels: list[str], description: str, first_svg: str
) -> None:
    """Give the box a ``text/markdown`` form for readers that run no widgets (the ePub, print, a viewer
    without a widget manager): the first picture (``first_svg``, base64: a vector, sharp on paper as the
    book's other printed figures) with its alt text and a line saying where the figure is interactive
    and what the slider changes, the picture's notes (if any) under it. Jupyter, Colab and the site
    still show the widget (a widget view outranks Markdown everywhere a widget manager runs). The
    picture is an HTML ``<img>``: Markdown's image syntax refuses SVG data URIs (markdown-it's link
    check lets only PNG, JPEG, GIF and WebP through)."""
    match = re.search(r'<img src="data:image/png;base64,[^"]+" alt="([^"]*)"', first_page)
    alt = html.escape(html.unescape(match.group(1)).replace("[", "(").replace("]", ")"))
    # a label is text, not markup: the token "<s>" would open a strikethrough over the rest of a page
    labels, description = [html.escape(label) for label in labels], html.escape(description)
    shown = ", ".join(labels) if len(labels) <= 12 else f"{labels[0]} to {labels[-1]}"
    notes = re.search(r'<p class="book-figure-notes"[^>]*>(.*)</p>', first_page)
    notes = notes.group(1).replace("<br>", "  \n") + "\n\n" if notes else ""
    static = (
        f'<img src="data:image/svg+xml;base64,{first_svg}" alt="{alt}">\n\n{notes}'
        f"*Interactive figure, shown at its first setting ({description} = {labels[0]}). On the "
        f"book's website a slider sets {description} ({shown}: {len(labels)} pictures).*"
    )
    widget_bundle = box._repr_mimebundle_

    def bundle(**kwargs):
        data = widget_bundle(**kwargs)
        if isinstance(data, tuple):
            data, metadata = data
            return {**data, "text/markdown": static}, metadata
        return {**(data or {}), "text/markdown": static}

    box._repr_mimebundle_ = bundle
    box.static_markdown = static


# ----------------------------------------------------------------------------------------------
# Ready-made interactive figures, built on :func:`interactive` (so they respond on the static site too).


def _vector(x, name: str):
    """A 1-D float64 tensor from a tensor, array or list of numbers."""
    import numpy as np
    import torch

    if isinstance(x, torch.Tensor):
        t = x.detach().cpu().to(torch.float64)
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=float), dtype=torch.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"{name}: expected a tensor or a list of numbers, got {type(x).__name__}"
            ) from err
    return t


def causal_mask_explorer(scores, tokens, *, mask=None, description="query", alt=None):
    """The masked-softmax table of one attention, with a slider over the query position.

    Each state shows, for one query position t: above, the whole table of weights
    ``masked_softmax(scores, mask)`` (masked cells grey and hatched, exactly 0) with row t framed;
    below, the weights of query t as bars, with the mask (filled) and without it (the plain
    softmax of the same scores, outlined), so that one sees where the weight of the masked future keys
    went: to the allowed keys, in proportion to what they had. Every state is drawn up front
    (:func:`interactive`), so the slider works on the static site. Drawn for a phone: the two panels
    one above the other, 5.2 inches wide, with 13-point text.

    Args:
        scores: tensor or array [T, T] (leading dims of size 1 are squeezed): query i's score for key j.
        tokens: T labels, one per position (used for the queries and the keys).
        mask: bool [T, T] (True = may attend, the book's convention); None means the causal mask
            (query i may attend to keys 0 ... i).
        description: the slider's label.
        alt: alternative text, as in :func:`interactive`; None describes each state from its numbers.

    Returns:
        The ``ipywidgets.VBox([slider, stack])`` of :func:`interactive`, one state per query position,
        labelled "t token".

    Raises:
        ValueError: scores not square 2-D, wrong number of tokens, or a mask of another shape.
        TypeError: a mask that is not boolean.
    """

    from lib.attention import masked_softmax

    s, tokens, mask = _causal_inputs(scores, tokens, mask)
    masked = masked_softmax(s, mask)  # [T, T]; masked entries exactly 0
    full = masked_softmax(s)  # [T, T]; the plain softmax

    def draw(t):
        # 5.2 inches with 13-point text (the cells' numbers too): about 10.5 CSS px when a 360 px
        # phone shows it 313 px wide (at 11 points, 9.2 read as 6-8 px: a reader's report, Fig. 6.6)
        with plt.rc_context(_CAUSAL_RC):
            return _causal_mask_state(t, masked, full, mask, tokens)

    def describe(t):
        return _causal_mask_alt(t, masked, full, mask, tokens)

    options = [(f"{t} {token}", t) for t, token in enumerate(tokens)]
    return interactive(draw, options, description=description, alt=describe if alt is None else alt)


def _causal_inputs(scores, tokens, mask):
    """causal_mask_explorer's arguments checked: scores [T, T] (float64, leading dims of size 1
    squeezed), T tokens as strings, the mask (default causal) a bool [T, T]."""
    import torch

    s = (
        scores.detach().cpu().to(torch.float64)
        if isinstance(scores, torch.Tensor)
        else _vector(scores, "scores")
    )
    shape = tuple(s.shape)
    while s.ndim > 2 and s.shape[0] == 1:
        s = s[0]
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] == 0:
        raise ValueError(
            f"scores: expected a square 2-D [T, T] table (leading dims of size 1 are squeezed), got shape {shape}"
        )
    T = s.shape[0]
    tokens = [str(t) for t in tokens]
    if len(tokens) != T:
        raise ValueError(f"tokens: expected {T} labels, one per position, got {len(tokens)}")
    if mask is None:
        mask = torch.ones(T, T, dtype=torch.bool).tril()
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise TypeError(f"mask: expected a bool tensor (True = may attend), got {got}")
    if tuple(mask.shape) != (T, T):
        raise ValueError(f"mask: expected shape {(T, T)} like the scores, got {tuple(mask.shape)}")
    return s, tokens, mask


# Long by design: one drawing step after another of one picture, in the order they are drawn.
def _causal_mask_state(t, masked, full, mask, tokens):
    """One state of causal_mask_explorer: the weights' table with query t's row framed, and query
    t's weights as bars, with the mask and without it."""
    import numpy as np

    from lib.viz.heatmap import MASKED_COLOR, attention_heatmap, text_color_for

    T = len(tokens)
    table = np.ma.masked_array(masked.numpy(), mask=~mask.numpy())  # masked cells: grey, hatched
    FONT = _CAUSAL_RC["font.size"]
    # the cells' numbers without the leading 0 (".27"), as chapter 3's tables: at 13 points "0.27"
    # fills a cell of a nine-token table (0.39 inches) and runs into its neighbours'; a weight of
    # 1.00 is written "1" for the same reason ("1.00" ran into the frame of row 0, review ch06 s32)
    CELL = FONT

    def label(w):
        text = f"{w:.2f}"
        return "1" if text == "1.00" else text.removeprefix("0")

    fig, (ax1, ax2) = plt.subplots(
        2, 1, figsize=(5.2, 8.8), height_ratios=[1.25, 1], layout="constrained"
    )
    attention_heatmap(
        table,
        tokens,
        tokens,
        ax=ax1,
        colorbar=False,
        annotate=False,
        title="weights with the mask\n(row of the query framed)",
    )
    if T <= 12:  # the numbers; a masked weight is exactly 0, not -inf
        rgba = ax1.images[0].to_rgba(table)
        for i in range(T):
            for j in range(T):
                if mask[i, j]:
                    ax1.text(
                        j,
                        i,
                        label(masked[i, j]),
                        ha="center",
                        va="center",
                        fontsize=CELL,
                        color=text_color_for(rgba[i, j]),
                    )
                else:
                    ax1.text(
                        j,
                        i,
                        "0",
                        ha="center",
                        va="center",
                        fontsize=CELL,
                        color="black",
                        bbox=dict(
                            boxstyle="square,pad=0.15", facecolor=MASKED_COLOR, edgecolor="none"
                        ),
                    )
    ax1.add_patch(plt.Rectangle((-0.5, t - 0.5), T, 1, fill=False, edgecolor="#d55e00", lw=3))
    x = np.arange(T)
    ax2.bar(
        x,
        full[t].numpy(),
        width=0.8,
        fill=False,
        edgecolor="0.35",
        lw=1.2,
        ls="--",
        label="without the mask",
    )
    ax2.bar(x, masked[t].numpy(), width=0.55, color="C0", label="with the mask")
    for j in np.nonzero(~mask[t].numpy())[0]:
        ax2.text(
            j, 0.02, "masked", rotation=90, ha="center", va="bottom", fontsize=FONT, color="0.3"
        )
    ax2.set_xticks(x, tokens, rotation=45, ha="right", rotation_mode="anchor")
    ax2.set(ylim=(0, 1.05), ylabel="weight", title=f"weights of query {t} '{tokens[t]}'")
    ax2.legend(loc="upper right", fontsize=FONT)
    return fig


def _causal_mask_alt(t, masked, full, mask, tokens):
    """causal_mask_explorer's alt text of query t's state, from its numbers: the largest masked
    weight, on every key that ties with it (to the two decimals shown), and what those same keys
    had without the mask."""
    allowed = mask[t].nonzero().flatten().tolist()
    if not allowed:
        return (
            f"Masked-softmax weights with query {t} '{tokens[t]}' framed: it may attend to no key"
        )
    where = (
        f"key {allowed[0]} only"
        if len(allowed) == 1
        else f"keys {allowed[0]} to {allowed[-1]}"
        if allowed == list(range(allowed[0], allowed[-1] + 1))
        else f"{len(allowed)} keys"
    )
    shown = f"{masked[t].max():.2f}"
    tops = [j for j in allowed if f"{masked[t, j]:.2f}" == shown]
    unmasked = [f"{full[t, j]:.2f}" for j in tops]
    if len(tops) == 1:
        largest = f"{shown} on '{tokens[tops[0]]}', which had {unmasked[0]} without the mask"
    elif len(tops) <= MAX_NAMED_TIES:
        names = ", ".join(f"'{tokens[j]}'" for j in tops[:-1]) + f" and '{tokens[tops[-1]]}'"
        had = (
            f"{unmasked[0]} each"
            if len(set(unmasked)) == 1
            else ", ".join(unmasked[:-1]) + f" and {unmasked[-1]}"
        )
        largest = f"{shown} each on {names}, which had {had} without the mask"
    else:
        low, high = min(unmasked, key=float), max(unmasked, key=float)
        had = f"{low} each" if low == high else f"{low} to {high}"
        count = f"all {len(tops)}" if len(tops) == len(allowed) else f"{len(tops)}"
        largest = f"{shown} each on {count} of them, which had {had} without the mask"
    return (
        f"Masked-softmax weights with query {t} '{tokens[t]}' framed: it may attend to {where}; "
        f"its largest weight is {largest}"
    )


def sampling_probabilities(
    logits, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
):
    """The next-token distribution a sampler draws from: temperature, then top-k, then top-p
    (``lib.decoding.sampling_distribution`` of a vector of logits: a list, array or tensor).

    - temperature: ``softmax(logits / temperature)`` (Ackley et al. 1985; for text, e.g. Radford et
      al. 2019); below 1 sharpens, above 1 flattens. ``temperature=0`` means greedy decoding: all
      the probability on the largest logit (the first one, if several are equal).
    - top_k: keep the k largest logits, set the others to probability 0, renormalise (Fan et al.
      2018). Logits equal to the k-th largest are kept too, as Hugging Face's ``TopKLogitsWarper``
      does.
    - top_p (nucleus sampling, Holtzman et al. 2020): keep the smallest set of most probable tokens
      whose probabilities add up to at least p, renormalise. Computed on the distribution after
      temperature and top-k (the order of Hugging Face's ``generate``); equal probabilities are
      taken in vocabulary order.

    Args:
        logits: [V] tensor, array or list of finite numbers.
        temperature: a number >= 0.
        top_k: None (no cut) or an int >= 1.
        top_p: None (no cut) or a number in (0, 1].

    Returns:
        probabilities [V], float64, summing to 1; removed tokens are exactly 0.

    Raises:
        ValueError / TypeError naming the argument, the expected and the received value.
    """
    import torch

    from lib.decoding import sampling_distribution

    z = _vector(logits, "logits")
    if z.ndim != 1 or z.numel() == 0:
        raise ValueError(f"logits: expected a non-empty 1-D vector [V], got shape {tuple(z.shape)}")
    if not torch.isfinite(z).all():
        raise ValueError("logits: expected finite numbers, got inf or NaN")
    return sampling_distribution(z, temperature, top_k, top_p)  # the library's one sampler


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


# Long by its docstring (each argument explained); the code is under 50 lines.
def sampling_explorer(
    logits,
    labels,
    temperatures,
    *,
    top_k=None,
    top_p=None,
    distribution=None,
    n_shown=20,
    description=None,
    alt=None,
    narrow=False,
):
    """Bars of the next-token distribution, with a slider over sampling settings (temperature, top-k, top-p).

    One state per combination of ``temperatures`` x ``top_k`` x ``top_p`` (each of the last two may be
    None, a single value used in every state, or a list of values to slide over). Each state shows the
    probabilities of the ``n_shown`` most probable tokens (by logit) as filled bars, the plain
    ``softmax(logits)`` (temperature 1, no cut) as dashed outlines for comparison, and the rest of the
    vocabulary as one grey bar "other"; tokens a cut removed are marked by a red cross and a red name, as the legend says. The title gives the
    setting and the entropy of the distribution. Every state is drawn up front (:func:`interactive`).

    Args:
        logits: [V] next-token logits (a tensor, array or list).
        labels: V strings, the tokens.
        temperatures: a number or a list of numbers >= 0 (0 = greedy).
        top_k, top_p: None, one value, or a list of values (None inside a list: no cut).
        distribution: optional ``distribution(logits [V] tensor, temperature, top_k, top_p) -> probs [V]``,
            e.g. a model library's own sampler, so that the figure shows exactly what it samples from;
            by default :func:`sampling_probabilities`.
        n_shown: how many tokens get a bar of their own (the most probable ones); at most 40.
        description: the slider's label; by default it names what varies.
        alt: alternative text, as in :func:`interactive`; None describes each state from its numbers.
        narrow: drawn for a phone: 5.2 inches wide whatever ``n_shown`` (572 px at the notebooks'
            110 dpi, under the 600 px above which the site shows a picture in a box that scrolls
            sideways on a phone), the legend under the bars; 13-point text, about 11 CSS px in a
            328 px column. By default the width grows with ``n_shown`` (11-point text).

    Returns:
        The ``ipywidgets.VBox([slider, stack])`` of :func:`interactive`; its states are labelled like
        "τ = 0.7" or "τ = 0.7, top-k 5, top-p 0.9" (τ, the temperature) (only the settings that vary are named).

    Raises:
        ValueError: logits not 1-D, labels of the wrong length, a bad setting, or a distribution that
            does not return V probabilities summing to 1.
        TypeError: ``distribution`` is not callable, or ``narrow`` is not True or False.
    """

    import torch

    if not isinstance(narrow, bool):
        raise TypeError(f"narrow: expected True or False, got {narrow!r}")
    z = _vector(logits, "logits")
    if z.ndim != 1 or z.numel() == 0:
        raise ValueError(f"logits: expected a non-empty 1-D vector [V], got shape {tuple(z.shape)}")
    V = z.numel()
    labels = [str(label) for label in labels]
    if len(labels) != V:
        raise ValueError(f"labels: expected {V} labels, one per logit, got {len(labels)}")
    if not is_int(n_shown) or not 1 <= n_shown <= 40:
        raise ValueError(f"n_shown: expected an int from 1 to 40, got {n_shown!r}")
    if distribution is None:
        distribution = sampling_probabilities
    elif not callable(distribution):
        raise TypeError(
            f"distribution: expected callable(logits, temperature, top_k, top_p), got {type(distribution).__name__}"
        )
    temps, ks, ps = _as_list(temperatures), _as_list(top_k), _as_list(top_p)
    if not temps:
        raise ValueError("temperatures: expected at least one value, got an empty list")
    states = _sampling_states(z, temps, ks, ps, distribution)
    order = torch.sort(z, descending=True, stable=True).indices  # [V], most probable first
    shown = order[:n_shown]
    reference = torch.softmax(z, dim=-1)

    any_cut = any(k is not None or p is not None for _, k, p, _ in states.values())

    def draw(key):
        return _sampling_figure(states[key], reference, shown, labels, narrow, any_cut)

    def describe(key):
        t, k, p, probs = states[key]
        top = int(probs.argmax())
        kept = int((probs > 0).sum())
        return f"Bar chart of the next-token probabilities for {key}: '{labels[top]}' gets {probs[top]:.2f}; {kept} of {V} tokens keep a probability above 0"

    if description is None:
        varying = [
            name
            for name, values in [("temperature", temps), ("top-k", ks), ("top-p", ps)]
            if len(values) > 1
        ]
        description = ", ".join(varying) or "temperature"
    return interactive(
        draw, list(states), description=description, alt=describe if alt is None else alt
    )


def _sampling_states(z, temps, ks, ps, distribution) -> dict:
    """{label: (t, k, p, probs [V])} for every setting of ``sampling_explorer``, labelled by the
    settings that vary; ValueError if ``distribution`` does not return V probabilities summing to 1."""
    import itertools

    import torch

    V = z.numel()

    def label(t, k, p):
        parts = [f"τ = {t:g}"] if len(temps) > 1 or (len(ks) == 1 and len(ps) == 1) else []
        parts += [f"top-k {k}"] if len(ks) > 1 else []
        parts += [f"top-p {p:g}" if p is not None else "top-p none"] if len(ps) > 1 else []
        return ", ".join(parts).replace("top-k None", "top-k none")

    states = {}
    for t, k, p in itertools.product(temps, ks, ps):
        probs = distribution(z.clone(), t, k, p)
        probs = _vector(probs, "distribution(...)")
        if (
            probs.shape != (V,)
            or not torch.isfinite(probs).all()
            or (probs < 0).any()
            or abs(float(probs.sum()) - 1) > 1e-5
        ):
            raise ValueError(
                f"distribution(logits, {t!r}, {k!r}, {p!r}): expected to return {V} probabilities that sum to 1, got shape {tuple(probs.shape)}, sum {float(probs.sum()):.4g}"
            )
        states[label(t, k, p)] = (t, k, p, probs)
    if len(states) != len(temps) * len(ks) * len(ps):
        raise ValueError(
            "temperatures, top_k and top_p must not repeat a value (every state needs its own label)"
        )
    return states


def _entropy(q) -> float:
    q = q[q > 0]
    return max(0.0, float(-(q * q.log()).sum()))  # >= 0; a one-hot q would print as -0.00


# Long by design: one drawing call after another, bars, labels, title and legend of one picture.
def _sampling_figure(state, reference, shown, labels, narrow=False, any_cut=True):
    """The bars of one state (t, k, p, probs) of ``sampling_explorer``: the ``shown`` tokens and one bar
    "other", over the outlines of ``reference``, softmax(logits); the tokens a cut removed (and
    "other", when it removed all of its mass) marked by a red cross and a red name, named in the
    legend when ``any_cut`` (some state cuts); ``narrow``: 5.2 inches wide, 13-point text, the
    legend under the bars."""
    import matplotlib.lines as mlines
    import numpy as np
    import torch

    t, k, p, probs = state
    rest = torch.ones(len(labels), dtype=torch.bool)
    rest[shown] = False
    names = [labels[i] for i in shown.tolist()] + (["other"] if rest.any() else [])
    # narrow, 13 points on 5.2 inches shown ~328 px wide: about 11 CSS px on a 360 px phone (at 11
    # points the title and tick words read at 8-9 px, a reader's report on Fig. 13.6)
    FONT = 13 if narrow else 11  # points

    def bars(q):
        return np.array(q[shown].tolist() + ([float(q[rest].sum())] if rest.any() else []))

    kept, model = bars(probs), bars(reference)  # one bar a name, "other" last

    width = 5.2 if narrow else max(5.0, 0.28 * len(names) + 1)
    fig, ax = plt.subplots(figsize=(width, 5.8 if narrow else 4.4), layout="constrained")
    x = np.arange(len(names))
    colors = ["C0"] * len(shown) + (["0.6"] if rest.any() else [])
    ax.bar(x, kept, width=0.62, color=colors, label="sampled from")
    ax.bar(
        x,
        model,
        width=0.85,
        fill=False,
        edgecolor="0.3",
        ls="--",
        lw=1,
        label="softmax(logits): τ = 1, no cut",
    )
    # the cut tokens: a red cross over their dashed outline and their names in red (a rotated
    # word "cut" over the outlines was hard to read on a phone); "other" too, when the cut
    # removes all of its mass
    cut = [j for j in range(len(names)) if kept[j] == 0 and model[j] > 0 and t != 0]
    mark = dict(ls="none", marker="x", ms=8, mew=2, color=_CUT_COLOR)
    ax.plot(cut, model[cut] + 0.035, **mark)
    cuts = ", ".join(
        s
        for s in [
            f"top-k {k}" if k is not None else "",
            f"top-p {p:g}" if p is not None else "",
        ]
        if s
    )
    setting = ("greedy (τ = 0)" if t == 0 else f"temperature {t:g}") + (f", {cuts}" if cuts else "")
    ax.set_xticks(
        x,
        names,
        rotation=45 if max(len(n) for n in names) > 3 else 0,
        ha="right",
        rotation_mode="anchor",
        fontsize=FONT,
    )
    for j in cut:
        ax.get_xticklabels()[j].set_color(_CUT_COLOR)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("probability", fontsize=FONT)
    ax.set_title(
        f"{setting}:\nentropy {_entropy(probs):.2f} nats (τ = 1, no cut: {_entropy(reference):.2f})",
        fontsize=FONT,
    )
    handles, texts = ax.get_legend_handles_labels()
    if any_cut:  # in every state's legend, so that every state is drawn the same size
        handles.append(mlines.Line2D([], [], **mark))
        texts.append("cut (probability set to 0), name in red")
    if narrow:  # under the tick labels, one entry a line: nothing of the bars hidden
        fig.legend(
            handles, texts, loc="outside lower center", fontsize=FONT, ncols=1, frameon=False
        )
    else:
        ax.legend(handles, texts, loc="upper right", fontsize=FONT)
    return fig


_CUT_COLOR = "#d62728"  # the mark and name of the tokens a top-k or top-p cut removed


def rope_scores(q, k, positions, theta: float = 10000.0, style: str = "halves") -> list[float]:
    """q . k after RoPE (``lib.rope``) with the query at m and the key at n, for each (m, n) in
    ``positions``: the unscaled attention score, one float each. q, k: [Dh] (Dh even)."""
    import torch

    from lib.rope import apply_rope, rope_cos_sin, rope_frequencies

    q, k = torch.as_tensor(q, dtype=torch.float64), torch.as_tensor(k, dtype=torch.float64)
    if q.ndim != 1 or q.shape != k.shape or q.shape[0] % 2:
        raise ValueError(f"q, k: expected two vectors [Dh] of one even width, got {tuple(q.shape)}"
                         f" and {tuple(k.shape)}")  # fmt: skip
    frequencies = rope_frequencies(q.shape[0], theta)  # [Dh/2]
    out = []
    for m, n in positions:
        cos, sin = rope_cos_sin(torch.tensor([m, n]), frequencies, torch.float64)  # [2, Dh/2]
        q_m = apply_rope(q[None], cos[:1], sin[:1], style)[0]
        k_n = apply_rope(k[None], cos[1:], sin[1:], style)[0]
        out.append(float(q_m @ k_n))
    return out


# Long by design: the arguments' checks at the door, then one drawing step after another.
def rope_explorer(q, k, settings, *, theta: float = 10000.0, max_offset: int = 12,
                  description: str = "positions"):  # fmt: skip
    """RoPE's relative property, with a slider over the positions (m, n) of a query and a key.

    Each state shows, on top, the first pair of features (0 and Dh/2, the split-halves
    convention; the fastest pair, w_0 = 1 radian per position) of q turned by m and of k turned by
    n, as two arrows; below, the score q_m . k_n (:func:`rope_scores`) against the offset
    m - n, drawn once for offsets -max_offset ... max_offset (query at 20 + d, key at 20, as its
    legend says), with the state's score as a red point. Only the offset moves the point.

    Args:
        q, k: vectors [Dh] (Dh even). settings: (m, n) pairs, one state each, labelled "m=.., n=..",
        with |m - n| <= max_offset. theta: RoPE's base.

    Returns:
        The box of :func:`interactive`, with ``.offsets``, ``.curve`` (the grey curve's scores) and
        ``.scores`` ({(m, n): score}) for the chapter's checks.
    """
    import torch

    settings = [(int(m), int(n)) for m, n in settings]
    if not settings or any(abs(m - n) > max_offset or min(m, n) < 0 for m, n in settings):
        raise ValueError(f"settings: expected (m, n) pairs of positions >= 0 with |m - n| <= "
                         f"max_offset={max_offset}, got {settings}")  # fmt: skip
    offsets = list(range(-max_offset, max_offset + 1))
    curve = rope_scores(q, k, [(20 + d, 20) for d in offsets], theta)
    scores = dict(zip(settings, rope_scores(q, k, settings, theta)))
    q64, k64 = torch.as_tensor(q, dtype=torch.float64), torch.as_tensor(k, dtype=torch.float64)
    half = q64.shape[0] // 2
    # room for the arrows' names beyond their tips, clear of the axes
    reach = 1.45 * float(max(q64[[0, half]].norm(), k64[[0, half]].norm()))

    def first_pair(v, position):  # pair 0 turns by position * w_0 = position radians
        a, b = float(v[0]), float(v[half])
        c, s = math.cos(position), math.sin(position)
        return a * c - b * s, a * s + b * c

    def draw(setting):
        # the two panels one above the other, with the diagrams' text: 14 pt at least on
        # 5.2 inches, >= 12.2 px in the 328 px column of a 360 px phone
        m, n = setting
        fig, (left, right) = plt.subplots(2, 1, figsize=(5.2, 7.6), height_ratios=(1.1, 1),
                                          layout="constrained")  # fmt: skip
        for v, pos, name, color in ((q64, m, "q", "#0072B2"), (k64, n, "k", "#E69F00")):
            a, b = first_pair(v, pos)
            arrow = dict(arrowstyle="-|>", color=color, lw=2)
            left.annotate("", (a, b), (0, 0), arrowprops=arrow)
            left.text(1.22 * a, 1.22 * b, f"${name}_{{{pos}}}$", color=color, ha="center",
                      va="center", fontsize=14.5)  # fmt: skip
        left.set(xlim=(-reach, reach), ylim=(-reach, reach), aspect="equal")
        left.set_title(f"pair 0: query at m = {m}, key at n = {n}", fontsize=14)
        left.set_xlabel("feature 0", fontsize=14)
        left.set_ylabel(f"feature $D_h/2$ = {half}", fontsize=14)
        right.plot(offsets, curve, color="0.6", marker=".", lw=1,
                   label="every offset (key at 20,\nquery at 20 + offset)")  # fmt: skip
        right.plot([m - n], [scores[setting]], "o", color="#d62728", ms=9,
                   label=f"this setting (m = {m}, n = {n})")  # fmt: skip
        right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=14, ncols=1)
        right.set_title(f"score {scores[setting]:.3f} at m - n = {m - n}", fontsize=14)
        right.set_xlabel("offset m - n", fontsize=14)
        right.set_ylabel("score $q_m \\cdot k_n$", fontsize=14)
        for ax in (left, right):
            ax.tick_params(labelsize=14)
        return fig

    def describe(setting):
        m, n = setting
        return (f"Query at position {m} and key at position {n}: the red point sits on the grey "
                f"score curve (drawn with the key at 20 and the query at 20 + offset) at offset "
                f"{m - n}, score {scores[setting]:.3f}.")  # fmt: skip

    box = interactive(draw, [(f"m={m}, n={n}", (m, n)) for m, n in settings],
                      description=description, alt=describe)  # fmt: skip
    box.offsets, box.curve, box.scores = offsets, curve, scores
    return box
