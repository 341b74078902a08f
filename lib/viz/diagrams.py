"""Architecture drawings (issue 37): each ``*_diagram`` draws one architecture a chapter teaches, as
boxes and arrows in the style of :func:`lib.viz.transformer_diagram`, with the chapter's symbols and
the sizes of the library's configs.

Each returns a new matplotlib Figure whose ``alt_text`` attribute describes it in words (the text the
chapter's figure metadata carries, so that a test can hold the two together). Coordinates are
inches: the Axes fills the Figure and one data unit is one inch, so a box's width reads as the room
its label needs. Nothing here computes what a model does.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt

from lib._validate import check_int, check_type

__all__ = [
    "seq2seq_diagram",
    "self_attention_diagram",
    "multi_head_diagram",
    "bahdanau_diagram",
    "luong_diagram",
    "gpt_diagram",
    "bert_input_diagram",
    "elmo_diagram",
    "electra_diagram",
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
_FONT = 9.5  # points: the smallest text of the new diagrams
_CTX = "#cb181d"  # the lines that carry a context vector


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


def _canvas(width, height, alt):
    """A Figure of ``width`` x ``height`` inches whose one Axes has inches as data units."""
    fig = plt.figure(figsize=(width, height), layout="none")
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


def seq2seq_diagram(source, target, *, d_hidden=64, with_attention=False):
    """Chapter 1's encoder-decoder (Cho et al. 2014; with attention, Bahdanau et al. 2015): a
    bidirectional GRU reads ``source`` into states h_j; the plain decoder gets one summary c at every
    step (the bottleneck), the attentive one a context c_t per step. ``d_hidden``: the GRU's width in
    each direction. Returns the Figure."""
    src, tgt = _words(source, "source", 4), _words(target, "target", 4)
    check_int(d_hidden, "d_hidden", 1)
    steps_in, steps_out = ["<bos>", *tgt], [*tgt, "<eos>"]
    kind = "with attention" if with_attention else "plain"
    alt = (
        f"The encoder-decoder, {kind}. Left: the source words {' '.join(src)} each feed a box "
        f"h_j of a bidirectional GRU, with arrows in both directions between neighbours. Right: "
        f"the decoder's states s_1 to s_{len(steps_in)}, each reading the previous target word "
        f"(<bos> first) and writing the next, {' '.join(steps_out)}. "
        + (
            "A line from every encoder state meets in the box c_t = sum_j alpha_tj h_j, whose "
            "red line feeds each decoder step a context of its own."
            if with_attention
            else f"Only two encoder states, the last forward and the first backward, join into the "
            f"one summary c of {2 * d_hidden} numbers, whose red line feeds every decoder step the "
            "same vector: the bottleneck."
        )
    )
    fig, ax = _canvas(9.0, 4.6, alt)
    y_cell, y_in, y_out, y_top, y_bus = 2.35, 0.85, 3.9, 3.15, 1.55
    xe = [0.75 + 0.9 * j for j in range(len(src))]
    xd = [5.25 + 0.8 * t for t in range(len(steps_in))]
    w_cell, h_cell = 0.66, 0.55
    for j, (x, word) in enumerate(zip(xe, src)):
        _box(ax, x, y_in, word, "io", w=0.8, h=0.4, fontsize=_FONT)
        _arrow(ax, x, y_in + 0.2, x, y_cell - h_cell / 2)
        _box(ax, x, y_cell, f"$\\mathbf{{h}}_{j + 1}$", "rnn", w=w_cell, h=h_cell, fontsize=_FONT)
    for a, b in zip(xe, xe[1:]):  # the forward GRU reads right, the backward GRU left
        _arrow(ax, a + w_cell / 2, y_cell + 0.1, b - w_cell / 2, y_cell + 0.1)
        _arrow(ax, b - w_cell / 2, y_cell - 0.1, a + w_cell / 2, y_cell - 0.1)
    for t, x in enumerate(xd):
        _box(ax, x, y_in, steps_in[t], "io", w=0.72, h=0.4, fontsize=_FONT)
        _arrow(ax, x - 0.12, y_in + 0.2, x - 0.12, y_cell - h_cell / 2)
        _box(ax, x, y_cell, f"$\\mathbf{{s}}_{t + 1}$", "rnn", w=0.6, h=h_cell, fontsize=_FONT)
        _arrow(ax, x, y_cell + h_cell / 2, x, y_out - 0.2)
        _box(ax, x, y_out, steps_out[t], "plain", w=0.72, h=0.4, fontsize=_FONT)
        # the context enters every step, beside the previous word
        _arrow(ax, x + 0.14, y_bus, x + 0.14, y_cell - h_cell / 2, color=_CTX)
    for a, b in zip(xd, xd[1:]):
        _arrow(ax, a + 0.3, y_cell, b - 0.3, y_cell)
    x_gap = 4.55
    if with_attention:
        for j, x in enumerate(xe):  # every state reaches the context, weighted by alpha_tj
            _line(ax, [x, x], [y_cell + h_cell / 2, y_top])
            ax.text(x - 0.05, y_cell + 0.5, f"$\\alpha_{{t{j + 1}}}$", fontsize=_FONT, ha="right")
        _line(ax, [xe[0], 3.65], [y_top, y_top])
        _box(ax, 4.4, y_top, "$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$", "ctx", 1.5, 0.45, _FONT)
        note = "a new context $\\mathbf{c}_t$ at every step $t$"
    else:  # the last forward state and the first backward state make the summary
        _line(ax, [xe[0], xe[0], x_gap - 0.6], [y_cell + h_cell / 2, y_top, y_top])
        _line(ax, [xe[-1], xe[-1]], [y_cell + h_cell / 2, y_top])
        _box(
            ax, x_gap, y_top, f"$\\mathbf{{c}}$: {2 * d_hidden} numbers", "ctx", 1.2, 0.45, _FONT
        )
        ax.text(xe[0] + 0.05, y_top + 0.12, "$\\overleftarrow{\\mathbf{h}}_1$", **_t(_FONT))
        ax.text(xe[-1] + 0.3, y_top + 0.12, "$\\overrightarrow{\\mathbf{h}}_S$", **_t(_FONT))
        note = f"the same $\\mathbf{{c}}$ ({2 * d_hidden} numbers) at every step"
    # down the gap, then along under the decoder: the red bus
    _line(ax, [x_gap, x_gap, xd[-1] + 0.14], [y_top - 0.23, y_bus, y_bus], color=_CTX, lw=1.3)
    _arrow(ax, x_gap, y_cell, xd[0] - 0.3, y_cell, color=_CTX)
    ax.text(x_gap + 0.05, y_cell + 0.15, "$\\mathbf{s}_0$", fontsize=_FONT, ha="left")
    ax.text(xd[0] - 0.36, 0.3, f"red: {note}", color=_CTX, fontsize=_FONT, va="center")
    ax.text(
        (xe[0] + xe[-1]) / 2,
        4.4,
        f"encoder: bidirectional GRU, $\\mathbf{{h}}_j$ = {d_hidden} + {d_hidden} numbers",
        **_t(10),
    )
    ax.text((xd[0] + xd[-1]) / 2, 4.4, f"decoder: GRU, {kind}", **_t(10))
    return fig


def _shape_box(ax, x, y, symbol, shape, numbers, kind, w=1.1):
    """A box of three lines: the symbol, its symbolic shape and the shape in numbers."""
    _box(ax, x, y, f"{symbol}\n{shape}\n{numbers}", kind, w=w, h=0.85, fontsize=_FONT)


def self_attention_diagram(seq_len, d_model, d_k, d_v):
    """Chapter 6's self-attention on one sequence, Z = softmax(Q K^T / sqrt(d_k)) V with Q = X W_Q,
    K = X W_K, V = X W_V, every matrix with its shape in symbols and in numbers (``seq_len`` = T
    tokens). Returns the Figure."""
    for name, value in [("seq_len", seq_len), ("d_model", d_model), ("d_k", d_k), ("d_v", d_v)]:
        check_int(value, name, 1)
    T = seq_len
    alt = (
        f"Self-attention as a flow of matrices. X [T, d_model] = [{T}, {d_model}] is multiplied by "
        f"W_Q, W_K [{d_model}, {d_k}] and W_V [{d_model}, {d_v}] to give Q and K [{T}, {d_k}] and "
        f"V [{T}, {d_v}]. Q and K give the scores S = Q K transposed / sqrt(d_k) [{T}, {T}], a "
        f"softmax along each row gives the weights A [{T}, {T}], and A times V gives the output "
        f"Z [{T}, {d_v}], one row per token."
    )
    fig, ax = _canvas(9.0, 4.4, alt)
    dm = "$[d_\\mathrm{model}, %s]$"
    _shape_box(ax, 0.6, 2.0, "$X$", "$[T, d_\\mathrm{model}]$", f"[{T}, {d_model}]", "emb", 1.05)
    rows = [
        ("Q", 3.35, d_k, "d_k", "$W_Q$"),
        ("K", 2.0, d_k, "d_k", "$W_K$"),
        ("V", 0.65, d_v, "d_v", "$W_V$"),
    ]
    for name, y, width, sym, weight in rows:
        _arrow(ax, 1.13, 2.0, 1.47, y)
        _shape_box(ax, 2.05, y, weight, dm % sym, f"[{d_model}, {width}]", "ff", 1.15)
        _arrow(ax, 2.63, y, 2.97, y)
        _shape_box(ax, 3.5, y, f"${name} = XW_{name}$", f"$[T, {sym}]$", f"[{T}, {width}]", "attn")
    _shape_box(
        ax, 5.15, 2.7, "$S = QK^\\top/\\sqrt{d_k}$", "$[T, T]$", f"[{T}, {T}]", "attn", 1.45
    )
    _arrow(ax, 4.05, 3.35, 4.42, 2.95)
    _arrow(ax, 4.05, 2.0, 4.42, 2.45)
    _shape_box(ax, 6.75, 2.7, "$A = \\mathrm{softmax}(S)$", "$[T, T]$", f"[{T}, {T}]", "attn", 1.5)
    _arrow(ax, 5.88, 2.7, 6.0, 2.7)
    ax.text(6.75, 3.4, "each row sums to 1", **_t())
    ax.text(5.15, 3.4, "query $i$ against key $j$", **_t())
    _shape_box(ax, 8.3, 1.45, "$Z = AV$", "$[T, d_v]$", f"[{T}, {d_v}]", "io", 1.1)
    _arrow(ax, 7.2, 2.27, 7.95, 1.88)
    _arrow(ax, 4.05, 0.65, 7.75, 1.3)
    ax.text(6.0, 0.62, "the values, mixed by the weights", **_t())
    ax.text(4.5, 4.2, f"one sequence of $T$ = {T} tokens: one row per token", **_t(10))
    return fig


def _head_colors(n):
    cmap = plt.get_cmap("cividis")
    return [cmap(0.1 + 0.85 * i / max(n - 1, 1)) for i in range(n)]


def multi_head_diagram(d_model, n_heads, seq_len):
    """Chapter 7's multi-head attention on one sequence of ``seq_len`` tokens: Q, K, V from one
    D x D matrix each, split into H = ``n_heads`` heads of width D/H, each head attending on its
    own, the heads concatenated and mixed by W^O. Up to 8 heads are drawn one box each; more are
    drawn as the first three, a "..." and the last. Returns the Figure."""
    check_int(d_model, "d_model", 1)
    check_int(n_heads, "n_heads", 1)
    check_int(seq_len, "seq_len", 1)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    D, H, T, Dh = d_model, n_heads, seq_len, d_model // n_heads
    shown = list(range(H)) if H <= 8 else [0, 1, 2, None, H - 1]
    alt = (
        f"Multi-head attention with D = {D} and H = {H} heads. X [T, D] = [{T}, {D}] is projected "
        f"to Q, K and V [{T}, {D}] by W^Q, W^K and W^V [{D}, {D}]; split_heads cuts each into "
        f"{H} heads of width D/H = {Dh}, drawn as a row of "
        + (f"{H} boxes" if H <= 8 else "boxes for heads 0, 1, 2, an ellipsis and the last")
        + f", each computing softmax(Q_h K_h transposed / sqrt(D/H)) V_h of shape [{T}, {Dh}]; "
        f"merge_heads puts them side by side again, [{T}, {D}], and W^O [{D}, {D}] mixes them "
        f"into the output [{T}, {D}]."
    )
    fig, ax = _canvas(9.0, 5.2, alt)
    y1, y2, y3 = 4.35, 2.6, 0.75
    _shape_box(ax, 0.7, y1, "$X$", "$[T, D]$", f"[{T}, {D}]", "emb", 1.0)
    _arrow(ax, 1.2, y1, 1.6, y1)
    _shape_box(ax, 2.6, y1, "$W^Q, W^K, W^V$", "$[D, D]$ each", f"[{D}, {D}]", "ff", 1.9)
    _arrow(ax, 3.55, y1, 3.95, y1)
    _shape_box(ax, 4.95, y1, "$Q$, $K$, $V$", "$[T, D]$ each", f"[{T}, {D}]", "attn", 1.9)
    _arrow(ax, 5.9, y1, 6.3, y1)
    _shape_box(ax, 7.55, y1, "split_heads", "$[H, T, D/H]$", f"[{H}, {T}, {Dh}]", "norm", 2.3)
    width = 8.6 / len(shown)
    xs = [0.2 + width * (i + 0.5) for i in range(len(shown))]
    colors = _head_colors(H)
    for x, h in zip(xs, shown):
        if h is None:
            ax.text(x, y2, "$\\cdots$", **_t(14))
            continue
        dark = sum(colors[h][:3]) < 1.5
        _box(
            ax, x, y2, f"head {h}\n$[T, D/H]$\n[{T}, {Dh}]", "plain", min(width - 0.15, 1.3), 0.85,
            _FONT, color="white" if dark else "black",
        )
        ax.patches[-1].set_facecolor(colors[h])
        _line(ax, [7.55, x], [y1 - 0.43, y2 + 0.43], color="0.55")
        _arrow(ax, x, y2 - 0.43, 4.0, y3 + 0.43, color="0.55")
    ax.text(
        0.15,
        y3,
        "each head $h$ attends on its own:\n$\\mathrm{softmax}(Q_hK_h^\\top/\\sqrt{D/H})\\,V_h$,\n"
        "its own weights $[T, T]$",
        fontsize=_FONT,
        va="center",
    )
    _shape_box(ax, 4.0, y3, "merge_heads: Concat", "$[T, D]$", f"[{T}, {D}]", "norm", 2.0)
    _arrow(ax, 5.0, y3, 5.5, y3)
    _shape_box(ax, 6.1, y3, "$W^O$", "$[D, D]$", f"[{D}, {D}]", "ff", 1.0)
    _arrow(ax, 6.6, y3, 7.1, y3)
    _shape_box(ax, 7.85, y3, "output", "$[T, D]$", f"[{T}, {D}]", "io", 1.3)
    return fig


def bahdanau_diagram(source):
    """Chapter 4's decoder step of Bahdanau et al. 2015: the previous state s_{t-1} scores every
    annotation h_j of the ``source`` words (e_tj), a softmax over j gives alpha_tj, the context
    c_t = sum_j alpha_tj h_j and the previous word y_{t-1} update the state to s_t, which predicts
    y_t. Returns the Figure."""
    src = _words(source, "source", 6)
    S = len(src)
    alt = (
        f"One decoder step of Bahdanau attention over the {S} source words {' '.join(src)}. Each "
        "word has an annotation h_j; the previous decoder state s_{t-1} runs along a line under the "
        "score boxes e_tj, one above each annotation; a softmax over all of them gives the weights "
        "alpha_tj, which combine the annotations into the context c_t; c_t, the previous word "
        "y_{t-1} and s_{t-1} enter the GRU that gives the new state s_t, which predicts y_t."
    )
    fig, ax = _canvas(9.0, 4.9, alt)
    xs = [0.65 + 0.95 * j for j in range(S)]
    y_word, y_h, y_bus, y_e, y_soft, y_a = 0.35, 1.15, 1.72, 2.2, 3.0, 3.8
    for j, (x, word) in enumerate(zip(xs, src)):
        _box(ax, x, y_word, word, "io", w=0.85, h=0.4, fontsize=_FONT)
        _arrow(ax, x, y_word + 0.2, x, y_h - 0.25)
        _box(ax, x, y_h, f"$\\mathbf{{h}}_{j + 1}$", "rnn", w=0.6, h=0.5, fontsize=_FONT)
        _arrow(ax, x - 0.12, y_h + 0.25, x - 0.12, y_e - 0.2)
        _arrow(ax, x + 0.14, y_bus, x + 0.14, y_e - 0.2, color=_CTX)
        _box(ax, x, y_e, f"$e_{{t{j + 1}}}$", "attn", w=0.6, h=0.4, fontsize=_FONT)
        _arrow(ax, x, y_e + 0.2, x, y_soft - 0.2)
        _arrow(ax, x, y_soft + 0.2, x, y_a - 0.2)
        _box(ax, x, y_a, f"$\\alpha_{{t{j + 1}}}$", "attn", w=0.6, h=0.4, fontsize=_FONT)
    _box(ax, (xs[0] + xs[-1]) / 2, y_soft, "softmax over $j$", "norm", xs[-1] - xs[0] + 0.7, 0.4,
         _FONT)
    x_gru, x_c = 7.75, 7.0
    # s_{t-1}: into every score and into the GRU
    _box(ax, x_gru, y_word, "$\\mathbf{s}_{t-1}$", "rnn", w=0.8, h=0.45, fontsize=_FONT)
    _line(ax, [x_gru - 0.4, xs[-1] + 0.6, xs[-1] + 0.6, xs[0] + 0.14],
          [y_word, y_word, y_bus, y_bus], color=_CTX, lw=1.2)
    ax.text(xs[-1] + 0.65, y_bus + 0.12,
            "$e_{tj}=\\mathbf{v}_a^\\top\\tanh(W_a\\mathbf{s}_{t-1}+U_a\\mathbf{h}_j)$",
            fontsize=_FONT, ha="left", va="bottom")
    _arrow(ax, x_gru, y_word + 0.22, x_gru, 2.5)
    _box(ax, x_gru + 0.9, y_h, "$y_{t-1}$", "io", w=0.6, h=0.4, fontsize=_FONT)
    _arrow(ax, x_gru + 0.9, y_h + 0.2, x_gru + 0.45, 2.5)
    for x in xs:
        _line(ax, [x, x], [y_a + 0.2, y_a + 0.4], color="0.35")
    _line(ax, [xs[0], x_c - 0.6], [y_a + 0.4, y_a + 0.4], color="0.35")
    _arrow(ax, x_c - 0.6, y_a + 0.4, x_c - 0.6, y_a + 0.25)
    _box(ax, x_c, y_a, "$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$", "ctx", 1.7, 0.5, _FONT)
    _arrow(ax, x_c + 0.3, y_a - 0.25, x_gru - 0.2, 3.1)
    _box(ax, x_gru, 2.8, "GRU: $\\mathbf{s}_t$", "rnn", w=1.3, h=0.6, fontsize=_FONT)
    _arrow(ax, x_gru + 0.45, 3.1, x_gru + 0.45, 4.35)
    _box(ax, x_gru + 0.45, 4.55, "softmax: $y_t$", "io", w=1.2, h=0.4, fontsize=_FONT)
    return fig
