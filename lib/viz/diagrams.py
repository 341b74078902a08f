"""Architecture drawings: each ``*_diagram`` draws one architecture a chapter teaches, as
boxes and arrows in the style of :func:`lib.viz.transformer_diagram` (whose box and arrow helpers
live here), with the chapter's symbols and the sizes of the library's configs. This module holds the
recurrent ones: the encoder-decoder (chapter 1), the additive score inside attention (chapter 3), Bahdanau's decoder step and Luong's global and local
attention (chapter 4), the captioner and the hierarchical attention network (chapter 5) and ELMo's
biLM (chapter 12), with chapter 1's GRU cell and chapter 10's tokenizer pipeline;
:mod:`lib.viz.transformer_diagrams` holds the Transformer family's.

Each returns a new matplotlib Figure whose ``alt_text`` attribute describes it in words (the text the
chapter's figure metadata carries, so that a test can hold the two together). Coordinates are
inches: the Axes fills the Figure and one data unit is one inch, so a box's width reads as the room
its label needs. Nothing here computes what a model does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import SimpleNamespace

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
from matplotlib.textpath import TextPath

from lib._validate import check_bool, check_int, check_type, is_number
from lib.viz.interactive import PHONE_COLUMN_PX

__all__ = [
    "seq2seq_diagram",
    "additive_score_diagram",
    "bahdanau_diagram",
    "luong_diagram",
    "luong_step_diagram",
    "elmo_diagram",
    "captioning_diagram",
    "han_diagram",
    "kv_cache_diagram",
    "beam_search_diagram",
    "gru_cell_diagram",
    "tokenizer_pipeline_diagram",
]

_DIAGRAM_COLORS = {
    "attn": "#9ecae1",
    "ff": "#fdd0a2",
    "norm": "#e5e5e5",
    "emb": "#c7e9c0",
    "io": "#dadaeb",
    "rnn": "#c6dbef",
    "ctx": "#fcbba1",
    "plain": "white",
}
# The book's rule for text on a phone (readers s29-s30 found 10-11 CSS px labels hard to read): a
# diagram drawn for a phone is shown 328 px wide in a 360 px phone's column, and its smallest text
# reads at 12 CSS px or more there (tests/test_viz_diagrams.py holds every chapter's diagram to it)
_PHONE_TEXT_PX = 12


def _phone_font(width):
    """The smallest font size in points, to half a point up, whose text reads at ``_PHONE_TEXT_PX``
    CSS px on a canvas ``width`` inches wide shown ``PHONE_COLUMN_PX`` wide (14 at 5.2 inches)."""
    return math.ceil(_PHONE_TEXT_PX * 72 / PHONE_COLUMN_PX * width * 2) / 2


_FONT = 9.5  # points: the smallest text of the new diagrams
# seq2seq_diagram's narrow layout is laid out on 5.65 inches and drawn 4.92 wide, its text not scaled
# with it: at the notebooks' 110 dpi it is under the 600 px above which a phone scrolls a figure
# sideways (book/_static/reader.js), and its words, at the phone's rule for 4.92 inches, 13 points
_SEQ2SEQ_NARROW_SCALE = 4.92 / 5.65
# ... and at 15 points, not 13, as chapter 4's narrow math (_NARROW_MATH_FONT): at 13 its labels and
# the subscripts of alpha_tj, h_j read at about 8 and 6-7 CSS px (a reader's report on Figs. 1.3, 1.4)
_SEQ2SEQ_NARROW_FONT = 15
# ... and the labels of the two final states, the arrows over h with a subscript under them, larger,
# as elmo_diagram's (_ELMO_PHONE_MATH): their subscripts S and 1 read at about 8 CSS px
_SEQ2SEQ_NARROW_STATE_FONT = 16.5
# luong_diagram's narrow drawing, 5.2 inches, at 14 points (was 11.5, then 13: its titles, key and
# position numbers the smallest text of chapter 4 on a phone, readers' reports s15 and s30)
_LUONG_NARROW_FONT = 14
# ... and its subscripted symbols (h̄_s, h_t, c_t, a_t(s), p_t) at 15 points, as Figs. 4.1 and 4.3:
# at 13 their subscripts read at about 7 CSS px (a reader's report on Fig. 4.4)
_LUONG_NARROW_MATH_FONT = 15
# chapter 4's decoder steps drawn narrow: the symbols whose subscript says which state asks
# (s_{t-1}, h_t, e_{t1}, alpha_{t1}...) at 15 points, their subscripts about 9 CSS px at 360 px
# (at 11.5 and 13 points they read at 6 to 8 px, a reader's report on Figs. 4.1 and 4.3)
_NARROW_MATH_FONT = 15
_CTX = "#cb181d"  # the lines that carry a context vector
# additive_score_diagram's query: its line and its boxes' edge in chapter 3's orange (QUERY_COLOR,
# the colour-blind-safe cycle's), the fill a pale orange, as the chapter's other figures draw queries
_QUERY, _QUERY_FILL = "#C85200", "#fee6ce"


def _box(ax, x, y, text, kind, w=2.6, h=0.5, fontsize=8.5, **text_kw):
    """A rounded box centred at (x, y) with ``text`` in it, filled with the colour of ``kind``."""
    style = "round,pad=0.02,rounding_size=0.08"
    patch = mpatches.FancyBboxPatch(
        (x - w / 2, y - h / 2), w, h, fc=_DIAGRAM_COLORS[kind], ec="0.25", lw=1, boxstyle=style
    )
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, **text_kw)
    return patch


def _arrow(ax, x0, y0, x1, y1, color="0.2", lw=1, mutation_scale=9):
    ax.add_patch(
        mpatches.FancyArrowPatch(
            (x0, y0),
            (x1, y1),
            arrowstyle="-|>",
            mutation_scale=mutation_scale,
            lw=lw,
            color=color,
            shrinkA=0,
            shrinkB=0,
        )
    )


def _line(ax, xs, ys, color="0.35", lw=1, **kw):
    ax.plot(xs, ys, color=color, lw=lw, solid_capstyle="butt", **kw)


def _canvas(width, height, alt, scale=1.0):
    """A Figure of ``width`` x ``height`` inches whose one Axes has inches as data units; ``scale``
    below 1 draws the same layout on a canvas that much smaller (a data unit is ``scale`` inches)."""
    fig = plt.figure(figsize=(width * scale, height * scale), layout="none")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, width), ylim=(0, height))
    ax.axis("off")
    fig.alt_text = alt
    return fig, ax


def _words(words, name, most):
    if isinstance(words, str) or not isinstance(words, Sequence):
        raise TypeError(f"{name}: expected a sequence of words, got {type(words).__name__}")
    words = list(words)
    if not 1 <= len(words) <= most or not all(isinstance(w, str) and w for w in words):
        raise ValueError(f"{name}: expected 1 to {most} non-empty words, got {words!r}")
    return words


def _t(size=_FONT):
    return {"fontsize": size, "ha": "center", "va": "center"}


# Long by its alt text and labels: the drawing is in the steps below (layout, encoder, ...).
def seq2seq_diagram(source, target, *, d_hidden=64, with_attention=False, narrow=False):
    """Chapter 1's encoder-decoder (Cho et al. 2014; with attention, Bahdanau et al. 2015): a
    bidirectional GRU reads ``source`` into states h_j; the summary c = [forward h_S; backward h_1]
    gives the decoder its first state s_0 = tanh(W_s c). Before each step t a box hands the decoder
    its context: the plain decoder gets the same c at every step (the bottleneck); the attentive one
    a c_t of its own, computed from the previous state s_{t-1} and every h_j (eq. 6 of Bahdanau et
    al.). ``d_hidden``: the GRU's width in each direction. ``narrow``: drawn for a phone's column,
    the decoder above the encoder, c under s_0, on a canvas 4.92 inches wide, at 15 points, the
    words 13.5 (under 600 px at 110 dpi: a phone shows it whole at 328 px, its text 12 CSS px or
    more).
    The output layer, which also reads the context and the previous word, is not drawn. Returns
    the Figure."""
    src, tgt = _words(source, "source", 4), _words(target, "target", 4)
    check_int(d_hidden, "d_hidden", 1)
    check_bool(narrow, "narrow")
    steps_in, steps_out = ["<bos>", *tgt], [*tgt, "<eos>"]
    T = len(steps_in)
    kind = "with attention" if with_attention else "plain"
    where = ("Bottom", "Top") if narrow else ("Left", "Right")
    alt = (
        f"The encoder-decoder, {kind}. {where[0]}: the source words {' '.join(src)} each feed a box "
        "h_j of a bidirectional GRU, with arrows in both directions between neighbours. The forward "
        "GRU's final state (at the last word) and the backward GRU's final state (at the first "
        "word) join into the summary c, "
        f"{2 * d_hidden} numbers, which gives the decoder its first state s_0 = tanh(W_s c). "
        f"{where[1]}: the decoder's states s_1 to s_{T}, each reading the previous target word "
        f"(<bos> first) and the previous state, and writing the next word, "
        f"{' '.join(steps_out)}. Before each step a box hands the decoder its context, "
        + (
            "c_t = sum_j alpha_tj h_j: a grey line brings every encoder state into every box, "
            "weighted by alpha_tj, the previous state s_(t-1) enters the box of step t, and a "
            "red arrow takes each step's own context into s_t."
            if with_attention
            else "the same c at every step: one red line carries c from the summary to every "
            "box, and a red arrow from each box into s_t: the bottleneck."
        )
    )
    fig, ax, g = _seq2seq_layout(narrow, len(src), T, alt)
    _draw_encoder(ax, g, src)
    _draw_summary(ax, g)
    for t, (x, x_ctx) in enumerate(zip(g.xd, g.xc)):
        _draw_decoder_step(ax, g, t, x, x_ctx, steps_in[t], steps_out[t], with_attention)
    note = _draw_context_lines(ax, g, with_attention, d_hidden)
    font, y_loop, y_title, xe = g.font, g.y_loop, g.y_title, g.xe
    if narrow:
        ax.text(0.05, y_title, f"decoder: GRU, {kind}", fontsize=font, ha="left")
        ax.text(  # just under the encoder's words, as the decoder's label is over its row
            0.05,
            y_loop - 0.05,
            f"encoder: bidirectional GRU,\n$\\mathbf{{h}}_j$ = {d_hidden} + {d_hidden} numbers",
            fontsize=font,
            ha="left",
            va="top",
        )
        ax.text(  # the red key last, at the bottom, apart from the encoder's label (a reader's
            # report on Figs. 1.3 and 1.4: the label sat under the key, far from the encoder)
            5.55,
            y_loop - 0.8,
            note.replace(", at", ",\nat"),
            color=_CTX,
            fontsize=font,
            ha="right",
            va="top",
        )
        return fig
    ax.text(g.xd[0] - 0.36, y_loop - 0.05, note, color=_CTX, fontsize=_FONT, va="center")
    ax.text(
        (xe[0] + xe[-1]) / 2,
        4.6,
        f"encoder: bidirectional GRU, $\\mathbf{{h}}_j$ = {d_hidden} + {d_hidden} numbers",
        **_t(10),
    )
    ax.text((g.xd[0] + g.xd[-1]) / 2, 4.6, f"decoder: GRU, {kind}", **_t(10))
    return fig


def _seq2seq_layout(narrow, n_src, T, alt):
    """seq2seq_diagram's canvas and where everything goes: rows' heights (y_*), the encoder's
    columns (xe), the summary c's and s_0's (x_c, x_s0), the decoder's steps (xd) and their context
    boxes (xc), ``pitch`` apart; narrow, the decoder's row above the encoder's."""
    font = _SEQ2SEQ_NARROW_FONT if narrow else _FONT
    # narrow, the words half a point above the phone's rule (13 points): the steps 0.95 apart have
    # room for it, and at 13 they were the smallest text of chapter 1 (a reader's report)
    word_font = _phone_font(5.65 * _SEQ2SEQ_NARROW_SCALE) + 0.5 if narrow else _FONT
    g = SimpleNamespace(narrow=narrow, font=font, word_font=word_font, y_grey=None, w_s0=0.56)
    if narrow:  # the decoder's row above the encoder's; c and s_0 at the left of the decoder's
        fig, ax = _canvas(5.65, 7.95, alt, scale=_SEQ2SEQ_NARROW_SCALE)
        # 1.45 inches under the encoder: its label and the red key inside the canvas
        rows = (0.25, 0.7, 1.6, 2.25, 2.85, 3.75, 4.6, 5.4, 5.9, 6.25)
        (g.y_loop, g.y_src, g.y_h, g.y_grey, g.y_in, g.y_cell, g.y_ctx, g.y_out, g.y_bus) = (
            y + 1.45 for y in rows[:-1]
        )
        g.y_title = rows[-1] + 1.45
        g.xe = [1.4 + 0.95 * j for j in range(n_src)]
        # c and s_0 narrower and its grey bus (with attention) at the canvas's edge: the bus runs
        # up left of c, clear of it, not along its edge, where it read as c feeding the contexts
        # (a reader's report on Fig. 1.3); the decoder's steps wide apart, for its words' boxes
        # c under s_0, not beside it (a reader's report on Figs. 1.3 and 1.4: in c's column the
        # decoder's word boxes touched): the five steps take its width, 0.95 apart, not 0.88, and
        # the encoder's words as far apart
        g.x_c, g.w_c, g.x_bus, g.x_s0, g.w_s0, g.pitch = 0.33, 0.3, 0.03, 0.33, 0.46, 0.95
        g.w_word, g.y_c = 0.82, g.y_in
    else:
        fig, ax = _canvas(9.4, 4.9, alt)
        g.y_loop, g.y_src, g.y_h = 0.32, 0.8, 2.0
        g.y_in, g.y_cell, g.y_ctx, g.y_out, g.y_bus, g.y_title = 0.8, 2.0, 2.8, 3.6, 4.1, 4.6
        g.xe = [0.6 + 0.8 * j for j in range(n_src)]
        g.x_c, g.w_c, g.x_s0, g.pitch = 3.75, 0.5, 4.55, 0.88
        g.w_word, g.y_c = 0.74, g.y_cell
    g.h_cell, g.h_ctx = 0.55, 0.4
    g.xd = [g.x_s0 + g.pitch * (t + 1) for t in range(T)]
    g.xc = [x - g.pitch / 2 for x in g.xd]  # the context box of each step, between s_{t-1} and s_t
    g.top, g.bottom = g.y_cell + g.h_cell / 2, g.y_cell - g.h_cell / 2
    g.c_top, g.c_bottom = g.y_c + g.h_cell / 2, g.y_c - g.h_cell / 2  # the summary c's box
    g.h_top, g.h_bottom = g.y_h + g.h_cell / 2, g.y_h - g.h_cell / 2
    return fig, ax, g


def _draw_encoder(ax, g, src):
    """seq2seq_diagram's encoder: each source word into its state h_j, the forward and backward
    GRUs' arrows between neighbours."""
    for j, (x, word) in enumerate(zip(g.xe, src)):
        _box(ax, x, g.y_src, word, "io", w=g.w_word, h=0.4, fontsize=g.word_font)
        _arrow(ax, x, g.y_src + 0.2, x, g.h_bottom)
        _box(ax, x, g.y_h, f"$\\mathbf{{h}}_{j + 1}$", "rnn", w=0.6, h=g.h_cell, fontsize=g.font)
    for a, b in zip(g.xe, g.xe[1:]):  # the forward GRU reads right, the backward GRU left
        _arrow(ax, a + 0.3, g.y_h + 0.1, b - 0.3, g.y_h + 0.1)
        _arrow(ax, b - 0.3, g.y_h - 0.1, a + 0.3, g.y_h - 0.1)


def _draw_summary(ax, g):
    """seq2seq_diagram's summary: the forward GRU's last state and the backward GRU's first into c,
    c into s_0 = tanh(W_s c)."""
    if g.narrow:  # both final states go down, round and up into c from below
        # the forward GRU's last state: right of h_S, under the words, up into c
        _line(
            ax,
            [g.xe[-1] + 0.3, g.xe[-1] + 0.55, g.xe[-1] + 0.55, g.x_c - 0.12, g.x_c - 0.12],
            [g.y_h, g.y_h, g.y_loop, g.y_loop, g.y_grey + 0.05],
        )
        _arrow(ax, g.x_c - 0.12, g.y_grey + 0.05, g.x_c - 0.12, g.c_bottom)
        ax.text(
            g.xe[-1] + 0.72,
            g.y_h + 0.3,
            "$\\overrightarrow{\\mathbf{h}}_S$",
            **_t(_SEQ2SEQ_NARROW_STATE_FONT),
        )
        # the backward GRU's last state: left of h_1, straight up into c
        _line(ax, [g.xe[0] - 0.3, g.x_c + 0.12], [g.y_h, g.y_h])
        _arrow(ax, g.x_c + 0.12, g.y_h, g.x_c + 0.12, g.c_bottom)
        ax.text(
            g.x_c + 0.5,
            g.y_h + 0.32,
            "$\\overleftarrow{\\mathbf{h}}_1$",
            **_t(_SEQ2SEQ_NARROW_STATE_FONT),
        )
    else:  # the forward GRU's last state (right) and the backward GRU's (from h_1, below)
        _arrow(ax, g.xe[-1] + 0.3, g.y_cell, g.x_c - 0.25, g.y_cell)
        ax.text(
            (g.xe[-1] + g.x_c) / 2 + 0.02,
            g.y_cell + 0.4,
            "$\\overrightarrow{\\mathbf{h}}_S$",
            **_t(),
        )
        _line(ax, [g.xe[0] - 0.3, 0.15, 0.15, g.x_c], [g.y_cell, g.y_cell, g.y_loop, g.y_loop])
        _arrow(ax, g.x_c, g.y_loop, g.x_c, g.bottom)
        ax.text(
            (g.xe[0] + g.xe[-1]) / 2, g.y_loop - 0.17, "$\\overleftarrow{\\mathbf{h}}_1$", **_t()
        )
    _box(ax, g.x_c, g.y_c, "$\\mathbf{c}$", "ctx", w=g.w_c, h=g.h_cell, fontsize=g.font)
    if g.narrow:  # c under s_0
        _arrow(ax, g.x_c, g.c_top, g.x_s0, g.bottom)
    else:
        _arrow(ax, g.x_c + g.w_c / 2, g.y_cell, g.x_s0 - g.w_s0 / 2, g.y_cell)
    _box(ax, g.x_s0, g.y_cell, "$\\mathbf{s}_0$", "rnn", w=g.w_s0, h=g.h_cell, fontsize=g.font)
    if g.narrow:
        ax.text(
            5.55, g.y_title, "$\\mathbf{s}_0=\\tanh(W_s\\mathbf{c})$", fontsize=g.font, ha="right"
        )
    else:
        ax.text(g.x_s0 + 0.05, g.bottom - 0.3, "$\\mathbf{s}_0=\\tanh(W_s\\mathbf{c})$", **_t())


def _draw_decoder_step(ax, g, t, x, x_ctx, word_in, word_out, with_attention):
    """seq2seq_diagram's decoder step t: its input word, s_{t-1} -> s_t, its output word and its
    context box, which the previous state asks with attention."""
    w_in = 0.72 if not g.narrow else _word_width(word_in, g.word_font)
    _box(ax, x, g.y_in, word_in, "io", w=w_in, h=0.4, fontsize=g.word_font)
    _arrow(ax, x, g.y_in + 0.2, x, g.bottom)
    left = x - g.pitch + (g.w_s0 / 2 if t == 0 else 0.28)  # s_{t-1}'s right edge
    _arrow(ax, left, g.y_cell, x - 0.28, g.y_cell)  # s_{t-1} -> s_t
    _box(ax, x, g.y_cell, f"$\\mathbf{{s}}_{t + 1}$", "rnn", w=0.56, h=g.h_cell, fontsize=g.font)
    _arrow(ax, x, g.top, x, g.y_out - 0.2)
    _box(
        ax,
        x,
        g.y_out,
        word_out,
        "plain",
        w=0.66 if not g.narrow else _word_width(word_out, g.word_font),
        h=0.4,
        fontsize=g.word_font,
    )
    label = f"$\\mathbf{{c}}_{t + 1}$" if with_attention else "$\\mathbf{c}$"
    _box(ax, x_ctx, g.y_ctx, label, "ctx", w=0.5, h=g.h_ctx, fontsize=g.font)
    # the context enters s_t; with attention the previous state s_{t-1} asks for it
    _arrow(ax, x_ctx + 0.12, g.y_ctx - g.h_ctx / 2, x - 0.16, g.top, color=_CTX, lw=1.3)
    if with_attention:
        _arrow(ax, x - g.pitch + 0.16, g.top, x_ctx - 0.12, g.y_ctx - g.h_ctx / 2)
    # what fills the box comes down from the line above the outputs
    _arrow(
        ax, x_ctx, g.y_bus, x_ctx, g.y_ctx + g.h_ctx / 2, color="0.45" if with_attention else _CTX
    )


def _word_width(word, font):
    """seq2seq_diagram's narrow decoder: a box as wide as ``word`` at ``font`` points needs, in
    the layout's inches (a pitch holds "toujours" beside "<eos>" only so), at least 0.5."""
    width = TextPath((0, 0), word, size=font).get_extents().width / 72 / _SEQ2SEQ_NARROW_SCALE
    return max(0.5, width + 0.05)


def _draw_context_lines(ax, g, with_attention, d_hidden):
    """seq2seq_diagram's lines that fill the context boxes: every h_j, weighted (with attention), or
    the one summary c; returns the note that says which."""
    if with_attention and g.narrow:  # every h_j, up to a line between the rows, round the left
        for j, x in enumerate(g.xe):
            _line(ax, [x, x], [g.h_top, g.y_grey], color="0.45")
            # at the final states' 16.5 points: at 15 the subscript t1 read at about 8 CSS px (s28)
            alpha = f"$\\alpha_{{t{j + 1}}}$"
            ax.text(x + 0.06, g.h_top + 0.08, alpha, fontsize=_SEQ2SEQ_NARROW_STATE_FONT, ha="left")
        _line(
            ax,
            [g.xe[-1], g.x_bus, g.x_bus, g.xc[-1]],
            [g.y_grey, g.y_grey, g.y_bus, g.y_bus],
            color="0.45",
        )
        note = "red: $\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$,\na new context at every step"
    elif with_attention:  # every encoder state reaches every box, weighted by alpha_tj
        for j, x in enumerate(g.xe):
            _line(ax, [x, x], [g.top, g.y_bus], color="0.45")
            ax.text(x - 0.05, g.top + 0.45, f"$\\alpha_{{t{j + 1}}}$", fontsize=_FONT, ha="right")
        _line(ax, [g.xe[0], g.xc[-1]], [g.y_bus, g.y_bus], color="0.45")
        note = "red: $\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$, a new context at every step"
    else:  # the one summary, to every step
        # narrow, from c's left side round s_0 (c is under it); wide, from c's top
        xs, ys = [g.x_c, g.x_c, g.xc[-1]], [g.top, g.y_bus, g.y_bus]
        if g.narrow:
            xs, ys = (
                [g.x_c - g.w_c / 2, g.x_bus, g.x_bus, g.xc[-1]],
                [g.y_c, g.y_c, g.y_bus, g.y_bus],
            )
        _line(ax, xs, ys, color=_CTX, lw=1.3)
        note = f"red: the same $\\mathbf{{c}}$, {2 * d_hidden} numbers, at every step"
    return note


def additive_score_diagram(d_query, d_key, d_hidden, *, narrow=False):
    """Chapter 3's additive score (Bahdanau et al. 2015, eq. 6, as ``lib.attention.AdditiveScore``)
    and where a score sits in attention. One panel: a query q and three keys k_i, one score box s_i
    per key (any of the six score functions fills it), a masked softmax over i, the weights alpha_i
    and the output sum_i alpha_i v_i. The other: what one score box holds for the additive score, q through
    W_q [d_hidden x d_query] and k_i through W_k [d_hidden x d_key], added, tanh (d_hidden units),
    v_a^T: one number. ``narrow``: the network under the pipeline, for a phone's column (4.89 inches,
    13-point text, 12 CSS px there); else side by side. Returns the Figure."""
    for value, name in ((d_query, "d_query"), (d_key, "d_key"), (d_hidden, "d_hidden")):
        check_int(value, name, 1)
    check_bool(narrow, "narrow")
    H = d_hidden
    alt = (
        "Two panels. Where the score sits: a query q (orange) and three keys k_1, k_2, k_3 (blue); "
        "an orange line from q "
        "and a line from each key enter one score box s_i per key, s_i = score(q, k_i), framed as "
        "the one piece any of the six score functions can fill (the location-based score reads "
        "only the query, not the keys); a masked softmax over i turns the three scores into the "
        "weights alpha_1, alpha_2, alpha_3, which weight the values v_i into the output, the sum of "
        "alpha_i v_i. "
        f"Inside one score box, the additive score: the query (d_q = {d_query} numbers) goes "
        f"through W_q ({H} x {d_query}) and the key (d_k = {d_key} numbers) through W_k "
        f"({H} x {d_key}); the two results, {H} numbers each, are added, tanh is applied to each "
        f"of the {H} hidden units, and v_a^T (1 x {H}) turns them into the score s_i, one number."
    )
    if narrow:  # the pipeline above the network, laid out on 5.2 x 8.2, drawn 4.89 inches wide
        scale = 0.94  # so that its text, at the phone's rule for that width, fits its boxes
        font = _phone_font(5.2 * scale)
        fig, ax = _canvas(5.2, 8.2, alt, scale=scale)
        _score_pipeline(ax, 0, 4.15, font, _NARROW_MATH_FONT)
        _additive_network(ax, 0, 0, font, d_query, d_key, H)
    else:  # side by side, laid out on 10.6 x 4.1, drawn 9.3 inches wide
        fig, ax = _canvas(10.6, 4.1, alt, scale=0.88)
        _score_pipeline(ax, 0, 0.05, _FONT)
        _additive_network(ax, 5.4, 0.1, _FONT, d_query, d_key, H)
    return fig


def _score_pipeline(ax, x0, y0, font, math=None):
    """additive_score_diagram's pipeline, its lower left corner at (x0, y0): keys and query, the
    score boxes in a dashed frame, the masked softmax, the weights and the weighted sum. ``math``:
    the size of the subscripted symbols and of the frame's side label (default ``font``)."""
    math = math or font
    xs = [x0 + 0.6 + 1.1 * i for i in range(3)]
    y_k, y_bus, y_e, y_soft, y_a, y_join, y_out = (
        y0 + y for y in (0.3, 0.75, 1.2, 1.8, 2.4, 2.75, 3.3)
    )
    x_q = x0 + 4.5
    _query_box(ax, x_q, y_k, "$\\mathbf{q}$", w=0.6, h=0.4, fontsize=math)
    _line(ax, [x_q, x_q, xs[0] + 0.14], [y_k + 0.2, y_bus, y_bus], color=_QUERY, lw=1.2)
    for i, x in enumerate(xs):
        _box(ax, x, y_k, f"$\\mathbf{{k}}_{i + 1}$", "rnn", w=0.6, h=0.4, fontsize=math)
        _arrow(ax, x - 0.12, y_k + 0.2, x - 0.12, y_e - 0.2)
        _arrow(ax, x + 0.14, y_bus, x + 0.14, y_e - 0.2, color=_QUERY)
        _box(ax, x, y_e, f"$s_{i + 1}$", "attn", w=0.7, h=0.4, fontsize=math)
        _arrow(ax, x, y_e + 0.2, x, y_soft - 0.2)
        _arrow(ax, x, y_soft + 0.2, x, y_a - 0.2)
        _box(ax, x, y_a, f"$\\alpha_{i + 1}$", "attn", w=0.7, h=0.4, fontsize=math)
        _line(ax, [x, x], [y_a + 0.2, y_join])
    frame = mpatches.Rectangle(
        (xs[0] - 0.45, y_e - 0.3), xs[-1] - xs[0] + 0.9, 0.6, fill=False, ec="0.3", ls="--"
    )
    ax.add_patch(frame)
    ax.text(xs[-1] + 0.55, y_e, "score: any of\nthe six", fontsize=math, va="center")
    width = xs[-1] - xs[0] + 0.8
    _box(ax, xs[1], y_soft, "masked softmax over $i$", "norm", w=width, h=0.4, fontsize=font)
    _line(ax, [xs[0], xs[-1]], [y_join, y_join])
    _arrow(ax, xs[1], y_join, xs[1], y_out - 0.25)
    _box(ax, xs[1], y_out, "$\\sum_i \\alpha_i\\mathbf{v}_i$", "ctx", w=1.5, h=0.5, fontsize=font)
    _box(ax, x_q, y_out, "values $\\mathbf{v}_i$", "rnn", w=1.2, h=0.45, fontsize=font)
    _arrow(ax, x_q - 0.6, y_out, xs[1] + 0.75, y_out)
    ax.text(x0 + 0.15, y0 + 3.95, "where the score sits", fontsize=font, va="top", weight="bold")


def _query_box(ax, x, y, text, **kw):
    """A box for the query: pale orange, edged in the query's orange."""
    patch = _box(ax, x, y, text, "plain", **kw)
    patch.set(facecolor=_QUERY_FILL, edgecolor=_QUERY, linewidth=1.6)
    return patch


def _additive_network(ax, x0, y0, font, d_query, d_key, H):
    """additive_score_diagram's network for one pair (q, k_i), its lower left corner at (x0, y0)."""
    x_q, x_k, x_mid = x0 + 1.35, x0 + 3.85, x0 + 2.6
    y_in, y_w, y_add, y_tanh, y_v = (y0 + y for y in (0.3, 1.05, 1.75, 2.4, 3.05))
    _query_box(ax, x_q, y_in, f"$\\mathbf{{q}}$: {d_query} numbers", w=2.0, h=0.4, fontsize=font)
    _box(ax, x_k, y_in, f"$\\mathbf{{k}}_i$: {d_key} numbers", "rnn", w=2.0, h=0.4, fontsize=font)
    _arrow(ax, x_q, y_in + 0.2, x_q, y_w - 0.225)
    _arrow(ax, x_k, y_in + 0.2, x_k, y_w - 0.225)
    _box(
        ax,
        x_q,
        y_w,
        f"$\\mathbf{{W}}_q$: ${H}\\times{d_query}$",
        "ff",
        w=1.6,
        h=0.45,
        fontsize=font,
    )
    _box(
        ax, x_k, y_w, f"$\\mathbf{{W}}_k$: ${H}\\times{d_key}$", "ff", w=1.6, h=0.45, fontsize=font
    )
    _arrow(ax, x_q, y_w + 0.225, x_mid - 0.25, y_add)
    _arrow(ax, x_k, y_w + 0.225, x_mid + 0.25, y_add)
    _box(ax, x_mid, y_add, "$+$", "plain", w=0.5, h=0.4, fontsize=font)
    # beside the "+", clear of the two arrows into it
    ax.text(x_mid + 0.55, y_add, f"{H} numbers each", fontsize=font, va="center")
    _arrow(ax, x_mid, y_add + 0.2, x_mid, y_tanh - 0.225)
    _box(ax, x_mid, y_tanh, f"tanh: $d_a = {H}$ units", "ff", w=2.6, h=0.45, fontsize=font)
    x_v = x_mid - 0.3
    _arrow(ax, x_v, y_tanh + 0.225, x_v, y_v - 0.225)
    v_a = f"$\\mathbf{{v}}_a^\\top$: $1\\times{H}$"
    _box(ax, x_v, y_v, v_a, "ff", w=1.5, h=0.45, fontsize=font)
    _arrow(ax, x_v + 0.75, y_v, x_v + 1.25, y_v)
    _box(ax, x_v + 2.0, y_v, "$s_i$: 1 number", "attn", w=1.5, h=0.45, fontsize=font)
    title = "inside each score box $s_i$: the additive score"
    ax.text(x0 + 0.15, y0 + 3.8, title, fontsize=font, va="top", weight="bold")


def bahdanau_diagram(source, *, narrow=False, hard=False):
    """Chapter 4's decoder step of Bahdanau et al. 2015: the previous state s_{t-1} scores every
    annotation h_j of the ``source`` words (e_tj; arrows both ways between the h_j: the encoder's
    bidirectional GRU), a softmax over j gives alpha_tj, the context
    c_t = sum_j alpha_tj h_j (weights and annotations) and the previous word y_{t-1} update the
    state to s_t, which goes on to step t + 1, and the output layer predicts y_t from s_t,
    y_{t-1} and c_t. ``narrow``: drawn
    for a phone's width (4.89 inches, 13-point text, 12 CSS px on a phone, the subscripted symbols
    15), the decoder's boxes above the weights instead of beside them. ``hard``: the hard-attention decoder of
    lib.hard_attention (Xu et al. 2015), the same step except that the context is the annotation
    of one position z_t drawn from alpha_t, through which no gradient flows. Returns the Figure."""
    src = _words(source, "source", 6)
    for name, flag in (("narrow", narrow), ("hard", hard)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name}: expected True or False, got {flag!r}")
    S = len(src)
    reading = (
        "a box that draws one position z_t, position j with probability alpha_tj, and reads its "
        "annotation alone, c_t = h_{z_t}; no gradient flows back through the draw to the weights "
        "(the alignment model is trained by REINFORCE instead)"
        if hard
        else "the context c_t, the weighted sum of the annotations"
    )
    alt = (
        f"One decoder step of {'hard' if hard else 'Bahdanau'} attention over the {S} source words {' '.join(src)}. Each "
        "word has an annotation h_j, from the encoder's bidirectional GRU: between neighbouring "
        "annotations an arrow to the right (the forward GRU) and one to the left (the backward "
        "GRU), so that each h_j has read the whole sentence. The previous decoder state s_{t-1} "
        "runs along a line under the "
        "score boxes e_tj, one above each annotation; a softmax over all of them gives the weights "
        f"alpha_tj. A line from every annotation and the line from the weights meet in {reading}; "
        "c_t, the previous word y_{t-1} and s_{t-1} enter "
        "the GRU that gives the new state s_t; s_t, y_{t-1} and c_t enter the output layer, a "
        "softmax that predicts y_t, and s_t goes on to step t+1, where it is the state that asks."
    )
    # narrow: laid out on 5.2 x 7.1 inches and drawn 4.89 wide, its text at the phone's rule there
    scale = 0.94
    font = _phone_font(5.2 * scale) if narrow else _FONT
    math = _NARROW_MATH_FONT if narrow else _FONT  # the subscripted symbols in the boxes
    if narrow:  # the words' columns fill the width; the decoder's boxes sit above the weights
        fig, ax = _canvas(5.2, 7.1, alt, scale=scale)
        xs = [0.45 + 0.7 * j for j in range(S)]
        w_word, w_box = 0.64, 0.56
    else:
        fig, ax = _canvas(9.4, 5.3, alt)
        xs = [0.75 + 0.95 * j for j in range(S)]
        w_word, w_box = 0.85, 0.6
    _bahdanau_columns(ax, xs, src, w_word, w_box, (font, math))
    _encoder_links(ax, xs, _BAHDANAU_ROWS[1], w_box - 0.1)
    score = "score: $e_{tj}=\\mathbf{v}_a^\\top\\tanh(W_a\\mathbf{s}_{t-1}+U_a\\mathbf{h}_j)$,"
    on_red = " with $\\mathbf{s}_{t-1}$ on the red line"
    context = "$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$"
    if hard:  # one position drawn from alpha_t: the weights' line carries no gradient back
        context = "$z_t\\sim\\alpha_t$: $\\mathbf{c}_t=\\mathbf{h}_{z_t}$"
        x, y, ha = (1.85, 4.42, "right") if narrow else (6.35, 4.3, "right")
        # not "no gradient": REINFORCE gives the alignment model one (review ch04 s21, item 8)
        label = "no backprop" + ("\n" if narrow else " ") + "(REINFORCE)"
        ax.text(x, y, label, fontsize=font, ha=ha, va="center")
    if narrow:
        _bahdanau_decoder_narrow(ax, xs, (font, math), score, on_red, context)
    else:
        _bahdanau_decoder_wide(ax, xs, font, score + on_red, context)
    return fig


_BAHDANAU_ROWS = (0.35, 1.15, 1.55, 1.78, 2.25, 3.0, 3.75)  # words, h, tap, s's line, e, softmax, a
_BAHDANAU_LEFT = 0.15  # the annotations' line, round the left edge


def _encoder_links(ax, xs, y_h, w_h):
    """The encoder's bidirectional GRU between the annotations (boxes ``w_h`` wide at height
    ``y_h``): from each to its right neighbour, the forward GRU (above), and to its left, the
    backward GRU (below). Each h_j has read the whole sentence, not its word alone: chapter 4's
    one-word-to-the-left habit rests on that."""
    for x0, x1 in zip(xs, xs[1:]):
        _arrow(ax, x0 + w_h / 2, y_h + 0.1, x1 - w_h / 2, y_h + 0.1, mutation_scale=7)
        _arrow(ax, x1 - w_h / 2, y_h - 0.1, x0 + w_h / 2, y_h - 0.1, mutation_scale=7)


def _bahdanau_columns(ax, xs, src, w_word, w_box, fonts):
    """bahdanau_diagram's columns, one per source word: word, annotation h_j, score e_tj, weight
    alpha_tj, numbered from 0 as in the chapter; the softmax across them; the weights' lines up
    to the context. ``fonts``: the text's (the words' too) and the subscripted symbols' sizes."""
    font, math = fonts
    y_word, y_h, y_tap, y_bus, y_e, y_soft, y_a = _BAHDANAU_ROWS
    for j, (x, word) in enumerate(zip(xs, src)):
        _box(ax, x, y_word, word, "io", w=w_word, h=0.4, fontsize=font)
        _arrow(ax, x, y_word + 0.2, x, y_h - 0.25)
        # narrower than the other boxes: room for the encoder's arrows between them
        _box(ax, x, y_h, f"$\\mathbf{{h}}_{j}$", "rnn", w=w_box - 0.1, h=0.5, fontsize=math)
        _arrow(ax, x - 0.12, y_h + 0.25, x - 0.12, y_e - 0.2)
        ax.plot([x - 0.12], [y_tap], "o", color="0.35", ms=3.5)  # h_j also goes to the context
        _arrow(ax, x + 0.14, y_bus, x + 0.14, y_e - 0.2, color=_CTX)
        _box(ax, x, y_e, f"$e_{{t{j}}}$", "attn", w=w_box, h=0.4, fontsize=math)
        _arrow(ax, x, y_e + 0.2, x, y_soft - 0.2)
        _arrow(ax, x, y_soft + 0.2, x, y_a - 0.2)
        _box(ax, x, y_a, f"$\\alpha_{{t{j}}}$", "attn", w=w_box, h=0.4, fontsize=math)
    _box(
        ax,
        (xs[0] + xs[-1]) / 2,
        y_soft,
        "softmax over $j$",
        "norm",
        xs[-1] - xs[0] + w_box + 0.1,
        0.4,
        font,
    )
    for x in xs:  # the weights join on one line, to the context
        _line(ax, [x, x], [y_a + 0.2, y_a + 0.4], color="0.35")


def _bahdanau_decoder_narrow(ax, xs, fonts, score, on_red, context):
    """bahdanau_diagram's decoder on a phone: c_t and the GRU in a row above the weights, y_{t-1}
    and the output layer above them; s_{t-1} at the right of the words. ``fonts``: the text's and
    the subscripted symbols' sizes."""
    font, math = fonts
    y_word, _, y_tap, y_bus, _, _, y_a = _BAHDANAU_ROWS
    x_left = _BAHDANAU_LEFT
    # s_{t-1} at the right of the words, up the right edge into the scores and the GRU
    x_c, y_c, x_gru, y_gru, y_out = 1.95, 4.95, 4.3, 4.95, 6.05
    x_s, x_y, x_out = 4.78, 4.6, 2.75
    _line(ax, [xs[-1] - 0.12, x_left, x_left, x_c - 0.5], [y_tap, y_tap, 5.6, 5.6])
    _arrow(ax, x_c - 0.5, 5.6, x_c - 0.5, y_c + 0.25, color="0.35")
    ax.text(x_left + 0.1, 5.65, "annotations $\\mathbf{h}_j$", fontsize=font, va="bottom")
    _box(ax, x_s, y_word, "$\\mathbf{s}_{t-1}$", "rnn", w=0.7, h=0.45, fontsize=math)
    _line(
        ax,
        [x_s - 0.25, x_s - 0.25, xs[0] + 0.14],
        [y_word + 0.225, y_bus, y_bus],
        color=_CTX,
        lw=1.2,
    )
    _arrow(ax, x_s + 0.02, y_word + 0.225, x_s + 0.02, y_gru - 0.3)
    ax.text(x_left, 6.75, score, fontsize=font, ha="left", va="bottom")
    ax.text(x_left, 6.42, on_red.strip(), fontsize=font, ha="left", va="bottom")
    _line(ax, [xs[0], xs[-1]], [y_a + 0.4, y_a + 0.4], color="0.35")
    _arrow(ax, x_c, y_a + 0.4, x_c, y_c - 0.25)
    _box(ax, x_c, y_c, context, "ctx", 1.9, 0.5, math)
    _arrow(ax, x_c + 0.95, y_c, x_gru - 0.6, y_gru)  # into the GRU
    _arrow(ax, x_c + 0.5, y_c + 0.25, x_out - 0.35, y_out - 0.25)  # into the output layer
    _box(ax, x_gru, y_gru, "GRU: $\\mathbf{s}_t$", "rnn", w=1.2, h=0.6, fontsize=math)
    # s_t goes on: it is the next step's s_{t-1} (as in luong_step_diagram's "to step t+1")
    _arrow(ax, x_gru, y_gru - 0.3, x_gru, y_gru - 0.5)
    ax.text(x_gru + 0.35, y_gru - 0.62, "to step $t+1$", fontsize=font, ha="right", va="center")
    _arrow(ax, x_gru - 0.35, y_gru + 0.3, x_out + 0.35, y_out - 0.25)
    _box(ax, x_y, y_out, "$y_{t-1}$", "io", w=0.7, h=0.4, fontsize=math)
    _arrow(ax, x_y, y_out - 0.2, x_y, y_gru + 0.3)  # into the GRU
    _arrow(ax, x_y - 0.35, y_out, x_out + 0.75, y_out)  # into the output layer
    _box(ax, x_out, y_out, "softmax: $y_t$", "io", w=1.5, h=0.5, fontsize=math)


def _bahdanau_decoder_wide(ax, xs, font, score, context):
    """bahdanau_diagram's decoder beside the weights: the context c_t, the GRU and the output
    layer; s_{t-1} and y_{t-1} below them."""
    y_word, y_h, y_tap, y_bus, _, _, y_a = _BAHDANAU_ROWS
    x_left = _BAHDANAU_LEFT
    x_gru, x_c, x_out = 7.55, 6.95, 8.65
    y_top = 4.65  # the annotations' line to the context
    # the annotations: tapped above each h_j, round the left edge, over the top into c_t
    _line(ax, [xs[-1] - 0.12, x_left, x_left, x_c + 0.35], [y_tap, y_tap, y_top, y_top])
    _arrow(ax, x_c + 0.35, y_top, x_c + 0.35, y_a + 0.25, color="0.35")
    ax.text(x_left + 0.1, y_top + 0.05, "annotations $\\mathbf{h}_j$", fontsize=font, va="bottom")
    # s_{t-1}: into every score and into the GRU
    _box(ax, x_gru, y_word, "$\\mathbf{s}_{t-1}$", "rnn", w=0.8, h=0.45, fontsize=font)
    _line(
        ax,
        [x_gru - 0.4, xs[-1] + 0.6, xs[-1] + 0.6, xs[0] + 0.14],
        [y_word, y_word, y_bus, y_bus],
        color=_CTX,
        lw=1.2,
    )
    ax.text(x_left, y_top + 0.4, score, fontsize=font, ha="left", va="bottom")
    _arrow(ax, x_gru, y_word + 0.22, x_gru, 2.5)
    _box(ax, x_out + 0.3, y_h + 0.6, "$y_{t-1}$", "io", w=0.6, h=0.4, fontsize=font)
    _arrow(ax, x_out + 0.1, y_h + 0.8, x_gru + 0.35, 2.5)  # into the GRU
    _arrow(ax, x_out + 0.45, y_h + 0.8, x_out + 0.45, 4.3)  # into the output layer
    _line(ax, [xs[0], x_c - 0.55], [y_a + 0.4, y_a + 0.4], color="0.35")
    _arrow(ax, x_c - 0.55, y_a + 0.4, x_c - 0.55, y_a + 0.25)
    _box(ax, x_c, y_a, context, "ctx", 1.7, 0.5, font)
    _arrow(ax, x_c + 0.3, y_a - 0.25, x_gru - 0.2, 3.1)  # into the GRU
    _arrow(ax, x_c + 0.85, y_a + 0.1, x_out - 0.4, 4.3)  # into the output layer
    _box(ax, x_gru, 2.8, "GRU: $\\mathbf{s}_t$", "rnn", w=1.3, h=0.6, fontsize=font)
    _arrow(ax, x_gru - 0.5, 2.5, x_gru - 0.5, 2.2)  # s_t goes on: the next step's s_{t-1}
    ax.text(x_gru - 0.5, 2.05, "to step $t+1$", fontsize=font, ha="center", va="center")
    _arrow(ax, x_gru + 0.45, 3.1, x_out - 0.05, 4.3)
    _box(ax, x_out, 4.55, "softmax: $y_t$", "io", w=1.4, h=0.5, fontsize=font)


def luong_diagram(window, *, source_length=20, position=8.6, local_m=None, narrow=False):
    """Chapter 4's two attentions of Luong et al. 2015 over ``source_length`` source states:
    global (every position s) and local-p (only the window [p_t - D, p_t + D] around the predicted
    position p_t = ``position``, D = ``window``, its softmax times a Gaussian with sigma = D/2). Both
    give a context c_t that joins h_t in the attentional state. ``local_m``: a target step t, to
    draw local-m below them too (the window at p_t = t, its plain softmax, no Gaussian); None: not
    drawn. ``narrow``: drawn for a phone's width (5.2 inches, 14-point text), each context box
    above its h_t instead of beside it. Returns the Figure."""
    check_int(window, "window", 1)
    check_int(source_length, "source_length", 2)
    if source_length > 24:
        raise ValueError(f"source_length: expected at most 24 positions, got {source_length}")
    if not is_number(position):
        raise TypeError(f"position: expected a number, got {type(position).__name__}")
    if not 0 <= position <= source_length:
        raise ValueError(f"position: expected p_t in [0, {source_length}], got {position}")
    if local_m is not None:
        check_int(local_m, "local_m", 0)
        if local_m >= source_length:
            raise ValueError(f"local_m: expected a step t below {source_length}, got {local_m}")
    S, D, p = source_length, window, float(position)
    inside = [s for s in range(S) if abs(s - p) <= D]
    alt = (
        f"{'Two' if local_m is None else 'Three'} rows of {S} source states. Top, global attention: the decoder state h_t is joined to "
        f"all {S}. Bottom, local-p attention: a dashed line marks the predicted position "
        f"p_t = {p:g}, the window of D = {D} positions on each side is shaded, a bell curve "
        f"(sigma = {D / 2:g}) peaks at p_t, and h_t is joined only to the {len(inside)} states "
        f"inside the window, positions {inside[0]} to {inside[-1]}. In both, these lines are the "
        "scores; a short blue tick from every scored source state joins one blue line just above "
        "the states, and from that line an arrow carries the scored source states into the context "
        "c_t, which with h_t "
        "gives the attentional state tilde h_t = tanh(W_c [c_t; h_t])."
    )
    # (local, its centre, the positions it scores) for each panel from the top
    panels = [(None, (S - 1) / 2, list(range(S))), ("p", p, inside)]
    if local_m is not None:
        inside_m = [s for s in range(S) if abs(s - local_m) <= D]
        alt += (
            f" Bottom, local-m attention: the window of the same D = {D} positions on each side "
            f"is centred at the target step, p_t = t = {local_m}, shaded, with no bell curve (a "
            f"plain softmax inside it), and h_t is joined only to the {len(inside_m)} states "
            f"inside it, positions {inside_m[0]} to {inside_m[-1]}."
        )
        alt = alt.replace("Bottom, local-p", "Middle, local-p").replace("In both", "In each")
        panels.append(("m", local_m, inside_m))
    alt += " A key at the top left: a grey line, scores; a blue line, into c_t."
    check_bool(narrow, "narrow")
    # three panels: 0.15 inch more each, room between p_t's label and the next title
    if narrow:  # each panel: sources, h_t, its context box above, the title on top
        step, y_low, width, x0, room = 3.7 + 0.15 * (len(panels) > 2), 0.3, 5.2, 0.6, 4.45
    else:
        step, y_low, width, x0, room = 2.75 + 0.15 * (len(panels) > 2), 0.25, 9.0, 0.45, 6.2
    fig, ax = _canvas(width, y_low + step * len(panels) - (0 if narrow else 0.15), alt)
    dx = room / S
    xs = [x0 + dx * (s + 0.5) for s in range(S)]
    for k, (local, centre, scored) in enumerate(panels):
        y0 = y_low + step * (len(panels) - 1 - k)
        _luong_panel(ax, xs, dx, y0, local, D, centre, scored, narrow)
    # the key of the lines, in the top panel's empty top left (reader s22: only the alt text said it)
    y_top = y_low + step * (len(panels) - 1) + (2.55 if narrow else 2.05)
    font = _LUONG_NARROW_FONT if narrow else _FONT
    for i, (colour, what) in enumerate([("0.55", "scores"), (_VALUES, "into $\\mathbf{c}_t$")]):
        y = y_top - i * (0.38 if narrow else 0.3)
        _line(ax, [0.12, 0.47], [y, y], color=colour, lw=1.6, gid="key")
        ax.text(0.55, y, what, fontsize=font, va="center")
    return fig


# luong_diagram's arrow that carries the source states into the context c_t
_VALUES = "C0"


def _luong_panel(ax, xs, dx, y0, local, D, p, inside, narrow):
    """One of luong_diagram's panels at height ``y0``: the source states, h_t joined to those it
    attends to (grey lines, the scores; ``local`` "p" or "m": the window's ``inside`` around ``p``,
    drawn by :func:`_luong_window`; None: global), an arrow from them into the context box (the
    values) and the panel's title."""
    S, font = len(xs), _LUONG_NARROW_FONT if narrow else _FONT
    math = _LUONG_NARROW_MATH_FONT if narrow else _FONT  # the subscripted symbols
    y_src, y_q = y0 + 0.35, y0 + (1.55 if narrow else 1.75)
    x_q = xs[0] + dx * (p if local else (S - 1) / 2)
    if local:
        title = _luong_window(ax, xs, dx, y_src, y_q, D, p, narrow, local == "m")
    else:
        title = "global: every source position $s$"
    for s, x in enumerate(xs):
        used = not local or s in inside
        _box(ax, x, y_src, "", "rnn" if used else "plain", w=dx * 0.75, h=0.3)
        if used:
            _line(ax, [x, x_q], [y_src + 0.15, y_q - 0.25], color="0.55", lw=0.8)
        if s % 5 == 0:
            ax.text(x, y_src - (0.33 if narrow else 0.3), str(s), **_t(font))
    ax.text(0.12, y_src, "$\\bar{\\mathbf{h}}_s$", fontsize=math, va="center")
    _box(ax, x_q, y_q, "$\\mathbf{h}_t$", "rnn", w=0.6, h=0.45, fontsize=math)
    context = (
        "$\\mathbf{c}_t=\\sum_s a_t(s)\\,\\bar{\\mathbf{h}}_s$\n"
        "$\\tilde{\\mathbf{h}}_t=\\tanh(W_c[\\mathbf{c}_t;\\mathbf{h}_t])$"
    )
    # the values: every source state it attends to joins one blue line, which enters the context
    # (the grey lines are the scores)
    x_last, y_comb = _luong_values(
        ax, [x for s, x in enumerate(xs) if not local or s in inside], y_src
    )
    if narrow:
        y_c = y_q + 0.9
        ax.text(0.12, y0 + 3.2, title, fontsize=font, va="center")
        _arrow(ax, x_q, y_q + 0.225, x_q, y_c - 0.475)
        _arrow(ax, x_last, y_comb, 4.75, y_c - 0.475, color=_VALUES)
        _box(ax, 3.55, y_c, context, "ctx", 3.05, 0.95, math)
    else:
        ax.text(0.12, y0 + 2.45, title, fontsize=10, va="center")
        _arrow(ax, x_q + 0.3, y_q, 6.75, y_q)
        _arrow(ax, x_last, y_comb, 7.2, y_q - 0.375, color=_VALUES)
        _box(ax, 7.85, y_q, context, "ctx", 2.2, 0.75, _FONT)


_COMB_RISE = 0.12  # how far above the source states' boxes (height 0.3) their blue line runs


def _luong_values(ax, used_xs, y_src):
    """luong_diagram's values: a short blue tick up from each of the states at ``used_xs`` (every
    one, or the window's) into one blue line over them, as Fig. 4.1's weights join one line;
    returns the line's right end, where the arrow into the context starts."""
    y_top, y_comb = y_src + 0.15, y_src + 0.15 + _COMB_RISE
    for x in used_xs:
        _line(ax, [x, x], [y_top, y_comb], color=_VALUES, lw=1.2)
    _line(ax, [used_xs[0], used_xs[-1]], [y_comb, y_comb], color=_VALUES, lw=1.6)
    return used_xs[-1], y_comb


def _luong_window(ax, xs, dx, y_src, y_q, D, p, narrow, monotonic=False):
    """local-p's window: shaded, the Gaussian over it, the predicted position p_t dashed; returns
    the panel's title. ``monotonic``: local-m's, centred at p_t = t, with no Gaussian."""
    font = _LUONG_NARROW_MATH_FONT if narrow else _FONT  # p_t's label; the title's is the text's
    x_lo, x_hi = xs[0] + dx * (p - D), xs[0] + dx * (p + D)
    ax.add_patch(mpatches.Rectangle((x_lo, y_src - 0.3), x_hi - x_lo, 1.1, fc="#fff2cc"))
    # the Gaussian factor over the window, sigma = D/2: u runs over [-2, 2] sigmas
    us = [k / 25 - 2 for k in range(101)]
    if not monotonic:
        ax.plot(
            [xs[0] + dx * (p + u * D / 2) for u in us],
            [y_src + 0.3 + 0.5 * math.exp(-u * u / 2) for u in us],
            color="0.45",
            lw=1.2,
        )
    _line(ax, [xs[0] + dx * p] * 2, [y_src - 0.45, y_q - 0.25], color="0.2", ls="--")
    ax.text(
        xs[0] + dx * p + 0.07,
        y_src - (0.55 if narrow else 0.5),
        f"$p_t = t$ = {p:g}" if monotonic else f"$p_t$ = {p:g}",
        fontsize=font,
        ha="left",
        va="center",
    )
    if monotonic:
        return f"local-m: the same window at $p_t = t$,{chr(10) if narrow else ' '}no Gaussian"
    title = (
        f"local-p: only the window $[p_t - D, p_t + D]$, $D$ = {D},"
        + ("\n" if narrow else " ")
        + f"times a Gaussian ($\\sigma = D/2$ = {D / 2:g})"
    )
    return title


# Long by its checks, alt text and layout; the drawing steps are the helpers below it.
def luong_step_diagram(source, *, narrow=False):
    """Chapter 4's decoder step of Luong et al. 2015 (global attention, the concat score), drawn
    like :func:`bahdanau_diagram`: the GRU first updates the state, h_t = GRU(h_{t-1},
    [E y_{t-1}; tilde h_{t-1}]); the new state h_t scores every encoder state h̄_s of the
    ``source`` words (e_t(s); arrows both ways between the h̄_s: the bidirectional GRU), a softmax over s gives a_t(s), the context c_t = sum_s a_t(s) h̄_s
    and h_t make the attentional state tilde h_t = tanh(W_c [c_t; h_t]), which predicts y_t and is
    fed to the next step (input feeding), as h_t is. Positions count from 0, as in the chapter.
    ``narrow``: text at the phone size (13 points, 12 CSS px on a phone, the subscripted
    symbols in the boxes 15; the canvas is 4.89 inches wide either way). Returns the Figure."""
    src = _words(source, "source", 6)
    check_bool(narrow, "narrow")
    S = len(src)
    alt = (
        f"One decoder step of Luong attention over the {S} source words {' '.join(src)}. Each word "
        "has an encoder state h̄_s, from the encoder's bidirectional GRU: between neighbouring "
        "states an arrow to the right (the forward GRU) and one to the left (the backward GRU), so "
        "that each h̄_s has read the whole sentence. First the GRU, at the right of the words, updates the state: it "
        "reads the previous state h_{t-1}, the previous word y_{t-1} and the previous attentional "
        "state tilde h_{t-1}, and gives the new state h_t. A red line from h_t runs under the score "
        "boxes e_t(s), one above each encoder state; a softmax over all of them gives the weights "
        "a_t(s). A line from every encoder state and the line from the weights meet in the context "
        "c_t; c_t and h_t enter the attentional state tilde h_t = tanh(W_c [c_t; h_t]), which feeds "
        "the output layer, a softmax that predicts y_t, and goes on to the next step (input "
        "feeding); h_t goes on to the next step too, as its h_{t-1}. The two arrows to the next step "
        "leave at the top right, labelled tilde h_t and h_t."
    )
    # laid out on 5.2 x 8.3 inches, drawn 4.89 wide: its text, at the phone's rule for that
    # width, fits its boxes (and a figure of the book fits a page at 8 inches tall)
    scale = 0.94
    font = _phone_font(5.2 * scale) if narrow else _FONT
    math = _NARROW_MATH_FONT if narrow else _FONT  # the subscripted symbols in the boxes
    cell = math - 1 if narrow else _FONT  # e_t(s) and a_t(s), in boxes 0.6 inches wide
    fig, ax = _canvas(5.2, 8.3, alt, scale=scale)
    xs = [0.42 + 0.645 * s for s in range(S)]
    y_word, y_h, y_tap, y_bus, y_e, y_soft, y_a = _BAHDANAU_ROWS
    w_box, w_h = 0.56, 0.44  # the encoder states' boxes narrower: the GRU's arrows between them
    _encoder_links(ax, xs, y_h, w_h)
    for s, (x, word) in enumerate(zip(xs, src)):
        _box(ax, x, y_word, word, "io", w=0.62, h=0.4, fontsize=font)
        _arrow(ax, x, y_word + 0.2, x, y_h - 0.25)
        _box(ax, x, y_h, f"$\\bar{{\\mathbf{{h}}}}_{s}$", "rnn", w=w_h, h=0.5, fontsize=math)
        _arrow(ax, x - 0.12, y_h + 0.25, x - 0.12, y_e - 0.2)
        ax.plot([x - 0.12], [y_tap], "o", color="0.35", ms=3.5)  # h̄_s also goes to the context
        _arrow(ax, x + 0.14, y_bus, x + 0.14, y_e - 0.2, color=_CTX)
        _box(ax, x, y_e, f"$e_t({s})$", "attn", w=w_box + 0.04, h=0.4, fontsize=cell)
        _arrow(ax, x, y_e + 0.2, x, y_soft - 0.2)
        _arrow(ax, x, y_soft + 0.2, x, y_a - 0.2)
        _box(ax, x, y_a, f"$a_t({s})$", "attn", w=w_box + 0.04, h=0.4, fontsize=cell)
        _line(ax, [x, x], [y_a + 0.2, y_a + 0.4], color="0.35")  # the weights join on one line
    width = xs[-1] - xs[0] + w_box + 0.14
    _box(ax, (xs[0] + xs[-1]) / 2, y_soft, "softmax over $s$", "norm", width, 0.4, font)
    # the decoder's update first, at the right of the words: h_{t-1} and y_{t-1} from below,
    # the previous attentional state from above (input feeding)
    x_r = 4.62
    _box(ax, 4.3, y_word, "$\\mathbf{h}_{t-1}$", "rnn", w=0.58, h=0.42, fontsize=math)
    _box(ax, 4.93, y_word, "$y_{t-1}$", "io", w=0.5, h=0.42, fontsize=math)
    _box(ax, 4.85, 2.45, "$\\tilde{\\mathbf{h}}_{t-1}$", "ctx", w=0.62, h=0.45, fontsize=math)
    _box(ax, x_r, y_h, "GRU: $\\mathbf{h}_t$", "rnn", w=1.08, h=0.55, fontsize=math)
    _arrow(ax, 4.3, y_word + 0.21, 4.3, y_h - 0.275)
    _arrow(ax, 4.93, y_word + 0.21, 4.93, y_h - 0.275)
    _arrow(ax, 4.93, 2.45 - 0.225, 4.93, y_h + 0.275)
    # h_t asks: the red line under the scores
    _line(ax, [4.2, 4.2, xs[0] + 0.14], [y_h + 0.275, y_bus, y_bus], color=_CTX, lw=1.2)
    # the context: the weights' line and the encoder states' line (round the left edge)
    y_c, x_c = 4.85, 1.55
    _line(ax, [xs[0], xs[-1]], [y_a + 0.4, y_a + 0.4], color="0.35")
    _arrow(ax, x_c, y_a + 0.4, x_c, y_c - 0.25)
    x_left = _BAHDANAU_LEFT
    _line(ax, [xs[-1] - 0.12, x_left, x_left, 0.75], [y_tap, y_tap, 5.45, 5.45])
    _arrow(ax, 0.75, 5.45, 0.75, y_c + 0.25, color="0.35")
    ax.text(x_left + 0.1, 5.5, "encoder states $\\bar{\\mathbf{h}}_s$", fontsize=font, va="bottom")
    context = "$\\mathbf{c}_t=\\sum_s a_t(s)\\bar{\\mathbf{h}}_s$"
    _box(ax, x_c, y_c, context, "ctx", 2.3, 0.5, math)
    # the attentional state from c_t and h_t; it predicts y_t and goes on to step t + 1
    y_att = 6.25
    attentional = "$\\tilde{\\mathbf{h}}_t=\\tanh(W_c[\\mathbf{c}_t;\\mathbf{h}_t])$"
    _box(ax, 2.75, y_att, attentional, "ctx", 3.3, 0.5, math)
    _arrow(ax, 2.3, y_c + 0.25, 2.3, y_att - 0.25)
    _arrow(ax, 4.3, y_h + 0.275, 4.3, y_att - 0.25)  # h_t up the right side
    _arrow(ax, 1.5, y_att + 0.25, 1.5, 6.95)
    _box(ax, 1.5, 7.2, "softmax: $y_t$", "io", w=1.6, h=0.5, fontsize=math)
    _arrow(ax, 3.9, y_att + 0.25, 3.9, 6.95, color="0.35")
    # h_t goes on too: it is the next step's h_{t-1} (reader s20: only tilde h_t did)
    _line(ax, [4.3, 4.75], [5.3, 5.3])
    _arrow(ax, 4.75, 5.3, 4.75, 6.95)
    # each arrow named at its head (reader s22: only the alt text said which state is fed back)
    for x, state in [(3.9, "$\\tilde{\\mathbf{h}}_t$"), (4.75, "$\\mathbf{h}_t$")]:
        ax.text(x, 7.1, state, fontsize=math, ha="center", va="center")
    ax.text(4.3, 7.48, "to step $t+1$", fontsize=font, ha="center", va="center")
    score = "score: $e_t(s)=\\mathbf{v}_a^\\top\\tanh(W_a[\\mathbf{h}_t;\\bar{\\mathbf{h}}_s])$,"
    ax.text(x_left, 8.25, score, fontsize=font, ha="left", va="top")
    ax.text(
        x_left,
        7.9 if narrow else 7.98,
        "with $\\mathbf{h}_t$ on the red line",
        fontsize=font,
        ha="left",
        va="top",
    )
    return fig


def elmo_diagram(
    config, words=("<bos>", "the", "river", "bank", "<eos>"), focus=3, *, narrow=False
):
    """Chapter 12's ELMo (Peters et al. 2018): the biLM of ``config`` (a ``lib.elmo.ELMoConfig``),
    a token representation x_k under L layers that each hold a forward and a backward LSTM, one
    softmax shared by both directions at the top; on the right, the mix of the L + 1 layers of the
    word ``words[focus]``, ELMo_k = gamma sum_j s_j h_kj. ``narrow``: drawn for a phone's width
    (4.89 inches, 13-point text, 12 CSS px on a phone), the mix below the biLM. Returns the Figure."""
    from lib.elmo import ELMoConfig

    check_type(config, "config", ELMoConfig)
    toks = _words(words, "words", 6)
    check_int(focus, "focus", 0)
    if focus >= len(toks):
        raise ValueError(f"focus: expected a position in [0, {len(toks)}), got {focus}")
    check_bool(narrow, "narrow")
    L, Hd = config.n_layers, config.hidden_dim
    alt = (
        f"The biLM under the words {' '.join(toks)}. Each word's token representation, "
        f"x_k for {toks[focus]} at position k, x_(k{-focus:+d}) to x_(k{len(toks) - 1 - focus:+d}) "
        "from the first word to the last "
        f"(a {config.word_dim}-number embedding projected to {Hd}), feeds {L} layers; in each, the "
        "forward LSTM (drawn a little higher) passes its state to the right, to the forward LSTM of "
        "the next word, and the backward LSTM (a little lower) to the left, to the backward LSTM of "
        "the previous word; above layer 1, each direction's LSTMs read only its own layer below. One softmax "
        f"at the top, shared by both directions, predicts the next and the previous word. "
        f"{'Below' if narrow else 'On the right'}, the {L + 1} layers h_k0 to h_k{L} of the word "
        f"{toks[focus]} are weighted by s_0 to s_{L}, summed and scaled by gamma into ELMo_k."
    )
    # narrow: laid out 5.2 inches wide and drawn 4.89 wide, its text at the phone's rule for that
    # width; the mix in a band of 1.9 inches under the biLM, the columns closer together
    scale = 0.94 if narrow else 1.0
    font = _phone_font(5.2 * scale) if narrow else _FONT
    y0 = 1.9 if narrow else 0.0
    step = (4.75 - 1.2) / max(len(toks) - 1, 1) if narrow else 1.05
    half = min(0.36, (step - 0.18) / 2) if narrow else 0.4  # the width of one direction's box
    height = y0 + 1.9 + 0.8 * L + (1.2 if narrow else 0.9)
    fig, ax = _canvas(5.2 if narrow else 9.0, height, alt, scale=scale)
    xs = [(1.2 if narrow else 1.3) + step * k for k in range(len(toks))]
    ys = [y0 + 1.15 + 0.8 * j for j in range(L + 1)]  # layer 0 is x_k
    y_soft = ys[-1] + (0.95 if narrow else 0.85)
    _elmo_columns(ax, xs, ys, toks, focus, y0, y_soft, step, half, font, narrow)
    _box(
        ax,
        (xs[0] + xs[-1]) / 2,
        y_soft,
        "softmax, shared: next word ($\\rightarrow$),"
        + ("\n" if narrow else " ")
        + "previous word ($\\leftarrow$)",
        "norm",
        xs[-1] - xs[0] + (0.8 if narrow else 0.9),
        0.64 if narrow else 0.4,
        font,
    )
    for j, y in enumerate(ys):
        label = "layer 0" if j == 0 else f"layer {j}"
        if narrow:  # two lines, in the margin left of the first column
            label = label.replace(" ", "\n")
        ax.text(0.1, y, label, fontsize=font, va="center")
    title = f"biLM: $L$ = {L} layers, {Hd} numbers per direction"
    mix_title = f"the mix for '{toks[focus]}' (dashed)"
    if narrow:  # from the left edge: centred on the columns, it would run past the right one
        ax.text(0.1, y_soft + 0.6, title, fontsize=font, va="center")
        _elmo_mix_narrow(ax, L, mix_title, font)
        return fig
    _elmo_mix_wide(ax, ys, L, y_soft, mix_title)
    ax.text((xs[0] + xs[-1]) / 2, y_soft + 0.55, title, **_t(10))
    return fig


# narrow: the symbols with subscripts (x_{k-3}, s_0 h_{k,0}, ELMo_k) are drawn larger than the
# phone's text, so that their subscripts (70% of the size) still read at ~8 CSS px on a phone
_ELMO_PHONE_MATH = 14.5
# the forward LSTM's boxes sit this much above their layer's line and the backward ones as much below,
# so that each direction's arrows to its neighbours pass over (forward) or under (backward) the other's box
_ELMO_LANE = 0.16
_ELMO_CELL = 0.45  # the height of an LSTM's box
# the forward LM predicts nothing after <eos>, the backward LM nothing before <bos>: no arrow to the
# softmax from the forward LSTM of <eos> or the backward LSTM of <bos>
_PREDICTS_NOTHING = {"$\\rightarrow$": "<eos>", "$\\leftarrow$": "<bos>"}


def _token_label(offset):
    """The token representation of the word ``offset`` places from the focused word k: x_k, x_{k-1},
    x_{k+1}, ..."""
    return "$x_k$" if offset == 0 else f"$x_{{k{offset:+d}}}$"


def _elmo_columns(ax, xs, ys, toks, focus, y0, y_soft, step, half, font, narrow):
    """elmo_diagram's biLM: a column per word (the word, its token representation x_{k+offset}, k the
    focused word's position, then each layer's forward LSTM, a little higher, and backward LSTM, a
    little lower), the focused word's framed. Each direction is its own
    stack: its arrows go from x_k through its own layers to the softmax (except from the forward LSTM of
    <eos> and the backward LSTM of <bos>, which predict nothing), and to the same direction's LSTM of
    the next word (forward) or of the previous one (backward)."""
    rise, top_of_x = _ELMO_LANE, ys[0] + 0.225
    softmax_bottom = y_soft - (0.32 if narrow else 0.2)
    for k, (x, word) in enumerate(zip(xs, toks)):
        _box(ax, x, y0 + 0.35, word, "io", w=min(0.9, step - 0.08), h=0.4, fontsize=font)
        _arrow(ax, x, y0 + 0.55, x, ys[0] - 0.22)
        _box(
            ax,
            x,
            ys[0],
            _token_label(k - focus),
            "emb",
            w=min(0.8, step - 0.1),
            h=0.45,
            fontsize=_ELMO_PHONE_MATH if narrow else font,
        )
        for label, kind, dx, lane in (
            ("$\\rightarrow$", "rnn", -half / 2, rise),
            ("$\\leftarrow$", "ff", half / 2, -rise),
        ):
            centres = [y + lane for y in ys[1:]]
            for y in centres:
                _box(ax, x + dx, y, label, kind, w=half, h=_ELMO_CELL, fontsize=font)
            starts = [top_of_x] + [y + _ELMO_CELL / 2 for y in centres]
            ends = [y - _ELMO_CELL / 2 for y in centres] + [softmax_bottom]
            if word == _PREDICTS_NOTHING[label]:  # its top state is never scored
                starts, ends = starts[:-1], ends[:-1]
            for a, b in zip(starts, ends):
                _arrow(ax, x + dx, a, x + dx, b)
        if k == focus:
            ax.add_patch(
                mpatches.Rectangle(
                    (x - half - 0.1, ys[0] - 0.35),
                    2 * half + 0.2,
                    ys[-1] - ys[0] + 0.35 + rise + _ELMO_CELL / 2 + 0.05,
                    fc="none",
                    ec=_CTX,
                    lw=1.3,
                    ls="--",
                )
            )
    for a, b in zip(xs, xs[1:]):
        for y in ys[1:]:
            # forward: from the right edge of a's forward box, over a's backward box, to b's forward box
            _arrow(ax, a, y + rise + 0.08, b - half, y + rise + 0.08)
            # backward: from the left edge of b's backward box, under b's forward box, to a's
            _arrow(ax, b, y - rise - 0.08, a + half, y - rise - 0.08)


def _elmo_mix_narrow(ax, L, mix_title, font):
    """elmo_diagram's mix on a phone, under the biLM: the focused word's L + 1 vectors in a row,
    summed below."""
    y_row, y_sum = 1.3, 0.4
    math_font = max(font, _ELMO_PHONE_MATH)
    width = min(1.5, (4.9 - 0.15 * L) / (L + 1))
    xm = [2.6 + (j - L / 2) * (width + 0.15) for j in range(L + 1)]
    ax.text(2.6, 1.85, mix_title, **_t(font))
    for j, x in enumerate(xm):
        label = f"$s_{j} \\cdot \\mathbf{{h}}_{{k,{j}}}$"
        _box(ax, x, y_row, label, "plain", width, 0.5, math_font)
        _arrow(ax, x, y_row - 0.25, 2.6 + (x - 2.6) * 0.1, y_sum + 0.25)
    _box(ax, 2.6, y_sum, "$\\gamma\\sum_j$", "ctx", 0.8, 0.5, math_font)
    _arrow(ax, 3.0, y_sum, 3.45, y_sum)
    ax.text(3.55, y_sum, "ELMo$_k$", fontsize=math_font, va="center")


def _elmo_mix_wide(ax, ys, L, y_soft, mix_title):
    """elmo_diagram's mix beside the biLM: the focused word's L + 1 vectors, summed at the right."""
    xm = 7.35
    for j, y in enumerate(ys):
        _box(ax, xm, y, f"$s_{j} \\cdot \\mathbf{{h}}_{{k,{j}}}$", "plain", 0.95, 0.45, _FONT)
        _arrow(ax, xm + 0.48, y, 8.35, ys[L // 2] if L else y)
    _box(ax, 8.6, ys[L // 2], "$\\gamma\\sum_j$", "ctx", 0.5, 0.5, _FONT)
    ax.text(8.6, ys[L // 2] - 0.45, "ELMo$_k$", **_t())
    ax.text(xm + 0.5, y_soft + 0.35, mix_title, **_t(10))


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def captioning_diagram(n_regions, d_feature):
    """Chapter 5's captioner (Xu et al. 2015, "Show, attend and tell"): a CNN cuts the image into
    ``n_regions`` (a square number) region vectors a_i of width ``d_feature``, to which learned row
    and column embeddings are added (lib.captioning.ConvEncoder); before word t the
    LSTM's previous state h_{t-1} scores every region (e_{t,i}), a softmax gives alpha_{t,i}, the
    context z_t = sum_i alpha_{t,i} a_i enters the LSTM with the previous word, and the deep output
    layer predicts y_t from E y_{t-1}, h_t and z_t (eq. 7). Drawn for a phone's width (4.89
    inches, 13-point text, 12 CSS px on a phone), top to bottom. Returns the Figure."""
    check_int(n_regions, "n_regions", 1)
    check_int(d_feature, "d_feature", 1)
    side = math.isqrt(n_regions)
    if side * side != n_regions or side > 5:
        raise ValueError(f"n_regions: expected a square grid of at most 5 x 5, got {n_regions}")
    alt = (
        f"Top left, the image goes through the CNN, which cuts it into a {side} by {side} grid of "
        "regions; learned row and column embeddings are added to them (each region gets the "
        f"embedding of its row and of its column), giving a_1 to a_{n_regions}, each a vector of "
        f"{d_feature} numbers, framed together: "
        "the lines that leave the frame carry all of them. Top right, the previous LSTM state "
        "h_(t-1); it and every region meet in the scores e_(t,i); a softmax over the regions "
        "gives the weights alpha_(t,i); below, the context z_t, the weighted sum of the regions, "
        "enters the LSTM together with the embedding of the previous word E y_(t-1), bottom left. "
        "The new state h_t, the context z_t and E y_(t-1) together enter the deep output layer "
        "L_o at the bottom, which predicts the next word."
    )
    scale = 0.94  # laid out on 5.2 x 7.2 inches, drawn 4.89 wide: its text fits at the phone's rule
    font = _phone_font(5.2 * scale)
    fig, ax = _canvas(5.2, 7.2, alt, scale=scale)
    cell = 1.8 / side
    x0, top = 0.25, 4.85  # the grid's left and top edges
    for r in range(side):
        for c in range(side):
            i = r * side + c + 1
            _box(
                ax,
                x0 + cell * (c + 0.5),
                top - cell * (r + 0.5),
                f"$\\mathbf{{a}}_{{{i}}}$",
                "emb",
                cell - 0.08,
                cell - 0.08,
                font,
            )
    # one frame around the whole grid: the scores and the context read every region, and the
    # lines that leave the frame carry all of them
    m, right, bottom = 0.09, x0 + 1.8, top - 1.8
    ax.add_patch(
        mpatches.Rectangle(
            (x0 - m, bottom - m), 1.8 + 2 * m, 1.8 + 2 * m, fill=False, ec="0.35", lw=1.2, ls="--"
        )
    )
    # on two lines: at 13 points one line would be wider than the grid's column
    ax.text(x0 + 0.9, bottom - 0.5, f"{n_regions} regions,\n{d_feature} numbers each", **_t(font))
    x_cnn = x0 + 0.9
    _box(ax, x_cnn, 6.85, "image", "io", 1.4, 0.45, font)
    _arrow(ax, x_cnn, 6.62, x_cnn, 6.35)
    _box(ax, x_cnn, 6.1, "CNN", "ff", 1.4, 0.5, font)
    # the learned row and column embeddings, added to the CNN's cells: they tell the regions
    # apart by where they are
    y_pos = 5.4
    _arrow(ax, x_cnn, 5.85, x_cnn, y_pos + 0.2)
    _box(ax, x_cnn, y_pos, "$+$", "plain", 0.5, 0.4, font)
    _box(ax, 2.42, y_pos, "row, column\nembeddings", "emb", 1.5, 0.66, font)
    _arrow(ax, 2.42 - 0.75, y_pos, x_cnn + 0.25, y_pos)
    _arrow(ax, x_cnn, y_pos - 0.2, x_cnn, top + m)
    xr = 3.95  # the right-hand column: the decoder's step
    _box(ax, xr, 5.5, "$\\mathbf{h}_{t-1}$", "rnn", 1.0, 0.5, font)
    _arrow(ax, xr, 5.25, xr, 4.73)
    y_att = 4.2
    _arrow(ax, right + m, y_att, 2.95, y_att)
    _box(
        ax,
        xr,
        y_att,
        "scores $e_{t,i}$,\nsoftmax over $i$:\n$\\alpha_{t,i}$",
        "attn",
        2.0,
        1.05,
        font,
    )
    y_z = 2.85
    _arrow(ax, xr, y_att - 0.525, xr, y_z + 0.3)
    _box(ax, xr, y_z, "$\\mathbf{z}_t=\\sum_i\\alpha_{t,i}\\mathbf{a}_i$", "ctx", 2.1, 0.6, font)
    _line(ax, [right + m, 2.55, 2.55], [bottom + 0.2, bottom + 0.2, y_z])  # the regions
    _arrow(ax, 2.55, y_z, xr - 1.05, y_z)
    y_lstm = 1.6
    _arrow(ax, xr - 0.4, y_z - 0.3, xr - 0.4, y_lstm + 0.275)
    _box(ax, xr, y_lstm, "LSTM: $\\mathbf{h}_t$", "rnn", 1.6, 0.55, font)
    _line(ax, [xr + 0.5, 5.1, 5.1], [5.5, 5.5, y_lstm])  # h_{t-1}, the LSTM's previous state
    _arrow(ax, 5.1, y_lstm, xr + 0.8, y_lstm)
    y_out = 0.45
    _box(ax, x_cnn, y_out, "$\\mathbf{E}\\mathbf{y}_{t-1}$", "io", 1.2, 0.5, font)
    _arrow(ax, x_cnn + 0.6, y_out, xr - 1.05, y_out)  # into the output layer
    _line(ax, [2.55, 2.55], [y_out, y_lstm - 0.1])
    _arrow(ax, 2.55, y_lstm - 0.1, xr - 0.8, y_lstm - 0.1)  # into the LSTM
    _arrow(ax, xr, y_lstm - 0.275, xr, y_out + 0.25)
    _arrow(ax, xr + 0.9, y_z - 0.3, xr + 0.9, y_out + 0.25)  # z_t, past the LSTM
    _box(ax, xr, y_out, "$\\mathbf{L}_o$: next word $y_t$", "io", 2.1, 0.5, font)
    return fig


_HAN_BLOCK, _HAN_GAP = 1.85, 0.3  # a sentence's block and the gap above it, in inches of the layout


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def han_diagram(sentences):
    """Chapter 5's hierarchical attention network (Yang et al. 2016) on a document of
    ``sentences`` (each a list of words): a word GRU gives h_{i,t}, attention with the learned
    query u_w (their "context vector") pools each sentence into s_i, a sentence GRU gives h_i,
    attention with u_s reads every h_i and pools them into the document vector v, which a linear
    layer and a softmax classify. Each sentence's block is framed, with a gap to the next. Returns the
    Figure."""
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise TypeError(f"sentences: expected a list of sentences, got {type(sentences).__name__}")
    doc = [_words(s, "sentences", 5) for s in sentences]
    if not 1 <= len(doc) <= 3 or sum(map(len, doc)) > 10:
        raise ValueError(
            f"sentences: expected 1 to 3 sentences, at most 10 words in all, got {len(doc)} sentences"
        )
    n = len(doc)
    text = " / ".join(" ".join(words) for words in doc)
    alt = (
        f"A document of {n} sentence{'s' if n > 1 else ''}: {text}. One framed block per "
        "sentence, stacked with a gap between them: at its bottom every word feeds a box h_(i,t) "
        "of a bidirectional word GRU, and "
        "word attention with the learned query u_w pools the sentence into a vector s_i. On "
        f"the right, a bidirectional sentence GRU reads s_1 to s_{n} into h_i, and at the top "
        "sentence attention with u_s reads every h_i and pools them into the document vector v, "
        "which a linear layer and a softmax classify into the label."
    )
    # drawn for a phone's width: one block per sentence, stacked, the sentence level on the right;
    # laid out on 5.4 inches (room for the line on the right) and drawn 4.92 wide, its text at
    # the phone's rule for that width
    scale = 4.92 / 5.4
    font, block = _phone_font(5.4 * scale), _HAN_BLOCK + _HAN_GAP
    height = 1.25 + n * block
    fig, ax = _canvas(5.4, height, alt, scale=scale)
    x_s, x_h, y_top = 4.25, 4.88, height - 0.6
    x_lane = x_h + 0.4  # right of the h_i column: the line from h_2, h_3 up to sentence attention
    h_rows = []
    for i, words in enumerate(doc):
        y0 = height - 1.25 - (i + 1) * block + _HAN_GAP  # the block's bottom; sentence 1 on top
        xs = [0.45 + 0.77 * t for t in range(len(words))]
        for t, (xw, w) in enumerate(zip(xs, words)):
            _box(ax, xw, y0 + 0.3, w, "io", 0.74, 0.4, font)
            _arrow(ax, xw, y0 + 0.5, xw, y0 + 0.72)
            _box(ax, xw, y0 + 0.97, f"$\\mathbf{{h}}_{{{i + 1},{t + 1}}}$", "rnn", 0.6, 0.5, font)
            _arrow(ax, xw, y0 + 1.22, (xs[0] + xs[-1]) / 2, y0 + 1.38)
        for a, b in zip(xs, xs[1:]):
            _arrow(ax, a + 0.3, y0 + 1.07, b - 0.3, y0 + 1.07, mutation_scale=7)
            _arrow(ax, b - 0.3, y0 + 0.87, a + 0.3, y0 + 0.87, mutation_scale=7)
        y_att, centre = y0 + 1.6, (xs[0] + xs[-1]) / 2
        width = max(xs[-1] - xs[0] + 0.3, 2.5)
        centre = max(centre, 0.1 + width / 2)
        _box(ax, centre, y_att, "word attention, $\\mathbf{u}_w$", "attn", width, 0.42, font)
        _sentence_frame(ax, y0, max(centre + width / 2, xs[-1] + 0.37))  # 0.37: half a word box
        _arrow(ax, centre + width / 2, y_att, x_s - 0.25, y_att)
        _box(ax, x_s, y_att, f"$\\mathbf{{s}}_{{{i + 1}}}$", "ctx", 0.5, 0.45, font)
        _arrow(ax, x_s + 0.25, y_att, x_h - 0.25, y_att)
        _box(ax, x_h, y_att, f"$\\mathbf{{h}}_{{{i + 1}}}$", "rnn", 0.5, 0.45, font)
        h_rows.append(y_att)
    for a, b in zip(h_rows, h_rows[1:]):  # the sentence GRU, both ways
        _arrow(ax, x_h - 0.1, a - 0.225, x_h - 0.1, b + 0.225)
        _arrow(ax, x_h + 0.1, b + 0.225, x_h + 0.1, a - 0.225)
    # every h_i feeds sentence attention, as every h_{i,t} feeds word attention: h_1 from its
    # top, the ones below it along a line on the right of the column
    _arrow(ax, x_h, h_rows[0] + 0.225, x_h, y_top - 0.21)
    for y in h_rows[1:]:
        _line(ax, [x_h + 0.25, x_lane], [y, y], color="0.2")
    if n > 1:
        _arrow(ax, x_lane, h_rows[-1], x_lane, y_top - 0.21)
    _box(
        ax,
        3.83,
        y_top,
        "sentence attention ($\\mathbf{u}_s$) $\\to \\mathbf{v}$",
        "attn",
        3.06,
        0.42,
        font,
    )
    _arrow(ax, 2.3, y_top, 2.09, y_top)
    _box(ax, 1.07, y_top, "linear + softmax\n$\\to$ label", "io", 2.04, 0.62, font)
    return fig


def _sentence_frame(ax, y0, right):
    """A dashed frame round one sentence's block (its words, word GRU and word attention), whose
    bottom is at ``y0``: the words of one sentence feed only the attention in their own frame."""
    left, bottom, top, margin = 0.02, y0 + 0.03, y0 + _HAN_BLOCK, 0.05
    ax.add_patch(
        mpatches.Rectangle(
            (left, bottom), right + margin - left, top - bottom, fill=False, ec="0.45", ls="--"
        )
    )


_NEW = "#fdae6b"  # kv_cache_diagram: computed at this step
_CACHED = "#d9d9d9"  # ... read from the cache


def kv_cache_diagram(tokens, *, narrow=True):
    """Chapter 13's key/value cache at one generation step, the newest of ``tokens`` the token being
    read (at index len(tokens) - 1; P, the tokens cached, is that index with the cache and 0 without
    one, as the chapter defines it): on top, without a cache, the step recomputes every key
    and value and the whole causal T x T score matrix; below, with the cache, the keys and values of
    positions 0 .. P-1 are read back, and only the new token's k, v and its one row of P + 1 scores
    are computed. Drawn for a phone's column (``narrow=True``, the only layout: 5.2 inches, its text
    at the phone's rule, 14 points). Returns the Figure."""
    words = _words(tokens, "tokens", 7)
    if not narrow:
        raise ValueError("narrow: kv_cache_diagram has only the narrow (phone) layout")
    T, P = len(words), len(words) - 1
    font, cell = _phone_font(5.2), 0.39
    alt = (
        f"Two panels, one above the other, for the step that reads the token {words[-1]!r} at "
        f"index {P}, after {', '.join(words[:-1]) or 'nothing'}. Top, without a cache (P = 0): a "
        f"{T} by {T} causal score matrix, every cell on and below the diagonal shaded as computed "
        "at this step, and the columns K and V of all positions shaded too: the whole sequence is "
        f"run again. Bottom, with the KV cache (P = {P} tokens cached): only the last row of the score matrix, the new "
        f"token's query against the {T} keys, is computed; the rows above it are empty, and K and V "
        f"hold {P} grey rows read from the cache and one new shaded row, which the cache keeps for "
        "the next step."
    )
    panel = 0.75 + T * cell + 0.3
    height = 2 * panel + 1.15  # the legend's two lines at the bottom
    fig, ax = _canvas(5.2, height, alt)
    x0 = 5.2 - 1.45 - T * cell - 0.15  # the grid's left edge: the token labels on its left
    x_k, x_v = 5.2 - 1.05, 5.2 - 0.45
    for p, cached in enumerate((False, True)):
        top = height - p * panel - 0.2
        # P counts the cached tokens, 0 without a cache: the step is named by the new token
        cache = f"with the KV cache (P = {P})" if cached else "without a cache (P = 0)"
        ax.text(0.1, top - 0.15, f"{cache}: step {T}", fontsize=font, va="center", weight="bold")
        y_grid = top - 0.75  # top edge of the first row
        for j in range(T):  # key positions above the columns
            ax.text(x0 + (j + 0.5) * cell, y_grid + 0.17, str(j), **_t(font))
        ax.text(x_k + cell / 2, y_grid + 0.17, "K", **_t(font))
        ax.text(x_v + cell / 2, y_grid + 0.17, "V", **_t(font))
        for i, w in enumerate(words):
            y = y_grid - (i + 1) * cell
            ax.text(x0 - 0.12, y + cell / 2, w, fontsize=font, ha="right", va="center")
            for j in range(T):
                allowed, this_step = j <= i, (not cached) or i == P
                fc = _NEW if allowed and this_step else "white"
                ls = "-" if allowed and this_step else ":"
                ax.add_patch(
                    mpatches.Rectangle((x0 + j * cell, y), cell, cell, fc=fc, ec="0.4", ls=ls)
                )
            for x in (x_k, x_v):
                fc = _CACHED if cached and i < P else _NEW
                ax.add_patch(mpatches.Rectangle((x, y), cell, cell, fc=fc, ec="0.3"))
        if cached:
            y = y_grid - T * cell
            ax.text(x0 + T * cell / 2, y - 0.18, "one query row: the new token", **_t(font))
    # the legend, at the bottom, one line each: side by side they would not fit the width
    for k, (fc, label) in enumerate(
        ((_NEW, "computed at this step"), (_CACHED, "read from the cache"))
    ):
        y = 0.7 - 0.4 * k
        ax.add_patch(mpatches.Rectangle((0.15, y - 0.15), 0.3, 0.3, fc=fc, ec="0.3"))
        ax.text(0.55, y, label, fontsize=font, va="center")
    return fig


# beam_search_diagram's tree, an illustration (no model computed it): (step, parent, word, total log p,
# fate), a beam of k = 2. Step 1 keeps the two best of <bos>'s extensions; step 2 the two best of
# all four; at step 3 one of the two kept ends with <eos> and is set aside, finished. Greedy decoding
# takes un, the best first word, and writes un chat dort (-2.6); the beam keeps le too, and le chat
# dort (-1.5) is more probable. Made up but possible: the continuations of each box have
# probabilities that add up to at most 1. The step-3 boxes are listed left to right, so no lines cross
_BEAM_TREE = (
    (1, None, "un", -0.5, "kept"),
    (1, None, "le", -1.0, "kept"),
    (1, None, "la", -4.0, "dropped"),
    (2, 0, "chat", -2.0, "kept"),
    (2, 0, "chien", -2.3, "dropped"),
    (2, 1, "chat", -1.1, "kept"),
    (3, 3, "dort", -2.6, "dropped"),
    (3, 5, "dort", -1.5, "kept"),
    (3, 5, "<eos>", -2.3, "finished"),
)
_BEAM_KINDS = {"kept": "rnn", "dropped": "plain", "finished": "emb"}


def beam_search_diagram(*, narrow=False):
    """Chapter 4's beam search, a beam of k = 2 over three steps, as a tree (an illustration, not
    a model's output): each box is a partial translation's new word and its total log-probability;
    at each step the best extensions are kept (blue), as many as the beam has places left, the
    others dropped (white, dashed), and one that ends with <eos> is set aside as finished (green),
    which leaves one place at the next step. ``narrow``: drawn for a phone's width (4.89 inches,
    13-point text, 12 CSS px on a phone). Returns the Figure."""
    check_bool(narrow, "narrow")
    alt = (
        "A beam search with a beam of k = 2, drawn as a tree from <bos> at the top, three steps "
        "down; each box holds a new word and the total log-probability of the partial translation "
        "it ends. Step 1: un (-0.5) and le (-1.0) are kept, la (-4.0) is dropped. Step 2: of their "
        "extensions, un chat (-2.0) and le chat (-1.1) are kept, un chien (-2.3) is dropped. Step "
        "3: un chat dort (-2.6) is dropped; le chat dort (-1.5) is kept and le chat <eos> (-2.3) "
        "is kept too but finished, set aside. Greedy decoding, which takes un at step 1, would be "
        "at un chat dort (-2.6), less probable. At step 4 the beam has one place left, for the best "
        "extension of le chat dort; the most probable finished translation wins."
    )
    width, height = (5.2, 6.6) if narrow else (8.0, 5.4)
    scale = 0.94 if narrow else 1.0  # drawn 4.89 inches wide: its text fits at the phone's rule
    font = _phone_font(width * scale) if narrow else _FONT
    fig, ax = _canvas(width, height, alt, scale=scale)
    sx = 1.0 if narrow else 8.0 / 5.2 * 0.9  # the wide drawing spreads the columns
    x0 = 0.0 if narrow else 0.3
    xs = [x0 + sx * x for x in (1.65, 2.95, 4.25)]
    rows = [5.5, 4.55, 3.55, 2.55] if narrow else [4.25, 3.45, 2.65, 1.85]
    w, h = (1.1, 0.6) if narrow else (1.0, 0.5)
    top = height - 0.1
    ax.text(
        0.1,
        top,
        "a beam of $k$ = 2; in each box: the new word\nand the total $\\log p$ "
        "of the translation so far",
        fontsize=font,
        va="top",
    )
    _box(ax, xs[1], rows[0], "<bos>", "io", w=w, h=h * 0.7, fontsize=font)
    centres = []
    column = {1: 0, 2: 0, 3: 0}
    for step, parent, word, log_p, fate in _BEAM_TREE:
        x, y = xs[column[step]], rows[step]
        column[step] += 1
        px, py = (xs[1], rows[0]) if parent is None else centres[parent]
        top_of_child = y + h / 2
        dropped = fate == "dropped"
        _line(
            ax,
            [px, x],
            [py - (h * 0.35 if parent is None else h / 2), top_of_child],
            color="0.6" if dropped else "0.25",
            ls="--" if dropped else "-",
        )
        text = f"{word}\n{log_p:.1f}".replace("-", "\u2212")
        _box(
            ax,
            x,
            y,
            text,
            _BEAM_KINDS[fate],
            w=w,
            h=h,
            fontsize=font,
            color="0.45" if dropped else "black",
        )
        centres.append((x, y))
    for step in (1, 2, 3):
        ax.text(0.1, rows[step], f"step {step}", fontsize=font, va="center")
    note_y = rows[3] - (0.5 if narrow else 0.45)
    ax.text(
        0.1,
        note_y,
        "step 4: one place left, for the best extension\nof le chat dort; "
        "then the most probable finished\ntranslation wins"
        if narrow
        else "step 4: one place left, for the best extension of le chat dort; then the most "
        "probable finished translation wins",
        fontsize=font,
        va="top",
    )
    legend = [
        ("kept in the beam", "kept"),
        ("dropped for good", "dropped"),
        ("finished: ends with <eos>", "finished"),
    ]
    for i, (label, fate) in enumerate(legend):
        lx, ly = (0.3, 0.95 - 0.32 * i) if narrow else (0.4 + 2.5 * i, 0.35)
        _box(ax, lx, ly, "", _BEAM_KINDS[fate], w=0.3, h=0.22)
        ax.text(lx + 0.25, ly, label, fontsize=font, va="center")
    return fig


def gru_cell_diagram():
    """Chapter 1's GRU cell, in the equations of PyTorch's ``nn.GRU`` (Cho et al. 2014, with the reset
    gate applied after W_hn): x_j and h_{j-1} feed the reset gate r_j and the update gate z_j
    (sigmoids); the candidate n_j (tanh) reads x_j and, through r_j, h_{j-1}; the new state
    h_j = (1 - z_j) * n_j + z_j * h_{j-1}. Biases are left out. Drawn for a phone's column (5.2
    inches, 16-point text). Returns the Figure."""
    alt = (
        "A GRU cell, read from top to bottom. Its two inputs, the word's vector x_j and the previous "
        "state h_(j-1), each feed the reset gate r_j and the update gate z_j, two sigmoid boxes side "
        "by side. The candidate n_j, a tanh box below them, reads x_j, h_(j-1) and r_j, which "
        "scales how much of h_(j-1) it uses. A last box mixes them, h_j = (1 - z_j) * n_j + z_j * "
        "h_(j-1), reading n_j, z_j and h_(j-1), whose line runs down the right edge; it gives the "
        "new state h_j, at the bottom."
    )
    # larger than _phone_font(5.2): shown 313 px wide on a 360 px phone, the subscripts (r_j, h_{j-1})
    # were a few pixels high at 13 points (review ch01_s30 pt 7); every label still fits its box
    font = 16
    fig, ax = _canvas(5.2, 5.3, alt)
    y_in, y_x, y_h, y_gate, y_n, y_mix, y_out = 4.95, 4.45, 4.05, 3.25, 2.2, 1.2, 0.35
    x_r, x_z, x_n, x_mix, x_right = 1.3, 4.0, 1.75, 2.45, 5.08
    x_xdrop, x_hdrop = 2.45, 2.85  # between the two gates, down to the candidate
    _box(ax, 0.75, y_in, "$\\mathbf{x}_j$", "emb", w=0.8, h=0.5, fontsize=font)
    _box(ax, 3.95, y_in, "$\\mathbf{h}_{j-1}$", "rnn", w=1.1, h=0.5, fontsize=font)
    # two buses: x_j's (grey) and h_{j-1}'s (dark), each dropping into what reads it
    _line(ax, [0.75, 0.75, x_z - 0.25], [y_in - 0.25, y_x, y_x], color="0.45")
    _line(ax, [3.95, 3.95, x_r + 0.25], [y_in - 0.25, y_h, y_h], color="0.1")
    _line(ax, [3.95, 3.95, x_right, x_right], [y_in - 0.25, y_h, y_h, y_mix], color="0.1")
    gate_top = y_gate + 0.35
    for x in (x_r, x_z):
        _arrow(ax, x - 0.25, y_x, x - 0.25, gate_top, color="0.45")
        _arrow(ax, x + 0.25, y_h, x + 0.25, gate_top, color="0.1")
    n_top = y_n + 0.3
    _arrow(ax, x_xdrop, y_x, x_xdrop, n_top, color="0.45")
    _arrow(ax, x_hdrop, y_h, x_hdrop, n_top, color="0.1")
    # a grey drop passes under the dark bus through a gap (a bridge), and a join has a dot, so that a
    # crossing does not read as a join (a reader's report on Fig. 1.2)
    for x in (x_xdrop, x_z - 0.25):
        _line(ax, [x, x], [y_h - 0.08, y_h + 0.08], color="white", lw=5, zorder=2.5)
        _line(ax, [x - 0.1, x + 0.1], [y_h, y_h], color="0.1", zorder=3)
    for x, y, color in [(x_r - 0.25, y_x, "0.45"), (x_xdrop, y_x, "0.45")] + [
        (x, y_h, "0.1") for x in (x_hdrop, 3.95, x_z + 0.25)
    ]:
        ax.plot([x], [y], "o", color=color, ms=4, zorder=3)
    _box(
        ax,
        x_r,
        y_gate,
        "reset gate $\\mathbf{r}_j$\n$\\sigma$",
        "attn",
        w=1.9,
        h=0.7,
        fontsize=font,
    )
    _box(
        ax,
        x_z,
        y_gate,
        "update gate $\\mathbf{z}_j$\n$\\sigma$",
        "attn",
        w=1.9,
        h=0.7,
        fontsize=font,
    )
    _arrow(ax, x_r, y_gate - 0.35, x_r, n_top)  # r_j scales h_{j-1} inside the candidate
    _box(ax, x_n, y_n, "candidate $\\mathbf{n}_j$\n$\\tanh$", "ff", w=2.5, h=0.6, fontsize=font)
    mix = (
        "$\\mathbf{h}_j=(1-\\mathbf{z}_j)\\odot\\mathbf{n}_j+\\mathbf{z}_j\\odot\\mathbf{h}_{j-1}$"
    )
    _box(ax, x_mix, y_mix, mix, "plain", w=4.4, h=0.5, fontsize=font)
    mix_top, mix_right = y_mix + 0.25, x_mix + 2.2
    _arrow(ax, x_n, y_n - 0.3, x_n, mix_top)
    _arrow(ax, x_z, y_gate - 0.35, x_z, mix_top)
    _arrow(ax, x_right, y_mix, mix_right, y_mix, color="0.1")
    _box(ax, x_mix, y_out, "$\\mathbf{h}_j$", "rnn", w=0.8, h=0.45, fontsize=font)
    _arrow(ax, x_mix, y_mix - 0.25, x_mix, y_out + 0.225)
    return fig


# tokenizer_pipeline_diagram: its tokens in a monospace font (a character 0.6 of the size wide), at
# 13 points (0.108 inch a character), so that a box's width follows from its label; a row of tokens
# too long for a phone's column goes on to a second line (ten pieces with their ids take two); the
# steps' text at 12. At 11 points on one line the pieces read at 9.6 CSS px on a 360 px phone
# (review ch10_s22)
# tokenizer_pipeline_diagram's canvas, inches wide, and its text at the phone's rule for it (13)
_PIPE_WIDTH = 4.9
_PIPE_FONT = _phone_font(_PIPE_WIDTH)
_PIPE_CHAR = 0.6 * _PIPE_FONT / 72
_PIPE_LINE = 0.5  # from one line of boxes to the next, inches (a box is 0.4 high)


def _line_starts(widths, room, gap=0.04):
    """Where the lines of a row of boxes ``widths`` wide begin (indices): one line if the row fits
    in ``room`` inches, else two of about equal length; None if two lines are not enough."""

    def span(a, b):
        return sum(widths[a:b]) + gap * (b - a - 1)

    n = len(widths)
    if span(0, n) <= room:
        return [0]
    if n == 1:
        return None
    k = min(range(1, n), key=lambda k: max(span(0, k), span(k, n)))
    return [0, k] if max(span(0, k), span(k, n)) <= room else None


def _token_row(ax, x0, y, labels, widths, kind, starts):
    """One box per label, each ``widths[i]`` wide, left to right from ``x0``; a new line, lower by
    ``_PIPE_LINE``, at each index of ``starts``, the line before it ending on "…" (the row goes on
    below: reader s36, M1)."""
    x = x0
    for i, (label, w) in enumerate(zip(labels, widths)):
        if i in starts:
            if i:
                ax.text(x, y, "…", fontsize=_PIPE_FONT, va="center", ha="left")
            x, y = x0, y if i == 0 else y - _PIPE_LINE
        _box(ax, x + w / 2, y, label, kind, w=w, h=0.4, fontsize=_PIPE_FONT, family="monospace")
        x += w + 0.04


def tokenizer_pipeline_diagram(text, normalized, words, pieces, ids, decoded):
    """Chapter 10's tokenizer pipeline, as BERT's WordPiece tokenizer runs it, on one text and what
    each step made of it (the chapter computes them with the library; nothing is computed here):
    ``text`` -> normalise -> ``normalized`` -> pre-tokenise -> ``words`` -> the model (WordPiece's
    longest match; BPE would apply its merges) -> ``pieces`` -> the vocabulary -> ``ids``, each in
    its piece's column; and back, decode -> ``decoded``. Drawn for a phone's column (4.9 inches,
    13-point text, 12 CSS px on a phone): a row of words, or of pieces over their ids, too long for one
    line takes two of about equal length, the first ending on "…".
    Returns the Figure."""
    for name, value in (("text", text), ("normalized", normalized), ("decoded", decoded)):
        check_type(value, name, str)
    words, pieces = _words(words, "words", 12), _words(pieces, "pieces", 12)
    if isinstance(ids, str) or not isinstance(ids, Sequence) or len(ids) != len(pieces):
        raise ValueError(f"ids: expected one id per piece ({len(pieces)}), got {ids!r}")
    width, x0 = _PIPE_WIDTH, 0.1
    strings = [f"{i}" for i in ids]
    columns = [max(len(p), len(s)) * _PIPE_CHAR + 0.06 for p, s in zip(pieces, strings)]
    word_widths = [len(w) * _PIPE_CHAR + 0.06 for w in words]
    # room for a line's boxes and the "…" after a line that goes on below
    room = width - 2 * x0 - _PIPE_CHAR
    word_starts, piece_starts = (_line_starts(w, room) for w in (word_widths, columns))
    for name, starts in (("words", word_starts), ("pieces", piece_starts)):
        if starts is None:
            raise ValueError(f"{name}: too long to draw on two lines of {width} inches")
    for name, string in (("text", text), ("normalized", normalized), ("decoded", decoded)):
        if len(string) * _PIPE_CHAR + 0.2 > width - 2 * x0:
            raise ValueError(f"{name}: too long to draw on one line of {width} inches")
    alt = (
        f"BERT's tokenizer as a pipeline, read from top to bottom, on the text {text!r}. "
        f"Normalise (lower-case, strip accents): {normalized!r}. Pre-tokenise (split at spaces "
        f"and punctuation): {len(words)} words, {' | '.join(words)}. The model, WordPiece's "
        f"longest match (BPE would apply its merges): {len(pieces)} pieces, {' | '.join(pieces)}. "
        f"The vocabulary gives each piece its id: {' '.join(strings)}. Back, decode: the pieces of "
        f"the ids joined, each ## piece glued to the one before: {decoded!r}."
    )
    # lines per row: text, normalized, words, pieces, ids, decoded
    lines = [1, 1, len(word_starts), len(piece_starts), len(piece_starts), 1]
    height = 0.3 + len(lines) * 0.45 + (len(lines) - 1) * 0.55 + (sum(lines) - 6) * _PIPE_LINE
    fig, ax = _canvas(width, height, alt)
    ys, y = [], height - 0.35  # the centre of each row's first line
    for n in lines:
        ys.append(y)
        y -= 1.0 + (n - 1) * _PIPE_LINE
    steps = [
        "normalise: lower-case, strip accents",
        "pre-tokenise: split at spaces and punctuation",
        "model: WordPiece's longest match\n(BPE: its merges)",
        "vocabulary: each piece's id",
        "decode: ids to pieces, ## glued on",
    ]
    for k, string in ((0, text), (1, normalized), (5, decoded)):
        w = len(string) * _PIPE_CHAR + 0.2
        _box(
            ax, x0 + w / 2, ys[k], string, "io", w=w, h=0.4, fontsize=_PIPE_FONT, family="monospace"
        )
    _token_row(ax, x0, ys[2], words, word_widths, "plain", word_starts)
    _token_row(ax, x0, ys[3], pieces, columns, "emb", piece_starts)
    _token_row(ax, x0, ys[4], strings, columns, "norm", piece_starts)
    for k, step in enumerate(steps):
        top = ys[k] - 0.2 - (lines[k] - 1) * _PIPE_LINE
        bottom = ys[k + 1] + 0.2
        _arrow(ax, 0.3, top, 0.3, bottom)
        ax.text(0.45, (top + bottom) / 2, step, fontsize=_PIPE_FONT, va="center", style="italic")
    return fig
