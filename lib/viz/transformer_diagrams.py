"""The Transformer family's architectures: self-attention's matrices and exercise 1's
residual and second layer (chapter 6), the split and merge of heads (chapter 7), GPT-2's block and the decoder-only stack and GPT's post-LN block beside GPT-2's pre-LN one (chapter 13), BERT's
input sum and pretraining heads (chapter 14) ELECTRA's generator and discriminator (chapter
16), grouped-query attention's shared key/value heads, SwiGLU's two branches and the ordered steps of
the modern attention layer (chapter 17) and how all-MiniLM-L6-v2 was
made and turns a sentence into a vector (chapter 15), drawn with the helpers and conventions of :mod:`lib.viz.diagrams` (one data unit is one inch;
each Figure carries its ``alt_text``).
"""

from __future__ import annotations

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt

from lib._validate import check_bool, check_int, check_type, is_int, is_number
from lib.viz.diagrams import (
    _DIAGRAM_COLORS,
    _FONT,
    _arrow,
    _box,
    _canvas,
    _line,
    _phone_font,
    _t,
    _words,
)
from lib.viz.heatmap import SEQUENTIAL_CMAP

__all__ = [
    "self_attention_diagram",
    "residual_second_layer_diagram",
    "connectivity_diagram",
    "multi_head_diagram",
    "gpt_diagram",
    "gpt_blocks_diagram",
    "gpt_classifier_diagram",
    "bert_input_diagram",
    "bert_pretraining_diagram",
    "bert_layer_diagram",
    "electra_diagram",
    "gqa_diagram",
    "llama_diagram",
    "swiglu_diagram",
    "attention_layer_diagram",
    "minilm_diagram",
    "positional_diagram",
]


def _shape_box(ax, x, y, symbol, shape, numbers, kind, w=1.1):
    """A box of three lines: the symbol, its symbolic shape and the shape in numbers."""
    _box(ax, x, y, f"{symbol}\n{shape}\n{numbers}", kind, w=w, h=0.85, fontsize=_FONT)


def _product_label(ax, x, y, symbol, shape, numbers, font):
    """A weight matrix written on the arrow it multiplies along (its shape under it), on white so
    that the arrow passes behind it: a label of the arrow, not a box the data passes through."""
    bbox = dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none")
    ax.text(x, y, f"{symbol}\n{shape}\n{numbers}", bbox=bbox, zorder=3, **_t(font))


def self_attention_diagram(seq_len, d_model, d_k, d_v, *, narrow=False):
    """Chapter 6's self-attention on one sequence, Z = softmax(Q K^T / sqrt(d_k)) V with Q = X W_Q,
    K = X W_K, V = X W_V, every matrix with its shape in symbols and in numbers (``seq_len`` = T
    tokens). ``narrow``: drawn for a phone's column, 5.2 inches wide, its text at 12 CSS px there,
    flowing down the page instead of across. Returns the Figure."""
    for name, value in [("seq_len", seq_len), ("d_model", d_model), ("d_k", d_k), ("d_v", d_v)]:
        check_int(value, name, 1)
    check_bool(narrow, "narrow")
    T = seq_len
    alt = (
        f"Self-attention as a flow of matrices. X [T, d_model] = [{T}, {d_model}] is multiplied by "
        f"W_Q, W_K [{d_model}, {d_k}] and W_V [{d_model}, {d_v}] to give Q and K [{T}, {d_k}] and "
        f"V [{T}, {d_v}]. Q and K give the scores S = Q K transposed / sqrt(d_k) [{T}, {T}], a "
        f"softmax along each row gives the weights A [{T}, {T}], and A times V gives the output "
        f"Z [{T}, {d_v}], one row per token."
    )
    if narrow:
        return _self_attention_narrow(T, d_model, d_k, d_v, alt)
    fig, ax = _canvas(9.0, 4.4, alt)
    dm = "$[d_\\mathrm{model}, %s]$"
    _shape_box(ax, 0.6, 2.0, "$X$", "$[T, d_\\mathrm{model}]$", f"[{T}, {d_model}]", "emb", 1.05)
    rows = [
        ("Q", 3.35, d_k, "d_k", "$\\times W_Q$"),
        ("K", 2.0, d_k, "d_k", "$\\times W_K$"),
        ("V", 0.65, d_v, "d_v", "$\\times W_V$"),
    ]
    for name, y, width, sym, weight in rows:
        # X -> "x W_Q" -> Q: the weight labels the arrow, the data does not pass through it as a stage
        _line(ax, [1.13, 1.47], [2.0, y], color="0.2")
        _arrow(ax, 1.47, y, 2.97, y)
        _product_label(ax, 2.2, y, weight, dm % sym, f"[{d_model}, {width}]", _FONT)
        _shape_box(ax, 3.5, y, f"${name} = XW_{name}$", f"$[T, {sym}]$", f"[{T}, {width}]", "attn")
    _shape_box(ax, 5.15, 2.7, "$S = QK^\\top/\\sqrt{d_k}$", "$[T, T]$", f"[{T}, {T}]", "attn", 1.45)
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


def residual_second_layer_diagram(seq_len, d_model, d_2, *, narrow=False):
    """Chapter 6's exercise 1: the first self-attention step (W_Q, W_K, W_V fixed) gives Z, the
    residual connection adds X back, H = X + Z, and a second step reads H through the reader's own
    W_Q2, W_K2 [d_model, d_2]: A2 = softmax(H W_Q2 (H W_K2)^T / sqrt(d_2)). ``narrow``: drawn for a
    phone's column, 5.2 inches wide, its text at 12 CSS px there, flowing down the page. Returns
    the Figure."""
    for name, value in [("seq_len", seq_len), ("d_model", d_model), ("d_2", d_2)]:
        check_int(value, name, 1)
    check_bool(narrow, "narrow")
    T, n = seq_len, d_model
    alt = (
        f"Two self-attention steps with a residual connection. The sentence X [{T}, {n}] goes "
        f"through the first step (the fixed W_Q, W_K, W_V) to give Z [{T}, {n}]; a line carries X "
        f"around that step to a plus, which adds it back: H = X + Z [{T}, {n}]. The second step "
        f"reads H through your W_Q2 and W_K2 [{n}, {d_2}] and gives the weights "
        f"A2 = softmax(H W_Q2 (H W_K2) transposed / sqrt({d_2})) [{T}, {T}]: the row of 'it'."
    )
    formula = f"$A_2 = \\mathrm{{softmax}}(HW_{{Q2}}(HW_{{K2}})^\\top/\\sqrt{{{d_2}}})$"
    kinds = {"X": "emb", "first": "attn", "H": "io", "second": "ff"}
    if narrow:
        return _residual_second_layer_narrow(T, n, d_2, alt, formula, kinds)
    font, y, h, rise = _FONT, 1.45, 1.0, 2.5
    fig, ax = _canvas(9.0, 3.0, alt)
    xs = {"X": 0.9, "first": 3.05, "plus": 4.75, "H": 5.85, "second": 7.75}
    widths = {"X": 1.3, "first": 2.2, "H": 1.1, "second": 2.3}
    labels = {
        "X": f"$X$\n[{T}, {n}]",
        "first": "first step:\nself-attention, the\nfixed $W_Q$, $W_K$, $W_V$",
        "H": f"$H = X + Z$\n[{T}, {n}]",
        "second": f"second step:\nyour $W_{{Q2}}$, $W_{{K2}}$\n[{n}, {d_2}] each",
    }
    for key, label in labels.items():
        _box(ax, xs[key], y, label, kinds[key], w=widths[key], h=h, fontsize=font)
    _circle_plus(ax, xs["plus"], y, font)
    ends = [("X", "first"), ("first", "plus"), ("plus", "H"), ("H", "second")]
    for a, b in ends:
        x0 = xs[a] + (0.22 if a == "plus" else widths[a] / 2)
        _arrow(ax, x0, y, xs[b] - (0.22 if b == "plus" else widths[b] / 2), y)
    ax.text((xs["first"] + 1.1 + xs["plus"] - 0.22) / 2, y + 0.17, "$Z$", **_t(font))
    _line(ax, [xs["X"], xs["X"], xs["plus"]], [y + h / 2, rise, rise])
    _arrow(ax, xs["plus"], rise, xs["plus"], y + 0.22)
    ax.text(
        (xs["X"] + xs["plus"]) / 2, rise + 0.2, "residual connection: $X$ added back", **_t(font)
    )
    _arrow(ax, xs["second"], y - h / 2, xs["second"], 0.62)
    ax.text(xs["second"] - 0.3, 0.3, f"{formula}\n[{T}, {T}]: the row of 'it'", **_t(font))
    return fig


def _residual_second_layer_narrow(T, n, d_2, alt, formula, kinds):
    """The same steps flowing down a 5.2-inch canvas, the residual's line down the right edge."""
    font, x, h, side = _phone_font(5.2), 2.3, 0.85, 4.8
    fig, ax = _canvas(5.2, 7.3, alt)
    ys = {"X": 6.6, "first": 5.15, "plus": 4.0, "H": 3.0, "second": 1.55}
    widths = {"X": 2.9, "first": 4.2, "H": 2.0, "second": 4.5}
    labels = {
        "X": f"$X$\n$[T, d_\\mathrm{{model}}]$ = [{T}, {n}]",
        "first": "first step: self-attention\nwith the fixed $W_Q$, $W_K$, $W_V$",
        "H": f"$H = X + Z$\n[{T}, {n}]",
        "second": f"second step: your $W_{{Q2}}$, $W_{{K2}}$ [{n}, {d_2}]\n{formula}",
    }
    for key, label in labels.items():
        _box(ax, x, ys[key], label, kinds[key], w=widths[key], h=h, fontsize=font)
    _circle_plus(ax, x, ys["plus"], font)
    _arrow(ax, x, ys["X"] - h / 2, x, ys["first"] + h / 2)
    _arrow(ax, x, ys["first"] - h / 2, x, ys["plus"] + 0.22)
    ax.text(x + 0.1, (ys["first"] - h / 2 + ys["plus"]) / 2 + 0.05, "$Z$", fontsize=font,
            va="center")  # fmt: skip
    _arrow(ax, x, ys["plus"] - 0.22, x, ys["H"] + h / 2)
    _arrow(ax, x, ys["H"] - h / 2, x, ys["second"] + h / 2)
    _arrow(ax, x, ys["second"] - h / 2, x, 0.55)
    ax.text(x, 0.35, f"$A_2$ [{T}, {T}]: the row of 'it'", **_t(font))
    _line(ax, [x + widths["X"] / 2, side, side], [ys["X"], ys["X"], ys["plus"]])
    _arrow(ax, side, ys["plus"], x + 0.22, ys["plus"])
    ax.text(side + 0.06, (ys["X"] + ys["plus"]) / 2, "residual: $X$ added back", rotation=90,
            fontsize=font, ha="left", va="center")  # fmt: skip
    return fig


def _circle_plus(ax, x, y, font):
    """The residual's sum: a circle with a plus, 0.44 inches across, centred at (x, y)."""
    ax.add_patch(mpatches.Circle((x, y), 0.22, fc="white", ec="0.25", lw=1))
    ax.text(x, y, "+", **_t(font + 2))


def connectivity_diagram(n_tokens=6):
    """Chapter 6's "one step between any two positions": the same ``n_tokens`` positions twice.
    Top, a recurrent network: each position hands its state to the next, so position 0 reaches the
    last one in n_tokens - 1 steps (the path in orange). Bottom, self-attention: an arc joins every
    pair of positions (no mask), so any two are one step apart (the arc from the first to the last
    in blue). Drawn for a phone's column: 5 inches wide, its text at 12 CSS px there. Returns the
    Figure."""
    check_int(n_tokens, "n_tokens", 2)
    if n_tokens > 8:
        raise ValueError(f"n_tokens: expected 2 to 8 positions (each needs room), got {n_tokens}")
    n, last = n_tokens, n_tokens - 1
    pairs = n * (n - 1) // 2
    alt = (
        f"Two rows of the same {n} positions, 0 to {last}. Top, a recurrent network: an arrow "
        f"from each position to the next only, so what position 0 holds reaches position {last} "
        f"after {last} hand-overs, the path drawn in orange. Bottom, self-attention: an arc joins "
        f"every pair of positions ({pairs} arcs), and the arc from position 0 to position {last}, "
        "drawn in blue, is one step."
    )
    font, r = _phone_font(5.0), 0.2  # r: a position's radius, inches
    fig, ax = _canvas(5.0, 3.5, alt)
    xs = [0.45 + k * 4.1 / last for k in range(n)]
    rnn, attn = "C1", "C0"

    def positions(y):
        for k, x in enumerate(xs):
            ax.add_patch(mpatches.Circle((x, y), r, fc=_DIAGRAM_COLORS["io"], ec="0.25", lw=1))
            ax.text(x, y, str(k), **_t(font))

    y_rnn, y_att = 2.6, 0.35
    ax.text(2.5, 3.2, f"recurrent network: 0 to {last} in {last} steps", **_t(font))
    positions(y_rnn)
    for x0, x1 in zip(xs, xs[1:]):
        _arrow(ax, x0 + r, y_rnn, x1 - r, y_rnn, color=rnn, lw=2, mutation_scale=14)
    ax.text(2.5, 1.85, f"self-attention: 0 to {last} in 1 step", **_t(font))
    positions(y_att)
    for i in range(n):
        for j in range(i + 1, n):
            far = (i, j) == (0, last)
            ax.add_patch(
                mpatches.FancyArrowPatch(
                    (xs[i], y_att + r),
                    (xs[j], y_att + r),
                    arrowstyle="-",
                    connectionstyle="arc3,rad=-0.4",
                    color=attn if far else "0.6",
                    lw=2.5 if far else 1,
                    shrinkA=0,
                    shrinkB=0,
                    zorder=3 if far else 2,
                )
            )
    return fig


def _self_attention_narrow(T, d_model, d_k, d_v, alt):
    """The same boxes, arrows and words as the wide drawing, flowing down a 5.2-inch canvas: X on
    top, the three projections side by side below it, Q, K, V under them, then S, A and Z."""
    font, h = _phone_font(5.2), 0.95
    fig, ax = _canvas(5.2, 7.9, alt)

    def box(x, y, symbol, shape, numbers, kind, w):
        _box(ax, x, y, f"{symbol}\n{shape}\n{numbers}", kind, w=w, h=h, fontsize=font)

    ax.text(2.6, 7.6, f"one sequence of $T$ = {T} tokens:\none row per token", **_t(font))
    box(2.6, 6.65, "$X$", "$[T, d_\\mathrm{model}]$", f"[{T}, {d_model}]", "emb", 1.5)
    dm = "$[d_\\mathrm{model}, %s]$"
    xs = {"Q": 0.85, "K": 2.6, "V": 4.35}
    for name, width, sym in [("Q", d_k, "d_k"), ("K", d_k, "d_k"), ("V", d_v, "d_v")]:
        x = xs[name]
        # X -> "x W_Q" -> Q: the weight labels the arrow, the data does not pass through it as a stage
        _line(ax, [2.6 + (x - 2.6) * 0.3, x], [6.17, 5.75], color="0.2")
        _arrow(ax, x, 5.75, x, 4.35)
        _product_label(ax, x, 5.12, f"$\\times W_{name}$", dm % sym, f"[{d_model}, {width}]", font)
        box(x, 3.87, f"${name} = XW_{name}$", f"$[T, {sym}]$", f"[{T}, {width}]", "attn", 1.6)
    box(1.45, 2.3, "$S = QK^\\top/\\sqrt{d_k}$", "$[T, T]$", f"[{T}, {T}]", "attn", 2.2)
    _arrow(ax, 0.85, 3.39, 1.1, 2.78)
    _arrow(ax, 2.6, 3.39, 1.8, 2.78)
    ax.text(2.65, 2.1, "query $i$\nagainst key $j$", fontsize=font, ha="left", va="center")
    box(1.45, 0.6, "$A = \\mathrm{softmax}(S)$", "$[T, T]$", f"[{T}, {T}]", "attn", 2.3)
    _arrow(ax, 1.45, 1.82, 1.45, 1.08)
    ax.text(1.55, 1.45, "each row sums to 1", fontsize=font, ha="left", va="center")
    box(4.35, 0.6, "$Z = AV$", "$[T, d_v]$", f"[{T}, {d_v}]", "io", 1.4)
    _arrow(ax, 2.6, 0.6, 3.65, 0.6)
    _arrow(ax, 4.35, 3.39, 4.35, 1.08)
    ax.text(
        4.25, 2.75, "the values,\nmixed by\nthe weights", fontsize=font, ha="right", va="center"
    )
    return fig


def _draw_stack(ax, x, stack, font=_FONT, w=3.3):
    """A decoder-only stack drawn bottom to top: (y, text, kind) rows, a box each ``w`` wide (kind
    None: plain text, the ellipsis), joined by arrows (gpt_diagram, llama_diagram)."""
    for (y, text, kind), (y_next, _, next_kind) in zip(stack, stack[1:] + [(None, None, None)]):
        if kind is None:
            ax.text(x, y, text, **_t(max(12, font + 1)))
        else:
            _box(ax, x, y, text, kind, w=w, h=0.45, fontsize=font)
        if y_next is not None:
            _arrow(ax, x, y + (0.1 if kind is None else 0.22),
                   x, y_next - (0.1 if next_kind is None else 0.22))  # fmt: skip


def _head_colors(n):
    # one tint per head, as chapter 7's split-and-merge figure
    cmap = plt.get_cmap(SEQUENTIAL_CMAP)
    return [cmap(0.1 + 0.85 * i / max(n - 1, 1)) for i in range(n)]


def _text_color(rgb):
    # black or white, whichever contrasts more (WCAG relative luminance, threshold 0.179)
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return "black" if 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.179 else "white"


# Long by design: one drawing call per box and arrow, the phone's layout beside the page's.
def multi_head_diagram(d_model, n_heads, seq_len, *, narrow=False):
    """Chapter 7's multi-head attention on one sequence of ``seq_len`` tokens: Q, K, V from one
    D x D matrix each, split into H = ``n_heads`` heads of width D/H, each head attending on its
    own, the heads concatenated and mixed by W^O. Up to 8 heads are drawn one box each; more are
    drawn as the first three, a "..." and the last. ``narrow``: drawn for a phone's width (5.2
    inches, its text at 12 CSS px there), split_heads under Q, K, V and up to 4 heads drawn one
    box each. Returns the Figure."""
    check_int(d_model, "d_model", 1)
    check_int(n_heads, "n_heads", 1)
    check_int(seq_len, "seq_len", 1)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    check_bool(narrow, "narrow")
    D, H, T, Dh = d_model, n_heads, seq_len, d_model // n_heads
    shown = list(range(H)) if H <= (4 if narrow else 8) else [0, 1, 2, None, H - 1]
    fig, ax = _canvas(*((5.2, 6.9) if narrow else (9.0, 5.2)), _multi_head_alt(D, H, T, shown))
    font = _phone_font(5.2) if narrow else _FONT

    def shape_box(x, y, symbol, shape, numbers, kind, w):
        _box(ax, x, y, f"{symbol}\n{shape}\n{numbers}", kind, w=w, h=1.0 if narrow else 0.85,
             fontsize=font)  # fmt: skip

    if narrow:  # X, W and Q, K, V in a row; split_heads under Q, K, V; heads; merge and W^O
        y1, y2, y3, y4 = 6.3, 4.75, 3.0, 0.65
        split_x, merge_x, width, left = 4.15, 1.25, 5.0 / len(shown), 0.1
        shape_box(0.55, y1, "$X$", "$[T, D]$", f"[{T}, {D}]", "emb", 0.8)
        _arrow(ax, 0.95, y1, 1.2, y1)
        shape_box(2.1, y1, "$W^Q, W^K, W^V$", "$[D, D]$ each", f"[{D}, {D}]", "ff", 1.8)
        _arrow(ax, 3.0, y1, 3.25, y1)
        shape_box(4.15, y1, "$Q$, $K$, $V$", "$[T, D]$ each", f"[{T}, {D}]", "attn", 1.8)
        _arrow(ax, split_x, y1 - 0.5, split_x, y2 + 0.5)
        shape_box(split_x, y2, "split_heads", "$[H, T, D/H]$", f"[{H}, {T}, {Dh}]", "norm", 1.8)
        head_h, top_y = 1.0, y2 - 0.5
    else:
        y1, y2, y3 = 4.35, 2.6, 0.75
        split_x, merge_x, width, left = 7.55, 4.0, 8.6 / len(shown), 0.2
        shape_box(0.7, y1, "$X$", "$[T, D]$", f"[{T}, {D}]", "emb", 1.0)
        _arrow(ax, 1.2, y1, 1.6, y1)
        shape_box(2.6, y1, "$W^Q, W^K, W^V$", "$[D, D]$ each", f"[{D}, {D}]", "ff", 1.9)
        _arrow(ax, 3.55, y1, 3.95, y1)
        shape_box(4.95, y1, "$Q$, $K$, $V$", "$[T, D]$ each", f"[{T}, {D}]", "attn", 1.9)
        _arrow(ax, 5.9, y1, 6.3, y1)
        shape_box(split_x, y1, "split_heads", "$[H, T, D/H]$", f"[{H}, {T}, {Dh}]", "norm", 2.3)
        head_h, top_y, y4 = 0.85, y1 - 0.43, y3
        y3 = y2
    xs = [left + width * (i + 0.5) for i in range(len(shown))]
    for x, h in zip(xs, shown):  # each head, from split_heads to merge_heads
        w = min(width - (0.1 if narrow else 0.15), 1.3)  # narrow: 0.9 inches for 5 heads
        _draw_head(ax, x, y3, h, H, f"[{T}, {Dh}]", w, head_h, font)
        if h is not None:
            _arrow(
                ax, split_x, top_y, x, y3 + head_h / 2, color="0.55"
            )  # arrowheads, as every edge
            _arrow(ax, x, y3 - head_h / 2, merge_x, y4 + 0.5, color="0.55")
    ax.text(
        0.15,
        y2 if narrow else y4,
        "each head $h$ attends\non its own:\n$\\mathrm{softmax}(Q_hK_h^\\top/\\sqrt{D/H})\\,V_h$,\n"
        "its own weights $[T, T]$"
        if narrow
        else "each head $h$ attends on its own:\n$\\mathrm{softmax}(Q_hK_h^\\top/\\sqrt{D/H})\\,V_h$,\n"
        "its own weights $[T, T]$",
        fontsize=font,
        va="center",
    )
    if narrow:
        # 2.3 inches: "merge_heads: Concat" at 14 points is about 2.15 inches long
        shape_box(merge_x, y4, "merge_heads: Concat", "$[T, D]$", f"[{T}, {D}]", "norm", 2.3)
        _arrow(ax, 2.4, y4, 2.6, y4)
        shape_box(3.1, y4, "$W^O$", "$[D, D]$", f"[{D}, {D}]", "ff", 1.0)
        _arrow(ax, 3.6, y4, 3.8, y4)
        shape_box(4.45, y4, "output", "$[T, D]$", f"[{T}, {D}]", "io", 1.3)
    else:
        shape_box(merge_x, y4, "merge_heads: Concat", "$[T, D]$", f"[{T}, {D}]", "norm", 2.0)
        _arrow(ax, 5.0, y4, 5.5, y4)
        shape_box(6.1, y4, "$W^O$", "$[D, D]$", f"[{D}, {D}]", "ff", 1.0)
        _arrow(ax, 6.6, y4, 7.1, y4)
        shape_box(7.85, y4, "output", "$[T, D]$", f"[{T}, {D}]", "io", 1.3)
    return fig


def _multi_head_alt(D, H, T, shown):
    """multi_head_diagram's alt text; ``shown``, the heads drawn (None for an ellipsis)."""
    Dh = D // H
    return (
        f"Multi-head attention with D = {D} and H = {H} heads. X [T, D] = [{T}, {D}] is projected "
        f"to Q, K and V [{T}, {D}] by W^Q, W^K and W^V [{D}, {D}]; split_heads cuts each into "
        f"{H} heads of width D/H = {Dh}, drawn as a row of "
        + (
            f"{H} boxes"
            if None not in shown
            else "boxes for heads 0, 1, 2, an ellipsis and the last"
        )
        + f", each computing softmax(Q_h K_h transposed / sqrt(D/H)) V_h of shape [{T}, {Dh}]; "
        f"merge_heads puts them side by side again, [{T}, {D}], and W^O [{D}, {D}] mixes them "
        f"into the output [{T}, {D}]."
    )


def _draw_head(ax, x, y, h, H, shape, w, height, font):
    """Head ``h`` of ``H`` as a box in its colour (None: an ellipsis for the heads not drawn)."""
    if h is None:
        ax.text(x, y, "$\\cdots$", **_t(14))
        return
    color = _head_colors(H)[h]
    _box(ax, x, y, f"head {h}\n$[T, D/H]$\n{shape}", "plain", w, height, font,
         color=_text_color(color))  # fmt: skip
    ax.patches[-1].set_facecolor(color)


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def gpt_diagram(config, *, stacked=False):
    """Chapter 13's GPT (GPT-2's layout, Radford et al. 2019): left, the decoder-only stack of
    ``config`` (a ``lib.gpt.GPTConfig``): token and position embeddings, N blocks, a final
    LayerNorm and the tied output layer; right, one pre-LN block: LayerNorm, masked multi-head
    self-attention, residual add, LayerNorm, MLP with GELU, residual add. ``stacked``: the block
    under the stack instead of beside it, 5.2 inches wide, its text at 12 CSS px on a phone.
    Returns the Figure."""
    from lib.gpt import GPTConfig

    check_type(config, "config", GPTConfig)
    N, D, H, V = config.n_layer, config.n_embd, config.n_head, config.vocab_size
    first, second = ("Top", "Below it") if stacked else ("Left", "Right")
    alt = (
        f"{first}, the GPT stack: tokens, then token embedding wte plus position embedding wpe "
        f"([T, D] with D = {D}), then {N} blocks, numbered from 0 "
        f"as in the code, drawn as block 0, block 1, an ellipsis and block {N - 1}, then the final LayerNorm ln_f and the output layer, which "
        f"reuses wte, with a softmax over {V:,} tokens. {second}, one block enlarged: LayerNorm ln_1, "
        f"masked multi-head self-attention with {H} heads, an add that a residual line reaches "
        "from below the LayerNorm; then LayerNorm ln_2, the MLP (D to 4D, GELU, back to D) and a "
        "second residual add."
    )
    if stacked:  # the stack above (shifted up by dy), the block below, in one narrow column
        fig, ax = _canvas(5.2, 12.9, alt)
        x, dy, xb, title_y = 2.5, 6.3, 2.5, 6.1
        # boxes 4.3 inches wide: "masked multi-head self-attention, H = 12" is 4.0 at 14 points
        font, w_box, xr, x_title = _phone_font(5.2), 4.3, xb + 2.35, 2.6
    else:
        fig, ax = _canvas(9.0, 6.6, alt)
        x, dy, xb, title_y = 2.0, 0.0, 5.9, 6.35
        font, w_box, xr, x_title = _FONT, 3.3, xb + 1.95, xb
    stack = [
        (0.4, "tokens $w_1 \\dots w_T$", "io"),
        (1.15, f"wte + wpe: $[T, D]$, $D$ = {D}", "emb"),
        (2.0, "block 0", "attn"),
        (2.75, "block 1", "attn"),
        (3.5, "$\\vdots$", None),
        (4.25, f"block $N - 1$ = {N - 1}", "attn"),
        (5.0, "ln_f (LayerNorm)", "norm"),
        (5.75, f"lm_head = wte$^\\top$, softmax over {V:,}", "io"),
    ]
    _draw_stack(ax, x, [(y + dy, text, kind) for y, text, kind in stack], font, w_box)
    title_font = max(10, font)
    # the library's GPT is GPT-2's layout (pre-LN): a preset is named by its size
    sizes = {"small": GPTConfig.gpt2(), "medium": GPTConfig.gpt2_medium()}
    sizes |= {"large": GPTConfig.gpt2_large(), "XL": GPTConfig.gpt2_xl()}
    name = next((f"GPT-2 {size}" for size, c in sizes.items() if c == config), "GPT-2 layout")
    ax.text(x, 6.35 + dy, f"{name}: {N} blocks, {H} heads of $D_h$ = {D // H}", **_t(title_font))
    # the enlarged block, pre-LN
    block = [
        (1.35, "ln_1 (LayerNorm)", "norm"),
        (2.1, f"masked multi-head self-attention, $H$ = {H}", "attn"),
        (2.85, "$+$", "plain"),
        (3.6, "ln_2 (LayerNorm)", "norm"),
        (4.35, f"MLP: $D \\to 4D$ = {4 * D}, GELU, $\\to D$", "ff"),
        (5.1, "$+$", "plain"),
    ]
    _arrow(ax, xb, 0.55, xb, block[0][0] - 0.22)
    # the input x under the frame (at 14 points, its top would cross the frame's line at 0.85)
    ax.text(xb + 0.08, 0.75 if font == _FONT else 0.58, "$x$", fontsize=font, ha="left")
    for (y, text, kind), nxt in zip(block, block[1:] + [(5.8, None, None)]):
        w = 0.45 if text == "$+$" else w_box
        _box(ax, xb, y, text, kind, w=w, h=0.45, fontsize=font)
        _arrow(ax, xb, y + 0.22, xb, nxt[0] - 0.22 if nxt[1] else nxt[0])
    for y_from, y_add in [
        (0.95, 2.85),
        (3.15, 5.1),
    ]:  # the residual: around LayerNorm and sub-layer
        _line(ax, [xb, xr, xr], [y_from, y_from, y_add])
        _arrow(ax, xr, y_add, xb + 0.23, y_add)
    x_frame = xb - w_box / 2 - 0.2  # the dashed frame, from left of the boxes to right of xr
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (x_frame, 0.9),
            xr + 0.2 - x_frame,
            4.55,
            fc="none",
            ec="0.5",
            ls="--",
            boxstyle="round,pad=0.05",
        )
    )
    title = "one block (pre-LN), as GPT-2" + (f": each of the {N} above" if stacked else "")
    ax.text(x_title, title_y, title, **_t(title_font))
    if not stacked:  # from block 0 of the stack to the enlarged block beside it
        _line(ax, [x + 1.65, 4.05], [2.0, 0.9], color="0.6", ls=":")
        _line(ax, [x + 1.65, 4.05], [2.0, 5.45], color="0.6", ls=":")
    return fig


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def gpt_blocks_diagram(config=None):
    """Chapter 13's two places for the LayerNorm, side by side and from the bottom up: left, GPT's
    block (Radford et al. 2018; post-LN, as the original Transformer: each sub-layer, its residual
    add, then a LayerNorm, and no LayerNorm after the last block); right, GPT-2's (Radford et al.
    2019; pre-LN, as ``lib.gpt.Block``: a LayerNorm at each sub-layer's input, the residual stream
    never normalized, and ``ln_f`` after the last block). Both: token plus position embeddings
    below, the block repeated N times, the output layer tied to the token embedding and a softmax
    on top. ``config``: a ``lib.gpt.GPTConfig`` (default ``GPTConfig.gpt2()``, whose 12 blocks of
    width 768 with 12 heads are GPT's sizes too). Drawn for a phone: 5.2 inches wide, its text at
    12 CSS px there. Returns the Figure."""
    from lib.gpt import GPTConfig

    config = GPTConfig.gpt2() if config is None else config
    check_type(config, "config", GPTConfig)
    N, D, H = config.n_layer, config.n_embd, config.n_head
    alt = (
        "Two decoder-only stacks side by side, read from the bottom up, each from the tokens w_1 "
        "to w_T and their token plus position embeddings, through a dashed block repeated "
        f"N = {N} times, to the output layer that multiplies by the transposed token embedding "
        "(tied) and a softmax. Left, GPT (post-LN): masked multi-head self-attention with "
        f"{H} heads, a residual add, LayerNorm, the MLP (D = {D} to 4D and back, GELU), a residual "
        "add, LayerNorm; the residual lines start after each LayerNorm, so the stream itself is "
        "normalized, and nothing sits between the last block and the output layer. Right, GPT-2 "
        "(pre-LN), as the library's GPT: LayerNorm ln_1, the masked self-attention, a residual "
        "add, LayerNorm ln_2, the MLP, a residual add; the residual lines go around each LayerNorm "
        "and its sub-layer, so the stream is never normalized inside the blocks, and one more "
        "LayerNorm, ln_f, follows the last block."
    )
    font = _phone_font(5.2)
    fig, ax = _canvas(5.2, 7.95, alt)
    w, plus = 2.0, 0.4  # a box's width, an add's
    attn = f"masked multi-head\nself-attention\n$H$ = {H}"
    mlp = f"MLP, GELU\n{D} → {4 * D:,} → {D}"
    # (y, text, kind) from the bottom up; the adds are "+"; None: the residual's start
    post = [
        (2.05, attn, "attn"),
        (2.9, "$+$", "plain"),
        (3.48, "LayerNorm", "norm"),
        (4.3, mlp, "ff"),
        (5.02, "$+$", "plain"),
        (5.6, "LayerNorm", "norm"),
    ]
    pre = [
        (1.8, "LayerNorm ln_1", "norm"),
        (2.62, attn, "attn"),
        (3.45, "$+$", "plain"),
        (4.0, "LayerNorm ln_2", "norm"),
        (4.7, mlp, "ff"),
        (5.42, "$+$", "plain"),
    ]

    def half(text):  # half a box's height: 0.2 a line of text at 11.5 points, plus a margin
        return plus / 2 if text == "$+$" else 0.08 + 0.1 * (text.count("\n") + 1) * font / 11.5

    columns = [  # x, title, block, residuals (from y, into the add at y), above the blocks
        (1.2, "GPT: post-LN", post, [(1.45, 2.9), (3.83, 5.02)], []),
        (3.9, "GPT-2: pre-LN", pre, [(1.45, 3.45), (3.72, 5.42)], [(6.3, "ln_f", "norm")]),
    ]
    for x, title, block, residuals, after in columns:
        below = [(0.3, "tokens $w_1 \\dots w_T$", "io"), (0.95, "wte + wpe", "emb")]
        top = [*after, (7.05, "× wte$^\\top$ (tied)\nsoftmax", "io")]
        items = [*below, *block, *top]
        for (y, text, kind), nxt in zip(items, [*items[1:], None]):
            _box(ax, x, y, text, kind, w=plus if text == "$+$" else w, h=2 * half(text),
                 fontsize=font)  # fmt: skip
            if nxt is not None:
                _arrow(ax, x, y + half(text), x, nxt[0] - half(nxt[1]))
        x_res = x + w / 2 + 0.12
        for y_from, y_add in residuals:  # the residual: from the stream, around, into the add
            _line(ax, [x, x_res, x_res], [y_from, y_from, y_add])
            _arrow(ax, x_res, y_add, x + plus / 2, y_add)
        ax.add_patch(
            mpatches.FancyBboxPatch(
                (x - w / 2 - 0.08, 1.33),
                w + 0.28,
                4.6,
                fc="none",
                ec="0.5",
                ls="--",
                boxstyle="round,pad=0.03",
            )
        )
        y_add = next(y for y, text, _ in block if text == "$+$")  # "× N" left of the first add
        ax.text(x - 0.6, y_add, f"× {N}", **_t(font))
        ax.text(x, 7.72, title, **_t(font))
    return fig


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def bert_input_diagram(tokens, config=None, segments=None, *, fontsize=None):
    """Chapter 14's input of BERT (Devlin et al. 2019, Figure 2): each token's input vector is the
    sum of its token embedding, its segment embedding (E_A up to the first [SEP], E_B after) and
    its position embedding, then a LayerNorm. ``config``: a ``lib.bert.BertConfig`` (default
    ``BertConfig.base()``) for the sizes of the three tables; ``segments``: 0/1 per token
    (default: 1 after the first [SEP]); ``fontsize``: the text's size in points (default 11.5; up
    to 13.5 fits the boxes). Returns the Figure."""
    from lib.bert import BertConfig

    toks = _words(tokens, "tokens", 12)
    config = BertConfig.base() if config is None else config
    check_type(config, "config", BertConfig)
    if segments is None:
        first_sep = toks.index("[SEP]") if "[SEP]" in toks else len(toks) - 1
        segments = [int(i > first_sep) for i in range(len(toks))]
    segments = list(segments)
    if len(segments) != len(toks) or any(s not in (0, 1) for s in segments):
        raise ValueError(f"segments: expected {len(toks)} values 0 or 1, got {segments!r}")
    font = _PHONE_FONT if fontsize is None else fontsize
    if not is_number(font) or not 0 < font <= 13.5:
        raise ValueError(f"fontsize: expected a number of points up to 13.5, got {fontsize!r}")
    n = len(toks)
    n_a = segments.count(0)
    d = config.hidden_size
    tables = {
        "token": f"{config.vocab_size:,} x {d}",
        "segment": f"{config.type_vocab_size} x {d}",
        "position": f"{config.max_position_embeddings} x {d}",
    }
    alt = (
        f"{n} rows, one per token of the input {' '.join(toks)}, and four columns: the token, "
        "then three embeddings joined by plus signs: its token embedding (E with the token as "
        f"subscript), its segment embedding (E_A in blue for the first {n_a} tokens, E_B in orange "
        f"for the other {n - n_a}) and its position embedding (E_0 to E_{n - 1}). Each column is "
        f"headed with the size of its table: token embeddings {tables['token']}, segment "
        f"embeddings {tables['segment']}, position embeddings {tables['position']}. A title "
        f"above says: input vector, width {d} = LayerNorm(token + segment + position)."
    )
    # one row per token, stacked: drawn for a phone's width, as the other narrow diagrams
    # 5.1 inches: saved at 110 dpi with a tight box's margins, 583 px, under the 600 px above
    # which book/_static/reader.js puts a picture in a box that scrolls sideways on a phone
    pitch, top = 0.46, 1.45
    height = top + n * pitch + 0.15
    fig, ax = _canvas(5.1, height, alt)
    ys = [height - top - pitch * (i + 0.5) for i in range(n)]
    columns = [
        (0.55, 0.95, "input", "plain", lambda i: toks[i]),
        (1.88, 1.3, "token", "emb", lambda i: _embedding_label(toks[i])),
        (3.2, 0.7, "segment", "ctx", lambda i: "$E_A$" if segments[i] == 0 else "$E_B$"),
        (4.42, 0.8, "position", "io", lambda i: f"$E_{{{i}}}$"),
    ]
    header = height - top + 0.3
    for x, w, name, kind, label in columns:
        ax.text(x, header, name if name == "input" else f"{name}\n({tables[name]})", **_t(font))
        for i, y in enumerate(ys):
            _box(ax, x, y, label(i), kind, w=w, h=pitch - 0.08, fontsize=font)
            if kind == "ctx":  # segment A blue, B orange, as in the fine-tuning diagrams
                ax.patches[-1].set_facecolor(_DIAGRAM_COLORS["attn" if segments[i] == 0 else "ff"])
    for y in ys:
        for x in (2.68, 3.81):
            ax.text(x, y, "$+$", **_t(font))
    ax.text(
        2.55,
        height - 0.4,
        f"input vector, width {d} =\nLayerNorm(token + segment + position)",
        **_t(font),
    )
    return fig


def _embedding_label(token):
    # E with the token as subscript; mathtext takes "#" only outside \mathrm
    rest = token.lstrip("#").replace("\\", "").replace("_", "\\_").replace("$", "")
    hashes = "\\#" * (len(token) - len(token.lstrip("#")))
    return f"$E_{{{hashes}\\mathrm{{{rest}}}}}$" if rest else f"$E_{{{hashes}}}$"


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def electra_diagram(
    config, original=("the", "chef", "cooked", "the", "meal"), masked=(0, 2), sampled=("the", "ate")
):
    """Chapter 16's replaced-token detection (Clark et al. 2020, Figure 2, whose example is the
    default): the ``masked`` positions of ``original`` become [MASK], the generator (a small masked
    LM) samples a word for each (``sampled``), and the discriminator labels every token original
    or replaced; a sample equal to the original counts as original. ``config``: a
    ``lib.electra.ElectraConfig`` for the depths. Drawn for a phone's width (5.2 inches, 14-point
    text: about 12 CSS px in a 328 px column; 12.5 with six words): the words across (at most 6),
    the stages one under the other. Returns the Figure."""
    from lib.electra import ElectraConfig

    check_type(config, "config", ElectraConfig)
    orig = _words(original, "original", 6)
    masked, sampled = list(masked), list(sampled)
    if not masked or any(not is_int(i) or not 0 <= i < len(orig) for i in masked):
        raise ValueError(f"masked: expected positions in [0, {len(orig)}), got {masked!r}")
    if len(sampled) != len(masked):
        raise ValueError(
            f"sampled: expected {len(masked)} words (one per masked position), got {len(sampled)}"
        )
    with_mask = [("[MASK]" if i in masked else w) for i, w in enumerate(orig)]
    corrupt = list(orig)
    for i, w in zip(masked, sampled):
        corrupt[i] = w
    labels = ["original" if c == o else "replaced" for c, o in zip(corrupt, orig)]
    n_g, n_d = config.generator_layers, config.discriminator.num_hidden_layers
    alt = (
        f"Four rows of words, one under the other. The sentence {' '.join(orig)} is masked to "
        f"{' '.join(with_mask)}; the generator, a small masked language model of {n_g} layer"
        f"{'s' if n_g > 1 else ''}, samples {' '.join(corrupt)}; the discriminator, {n_d} layers, "
        f"labels each token: {', '.join(labels)}."
    )
    # drawn for a phone's width: the words across, the stages one under the other
    n, width = len(orig), 5.2
    font = _phone_font(width) if n < 6 else 12.5  # six boxes 0.72 inches wide hold [MASK] at 12.5
    pitch = min(1.0, (width - 0.3) / n)
    xs = [width / 2 + pitch * (i - (n - 1) / 2) for i in range(n)]
    row, gap, stage = 0.42, 0.32, 0.62  # a row of words, a heading or arrow, a model's box
    height = 4 * row + 2 * stage + 8 * gap + 0.1  # 3 headings, 5 rows of arrows
    fig, ax = _canvas(width, height, alt)
    y = height - 0.05

    def heading(text):
        nonlocal y
        ax.text(
            xs[0] - pitch / 2 + 0.05,
            y - gap / 2,
            text,
            fontsize=font,
            ha="left",
            va="center",
            style="italic",
            color="0.25",
        )
        y -= gap

    def words_row(words, colour):
        nonlocal y
        y -= row / 2
        for x, w, c in zip(xs, words, colour):
            _box(ax, x, y, w, c, w=pitch - 0.1, h=row, fontsize=font)
        y -= row / 2

    def arrows():
        nonlocal y
        for x in xs:
            _arrow(ax, x, y - 0.03, x, y - gap + 0.03)
        y -= gap

    def model(text, kind):
        nonlocal y
        y -= stage / 2
        _box(ax, width / 2, y, text, kind, w=pitch * n - 0.1, h=stage, fontsize=font)
        y -= stage / 2

    plain = ["plain"] * n
    heading("original")
    words_row(orig, plain)
    arrows()
    heading("masked")
    words_row(with_mask, ["norm" if w == "[MASK]" else "plain" for w in with_mask])
    arrows()
    model(f"generator (small masked LM, {n_g} layer{'s' if n_g > 1 else ''})", "ff")
    arrows()
    heading("corrupted: the generator's samples")
    words_row(corrupt, ["ctx" if c != o else "plain" for c, o in zip(corrupt, orig)])
    arrows()
    model(f"discriminator (ELECTRA, {n_d} layers)", "attn")
    arrows()
    y -= row / 2
    for x, label in zip(xs, labels):
        ax.text(x, y, label, weight="bold" if label == "replaced" else "normal", **_t(font))
    return fig


def bert_pretraining_diagram(config=None, *, fontsize=None):
    """Chapter 14's two pretraining tasks of BERT (Devlin et al. 2019, Figure 1, with its example
    pair): a masked word is predicted from its output vector by the MLM head, IsNext/NotNext from
    the [CLS] vector C by the NSP head. ``config``: a ``lib.bert.BertConfig`` (default
    ``BertConfig.base()``) for the encoder's size and the vocabulary. ``fontsize``: the text's size
    in points (default 11.5; up to 13.5 fits the boxes). Returns the Figure."""
    from lib.bert import BertConfig

    config = BertConfig.base() if config is None else config
    check_type(config, "config", BertConfig)
    font = _PHONE_FONT if fontsize is None else fontsize
    if not is_number(font) or not 0 < font <= 13.5:
        raise ValueError(f"fontsize: expected a number of points up to 13.5, got {fontsize!r}")
    toks = "[CLS] my dog is [MASK] [SEP] he likes play ##ing [SEP]".split()
    L, D, H = config.num_hidden_layers, config.hidden_size, config.num_attention_heads
    alt = (
        f"The input {' '.join(toks)} (the fourth word, cute, replaced by [MASK]), one token per "
        f"row, enters the BERT encoder, {L} layers of width {D} with {H} heads, drawn as a tall "
        "box. To its right, one output vector per token: "
        "C for [CLS], T_1 to T_10 for the others. From T_4, the MLM head (a softmax over "
        f"{config.vocab_size:,} tokens) predicts cute; from C, through the pooler (tanh(W C + b)), "
        "the NSP head predicts IsNext or NotNext. The other outputs get no loss."
    )
    # one row per token, stacked: drawn for a phone's width, as the other narrow diagrams; 5.1
    # inches, 583 px as saved (under the 600 px above which a phone scrolls it sideways)
    pitch, n = 0.46, len(toks)
    height = 0.3 + n * pitch + 0.15
    fig, ax = _canvas(5.1, height, alt)
    ys = [height - 0.3 - pitch * (i + 0.5) for i in range(n)]
    for i, (y, tok) in enumerate(zip(ys, toks)):
        _box(ax, 0.55, y, tok, "ctx" if tok == "[MASK]" else "plain", 1.0, pitch - 0.08, font)
        _arrow(ax, 1.07, y, 1.42, y)
        _box(ax, 2.8, y, "$C$" if i == 0 else f"$T_{{{i}}}$", "plain", 0.6, pitch - 0.08, font)
        _arrow(ax, 2.18, y, 2.48, y)
    _box(
        ax,
        1.8,
        (ys[0] + ys[-1]) / 2,
        f"BERT encoder: {L} layers, width {D}, {H} heads",
        "attn",
        0.72,
        ys[0] - ys[-1] + pitch - 0.08,
        font,
        rotation=90,
    )
    m = toks.index("[MASK]")
    xh, wh = 4.2, 1.68  # the two heads' boxes, wide enough for "IsNext / NotNext" at 13.5 points
    _arrow(ax, 3.12, ys[m], xh - wh / 2, ys[m])
    _box(
        ax, xh, ys[m], f"MLM head:\nsoftmax over\n{config.vocab_size:,} → cute", "ff", wh, 1.0, font
    )
    # the NSP head reads the pooler's output, tanh(W C + b), not C itself
    _arrow(ax, 3.12, ys[0], xh - wh / 2, ys[0])
    _box(ax, xh, ys[0] - 0.12, "pooler, then\nNSP head:\nIsNext / NotNext", "ff", wh, 0.95, font)
    ax.text(xh, (ys[7] + ys[8]) / 2, "no loss at the\nother outputs", color="0.35", **_t(font))
    return fig


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def bert_layer_diagram(config=None, *, narrow=True):
    """Chapter 14's encoder layer of BERT (``lib.bert.BertLayer``, post-LN: each sub-layer, its
    residual add, then a LayerNorm; GELU in the feed-forward network; no causal mask) with the tensor
    shapes, and beside it the masked-LM head of pretraining (``cls.predictions``: dense, GELU,
    LayerNorm, then the word embeddings again, tied, and a bias). ``config``: a
    ``lib.bert.BertConfig`` (default ``BertConfig.base()``). ``narrow``: 14-point text for a phone's
    column (default), else 11.5. Returns the Figure."""
    from lib.bert import BertConfig

    config = BertConfig.base() if config is None else config
    check_type(config, "config", BertConfig)
    check_bool(narrow, "narrow")
    L, D, H = config.num_hidden_layers, config.hidden_size, config.num_attention_heads
    Fw, V = config.intermediate_size, config.vocab_size
    alt = (
        f"Left, one of BERT's {L} encoder layers from bottom to top, for a batch of B sequences of "
        f"T tokens of width D = {D:,}: the input x [B, T, D]; multi-head self-attention with "
        f"{H} heads and no causal mask (every real token attends to every real token; only "
        "padding is masked); the output projection W^O "
        "and dropout; a residual add of x; LayerNorm; a dense layer from "
        f"{D:,} to {Fw:,} with GELU; a dense layer back to {D:,} with dropout; a residual add of "
        "the first LayerNorm's output; LayerNorm; the output [B, T, D], the next layer's input "
        "(post-LN: each LayerNorm after its residual add). Right, the masked-LM head, which reads "
        f"the last layer's vector T_i [{D:,}] at a chosen position: a dense layer {D:,} to "
        f"{D:,} with GELU, LayerNorm, then multiplication by the transposed word-embedding table "
        f"[{V:,}, {D:,}] of the input (tied weights) plus a bias, and a softmax over the {V:,} "
        "tokens."
    )
    width, height = 5.2, 8.0
    font = _phone_font(width) if narrow else _PHONE_FONT
    fig, ax = _canvas(width, height, alt)

    def half(text):  # half the height of a box of text's lines
        return 0.09 + 0.115 * (text.count("\n") + 1) * font / 13

    x, w, x_res, gap = 1.75, 2.3, 0.3, 0.24  # the layer's column, its residual lines
    texts = [
        ("$x$: $[B, T, D]$", "io"),
        (f"self-attention\n{H} heads\nno causal mask", "attn"),
        ("$W^O$, dropout", "attn"),
        ("$+$", "plain"),
        ("LayerNorm", "norm"),
        (f"dense {D:,} → {Fw:,}\nGELU", "ff"),
        (f"dense {Fw:,} → {D:,}\ndropout", "ff"),
        ("$+$", "plain"),
        ("LayerNorm", "norm"),
        ("output $[B, T, D]$", "io"),
    ]
    column, y = [], 0.1  # each box's centre, from the bottom up, ``gap`` apart
    for text, kind in texts:
        top = 0.2 if text == "$+$" else half(text)
        column.append((y + top, text, kind))
        y += 2 * top + gap
    for (y, text, kind), nxt in zip(column, [*column[1:], None]):
        top = 0.2 if text == "$+$" else half(text)
        _box(ax, x, y, text, kind, w=0.4 if text == "$+$" else w, h=2 * top, fontsize=font)
        if nxt is not None:
            bottom = 0.2 if nxt[1] == "$+$" else half(nxt[1])
            _arrow(ax, x, y + top, x, nxt[0] - bottom)
    # the residual connections: around each sub-layer, into its add, from the gap below it
    for i, j in ((0, 3), (4, 7)):
        y_from, y_add = column[i][0] + half(column[i][1]) + gap / 2, column[j][0]
        _line(ax, [x, x_res, x_res], [y_from, y_from, y_add])
        _arrow(ax, x_res, y_add, x - 0.2, y_add)
    ax.text(x, 7.8, f"one encoder layer (× {L}), post-LN", **_t(font))
    # the masked-LM head, at a chosen position of the last layer's output
    xh, wh = 4.15, 1.9
    head = [
        (1.25, f"$T_i$ of the last\nlayer: $[{D:,}]$", "io"),
        (2.35, f"dense {D:,} → {D:,}\nGELU", "ff"),
        (3.35, "LayerNorm", "norm"),
        (4.5, "× word\nembeddings$^\\top$\n(tied) + bias", "emb"),
        (5.75, f"softmax over\n{V:,} tokens", "plain"),
    ]
    for (y, text, kind), nxt in zip(head, [*head[1:], None]):
        _box(ax, xh, y, text, kind, w=wh, h=2 * half(text), fontsize=font)
        if nxt is not None:
            _arrow(ax, xh, y + half(text), xh, nxt[0] - half(nxt[1]))
    ax.text(xh, 6.7, "masked-LM\nhead", **_t(font))
    return fig


_PHONE_FONT = (
    11.5  # points, on a canvas about 5 inches wide: ~9.7 CSS px when a phone shows it 328 px wide
)


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def gqa_diagram(n_heads=8, n_kv_heads=(8, 2, 1)):
    """Chapter 17's grouped-query attention (Ainslie et al. 2023): one panel per entry of
    ``n_kv_heads``, stacked (drawn for a phone's width), each a row of ``n_heads`` query heads above
    its key/value heads, query head h joined to key/value head h // G (G = n_heads / Hkv,
    consecutive heads share, as ``repeat_kv``). Hkv = n_heads is multi-head attention, Hkv = 1
    multi-query. Each query head is filled with the colour of its key/value head. Returns the
    Figure."""
    check_int(n_heads, "n_heads", 1)
    if n_heads > 16:
        raise ValueError(f"n_heads: expected at most 16 (one box each), got {n_heads}")
    kv = tuple(n_kv_heads)
    if not 1 <= len(kv) <= 3 or any(not is_int(k) or k < 1 or n_heads % k for k in kv):
        raise ValueError(f"n_kv_heads: expected 1 to 3 divisors of n_heads={n_heads}, got {kv}")
    kind = {n_heads: "multi-head", 1: "multi-query"}

    def name(k):
        return kind.get(k, "grouped-query")

    def groups(k):
        G = n_heads // k
        return ", ".join(f"{j * G} to {j * G + G - 1}" if G > 1 else f"{j}" for j in range(k))

    alt = (
        f"{len(kv)} panels, one above the other, each with a row of {n_heads} query heads on top "
        "and key/value heads below, joined by lines; each query head has the colour of the "
        "key/value head it reads. "
        + " ".join(
            f"{name(k).capitalize()}, {k} key/value head{'s' if k > 1 else ''}: "
            + (
                "each joined to the query head above it."
                if k == n_heads
                else "joined to all query heads."
                if k == 1
                else f"query heads {groups(k)} share one each, in that order."
            )
            for k in kv
        )
    )
    width, panel = 5.0, 2.3
    font = _phone_font(width)
    fig, ax = _canvas(width, panel * len(kv), alt)
    step = (width - 0.3) / n_heads
    qx = [0.15 + step * (h + 0.5) for h in range(n_heads)]
    for p, k in enumerate(kv):
        y0, G = panel * (len(kv) - 1 - p), n_heads // k  # the first panel on top
        kx = [sum(qx[j * G : (j + 1) * G]) / G for j in range(k)]
        colors = _head_colors(k)  # the panel's key/value heads as far apart in tint as can be
        for h, x in enumerate(qx):
            _line(ax, [x, kx[h // G]], [y0 + 1.2, y0 + 0.72], color="0.45")
        for h, x in enumerate(qx):  # each query head in the colour of the key/value head it reads
            _box(ax, x, y0 + 1.4, f"{h}", "plain", w=step * 0.8, h=0.38, fontsize=font,
                 color=_text_color(colors[h // G]))  # fmt: skip
            ax.patches[-1].set_facecolor(colors[h // G])
        for j, x in enumerate(kx):
            w = min(step * G - 0.08, 1.4) if G > 1 else step * 0.8
            _box(ax, x, y0 + 0.53, f"{j}", "plain", w=w, h=0.38, fontsize=font,
                 color=_text_color(colors[j]))  # fmt: skip
            ax.patches[-1].set_facecolor(colors[j])
        ax.text(width / 2, y0 + 2.1, f"{name(k)}: $H$ = {n_heads}, $H_{{kv}}$ = {k}",
                **_t(font + 1), weight="bold")  # fmt: skip
        ax.text(width / 2, y0 + 1.77, "query heads", **_t(font))
        ax.text(width / 2, y0 + 0.15, "key/value heads (cached)", **_t(font))
    return fig


def swiglu_diagram(config):
    """Chapter 17's SwiGLU feed-forward network (Shazeer 2020; ``lib.llama.SwiGLU``), drawn for a
    phone's column from ``config`` (a ``lib.llama.LlamaConfig``): the normalized input h [T, D] goes
    into two branches, ``gate_proj`` then SiLU (the gate) and ``up_proj`` (the value), both D to F;
    their product element by element, [T, F], goes through ``down_proj`` back to D. Returns the
    Figure."""
    from lib.llama import LlamaConfig

    check_type(config, "config", LlamaConfig)
    D, Fw = config.hidden_size, config.intermediate_size
    alt = (
        f"SwiGLU as a flow from bottom to top. The normalized input h, T vectors of D = {D:,}, "
        f"splits into two branches side by side. Left, the gate: gate_proj, D to F = {Fw:,}, then "
        f"SiLU. Right, the value: up_proj, D to F = {Fw:,}, with no nonlinearity. The two meet in "
        f"an element-wise product, T vectors of F = {Fw:,}, which down_proj brings back to width "
        f"D = {D:,}, the output that the residual connection adds to the stream."
    )
    width, height = 5.2, 5.9
    font = _phone_font(width)
    fig, ax = _canvas(width, height, alt)
    xl, xr, xc, wb = 1.45, 3.75, 2.6, 2.1  # the gate's lane, the value's, the middle

    def box(x, y, text, kind, w=wb):
        h = 0.2 + 0.21 * (text.count("\n") + 1)
        _box(ax, x, y, text, kind, w=w, h=h, fontsize=font)
        return h / 2

    top = box(xc, 0.45, f"$h$ = RMSNorm($x$)\n$[T, D]$, $D$ = {D:,}", "norm", w=3.0)
    rows = [  # (y, gate's box, value's box)
        (1.65, f"gate_proj\n$D \\to F$ = {Fw:,}", f"up_proj\n$D \\to F$ = {Fw:,}"),
        (2.75, "SiLU\n(the gate)", None),
    ]
    for x in (xl, xr):
        _line(ax, [xc, x], [0.45 + top, 1.0])
        _arrow(ax, x, 1.0, x, rows[0][0] - 0.305)
    half = [box(xl, rows[0][0], rows[0][1], "ff"), box(xr, rows[0][0], rows[0][2], "ff")]
    _arrow(ax, xl, rows[0][0] + half[0], xl, rows[1][0] - 0.305)
    gate_top = rows[1][0] + box(xl, rows[1][0], rows[1][1], "attn")
    y_prod = 3.8
    _box(ax, xc, y_prod, "$\\odot$", "plain", w=0.46, h=0.46, fontsize=font + 2)
    _line(ax, [xl, xl], [gate_top, y_prod])
    _arrow(ax, xl, y_prod, xc - 0.23, y_prod)
    ax.text(xr, 2.75, "the value:\nno nonlinearity", **_t(font))  # on its line, which breaks
    _line(ax, [xr, xr], [rows[0][0] + half[1], 2.75 - 0.33])
    _line(ax, [xr, xr], [2.75 + 0.33, y_prod])
    _arrow(ax, xr, y_prod, xc + 0.23, y_prod)
    ax.text(xc + 0.32, y_prod + 0.4, "$[T, F]$", fontsize=font, ha="left", va="center")
    y_down = 4.85
    _arrow(ax, xc, y_prod + 0.23, xc, y_down - 0.305)
    down_top = y_down + box(xc, y_down, "down_proj\n$F \\to D$", "ff", w=2.4)
    _arrow(ax, xc, down_top, xc, 5.52)
    ax.text(xc, 5.72, "$[T, D]$, to the residual add", **_t(font))
    return fig


# Long by design: one drawing call per box and arrow, in the order the steps run.
def attention_layer_diagram(config):
    """Chapter 17's attention layer in the order of ``lib.llama.Attention.forward``, drawn for a
    phone's column from ``config`` (a ``lib.llama.LlamaConfig``), for T new tokens after S cached:
    1 the projections (H query heads, Hkv key and value heads); 2 QK-norm on q and k (drawn dashed
    when ``config.qk_norm`` is off); 3 RoPE on q and k, by the positions P ... P + T - 1 (P, the
    positions the cache has seen: S without a window, more with one), before the cache; 4 the
    cache appends k and v, still Hkv heads; 5 the mask, T rows and S + T columns (a band of the
    window, if any); 6 ``repeat_kv`` to H heads; 7 the attention and ``o_proj``. The circled
    numbers are the steps of the chapter's list. Returns the Figure."""
    from lib.llama import LlamaConfig

    check_type(config, "config", LlamaConfig)
    c = config
    H, Hkv, Dh, D = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.hidden_size
    G = H // Hkv
    window = c.sliding_window
    mask = f"a band of width W = {window:,}" if window else "causal"
    qk = "QK-norm, drawn dashed: this model has none, Qwen3 has an RMSNorm on each head of q and k"
    if c.qk_norm:
        qk = "an RMSNorm on each head of q and of k"
    alt = (
        "The attention layer's steps from bottom to top, in three lanes, q on the left, k in the "
        f"middle and v on the right, for T new tokens after S cached ones (D = {D:,}, H = {H}, "
        f"Hkv = {Hkv}, Dh = {Dh}). 1: q_proj, k_proj and v_proj give q, [B, {H}, T, {Dh}], and "
        f"k and v, [B, {Hkv}, T, {Dh}]. 2: {qk}. 3: RoPE turns q and k by their positions P to "
        "P + T - 1, P being the positions the cache has seen (P = S without a window; with a "
        "window S stops at W - 1 while P grows); v is not turned. 4: the cache appends the new "
        f"k and v, already turned, to its S and returns [B, {Hkv}, S + T, {Dh}]: what the cache keeps. 5: the mask, T rows and "
        f"S + T columns, {mask}, with S from the cache (a grey arrow); q passes it on the left. 6: repeat_kv copies each key/value head for its {G} query heads, "
        f"[B, {H}, S + T, {Dh}]. 7: the attention of the {H} heads with the mask, and o_proj "
        f"back to [B, T, {D:,}]."
    )
    width, height = 5.2, 7.9
    font = _phone_font(width)
    fig, ax = _canvas(width, height, alt)
    xs = (1.45, 2.95, 4.4)  # the lanes of q, k and v
    kv = (xs[1] + xs[2]) / 2  # boxes across the k and v lanes

    def box(x, y, text, kind, w=1.3, dashed=False):  # returns the half height
        h = 0.2 + 0.21 * (text.count("\n") + 1)
        patch = _box(ax, x, y, text, kind, w=w, h=h, fontsize=font)
        if dashed:
            patch.set_linestyle("--")
            patch.set_facecolor("white")
        return h / 2

    def step(y, n):  # the step's number, in a circle at the left edge
        ax.add_patch(mpatches.Circle((0.25, y), 0.17, fc="white", ec="0.25", lw=1))
        ax.text(0.25, y, f"{n}", **_t(font))

    y_x, y1, y2, y3, y4, y5, y6, y7, y8 = 0.3, 1.1, 2.0, 2.9, 3.95, 4.85, 5.75, 6.65, 7.45
    top_x = y_x + box(xs[1], y_x, f"$x$  $[B, T, D]$, $D$ = {D:,}", "io", w=3.9)
    step(y1, 1)  # the projections
    for x, name, heads in zip(xs, "qkv", ("$H$ = " + f"{H}", *[f"$H_{{kv}}$ = {Hkv}"] * 2)):
        half = box(x, y1, f"{name}_proj\n{heads}", "attn")
        _arrow(ax, x, top_x, x, y1 - half)
    step(y2, 2)  # QK-norm, before RoPE
    for x, name in zip(xs[:2], "qk"):
        half = box(x, y2, f"{name}_norm" + ("" if c.qk_norm else "\n(Qwen3)"), "norm",
                   dashed=not c.qk_norm)  # fmt: skip
        _arrow(ax, x, y1 + 0.305, x, y2 - half)
        _arrow(ax, x, y2 + half, x, y3 - 0.305)
    step(y3, 3)  # RoPE, before the cache
    for x in xs[:2]:
        box(x, y3, "RoPE\n$P \\dots P{+}T{-}1$", "emb")  # P: positions seen, not S
    step(y4, 4)  # the cache keeps Hkv heads
    half4 = box(kv, y4, "cache: $S$ kept + $T$ new\n$[B, H_{kv}, S{+}T, D_h]$", "ctx", w=2.95)
    _arrow(ax, xs[1], y3 + 0.305, xs[1], y4 - half4)
    _arrow(ax, xs[2], y1 + 0.305, xs[2], y4 - half4)
    step(y5, 5)  # the mask, which needs S
    half5 = box(xs[0] + 0.2, y5, "mask\n$[T, S{+}T]$", "plain", w=1.1)
    _arrow(ax, kv - 1.3, y4 + half4, xs[0] + 0.75, y5 - 0.1, color="0.45")  # the mask needs S
    ax.text(2.35, y5 - 0.25, "$S$", fontsize=font, ha="left", va="center", color="0.3")
    step(y6, 6)  # repeat_kv, only after the cache
    half6 = box(kv, y6, f"repeat_kv: $\\times${G}\n$[B, H, S{{+}}T, D_h]$", "attn", w=2.95)
    for x in xs[1:]:
        _arrow(ax, x, y4 + half4, x, y6 - half6)
    step(y7, 7)  # the attention, then o_proj
    half7 = box(xs[1], y7, f"attention of the $H$ = {H} heads", "attn", w=4.3)
    for x, y_from in ((xs[0] + 0.2, y5 + half5), (xs[1], y6 + half6), (xs[2], y6 + half6)):
        _arrow(ax, x, y_from, x, y7 - half7)
    x_by = 0.92  # q passes the mask on its left
    _line(ax, [xs[0], xs[0], x_by, x_by], [y3 + 0.305, y3 + 0.5, y3 + 0.5, y7 - 0.6])
    _arrow(ax, x_by, y7 - 0.6, x_by, y7 - half7)
    ax.text(x_by + 0.08, y3 + 0.7, "$q$", fontsize=font, ha="left", va="center")
    half8 = box(xs[1], y8, "o_proj $\\to [B, T, D]$", "attn", w=3.2)
    _arrow(ax, xs[1], y7 + half7, xs[1], y8 - half8)
    return fig


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def llama_diagram(config, *, narrow=False):
    """Chapter 17's modern decoder (``lib.llama.Llama``; Llama 3, Qwen3, Mistral), laid out as
    :func:`gpt_diagram` draws GPT-2 so that the two can be compared: left, the stack of ``config``
    (a ``lib.llama.LlamaConfig``): the token embedding alone (no position table), L layers, a final
    RMSNorm and the output layer (tied or its own), the layers numbered from 0 as ``model.layers``
    indexes them; right, one pre-norm layer: RMSNorm, grouped-query self-attention with RoPE on
    queries and keys (and the window, if any), residual add, RMSNorm, SwiGLU, residual add.
    ``narrow``: drawn for a phone's column, 5.2 inches wide with 14-point text, the labels broken
    over more lines (the default is about 5.5 inches wide once its title is counted, more than a
    phone's column shows). Returns the Figure."""
    from lib.llama import LlamaConfig

    check_type(config, "config", LlamaConfig)
    if not isinstance(narrow, bool):
        raise TypeError(f"narrow: expected True or False, got {narrow!r}")
    if narrow:
        return _llama_narrow(config)
    c = config
    L, D, H, Hkv, V, Fw = _llama_sizes(c)
    fig, ax = _canvas(5.3, 7.0, _llama_alt(c))
    font = _PHONE_FONT

    def half(text):  # half the height of a box of these lines
        return (0.18 + 0.2 * (text.count("\n") + 1)) / 2

    x, w = 1.15, 2.2  # the stack
    lm = "lm_head =\nembed_tokens$^\\top$" if c.tie_word_embeddings else "lm_head (own matrix)"
    _box_column(ax, x, w, [
        (0.3, "tokens $w_1 \\dots w_T$", "io"),
        (1.25, f"embed_tokens\n$[T, D]$, $D$ = {D:,}", "emb"),
        (2.2, "layer 0", "attn"),
        (2.9, "layer 1", "attn"),
        (3.55, "$\\vdots$", None),
        (4.2, f"layer $L - 1$ = {L - 1}", "attn"),
        (4.95, "norm (RMSNorm)", "norm"),
        (5.85, f"{lm}\nsoftmax over {V:,}", "io"),
    ], font=font, half=half, gap=0.1)  # fmt: skip
    ax.text(x, 6.45, "the stack", **_t(font))
    ax.text(2.65, 6.8, f"{L} layers; {H} query and {Hkv} key/value heads of $D_h$ = {c.head_dim}",
            **_t(font))  # fmt: skip
    xb, wb, xr = 3.7, 2.45, 5.1  # one layer, and its residual line
    block = [
        (1.2, "input_layernorm\n(RMSNorm)", "norm"),
        (2.05, f"self-attention, RoPE on $q, k$\n$H$ = {H}, $H_{{kv}}$ = {Hkv}", "attn"),
        (2.85, "$+$", "plain"),
        (3.6, "post_attention_layernorm\n(RMSNorm)", "norm"),
        (4.45, f"SwiGLU, $F$ = {Fw:,}:\nsilu(gate) $\\odot$ up; down", "ff"),
        (5.25, "$+$", "plain"),
    ]
    _arrow(ax, xb, 0.1, xb, block[0][0] - 0.38)
    ax.text(xb + 0.1, 0.32, "$x$", fontsize=font, ha="left", va="center")
    _box_column(ax, xb, wb, block, font=font, half=half, end=(5.85, None, None),
                plus=(0.4, 0.38), reach=lambda text: 0.38)  # fmt: skip
    for y_from, y_add in [(0.7, 2.85), (3.1, 5.25)]:  # the residual, around norm and sub-layer
        _line(ax, [xb, xr, xr], [y_from, y_from, y_add])
        _arrow(ax, xr, y_add, xb + 0.2, y_add)
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (2.4, 0.65), 2.82, 4.95, fc="none", ec="0.5", ls="--", boxstyle="round,pad=0.05"
        )
    )
    extra = f"; window {c.sliding_window:,}" if c.sliding_window else ""
    ax.text(xb, 6.45, f"one layer (pre-norm){extra}", **_t(font))
    _zoom_lines(ax, x + w / 2, 2.2, half("layer 0"), 2.4, (0.65, 5.6))
    return fig


# the dotted zoom lines, layer 0's edge and the enlarged layer's dashed box, in one dark blue: the
# lines stand apart from the grey arrows and borders, and they lead from layer 0 to its enlargement
ZOOM_COLOR = "#08519c"


def _zoom_lines(ax, x_edge, y, half_height, x_box, box_ys):
    """Two dotted lines from the top and bottom right corners of one layer's box (its right edge at
    ``x_edge``, centred at ``y``, ``half_height`` high on each side) to the top and bottom left
    corners of the enlarged layer's dashed box at ``x_box``, ``box_ys`` = (bottom, top), in
    ZOOM_COLOR; the layer's box and the dashed box take its colour too."""
    bottom, top = box_ys
    boxes = [p for p in ax.patches if isinstance(p, mpatches.FancyBboxPatch)]
    for patch in boxes:  # layer 0's box: the one whose right edge the lines leave
        box = patch.get_bbox()
        if abs(box.x1 - x_edge) < 1e-9 and box.y0 < y < box.y1:
            patch.set(ec=ZOOM_COLOR, lw=2)
        elif patch.get_linestyle() == "--":
            patch.set(ec=ZOOM_COLOR)
    _line(ax, [x_edge, x_box], [y - half_height, bottom], color=ZOOM_COLOR, lw=1.8, ls=":")
    _line(ax, [x_edge, x_box], [y + half_height, top], color=ZOOM_COLOR, lw=1.8, ls=":")


def _llama_sizes(c):
    """(L, D, H, H_kv, V, F) of a LlamaConfig, the names the Llama diagrams write."""
    return (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
            c.vocab_size, c.intermediate_size)  # fmt: skip


def _llama_alt(c):
    """The Llama diagrams' alt text, the same for the wide and the narrow drawing."""
    L, D, H, Hkv, V, Fw = _llama_sizes(c)
    head = "reuses embed_tokens" if c.tie_word_embeddings else "has a matrix of its own"
    window = f", window W = {c.sliding_window:,}" if c.sliding_window else ""
    qk = ", RMSNorm on q and k" if c.qk_norm else ""
    return (
        f"Left, the modern decoder's stack: tokens, then the token embedding embed_tokens alone "
        f"(width D = {D:,}, no position embedding), then {L} layers, counted from 0 as in the code, "
        f"drawn as layer 0, layer 1, an ellipsis and layer {L - 1}, then the final RMSNorm and the "
        f"output layer lm_head, which {head}, with a softmax over {V:,} tokens. Right, one layer "
        f"enlarged, joined to layer 0 by two dotted lines: RMSNorm input_layernorm; self-attention with {H} query heads sharing {Hkv} "
        f"key/value heads, RoPE rotating queries and keys{qk}{window}; an add that a residual line "
        f"reaches from below the RMSNorm; then RMSNorm post_attention_layernorm, the SwiGLU network "
        f"(gate and up D to F = {Fw:,}, SiLU of the gate times up, down back to D) and a second "
        f"residual add."
    )


def _box_column(ax, x, w, items, *, font, half, end=None, gap=0.1, plus=None, reach=None):
    """Items (y, text, kind) from the bottom up at ``x``, each joined to the next by an arrow: a box
    ``w`` wide and ``2 * half(text)`` tall, bare text where kind is None (``gap`` above and below
    it), and for "$+$" a residual add, a square ``plus`` = (width, height). An arrow stops
    ``reach(text)`` below the next box's centre (default ``half``); ``end``, an item past the last
    (its text None), is where the last arrow goes."""
    reach = reach or half
    items = [*items, end]
    for (y, text, kind), nxt in zip(items, items[1:]):
        if kind is None:
            top = gap
            ax.text(x, y, text, **_t(font + 2))
        elif text == "$+$":
            top = plus[1] / 2
            _box(ax, x, y, text, kind, w=plus[0], h=plus[1], fontsize=font)
        else:
            top = half(text)
            _box(ax, x, y, text, kind, w=w, h=2 * top, fontsize=font)
        if nxt is not None:
            y_next, next_text, next_kind = nxt
            if next_kind is None:
                bottom = gap if next_text else 0
            else:
                bottom = plus[1] / 2 if next_text == "$+$" else reach(next_text)
            _arrow(ax, x, y + top, x, y_next - bottom)


def _llama_narrow(c):
    """llama_diagram(c, narrow=True): the same two columns, 5.2 inches wide, 14-point text."""
    L, D, H, Hkv, V, Fw = _llama_sizes(c)
    width, height = 5.2, 8.0
    font = _phone_font(width)
    fig, ax = _canvas(width, height, _llama_alt(c))

    def half(text):  # half the height of a box of these lines
        return (0.2 + 0.21 * (text.count("\n") + 1)) / 2

    x, w = 0.85, 1.55  # the stack, narrow enough to leave room for the zoom lines
    lm = (
        "lm_head =\nembed_tokens$^\\top$" if c.tie_word_embeddings else "lm_head\n(own matrix)"
    ) + (f"\nsoftmax over\n{V:,}")
    _box_column(ax, x, w, [
        (0.3, "tokens $w_1 \\dots w_T$", "io"),
        (1.3, f"embed_tokens\n$D$ = {D:,}", "emb"),
        (2.3, "layer 0", "attn"),
        (3.0, "layer 1", "attn"),
        (3.65, "$\\vdots$", None),
        (4.3, f"layer\n$L - 1$ = {L - 1}", "attn"),
        (5.25, "norm\n(RMSNorm)", "norm"),
        (6.45, lm, "io"),
    ], font=font, half=half, gap=0.12)  # fmt: skip
    ax.text(x, 7.3, "the stack", **_t(font))
    xb, wb, xr = 3.3, 2.5, 4.85  # one layer, and its residual line
    layer = [
        (1.25, "input_layernorm\n(RMSNorm)", "norm"),
        (2.35, f"self-attention,\nRoPE on $q, k$;\n$H$ = {H}, $H_{{kv}}$ = {Hkv}", "attn"),
        (3.25, "$+$", "plain"),
        (4.05, "post_attention_layernorm\n(RMSNorm)", "norm"),
        (5.0, f"SwiGLU, $F$ = {Fw:,}:\nsilu(gate) $\\odot$ up; down", "ff"),
        (6.05, "$+$", "plain"),
    ]
    _arrow(ax, xb, 0.1, xb, layer[0][0] - half(layer[0][1]))
    ax.text(xb + 0.1, 0.32, "$x$", fontsize=font, ha="left", va="center")
    _box_column(ax, xb, wb, layer, font=font, half=half, end=(6.75, None, None), plus=(0.42, 0.4))
    for y_from, y_add in [(0.75, 3.25), (3.5, 6.05)]:  # the residual, around norm and sub-layer
        _line(ax, [xb, xr, xr], [y_from, y_from, y_add])
        _arrow(ax, xr, y_add, xb + 0.21, y_add)
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (1.98, 0.6), 3.02, 5.85, fc="none", ec="0.5", ls="--", boxstyle="round,pad=0.05"
        )
    )
    ax.text(xb, 7.3, "one layer (pre-norm)", **_t(font))
    extra = f"; window {c.sliding_window:,}" if c.sliding_window else ""
    ax.text(width / 2, 7.75, f"{L} layers; {H} query and {Hkv} key/value\nheads of $D_h$ = "
            f"{c.head_dim}{extra}", **_t(font))  # fmt: skip
    _zoom_lines(ax, x + w / 2, 2.3, half("layer 0"), 1.98, (0.6, 6.45))
    return fig


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
def minilm_diagram(config=None):
    """Chapter 15's all-MiniLM-L6-v2 in two parts, drawn for a phone's column (5 inches, 13.5-point
    text). Top: MiniLM's distillation (Wang et al. 2020): the student's last layer matches the
    BERT-base-sized teacher's attention distributions A = softmax(QK^T/sqrt(d_k)) and value relations
    VR = softmax(VV^T/sqrt(d_k)), both T x T and per head (so both have as many heads), by KL
    divergence; then every second layer of the student (its dashed column, not only its last layer) is
    kept and the model is fine-tuned on sentence pairs.
    Bottom: the sentence vector, tokens -> embeddings -> the layers -> the mean over the real tokens
    -> length 1. ``config``: a ``lib.bert.BertConfig`` (default the model's: 6 layers, 12 heads,
    width 384). Returns the Figure."""
    from lib.bert import BertConfig

    config = (
        BertConfig(
            num_hidden_layers=6, hidden_size=384, num_attention_heads=12, intermediate_size=1536
        )
        if config is None
        else config
    )
    check_type(config, "config", BertConfig)
    L, D, H = config.num_hidden_layers, config.hidden_size, config.num_attention_heads
    alt = (
        "Top, how the model was made. A teacher of BERT-base size (12 layers, width 768) and a "
        f"student of width {D} with {2 * L} layers; from the last layer of each, the attention "
        "distributions A = softmax(QK^T / sqrt(d_k)) of every head and the value relations "
        "VR = softmax(VV^T / sqrt(d_k)) of every head, both T x T matrices whatever the width, are "
        "compared by KL divergence, head by head, so the student learns to match the teacher's (the "
        f"two have the same number of heads, {H}). Then every second layer of the "
        f"whole student is kept ({L} layers), and the model is fine-tuned on sentence pairs with a "
        "contrastive loss on the mean of its token vectors. Bottom, how it turns a sentence into a "
        "vector: the tokens from [CLS] to [SEP], their embeddings (word + position + segment, width "
        f"{D}), {L} layers of {H} heads, one vector of {D} numbers per token, the mean over the real "
        "tokens ([CLS] and [SEP] included, padding not), scaled to length 1: the sentence vector, "
        f"{D} numbers."
    )
    # 5 inches: with the 0.1-inch margins of a tight bounding box, 572 px at the site's 110 dpi, under
    # the 600 px above which the site widens a picture on a phone (book/_static/reader.js)
    width, height = 5.0, 7.9
    font = _phone_font(width)
    fig, ax = _canvas(width, height, alt)
    # top: distillation, teacher on the left, student on the right
    ax.text(width / 2, 7.65, "how it was made", fontweight="bold", **_t(font))
    xt, xs, w = 1.1, 3.9, 1.95
    _box(ax, xt, 7.0, "teacher\n12 layers,\nwidth 768", "io", w, 0.9, font)
    _box(ax, xs, 7.0, f"student\n{2 * L} layers,\nwidth {D}", "io", w, 0.9, font)
    for x in (xt, xs):
        _arrow(ax, x, 6.55, x, 6.3)
        _box(ax, x, 5.8, "last layer:\n$A$, $VR$: $T \\times T$", "attn", w, 0.95, font)
    _arrow(ax, xt + w / 2 + 0.02, 5.8, xs - w / 2 - 0.02, 5.8)
    ax.text(width / 2, 6.05, "KL", **_t(font))
    ax.text(width / 2, 4.97, "$A = \\mathrm{softmax}(QK^\\top/\\sqrt{d_k})$ per head", **_t(font))
    ax.text(width / 2, 4.63, "$VR = \\mathrm{softmax}(VV^\\top/\\sqrt{d_k})$ per head", **_t(font))
    ax.text(
        width / 2,
        4.29,
        f"$T \\times T$ whatever the width; {H} heads in both",
        color="0.35",
        **_t(font),
    )
    # the student's column as a whole (the model, not its last layer) goes on to be pruned
    top, bottom, pad = 7.52, 5.2, 0.07
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (xs - w / 2 - pad, bottom), w + 2 * pad, top - bottom, fc="none", ec="0.5", ls="--",
            boxstyle="round,pad=0,rounding_size=0.08",
        )
    )  # fmt: skip
    _arrow(ax, xs + 0.75, bottom, xs + 0.75, 3.96)
    _box(
        ax,
        width / 2,
        3.65,
        f"keep every second layer: {L}; then\nfine-tune on sentence pairs",
        "ff",
        4.6,
        0.62,
        font,
    )
    # bottom: the sentence vector
    ax.text(width / 2, 3.05, "how it makes a sentence vector", fontweight="bold", **_t(font))
    steps = [
        ("[CLS] the animal ... tired . [SEP]", "plain"),
        (f"embeddings, width {D}", "emb"),
        (f"{L} layers, {H} heads: a vector per token", "attn"),
        ("mean over the real tokens", "ff"),
        (f"scale to length 1: {D} numbers", "io"),
    ]
    ys = [2.6 - 0.57 * i for i in range(len(steps))]
    for i, ((text, kind), y) in enumerate(zip(steps, ys)):
        _box(ax, width / 2, y, text, kind, 4.6, 0.38, font)
        if i:
            _arrow(ax, width / 2, ys[i - 1] - 0.19, width / 2, y + 0.19)
    return fig


_POSITION_BOX = {
    "learned": "learned table, trained",
    "sinusoidal": "sinusoidal table, fixed",
    "none": "none: $\\mathbf{p}_t = 0$",
    "rope": "none here: RoPE turns\nq and k inside attention",
    "alibi": "none here: ALiBi biases\nthe scores inside attention",
}


_ALLOWED = "#3182bd"  # a cell of a mask where the query may attend
_ALT_NONE = {
    "none": "none: p_t = 0",
    "rope": "none here: RoPE turns the queries and keys inside attention",
    "alibi": "none here: ALiBi biases the scores inside attention",
}


# Long by design: one drawing call per box and arrow of the picture, in the order it is read.
# positional_diagram's narrow labels with a subscript (w_t, p_t, x_t, y_t) and the place t beside them:
# at 16.5 points, as elmo_diagram's, not the text's 14, where their subscripts read at about 8 CSS px on a
# 360 px phone (reader s42, chapter 8)
_POSITIONAL_NARROW_MATH = 16.5


def positional_diagram(config, *, narrow=False):
    """Chapter 8's model (the Attention Playground's, ``lib.playground``): where the position vector
    enters. Each symbol's token embedding e plus the position vector p of its place (a learned
    table, the sinusoidal one or none, from ``config.positional``), then ``config.n_layers``
    encoder layers (pre-LN self-attention and feed-forward, each with a residual add; beside the
    attention, the bidirectional and the causal mask, ``config``'s drawn in full), a LayerNorm and
    the read-out to the vocabulary's symbols. ``config``: a ``lib.playground.PlaygroundConfig``.
    ``narrow``: drawn for a phone's column, 5.2 inches wide, its text at 12 CSS px there. Returns
    the Figure."""
    from lib.playground import LENGTH, VOCAB, PlaygroundConfig

    check_type(config, "config", PlaygroundConfig)
    if not isinstance(narrow, bool):
        raise TypeError(f"narrow: expected True or False, got {narrow!r}")
    D, H, N, L = config.d_model, config.n_heads, config.n_layers, config.train_length
    L = min(L, LENGTH) if config.positional in ("learned", "sinusoidal") else L
    kind = config.positional
    mask = "causal" if config.causal else "bidirectional"
    table = f"{LENGTH} x {D}" if kind in ("learned", "sinusoidal") else None
    alt = _positional_alt(config, L, table, mask)
    font = _phone_font(5.2) if narrow else _FONT
    math = _POSITIONAL_NARROW_MATH if narrow else _FONT  # the subscripted labels
    W, Ht = (5.2, 7.45) if narrow else (7.6, 6.85)
    fig, ax = _canvas(W, Ht, alt)
    xc = 2.0 if narrow else 3.0  # the flow's column
    bw = 3.5 if narrow else 4.4  # its boxes' width
    _draw_positions_input(ax, xc, 0.44 if narrow else 0.52, font, math)
    y_plus = _draw_embedding_sum(ax, xc, bw, kind, table, D, (font, math), narrow)
    # the encoder layer, pre-LN, in a dashed frame
    y_att, y_ff = 3.75, 4.75
    _arrow(ax, xc, y_plus + 0.2, xc, y_att - 0.33)
    _box(
        ax,
        xc,
        y_att,
        f"LayerNorm, self-attention\n{H} heads, {mask}, $+$ residual",
        "attn",
        w=bw,
        h=0.62,
        fontsize=font,
    )
    _arrow(ax, xc, y_att + 0.31, xc, y_ff - 0.31)
    _box(
        ax,
        xc,
        y_ff,
        f"LayerNorm, feed-forward\n{D} $\\to$ {4 * D} $\\to$ {D}, $+$ residual",
        "ff",
        w=bw,
        h=0.62,
        fontsize=font,
    )
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (xc - bw / 2 - 0.12, y_att - 0.42),
            bw + 0.24,
            y_ff - y_att + 1.15,
            fc="none",
            ec="0.5",
            ls="--",
            boxstyle="round,pad=0.03",
        )
    )
    layers = "encoder layer" + (f", x {N}" if N > 1 else "")
    x_layers = xc - bw / 2 - (0.08 if narrow else 0)  # narrow: "..., x 2" clear of the arrow
    ax.text(x_layers, y_ff + 0.53, layers, ha="left", va="center", fontsize=font)
    _draw_masks(ax, config.causal, xc + bw / 2, y_att, y_ff, font, narrow)
    # LayerNorm, read-out, the answer
    y_out, y_ans = 6.05 if narrow else 6.0, 6.75 if narrow else 6.55
    _arrow(ax, xc, y_ff + 0.31, xc, y_out - 0.3)
    _box(
        ax,
        xc,
        y_out,
        f"LayerNorm, read-out\nlinear {D} $\\to$ {VOCAB} scores",
        "io",
        w=bw,
        h=0.6,
        fontsize=font,
    )
    _arrow(ax, xc, y_out + 0.3, xc, y_ans - 0.2)
    answer = f"answer $y_t$: one of {VOCAB} symbols, at every place"  # 4.35 inches at 14 points
    if narrow:  # on two lines, at the labels' size
        answer = answer.replace(": ", ":\n", 1)
    ax.text(W / 2 if narrow else xc, y_ans + (0.17 if narrow else 0.02), answer, **_t(math))
    return fig


def _positional_alt(config, L, table, mask):
    """positional_diagram's alt text."""
    from lib.playground import VOCAB

    D, H, N, kind = config.d_model, config.n_heads, config.n_layers, config.positional
    return (
        f"A vertical flow, read from the bottom. The input, {L} symbols (here 3 1 4 1 5 9 2 6), "
        "positions 0 to 7. Each symbol w_t goes to the token embedding e of w_t (a table of "
        f"{VOCAB} symbols by {D}); its place t goes to the position vector p_t ("
        + (f"a {kind} table of {table}" if table else _ALT_NONE[kind])
        + "). The two meet in a plus sign: x_t = e of w_t + p_t, one vector of width "
        f"{D} per position. Then "
        + ("the encoder layer" if N == 1 else f"{N} encoder layers, each")
        + ": LayerNorm and "
        f"self-attention with {H} heads, a residual add, LayerNorm and the feed-forward network "
        f"({D} to {4 * D} to {D}), a residual add. Beside the attention, two 8 by 8 masks: "
        "bidirectional (every cell allowed) and causal (the lower triangle); the "
        f"{mask} one is drawn in full, the other faded. Then a LayerNorm and the read-out, a "
        f"linear map from {D} to {VOCAB} scores, one per symbol, at every position: the answer y_t."
    )


def _draw_positions_input(ax, xc, step, font, math):
    """positional_diagram's input: one box per position, centred on ``xc``, the place under it."""
    xs = [xc + step * (i - 3.5) for i in range(8)]
    for i, (x, s) in enumerate(zip(xs, "31415926")):
        _box(ax, x, 0.75, s, "io", w=step - 0.06, h=0.4, fontsize=font)
        ax.text(x, 0.3, str(i), color="0.35", **_t(font))
    ax.text(xs[-1] + 0.35, 0.75, "symbol $w_t$", ha="left", va="center", fontsize=math)
    ax.text(xs[-1] + 0.35, 0.3, "place $t$", ha="left", va="center", fontsize=math, color="0.35")


def _draw_embedding_sum(ax, xc, bw, kind, table, D, fonts, narrow):
    """positional_diagram's token embedding and position vector, side by side above the input,
    meeting in a plus; returns the plus's height. ``fonts``: the text's and the subscripted labels'
    sizes (each box's line with a subscript at the second)."""
    from lib.playground import VOCAB

    y_emb, y_plus = 1.75, 2.65
    w_tok = w_pos = bw / 2 - 0.1
    x_tok, x_pos = xc - bw / 4 - 0.05, xc + bw / 4 + 0.05
    if narrow:  # wider than the flow's boxes: "token embedding" is 1.67 inches at 14 points
        w_tok, w_pos = 1.85, 1.85 if table else 2.75  # "the scores inside attention": 2.53
        x_tok, x_pos = xc - 0.05 - w_tok / 2, xc + 0.05 + w_pos / 2
    font, math = fonts
    _box(ax, x_tok, y_emb, "", "emb", w=w_tok, h=0.75)
    ax.text(x_tok, y_emb + 0.17, "token embedding", **_t(font))
    ax.text(x_tok, y_emb - 0.16, f"$\\mathbf{{e}}_{{w_t}}$: {VOCAB} x {D}", **_t(math))
    _box(ax, x_pos, y_emb, "", "ctx" if table else "plain", w=w_pos, h=0.75)
    if table:
        ax.text(x_pos, y_emb + 0.15, "position $\\mathbf{p}_t$:", **_t(math))
        ax.text(x_pos, y_emb - 0.18, f"{kind}, {table}", **_t(font))
    else:
        size = math if "_t" in _POSITION_BOX[kind] else font
        ax.text(x_pos, y_emb, _POSITION_BOX[kind], **_t(size))
    _arrow(ax, x_tok, 1.0, x_tok, y_emb - 0.38)  # the symbol to its embedding
    _arrow(ax, x_pos, 1.0, x_pos, y_emb - 0.38, color="0.45")  # its place to the position's
    ax.text(x_tok + 0.08, 1.18, "$w_t$", ha="left", va="center", fontsize=math)
    ax.text(x_pos + 0.08, 1.18, "$t$", ha="left", va="center", fontsize=math, color="0.35")
    _box(ax, xc, y_plus, "$+$", "plain", w=0.4, h=0.4, fontsize=font)
    _line(ax, [x_tok, x_tok, xc - 0.2], [y_emb + 0.38, y_plus, y_plus])
    _arrow(ax, x_tok + 0.3, y_plus, xc - 0.2, y_plus)
    _line(ax, [x_pos, x_pos, xc + 0.2], [y_emb + 0.38, y_plus, y_plus])
    _arrow(ax, x_pos - 0.3, y_plus, xc + 0.2, y_plus)
    ax.text(
        xc + 0.35,
        y_plus + 0.42,
        f"$\\mathbf{{x}}_t = \\mathbf{{e}}_{{w_t}} + \\mathbf{{p}}_t$, width {D}",
        ha="left",
        va="center",
        fontsize=math,
    )
    return y_plus


def _draw_masks(ax, causal_model, x_right, y_att, y_ff, font, narrow):
    """positional_diagram's two masks, right of ``x_right`` beside the layer: one above the other on
    a phone, side by side otherwise; the model's drawn in full, the other faded (not its name)."""
    size = 0.72 if narrow else 0.9
    cell = size / 8
    if narrow:  # 0.4 right of the boxes: "bidirectional" over it clears the frame at 14 points
        corners = [(x_right + 0.4, y_ff - 0.03), (x_right + 0.4, y_att - 0.15)]
    else:
        corners = [(x_right + 0.25, y_att - 0.25), (x_right + 1.35, y_att - 0.25)]
    for (name, causal), (x0, y0) in zip([("bidirectional", False), ("causal", True)], corners):
        chosen = causal == causal_model
        alpha = 1.0 if chosen else 0.3
        for q in range(8):  # query q's row, from the top; key k's column
            for k in range(8):
                allowed = k <= q or not causal
                ax.add_patch(
                    mpatches.Rectangle(
                        (x0 + k * cell, y0 + (7 - q) * cell),
                        cell,
                        cell,
                        lw=0.3,
                        ec="white",
                        fc=_ALLOWED if allowed else "0.9",
                        alpha=alpha,
                    )
                )
        ax.add_patch(
            mpatches.Rectangle(
                (x0, y0), size, size, fc="none", ec="0.25", lw=1.2 if chosen else 0.5, alpha=alpha
            )
        )
        y_label = y0 + size + 0.2 if narrow else y0 - 0.25
        # both names dark: only the other mask is faded (its name in 0.55 grey was nearly
        # invisible on a phone, a reader's report on chapter 8)
        ax.text(x0 + size / 2, y_label, name, color="0.1", **_t(font))


def gpt_classifier_diagram(words=("the", "keys", "are", "old"), n_classes=2):
    """Chapter 13's GPT fine-tuned as a classifier (Radford et al. 2018; ``lib.gpt.GPTClassifier``):
    the input ``<bos> words <eos>``, one column per token, runs through the pretrained GPT (its
    blocks and ln_f); the head, a new linear layer D -> ``n_classes``, reads the final state of the
    last token, <eos>, the only position that has seen every token under the causal mask; the
    states of the other positions are not read. Drawn for a phone: 5.0 inches wide, its text at 12
    CSS px there. Returns the Figure."""
    if not isinstance(words, (list, tuple)) or not all(isinstance(w, str) for w in words):
        raise TypeError(f"words: expected a list or tuple of strings, got {words!r}")
    if not 1 <= len(words) <= 5:
        raise ValueError(f"words: expected 1 to 5 words (one column each), got {len(words)}")
    check_int(n_classes, "n_classes", minimum=2)
    tokens = ["<bos>", *words, "<eos>"]
    T = len(tokens)
    alt = (
        f"GPT as a classifier. Bottom, the input tokens {' '.join(tokens)}, one column each, "
        "go up through the pretrained GPT (token and position embeddings, the blocks with their "
        "causal mask, and the final LayerNorm ln_f), which gives one final state h per position. "
        f"Only the state of the last token, {tokens[-1]}, is read: a new linear head maps it "
        f"from D to {n_classes} classes and a softmax gives P(y | x). The other states are not "
        "read: each of them has seen only the tokens up to its own position."
    )
    width, height = 5.0, 5.0
    fig, ax = _canvas(width, height, alt)
    font = _phone_font(width)
    step = (width - 0.3) / T
    xs = [0.15 + step * (t + 0.5) for t in range(T)]
    y_tok, y_gpt, y_h, y_head, y_out = 0.35, 1.55, 2.75, 3.65, 4.5
    for x, token in zip(xs, tokens):
        _box(ax, x, y_tok, token, "io", w=step - 0.06, h=0.42, fontsize=font)
        _arrow(ax, x, y_tok + 0.21, x, y_gpt - 0.45)
    _box(ax, width / 2, y_gpt, "pretrained GPT: wte + wpe,\nN masked blocks, ln_f", "attn",
         w=width - 0.4, h=0.9, fontsize=font)  # fmt: skip
    for t, x in enumerate(xs):
        last = t == T - 1
        _arrow(ax, x, y_gpt + 0.45, x, y_h - 0.22)
        _box(ax, x, y_h, "$h$", "norm" if not last else "emb", w=min(0.5, step - 0.1), h=0.42,
             fontsize=font, color="0.55" if not last else "black")  # fmt: skip
    _arrow(ax, xs[-1], y_h + 0.22, xs[-1], y_head - 0.25)
    x_head = width - 1.05  # over the last columns, clear of the note on the left
    _box(ax, x_head, y_head, f"head: $D \\to {n_classes}$", "ff", w=1.9, h=0.48, fontsize=font)
    _arrow(ax, x_head, y_head + 0.24, x_head, y_out - 0.24)
    _box(ax, x_head, y_out, "softmax: $P(y \\mid x)$", "io", w=1.9, h=0.48, fontsize=font)
    ax.text(1.45, y_h + 0.62, "not read: each has seen\nonly the tokens up to it",
            color="0.35", **_t(font))  # fmt: skip
    return fig
