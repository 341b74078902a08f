# ruff: noqa
# The cells of chapter 17, in order (exec'd by tools/_build_ch17.py).

md(
    "ch17-title",
    f"""
# From GPT-2 to a modern decoder

The chapter *GPT* built GPT-2 {{cite:p}}`radford2019language`: token and position embeddings, a stack of
pre-LN blocks (masked self-attention, then a GELU feed-forward network, each with a residual
connection), and an output layer tied to the token embedding. The open decoders that readers use in
2026, such as Llama 3 {{cite:p}}`grattafiori2024llama`, Qwen3 {{cite:p}}`yang2025qwen` and Mistral 7B
{{cite:p}}`jiang2023mistral`, are still that model: a decoder-only Transformer, the same
[causal mask]({G}causal-mask), the same next-token loss, the same residual stream through pre-norm
blocks. What changed is a handful of components, each replaced by something that trains a little better,
runs a little cheaper or reaches further. This chapter takes them one at a time:

1. what changed since GPT-2, in one table, and the published models' sizes from the library's presets;
2. **RMSNorm** against LayerNorm;
3. **SwiGLU** against the GELU feed-forward network, at equal parameters;
4. **rotary position embedding** (RoPE), derived from the rotation of the chapter *Positional
   encoding*, in both of its conventions;
5. **grouped-query attention**, and what it does to the key/value cache;
6. **sliding-window attention**, its band mask and its cache of fixed size;
7. the result trained on the story corpus beside the GPT of the chapter *GPT*, with the same data,
   steps and (about) the same number of parameters.

The library's model is `lib.llama.Llama` (with `lib.rope` for the rotations). Its tests hold it equal to
the Hugging Face `transformers` implementations of Llama, Qwen3 and Mistral loaded with the same random
weights, and its presets' parameter counts equal the published models' exactly.
""",
)

code(
    "ch17-imports",
    """
import json
import math
import random

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from lib import viz
from lib.attention import causal_mask
from lib.checkpoints import STORY_LLAMA_CURVES_PATH
from lib.data.stories import generate_sentences, generate_stories, word_vocab
from lib.gpt import GPTConfig
from lib.gpt import count_parameters as gpt_parameters
from lib.llama import (
    KVCache,
    Llama,
    LlamaConfig,
    RMSNorm,
    SlidingWindowCache,
    SwiGLU,
    count_parameters,
    kv_cache_bytes_per_token,
    repeat_kv,
    sliding_window_mask,
    swiglu_hidden,
)
from lib.positional import relative_rotation
from lib.rope import apply_rope, rope_cos_sin, rope_frequencies, to_halves
from lib.train import fit

viz.set_style()
# small matrices: one thread is as fast, and the numbers do not depend on the load
torch.set_num_threads(1)
""",
)

md(
    "ch17-table-md",
    f"""
## What changed since GPT-2

| change | paper | replaces (GPT-2) | in `lib.llama` |
|---|---|---|---|
| RMSNorm: divide by the root mean square, no mean, no bias | {{cite:t}}`zhang2019root` | [layer normalization]({G}layer-normalization) | `RMSNorm` |
| SwiGLU: a gated feed-forward network, width about $\\tfrac83 D$ | {{cite:t}}`shazeer2020glu` | the [GELU]({G}GELU) MLP of width $4D$ | `SwiGLU`, `swiglu_hidden` |
| rotary position embedding: queries and keys rotated by their positions | {{cite:t}}`su2021roformer` | a learned position table added to the embeddings | `lib.rope` |
| grouped-query attention: several query heads share one key/value head | {{cite:t}}`ainslie2023gqa`; multi-query: {{cite:t}}`shazeer2019fast` | one key/value head per query head | `Attention`, `repeat_kv` |
| no biases in any linear layer | {{cite:t}}`touvron2023llama` | a bias in every linear layer and LayerNorm | `bias=False` |
| untied embeddings (in the larger models): an output matrix of its own | {{cite:t}}`touvron2023llama` | the output layer reuses the token embedding | `tie_word_embeddings` |
| sliding-window attention: each token attends to the last $W$ positions | {{cite:t}}`jiang2023mistral`, after {{cite:t}}`beltagy2020longformer` | attention to every earlier position | `sliding_window` |
| QK-norm: an RMSNorm on each head's queries and keys | {{cite:t}}`yang2025qwen` | nothing | `qk_norm` |

The library's `LlamaConfig` has one preset per published model, with the numbers of its `config.json`;
the next cell sets them beside GPT-2 small ($H_{{kv}}$ is the number of key/value heads, $D_h$ the width
of a head, $F$ the feed-forward width, $\\theta$ the RoPE base of the section on RoPE):
""",
)

code(
    "ch17-presets",
    """
presets = {
    "Llama 3.2 1B": LlamaConfig.llama3_2_1b(),
    "Llama 3.1 8B": LlamaConfig.llama3_1_8b(),
    "Qwen3 0.6B": LlamaConfig.qwen3_0_6b(),
    "Mistral 7B": LlamaConfig.mistral_7b(),
}
gpt2 = GPTConfig.gpt2()
rows = [["GPT-2 small", f"{gpt_parameters(gpt2):,}", gpt2.n_layer, gpt2.n_embd,
         gpt2.n_head, gpt2.n_head, gpt2.n_embd // gpt2.n_head, 4 * gpt2.n_embd,
         "learned", "-", "yes"]]
for name, c in presets.items():
    rows.append([name, f"{count_parameters(c):,}", c.num_hidden_layers, c.hidden_size,
                 c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                 c.intermediate_size, f"{c.rope_theta:,.0f}", c.sliding_window or "-",
                 "yes" if c.tie_word_embeddings else "no"])
viz.table(["model", "parameters", "layers", "D", "H", "Hkv", "Dh", "F", "theta",
           "window", "tied"], rows)
""",
)

check(
    "ch17-presets-check",
    """
assert [r[1] for r in rows] == ["124,439,808", "1,235,814,400", "8,030,261,248",
                                "596,049,920", "7,241,732,096"]
""",
)

md(
    "ch17-block-md",
    f"""
The layer keeps the shape of GPT-2's block: two sub-layers, each reading a normalized copy of the
residual stream and adding its result back ([pre-LN]({G}pre-LN)); only the parts inside have changed.
Drawn from the library's preset of Llama 3.1 8B:
""",
)

code("ch17-llama-diagram", """
fig = viz.llama_diagram(LlamaConfig.llama3_1_8b())
plt.show()
""", tags=["hide-input"], fig=(
    "fig-17-llama-diagram",
    "Llama 3.1 8B as the library builds it from LlamaConfig.llama3_1_8b(), drawn as the chapter GPT "
    "drew GPT-2. Left, the stack: the token embedding alone, with no position table (positions enter "
    "inside attention, by RoPE), 32 layers, a final RMSNorm and an output layer with a matrix of its own. "
    "Right, one layer: GPT-2's pre-norm shape, with RMSNorm in place of LayerNorm, grouped-query "
    "self-attention (32 query heads, 8 key/value heads) that rotates queries and keys, and SwiGLU in "
    "place of the GELU MLP.",
    __import__("lib.viz", fromlist=["x"]).llama_diagram(
        __import__("lib.llama", fromlist=["x"]).LlamaConfig.llama3_1_8b()).alt_text,
))

md("ch17-block-code-md", """
And as the library writes it, with the names of the published checkpoints (`input_layernorm`,
`self_attn`, `post_attention_layernorm`, `mlp`):
""")

code(
    "ch17-block-source",
    """
viz.show_source("lib.llama.DecoderLayer.forward")
""",
)

md(
    "ch17-block-walk",
    """
`x` is the residual stream, $[B, T, D]$; `cos` and `sin` are the rotation angles of the positions of this
call (the RoPE section); `kv_cache` and `layer` are the key/value cache of generation and this layer's
index in it, as in the chapter *GPT*. The rest of the chapter opens the four boxes: `input_layernorm` and
`post_attention_layernorm` (RMSNorm), `mlp` (SwiGLU) and `self_attn` (RoPE, grouped-query heads, and
optionally a sliding window).
""",
)

# ---------------------------------------------------------------------------------------------- RMSNorm

md(
    "ch17-rms-md",
    f"""
## RMSNorm against LayerNorm

[Layer normalization]({G}layer-normalization), as the chapter *The Transformer* wrote it, takes the
mean $\\mu$ and the standard deviation $\\sigma$ of a token's $D$ features and returns
$g_i (x_i - \\mu)/\\sigma + b_i$, with a learned gain $g$ and bias $b$. {{cite:t}}`zhang2019root` kept only
the division. **RMSNorm** divides each token's vector by its root mean square and multiplies by the gain:

$$\\operatorname{{RMSNorm}}(x)_i = \\frac{{x_i}}{{\\operatorname{{RMS}}(x)}}\\, g_i, \\qquad
\\operatorname{{RMS}}(x) = \\sqrt{{\\frac{{1}}{{D}}\\sum_{{j=1}}^{{D}} x_j^2 + \\epsilon}}.$$

No mean is subtracted and there is no bias. Their argument: what makes LayerNorm useful is that it
undoes any rescaling of the input, and division by the RMS keeps that; the re-centering can go. It saves
one reduction over the features per normalization, and in their experiments it trained as well as
LayerNorm while reducing the running time by 7% to 64%. Every model of this chapter uses it. The library's version:
""",
)

code(
    "ch17-rms-source",
    """
viz.show_source("lib.llama.RMSNorm")
""",
)

md(
    "ch17-rms-walk",
    """
`h.pow(2).mean(-1, keepdim=True)` is the mean square over the last dimension, $[..., 1]$, and
`torch.rsqrt` is $1/\\sqrt{\\cdot}$. The computation runs in float32 (`x.float()`) and is cast back to the
input's type before the gain, as `transformers` does for models run in 16-bit numbers. PyTorch has had its
own `torch.nn.RMSNorm` since version 2.4; the two should agree, and for inputs whose mean is already 0
RMSNorm should agree with a LayerNorm without gain and bias:
""",
)

code(
    "ch17-rms-check",
    """
torch.manual_seed(0)
D = 64
x = 3 * torch.randn(4, 10, D) + 1  # [B, T, D], a mean far from 0
ours = RMSNorm(D, eps=1e-5)
torch_rms = nn.RMSNorm(D, eps=1e-5)
with torch.no_grad():
    ours.weight.copy_(1 + 0.1 * torch.randn(D))
    torch_rms.weight.copy_(ours.weight)
    gap_torch = (ours(x) - torch_rms(x)).abs().max().item()
    plain = RMSNorm(D, eps=1e-5)(x)
    centred = x - x.mean(-1, keepdim=True)
    as_layernorm = (plain - F.layer_norm(x, (D,), eps=1e-5)).abs().max().item()
    centred_gap = (
        RMSNorm(D, eps=1e-5)(centred) - F.layer_norm(centred, (D,), eps=1e-5)
    ).abs().max().item()
print(f"library against torch.nn.RMSNorm: largest difference {gap_torch:.1e}")
print(f"RMS of each output row: {plain.pow(2).mean(-1).sqrt().mean():.4f}")
print(f"RMSNorm against LayerNorm, inputs of mean ~1: {as_layernorm:.2f}")
print(f"the same on the centred inputs: {centred_gap:.1e}")
""",
)

check(
    "ch17-rms-asserts",
    """
assert gap_torch < 1e-6 and centred_gap < 1e-5
assert f"{as_layernorm:.2f}" == "0.87"
""",
)

md(
    "ch17-rms-after",
    """
The library's RMSNorm and PyTorch's agree to float32 rounding. On inputs whose features average about 1,
RMSNorm and LayerNorm give different vectors (they differ by up to 0.87, on outputs of RMS 1): the mean
that LayerNorm removes is part of what RMSNorm keeps. Centre the same inputs first and the two agree.
A model trained with one cannot be loaded into the other; a reader writing RMSNorm by hand who
subtracts the mean "to be safe" has written LayerNorm (exercise 3 catches it).
""",
)

# ---------------------------------------------------------------------------------------------- SwiGLU

md(
    "ch17-swiglu-md",
    f"""
## SwiGLU against the GELU feed-forward network

GPT-2's feed-forward network widens each position's vector to $4D$, bends it with GELU and brings it
back: $\\operatorname{{FFN}}(x) = \\operatorname{{GELU}}(x W_1 + b_1) W_2 + b_2$, two matrices of $D \\times 4D$, so
$8D^2$ weights. A **gated linear unit** (GLU) multiplies two projections of the input, one of them passed
through a nonlinearity that acts as a gate. {{cite:t}}`shazeer2020glu` tried several gates and found the
Swish (or SiLU) gate, $\\operatorname{{Swish}}(z) = z\\,\\sigma(z)$, among the best:

$$\\operatorname{{FFN}}_{{\\text{{SwiGLU}}}}(x) = \\big(\\operatorname{{Swish}}(x W) \\odot x V\\big) W_2 .$$

$W$ (the *gate*, `gate_proj`) and $V$ (the *value* it scales, `up_proj`) are $D \\times F$, $W_2$
(`down_proj`) is $F \\times D$. Three matrices instead of two: to keep the $8D^2$ weights of GPT's
network, $3DF = 8D^2$, so $F = \\tfrac83 D$, the width the paper used. The library's block:
""",
)

code(
    "ch17-swiglu-source",
    """
viz.show_source("lib.llama.SwiGLU")
""",
)

md(
    "ch17-swiglu-round",
    """
Real configurations do not use $\\tfrac83 D$ exactly. Meta's Llama code computes it, multiplies it by a
per-model factor (`ffn_dim_multiplier`, which trades width for depth at the same budget) and rounds up to
a multiple of a round number (`multiple_of`), so that the matrices tile well on the hardware:
""",
)

code(
    "ch17-swiglu-hidden",
    """
viz.show_source("lib.llama.swiglu_hidden")
""",
)

code(
    "ch17-swiglu-table",
    """
rounding = {  # the (multiple_of, ffn_dim_multiplier) of each model's own code
    "Llama 3.2 1B": (256, 1.5),
    "Llama 3.1 8B": (1024, 1.3),
    "Mistral 7B": (1024, 1.3),
}
rows, recomputed = [], {}
for name, c in presets.items():
    D, F_ = c.hidden_size, c.intermediate_size
    if name in rounding:
        recomputed[name] = swiglu_hidden(D, *rounding[name])
    rows.append([name, D, f"{8 * D / 3:,.1f}", f"{F_:,}", f"{F_ / D:.2f}",
                 f"{3 * D * F_ / (8 * D**2):.2f}",
                 f"{recomputed[name]:,}" if name in recomputed else "(3D, chosen)"])
viz.table(["model", "D", "8D/3", "F", "F / D", "weights / GPT's 8D^2",
           "swiglu_hidden"], rows)
small = LlamaConfig.small()
gelu_mlp = 2 * 64 * 256 + 256 + 64  # GPT's MLP at D = 64, with its biases
print(f"the book's small model: F = swiglu_hidden(64, 16) = {swiglu_hidden(64, 16)}; "
      f"SwiGLU {sum(p.numel() for p in SwiGLU(small).parameters()):,} weights, "
      f"GPT's MLP {gelu_mlp:,}")
""",
)

check(
    "ch17-swiglu-asserts",
    """
assert all(recomputed[n] == presets[n].intermediate_size for n in recomputed)
assert swiglu_hidden(64, 16) == 176 and 3 * 64 * 176 == 33_792 and gelu_mlp == 33_088
assert [r[5] for r in rows] == ["1.50", "1.31", "1.12", "1.31"]
""",
)

md(
    "ch17-swiglu-after",
    """
None of the four published models keeps GPT's parameter budget exactly: the factor and the rounding give
Llama 3.2 1B a feed-forward network 1.50 times as large as GPT's $8D^2$ would be at the same width, the 8B
models 1.31 times, Qwen3 0.6B (which simply sets $F = 3D$) 1.12 times. The equal-parameter rule is where
$\\tfrac83$ comes from, not a law the configurations follow. The book's small model rounds
$\\tfrac83 \\cdot 64 = 170.7$ up to a multiple of 16, 176, which gives its SwiGLU 33,792 weights against the
33,088 of GPT's network at the same width: equal to 2%.
""",
)

# ---------------------------------------------------------------------------------------------- RoPE

md(
    "ch17-rope-md",
    f"""
## Rotary position embedding

### From chapter 8's rotation to RoPE

The chapter *Positional encoding* paired the features of a position vector, $(2i, 2i+1)$, each pair a
point on a circle turning at its own frequency $\\omega_i = 10000^{{-2i/D}}$, and found that moving $k$
positions is a fixed rotation of every pair by the angle $k\\,\\omega_i$: a block-diagonal matrix $M_k$,
`relative_rotation(k, d_model)`. Chapter 8 wrote its 2 x 2 blocks for pairs in the order
$(\\sin, \\cos)$; for a pair $(a, b)$ in the usual order, a turn by the angle $\\alpha$ is

$$R(\\alpha) = \\begin{{pmatrix}}\\cos\\alpha & -\\sin\\alpha\\\\ \\sin\\alpha & \\cos\\alpha\\end{{pmatrix}}.$$

GPT *adds* a position vector to each token's vector and leaves it to the model to find the rotation.
{{cite:t}}`su2021roformer` apply the rotation directly, to the queries and the keys of every head: the
query of the token at position $m$ is turned by $m$, its key at position $n$ by $n$,

$$\\tilde q_m = \\mathbf R_m\\, q, \\qquad \\tilde k_n = \\mathbf R_n\\, k, \\qquad
\\mathbf R_m = \\operatorname{{diag}}\\big(R(m\\omega_0), R(m\\omega_1), \\dots, R(m\\omega_{{D_h/2-1}})\\big),$$

with $\\omega_i = \\theta^{{-2i/D_h}}$ over the $D_h$ features of one head and a *base* $\\theta$
(10,000 as in chapter 8, or larger). Rotations compose and invert simply,
$\\mathbf R_m^\\top \\mathbf R_n = \\mathbf R_{{n-m}}$, so the attention score is

$$\\tilde q_m \\cdot \\tilde k_n = q^\\top \\mathbf R_m^\\top \\mathbf R_n\\, k = q^\\top \\mathbf R_{{n-m}}\\, k :$$

it depends on the two tokens' contents and on the offset $n - m$ between them, never on where the pair
sits in the sequence. Nothing is added to the residual stream and there is no table of positions to
learn or to run out of; values are not rotated. In code, for the pairs $(a, b)$ of a head's vector:
""",
)

code(
    "ch17-rope-source",
    """
viz.show_source("lib.rope.apply_rope")
""",
)

md(
    "ch17-rope-walk",
    """
`cos` and `sin` hold $\\cos m\\omega_i$ and $\\sin m\\omega_i$ for the positions of the call,
$[T, D_h/2]$; `rope_cos_sin` computes them from `rope_frequencies(head_dim, theta)`, the frequencies of
chapter 8 (in float64, rounded once). `(a * cos - b * sin, a * sin + b * cos)` is $R(m\\omega_i)$
applied to each pair. The `"interleaved"` branch pairs features $(2i, 2i + 1)$, as chapter 8 did: there,
RoPE at position $m$ is exactly chapter 8's matrix applied to a row vector, $x\\,M_m$:
""",
)

code(
    "ch17-rope-ch8",
    """
torch.manual_seed(0)
Dh = 16
x = torch.randn(3, Dh, dtype=torch.float64)  # three row vectors, one head
m = 7
frequencies = rope_frequencies(Dh)  # theta = 10,000, chapter 8's
cos, sin = rope_cos_sin(torch.tensor([m]), frequencies, torch.float64)
by_rope = apply_rope(x, cos, sin, "interleaved")
by_chapter_8 = x @ relative_rotation(m, Dh).double()
print(f"RoPE at m = {m} against x @ relative_rotation({m}, {Dh}): "
      f"{(by_rope - by_chapter_8).abs().max():.1e}")
""",
)

check(
    "ch17-rope-ch8-check",
    """
assert (by_rope - by_chapter_8).abs().max() < 1e-6  # relative_rotation is float32
""",
)

md(
    "ch17-rope-relative-md",
    """
The difference is float32 rounding (`relative_rotation` computes in float32). Now the property that
matters. Take one query vector and one key vector and place them at positions $(m, n)$ with the same
offset $m - n = 3$ but far apart in the sequence, then at other offsets:
""",
)

code(
    "ch17-rope-relative",
    """
Dh = 64
frequencies = rope_frequencies(Dh)
g = torch.Generator().manual_seed(1)
q, k = torch.randn(Dh, generator=g), torch.randn(Dh, generator=g)


def rope_score(q, k, m, n, frequencies=frequencies, style="halves"):
    # the attention score (before scaling) of q at position m and k at position n
    cos, sin = rope_cos_sin(torch.tensor([m, n]), frequencies)  # [2, Dh/2]
    q_m = apply_rope(q[None], cos[:1], sin[:1], style)[0]  # [Dh]
    k_n = apply_rope(k[None], cos[1:], sin[1:], style)[0]  # [Dh]
    return (q_m @ k_n).item()


pairs = [(3, 0), (10, 7), (100, 97), (1000, 997), (5000, 4997), (4997, 5000), (5000, 0)]
scores = {(m, n): rope_score(q, k, m, n) for m, n in pairs}
viz.table(["m", "n", "m - n", "q_m . k_n"],
          [[m, n, m - n, f"{s:.4f}"] for (m, n), s in scores.items()])
same_offset = [scores[p] for p in pairs[:5]]
spread = max(same_offset) - min(same_offset)
print(f"offset 3 at five places: scores within {spread:.1e} of each other")
""",
)

check(
    "ch17-rope-relative-check",
    """
assert spread < 1e-4
assert abs(scores[(4997, 5000)] - scores[(3, 0)]) > 0.1  # the sign of the offset matters
assert abs(scores[(5000, 0)] - scores[(3, 0)]) > 0.1
""",
)

md(
    "ch17-rope-relative-after",
    """
The same offset gives the same score at positions 3 and 5,000, to float32 rounding; the opposite offset
($m - n = -3$) gives another score, so unlike the dot product of two of chapter 8's position vectors, which
is blind to direction, RoPE's score knows which token comes first. The figure below lets you move
$m$ and $n$. On the left, the first pair of features (the fastest, $\\omega_0 = 1$ radian per position) of
the query and of the key, each turned by its own position; on the right, the score against the offset.
""",
)

code("ch17-rope-explorer", """
g = torch.Generator().manual_seed(3)
q_demo, k_demo = torch.randn(8, generator=g), torch.randn(8, generator=g)  # Dh = 8
settings = [(2, 0), (5, 3), (11, 9), (17, 15), (9, 4), (14, 9), (3, 8), (12, 12),
            (0, 0), (16, 4)]
explorer = viz.rope_explorer(q_demo, k_demo, settings)
explorer
""")

md(
    "ch17-rope-explorer-caption",
    """
*Move the slider.* The first four settings have the same offset, $m - n = 2$: the two arrows turn
together and the red point stays where it is on the grey curve, at the score computed for positions 22 and
20. Settings $(9, 4)$ and $(14, 9)$ share offset 5, $(12, 12)$ and $(0, 0)$ offset 0; $(3, 8)$ is the
opposite offset, $-5$, with another score. Only the offset moves the point, because only the angle
between the arrows changes it (in this pair; the other pairs turn slower and add their own terms).
""",
)

check("ch17-rope-explorer-check", """
for (m, n), score in explorer.scores.items():  # each state's score lies on the curve
    assert abs(score - explorer.curve[m - n + 12]) < 1e-9
    assert abs(score - rope_score(q_demo, k_demo, m, n, rope_frequencies(8))) < 1e-5
""")

md(
    "ch17-conventions-md",
    """
### Two conventions: interleaved pairs and split halves

Which features form a pair is a choice. RoFormer's paper (its eq. 34) and Meta's original Llama code pair
neighbours, $(2i, 2i + 1)$: *interleaved*. The `transformers` library pairs feature $i$ with feature
$i + D_h/2$, the first half of the head with the second (its function `rotate_half`): *split halves*. Both
use the same frequency $\\omega_i$ for pair $i$. The library's `apply_rope` does either (`style`), and
`LlamaConfig(rope_style=...)` picks one for a model; every checkpoint in `transformers` format uses halves.
Porting code or weights between the two is one of the most frequent confusions with RoPE, and a silent
one: nothing crashes.
""",
)

code(
    "ch17-conventions-figure",
    """
fig, axes = plt.subplots(2, 1, figsize=(8, 2.4), layout="constrained")
Dh_show = 8
pair_of = {
    "interleaved (RoFormer, Meta)": [j // 2 for j in range(Dh_show)],
    "split halves (transformers)": [j % (Dh_show // 2) for j in range(Dh_show)],
}
for ax, (name, pairs_) in zip(axes, pair_of.items()):
    ax.imshow([pairs_], cmap=viz.SEQUENTIAL_CMAP, vmin=-0.5, vmax=Dh_show // 2 - 0.5)
    for j, p in enumerate(pairs_):
        ax.text(j, 0, f"pair {p}", ha="center", va="center",
                color="white" if p < 2 else "black", fontsize=9)
    ax.set_yticks([])
    ax.set_xticks(range(Dh_show))
    ax.set_title(name, fontsize=10)
axes[1].set_xlabel("feature of the head, 0 ... Dh - 1")
plt.show()
""",
    tags=["hide-input"],
    fig=(
        "fig-17-rope-conventions",
        "Which features of one head (here D_h = 8) rotate together. Top: interleaved, neighbours (0, 1), "
        "(2, 3), ... form pairs 0, 1, 2, 3. Bottom: split halves, feature i pairs with feature i + 4. "
        "Same colour, same pair, same frequency; only the places differ, so a fixed reordering of the "
        "features turns one into the other.",
        "Two rows of eight coloured boxes labelled by pair. Top row: pair 0, 0, 1, 1, 2, 2, 3, 3. Bottom "
        "row: pair 0, 1, 2, 3, 0, 1, 2, 3.",
    ),
)

md(
    "ch17-conventions-perm",
    """
A query's features come from the rows of the query projection `q_proj`. Reorder those rows, within each
head, as even rows first and odd rows after (`lib.rope.to_halves`), and the feature that sat at $2i$ now
sits at $i$, the one at $2i + 1$ at $i + D_h/2$: interleaved pairs become split-halves pairs with the same
frequency. Do the same to the keys' rows, and every product $\\tilde q \\cdot \\tilde k$ is the same sum over
the same pairs in another order. This is the permutation that `transformers`' conversion script applies
to Meta's checkpoints. Check it on a whole model: build a small interleaved model, load its weights into
a split-halves model with the rows permuted, and once without:
""",
)

code(
    "ch17-conventions-models",
    """
torch.manual_seed(0)
# weights 5 times the usual initialization: attention depends visibly on position
config_i = LlamaConfig.small(rope_style="interleaved", initializer_range=0.1)
interleaved = Llama(config_i).eval()
halves = Llama(LlamaConfig.small(rope_style="halves", initializer_range=0.1)).eval()
H, Hkv = config_i.num_attention_heads, config_i.num_key_value_heads
state = interleaved.state_dict()
permuted = {
    k: to_halves(v, H) if k.endswith("q_proj.weight")
    else to_halves(v, Hkv) if k.endswith("k_proj.weight") else v
    for k, v in state.items()
}
ids = torch.randint(0, config_i.vocab_size, (2, 40))
with torch.no_grad():
    reference = interleaved(ids).logits  # [2, 40, V]
    halves.load_state_dict(permuted)
    gap_permuted = (halves(ids).logits - reference).abs().max().item()
    halves.load_state_dict(state)  # the same weights, not permuted
    as_is = halves(ids).logits
gap_as_is = (as_is - reference).abs().max().item()
same_top = (as_is.argmax(-1) == reference.argmax(-1)).float().mean().item()
print(f"rows permuted with to_halves: largest logit difference {gap_permuted:.1e}")
print(f"loaded as they are: largest logit difference {gap_as_is:.2f} (logits' standard "
      f"deviation {reference.std():.2f}); the same most probable token at "
      f"{same_top:.0%} of the positions")
""",
)

check(
    "ch17-conventions-check",
    """
assert gap_permuted < 1e-5 and gap_as_is > 1
assert f"{same_top:.0%}" == "45%"
""",
)

md(
    "ch17-conventions-after",
    """
With the rows permuted the two models are the same function, to float32 rounding. Loaded as they are,
the model runs, its outputs have the right shape and size, and it is a different model: its most probable
next token is the same at only 45% of the positions. Nothing raised an error. The library's tests load
`transformers`' Llama into the library with each style and check that only the right one matches.

### The base, and how far apart tokens can be
""",
)

md(
    "ch17-base-md",
    """
Pair $i$ turns once every $2\\pi/\\omega_i = 2\\pi\\,\\theta^{2i/D_h}$ positions, its *wavelength*: from
$2\\pi$ for the fastest pair to almost $2\\pi\\theta$ for the slowest. A pair whose wavelength is much longer
than the context barely turns and carries little position; a pair that turns many times over the
context tells near from far only up to its period. {cite:t}`su2021roformer` showed that a bound on RoPE's
scores decays with the distance $|m - n|$. For a query and a key that are equal (all features 1), the
score is
$2\\sum_i \\cos((m - n)\\,\\omega_i)$, which is largest at offset 0 and falls, with ripples, as the
offset grows. Raising the base stretches every wavelength and slows that decay; Llama 3 uses
$\\theta = 500{,}000$ and Qwen3 $10^6$ against the original 10,000, for longer contexts:
""",
)

code(
    "ch17-base-figure",
    """
Dh = 128
distances = torch.unique(torch.logspace(0, 5, 400).round()).long()
decay = {}
for theta in (10_000.0, 500_000.0):
    w = rope_frequencies(Dh, theta)  # [Dh/2]
    # q = k = all ones: each pair (1, 1) contributes 2 cos((m - n) w_i)
    decay[theta] = (2 * torch.cos(distances[:, None].double() * w).sum(-1) / Dh).tolist()
fig, ax = plt.subplots(figsize=(7.5, 3.4))
for theta, values in decay.items():
    ax.plot(distances, values, label=f"base {theta:,.0f}")
ax.set(xscale="log", xlabel="distance |m - n| (positions)",
       ylabel="score / Dh", title="RoPE's score of two equal vectors, Dh = 128")
ax.axhline(0, color="0.6", lw=0.8)
ax.legend()
plt.show()
wavelengths = {
    name: (2 * math.pi / rope_frequencies(c.head_dim, c.rope_theta)).tolist()
    for name, c in presets.items()
}
for name, wl in wavelengths.items():
    print(f"{name}: wavelengths {wl[0]:.2f} to {wl[-1]:,.0f} positions (without scaling)")
""",
    tags=["hide-input"],
    fig=(
        "fig-17-rope-decay",
        "The score of a query and a key whose 128 features are all 1, against their distance, for the base "
        "10,000 (blue) and 500,000 (orange). Both start near 1 and fall with ripples; with the larger base the "
        "fall comes later, so tokens far apart keep more of their score: at distance 1,000 the blue curve is "
        "down to between 0.05 and 0.25, the orange one still above 0.35. Beyond about 5,000 positions the "
        "base-10,000 curve hovers around 0.",
        "A line chart on a logarithmic distance axis from 1 to 100,000. Two curves start at 1. The blue curve, "
        "base 10,000, falls to between 0.05 and 0.25 by distance 1,000 and oscillates around 0 beyond 5,000. "
        "The orange curve, base 500,000, stays higher and falls later, still above 0.35 at 1,000.",
    ),
)

check(
    "ch17-base-check",
    """
i1000 = int((distances - 1000).abs().argmin())
assert 0.05 < decay[10_000.0][i1000] < 0.25 and decay[500_000.0][i1000] > 0.35
beyond = distances > 5000
assert abs(torch.tensor(decay[10_000.0])[beyond].mean()) < 0.05
assert f"{wavelengths['Llama 3.1 8B'][-1]:,.0f}" == "2,559,196"
assert presets["Llama 3.1 8B"].rope_scaling.factor == 8
""",
)

md(
    "ch17-base-after",
    """
With Llama 3.1 8B's base and head width, the slowest pair turns once in 2,559,196 positions (Llama 3.1 then
stretches the low frequencies further, by a factor 8, with the scaling of `Llama3RopeScaling`, which
the library implements). Mistral 7B keeps the base 10,000 and limits how far a token looks instead, with
the sliding window below.
""",
)

# ---------------------------------------------------------------------------------------------- GQA

md(
    "ch17-gqa-md",
    f"""
## Grouped-query and multi-query attention

In GPT-2 each of the $H$ [heads]({G}head) has its own queries, keys and values. When a model
generates, the [key/value cache]({G}KV-cache) of the chapter *GPT* keeps every earlier token's keys
and values, for every layer and every head: $2 \\cdot L \\cdot H \\cdot D_h$ numbers per token. At long
contexts that cache, read in full for each new token, is what limits generation, more than the
computation. {{cite:t}}`shazeer2019fast` let all query heads share **one** key head and one value head
(*multi-query attention*, MQA): the cache shrinks $H$ times, at some cost in quality.
{{cite:t}}`ainslie2023gqa` interpolated: **grouped-query attention** (GQA) has $H_{{kv}}$ key/value heads,
each shared by a group of $G = H / H_{{kv}}$ consecutive query heads. Query head $h$ attends with key and
value head $\\lfloor h / G \\rfloor$. $H_{{kv}} = H$ is ordinary multi-head attention, $H_{{kv}} = 1$ is MQA.
The cache shrinks $G$ times. In the library, the key/value heads are computed and cached as $H_{{kv}}$
heads and repeated just before the attention:
""",
)

code(
    "ch17-gqa-source",
    """
viz.show_source("lib.llama.repeat_kv")
""",
)

code(
    "ch17-gqa-figure",
    """
fig = viz.gqa_diagram(n_heads=8, n_kv_heads=(8, 2, 1))
plt.show()
""",
    tags=["hide-input"],
    fig=(
        "fig-17-gqa",
        "Which key/value head each of 8 query heads reads. Left, multi-head attention: 8 key/value heads, "
        "one per query head. Middle, grouped-query attention with 2 key/value heads: query heads 0 to 3 share "
        "the first, 4 to 7 the second (consecutive heads, as repeat_interleave orders them). Right, "
        "multi-query attention: one key/value head for all. The cache holds only the bottom row.",
        __import__("lib.viz", fromlist=["x"]).gqa_diagram(8, (8, 2, 1)).alt_text,
    ),
)

md(
    "ch17-gqa-order",
    """
`repeat_interleave` gives the order $0, 0, \\dots, 1, 1, \\dots$: consecutive query heads share. `repeat`
would tile, $0, 1, 0, 1, \\dots$, giving query head 1 the key head 1: shapes right, numbers wrong, and a
checkpoint loaded that way attends with the wrong keys (exercise 2). What the sharing saves, per token of
context, for GPT-2 and the four published models, with 16-bit numbers (2 bytes each, as these models are
run):
""",
)

code(
    "ch17-kv-table",
    """
gpt2_bytes = 2 * gpt2.n_layer * gpt2.n_embd * 2  # keys and values, every layer, 2 bytes
kv_rows = [["GPT-2 small", gpt2.n_layer, gpt2.n_head, gpt2.n_head, 64,
            f"{gpt2_bytes:,}", f"{gpt2_bytes:,}", f"{gpt2_bytes * 8192 / 2**20:,.0f}"]]
kv_bytes = {"GPT-2 small": gpt2_bytes}
for name, c in presets.items():
    b = kv_cache_bytes_per_token(c)  # bfloat16
    kv_bytes[name] = b
    as_mha = b * c.num_attention_heads // c.num_key_value_heads
    kept = min(8192, c.sliding_window - 1) if c.sliding_window else 8192
    kv_rows.append([name, c.num_hidden_layers, c.num_attention_heads,
                    c.num_key_value_heads, c.head_dim, f"{b:,}", f"{as_mha:,}",
                    f"{b * kept / 2**20:,.0f}"])
viz.table(["model", "layers", "H", "Hkv", "Dh", "bytes per token", "if Hkv = H",
           "MiB at 8,192 tokens"], kv_rows)
""",
)

check(
    "ch17-kv-check",
    """
assert kv_bytes == {"GPT-2 small": 36_864, "Llama 3.2 1B": 32_768, "Llama 3.1 8B": 131_072,
                    "Qwen3 0.6B": 114_688, "Mistral 7B": 131_072}
assert kv_rows[4][-1] == "512"  # Mistral keeps W - 1 = 4,095 tokens
l8b = presets["Llama 3.1 8B"]
assert f"{count_parameters(l8b) / gpt_parameters(gpt2):.0f}" == "65"
assert f"{kv_bytes['Llama 3.1 8B'] / gpt2_bytes:.1f}" == "3.6" and gpt2_bytes == 36 * 1024
assert kv_bytes["Llama 3.1 8B"] * 4 * 8192 == 4 * 2**30 and kv_bytes["Llama 3.1 8B"] == 128 * 1024
""",
)

md(
    "ch17-kv-after",
    """
Llama 3.1 8B, a model 65 times as large as GPT-2 small, needs 128 KiB of cache per token, only 3.6 times
GPT-2's 36 KiB; with a key/value head per query head it would need four times more, 512 KiB, which at a
context of 8,192 tokens is 4 GiB per sequence instead of 1 GiB. Mistral 7B's window (next section) caps
its cache at 4,095 tokens: 512 MiB whatever the length. Measured at small scale, on the book's model with
4 query heads and 4 or 2 key/value heads, after a prompt of 50 tokens:
""",
)

code(
    "ch17-kv-measured",
    """
cache_bytes = {}
for Hkv in (4, 2):
    torch.manual_seed(0)
    model = Llama(LlamaConfig.small(num_key_value_heads=Hkv)).eval()
    cache = KVCache()
    with torch.no_grad():
        model(torch.randint(0, 256, (1, 50)), kv_cache=cache)
    cache_bytes[Hkv] = sum(t.numel() * t.element_size() for t in cache.keys + cache.values)
    per_token = kv_cache_bytes_per_token(model.config, torch.float32)
    print(f"Hkv = {Hkv}: {cache_bytes[Hkv]:,} bytes in the cache = 50 x {per_token:,}")
print(f"ratio {cache_bytes[4] / cache_bytes[2]:.2f}")
""",
)

check(
    "ch17-kv-measured-check",
    """
assert cache_bytes == {4: 51_200, 2: 25_600}
""",
)

# ---------------------------------------------------------------------------------------------- window

md(
    "ch17-window-md",
    f"""
## Sliding-window attention

Mistral 7B {{cite:p}}`jiang2023mistral` lets the token at position $t$ attend only to the last $W$
positions, $t - W + 1, \\dots, t$ (itself included), as the local attention of Longformer
{{cite:p}}`beltagy2020longformer` did for an encoder. The [mask]({G}mask) is a band along the diagonal
instead of the whole lower triangle (`sliding_window_mask`, True where a query may attend, as every mask
of the library). Each token's attention then costs $W$ products however long the text, and the cache
needs only the last $W - 1$ positions. Information from further back is not lost: layer 1 at position
$t$ reads positions down to $t - W + 1$, each of which in layer 0 read $W - 1$ positions further, so after
$L$ layers the token can draw on $L(W - 1)$ positions before it, like the receptive field of a stack of
convolutions:
""",
)

code(
    "ch17-window-figure",
    """
T, W = 16, 4
band = sliding_window_mask(T, W)  # [T, T], True where query i may attend key j
reach = torch.zeros(3, T, dtype=torch.bool)  # positions that reach the last token
paths = torch.eye(T, dtype=torch.bool)
for layer in range(3):
    paths = (paths.float() @ band.float()).bool()  # one more layer of attention
    reach[layer] = paths[-1]
fig, axes = plt.subplots(
    1, 3, figsize=(10, 3.6), width_ratios=(1, 1, 1.3), layout="constrained"
)
for ax, mask, title in ((axes[0], causal_mask(T), "causal mask (GPT)"),
                        (axes[1], band, f"sliding window, W = {W}")):
    ax.imshow(mask, cmap="Greys", vmin=0, vmax=1.4)
    ax.set(title=title, xlabel="key position", ylabel="query position")
axes[2].imshow(reach, cmap="Greys", vmin=0, vmax=1.4, aspect="auto")
axes[2].set(title=f"what reaches position {T - 1}", xlabel="position",
            yticks=range(3), yticklabels=["after 1 layer", "after 2", "after 3"])
plt.show()
reached = reach.sum(-1).tolist()
print("positions that reach the last token, after 1, 2, 3 layers:", reached)
""",
    tags=["hide-input"],
    fig=(
        "fig-17-sliding-window",
        "Left, the causal mask: query t attends to every position up to t (the dark cells). Middle, a sliding "
        "window of W = 4: only a band of 4 cells per row, ending on the diagonal. Right, the positions whose "
        "information reaches the last token (15) through 1, 2 and 3 layers of windowed attention: 4, then 7, "
        "then 10, growing by W - 1 = 3 with each layer.",
        "Three panels. Left: a 16 by 16 lower triangle filled in. Middle: a diagonal band four cells wide "
        "below the diagonal. Right: three rows of 16 cells; the last 4 are filled in the first row, the last 7 "
        "in the second, the last 10 in the third.",
    ),
)

check(
    "ch17-window-check",
    """
assert reached == [W + layer * (W - 1) for layer in range(3)] == [4, 7, 10]
assert band.sum(-1).max() == W
""",
)

md(
    "ch17-window-cache-md",
    """
Mistral 7B has 32 layers of window 4,096, so its last layer can draw on about 131,000 positions. With a
window, the cache can roll: `SlidingWindowCache` keeps the last $W - 1$ keys and values of each layer and
drops the older ones, which no future token can attend to. Its memory is flat however long the
generation. The next cell generates 20 tokens one at a time with a window of 4 and checks every step's
logits against the model run on the whole sequence without any cache:
""",
)

code(
    "ch17-window-cache",
    """
torch.manual_seed(0)
windowed = Llama(LlamaConfig.small(sliding_window=4)).eval()
tokens = torch.randint(0, 256, (1, 21))
cache = SlidingWindowCache(window=4)
kept, gaps = [], []
with torch.no_grad():
    full = windowed(tokens).logits  # [1, 21, V], no cache
    for t in range(21):
        step = windowed(tokens[:, t : t + 1], kv_cache=cache).logits[:, -1]  # [1, V]
        kept.append(cache.keys[0].shape[2])
        gaps.append((step - full[:, t]).abs().max().item())
print("keys kept in layer 0 after each step:", kept)
print(f"largest difference from the full pass: {max(gaps):.1e}")
""",
)

check(
    "ch17-window-cache-check",
    """
assert kept == [1, 2] + [3] * 19 and max(gaps) < 1e-5
mistral = presets["Mistral 7B"]
assert mistral.num_hidden_layers * (mistral.sliding_window - 1) == 131_040  # about 131,000
""",
)

md(
    "ch17-window-cache-after",
    """
The cache grows to $W - 1 = 3$ positions and stays there; the logits equal the full pass's at every step,
including the 17 steps past the window. (With RoPE the cache stores keys already rotated by their own
positions, so dropping old ones changes nothing for the rest: each score still depends only on the
offset.)
""",
)

# ---------------------------------------------------------------------------------------------- held equal

md(
    "ch17-hf-md",
    """
## The whole model, held equal to `transformers`

Each part above was checked on its own. The whole model is checked against the implementations most
people run: the `transformers` library's `LlamaForCausalLM`, `Qwen3ForCausalLM` (with QK-norm) and
`MistralForCausalLM` (with a sliding window). The next cell builds each from a small configuration, the
size of the book's model, with random weights (nothing is downloaded), loads its state dict into the
library's `Llama` by key name with `lib.pretrained.llama.llama_from_hf`, and compares the logits on 40
tokens, five times the window of the Mistral model. It loads each a second time in the interleaved
convention, where the loader permutes the query and key rows with `to_interleaved`:
""",
)

code(
    "ch17-hf",
    """
import transformers

from lib.pretrained.llama import llama_from_hf

small_hf = dict(vocab_size=253, hidden_size=64, intermediate_size=176,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                head_dim=16, max_position_embeddings=128, initializer_range=0.1,
                bos_token_id=None, eos_token_id=None, pad_token_id=None)
families = {
    "Llama": ("LlamaConfig", "LlamaForCausalLM", dict(tie_word_embeddings=True,
              rope_parameters={"rope_type": "default", "rope_theta": 500000.0})),
    "Qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(rms_norm_eps=1e-6,
              rope_parameters={"rope_type": "default", "rope_theta": 1e6})),
    "Mistral": ("MistralConfig", "MistralForCausalLM", dict(sliding_window=8,
                rope_parameters={"rope_type": "default", "rope_theta": 1e4})),
}
tokens_hf = torch.randint(0, 253, (2, 40), generator=torch.Generator().manual_seed(0))
hf_gaps, hf_rows = {}, []
for name, (config_class, model_class, options) in families.items():
    hf_config = getattr(transformers, config_class)(**small_hf, **options)
    torch.manual_seed(0)
    hf = getattr(transformers, model_class)(hf_config).eval()
    ours = llama_from_hf(hf)
    ours_interleaved = llama_from_hf(hf, rope_style="interleaved")
    with torch.no_grad():
        theirs = hf(tokens_hf).logits  # [2, 40, V]
        gap = (ours(tokens_hf).logits - theirs).abs().max().item()
        gap_i = (ours_interleaved(tokens_hf).logits - theirs).abs().max().item()
    hf_gaps[name] = max(gap, gap_i)
    c = ours.config
    hf_rows.append([model_class, c.qk_norm, c.sliding_window or "-",
                    f"{theirs.std():.2f}", f"{gap:.1e}", f"{gap_i:.1e}"])
viz.table(["transformers", "QK-norm", "window", "logits' std", "largest difference",
           "interleaved"], hf_rows)
""",
)

check(
    "ch17-hf-check",
    """
assert all(gap < 1e-4 / 30 for gap in hf_gaps.values()), hf_gaps
assert tokens_hf.shape[1] == 5 * families["Mistral"][2]["sliding_window"]
assert all(0.7 < float(row[3]) < 0.9 for row in hf_rows)
""",
)

md(
    "ch17-hf-after",
    """
The differences are float32 rounding, about $10^{-6}$ on logits whose standard deviation is near 0.8:
the library's model computes what these three implementations compute, grouped-query heads, QK-norm and
the window included. The library's tests go further (with and without the cache, the attention weights,
the hidden states, greedy generation, and the presets' parameter counts against the published
configurations), with tolerances derived from float32's rounding: $10^{-4}$ here would leave a margin of
more than 30 times the differences seen.
""",
)

# ---------------------------------------------------------------------------------------------- training

md(
    "ch17-train-md",
    f"""
## Trained on the story corpus, beside GPT

Do the changes help a model of the size the book can train? The test: the recipe of the chapter *GPT*,
unchanged. The story corpus (3,000 stories and 8,000 single sentences, word tokens), windows of 64
tokens, batches of 32, 300 steps of AdamW at a learning rate of $5 \\cdot 10^{{-3}}$ with 20 warm-up steps
and cosine decay, every model fed the same batches in the same order. Four models:

- **GPT**: the chapter *GPT*'s model, 2 blocks of width 64 with 4 heads, learned positions, tied
  embeddings;
- **modern**: `LlamaConfig.small` with 4 key/value heads (no sharing) and tied embeddings, so every change
  of this chapter but grouped-query attention: RMSNorm, SwiGLU ($F = 176$), RoPE, no biases;
- **modern, GQA**: the same with 2 key/value heads;
- **modern, untied**: the modern model with an output matrix of its own.

Each trains from four seeds (0 to 3), which change only the initial weights. That is 16 runs of about a
minute on one CPU thread, more than this chapter may spend, so `tools/train_story_llama.py` ran them
once and stored every step's loss and each run's loss on the held-out documents, in
`lib/checkpoints/story_llama_curves.json` (package data, like the shipped models). First the corpus, as
in the chapter *GPT*:
""",
)

code(
    "ch17-corpus",
    """
BLOCK, BATCH = 64, 32


def documents(n_stories, n_sentences, seed):
    # one string per document, shuffled, as in the chapter GPT
    docs = [" ".join(story) for story in generate_stories(n_stories, seed=seed)]
    docs += generate_sentences(n_sentences, seed=seed)
    random.Random(seed).shuffle(docs)
    return docs


def encode_documents(docs):
    ids = []  # <bos> document <eos> <bos> document <eos> ...
    for doc in docs:
        ids += vocab.encode(doc.split(), add_bos=True, add_eos=True)
    return torch.tensor(ids)


train_docs = documents(3000, 8000, seed=0)
vocab = word_vocab(train_docs)
train_ids = encode_documents(train_docs)
stored = json.loads(STORY_LLAMA_CURVES_PATH.read_text())
recipe = stored["recipe"]
assert recipe["vocab_size"] == len(vocab) and recipe["block"] == BLOCK
assert (recipe["steps"], recipe["lr"], recipe["warmup_steps"], recipe["batch"]) == (
    300, 5e-3, 20, BATCH) and recipe["seeds"] == [0, 1, 2, 3]
print(f"{len(train_ids):,} training tokens, vocabulary {len(vocab)}; stored runs:",
      {name: len(v["losses"]) for name, v in stored["variants"].items()})
""",
)

md(
    "ch17-replay-md",
    """
Are the stored curves what that recipe produces? Training is deterministic here (fixed seeds, one
thread), so the chapter can check: the next cell builds the modern model afresh from seed 0, exactly as
the script does, replays the first 20 of its 300 steps with the schedule of the full run, and compares
the losses with the first 20 stored ones.
""",
)

code(
    "ch17-replay",
    """
REPLAY = 20


def windows(ids, generator):
    # endless batches of random windows and their next tokens, as in the chapter GPT
    while True:
        starts = torch.randint(0, len(ids) - BLOCK, (BATCH,), generator=generator)
        x = torch.stack([ids[s : s + BLOCK] for s in starts])  # [B, T]
        y = torch.stack([ids[s + 1 : s + BLOCK + 1] for s in starts])  # [B, T]
        yield x, y


modern = stored["variants"]["llama"]
torch.manual_seed(0)
replayed = fit(
    Llama(LlamaConfig(**modern["config"])),
    windows(train_ids, torch.Generator().manual_seed(recipe["window_seed"])),
    lambda m, batch: m(*batch).loss,
    steps=recipe["steps"],
    lr=recipe["lr"],
    warmup_steps=recipe["warmup_steps"],
    seed=0,
    stop_after=REPLAY,
    progress=False,
).losses
replay_gap = (torch.tensor(replayed) - torch.tensor(modern["losses"][0][:REPLAY])).abs().max()
print(f"loss {replayed[0]:.3f} -> {replayed[-1]:.3f} in {REPLAY} steps here; largest "
      f"difference from the stored losses {replay_gap:.1e}")
""",
)

check(
    "ch17-replay-check",
    """
# the stored losses have 5 decimals; another CPU's vector instructions may round
# differently
assert replay_gap < 1e-4
""",
)

code(
    "ch17-results",
    """
names = {
    "gpt": "GPT (chapter 13)",
    "llama": "modern",
    "llama_gqa": "modern, GQA",
    "llama_untied": "modern, untied",
}
results = {}
for key, name in names.items():
    v = stored["variants"][key]
    val = torch.tensor(v["val_loss"], dtype=torch.float64)
    ppl = val.exp()
    early = sum(sum(c[:50]) / 50 for c in v["losses"]) / len(v["losses"])
    results[key] = dict(ppl=ppl, val=val, early=early, parameters=v["parameters"])
viz.table(
    ["model", "parameters", "held-out loss", "perplexity", "lowest - highest",
     "loss, steps 1-50"],
    [[names[k], f"{r['parameters']:,}", f"{r['val'].mean():.3f} ± {r['val'].std():.3f}",
      f"{r['ppl'].mean():.3f}", f"{r['ppl'].min():.3f} - {r['ppl'].max():.3f}",
      f"{r['early']:.2f}"]
     for k, r in results.items()],
)
""",
)

code(
    "ch17-curves",
    """
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
colors = ("#0072B2", "#E69F00", "#009E73", "#CC79A7")  # Okabe and Ito's
mean_curve = {}
for k, color in zip(names, colors):
    curves = torch.tensor(stored["variants"][k]["losses"])  # [seeds, steps]
    smooth = torch.stack([
        torch.tensor([c[max(0, i - 19) : i + 1].mean() for i in range(len(c))])
        for c in curves
    ])
    mean_curve[k] = smooth.mean(0)
    for ax in axes:
        ax.plot(smooth.mean(0), color=color, label=names[k], lw=1.5)
        ax.fill_between(range(smooth.shape[1]), smooth.min(0).values,
                        smooth.max(0).values, color=color, alpha=0.2)
axes[0].set(xlabel="step", ylabel="training loss (mean of 20 steps)",
            title="the whole run")
axes[1].set(xlabel="step", xlim=(150, 300), ylim=(0.8, 1.1), title="the last 150 steps")
axes[0].legend()
plt.show()
below = mean_curve["llama"] < mean_curve["gpt"]
crossing = next(i for i in range(20, len(below)) if below[i:].all())
print(f"the modern model's mean is below GPT's from step {crossing + 1} on; at step 100: "
      f"{mean_curve['llama'][99]:.2f} against {mean_curve['gpt'][99]:.2f}")
""",
    tags=["hide-input"],
    fig=(
        "fig-17-training",
        "Training loss of the four models, averaged over 20 steps, the line the mean over four seeds and the "
        "band the range between the lowest and the highest seed. Left, the whole run: all four fall from "
        "about 5.5; the modern models (orange, green, pink) pass GPT (blue) near step 50 and stay well below "
        "it while GPT crosses a plateau, between steps 50 and 150. Right, the last 150 steps enlarged: GPT "
        "closes most of the gap, and at the end it is still above the three others, whose bands overlap: "
        "GQA (green) lies on the modern model (orange), the untied model (pink) a little below.",
        "Two line charts of training loss against step, four coloured curves with shaded bands. Left, steps 0 "
        "to 300: the curves fall together from 5.5 to 2 by step 50; then the blue GPT curve flattens near 1.5 "
        "around step 100 while the other three fall to about 1.0, and all end near 0.85. Right, steps 150 to "
        "300, loss 0.8 to 1.1: the blue curve falls from 1.08 to 0.88, the other three run close together "
        "from about 0.9 to 0.84.",
    ),
)

md(
    "ch17-results-md",
    """
The table gives, for each model, the held-out loss (the mean over the four seeds ± their standard
deviation), the [perplexity](../book/glossary.md#term-perplexity) $e^{\\text{loss}}$ (mean, and the
lowest and highest seed) and the mean training loss of the first 50 steps. What it shows:

- **The modern decoder beats GPT, by a little, on every seed.** Its held-out perplexity is 2.320 (2.296 to
  2.340) against GPT's 2.410 (2.397 to 2.424), with 3% fewer parameters: the worst seed of the one is
  better than the best seed of the other. The gap is about 0.04 in loss, 4% in perplexity. It starts
  a little more slowly (a mean loss of 3.34 over the first 50 steps against GPT's 3.23), passes GPT
  at step 52 and is far below it while GPT crosses a plateau (at step 100, 1.08 against 1.47); GPT then
  closes most of that gap.
- **Which change earns the gap, this measurement cannot say**: the modern model differs from GPT in
  five places at once, and its initialization differs too (the library initializes it as `transformers`
  does, without GPT-2's smaller weights at the end of each residual branch). Telling them apart would
  take one run per change, each with its own seeds.
- **Sharing key/value heads costs nothing measurable here.** With 2 key/value heads instead of 4 the
  model has 7% fewer parameters and half the cache, and its perplexity, 2.306, lies inside the range of
  the model without sharing.
- **Untying the output matrix helps early, not clearly at the end.** It adds 14% parameters to the tied model; it learns
  fastest at the start (3.02 over the first 50 steps) and ends at 2.295, but its seeds (2.279 to 2.312)
  overlap those of the tied model. Small models (Llama 3.2 1B, Qwen3 0.6B) keep their embeddings tied for
  that reason: at their size the output matrix is a large share of the parameters.

At 120,000 parameters, 300 steps and a context of 64 tokens of a synthetic corpus, the problems that
motivated these changes do not arise: training instability at scale, contexts of thousands of tokens,
the memory that generation needs. That the changes help a little here, and that grouped-query attention
costs nothing here, says little about larger models; the papers of the table measure those.
""",
)

check(
    "ch17-results-check",
    """
shown = {k: (f"{r['ppl'].mean():.3f}", f"{r['ppl'].min():.3f}", f"{r['ppl'].max():.3f}",
             f"{r['early']:.2f}") for k, r in results.items()}
assert shown == {
    "gpt": ("2.410", "2.397", "2.424", "3.23"),
    "llama": ("2.320", "2.296", "2.340", "3.34"),
    "llama_gqa": ("2.306", "2.301", "2.310", "3.31"),
    "llama_untied": ("2.295", "2.279", "2.312", "3.02"),
}, shown
params = {k: r["parameters"] for k, r in results.items()}
assert f"{1 - params['llama'] / params['gpt']:.0%}" == "3%"
assert f"{1 - params['llama_gqa'] / params['llama']:.0%}" == "7%"
assert f"{params['llama_untied'] / params['llama'] - 1:.0%}" == "14%"
gap = results["gpt"]["val"].mean() - results["llama"]["val"].mean()
assert f"{gap:.2f}" == "0.04" and results["llama"]["ppl"].max() < results["gpt"]["ppl"].min()
assert f"{results['gpt']['ppl'].mean() / results['llama']['ppl'].mean() - 1:.0%}" == "4%"
assert crossing + 1 == 52
seconds = [t for v in stored["variants"].values() for t in v["seconds"]]
assert len(seconds) == 16 and 30 < sum(seconds) / 16 < 90  # "about a minute" each
assert (f"{mean_curve['llama'][99]:.2f}", f"{mean_curve['gpt'][99]:.2f}") == ("1.08", "1.47")
""",
)

# ---------------------------------------------------------------------------------------------- summary

md("ch17-samples-md", """
What does the modern decoder write? The script kept the model of the replayed run (seed 0), in 16-bit
numbers to keep the file small (`lib.checkpoints.load_story_llama`). The next cell measures its held-out
loss again, here, and lets it continue two prompts, once greedily and once by sampling at temperature
0.8 (`lib.llama.sample`, which decodes with the key/value cache, as `lib.gpt.sample` does):
""")

code("ch17-samples", """
from lib.checkpoints import load_story_llama
from lib.llama import sample

story_llama, itos, info = load_story_llama()
assert itos == vocab.itos  # the vocabulary of this chapter's corpus
val_ids = encode_documents(documents(200, 500, seed=1))
n = (len(val_ids) - 1) // BLOCK * BLOCK
with torch.no_grad():
    val_here = story_llama(
        val_ids[:n].view(-1, BLOCK), val_ids[1 : n + 1].view(-1, BLOCK)
    ).loss.item()
print(f"held-out loss {val_here:.4f} in float16 weights ({info['val_loss']:.4f} before "
      f"the rounding), perplexity {math.exp(val_here):.3f}")
generator = torch.Generator().manual_seed(0)
samples = {}
for prompt in ("mia had a cat .", "the cow did n't cross the river because"):
    ids = torch.tensor([vocab.encode(prompt.split(), add_bos=True)])  # [1, T]
    for temperature in (0, 0.8):
        out = sample(story_llama, ids, 24, temperature=temperature, generator=generator)
        words = [vocab.itos[i] for i in out.tokens[0].tolist()]
        words = words[: words.index("<eos>") + 1] if "<eos>" in words else words
        samples[(prompt, temperature)] = words
        print(f"T = {temperature}: {prompt} | {' '.join(words)}")
""")

check("ch17-samples-check", """
assert f"{val_here:.4f}" == f"{info['val_loss']:.4f}" and f"{math.exp(val_here):.3f}" == "2.309"
assert samples[("the cow did n't cross the river because", 0)][:3] == ["it", "was", "too"]
""")

md("ch17-samples-after", """
The float16 rounding leaves the held-out loss unchanged at four decimals (the perplexity, 2.309, is this
seed's; the table's 2.320 is the mean of four). The continuations are sentences of the corpus's kinds, one
after another, and after "because" a reason of the right form ("it was too ..."). The difference that the
table measured, 0.04 nats per word against GPT, does not show in a handful of samples.
""")

md(
    "ch17-summary",
    """
## Summary

- A modern decoder is GPT-2's decoder with its parts replaced: **RMSNorm** (divide by the root mean
  square; no mean, no bias), **SwiGLU** ($\\operatorname{Swish}(xW) \\odot xV$, then $W_2$; width
  $\\tfrac83 D$ for GPT's parameter budget, rounded up in real configurations, which seldom keep that
  budget exactly), **RoPE**, **grouped-query attention**, no biases, and in the larger models untied
  embeddings; Mistral adds a **sliding window**, Qwen3 an RMSNorm on queries and keys.
- **RoPE** is the rotation of the chapter *Positional encoding* applied to queries and keys: the score
  $\\tilde q_m \\cdot \\tilde k_n = q^\\top \\mathbf R_{n-m} k$ depends on the offset only (checked at positions 3
  to 5,000), and on its sign. Interleaved pairs and split halves are the same model after a fixed
  permutation of the query and key rows (checked); loading weights in the wrong one gives a different
  model without any error. A larger base slows the decay of scores with distance.
- **Grouped-query attention** shares each key/value head among $G$ consecutive query heads, which makes
  the key/value cache $G$ times smaller: 128 KiB per token for Llama 3.1 8B instead of 512 KiB.
- A **sliding window** of $W$ keeps each token's attention and the cache at $W$ positions; stacking $L$
  layers still lets information travel $L(W - 1)$ positions.
- Trained on the story corpus with the recipe of the chapter *GPT*, the modern decoder reaches a held-out
  perplexity of 2.320 against GPT's 2.410, lower on each of four seeds; grouped-query attention costs
  nothing measurable at this size. The measurement cannot tell which change earns the 4%, and a model
  this small says little about the gains at scale.
""",
)

# ---------------------------------------------------------------------------------------------- exercises

md("ch17-ex-head", "## Exercises")

md(
    "ch17-ex-intro",
    """
Each exercise has a cell for your answer and, below it, a cell that checks it: run yours, then the
check. A checker tries your function on cases you do not see and says *what* is wrong, not only
*that* something is; as long as you have not written anything it just says "not attempted". Below
the check, folded together under *Show a worked solution* (in Jupyter and Colab: collapsed cells),
are a worked solution, the checker's verdict on it and a model answer: open them after your attempt;
the student edition of the notebooks leaves the solutions out.
""",
)

code(
    "ch17-ex-import",
    """
from lib.exercises.ch17 import check_expand_kv, check_ffn_sublayer, check_rope_halves
""",
)

md(
    "ch17-ex1",
    """
**Exercise 1 (implement): RoPE in the split-halves convention.** Write `rope_halves(x, positions, theta)`
that rotates the rows of `x` $[T, D_h]$, the row $t$ by the position `positions[t]`, as the `transformers`
checkpoints do: feature $i$ pairs with feature $i + D_h/2$, pair $i$ turns by the angle
$m\\,\\omega_i$ with $\\omega_i = \\theta^{-2i/D_h}$, and $(a, b) \\to (a\\cos - b\\sin,\\; a\\sin + b\\cos)$.
Without `apply_rope`. Then check that `rope_score`'s property holds for yours: two vectors at positions
$(m, n)$ and $(m + 100, n + 100)$ give the same score.
""",
)

code(
    "ch17-ex1-answer",
    """
def rope_halves(x, positions, theta=10000.0):
    \"\"\"x [T, Dh] (Dh even), positions [T] (integers) -> [T, Dh]: row t rotated by RoPE
    at position positions[t], pairs (i, i + Dh/2).\"\"\"
    ...  # your code here
""",
)

code("ch17-ex1-check", "check_rope_halves(rope_halves)", tags=["remove-output"])

solution(
    "ch17-ex1-solution",
    """
def rope_halves(x, positions, theta=10000.0):
    \"\"\"x [T, Dh] (Dh even), positions [T] (integers) -> [T, Dh]: row t rotated by RoPE
    at position positions[t], pairs (i, i + Dh/2).\"\"\"
    Dh = x.shape[-1]
    i = torch.arange(Dh // 2, dtype=torch.float64)
    w = theta ** (-2 * i / Dh)  # [Dh/2], the frequencies
    angles = positions.double()[:, None] * w  # [T, Dh/2]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., : Dh // 2], x[..., Dh // 2 :]  # pair i: features i and i + Dh/2
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
""",
)

solution(
    "ch17-ex1-solution-numbers",
    """
g = torch.Generator().manual_seed(5)
qk = torch.randn(2, 32, generator=g)
near = rope_halves(qk, torch.tensor([9, 4]))
far = rope_halves(qk, torch.tensor([109, 104]))
print(f"score at (9, 4): {near[0] @ near[1]:.5f}; at (109, 104): {far[0] @ far[1]:.5f}")
assert abs(near[0] @ near[1] - far[0] @ far[1]) < 1e-4
""",
)

solution("ch17-ex1-solution-check", "check_rope_halves(rope_halves)")

md(
    "ch17-ex1-answer-md",
    """
<details class="model-answer">
<summary>Model answer</summary>

Compute the frequencies $\\omega_i = \\theta^{-2i/D_h}$ for $i = 0, \\dots, D_h/2 - 1$, the angles
$m\\,\\omega_i$ as an outer product of the positions and the frequencies ($[T, D_h/2]$, in float64 so that
large positions keep their precision), and rotate the first half $a$ against the second half $b$ of each
row: `torch.cat([a * cos - b * sin, a * sin + b * cos], -1)`. The two scores agree to float32 rounding,
because only the offset $9 - 4 = 109 - 104$ enters. The usual mistakes give vectors of the right shape
and plausible values: pairing neighbours (the interleaved convention) is a different model unless the
weights were permuted; $\\theta^{-i/D_h}$ instead of $\\theta^{-2i/D_h}$ gives the slowest pair a
wavelength $\\sqrt\\theta$ times too short; turning by $-m\\omega_i$ keeps the relative property but
reverses the sign of every offset, so a trained checkpoint reads its context backwards.

</details>
""",
    tags=["solution"],
)

md(
    "ch17-ex2",
    """
**Exercise 2 (implement): key/value heads for the query heads.** Write `expand_kv(k, n_heads)` that
takes the keys (or values) of $H_{kv}$ heads, $[B, H_{kv}, T, D_h]$, and returns them for `n_heads`
query heads, $[B, H, T, D_h]$, so that query head $h$ gets key head $\\lfloor h / G \\rfloor$ with
$G = H / H_{kv}$, as every published checkpoint expects. Then check on the book's small model
(`LlamaConfig.small()`: 4 query heads, 2 key/value heads) that query heads 0 and 1 read the same keys.
""",
)

code(
    "ch17-ex2-answer",
    """
def expand_kv(k, n_heads):
    \"\"\"k [B, Hkv, T, Dh] -> [B, n_heads, T, Dh]: query head h reads key head h // G,
    G = n_heads // Hkv.\"\"\"
    ...  # your code here
""",
)

code("ch17-ex2-check", "check_expand_kv(expand_kv)", tags=["remove-output"])

solution(
    "ch17-ex2-solution",
    """
def expand_kv(k, n_heads):
    \"\"\"k [B, Hkv, T, Dh] -> [B, n_heads, T, Dh]: query head h reads key head h // G,
    G = n_heads // Hkv.\"\"\"
    G = n_heads // k.shape[1]
    # heads 0, 0, ..., 1, 1, ...: consecutive query heads share a key head
    return k.repeat_interleave(G, dim=1)
""",
)

solution(
    "ch17-ex2-solution-numbers",
    """
keys = torch.randn(1, 2, 5, 16)  # [B, Hkv, T, Dh] of LlamaConfig.small()
expanded = expand_kv(keys, 4)
print("heads 0 and 1 share:", torch.equal(expanded[:, 0], expanded[:, 1]),
      "| heads 1 and 2 share:", torch.equal(expanded[:, 1], expanded[:, 2]))
assert torch.equal(expanded, repeat_kv(keys, 2))
""",
)

solution("ch17-ex2-solution-check", "check_expand_kv(expand_kv)")

md(
    "ch17-ex2-answer-md",
    """
<details class="model-answer">
<summary>Model answer</summary>

`k.repeat_interleave(n_heads // Hkv, dim=1)` repeats each key head $G$ times in place, giving the order
$0, 0, 1, 1$ for the small model, so query heads 0 and 1 share key head 0 and heads 2 and 3 share key
head 1. `k.repeat(1, G, 1, 1)` has the same shape and tiles instead, $0, 1, 0, 1$: a model trained with
one order and run with the other attends with the wrong keys in every head but the first, without any
error. Expanding along dimension 2 (time) instead of 1 gives $G T$ keys per head and an error only later,
in the attention's matrix product. The expansion is done after the cache, so the cache keeps $H_{kv}$
heads: that is where the memory is saved.

</details>
""",
    tags=["solution"],
)

md(
    "ch17-ex3",
    """
**Exercise 3 (implement): the feed-forward sub-layer of a modern decoder.** Write
`ffn_sublayer(x, weight, gate, up, down)` that computes
$x + \\operatorname{SwiGLU}(\\operatorname{RMSNorm}(x))$ for `x` $[T, D]$: RMSNorm with the gain `weight`
$[D]$ and $\\epsilon = 10^{-6}$, then `down` applied to $\\operatorname{silu}(h\\,W^\\top_{\\text{gate}})
\\odot h\\,W^\\top_{\\text{up}}$, where `gate` and `up` are $[F, D]$ and `down` is $[D, F]$ (the layout of
`nn.Linear`'s weights). Without the library's `RMSNorm` and `SwiGLU`. Then check that yours equals the
library's `post_attention_layernorm` and `mlp` of a `DecoderLayer` of the small model.
""",
)

code(
    "ch17-ex3-answer",
    """
def ffn_sublayer(x, weight, gate, up, down):
    \"\"\"x [T, D], weight [D], gate [F, D], up [F, D], down [D, F] -> [T, D]:
    x + down(silu(gate h) * up h) with h = RMSNorm(x) * weight (eps 1e-6).\"\"\"
    ...  # your code here
""",
)

code("ch17-ex3-check", "check_ffn_sublayer(ffn_sublayer)", tags=["remove-output"])

solution(
    "ch17-ex3-solution",
    """
def ffn_sublayer(x, weight, gate, up, down):
    \"\"\"x [T, D], weight [D], gate [F, D], up [F, D], down [D, F] -> [T, D]:
    x + down(silu(gate h) * up h) with h = RMSNorm(x) * weight (eps 1e-6).\"\"\"
    # [T, 1], the root mean square of each row; no mean subtracted
    rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    h = x / rms * weight  # [T, D]
    gate_out = torch.nn.functional.silu(h @ gate.T)  # [T, F], the gate
    return x + (gate_out * (h @ up.T)) @ down.T  # the gate scales the value; [T, D]
""",
)

solution(
    "ch17-ex3-solution-numbers",
    """
torch.manual_seed(17)  # a fresh small model
block = Llama(LlamaConfig.small(rms_norm_eps=1e-6)).model.layers[0]
stream = torch.randn(7, 64)
with torch.no_grad():
    library = stream + block.mlp(block.post_attention_layernorm(stream))
    mine = ffn_sublayer(stream, block.post_attention_layernorm.weight,
                        block.mlp.gate_proj.weight, block.mlp.up_proj.weight,
                        block.mlp.down_proj.weight)
gap = (mine - library).abs().max()
print(f"largest difference from the library's sub-layer: {gap:.1e}")
assert (mine - library).abs().max() < 1e-5
""",
)

solution("ch17-ex3-solution-check", "check_ffn_sublayer(ffn_sublayer)")

md(
    "ch17-ex3-answer-md",
    """
<details class="model-answer">
<summary>Model answer</summary>

RMSNorm divides `x` by $\\sqrt{\\operatorname{mean}(x^2) + \\epsilon}$ over the last dimension and multiplies
by the gain; SwiGLU passes the gate's projection through SiLU and multiplies it with the value's
projection before `down`; the residual connection adds the result to `x`. The two mistakes that look most
like the right answer: subtracting the mean first (that is LayerNorm without its bias, and on a residual
stream whose mean is not 0 it gives another vector), and putting SiLU on `up` instead of `gate` (the two
matrices have the same shape, so nothing fails; a checkpoint loaded that way computes a different
function).

</details>
""",
    tags=["solution"],
)
