"""Live figures: the reader's own input through the book's real models.

One figure, two places. On the published site no kernel runs, so the page computes: the model,
exported from this library to ONNX (tools/export_models.py), runs in the reader's browser
(web/src, onnxruntime-web in a Web Worker). In Jupyter or Colab the same figure is computed by this
library in the kernel, as an ipywidgets form.

:class:`LiveFigure` carries both. Displayed, it gives a MIME bundle with

- ``text/html``: ``<div class="book-live" data-live=KIND>`` holding the precomputed example as JSON
  (the page's script draws it at once and computes new inputs on request) and a static picture of the
  example (a PNG), which is what a reader without JavaScript sees;
- ``image/png``: the same picture, for viewers that render neither HTML nor widgets;
- with ``widget=``, the widget's own view, which Jupyter and Colab prefer: there the kernel computes.

The book's site prefers ``text/html`` (``nb_mime_priority_overrides`` in _config.yml).

Ready-made figures:

- :func:`minilm_attention`: any sentence -> every layer's and head's attention of MiniLM (chapters 6
  and 15), a layer x head selector, the heatmap and a head view;
- :func:`minilm_head_ranking`: two sentences and a word pair -> heads ranked by how much the weight
  from one word to the other changes (chapter 15's "tired" / "wide" test);
- :func:`translation_alignment`: a sentence of the generated language -> the Bahdanau model's greedy
  translation and its alignment (chapter 4);
- :func:`gpt_next_token`: a prompt of the story language -> the small GPT's next-token distribution
  (temperature, top-k, top-p on the page) and the last token's attention (chapter 13);
- :func:`positional_encoding_figure`, :func:`masked_softmax_figure`, :func:`score_functions_figure`:
  computed by the page itself, no model (chapters 8 and 3).
"""

from __future__ import annotations

import base64
import html
import json
import math
import struct

import matplotlib.pyplot as plt
import torch

from lib._validate import is_int
from lib.viz.heatmap import DIVERGING_CMAP, attention_heatmap
from lib.viz.interactive import PHONE_RC, figure_png

__all__ = [
    "LiveFigure",
    "minilm_attention",
    "minilm_head_ranking",
    "minilm_attentions",
    "rank_heads",
    "translation_alignment",
    "gpt_next_token",
    "positional_encoding_figure",
    "masked_softmax_figure",
    "score_functions_figure",
]

# Under the static picture in print, the ePub and without JavaScript (the page's script hides it, and
# the print style sheet shows it again): where the figure is live.
PRINT_NOTE = (
    "Live figure: this is its precomputed example. On the book's website the page computes it "
    "for your own input, in your browser, on this chapter's page."
)

MAX_TOKENS = 128  # the page cuts longer inputs to this many tokens (tools/export_models.py)


class LiveFigure:
    """A figure the site computes in the browser and Jupyter computes in the kernel.

    kind: the figure's name in web/src/figures/index.js (e.g. ``"minilm-attention"``).
    example: the precomputed example (JSON-serialisable), drawn at once on the page.
    png: a static picture of the example (PNG bytes). alt: its alternative text (required).
    widget: optional ipywidgets widget computing the figure in the kernel.
    png_dpi: optional, the pixels per inch the picture was drawn at, when it was drawn for print
    (300): the page then shows it at its size in inches (96 CSS px an inch, shrunk to the column if
    wider), so that print and the ePub get 300 pixels an inch and a phone the same text as at 96.
    Without it, the page shows the picture at its width in pixels.
    """

    def __init__(
        self,
        kind: str,
        example: dict,
        *,
        png: bytes,
        alt: str,
        widget=None,
        caption: str | None = None,
        png_dpi: int | None = None,
    ):
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"kind: expected the figure's name (a non-empty str), got {kind!r}")
        if not isinstance(example, dict):
            raise TypeError(f"example: expected a dict (JSON), got {type(example).__name__}")
        if not isinstance(png, bytes | bytearray) or not png.startswith(b"\x89PNG"):
            raise TypeError(f"png: expected PNG bytes, got {type(png).__name__}")
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError(f"alt: expected a description of the picture, got {alt!r}")
        if png_dpi is not None and (not is_int(png_dpi) or not 96 <= png_dpi <= 1200):
            raise ValueError(f"png_dpi: expected an int from 96 to 1200 or None, got {png_dpi!r}")
        self.kind, self.example, self.png, self.alt = kind, example, bytes(png), alt
        self.widget, self.caption, self.png_dpi = widget, caption, png_dpi

    def html(self) -> str:
        data = json.dumps(self.example, separators=(",", ":")).replace("</", "<\\/")
        img = base64.b64encode(self.png).decode()
        caption = (
            f'<p class="book-live-caption">{html.escape(self.caption)}</p>' if self.caption else ""
        )
        size = ""
        if self.png_dpi is not None:  # its size in inches, 96 CSS px each
            width, height = struct.unpack(">II", self.png[16:24])
            size = (
                f'width="{round(width * 96 / self.png_dpi)}" '
                f'height="{round(height * 96 / self.png_dpi)}" '
            )
        return (
            f'<div class="book-live" data-live="{html.escape(self.kind)}">'
            f'<script type="application/json" class="book-live-example">{data}</script>'
            f'<div class="book-live-static"><img src="data:image/png;base64,{img}" {size}'
            f'alt="{html.escape(self.alt)}" style="max-width:100%;height:auto"></div>{caption}'
            f'<p class="book-live-print">{PRINT_NOTE}</p></div>'
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {
            "text/html": self.html(),
            "image/png": base64.b64encode(self.png).decode(),
            "text/plain": f"LiveFigure({self.kind!r})",
        }
        if self.widget is not None:
            bundle.update(self.widget._repr_mimebundle_() or {})
            bundle["text/html"] = self.html()  # the site's view
        return bundle


# --- MiniLM -----------------------------------------------------------------------------------------


def minilm_attentions(model, tokenizer, text: str, max_tokens: int = MAX_TOKENS):
    """(tokens, attention [L, H, T, T]) of `text` for a lib.bert.Bert, cut to max_tokens as the page does."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    enc = tokenizer.encode(text, max_length=max_tokens)
    with torch.no_grad():
        out = model(torch.tensor([enc.input_ids]), return_attention=True)
    return enc.tokens, torch.stack(out.attentions)[:, 0]


def rank_heads(att_a: torch.Tensor, att_b: torch.Tensor, q: int, k: int, n: int = 5) -> list:
    """[[layer, head, change, weight in a, weight in b]] for the n heads whose weight from token q to
    token k changes most (by absolute value) from attention att_a to att_b (both [L, H, T, T])."""
    change = att_a[:, :, q, k] - att_b[:, :, q, k]  # [L, H]
    H = change.shape[1]
    order = change.flatten().abs().argsort(descending=True, stable=True)[:n].tolist()
    return [
        [
            i // H,
            i % H,
            round(change.flatten()[i].item(), 4),
            round(att_a[i // H, i % H, q, k].item(), 4),
            round(att_b[i // H, i % H, q, k].item(), 4),
        ]
        for i in order
    ]


def _heatmap_png(tokens, weights, title: str) -> bytes:
    # 5.2 inches at 110 dpi with 11-point text: 572 px, about 17 CSS px text in a laptop's column
    # and 9.7 in a phone's 330 px one (the picture shrunk to fit)
    with plt.rc_context(PHONE_RC):
        fig, ax = plt.subplots(figsize=(5.2, 4.8), dpi=110)
        attention_heatmap(weights, tokens, tokens, ax=ax, title=title, annotate=False)
        if fig.get_layout_engine() is None:  # the book's style lays figures out itself
            fig.tight_layout()
        png = figure_png(fig)
    plt.close(fig)
    return png


def _widget_attention(model, tokenizer, text: str, layer: int, head: int, png: bytes):
    import ipywidgets as widgets
    from IPython.display import Image, display

    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    box = widgets.Text(value=text, description="sentence", layout=widgets.Layout(width="95%"))
    layer_w = widgets.Dropdown(options=list(range(L)), value=layer, description="layer")
    head_w = widgets.Dropdown(options=list(range(H)), value=head, description="head")
    out = widgets.Output()

    def redraw(*_):
        tokens, att = minilm_attentions(model, tokenizer, box.value)
        png = _heatmap_png(
            tokens, att[layer_w.value, head_w.value], f"layer {layer_w.value}, head {head_w.value}"
        )
        with out:
            out.clear_output(wait=True)
            display(Image(png))

    for w in (box, layer_w, head_w):
        w.observe(redraw, names="value")
    # The view opens on the example. Not `with out: display(...)` here: run by a notebook
    # executor (Jupyter Book's build, nbval), that makes the executor echo the widget's outputs
    # back to the kernel, and now and then it then waits a whole cell timeout before the next
    # cell (jupyter/nbclient#312, open; tests/test_live_widgets.py measures it).
    out.append_display_data(Image(png))
    return widgets.VBox([box, widgets.HBox([layer_w, head_w]), out])


def minilm_attention(
    model,
    tokenizer,
    text: str,
    *,
    layer: int = 3,
    head: int = 1,
    caption: str | None = None,
    widget: bool = True,
) -> LiveFigure:
    """The live attention figure of MiniLM for `text` (shown first at `layer`, `head`)."""
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    for name, value, top in (("layer", layer, L), ("head", head, H)):
        if not is_int(value) or not 0 <= value < top:
            raise ValueError(f"{name}: expected an int in [0, {top}), got {value!r}")
    tokens, att = minilm_attentions(model, tokenizer, text)
    example = {
        "text": text,
        "tokens": tokens,
        "layer": layer,
        "head": head,
        # per mille, as integers: a third of the bytes of decimals, the precision the figure shows
        "attentions_per_mille": (att * 1000).round().int().tolist(),
    }
    png = _heatmap_png(tokens, att[layer, head], f"layer {layer}, head {head}")
    alt = f"Attention of MiniLM's layer {layer}, head {head} on the sentence '{text}': a heatmap with one row per token (query) and one column per token (key)."
    view = None
    if widget:
        view = _widget_attention(model, tokenizer, text, layer, head, png)
    return LiveFigure("minilm-attention", example, png=png, alt=alt, widget=view, caption=caption)


def minilm_head_ranking(
    model, tokenizer, a: str, b: str, source: str, target: str, *, caption: str | None = None
) -> LiveFigure:
    """The live ranking of heads by how much the weight from `source` to `target` changes from
    sentence `a` to sentence `b` (each word one token, at the same place in both)."""
    tok_a, att_a = minilm_attentions(model, tokenizer, a)
    tok_b, att_b = minilm_attentions(model, tokenizer, b)
    for word in (source, target):
        if word not in tok_a or tok_b[tok_a.index(word)] != word:
            raise ValueError(
                f"source/target: expected {word!r} to be one token at the same place in both sentences; tokens of a: {tok_a}"
            )
    q, k = tok_a.index(source), tok_a.index(target)
    top = rank_heads(att_a, att_b, q, k)
    png = _ranking_png(top, source, target)
    example = {"a": a, "b": b, "from": source, "to": target, "top_heads": top}
    alt = (
        f"Bar chart of the five MiniLM heads whose weight from '{source}' to '{target}' differs most "
        "between the sentences, as the weight in sentence A minus the weight in sentence B; the "
        f"first is layer {top[0][0]}, head {top[0][1]}, {top[0][3]:.2f} in A and {top[0][4]:.2f} "
        f"in B, a difference of {top[0][2]:+.2f}."
    )
    return LiveFigure("minilm-pair", example, png=png, alt=alt, caption=caption, png_dpi=_PRINT_DPI)


_PRINT_DPI = 300  # print and the ePub: 300 pixels an inch


def _ranking_png(top: list, source: str, target: str) -> bytes:
    # 5.2 inches with 11-point text at 300 dpi, shown 5.2 inches (499 CSS px) wide: about 15 CSS px
    # text in a laptop's column, 9.7 in a phone's 330 px one, 300 pixels an inch in print
    with plt.rc_context(PHONE_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.0), dpi=_PRINT_DPI)
        labels = [f"({layer}, {head})" for layer, head, *_ in top][::-1]
        values = [c for _, _, c, _, _ in top][::-1]
        ax.barh(labels, values, color=["C0" if v >= 0 else "C1" for v in values])
        ax.axvline(0, color="0.3", lw=1)
        for y, v in enumerate(values):
            ax.text(v, y, f" {v:+.3f} ", va="center", ha="left" if v >= 0 else "right")
        most = max(abs(v) for v in values) or 1.0
        ax.set_xlim(-1.45 * most if min(values) < 0 else 0, 1.45 * most if max(values) > 0 else 0)
        ax.set(
            xlabel=f"weight {source} → {target}: in A minus in B",
            ylabel="(layer, head)",
            title="the heads whose weight differs most",
        )
        if fig.get_layout_engine() is None:  # the book's style lays figures out itself
            fig.tight_layout()
        png = figure_png(fig)
    plt.close(fig)
    return png


# --- the translator -----------------------------------------------------------------------------


def translation_alignment(
    model, src_vocab, tgt_vocab, sentence: str, *, max_len: int = 60, caption: str | None = None
) -> LiveFigure:
    """The live translator figure (chapter 4): the greedy translation of `sentence` by a lib.seq2seq
    model with attention, and its alignment [output words, source words]. On the site the page
    translates the reader's sentences with the same model exported to ONNX."""
    from lib.seq2seq import greedy_decode

    if not isinstance(sentence, str) or not sentence.split():
        raise ValueError(f"sentence: expected a non-empty str of source words, got {sentence!r}")
    words = sentence.lower().split()
    src = torch.tensor([src_vocab.encode(words)])
    with torch.no_grad():
        tokens, _, weights = greedy_decode(
            model, src, torch.tensor([len(words)]), max_len, tgt_vocab.bos_id, tgt_vocab.eos_id
        )
    ids = tokens[0].tolist()
    n = ids.index(tgt_vocab.eos_id) + 1 if tgt_vocab.eos_id in ids else len(ids)
    out = [tgt_vocab.itos[i] for i in ids[:n]]
    attention = weights[0, :n]  # [L, S]
    with plt.rc_context(PHONE_RC):  # 11-point words at 72 dpi: 11 CSS px at its natural width
        fig, ax = plt.subplots(figsize=(2.4 + 0.45 * len(words), 1.8 + 0.4 * n), dpi=72)
        attention_heatmap(attention, words, out, ax=ax, annotate=False, title="alignment")
        png = figure_png(fig)
    plt.close(fig)
    example = {
        "source": " ".join(words),
        "tokens": out,
        "attention": [[round(v, 4) for v in row] for row in attention.tolist()],
        "source_words": [w for w in src_vocab.itos if not w.startswith("<")],
    }
    alt = f"Alignment of the greedy translation of '{' '.join(words)}' into '{' '.join(t for t in out if t != '<eos>')}': one row per output word, one column per source word."
    return LiveFigure("translator", example, png=png, alt=alt, caption=caption)


# --- the story GPT --------------------------------------------------------------------------------


def gpt_next_token(
    model, itos: list[str], prompt: str, *, bos_id: int | None = None, caption: str | None = None
) -> LiveFigure:
    """The live GPT figure (chapter 13): the next-token distribution of `prompt` (words of the story
    language, <bos> first) and the last token's attention in every layer and head. On the site the
    page recomputes both for the reader's prompt and applies temperature, top-k and top-p."""
    if not isinstance(prompt, str) or not prompt.split():
        raise ValueError(f"prompt: expected a non-empty str of words, got {prompt!r}")
    stoi = {t: i for i, t in enumerate(itos)}
    bos = stoi["<bos>"] if bos_id is None else bos_id
    unknown = [w for w in prompt.lower().split() if w not in stoi]
    if unknown:
        hint = ""
        if any(w[-1] in ".,?!" and len(w) > 1 for w in unknown):  # 'tired.' for 'tired .'
            spaced = " ".join(
                prompt.replace(".", " .").replace(",", " ,").replace("?", " ?").split()
            )
            hint = f": write punctuation apart, as the stories do ({spaced!r})"
        raise ValueError(f"prompt: words not in the vocabulary: {unknown}{hint}")
    ids = [bos] + [stoi[w] for w in prompt.lower().split()]
    with torch.no_grad():
        out = model(torch.tensor([ids]), return_attention=True)
    probs = torch.softmax(out.logits[0, -1], -1)  # [V]
    last = torch.stack(out.attentions)[:, 0, :, -1]  # [L, H, T]
    top = probs.argsort(descending=True, stable=True)[:15].tolist()
    # 4.6 inches at 72 dpi with 11-point text: shown whole in a phone's 330 px column
    with plt.rc_context(PHONE_RC):
        fig, ax = plt.subplots(figsize=(4.6, 4.2), dpi=72)
        ax.barh([itos[i] for i in top][::-1], probs[top].tolist()[::-1], color="C0")
        ax.set(xlabel="probability of the next token", title=f"after '{prompt}'")
        if fig.get_layout_engine() is None:  # the book's style lays figures out itself
            fig.tight_layout()
        png = figure_png(fig)
    plt.close(fig)
    tokens = [itos[i] for i in ids]
    example = {
        "prompt": prompt,
        "tokens": tokens,
        "itos": list(itos),
        "next_probs": [round(p, 6) for p in probs.tolist()],
        "last_attention": [
            [[round(v, 4) for v in row] for row in layer] for layer in last.tolist()
        ],
    }
    alt = f"Bar chart of the story GPT's most probable next tokens after '{prompt}'; the first is '{itos[top[0]]}' with probability {probs[top[0]]:.3f}."
    return LiveFigure("gpt", example, png=png, alt=alt, caption=caption)


# --- figures the page computes without a model --------------------------------------------------


def positional_encoding_figure(
    positions: int = 50,
    d_model: int = 128,
    base: float = 10000.0,
    position: int = 10,
    *,
    caption: str | None = None,
) -> LiveFigure:
    """The sinusoidal table for any number of positions, width and base (chapter 8), with one row
    drawn as a curve; the page recomputes it as the reader changes them (no download)."""
    from lib.positional import sinusoidal_encoding

    if not is_int(position) or not 0 <= position < positions:
        raise ValueError(
            f"position: expected an int in [0, positions={positions}), got {position!r}"
        )
    table = sinusoidal_encoding(positions, d_model, base)  # [P, D]
    # the static picture drawn for a phone: 4.6 inches at 72 dpi (331 px) with 11-point text
    with plt.rc_context(
        {
            "font.size": 11,
            "axes.titlesize": 11,
            "axes.labelsize": 11,
            "xtick.labelsize": 11,
            "ytick.labelsize": 11,
        }
    ):
        fig, (ax1, ax2) = plt.subplots(
            2, 1, figsize=(4.6, 5.0), dpi=72, height_ratios=[2, 1], layout="constrained"
        )
        # PuOr over [-1, 1] with its colour bar, as the chapter's other PE figures and the page's live
        # table (posenc.js) draw it
        image = ax1.imshow(table, aspect="auto", cmap=DIVERGING_CMAP, vmin=-1, vmax=1)
        bar = fig.colorbar(image, ax=[ax1, ax2], shrink=0.6, anchor=(0.0, 1.0), ticks=[-1, 0, 1])
        bar.set_label("PE value")
        # the row framed in black and white: seen on orange, white and purple cells alike
        ax1.axhline(position, color="black", lw=2.5)
        ax1.axhline(position, color="white", lw=1)
        ax1.set(
            xlabel="dimension",
            ylabel="position",
            title=f"PE: {positions} positions\nx {d_model} dims",
        )
        # sines (even dimensions) and cosines (odd) apart, as the page draws them: one line through
        # both zig-zags between them
        dims = torch.arange(d_model)
        for parity, name, color in [(0, "sin", "C0"), (1, "cos", "C1")]:
            ax2.plot(dims[parity::2], table[position, parity::2], color=color, lw=1, label=name)
        ax2.set(xlabel="dimension", ylabel=f"PE[{position}]", ylim=(-1.1, 1.1))
        ax2.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False)
    png = figure_png(fig)
    plt.close(fig)
    example = {"positions": positions, "d_model": d_model, "base": base, "position": position}
    alt = f"The sinusoidal positional-encoding table for {positions} positions and {d_model} dimensions (base {base:g}), coloured from orange (-1) through white (0) to purple (+1) as its colour bar shows, and row {position} drawn over the dimensions as two curves, its sines (even dimensions) and its cosines (odd)."
    return LiveFigure("positional-encoding", example, png=png, alt=alt, caption=caption)


def masked_softmax_figure(
    scores, labels, *, causal: bool = True, caption: str | None = None
) -> LiveFigure:
    """The masked-softmax table (chapter 3): the reader edits its unmasked scores on the page (switching
    the causal mask off unlocks the others)."""
    from lib.attention import causal_mask, masked_softmax

    scores = torch.as_tensor(scores, dtype=torch.float32)
    if scores.dim() != 2 or scores.shape[0] != scores.shape[1] or scores.shape[0] != len(labels):
        raise ValueError(
            f"scores: expected a square [n, n] matrix with n = len(labels) = {len(labels)}, got shape {tuple(scores.shape)}"
        )
    n = scores.shape[0]
    mask = causal_mask(n) if causal else torch.ones(n, n, dtype=torch.bool)
    weights = masked_softmax(scores, mask)
    # 4.6 inches at 72 dpi with 11-point text (ticks and numbers): legible in a phone's 330 px column
    with plt.rc_context(PHONE_RC):
        fig, ax = plt.subplots(figsize=(4.6, 3.9), dpi=72)
        attention_heatmap(
            weights, list(labels), list(labels), ax=ax, title="masked softmax", annotate_size=11
        )
        png = figure_png(fig)
    plt.close(fig)
    example = {
        "scores": [[round(v, 4) for v in row] for row in scores.tolist()],
        "labels": list(labels),
        "causal": causal,
    }
    kind = "causal softmax" if causal else "softmax"
    alt = f"The attention weights of a {n} x {n} score table after the {kind}."
    return LiveFigure("masked-softmax", example, png=png, alt=alt, caption=caption)


# the score-functions figure's plane fits its vectors: the longest coordinate and 30% for its point's
# label, rounded up to a half, at least 1 (a fixed -4 .. 4 drew the chapter's unit vectors 35-40 px
# long in a 300 px plane: review ch03_s22, point 10). The page applies the same rule as they move.
SCORE_PLANE_MARGIN = 1.3
# the bar chart's y axis ends above 1, leaving the legend a row of its own
BAR_CHART_TOP = 1.3


def _seeded_score_weights(q, k, seed: int, d_hidden: int):
    """The softmax weights of the five score functions for query q over keys k, and the general and
    additive modules that gave them (seeded; their weights redrawn from N(0, 1) as in the chapter:
    the libraries' small initial weights would make both nearly flat)."""
    from lib.attention import (
        AdditiveScore,
        GeneralScore,
        cosine_score,
        dot_product_score,
        scaled_dot_product_score,
    )

    torch.manual_seed(seed)
    general, additive = GeneralScore(2, 2), AdditiveScore(2, 2, d_hidden)
    with torch.no_grad():
        # the additive's first, then the general's: the additive's weights stay those drawn
        # before the general's were redrawn too
        for w in (
            additive.W_q.weight,
            additive.W_k.weight,
            additive.v_a.weight,
            general.W_a.weight,
        ):
            w.normal_()
        scores = {  # in the order of chapter 3's tables and figures (location left out)
            "cosine": cosine_score(q, k),
            "additive": additive(q, k),
            "general": general(q, k),
            "dot": dot_product_score(q, k),
            "scaled dot": scaled_dot_product_score(q, k),
        }
    weights = {name: torch.softmax(s[0, 0], -1) for name, s in scores.items()}
    return weights, general, additive


def _score_bars_png(weights: dict, n: int) -> bytes:
    """The static picture: each score function's weights of the n keys as a group of bars."""
    # 4.6 inches at 72 dpi with 11-point text: shown whole in a phone's 330 px column
    with plt.rc_context(PHONE_RC):
        # layout "tight": room for the slanted names of the score functions (the style's own layout
        # engine would warn if tight_layout were called after it)
        fig, ax = plt.subplots(figsize=(4.6, 3.4), dpi=72, layout="tight")
        for i, w in enumerate(weights.values()):
            xs = [j + i * (n + 1) for j in range(n)]
            bars = ax.bar(xs, w.tolist(), color=[f"C{j}" for j in range(n)])
        # which colour is which key: one legend row above the bars, which reach at most 1
        ax.set_ylim(0, BAR_CHART_TOP)
        ax.legend(bars, [f"k{j + 1}" for j in range(n)], loc="upper center", ncols=n, frameon=False)
        ax.set_xticks([i * (n + 1) + (n - 1) / 2 for i in range(len(weights))], list(weights))
        plt.setp(ax.get_xticklabels(), rotation=20, ha="right", rotation_mode="anchor")
        ax.set(ylabel="weight", title="the keys' weights, per score function")
        png = figure_png(fig)
    plt.close(fig)
    return png


def score_plane_span(points) -> float:
    """The half-width of the score-functions figure's plane for these 2-D points (web/src/figures/
    scores.js's planeSpan): it shows coordinates from -span to span."""
    longest = max(abs(float(x)) for point in points for x in point)
    return max(1.0, math.ceil(2 * SCORE_PLANE_MARGIN * longest) / 2)


def score_functions_figure(
    query,
    keys,
    *,
    seed: int = 0,
    d_hidden: int = 3,
    caption: str | None = None,
) -> LiveFigure:
    """Drag the query and the keys (2-D) and watch the weights of five score functions (chapter 3):
    cosine, additive (W_q, W_k, v_a), general (W_a), dot and scaled dot, in the chapter's order; the general's and the
    additive's weights are seeded draws from N(0, 1), so that the untrained functions are not flat. The page computes them as lib.attention does. The example's
    span is the half-width of the plane the page draws first (score_plane_span); it refits the plane
    as the points move."""
    q = torch.as_tensor(query, dtype=torch.float32).reshape(1, 1, 2)
    k = torch.as_tensor(keys, dtype=torch.float32).reshape(1, -1, 2)
    weights, general, additive = _seeded_score_weights(q, k, seed, d_hidden)
    n = k.shape[1]
    params = {
        "W_a": general.W_a.weight.tolist(),
        "W_q": additive.W_q.weight.tolist(),
        "W_k": additive.W_k.weight.tolist(),
        "v_a": additive.v_a.weight[0].tolist(),
    }
    example = {
        "query": q[0, 0].tolist(),
        "keys": k[0].tolist(),
        "params": params,
        "span": score_plane_span([q[0, 0].tolist(), *k[0].tolist()]),
        "weights": {name: w.tolist() for name, w in weights.items()},
    }
    alt = f"Bars: the weights of {n} keys under five score functions (cosine, additive, general, dot, scaled dot) for the query {q[0, 0].tolist()}."
    return LiveFigure(
        "score-functions", example, png=_score_bars_png(weights, n), alt=alt, caption=caption
    )
