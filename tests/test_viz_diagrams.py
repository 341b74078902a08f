"""lib.viz.diagrams: the architecture drawings of issue 37, checked by what they put on the
Figure (labels, boxes, numbers from the configs), by their argument checks, by being drawn the same
twice, and by the chapters' alt text matching the Figure's."""

import io
import json
import math
import re
import struct
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle  # noqa: E402

from lib import viz  # noqa: E402
from lib.bert import BertConfig  # noqa: E402
from lib.electra import ElectraConfig  # noqa: E402
from lib.elmo import ELMoConfig  # noqa: E402
from lib.gpt import GPTConfig  # noqa: E402
from lib.llama import LlamaConfig  # noqa: E402
from lib.playground import PlaygroundConfig  # noqa: E402
from lib.viz.diagrams import _CTX, _DIAGRAM_COLORS, _QUERY  # noqa: E402
from lib.viz.interactive import PHONE_COLUMN_PX  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SRC, TGT = "the woman always falls".split(), "la femme tombe toujours".split()
PAIR = "[CLS] my dog is cute [SEP] he likes play ##ing [SEP]".split()
# chapter 10's tokenizer pipeline on its sentence up to the price: what each step makes of it
PIPELINE = {
    "short": "The Café didn't charge €3.50",
    "normalized": "the cafe didn't charge €3.50",
    "words": ["the", "cafe", "didn", "'", "t", "charge", "€3", ".", "50"],
    "word_pieces": ["the", "cafe", "didn", "'", "t", "charge", "€", "##3", ".", "50"],
    "ids": [1996, 7668, 2134, 1005, 1056, 3715, 1574, 2509, 1012, 2753],
    "decoded": "the cafe didn ' t charge €3 . 50",
}
REVIEW = ["the soup was superb .".split(), "the music was awful .".split()]
SMALL_BERT = BertConfig(
    vocab_size=300,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=256,
    max_position_embeddings=32,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def boxes(fig):
    return [p for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)]


def arrows(fig):
    return [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]


def png(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40)
    return buffer.getvalue()


def _ends(arrow):
    """An arrow's tail and tip, in the Figure's inches (matplotlib keeps them in _posA_posB)."""
    return tuple(map(tuple, arrow._posA_posB))


def _center(box):
    return box.get_x() + box.get_width() / 2, box.get_y() + box.get_height() / 2


def _boxes_labelled(fig, label):
    """The boxes that hold the text ``label`` (a box's label sits at its centre)."""
    centres = [t.get_position() for t in fig.axes[0].texts if t.get_text() == label]
    return [
        b
        for b in boxes(fig)
        if any(abs(_center(b)[0] - x) < 1e-9 and abs(_center(b)[1] - y) < 1e-9 for x, y in centres)
    ]


def _on(point, box, tol=0.03):
    x, y = point
    return (
        box.get_x() - tol <= x <= box.get_x() + box.get_width() + tol
        and box.get_y() - tol <= y <= box.get_y() + box.get_height() + tol
    )


def _links(fig, a, b):
    """The arrows that leave box ``a`` and end at box ``b``."""
    return [p for p in arrows(fig) if _on(_ends(p)[0], a) and _on(_ends(p)[1], b)]


def _red(arrow):
    return arrow.get_edgecolor() == to_rgba(_CTX)


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("with_attention", [False, True])
def test_seq2seq_diagram_draws_what_the_chapter_s_equations_say(with_attention, narrow):
    """The wide drawing and the one for a phone (the decoder above the encoder) say the same."""
    T = len(TGT) + 1  # decoder steps, <eos> included
    fig = viz.seq2seq_diagram(SRC, TGT, d_hidden=64, with_attention=with_attention, narrow=narrow)
    t = texts(fig)
    for word in SRC + TGT + ["<bos>", "<eos>"]:
        assert word in t
    h = [_boxes_labelled(fig, f"$\\mathbf{{h}}_{j}$")[0] for j in range(1, len(SRC) + 1)]
    s = [_boxes_labelled(fig, f"$\\mathbf{{s}}_{k}$")[0] for k in range(T + 1)]  # s_0 .. s_T
    # the summary: beside s_0 (wide) or under it (narrow), below every context box
    summary = min(_boxes_labelled(fig, "$\\mathbf{c}$"), key=lambda b: _center(b)[1])
    assert _center(summary)[1] <= _center(s[0])[1] + 0.01

    # c = [forward h_S; backward h_1]: from each, one arrow or one line whose arrow ends at c
    def paths_to_summary(box):
        routed = [
            ln
            for ln in fig.axes[0].lines
            if _on((ln.get_xdata()[0], ln.get_ydata()[0]), box)
            and any(
                _ends(p)[0] == (ln.get_xdata()[-1], ln.get_ydata()[-1])
                and _on(_ends(p)[1], summary)
                for p in arrows(fig)
            )
        ]
        return len(_links(fig, box, summary)) + len(routed)

    assert paths_to_summary(h[-1]) == paths_to_summary(h[0]) == 1
    assert all(paths_to_summary(b) == 0 for b in h[1:-1])
    # s_0 = tanh(W_s c) comes from the summary and from nothing else
    into_s0 = [p for p in arrows(fig) if _on(_ends(p)[1], s[0])]
    assert into_s0 == _links(fig, summary, s[0]) and len(into_s0) == 1 and not _red(into_s0[0])
    assert "$\\mathbf{s}_0=\\tanh(W_s\\mathbf{c})$" in t and "s_0 = tanh(W_s c)" in fig.alt_text
    # each step has a context box of its own, between s_{t-1} and s_t
    label = "$\\mathbf{{c}}_{}$" if with_attention else "$\\mathbf{{c}}$"
    contexts = []
    for k in range(T):
        middle = (_center(s[k])[0] + _center(s[k + 1])[0]) / 2
        (box,) = [
            b
            for b in _boxes_labelled(
                fig, label.format(k + 1) if with_attention else "$\\mathbf{c}$"
            )
            if b is not summary and abs(_center(b)[0] - middle) < 0.01
        ]
        contexts.append(box)
    for k, box in enumerate(contexts):
        assert len(_links(fig, s[k], s[k + 1])) == 1  # s_t = GRU(s_{t-1}, ...)
        # its context enters s_t by a red arrow of its own
        assert [_red(p) for p in _links(fig, box, s[k + 1])] == [True]
        # with attention the previous state s_{t-1} enters the scores e_tj of step t
        assert len(_links(fig, s[k], box)) == (1 if with_attention else 0)
        # what fills the box comes from above: the summary c itself (red) or every h_j (grey)
        (fill,) = [
            p
            for p in arrows(fig)
            if _on(_ends(p)[1], box) and _ends(p)[0][1] > _center(box)[1] + 0.5
        ]
        assert _red(fill) is not with_attention
    assert sum(_red(p) for p in arrows(fig)) == (T if with_attention else 2 * T)
    alphas = [x for x in t if re.fullmatch(r"\$\\alpha_\{t\d\}\$", x)]
    assert len(alphas) == (len(SRC) if with_attention else 0)
    assert "128 numbers" in fig.alt_text
    # drawn for a phone, as DRAWN_FOR_PHONES below; the wide one is in CALLS. 15 points, the words
    # 13, on 4.92 inches (was 11.5, then 13: its subscripts read at 6-7 CSS px, readers' reports on
    # ch. 1; the words were 12 on 5.2 inches, 10.5 CSS px on a phone)
    if narrow:
        width, height = fig.get_size_inches()
        sizes = [t.get_fontsize() for t in fig.axes[0].texts if t.get_text()]
        assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.3
        # the words at 13.5 (13 until the steps were 0.95 apart: a reader's report on ch. 1 found
        # them the chapter's smallest text, their boxes touching)
        words = {x.get_fontsize() for x in fig.axes[0].texts if x.get_text() in SRC + TGT}
        assert words == {13.5} and min(s for s in sizes if s != 13.5) >= 15  # every other label
        # the word boxes apart, each row's, by 0.1 inches of the layout at least (0.04 to 0.06 when they
        # touched)
        for row in {
            round(_center(b)[1], 2)
            for b in boxes(fig)
            if b.get_facecolor()[:3] in (to_rgba("white")[:3], to_rgba("#dadaeb")[:3])
        }:
            same = sorted(
                (b for b in boxes(fig) if round(_center(b)[1], 2) == row), key=lambda b: b.get_x()
            )
            gaps = [b.get_x() - (a.get_x() + a.get_width()) for a, b in zip(same, same[1:])]
            assert min(gaps, default=1) >= 0.1, (row, gaps)
        # the weights' labels larger still: at 15 their subscript t1 read at about 8 CSS px (s28)
        weights = [x for x in fig.axes[0].texts if x.get_text() in alphas]
        assert len(weights) == len(alphas) and all(x.get_fontsize() >= 16.5 for x in weights)
        assert "Bottom: the source words" in fig.alt_text and "Top: the decoder" in fig.alt_text
        narrow_again = viz.seq2seq_diagram(SRC, TGT, with_attention=with_attention, narrow=True)
        assert png(fig) == png(narrow_again)
    if with_attention:
        assert "$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$" in " ".join(t)
        assert "alpha_tj" in fig.alt_text and "s_(t-1)" in fig.alt_text
    # no line runs past c along its edge or through it (the grey bus of every h_j ran up c's
    # left edge and read as c feeding the contexts: a reader's report on Fig. 1.3)
    left, right = summary.get_x(), summary.get_x() + summary.get_width()
    bottom, top = summary.get_y(), summary.get_y() + summary.get_height()
    for ln in fig.axes[0].lines:
        xs, ys = list(ln.get_xdata()), list(ln.get_ydata())
        for x0, y0, x1, y1 in zip(xs, ys, xs[1:], ys[1:]):
            if x0 == x1 and min(y0, y1) < bottom and max(y0, y1) > top:  # past c's height
                assert not left - 0.08 < x0 < right + 0.08, (x0, left, right)


def test_seq2seq_diagram_checks_its_arguments():
    with pytest.raises(ValueError, match="source"):
        viz.seq2seq_diagram([], TGT)
    with pytest.raises(ValueError, match="target"):
        viz.seq2seq_diagram(SRC, TGT + ["trop", "long"])
    with pytest.raises(TypeError, match="source"):
        viz.seq2seq_diagram("the woman", TGT)
    with pytest.raises(ValueError, match="d_hidden"):
        viz.seq2seq_diagram(SRC, TGT, d_hidden=0)
    with pytest.raises(TypeError, match="narrow"):
        viz.seq2seq_diagram(SRC, TGT, narrow="yes")


def test_self_attention_diagram_labels_every_matrix_with_its_shape():
    fig = viz.self_attention_diagram(11, 10, 5, 10)
    joined = "\n".join(texts(fig))
    for label in ["$X$", "$Q = XW_Q$", "$K = XW_K$", "$V = XW_V$"]:
        assert label in joined
    # the weights label the arrows X -> Q, K, V (review ch06 s32, item 5): text, not boxes
    for name, width in [("Q", 5), ("K", 5), ("V", 10)]:
        assert f"$\\times W_{name}$\n" in joined and f"\n[10, {width}]" in joined
    assert "$S = QK^\\top/\\sqrt{d_k}$\n$[T, T]$\n[11, 11]" in joined
    assert "$A = \\mathrm{softmax}(S)$" in joined and "$Z = AV$\n$[T, d_v]$\n[11, 10]" in joined
    assert joined.count("[11, 5]") == 2 and joined.count("[10, 5]") == 2
    assert len(boxes(fig)) == 7 and len(arrows(fig)) == 3 + 2 + 1 + 2
    assert "[11, 10]" in fig.alt_text
    with pytest.raises(ValueError, match="d_k"):
        viz.self_attention_diagram(11, 10, 0, 10)
    with pytest.raises(TypeError, match="seq_len"):
        viz.self_attention_diagram(11.0, 10, 5, 10)


def test_residual_second_layer_diagram_draws_the_residual_around_the_first_step():
    """Chapter 6's exercise 1 (reader's report s15, 10): X, the first step, the sum with X carried
    around it, H and the second step with the reader's W_Q2, W_K2; the same steps wide and narrow."""
    wide, narrow = (viz.residual_second_layer_diagram(11, 10, 2, narrow=n) for n in (False, True))
    for fig in (wide, narrow):
        joined = " | ".join(texts(fig))
        assert "$H = X + Z$\n[11, 10]" in joined and "[10, 2]" in joined and "+" in texts(fig)
        assert "residual" in joined and "\\sqrt{2}" in joined and "[11, 11]" in joined
        assert len(boxes(fig)) == 4 and len(arrows(fig)) == 6
    assert wide.alt_text == narrow.alt_text and "H = X + Z [11, 10]" in wide.alt_text
    with pytest.raises(ValueError, match="d_2"):
        viz.residual_second_layer_diagram(11, 10, 0)
    with pytest.raises(TypeError, match="narrow"):
        viz.residual_second_layer_diagram(11, 10, 2, narrow=1)


def test_self_attention_diagram_narrow_is_legible_on_a_phone():
    """Chapter 6 draws it narrow (reader's report 6d): 5.2 inches wide with 13-point text, flowing
    down the page; the same boxes, arrows, words and alt text as the wide drawing."""
    wide, narrow = (viz.self_attention_diagram(11, 10, 5, 10, narrow=n) for n in (False, True))
    width, height = narrow.get_size_inches()
    sizes = [t.get_fontsize() for t in narrow.axes[0].texts if t.get_text()]
    assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.5
    assert len(boxes(narrow)) == len(boxes(wide)) == 7
    assert len(arrows(narrow)) == len(arrows(wide)) and narrow.alt_text == wide.alt_text
    assert sorted(t.replace("\n", " ") for t in texts(narrow) if "$[" not in t) == sorted(
        t.replace("\n", " ") for t in texts(wide) if "$[" not in t
    )
    assert sorted(t for t in texts(narrow) if "$[" in t) == sorted(
        t for t in texts(wide) if "$[" in t
    )
    with pytest.raises(TypeError, match="narrow"):
        viz.self_attention_diagram(11, 10, 5, 10, narrow=1)


def test_connectivity_diagram_joins_neighbours_in_a_chain_and_every_pair_in_attention():
    """Chapter 6 (reader's report rv06b, 11): the recurrent row has an arrow from each position to
    the next only (n - 1 hand-overs from the first to the last), the self-attention row an arc for
    every pair, the first-to-last one highlighted: one step."""
    fig = viz.connectivity_diagram(6)
    links = arrows(fig)
    chain = [a for a in links if a.get_arrowstyle().__class__.__name__ != "Curve"]
    arcs = [a for a in links if a.get_arrowstyle().__class__.__name__ == "Curve"]
    assert len(chain) == 5 and len(arcs) == 15
    # every chain arrow joins neighbours: its ends one pitch apart, from left to right
    pitch = 4.1 / 5
    for a in chain:
        (x0, _), (x1, _) = a._posA_posB
        assert abs((x1 - x0) - (pitch - 0.4)) < 1e-9
    widest = max(arcs, key=lambda a: abs(a._posA_posB[1][0] - a._posA_posB[0][0]))
    assert widest.get_linewidth() > max(a.get_linewidth() for a in arcs if a is not widest)
    assert "recurrent network: 0 to 5 in 5 steps" in texts(fig)
    assert "self-attention: 0 to 5 in 1 step" in texts(fig)
    assert "(15 arcs)" in fig.alt_text and "after 5 hand-overs" in fig.alt_text
    assert "(3 arcs)" in viz.connectivity_diagram(3).alt_text
    with pytest.raises(ValueError, match="n_tokens"):
        viz.connectivity_diagram(1)
    with pytest.raises(ValueError, match="n_tokens"):
        viz.connectivity_diagram(9)
    with pytest.raises(TypeError, match="n_tokens"):
        viz.connectivity_diagram(6.0)


def test_multi_head_diagram_draws_one_box_per_head():
    fig = viz.multi_head_diagram(12, 3, 5)
    heads = [s for s in texts(fig) if s.startswith("head ")]
    assert heads == [f"head {h}\n$[T, D/H]$\n[5, 4]" for h in range(3)]
    assert "split_heads\n$[H, T, D/H]$\n[3, 5, 4]" in texts(fig)
    # each head box has its own tint, in head order
    palette = {to_rgba(c) for c in _DIAGRAM_COLORS.values()}
    tints = [b.get_facecolor() for b in boxes(fig) if b.get_facecolor() not in palette]
    assert len(tints) == 3 and len(set(tints)) == 3
    big = viz.multi_head_diagram(768, 12, 1024)
    heads = [s.split("\n")[0] for s in texts(big) if s.startswith("head ")]
    assert heads == ["head 0", "head 1", "head 2", "head 11"] and "$\\cdots$" in texts(big)
    assert "H = 12 heads" in big.alt_text and "width D/H = 64" in big.alt_text
    with pytest.raises(ValueError, match="n_heads"):
        viz.multi_head_diagram(10, 3, 5)
    with pytest.raises(ValueError, match="seq_len"):
        viz.multi_head_diagram(12, 3, 0)


def test_multi_head_diagram_narrow_is_legible_on_a_phone():
    """Chapter 7 draws it narrow (issue 33): 5.2 inches wide with 13-point text, split_heads under
    Q, K, V; the same boxes, connections and alt text as the wide drawing, which keeps its size."""
    wide, narrow = (viz.multi_head_diagram(12, 3, 5, narrow=n) for n in (False, True))
    assert tuple(wide.get_size_inches()) == (9.0, 5.2)
    width, height = narrow.get_size_inches()
    sizes = [t.get_fontsize() for t in narrow.axes[0].texts if t.get_text()]
    assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.5
    assert narrow.alt_text == wide.alt_text
    assert sorted(texts(narrow)) == sorted(
        t.replace("attends on", "attends\non") for t in texts(wide)
    )
    assert len(boxes(narrow)) == len(boxes(wide)) and len(arrows(narrow)) == len(arrows(wide))
    # more than 4 heads: the first three, an ellipsis and the last, as the alt text says
    big = viz.multi_head_diagram(768, 8, 1024, narrow=True)
    heads = [s.split("\n")[0] for s in texts(big) if s.startswith("head ")]
    assert heads == ["head 0", "head 1", "head 2", "head 7"] and "an ellipsis" in big.alt_text
    assert "a row of 8 boxes" in viz.multi_head_diagram(768, 8, 1024).alt_text
    with pytest.raises(TypeError, match="narrow"):
        viz.multi_head_diagram(12, 3, 5, narrow=1)


def _encoder_links(fig, h_boxes, pad=0.06):
    """The (from, to) indices of the arrows that join two of ``h_boxes``, sorted."""
    links = []
    for a in arrows(fig):
        (x0, y0), (x1, y1) = a._posA_posB
        start = [i for i, b in enumerate(h_boxes) if b.get_bbox().padded(pad).contains(x0, y0)]
        end = [i for i, b in enumerate(h_boxes) if b.get_bbox().padded(pad).contains(x1, y1)]
        if start and end:
            links.append((start[0], end[0]))
    return sorted(links, key=lambda link: (link[1] < link[0], link))


@pytest.mark.parametrize("narrow", [False, True])
def test_bahdanau_diagram_scores_weights_and_context(narrow):
    """The wide drawing and the one for a phone (the decoder above the weights) say the same."""
    source = "a heavy green cow rarely runs".split()
    fig = viz.bahdanau_diagram(source, narrow=narrow)
    t = texts(fig)
    for j in range(6):  # numbered from 0, as in the chapter
        for label in (f"$\\mathbf{{h}}_{j}$", f"$e_{{t{j}}}$", f"$\\alpha_{{t{j}}}$"):
            assert label in t
    assert "$\\mathbf{s}_{t-1}$" in t and "GRU: $\\mathbf{s}_t$" in t and "$y_{t-1}$" in t
    assert any("tanh(W_a" in s for s in t)
    # the output layer reads s_t, y_{t-1} and c_t (lib.seq2seq.BahdanauDecoder: out([h, y, c])):
    # three arrows end on its box, one starting at each of those three boxes
    ax = fig.axes[0]
    box_of = {x.get_text(): x.get_position() for x in ax.texts}

    def patch_at(label):
        x, y = box_of[label]
        return next(b for b in boxes(fig) if b.get_bbox().contains(x, y))

    def ends_on(arrow, patch, pad=0.06):
        (x0, y0), (x1, y1) = arrow._posA_posB
        return patch.get_bbox().padded(pad).contains(x1, y1)

    def starts_on(arrow, patch, pad=0.06):
        (x0, y0), _ = arrow._posA_posB
        return patch.get_bbox().padded(pad).contains(x0, y0)

    out, context = (
        patch_at("softmax: $y_t$"),
        patch_at("$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$"),
    )
    into_out = [a for a in arrows(fig) if ends_on(a, out)]
    sources = [
        "GRU: $\\mathbf{s}_t$",
        "$y_{t-1}$",
        "$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$",
    ]
    assert len(into_out) == 3
    assert all(any(starts_on(a, patch_at(label)) for a in into_out) for label in sources)
    # the context reads the annotations as well as the weights: two arrows end on its box
    assert len([a for a in arrows(fig) if ends_on(a, context)]) == 2
    assert (
        "A line from every annotation" in fig.alt_text and "enter the output layer" in fig.alt_text
    )
    # review ch04 s15, item 1: the annotations come from a bidirectional GRU, one arrow to the
    # right and one to the left between every two neighbours, and no other arrow joins them
    h_boxes = [patch_at(f"$\\mathbf{{h}}_{j}$") for j in range(6)]
    assert _encoder_links(fig, h_boxes) == [(j, j + 1) for j in range(5)] + [
        (j + 1, j) for j in range(5)
    ]
    assert "bidirectional GRU" in fig.alt_text
    # s_{t-1} enters the GRU, and one red line leaves it for the scores: one red arrow into each
    state, gru = patch_at("$\\mathbf{s}_{t-1}$"), patch_at("GRU: $\\mathbf{s}_t$")
    assert len([a for a in arrows(fig) if starts_on(a, state) and ends_on(a, gru)]) == 1
    e_boxes = [patch_at(f"$e_{{t{j}}}$") for j in range(6)]
    red = [a for a in arrows(fig) if _red(a)]
    assert [sum(ends_on(a, e) for a in red) for e in e_boxes] == [1] * 6 and len(red) == 6
    with pytest.raises(ValueError, match="source"):
        viz.bahdanau_diagram(source + ["far", "away"])
    with pytest.raises(TypeError, match="narrow"):
        viz.bahdanau_diagram(source, narrow="yes")


def test_bahdanau_diagram_narrow_is_legible_on_a_phone():
    """Chapter 4 draws it narrow (issue 33): 4.89 inches wide with 13-point text, the words too; the
    same labels, boxes, arrows and alt text as the wide drawing (the score's formula on two lines).
    The symbols in the boxes at 15 points: their subscripts (s_{t-1}, e_{t1}, alpha_{t1}: which
    state asks) read at about 9 CSS px at 360 px (at 11.5 points, 6 px: a reader's report)."""
    source = "a heavy green cow rarely runs".split()
    wide, narrow = (viz.bahdanau_diagram(source, narrow=n) for n in (False, True))
    width, height = narrow.get_size_inches()
    sizes = [t.get_fontsize() for t in narrow.axes[0].texts if t.get_text()]
    assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.3
    boxed = [
        t for t in narrow.axes[0].texts if t.get_text().startswith(("$", "GRU: $", "softmax: $y"))
    ]
    assert len(boxed) == 3 * 6 + 5 and {t.get_fontsize() for t in boxed} == {15}
    # a subscript is 0.7 of its symbol: at 15 points on 4.89 inches shown 328 px wide, >= 9 px
    assert 0.7 * 15 / 72 * 328 / width >= 9
    assert len(boxes(narrow)) == len(boxes(wide)) and len(arrows(narrow)) == len(arrows(wide))
    assert narrow.alt_text == wide.alt_text
    joined = " ".join(texts(narrow))
    assert sorted(joined.split()) == sorted(" ".join(texts(wide)).split())
    # nothing drawn outside the canvas: every text inside the figure
    renderer = narrow.canvas.get_renderer()
    figure_box = narrow.bbox
    for text in narrow.axes[0].texts:
        box = text.get_window_extent(renderer)
        assert figure_box.x0 - 1 <= box.x0 and box.x1 <= figure_box.x1 + 1, text.get_text()
        assert figure_box.y0 - 1 <= box.y0 and box.y1 <= figure_box.y1 + 1, text.get_text()


@pytest.mark.parametrize("narrow", [False, True])
def test_additive_score_diagram_draws_the_network_inside_a_score_box(narrow):
    """Chapter 3 (review ch03_s15, point 1): where the score sits in attention, and the additive
    score's network with the sizes of AdditiveScore(d_query, d_key, d_hidden); both layouts say
    the same."""
    fig = viz.additive_score_diagram(3, 2, 8, narrow=narrow)
    t = texts(fig)
    # the pipeline: three keys, one score box each, a masked softmax, three weights, the sum
    for i in (1, 2, 3):
        assert f"$\\mathbf{{k}}_{i}$" in t and f"$s_{i}$" in t and f"$\\alpha_{i}$" in t
    assert "masked softmax over $i$" in t and "$\\sum_i \\alpha_i\\mathbf{v}_i$" in t
    # the query into every score box, its line and its boxes in chapter 3's orange (review
    # ch03_s17, point 8: its other figures draw queries orange, keys blue)
    assert sum(a.get_edgecolor() == to_rgba(_QUERY) for a in arrows(fig)) == 3
    query_boxes = [b for b in boxes(fig) if b.get_edgecolor() == to_rgba(_QUERY)]
    assert len(query_boxes) == 2 and "(orange)" in fig.alt_text and "red" not in fig.alt_text
    # the network, sized as lib.attention.AdditiveScore(3, 2, 8): W_q [8, 3], W_k [8, 2], v_a [1, 8]
    assert "$\\mathbf{W}_q$: $8\\times3$" in t and "$\\mathbf{W}_k$: $8\\times2$" in t
    assert "$\\mathbf{v}_a^\\top$: $1\\times8$" in t and "tanh: $d_a = 8$ units" in t
    assert "$\\mathbf{q}$: 3 numbers" in t and "$\\mathbf{k}_i$: 2 numbers" in t
    assert "W_q (8 x 3)" in fig.alt_text and "one number" in fig.alt_text
    # review ch03_s22, point 8: no side label smaller than the boxes' text, and at 360 px the
    # subscripted symbols and the frame's label at chapter 4's narrow math size; "8 numbers each"
    # beside the "+", not between the two arrows into it
    by_text = {text.get_text(): text for text in fig.axes[0].texts}
    each, plus = by_text["8 numbers each"], by_text["$+$"]
    assert (
        each.get_fontsize() == plus.get_fontsize()
        and each.get_position()[0] > plus.get_position()[0]
    )
    if narrow:
        for label in ("$s_1$", "$\\mathbf{k}_2$", "$\\alpha_3$", "score: any of\nthe six"):
            assert by_text[label].get_fontsize() >= 15, label
    width, height = fig.get_size_inches()
    if narrow:
        assert 4.5 <= width <= 5.6 and height <= 8
    else:
        assert 7 <= width <= 9.5 and height <= 7
    # nothing drawn outside the canvas
    fig.canvas.draw()
    renderer, frame = fig.canvas.get_renderer(), fig.bbox
    for text in fig.axes[0].texts:
        box = text.get_window_extent(renderer)
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, text.get_text()
        assert frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 + 1, text.get_text()
    with pytest.raises(ValueError, match="d_hidden"):
        viz.additive_score_diagram(2, 2, 0)
    with pytest.raises(TypeError, match="narrow"):
        viz.additive_score_diagram(2, 2, 8, narrow="yes")
    plt.close(fig)


@pytest.mark.parametrize("narrow", [False, True])
def test_luong_step_diagram_updates_the_state_first_then_asks_with_it(narrow):
    """Review ch04 s13, item 5: Luong's decoder step drawn like Bahdanau's. The GRU reads h_{t-1},
    y_{t-1} and tilde h_{t-1} (input feeding), its new state h_t is the red query line into every
    score, and c_t and h_t make tilde h_t, which feeds the output layer."""
    source = "a heavy green cow rarely runs".split()
    fig = viz.luong_step_diagram(source, narrow=narrow)
    t = texts(fig)
    for s in range(6):  # positions from 0, as in the chapter's Luong section
        for label in (f"$\\bar{{\\mathbf{{h}}}}_{s}$", f"$e_t({s})$", f"$a_t({s})$"):
            assert label in t
    box_of = {x.get_text(): x.get_position() for x in fig.axes[0].texts}

    def patch_at(label):
        x, y = box_of[label]
        return next(b for b in boxes(fig) if b.get_bbox().contains(x, y))

    def joins(arrow, start, end, pad=0.06):
        (x0, y0), (x1, y1) = arrow._posA_posB
        return start.get_bbox().padded(pad).contains(x0, y0) and end.get_bbox().padded(
            pad
        ).contains(x1, y1)

    gru = patch_at("GRU: $\\mathbf{h}_t$")
    inputs = ["$\\mathbf{h}_{t-1}$", "$y_{t-1}$", "$\\tilde{\\mathbf{h}}_{t-1}$"]
    assert all(any(joins(a, patch_at(i), gru) for a in arrows(fig)) for i in inputs)
    attentional = patch_at("$\\tilde{\\mathbf{h}}_t=\\tanh(W_c[\\mathbf{c}_t;\\mathbf{h}_t])$")
    context = patch_at("$\\mathbf{c}_t=\\sum_s a_t(s)\\bar{\\mathbf{h}}_s$")
    out = patch_at("softmax: $y_t$")
    assert any(joins(a, gru, attentional) for a in arrows(fig))
    assert any(joins(a, context, attentional) for a in arrows(fig))
    assert [a for a in arrows(fig) if joins(a, attentional, out)]
    # both tilde h_t and h_t go on to step t+1 (reader s20: h_t had no arrow onward), each arrow
    # named at its head by the state it carries (reader s22: only the alt text said which)
    assert "to step $t+1$" in t
    for label in ("$\\tilde{\\mathbf{h}}_t$", "$\\mathbf{h}_t$"):
        x_label, y_label = box_of[label]
        onward = [
            a
            for a in arrows(fig)
            if abs(a._posA_posB[1][0] - x_label) < 0.01 and 0 < y_label - a._posA_posB[1][1] < 0.3
        ]
        assert len(onward) == 1, label
    assert "h_t goes on to the next step too" in fig.alt_text
    # the red line from h_t ends on every score box, once, and nowhere else
    red = [a for a in arrows(fig) if _red(a)]
    e_boxes = [patch_at(f"$e_t({s})$") for s in range(6)]
    ends = [a._posA_posB[1] for a in red]
    assert [sum(e.get_bbox().padded(0.06).contains(*end) for end in ends) for e in e_boxes] == [
        1
    ] * 6
    assert len(red) == 6
    assert "First the GRU" in fig.alt_text and "input feeding" in fig.alt_text
    # the encoder states come from a bidirectional GRU: arrows both ways between neighbours
    h_boxes = [patch_at(f"$\\bar{{\\mathbf{{h}}}}_{s}$") for s in range(6)]
    assert _encoder_links(fig, h_boxes) == [(s, s + 1) for s in range(5)] + [
        (s + 1, s) for s in range(5)
    ]
    assert "bidirectional GRU" in fig.alt_text
    width, height = fig.get_size_inches()
    sizes = [x.get_fontsize() for x in fig.axes[0].texts if x.get_text()]
    assert 4.5 <= width <= 5.6 and height <= 8.5
    if narrow:  # 13-point text on 5.2 inches, as the chapter's other phone drawings
        assert min(sizes) == 13
        # the symbols in the boxes larger (h_t, h_{t-1}: which state asks), their subscripts
        # about 9 CSS px at 360 px; e_t(s) and a_t(s) at 14 in their boxes 0.6 inches wide
        size_of = {x.get_text(): x.get_fontsize() for x in fig.axes[0].texts}
        assert size_of["GRU: $\\mathbf{h}_t$"] == size_of["$\\mathbf{h}_{t-1}$"] == 15
        assert size_of["$y_{t-1}$"] == size_of["$\\bar{\\mathbf{h}}_0$"] == 15
        assert size_of["$e_t(0)$"] == size_of["$a_t(0)$"] == 14
    renderer = fig.canvas.get_renderer()
    for text in fig.axes[0].texts:  # nothing outside the canvas
        box = text.get_window_extent(renderer)
        assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, text.get_text()
        assert fig.bbox.y0 - 1 <= box.y0 and box.y1 <= fig.bbox.y1 + 1, text.get_text()
    with pytest.raises(ValueError, match="source"):
        viz.luong_step_diagram(source + ["far", "away"])
    with pytest.raises(TypeError, match="narrow"):
        viz.luong_step_diagram(source, narrow="yes")


def test_luong_diagram_connects_only_the_window_in_local_attention():
    fig = viz.luong_diagram(7, source_length=20, position=8.6)
    ax = fig.axes[0]
    # query-key lines (the key's grey line aside)
    lines = [ln for ln in ax.lines if ln.get_color() == "0.55" and ln.get_gid() != "key"]
    assert len(lines) == 20 + 14  # global: all 20; local: s in [2, 15]
    # the key names both kinds of line (reader s22: only the alt text said it)
    key = [ln.get_color() for ln in ax.lines if ln.get_gid() == "key"]
    assert key == ["0.55", "C0"] and {"scores", "into $\\mathbf{c}_t$"} <= set(texts(fig))
    assert "$p_t$ = 8.6" in texts(fig)
    assert any("$D$ = 7" in s and "= 3.5" in s for s in texts(fig))
    assert "positions 2 to 15" in fig.alt_text
    # the values: in each panel one arrow carries the source states into the context box (review
    # ch04 s3, item 7: the grey lines into h_t are the scores, not where c_t comes from)
    values = [
        a
        for a in ax.patches
        if isinstance(a, FancyArrowPatch) and a.get_edgecolor() == to_rgba("C0")
    ]
    assert (
        len(values) == 2
        and "an arrow carries the scored source states into the context" in fig.alt_text
    )
    # review ch04 s4, item 2: the arrow leaves a blue line that joins every scored state (all 20
    # globally, the window's 14 locally), not the last state alone
    blue = [ln for ln in ax.lines if ln.get_color() == "C0" and ln.get_gid() != "key"]
    xs = sorted({ln.get_xdata()[0] for ln in blue})
    combs = [
        ln for ln in blue if ln.get_ydata()[0] == ln.get_ydata()[1] and len(ln.get_xdata()) == 2
    ]
    ticks = [ln for ln in blue if ln.get_xdata()[0] == ln.get_xdata()[1]]
    assert len(ticks) == 20 + 14 and len(xs) == 20
    spans = sorted((c.get_xdata()[1] - c.get_xdata()[0]) for c in combs)
    step = xs[1] - xs[0]
    assert spans == pytest.approx([13 * step, 19 * step])
    starts = sorted(a._posA_posB[0] for a in values)  # each arrow starts at its line's right end
    assert starts == sorted((c.get_xdata()[1], c.get_ydata()[0]) for c in combs)
    with pytest.raises(ValueError, match="position"):
        viz.luong_diagram(7, source_length=20, position=21)
    with pytest.raises(ValueError, match="window"):
        viz.luong_diagram(0)
    with pytest.raises(ValueError, match="source_length"):
        viz.luong_diagram(7, source_length=30)


@pytest.mark.parametrize("narrow", [False, True])
def test_luong_diagram_draws_local_m_below_with_its_window_at_t_and_no_gaussian(narrow):
    plain = viz.luong_diagram(7, source_length=20, position=8.6, narrow=narrow)
    fig = viz.luong_diagram(7, source_length=20, position=8.6, local_m=8, narrow=narrow)
    ax = fig.axes[0]
    # query-key lines (the key's grey line aside)
    lines = [ln for ln in ax.lines if ln.get_color() == "0.55" and ln.get_gid() != "key"]
    assert len(lines) == 20 + 14 + 15  # local-m: s in [1, 15], its window [t - D, t + D]
    gaussians = [ln for ln in ax.lines if ln.get_color() == "0.45"]
    assert len(gaussians) == 1  # local-p's alone
    assert "$p_t = t$ = 8" in texts(fig) and any(s.startswith("local-m") for s in texts(fig))
    assert "Middle, local-p" in fig.alt_text and "positions 1 to 15." in fig.alt_text
    assert fig.get_size_inches()[1] > plain.get_size_inches()[1]
    # without it, the two panels as before
    assert not any("local-m" in s for s in texts(plain)) and "Bottom, local-p" in plain.alt_text
    with pytest.raises(ValueError, match="local_m"):
        viz.luong_diagram(7, source_length=20, local_m=20)


def test_luong_diagram_narrow_is_legible_on_a_phone():
    """Chapter 4 draws it narrow (issue 33): 5.2 inches wide with 14-point text (was 11.5: 9.3 CSS
    px at 360 px, read as too small; then 13, still the page's smallest text, review ch04 s30 pt 6),
    each context box above its h_t; the same connections and alt text as the wide drawing."""
    wide, narrow = (viz.luong_diagram(7, narrow=n) for n in (False, True))
    width, height = narrow.get_size_inches()
    sizes = [t.get_fontsize() for t in narrow.axes[0].texts if t.get_text()]
    assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.5
    assert min(sizes) >= 14  # titles, key and position numbers
    lines = [
        ln for ln in narrow.axes[0].lines if ln.get_color() == "0.55" and ln.get_gid() != "key"
    ]
    assert len(lines) == 20 + 14 and narrow.alt_text == wide.alt_text
    assert sorted(texts(narrow)) == sorted(t.replace(" times", "\ntimes") for t in texts(wide))
    # review ch04 s15, item 4: the subscripted symbols at 15 points, as Figs. 4.1 and 4.3 (at 13
    # their subscripts read at about 7 CSS px), all inside the canvas
    size_of = {t.get_text(): t.get_fontsize() for t in narrow.axes[0].texts}
    symbols = ["$\\bar{\\mathbf{h}}_s$", "$\\mathbf{h}_t$", "$p_t$ = 8.6"]
    assert all(size_of[s] == 15 for s in symbols)
    assert [size for text, size in size_of.items() if text.startswith("$\\mathbf{c}_t")] == [15]
    renderer = narrow.canvas.get_renderer()
    for text in narrow.axes[0].texts:
        box = text.get_window_extent(renderer)
        assert narrow.bbox.x0 - 1 <= box.x0 and box.x1 <= narrow.bbox.x1 + 1, text.get_text()
    with pytest.raises(TypeError, match="narrow"):
        viz.luong_diagram(7, narrow=1)


@pytest.mark.parametrize("narrow", [False, True])
def test_beam_search_diagram_keeps_k_per_step_and_drops_the_rest(narrow):
    """Review ch04 s15, item 10: a beam of k = 2 as a tree. At every step the kept and finished
    partial translations are the k best extensions (as many as the beam has places left: one fewer
    after one finished), the dropped ones less probable than all of them."""
    from lib.viz.diagrams import _BEAM_KINDS, _BEAM_TREE, _DIAGRAM_COLORS

    places = 2
    for step in (1, 2, 3):
        nodes = [n for n in _BEAM_TREE if n[0] == step]
        chosen = [n[3] for n in nodes if n[4] != "dropped"]
        dropped = [n[3] for n in nodes if n[4] == "dropped"]
        assert len(chosen) == places and min(chosen) > max(dropped, default=-99)
        # every parent was kept (not dropped, not finished) at the step before
        assert all(n[1] is None or _BEAM_TREE[n[1]][4] == "kept" for n in nodes)
        # a log-probability only falls along a path
        assert all(n[1] is None or n[3] < _BEAM_TREE[n[1]][3] for n in nodes)
        places -= sum(n[4] == "finished" for n in nodes)
    assert places == 1  # step 4: one place left, as the drawing says
    # made up but possible (reader s38): the continuations of each box, and the first words,
    # have probabilities that add up to at most 1
    for parent in [None, *range(len(_BEAM_TREE))]:
        start = 0.0 if parent is None else _BEAM_TREE[parent][3]
        children = [n[3] for n in _BEAM_TREE if n[1] == parent]
        assert sum(math.exp(lp - start) for lp in children) <= 1, (parent, children)
    # greedy decoding (the best child of its last word, from <bos>) ends at un chat dort, which
    # the beam drops for le chat dort, more probable: chapter 4's caption and text say so
    path, at = [], None
    for step in (1, 2, 3):
        best = max((n for n in _BEAM_TREE if n[0] == step and n[1] == at), key=lambda n: n[3])
        path.append(best[2])
        at = _BEAM_TREE.index(best)
    assert path == ["un", "chat", "dort"] and _BEAM_TREE[at][3:] == (-2.6, "dropped")
    kept = [n for n in _BEAM_TREE if n[0] == 3 and n[4] == "kept"]
    assert [(n[2], n[3]) for n in kept] == [("dort", -1.5)] and _BEAM_TREE[kept[0][1]][1] == 1
    fig = viz.beam_search_diagram(narrow=narrow)
    fills = [to_rgba(_DIAGRAM_COLORS[k]) for k in ("rnn", "plain", "emb")]
    counts = [sum(b.get_facecolor() == c for b in boxes(fig)) for c in fills]
    assert counts == [5 + 1, 3 + 1, 1 + 1]  # the tree's boxes and the legend's
    t = texts(fig)
    assert "<eos>\n\u22122.3" in t and any("one place left" in x for x in t)
    assert "k = 2" in fig.alt_text and "one place left" in fig.alt_text
    assert set(_BEAM_KINDS) == {"kept", "dropped", "finished"}
    with pytest.raises(TypeError, match="narrow"):
        viz.beam_search_diagram(narrow="yes")


def test_gpt_diagram_stacked_is_legible_on_a_phone():
    """Chapter 13 draws the block under the stack (review 13c, point 12): every text at least 10 CSS
    px (em) once the picture is shrunk to the 313 px a 360 px phone can give a figure (at 9.5 points
    on 4.6 inches it was 9.0, and read as 6-8 px: a reader's report on Fig. 13.1); under 600 px at
    110 dpi, so that the phone shows it whole; the same text as side by side."""
    from matplotlib.text import Text

    wide, narrow = (
        viz.gpt_diagram(GPTConfig.gpt2()),
        viz.gpt_diagram(GPTConfig.gpt2(), stacked=True),
    )
    width, height = narrow.get_size_inches()
    assert width * narrow.dpi <= 600 and height <= 13
    texts = [t for t in narrow.findobj(Text) if t.get_visible() and t.get_text().strip()]
    scale = min(1.0, 313 / (width * narrow.dpi)) * narrow.dpi  # page px per inch
    assert min(t.get_fontsize() / 72 * scale for t in texts) >= 10
    wide_texts = {t.get_text() for t in wide.findobj(Text) if t.get_text().strip()}
    # the same labels, the block's title saying which blocks it enlarges
    titles = {"one block (pre-LN), as GPT-2", "one block (pre-LN), as GPT-2: each of the 12 above"}
    assert wide_texts ^ {t.get_text() for t in texts} == titles
    assert (
        narrow.alt_text.startswith("Top, the GPT stack")
        and "Below it, one block" in narrow.alt_text
    )
    plt.close(wide)
    plt.close(narrow)


def test_gpt_diagram_takes_its_numbers_from_the_config():
    fig = viz.gpt_diagram(GPTConfig.gpt2())
    t = texts(fig)
    assert "block $N - 1$ = 11" in t and "wte + wpe: $[T, D]$, $D$ = 768" in t
    assert "masked multi-head self-attention, $H$ = 12" in t
    assert "MLP: $D \\to 4D$ = 3072, GELU, $\\to D$" in t
    assert "ln_1 (LayerNorm)" in t and "ln_2 (LayerNorm)" in t and t.count("$+$") == 2
    assert "lm_head = wte$^\\top$, softmax over 50,257" in t
    # GPT-2's preset named, not GPT-1's, whose layout differs (review ch13_s15, point 11)
    assert "GPT-2 small: 12 blocks, 12 heads of $D_h$ = 64" in t
    xl = viz.gpt_diagram(GPTConfig.gpt2_xl())
    assert "block $N - 1$ = 47" in texts(xl) and "48 blocks" in xl.alt_text
    assert "GPT-2 XL: 48 blocks, 25 heads of $D_h$ = 64" in texts(xl)
    tiny = GPTConfig(vocab_size=50, block_size=16, n_layer=2, n_head=4, n_embd=32)
    assert "GPT-2 layout: 2 blocks, 4 heads of $D_h$ = 8" in texts(viz.gpt_diagram(tiny))
    with pytest.raises(TypeError, match="config"):
        viz.gpt_diagram(BertConfig.base())


def test_bert_input_diagram_sums_three_embeddings_per_token():
    fig = viz.bert_input_diagram(PAIR)
    t = texts(fig)
    n = len(PAIR)
    assert t.count("$E_A$") == 6 and t.count("$E_B$") == 5
    assert [f"$E_{{{i}}}$" in t for i in range(n)] == [True] * n
    assert "$E_{\\mathrm{[CLS]}}$" in t and "$E_{\\#\\#\\mathrm{ing}}$" in t
    assert t.count("$+$") == 2 * n and len(boxes(fig)) == 4 * n
    assert any("width 768" in s for s in t) and "token embeddings 30,522 x 768" in fig.alt_text
    assert any("(30,522 x 768)" in s for s in t) and any("(512 x 768)" in s for s in t)
    small = viz.bert_input_diagram(PAIR, SMALL_BERT, segments=[0] * n)
    assert texts(small).count("$E_B$") == 0 and any("width 64" in s for s in texts(small))
    with pytest.raises(ValueError, match="segments"):
        viz.bert_input_diagram(PAIR, segments=[0, 1])
    with pytest.raises(ValueError, match="tokens"):
        viz.bert_input_diagram(PAIR + PAIR)
    # the text's size is the caller's, up to 13.5 points (the reader's report ch14 s16, M1): 12
    # CSS px on its 5.1 inches shown 328 px wide
    sizes = {x.get_fontsize() for x in fig.axes[0].texts}
    assert sizes == {11.5}
    big = viz.bert_input_diagram(PAIR, fontsize=13)
    assert {x.get_fontsize() for x in big.axes[0].texts} == {13}
    phone = viz.bert_input_diagram(PAIR, fontsize=13.5)
    assert {x.get_fontsize() for x in phone.axes[0].texts} == {13.5}
    for too_big in (14, 16):
        with pytest.raises(ValueError, match="fontsize"):
            viz.bert_input_diagram(PAIR, fontsize=too_big)


def test_elmo_diagram_has_two_directions_per_layer_and_the_mix():
    config = ELMoConfig(vocab_size=252, n_layers=3, hidden_dim=96)
    fig = viz.elmo_diagram(config)
    t = texts(fig)
    assert t.count("$\\rightarrow$") == 5 * 3 and t.count("$\\leftarrow$") == 5 * 3
    assert [f"$s_{j} \\cdot \\mathbf{{h}}_{{k,{j}}}$" in t for j in range(4)] == [True] * 4
    assert "$\\gamma\\sum_j$" in t and any("$L$ = 3 layers, 96" in s for s in t)
    assert "the mix for 'bank' (dashed)" in t
    with pytest.raises(ValueError, match="focus"):
        viz.elmo_diagram(config, focus=5)
    with pytest.raises(TypeError, match="config"):
        viz.elmo_diagram(GPTConfig.gpt2())


@pytest.mark.parametrize("narrow", [False, True])
def test_elmo_diagram_joins_each_direction_only_to_itself(narrow):
    """Fig. 12.1 (reader's report, round s3): every arrow between LSTMs joins a forward LSTM to the
    forward LSTM of the next word or of the layer above, a backward one to the backward LSTM of the
    previous word or of the layer above; no arrow joins the two directions, as the caption says."""
    config = ELMoConfig(vocab_size=252, word_dim=64, hidden_dim=128, n_layers=2)
    fig = viz.elmo_diagram(config, narrow=narrow)
    forward = _boxes_labelled(fig, "$\\rightarrow$")
    backward = _boxes_labelled(fig, "$\\leftarrow$")
    assert len(forward) == len(backward) == 5 * 2
    for a in forward:
        for b in backward:
            assert not _links(fig, a, b) and not _links(fig, b, a)

    def grid(cells):
        """[layer][word]: the boxes by their row (bottom up) and column (left to right)."""
        rows = sorted({round(_center(b)[1], 6) for b in cells})
        return [
            sorted((b for b in cells if round(_center(b)[1], 6) == y), key=_center) for y in rows
        ]

    for cells, ahead in ((grid(forward), 1), (grid(backward), -1)):
        assert len(cells) == 2 and all(len(row) == 5 for row in cells)
        for row in cells:
            for k in range(4):
                a, b = (row[k], row[k + 1]) if ahead == 1 else (row[k + 1], row[k])
                assert len(_links(fig, a, b)) == 1 and not _links(fig, b, a)
        for lower, upper in zip(cells[0], cells[1]):  # layer 1 -> layer 2, the same word
            assert len(_links(fig, lower, upper)) == 1


@pytest.mark.parametrize("narrow", [False, True])
def test_elmo_diagram_joins_to_the_softmax_only_the_states_it_scores(narrow):
    """Fig. 12.1 (reader's report, round s4): the forward LM predicts nothing after <eos> and the
    backward LM nothing before <bos>, so those two top LSTMs have no arrow to the softmax; every
    other top LSTM has one."""
    config = ELMoConfig(vocab_size=252, word_dim=64, hidden_dim=128, n_layers=2)
    fig = viz.elmo_diagram(config, narrow=narrow)
    (softmax,) = [
        b
        for b in boxes(fig)
        if any(b in _boxes_labelled(fig, t) for t in texts(fig) if t.startswith("softmax"))
    ]
    for label, silent in (("$\\rightarrow$", 4), ("$\\leftarrow$", 0)):
        cells = _boxes_labelled(fig, label)
        top = max(round(_center(b)[1], 6) for b in cells)
        row = sorted((b for b in cells if round(_center(b)[1], 6) == top), key=_center)
        assert [len(_links(fig, b, softmax)) for b in row] == [int(k != silent) for k in range(5)]


@pytest.mark.parametrize("narrow", [False, True])
def test_elmo_diagram_numbers_the_token_representations_from_the_mixed_word(narrow):
    """Fig. 12.1 (reader's report, round s5): the token boxes are x_{k-3} ... x_{k+1}, with x_k the
    word whose layers the mix shows (h_{k,j}), not x_k on every word; the alt text says so."""
    config = ELMoConfig(vocab_size=252, word_dim=64, hidden_dim=128, n_layers=2)
    fig = viz.elmo_diagram(config, narrow=narrow)
    labels = [t for t in texts(fig) if t.startswith("$x_")]
    assert labels == ["$x_{k-3}$", "$x_{k-2}$", "$x_{k-1}$", "$x_k$", "$x_{k+1}$"]
    assert "x_k for bank at position k, x_(k-3) to x_(k+1)" in fig.alt_text
    first = viz.elmo_diagram(config, focus=0, narrow=narrow)
    assert [t for t in texts(first) if t.startswith("$x_")][:2] == ["$x_k$", "$x_{k+1}$"]


def test_elmo_diagram_narrow_is_legible_on_a_phone():
    """Chapter 12 draws it narrow (issue 33): 4.89 inches wide with 13-point text, the mix below
    the biLM; the same texts and boxes as the wide drawing, which keeps its size."""
    config = ELMoConfig(vocab_size=252, word_dim=64, hidden_dim=128, n_layers=2)
    wide, narrow = (viz.elmo_diagram(config, narrow=n) for n in (False, True))
    assert tuple(wide.get_size_inches()) == (9.0, 4.4)
    width, height = narrow.get_size_inches()
    sizes = [t.get_fontsize() for t in narrow.axes[0].texts if t.get_text()]
    assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.0
    # reader's report, round s7: subscripts (70% of the size) at 6-7 CSS px on a phone; now larger
    subscripted = [t for t in narrow.axes[0].texts if "_" in t.get_text()]
    assert len(subscripted) == 5 + 3 + 2 and min(t.get_fontsize() for t in subscripted) >= 14
    assert narrow.alt_text == wide.alt_text.replace("On the right", "Below")
    assert sorted(texts(narrow)) == sorted(
        t.replace("layer ", "layer\n").replace("), previous", "),\nprevious") for t in texts(wide)
    )
    # narrow: one more arrow, from the sum to ELMo_k beside it
    assert len(boxes(narrow)) == len(boxes(wide)) and len(arrows(narrow)) == len(arrows(wide)) + 1
    with pytest.raises(TypeError, match="narrow"):
        viz.elmo_diagram(config, narrow=1)


def test_electra_diagram_labels_a_sample_equal_to_the_original_as_original():
    fig = viz.electra_diagram(ElectraConfig(SMALL_BERT))
    t = texts(fig)
    assert t.count("[MASK]") == 2 and "ate" in t
    # the discriminator's labels: the bottom row, left to right
    bottom = min(x.get_position()[1] for x in fig.axes[0].texts)
    labels = [x.get_text() for x in fig.axes[0].texts if x.get_position()[1] == bottom]
    assert fig.get_size_inches()[0] == 5.2 and labels == [
        "original",
        "original",
        "replaced",
        "original",
        "original",
    ]
    assert "generator (small masked LM, 1 layer)" in t
    assert "discriminator (ELECTRA, 2 layers)" in t
    with pytest.raises(ValueError, match="sampled"):
        viz.electra_diagram(ElectraConfig(SMALL_BERT), sampled=["the"])
    with pytest.raises(ValueError, match="masked"):
        viz.electra_diagram(ElectraConfig(SMALL_BERT), masked=[9], sampled=["x"])
    with pytest.raises(ValueError, match="original"):  # more than a phone's width holds
        viz.electra_diagram(ElectraConfig(SMALL_BERT), original="a b c d e f g".split())


def test_captioning_diagram_draws_one_box_per_region():
    fig = viz.captioning_diagram(9, 64)
    t = texts(fig)
    assert [f"$\\mathbf{{a}}_{{{i}}}$" in t for i in range(1, 10)] == [True] * 9
    assert "9 regions,\n64 numbers each" in t and "LSTM: $\\mathbf{h}_t$" in t
    # at the narrow drawings' 13 points: about 10.5 CSS px on a 360 px phone (reader s27, ch05, 9)
    assert min(x.get_fontsize() for x in fig.axes[0].texts) >= 13
    assert "$\\mathbf{z}_t=\\sum_i\\alpha_{t,i}\\mathbf{a}_i$" in t
    assert "image" in t and "CNN" in t  # the CNN that makes the regions is drawn
    # the learned row and column embeddings added to the CNN's cells (lib.captioning.ConvEncoder):
    # chapter 5's exercise 2 removes them (reader s39b_r05)
    assert "row, column\nembeddings" in t and "$+$" in t
    assert "learned row and column embeddings are added" in fig.alt_text
    # the deep output layer (Xu et al. eq. 7, lib.captioning.Captioner.output) reads E y_{t-1},
    # h_t and z_t: three arrows end on its box, one from each
    ax = fig.axes[0]
    where = {x.get_text(): x.get_position() for x in ax.texts}

    def patch_at(label):
        return next(b for b in boxes(fig) if b.get_bbox().contains(*where[label]))

    out = patch_at("$\\mathbf{L}_o$: next word $y_t$").get_bbox().padded(0.06)
    into_out = [a for a in arrows(fig) if out.contains(*a._posA_posB[1])]
    starts = [
        "LSTM: $\\mathbf{h}_t$",
        "$\\mathbf{E}\\mathbf{y}_{t-1}$",
        "$\\mathbf{z}_t=\\sum_i\\alpha_{t,i}\\mathbf{a}_i$",
    ]
    assert len(into_out) == 3
    for label in starts:
        box = patch_at(label).get_bbox().padded(0.06)
        assert any(box.contains(*a._posA_posB[0]) for a in into_out), label
    assert "enter the deep output layer" in fig.alt_text and "through the CNN" in fig.alt_text
    assert sum(s.startswith("$\\mathbf{a}_") for s in texts(viz.captioning_diagram(16, 8))) == 16
    with pytest.raises(ValueError, match="n_regions"):
        viz.captioning_diagram(8, 64)


def test_han_diagram_has_two_levels_of_gru_and_attention():
    fig = viz.han_diagram(REVIEW)
    t = texts(fig)
    assert t.count("word attention, $\\mathbf{u}_w$") == 2 and "$\\mathbf{s}_{2}$" in t
    assert all(f"$\\mathbf{{h}}_{{{i},{j}}}$" in t for i in (1, 2) for j in range(1, 6))
    assert "$\\mathbf{h}_{1}$" in t and "$\\mathbf{h}_{2}$" in t
    assert any("sentence attention" in s and "\\mathbf{v}" in s for s in t)
    assert "superb" in t and "awful" in t and "the soup was superb ." in fig.alt_text
    # 13 points laid out on 5.4 inches, drawn 5.2 wide: 12.5 points (reader s27, ch05, 9)
    assert min(x.get_fontsize() for x in fig.axes[0].texts) >= 12.5
    # every h_i feeds sentence attention, not h_1 alone (reader's report 5, item 1): one arrow
    # per sentence ends at the bottom of the top box, sentence attention
    patches = fig.axes[0].patches
    attention = [p for p in patches if isinstance(p, FancyBboxPatch)]
    bottom = max(attention, key=lambda p: p.get_y()).get_y()
    ends = [p._posA_posB[1][1] for p in patches if isinstance(p, FancyArrowPatch)]
    assert sum(abs(y - bottom) < 1e-9 for y in ends) == len(REVIEW) == 2
    assert "sentence attention with u_s reads every h_i" in fig.alt_text
    # the top box says what the text says classifies v: a linear layer and a softmax (reader's
    # report 5, s3, item 5b)
    assert "linear + softmax\n$\\to$ label" in t and "a linear layer and a softmax" in fig.alt_text
    # one dashed frame per sentence, a gap between them, each holding its own words, their h_{i,t}
    # and their word attention and nothing of the other sentence (item 5a: the words of sentence 1
    # sat right on top of sentence 2's word attention)
    frames = sorted(
        (p for p in patches if isinstance(p, Rectangle) and p.get_linestyle() == "--"),
        key=lambda p: -p.get_y(),
    )
    assert len(frames) == len(REVIEW)
    assert frames[0].get_y() - (frames[1].get_y() + frames[1].get_height()) >= 0.25
    word_attention = sorted(
        _boxes_labelled(fig, "word attention, $\\mathbf{u}_w$"), key=lambda b: -b.get_y()
    )
    for i, frame in enumerate(frames):
        inner = [
            _boxes_labelled(fig, w)[0 if i == 0 or w not in REVIEW[0] else 1] for w in REVIEW[i]
        ]
        inner += [_boxes_labelled(fig, f"$\\mathbf{{h}}_{{{i + 1},{j}}}$")[0] for j in (1, 5)]
        inner.append(word_attention[i])
        for box in inner:
            assert frame.get_bbox().padded(1e-9).contains(box.get_x(), box.get_y())
            corner = (box.get_x() + box.get_width(), box.get_y() + box.get_height())
            assert frame.get_bbox().padded(1e-9).contains(*corner)
        outside = _boxes_labelled(fig, f"$\\mathbf{{s}}_{{{i + 1}}}$") + [word_attention[1 - i]]
        for box in outside:
            assert not frame.get_bbox().overlaps(box.get_bbox())
    with pytest.raises(ValueError, match="sentences"):
        viz.han_diagram(REVIEW * 2)
    with pytest.raises(TypeError, match="sentences"):
        viz.han_diagram("the soup was superb .")


def test_bert_pretraining_diagram_reads_the_masked_output_and_cls():
    fig = viz.bert_pretraining_diagram(BertConfig.large())
    t = texts(fig)
    assert "BERT encoder: 24 layers, width 1024, 16 heads" in t
    assert "MLM head:\nsoftmax over\n30,522 → cute" in t
    # the NSP head reads the pooler's output tanh(W C + b), not C itself (reader's report 14b)
    assert "pooler, then\nNSP head:\nIsNext / NotNext" in t and "through the pooler" in fig.alt_text
    assert "$C$" in t and [f"$T_{{{i}}}$" in t for i in range(1, 11)] == [True] * 10
    assert t.count("[MASK]") == 1
    with pytest.raises(TypeError, match="config"):
        viz.bert_pretraining_diagram(GPTConfig.gpt2())


def test_bert_pretraining_diagram_text_size_is_the_callers_up_to_13_5_points():
    """Chapter 14 draws it at 13.5 points for a phone (reader's report ch14 s15, point 3: 12 CSS
    px at 328 px); the default stays 11.5, and a size the boxes cannot hold is refused."""

    def sizes(fig):
        return {t.get_fontsize() for t in fig.axes[0].texts if t.get_text()}

    assert sizes(viz.bert_pretraining_diagram()) == {11.5}
    assert sizes(viz.bert_pretraining_diagram(fontsize=13)) == {13}
    assert sizes(viz.bert_pretraining_diagram(fontsize=13.5)) == {13.5}
    for too_big in (14, 16):
        with pytest.raises(ValueError, match="fontsize"):
            viz.bert_pretraining_diagram(fontsize=too_big)


def test_bert_layer_diagram_draws_a_post_ln_layer_and_the_tied_masked_lm_head():
    """The reader's report ch14 s13, point 8: one BERT layer with its shapes, GELU and no causal
    mask (s16, F1: BERT masks padding, so not "no mask"),
    and the masked-LM head (dense, GELU, LayerNorm, the tied word embeddings and a bias)."""
    fig = viz.bert_layer_diagram(BertConfig.base())
    t = texts(fig)
    assert (
        "self-attention\n12 heads\nno causal mask" in t and "one encoder layer (× 12), post-LN" in t
    )
    assert "dense 768 → 3,072\nGELU" in t and "dense 3,072 → 768\ndropout" in t
    assert t.count("LayerNorm") == 3 and t.count("$+$") == 2  # 2 in the layer, 1 in the head
    assert "dense 768 → 768\nGELU" in t and any("(tied) + bias" in x for x in t)
    assert "softmax over\n30,522 tokens" in t and "tied weights" in fig.alt_text
    assert "post-LN" in fig.alt_text and "no causal mask" in fig.alt_text
    assert "no mask" not in fig.alt_text and "padding is masked" in fig.alt_text
    # post-LN: the column reads sub-layer, add, LayerNorm, from the bottom up
    order = [x.get_text() for x in sorted(fig.axes[0].texts, key=lambda x: x.get_position()[1])]
    layer = [x for x in order if x in ("$W^O$, dropout", "$+$", "LayerNorm")][:3]
    assert layer == ["$W^O$, dropout", "$+$", "LayerNorm"]
    small = texts(viz.bert_layer_diagram(SMALL_BERT, narrow=False))
    assert any(x.startswith("self-attention\n") for x in small)
    with pytest.raises(TypeError, match="config"):
        viz.bert_layer_diagram(GPTConfig.gpt2())
    with pytest.raises(TypeError, match="narrow"):
        viz.bert_layer_diagram(narrow="yes")


@pytest.mark.parametrize(
    "draw",
    [
        lambda: viz.bert_input_diagram(PAIR),
        lambda: viz.bert_pretraining_diagram(),
        lambda: viz.bert_pretraining_diagram(BertConfig.large()),
        lambda: viz.bert_layer_diagram(),
        lambda: viz.seq2seq_diagram(SRC, TGT, narrow=True),
        lambda: viz.seq2seq_diagram(SRC, TGT, with_attention=True, narrow=True),
        lambda: viz.kv_cache_diagram(KV_TOKENS),
        lambda: viz.additive_score_diagram(2, 2, 8, narrow=True),
        lambda: viz.gru_cell_diagram(),
        lambda: viz.tokenizer_pipeline_diagram(*PIPELINE.values()),
        lambda: viz.gpt_blocks_diagram(),
    ],
    ids=[
        "input",
        "pretraining",
        "pretraining_large",
        "layer",
        "seq2seq",
        "seq2seq_attention",
        "kv_cache",
        "additive_score",
        "gru_cell",
        "tokenizer_pipeline",
        "gpt_blocks",
    ],
)
def test_diagrams_drawn_for_a_phone_fit_its_column(draw):
    """Chapter 14's two diagrams (reader's report 14b: at 605 px they scrolled sideways on a 360 px
    phone) and chapter 1's narrow encoder-decoders (reader's report 1, item 3: at 638 px the same):
    saved as the inline backend saves them (110 dpi, tight box) they are under 600 px wide,
    so book/_static/reader.js scales them to the 328 px column, where their smallest text is still
    at least 9 CSS px."""
    fig = draw()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    width, _ = struct.unpack(">II", buffer.getvalue()[16:24])
    assert width < 600, width
    smallest = min(t.get_fontsize() for t in fig.axes[0].texts if t.get_text())
    assert smallest * 110 / 72 * 328 / width >= 9, (smallest, width)
    # every text inside the canvas: nothing cut off by the tight box
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    for t in fig.axes[0].texts:
        box = t.get_window_extent(renderer)
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, t.get_text()
    plt.close(fig)


KV_TOKENS = ["<bos>", "the", "cat", "sat", "on", "the"]


def test_kv_cache_diagram_computes_the_whole_matrix_without_and_one_row_with_the_cache():
    """Chapter 13's key/value cache (review ch13_s13, point 6): the same step drawn twice."""
    from lib.viz.diagrams import _CACHED, _NEW

    fig = viz.kv_cache_diagram(KV_TOKENS)
    T = len(KV_TOKENS)
    t = texts(fig)
    # P is the number of cached tokens, 0 without a cache (review ch13_s15, point 2)
    assert "without a cache (P = 0): step 6" in t and "with the KV cache (P = 5): step 6" in t
    assert t.count("K") == t.count("V") == 2 and t.count("<bos>") == 2
    cells = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    new = [p for p in cells if p.get_facecolor() == to_rgba(_NEW)]
    cached = [p for p in cells if p.get_facecolor() == to_rgba(_CACHED)]
    # without: T(T+1)/2 scores and T keys and values; with: one row of T scores and one k, v;
    # plus the legend's square of each colour
    assert len(new) == T * (T + 1) // 2 + 2 * T + T + 2 + 1
    assert len(cached) == 2 * (T - 1) + 1
    assert "at index 5" in fig.alt_text and "read from the cache" in fig.alt_text
    assert "without a cache (P = 0)" in fig.alt_text and "(P = 5 tokens cached)" in fig.alt_text
    with pytest.raises(ValueError, match="tokens"):
        viz.kv_cache_diagram([])
    with pytest.raises(ValueError, match="narrow"):
        viz.kv_cache_diagram(KV_TOKENS, narrow=False)
    plt.close(fig)


def test_minilm_diagram_draws_what_is_matched_and_the_sentence_vector():
    fig = viz.minilm_diagram()
    t = texts(fig)
    # distillation: both last layers' T x T matrices, compared by KL; then half the layers kept
    assert t.count("last layer:\n$A$, $VR$: $T \\times T$") == 2 and "KL" in t
    assert "student\n12 layers,\nwidth 384" in t and any("every second layer: 6" in x for x in t)
    # the teacher of the released MiniLM was of BERT-base size (its model card), not BERT-large
    assert "teacher\n12 layers,\nwidth 768" in t and "BERT-base size" in fig.alt_text
    # 5 inches: with a tight bounding box's margins under the 600 px (at 110 dpi) above which the
    # site widens a picture on a phone into a box that scrolls sideways (book/_static/reader.js)
    assert fig.get_size_inches()[0] <= 5.25
    assert "6 layers, 12 heads: a vector per token" in t and "scale to length 1: 384 numbers" in t
    assert "softmax(VV^T / sqrt(d_k))" in fig.alt_text and "12 layers" in fig.alt_text
    # MiniLM matches A and VR head by head: both formulas per head, and as many heads in both models
    assert sum(x.endswith("$ per head") for x in t) == 2
    assert any(x.endswith("12 heads in both") for x in t) and "same number of heads" in fig.alt_text
    # the pruning arrow leaves the student's column (a dashed frame around the student and its
    # last layer), not the last-layer box: the whole student is pruned, not its last layer
    (prune,) = _boxes_labelled(fig, "keep every second layer: 6; then\nfine-tune on sentence pairs")
    (student,) = _boxes_labelled(fig, "student\n12 layers,\nwidth 384")
    last_layers = _boxes_labelled(fig, "last layer:\n$A$, $VR$: $T \\times T$")
    frames = [b for b in boxes(fig) if b.get_facecolor()[3] == 0]
    assert len(frames) == 1 and _on(_center(student), frames[0])
    assert all(
        _on(_center(b), frames[0]) == (b.get_x() > student.get_x() - 0.1) for b in last_layers
    )
    assert len(_links(fig, frames[0], prune)) == 1
    assert not any(_links(fig, b, prune) for b in last_layers)
    small = viz.minilm_diagram(SMALL_BERT)
    assert "2 layers, 4 heads: a vector per token" in texts(small)
    with pytest.raises(TypeError, match="config"):
        viz.minilm_diagram(GPTConfig.gpt2())


def test_gpt_blocks_diagram_puts_the_layer_norms_where_each_model_does():
    fig = viz.gpt_blocks_diagram()
    labels = [t.get_text() for t in fig.axes[0].texts]
    y = {}  # each column's labels from the bottom up, by their x (left: GPT, right: GPT-2)
    for t in fig.axes[0].texts:
        x, height = t.get_position()
        y.setdefault(x < 2.6, []).append((height, t.get_text()))
    post, pre = ([text for _, text in sorted(y[side])] for side in (True, False))
    attn = "masked multi-head\nself-attention\n$H$ = 12"
    mlp = "MLP, GELU\n768 → 3,072 → 768"
    # post-LN: each LayerNorm after its add, none after the last block; pre-LN: each before its
    # sub-layer, and ln_f after the last block, as lib.gpt.Block and GPT
    assert [s for s in post if s not in ("× 12",)][2:9] == [
        attn,
        "$+$",
        "LayerNorm",
        mlp,
        "$+$",
        "LayerNorm",
        "× wte$^\\top$ (tied)\nsoftmax",
    ]
    assert [s for s in pre if s not in ("× 12",)][2:10] == [
        "LayerNorm ln_1", attn, "$+$", "LayerNorm ln_2", mlp, "$+$", "ln_f",
        "× wte$^\\top$ (tied)\nsoftmax",
    ]  # fmt: skip
    assert labels.count("× 12") == 2 and "GPT: post-LN" in labels and "GPT-2: pre-LN" in labels
    assert "ln_f, follows the last block" in fig.alt_text
    with pytest.raises(TypeError, match="config"):
        viz.gpt_blocks_diagram(BertConfig.base())


CALLS = {
    "seq2seq": lambda: viz.seq2seq_diagram(SRC, TGT, with_attention=True),
    "self_attention": lambda: viz.self_attention_diagram(11, 10, 5, 10),
    "residual_second_layer": lambda: viz.residual_second_layer_diagram(11, 10, 2, narrow=True),
    "connectivity": lambda: viz.connectivity_diagram(6),
    "multi_head": lambda: viz.multi_head_diagram(12, 3, 5, narrow=True),
    "bahdanau": lambda: viz.bahdanau_diagram(SRC, narrow=True),
    "luong": lambda: viz.luong_diagram(7),
    "gpt": lambda: viz.gpt_diagram(GPTConfig.gpt2()),
    "gpt_blocks": lambda: viz.gpt_blocks_diagram(GPTConfig.gpt2()),
    "gpt_classifier": lambda: viz.gpt_classifier_diagram(),
    "bert_input": lambda: viz.bert_input_diagram(PAIR),
    "elmo": lambda: viz.elmo_diagram(ELMoConfig(vocab_size=252), narrow=True),
    "electra": lambda: viz.electra_diagram(ElectraConfig(SMALL_BERT)),
    "captioning": lambda: viz.captioning_diagram(9, 64),
    "han": lambda: viz.han_diagram(REVIEW),
    "bert_pretraining": lambda: viz.bert_pretraining_diagram(),
    "bert_layer": lambda: viz.bert_layer_diagram(),
    "gqa": lambda: viz.gqa_diagram(8, (8, 2, 1)),
    "llama": lambda: viz.llama_diagram(LlamaConfig.llama3_1_8b(), narrow=True),
    "swiglu": lambda: viz.swiglu_diagram(LlamaConfig.llama3_1_8b()),
    "attention_layer": lambda: viz.attention_layer_diagram(LlamaConfig.qwen3_0_6b()),
    "tiling": lambda: viz.tiling_diagram(8, 4, 2, causal=True),
    "minilm": lambda: viz.minilm_diagram(),
    "positional": lambda: viz.positional_diagram(PlaygroundConfig(), narrow=True),
    "kv_cache": lambda: viz.kv_cache_diagram(["<bos>", "the", "cat", "sat", "on", "the"]),
    "luong_step": lambda: viz.luong_step_diagram(SRC, narrow=True),
    "additive_score": lambda: viz.additive_score_diagram(2, 2, 8, narrow=True),
    "beam_search": lambda: viz.beam_search_diagram(narrow=True),
    "gru_cell": lambda: viz.gru_cell_diagram(),
    "tokenizer_pipeline": lambda: viz.tokenizer_pipeline_diagram(*PIPELINE.values()),
}


# narrow canvases (stacked panels, larger text), drawn for a phone: shown 328 px wide at
# 360 px, their smallest text is about 9.5 CSS px (11 to 11.5 points on 5.3 to 5.4 inches)
DRAWN_FOR_PHONES = {
    "connectivity",
    "residual_second_layer",
    "multi_head",
    "elmo",
    "gqa",
    "llama",
    "swiglu",
    "attention_layer",
    "captioning",
    "han",
    "tiling",
    "bert_input",
    "bert_pretraining",
    "bert_layer",
    "electra",
    "minilm",
    "positional",
    "gpt_classifier",
    "kv_cache",
    "luong_step",
    "bahdanau",
    "additive_score",
    "beam_search",
    "gru_cell",
    "tokenizer_pipeline",
    "gpt_blocks",
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_diagrams_are_drawn_the_same_twice_and_fit_the_page(name):
    first, second = CALLS[name](), CALLS[name]()
    assert png(first) == png(second) and first.alt_text == second.alt_text
    width, height = first.get_size_inches()
    sizes = [t.get_fontsize() for t in first.axes[0].texts if t.get_text()]
    if name in DRAWN_FOR_PHONES:
        assert 4.5 <= width <= 5.6 and height <= 8 and min(sizes) / width >= 2.0
    else:
        assert 7 <= width <= 9.5 and height <= 7 and min(sizes) >= 9


# the values of the chapters' own variables that the diagram cells use
CHAPTER_NAMES = {
    "D_HIDDEN": 64,
    "d_model": 10,
    "d_k": 5,
    "W_V": torch.zeros(10, 10),
    "D": 12,
    "H": 3,
    "T": 5,
    "WINDOW": 7,
    "pair_tokens": PAIR,
    "features": torch.zeros(4, 9, 64),
    "config": None,  # per chapter, below
    **PIPELINE,
}
CHAPTER_CONFIGS = {
    "12_elmo": ELMoConfig(vocab_size=252, word_dim=64, hidden_dim=128, n_layers=2),
    "16_beyond_bert": SMALL_BERT,
}


def test_each_chapter_diagram_cell_has_the_figure_s_own_alt_text_and_legible_text():
    found, small = {}, set()
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            match = re.search(r"viz\.(\w+_diagram)\(", source)
            if cell["cell_type"] != "code" or not match or "transformer" in match[1]:
                continue
            namespace = {
                **CHAPTER_NAMES,
                "config": CHAPTER_CONFIGS.get(path.stem),
                "viz": viz,
                "plt": type("P", (), {"show": staticmethod(lambda: None)}),
                "GPTConfig": GPTConfig,
                "BertConfig": BertConfig,
                "ElectraConfig": ElectraConfig,
                "LlamaConfig": LlamaConfig,
                "PlaygroundConfig": PlaygroundConfig,
            }
            exec(source, namespace)
            meta = cell["metadata"]
            assert meta["mystnb"]["image"]["alt"] == namespace["fig"].alt_text, path.name
            assert len(meta["mystnb"]["figure"]["caption"]) > 40, path.name
            found.setdefault(match[1], []).append(path.stem)
            if phone_px(namespace["fig"]) < PHONE_TEXT_PX:
                small.add(match[1])
    assert set(found) == {f"{name}_diagram" for name in CALLS}, found
    assert not small, f"diagrams with text under {PHONE_TEXT_PX} CSS px on a phone: {small}"


# The book's rule for its diagrams on a phone (readers s29-s30 found 10-11 CSS px labels hard to read):
# every text at least 12 CSS px where a 360 px phone shows the figure in its 328 px column
# (viz.interactive's PHONE_COLUMN_PX, the one the sliders' pictures are measured in).
PHONE_TEXT_PX = 12


def phone_px(fig):
    """The smallest text of ``fig`` in CSS px, shown ``PHONE_COLUMN_PX`` wide."""
    width = fig.get_size_inches()[0]
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts if t.get_text().strip()]
    return min(sizes) / 72 * PHONE_COLUMN_PX / width


def test_gqa_diagram_joins_each_query_head_to_its_group_s_key_value_head():
    fig = viz.gqa_diagram(8, (8, 2, 1))
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels.count("key/value heads (cached)") == 3
    # 8 query boxes per panel, then 8, 2 and 1 key/value boxes
    assert sum(label.isdigit() for label in labels) == 3 * 8 + 8 + 2 + 1
    assert "query heads 0 to 3, 4 to 7 share one each" in fig.alt_text
    # each query head is filled with the colour of the key/value head it reads: in the grouped-query
    # panel (the second), heads 0 to 3 in key/value head 0's, 4 to 7 in head 1's, the two different
    boxes = [p for p in fig.axes[0].patches if p.get_facecolor() != (1.0, 1.0, 1.0, 1.0)]
    query, kv = boxes[16:24], boxes[24:26]
    assert [q.get_facecolor() for q in query] == [kv[h // 4].get_facecolor() for h in range(8)]
    assert kv[0].get_facecolor() != kv[1].get_facecolor()
    with pytest.raises(ValueError, match="n_kv_heads"):
        viz.gqa_diagram(8, (3,))
    with pytest.raises(ValueError, match="n_heads"):
        viz.gqa_diagram(32, (8,))


def test_llama_diagram_reads_its_config():
    untied = viz.llama_diagram(LlamaConfig.llama3_1_8b())
    tied = viz.llama_diagram(LlamaConfig.qwen3_0_6b())
    windowed = viz.llama_diagram(LlamaConfig.mistral_7b())
    labels = " | ".join(t.get_text() for t in untied.axes[0].texts)
    assert "layer $L - 1$ = 31" in labels and "$H_{kv}$ = 8" in labels and "14,336" in labels
    assert "layer 0" in labels and "layer $L$ =" not in labels  # from 0, as model.layers counts
    assert "counted from 0" in untied.alt_text
    assert "lm_head (own matrix)" in labels and "has a matrix of its own" in untied.alt_text
    assert "reuses embed_tokens" in tied.alt_text and "RMSNorm on q and k" in tied.alt_text
    assert "window W = 4,096" in windowed.alt_text and "D = 4,096" in windowed.alt_text
    with pytest.raises(TypeError, match="config"):
        viz.llama_diagram(GPTConfig.gpt2())


def test_swiglu_diagram_draws_the_gate_and_the_value_as_two_branches():
    """Chapter 17 (reader's report 4): gate_proj then SiLU on one branch, up_proj alone on the
    other, their product, then down_proj; the widths from the config, written with separators."""
    fig = viz.swiglu_diagram(LlamaConfig.llama3_1_8b())
    texts = [t.get_text() for t in fig.axes[0].texts]
    labels = " | ".join(texts)
    assert sum("gate_proj" in t for t in texts) == sum("up_proj" in t for t in texts) == 1
    assert "SiLU" in labels and "$\\odot$" in labels and "down_proj" in labels
    assert labels.count("F$ = 14,336") == 2 and "$D$ = 4,096" in labels
    by_text = {t.get_text(): t.get_position() for t in fig.axes[0].texts}
    gate, silu = by_text["gate_proj\n$D \\to F$ = 14,336"], by_text["SiLU\n(the gate)"]
    up = by_text["up_proj\n$D \\to F$ = 14,336"]
    assert gate[0] == silu[0] < up[0] and silu[1] > gate[1]  # SiLU above the gate, not the value
    assert "gate_proj, D to F = 14,336, then SiLU" in fig.alt_text
    small = viz.swiglu_diagram(LlamaConfig.small())
    assert "F$ = 176" in " | ".join(t.get_text() for t in small.axes[0].texts)
    with pytest.raises(TypeError, match="config"):
        viz.swiglu_diagram(GPTConfig.gpt2())


def test_attention_layer_diagram_draws_the_steps_in_the_order_of_the_code():
    """Chapter 17 (reader's report 4): the steps of Attention.forward from the bottom up, numbered
    1 to 7 as the chapter's list: projections, QK-norm, RoPE, the cache (Hkv heads), the mask,
    repeat_kv (H heads), then the attention and o_proj (7, reader's report ch17 s4, 2); QK-norm
    dashed for a model without it."""
    fig = viz.attention_layer_diagram(LlamaConfig.qwen3_0_6b())
    texts = fig.axes[0].texts
    height = {t.get_text().split("\n")[0].split(":")[0]: t.get_position()[1] for t in texts}
    order = ["q_proj", "q_norm", "RoPE", "cache", "mask", "repeat_kv"]
    assert [height[name] for name in order] == sorted(height[name] for name in order)
    attention, out = height["attention of the $H$ = 16 heads"], height["o_proj $\\to [B, T, D]$"]
    assert height["repeat_kv"] < attention < out
    numbers = sorted((t.get_position()[1], t.get_text()) for t in texts if t.get_text().isdigit())
    assert [n for _, n in numbers] == ["1", "2", "3", "4", "5", "6", "7"]
    assert numbers[-1][0] == attention  # 7 beside the attention, below o_proj
    assert "7: the attention of the 16 heads with the mask, and o_proj" in fig.alt_text
    assert "repeat_kv: $\\times$2" in [t.get_text().split("\n")[0] for t in texts]
    assert "[B, 8, S + T, 128]: what the cache keeps" in fig.alt_text
    # RoPE turns by the positions seen, P, not by the keys kept, S (reader's report ch17 r1, 1)
    assert [t.get_text() for t in texts].count("RoPE\n$P \\dots P{+}T{-}1$") == 2
    assert "by their positions P to P + T - 1" in fig.alt_text and "P = S without" in fig.alt_text
    # labels for a phone's column: 14 points on 5.2 inches, ~12.3 CSS px at 328 px
    assert min(t.get_fontsize() for t in texts if t.get_text()) == 14
    assert "an RMSNorm on each head of q and of k" in fig.alt_text
    llama = viz.attention_layer_diagram(LlamaConfig.llama3_1_8b())
    dashed = [p for p in llama.axes[0].patches if p.get_linestyle() == "--"]
    assert len(dashed) == 2 and "drawn dashed: this model has none" in llama.alt_text
    assert "repeat_kv copies each key/value head for its 4 query heads" in llama.alt_text
    windowed = viz.attention_layer_diagram(LlamaConfig.mistral_7b())
    assert "a band of width W = 4,096" in windowed.alt_text
    with pytest.raises(TypeError, match="config"):
        viz.attention_layer_diagram(GPTConfig.gpt2())


@pytest.mark.parametrize("preset", ["llama3_1_8b", "qwen3_0_6b", "mistral_7b"])
def test_llama_diagram_narrow_fits_a_phone_s_column(preset):
    """narrow=True: every text inside the 5.2-inch canvas, so the page shows the picture whole
    (under 600 px at 110 dpi: book/_static/reader.js widens wider pictures on a phone into a box
    that scrolls sideways), with the same alt text and the same labels' content as the default."""
    config = getattr(LlamaConfig, preset)()
    fig = viz.llama_diagram(config, narrow=True)
    assert fig.alt_text == viz.llama_diagram(config).alt_text
    buffer = io.BytesIO()  # saved as the inline backend saves it: 110 dpi, tight box
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    width, height = struct.unpack(">II", buffer.getvalue()[16:24])
    assert width <= 5.2 * 110 + 24 < 600 and height <= 8.0 * 110 + 24, (width, height)
    assert min(t.get_fontsize() for t in fig.axes[0].texts if t.get_text()) >= 13
    labels = " | ".join(t.get_text() for t in fig.axes[0].texts)
    c = config
    assert f"layer\n$L - 1$ = {c.num_hidden_layers - 1}" in labels and "layer 0" in labels
    assert f"$H_{{kv}}$ = {c.num_key_value_heads}" in labels
    assert f"{c.intermediate_size:,}" in labels
    assert f"{c.vocab_size:,}" in labels
    assert ("embed_tokens$^\\top$" in labels) == c.tie_word_embeddings
    assert (f"window {c.sliding_window or 0:,}" in labels) == bool(c.sliding_window)
    with pytest.raises(TypeError, match="narrow"):
        viz.llama_diagram(config, narrow=1)


@pytest.mark.parametrize("narrow", [False, True])
def test_llama_diagram_zooms_from_layer_0_with_dark_dotted_lines(narrow):
    """Fig. 17.1: the two dotted lines leave layer 0's box at its top and bottom right corners (not
    between layer 0 and layer 1) and reach the dashed box of the enlarged layer, in a dark blue that
    also outlines layer 0 and the dashed box (reader s36: grey lines beside the grey dashed border
    could not be seen to start at layer 0)."""
    fig = viz.llama_diagram(LlamaConfig.llama3_1_8b(), narrow=narrow)
    ax = fig.axes[0]
    dotted = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert len(dotted) == 2
    layer_0 = next(t for t in ax.texts if t.get_text() == "layer 0")
    layer_1 = next(t for t in ax.texts if t.get_text() == "layer 1")
    box_0 = next(
        p.get_bbox()
        for p in ax.patches
        if isinstance(p, FancyBboxPatch) and p.get_bbox().contains(*layer_0.get_position())
    )
    starts = sorted(
        ((line.get_xdata()[0], line.get_ydata()[0]) for line in dotted), key=lambda p: p[1]
    )
    assert starts[0] == pytest.approx((box_0.x1, box_0.y0))  # the bottom right corner of layer 0
    assert starts[1] == pytest.approx((box_0.x1, box_0.y1))  # its top right corner
    assert starts[1][1] < layer_1.get_position()[1]  # below layer 1's label
    dashed = next(p for p in ax.patches if p.get_linestyle() == "--")
    ends = sorted(line.get_ydata()[1] for line in dotted)
    box = dashed.get_bbox()
    assert ends == pytest.approx([box.y0, box.y1], abs=0.1)
    assert all(line.get_xdata()[1] == pytest.approx(box.x0, abs=0.1) for line in dotted)
    assert all(to_rgba(line.get_color())[0] <= 0.35 for line in dotted)
    blue = to_rgba(dotted[0].get_color())
    assert blue[2] > 0.5 and blue == to_rgba(dotted[1].get_color())  # blue, not grey
    box_0_patch = next(
        p
        for p in ax.patches
        if isinstance(p, FancyBboxPatch) and p.get_bbox().contains(*layer_0.get_position())
    )
    assert box_0_patch.get_edgecolor() == blue and dashed.get_edgecolor() == blue
    assert "joined to layer 0 by two dotted lines" in fig.alt_text


@pytest.mark.parametrize("narrow", [False, True])
def test_positional_diagram_adds_the_position_before_the_layers(narrow):
    """Chapter 8 (reader's report 2): e_x + p, then the encoder layer, then the read-out, with the
    config's numbers; its mask drawn in full, the other faded."""
    fig = viz.positional_diagram(PlaygroundConfig(positional="learned"), narrow=narrow)
    labels = " | ".join(texts(fig))
    assert (
        "16 x 32" in labels and "learned, 8 x 32" in labels and "2 heads, bidirectional" in labels
    )
    assert "32 $\\to$ 128 $\\to$ 32" in labels and "linear 32 $\\to$ 16 scores" in labels
    # the flow goes up: input, embedding, plus, attention, feed-forward, read-out
    heights = [
        _center(_boxes_labelled(fig, label)[0])[1]
        for label in ["3", "$+$"]
        + [
            t
            for t in texts(fig)
            if t.startswith(("LayerNorm, self", "LayerNorm, feed", "LayerNorm, read"))
        ]
    ]
    assert heights == sorted(heights) and len(heights) == 5
    # 2 x 64 mask cells: the bidirectional mask in full, the causal one faded
    cells = [
        p for p in fig.axes[0].patches if type(p).__name__ == "Rectangle" and p.get_width() < 0.2
    ]
    assert len(cells) == 128
    assert {c.get_alpha() for c in cells[:64]} == {1.0} and {c.get_alpha() for c in cells[64:]} == {
        0.3
    }
    assert "the bidirectional one is drawn in full" in fig.alt_text
    # only the mask is faded: both names dark (the other's in 0.55 grey was nearly invisible on a
    # phone, a reader's report on chapter 8)
    names = [x for x in fig.axes[0].texts if x.get_text() in ("bidirectional", "causal")]
    assert len(names) == 2 and {x.get_color() for x in names} == {"0.1"}
    causal = viz.positional_diagram(PlaygroundConfig(positional="none", causal=True), narrow=narrow)
    assert "causal one is drawn in full" in causal.alt_text and "none: p_t = 0" in causal.alt_text
    assert any("none: $\\mathbf{p}_t = 0$" == t for t in texts(causal))
    with pytest.raises(TypeError, match="config"):
        viz.positional_diagram(GPTConfig.gpt2())
    with pytest.raises(TypeError, match="narrow"):
        viz.positional_diagram(PlaygroundConfig(), narrow=1)


def test_gpt_classifier_diagram_reads_the_last_token_only():
    from matplotlib.text import Text

    fig = viz.gpt_classifier_diagram(("the", "keys", "are", "old"), n_classes=3)
    t = texts(fig)
    # one column per token, <bos> and <eos> included, and one final state each
    assert [s for s in t if s in ("<bos>", "the", "keys", "are", "old", "<eos>")] == [
        "<bos>", "the", "keys", "are", "old", "<eos>",
    ]  # fmt: skip
    assert t.count("$h$") == 6 and "head: $D \\to 3$" in t
    # the state read (the last) drawn black, the others grey
    states = [x for x in fig.findobj(Text) if x.get_text() == "$h$"]
    assert [x.get_color() for x in states].count("black") == 1
    assert max(states, key=lambda x: x.get_position()[0]).get_color() == "black"
    assert "Only the state of the last token, <eos>, is read" in fig.alt_text
    # legible on a phone: every text at least 9 px high in a 330 px column
    width = fig.get_size_inches()[0]
    scale = min(1.0, 330 / (width * 110)) * 110
    assert min(x.get_fontsize() / 72 * scale for x in fig.findobj(Text) if x.get_text()) >= 9
    plt.close(fig)
    with pytest.raises(ValueError, match="words"):
        viz.gpt_classifier_diagram(("a",) * 6)
    with pytest.raises(TypeError, match="words"):
        viz.gpt_classifier_diagram("the keys")
    with pytest.raises(ValueError, match="n_classes"):
        viz.gpt_classifier_diagram(n_classes=1)


@pytest.mark.parametrize("narrow", [False, True])
def test_bahdanau_diagram_hard_reads_one_drawn_position(narrow):
    """Chapter 4's hard-attention decoder (review ch04 s18, item 4): the same step, except that
    the context is the annotation of one drawn position and no gradient flows back through it."""
    source = "a heavy green cow rarely runs".split()
    soft, hard = (viz.bahdanau_diagram(source, narrow=narrow, hard=h) for h in (False, True))
    t_soft, t_hard = texts(soft), texts(hard)
    assert "$z_t\\sim\\alpha_t$: $\\mathbf{c}_t=\\mathbf{h}_{z_t}$" in t_hard
    # review ch04 s21, item 8: not "no gradient" alone, since REINFORCE gives the weights one
    label = "no backprop" + ("\n" if narrow else " ") + "(REINFORCE)"
    assert label in t_hard and "no backprop" not in t_soft
    assert "$\\mathbf{c}_t=\\sum_j\\alpha_{tj}\\mathbf{h}_j$" not in t_hard
    assert "to step $t+1$" in t_hard and "to step $t+1$" in t_soft  # s_t goes on (item 5)
    assert "hard attention" in hard.alt_text and "no gradient" in hard.alt_text
    assert "REINFORCE instead" in hard.alt_text
    assert len(arrows(hard)) == len(arrows(soft))
    with pytest.raises(TypeError, match="hard"):
        viz.bahdanau_diagram(source, hard="yes")


def _overlapping_texts(fig):
    """The pairs of texts whose drawn boxes overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    shown = [t for t in fig.axes[0].texts if t.get_text().strip()]
    extents = [t.get_window_extent(renderer) for t in shown]
    return [
        (shown[i].get_text(), shown[j].get_text())
        for i in range(len(shown))
        for j in range(i + 1, len(shown))
        if extents[i].overlaps(extents[j])
    ]


def test_gru_cell_diagram_draws_nn_gru_s_equations():
    """r_j and z_j read x_j and h_{j-1}; n_j reads x_j, h_{j-1} and r_j; the mix reads n_j, z_j and
    h_{j-1} (torch's h_j = (1 - z_j) * n_j + z_j * h_{j-1}) and gives h_j."""
    fig = viz.gru_cell_diagram()
    t = texts(fig)
    mix = (
        "$\\mathbf{h}_j=(1-\\mathbf{z}_j)\\odot\\mathbf{n}_j+\\mathbf{z}_j\\odot\\mathbf{h}_{j-1}$"
    )
    assert mix in t and "h_j = (1 - z_j) * n_j + z_j * h_(j-1)" in fig.alt_text
    (x,) = _boxes_labelled(fig, "$\\mathbf{x}_j$")
    (h_prev,) = _boxes_labelled(fig, "$\\mathbf{h}_{j-1}$")
    (r,) = _boxes_labelled(fig, "reset gate $\\mathbf{r}_j$\n$\\sigma$")
    (z,) = _boxes_labelled(fig, "update gate $\\mathbf{z}_j$\n$\\sigma$")
    (n,) = _boxes_labelled(fig, "candidate $\\mathbf{n}_j$\n$\\tanh$")
    (m,) = _boxes_labelled(fig, mix)
    (h,) = _boxes_labelled(fig, "$\\mathbf{h}_j$")

    def sources(box):
        """The boxes an arrow into ``box`` comes from: directly, or along a bus (a line drawn from
        a box's edge whose path passes the arrow's tail)."""
        found = set()
        for p in arrows(fig):
            (x0, y0), tip = _ends(p)
            if not _on(tip, box):
                continue
            for b in boxes(fig):
                if b is not box and _on((x0, y0), b):
                    found.add(id(b))
            for ln in fig.axes[0].lines:
                xs, ys = list(ln.get_xdata()), list(ln.get_ydata())
                on_path = any(
                    min(xa, xb) - 1e-9 <= x0 <= max(xa, xb) + 1e-9
                    and min(ya, yb) - 1e-9 <= y0 <= max(ya, yb) + 1e-9
                    for xa, ya, xb, yb in zip(xs, ys, xs[1:], ys[1:])
                )
                if on_path:
                    found |= {id(b) for b in boxes(fig) if _on((xs[0], ys[0]), b)}
        return found

    assert sources(r) == sources(z) == {id(x), id(h_prev)}
    assert sources(n) == {id(x), id(h_prev), id(r)}
    assert sources(m) == {id(n), id(z), id(h_prev)}
    assert sources(h) == {id(m)}
    assert _overlapping_texts(fig) == []
    # review ch01_s30 pt 7: at 13 points its subscripts were a few pixels high on a 360 px phone
    assert min(x.get_fontsize() for x in fig.axes[0].texts if x.get_text()) >= 16


def test_gru_cell_diagram_bridges_each_crossing_and_dots_each_join():
    """Review s28, ch01 pt 6: x_j's grey drops crossed h_{j-1}'s dark bus with no mark, and the
    crossings read as joins. Each crossing is a gap in the grey line (a white stroke over it, under
    the dark bus); each point where a drop leaves a bus, not at its end, has a dot."""
    fig = viz.gru_cell_diagram()
    ax, dark, grey = fig.axes[0], to_rgba("0.1"), to_rgba("0.45")
    buses = {
        color: [
            ln
            for ln in ax.lines
            if to_rgba(ln.get_color()) == color and len(ln.get_xdata()) >= 3  # from a box
        ]
        for color in (dark, grey)
    }
    dark_bus = [
        (min(xa, xb), max(xa, xb), ya)
        for ln in buses[dark]
        for xa, ya, xb, yb in zip(
            ln.get_xdata(), ln.get_ydata(), ln.get_xdata()[1:], ln.get_ydata()[1:]
        )
        if ya == yb
    ]
    crossings = []
    for a in arrows(fig):
        (x0, y0), (x1, y1) = _ends(a)
        if a.get_edgecolor() == grey and x0 == x1:
            crossings += [(x0, y) for lo, hi, y in dark_bus if lo < x0 < hi and y1 < y < y0]
    assert len(crossings) == 2
    white = [ln for ln in ax.lines if to_rgba(ln.get_color()) == to_rgba("white")]
    for x, y in crossings:
        (gap,) = [ln for ln in white if list(ln.get_xdata()) == [x, x]]
        ys = gap.get_ydata()
        assert min(ys) < y < max(ys) and gap.get_zorder() < 3
        assert any(
            to_rgba(ln.get_color()) == dark
            and ln.get_zorder() > gap.get_zorder()
            and min(ln.get_xdata()) < x < max(ln.get_xdata())
            and set(ln.get_ydata()) == {y}
            for ln in ax.lines
        )
    dots = {(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in ax.lines if ln.get_marker() == "o"}
    for color in (dark, grey):
        for ln in buses[color]:
            xs, ys = list(ln.get_xdata()), list(ln.get_ydata())
            for a in arrows(fig):
                (x0, y0), _ = _ends(a)
                if a.get_edgecolor() == color and y0 == ys[-1] and min(xs) < x0 < max(xs):
                    if x0 != xs[-1]:  # a drop from inside the bus, not its last corner
                        assert (x0, y0) in dots, (x0, y0)
    # where h_{j-1}'s line meets its bus
    (h_prev,) = _boxes_labelled(fig, "$\\mathbf{h}_{j-1}$")
    assert (_center(h_prev)[0], dark_bus[0][2]) in dots


def test_tokenizer_pipeline_diagram_draws_each_step_and_each_piece_over_its_id():
    fig = viz.tokenizer_pipeline_diagram(*PIPELINE.values())
    t = texts(fig)
    for key in ("short", "normalized", "decoded"):
        assert PIPELINE[key] in t
    for step in ("normalise", "pre-tokenise", "WordPiece", "vocabulary", "decode"):
        assert any(step in x for x in t), step
    # every word, every piece, and each id under its piece
    for word in PIPELINE["words"]:
        assert _boxes_labelled(fig, word)
    for piece, token_id in zip(PIPELINE["word_pieces"], PIPELINE["ids"]):
        (id_box,) = _boxes_labelled(fig, str(token_id))
        under = [
            b for b in _boxes_labelled(fig, piece) if abs(_center(b)[0] - _center(id_box)[0]) < 1e-9
        ]
        assert len(under) == 1 and _center(under[0])[1] > _center(id_box)[1]
    assert len(arrows(fig)) == 5  # text -> ... -> ids -> decoded, one arrow a step
    # on a phone (review ch10_s22): 13-point tokens; the ten pieces and their ids on two lines, the
    # nine words on one
    sizes = {t.get_fontsize() for t in fig.axes[0].texts if t.get_text() in PIPELINE["words"]}
    assert sizes == {13}
    rows = {
        key: {round(_center(b)[1], 6) for x in PIPELINE[key] for b in _boxes_labelled(fig, str(x))}
        for key in ("words", "word_pieces", "ids")
    }
    assert len(rows["ids"]) == 2 and len(rows["words"] | rows["word_pieces"]) == 3
    # the first line of the pieces and of the ids ends on "…": the row goes on below (reader s36, M1)
    dots = sorted(round(t.get_position()[1], 6) for t in fig.axes[0].texts if t.get_text() == "…")
    assert len(dots) == 2 and dots[0] == max(rows["ids"])
    assert dots[1] in rows["word_pieces"] and dots[1] < max(rows["words"])
    assert "##3" in fig.alt_text and PIPELINE["decoded"] in fig.alt_text
    assert _overlapping_texts(fig) == []


def test_tokenizer_pipeline_diagram_checks_its_arguments():
    values = dict(PIPELINE)
    with pytest.raises(ValueError, match="ids"):
        viz.tokenizer_pipeline_diagram(*{**values, "ids": values["ids"][:-1]}.values())
    with pytest.raises(TypeError, match="normalized"):
        viz.tokenizer_pipeline_diagram(*{**values, "normalized": None}.values())
    # two lines at most: twelve 10-letter pieces take three
    with pytest.raises(ValueError, match="pieces"):
        viz.tokenizer_pipeline_diagram(
            *{**values, "word_pieces": ["characters"] * 12, "ids": [1] * 12}.values()
        )
