"""Checkers for the exercises of the chapter *The Transformer*.

- :func:`check_pre_ln`: exercise 1 (implement): a pre-LN encoder layer computed from its sub-modules.
- :func:`check_parameter_counts`: exercise 3 (predict, then check): where the parameters of the base
  model are.

Exercise 2 (training without warm-up, change and explain) is answered in prose; the chapter's solution
computes it.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NoReturn

import torch
from torch import Tensor

from lib.transformer import EncoderLayer, TransformerConfig, count_parameters

from . import (
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    failures,
    largest_difference,
    near,
    not_attempted,
    own_text,
    passing_everywhere,
    refused,
    refusing,
    student_id,
    variant,
)

__all__ = ["check_pre_ln", "check_parameter_counts"]


# --- exercise 1: a pre-LN layer by hand ------------------------------------------------------------------


# The seed of the implement exercise's cases: a practice value here; a course's grader sets its own
# (grading/ch09.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"pre_ln_layer": 9}


def _pre_ln_cases() -> list[tuple[str, EncoderLayer, Tensor]]:
    """(description, a pre-LN EncoderLayer with random LayerNorm gains and biases, x [B, T, D])."""
    g = torch.Generator().manual_seed(SEEDS["pre_ln_layer"])
    cases = []
    for d_model, n_heads, d_ff, B, T in [(64, 4, 256, 2, 7), (16, 2, 32, 1, 1), (32, 8, 64, 3, 5)]:
        with torch.random.fork_rng():  # the layer's own init: leave the caller's RNG alone
            torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=g)))
            layer = EncoderLayer(d_model, n_heads, d_ff, norm_first=True).eval()
        with torch.no_grad():
            for norm in (layer.norm1, layer.norm2):  # so that a mix-up of the two norms shows
                norm.weight.copy_(1 + 0.5 * torch.randn(d_model, generator=g))
                norm.bias.copy_(0.5 * torch.randn(d_model, generator=g))
            for p in layer.self_attn.parameters():
                if p.ndim == 1:
                    p.copy_(0.2 * torch.randn(p.shape, generator=g))
        cases.append(
            (
                f"D = {d_model}, H = {n_heads}, d_ff = {d_ff}, x [{B}, {T}, {d_model}]",
                layer,
                2 * torch.randn(B, T, d_model, generator=g) + 1,
            )
        )
    return cases


# The wrong LayerNorms a reader writes by hand, with ``norm``'s eps (and gain and bias): t [B, T, D].


def _bare_norm(norm: torch.nn.LayerNorm, t: Tensor) -> Tensor:
    """LayerNorm without its gain and bias, with the eps of ``norm``."""
    return torch.nn.functional.layer_norm(t, t.shape[-1:], eps=norm.eps)


def _unbiased_norm(norm: torch.nn.LayerNorm, t: Tensor) -> Tensor:
    """The variance with torch's default .var(), 1/(D - 1)."""
    sigma = (t.var(-1, keepdim=True) + norm.eps).sqrt()  # unbiased by default
    return norm.weight * (t - t.mean(-1, keepdim=True)) / sigma + norm.bias


def _batch_norm(norm: torch.nn.LayerNorm, t: Tensor, dims: tuple[int, ...]) -> Tensor:
    """Batch norm's statistics, per feature, over ``dims`` ((0, 1): the batch and the positions)."""
    mu, var = t.mean(dims, keepdim=True), t.var(dims, keepdim=True, correction=0)
    return norm.weight * (t - mu) / (var + norm.eps).sqrt() + norm.bias


def _eps_outside_norm(norm: torch.nn.LayerNorm, t: Tensor) -> Tensor:
    """(t - mu) / (std + eps), std with 1/D: eps outside the square root."""
    std = t.var(-1, keepdim=True, correction=0).sqrt()
    return norm.weight * (t - t.mean(-1, keepdim=True)) / (std + norm.eps) + norm.bias


# One branch per usual mistake, each computed the way a reader would write it (a table, read top
# to bottom).
def _variant(layer: EncoderLayer, x: Tensor, kind: str) -> Tensor:
    """The layer's output computed right ("pre-LN") or with one of the usual mistakes."""
    ln1, ln2, sa, ff = layer.norm1, layer.norm2, layer.self_attn, layer.ff

    def attn(h, kv=None):
        kv = h if kv is None else kv
        return sa(h, kv, kv)[0]

    if kind == "post-LN":
        y = ln1(x + attn(x))
        return ln2(y + ff(y))
    if kind == "norm1 twice":
        y = x + attn(ln1(x))
        return y + ff(ln1(y))
    if kind == "keys not normalized":
        y = x + attn(ln1(x), x)
        return y + ff(ln2(y))
    if kind == "normalized residual":
        h = ln1(x)
        y = h + attn(h)
        return y + ff(ln2(y))
    if kind == "normalized residuals":  # LN1(x) + SelfAttn(LN1(x)), then LN2(y) + FFN(LN2(y))
        h = ln1(x)
        y = h + attn(h)
        return ln2(y) + ff(ln2(y))
    if kind == "normalized second residual":
        y = x + attn(ln1(x))
        return ln2(y) + ff(ln2(y))
    if kind == "no attention residual":
        y = attn(ln1(x))
        return y + ff(ln2(y))
    if kind == "no feed-forward residual":
        y = x + attn(ln1(x))
        return ff(ln2(y))
    if kind == "feed-forward not normalized":
        y = x + attn(ln1(x))
        return y + ff(y)
    if kind == "norms without gain and bias":
        y = x + attn(_bare_norm(ln1, x))
        return y + ff(_bare_norm(ln1, y))
    if kind == "unbiased std":  # a hand-written LayerNorm with torch's default .var(): 1/(D - 1)
        y = x + attn(_unbiased_norm(ln1, x))
        return y + ff(_unbiased_norm(ln2, y))
    if kind in ("batch statistics", "batch statistics per position"):  # batch norm's, per feature
        dims = (0, 1) if kind == "batch statistics" else (0,)
        y = x + attn(_batch_norm(ln1, x, dims))
        return y + ff(_batch_norm(ln2, y, dims))
    if kind == "norms swapped":
        y = x + attn(ln2(x))
        return y + ff(ln1(y))
    if kind == "norm2 twice":
        y = x + attn(ln2(x))
        return y + ff(ln2(y))
    if kind == "feed-forward reads x":
        y = x + attn(ln1(x))
        return y + ff(ln2(x))
    if kind == "second residual adds x":
        y = x + attn(ln1(x))
        return x + ff(ln2(y))
    if kind == "eps outside the root":  # (a - mu) / (std + eps), std with 1/D
        y = x + attn(_eps_outside_norm(ln1, x))
        return y + ff(_eps_outside_norm(ln2, y))
    if kind == "a final norm":
        y = x + attn(ln1(x))
        return ln2(y + ff(ln2(y)))
    y = x + attn(ln1(x))  # pre-LN: x + SA(LN1 x), then y + FF(LN2 y)
    return y + ff(ln2(y))


_MISTAKES = {
    "post-LN": "you normalized after each residual addition, LN(x + Sublayer(x)): that is post-LN, the layer's default. Pre-LN normalizes the sub-layer's input and adds the sub-layer's output to x itself: y = x + SelfAttn(LN1(x)), then y + FFN(LN2(y))",
    "norm1 twice": "you used norm1 before the feed-forward network too; the second sub-layer has its own, norm2",
    "keys not normalized": "your queries are LN1(x) but the keys and values are x: in self-attention all three are the same normalized input, self_attn(h, h, h) with h = LN1(x)",
    "normalized residual": "you added the attention's output to LN1(x); the residual path carries x itself, untouched: y = x + SelfAttn(LN1(x))",
    "normalized residuals": "you added each sub-layer's output to its normalized input, LN1(x) + SelfAttn(LN1(x)) and LN2(y) + FFN(LN2(y)); the residual path carries the input itself, untouched: y = x + SelfAttn(LN1(x)), then y + FFN(LN2(y))",
    "normalized second residual": "you added the feed-forward network's output to LN2(y); the residual path carries y itself, untouched: the output is y + FFN(LN2(y))",
    "no attention residual": "the first residual connection is missing: y = x + SelfAttn(LN1(x)), not SelfAttn(LN1(x)) alone",
    "no feed-forward residual": "the second residual connection is missing: the output is y + FFN(LN2(y))",
    "feed-forward not normalized": "the feed-forward network reads y itself; in pre-LN it reads LN2(y)",
    "norms without gain and bias": "your LayerNorms normalize but leave out the layer's learned gains and biases (layer.norm1.weight and .bias, layer.norm2.weight and .bias): a LayerNorm is gain * (x - mean) / std + bias. Call layer.norm1 and layer.norm2 themselves, or pass their weight and bias to this chapter's layer_norm",
    "unbiased std": "your LayerNorm divides by the unbiased standard deviation, 1/(D - 1) under the root (the default of torch's .std() and .var()); layer normalization averages over the D = d_model features of a token with 1/D, as nn.LayerNorm does: use .var(-1, unbiased=False), or call layer.norm1 and layer.norm2 themselves",
    "eps outside the root": "your LayerNorm adds eps to the standard deviation, (a - mean) / (std + eps); nn.LayerNorm, and this chapter's layer_norm, put it under the square root, (a - mean) / sqrt(var + eps). The outputs differ by about 1e-5, more than float32 rounding: move eps under the root, or call layer.norm1 and layer.norm2 themselves",
    "batch statistics": "your LayerNorm takes a mean and a deviation per feature, over the batch and the positions: those are batch normalization's statistics. Layer normalization takes one mean and one deviation per token, over its D features (the last dimension, .mean(-1, keepdim=True)), so that a token's result does not depend on the other sentences of the batch",
    "batch statistics per position": "your LayerNorm takes a mean and a deviation per feature, over the batch at each position: those are batch normalization's statistics. Layer normalization takes one mean and one deviation per token, over its D features (the last dimension, .mean(-1, keepdim=True)), so that a token's result does not depend on the other sentences of the batch",
    "norms swapped": "you swapped the two LayerNorms: norm1 belongs to the attention sub-layer, norm2 to the feed-forward network",
    "norm2 twice": "you used norm2 before the attention too; the first sub-layer has its own, norm1",
    "feed-forward reads x": "the feed-forward network reads LN2(x); it reads LN2(y), the output of the attention sub-layer (y = x + SelfAttn(LN1(x))): the two sub-layers run one after the other",
    "second residual adds x": "the second residual connection adds x; it adds y, the first sub-layer's output: the output is y + FFN(LN2(y))",
    "a final norm": "you normalized the layer's output with norm2 at the end; a pre-LN layer's output is not normalized (y + FFN(LN2(y))). The one extra LayerNorm of a pre-LN model sits once after the last layer, in the Encoder (encoder.norm), not in every layer",
}


class _RefusedForward:
    """A layer's forward that refuses. A class of this module, not a function made inside
    ``_forbid_forward``: the course's grader sends the checker's layers to its sandbox pickled, and
    Python pickles no local function."""

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError(_LAYER_REFUSED)


_LAYER_REFUSED = own_text(
    "it called an EncoderLayer's own forward (the layer given, or one built with its weights): the exercise is to compute the layer from its sub-modules (self_attn, ff, norm1, norm2), not to call the layer itself"
)


def _forbid_forward(layer: EncoderLayer) -> None:
    """Calling the layer itself would make the exercise trivial: the checker's layers refuse."""
    layer.forward = _RefusedForward()


def _refuse_layer_class(*args: Any, **kwargs: Any) -> NoReturn:
    """The class's own forward called directly (``EncoderLayer.forward(layer, x)``,
    ``type(layer).forward(layer, x)``): refused as the layer's is."""
    raise RuntimeError(_LAYER_REFUSED)


_refuse_torch_layer = refusing(
    "TransformerEncoderLayer",
    ": no library's layer may be used; write the pre-LN sub-layers yourself",
    whose="torch's",
)


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}. The
# layers' own forward refuses on the instance (_forbid_forward); through the class it is refused here,
# under any name (a teacher's review, s13: `type(layer).forward(layer, x)` got full marks).
REFUSALS = {
    "check_pre_ln": [
        ("lib.transformer.EncoderLayer.forward", None, _refuse_layer_class),
        # torch's own layer, norm_first=True, with the weights copied in (course review s15, S3)
        ("torch.nn.TransformerEncoderLayer.forward", None, _refuse_torch_layer),
        # its fused fast path called with the layer's weights, under any of torch's names
        # (torch.ops.aten..., torch._C._VariableFunctions...: tools/sandbox.py's torch function mode)
        ("torch._transformer_encoder_layer_fwd", None, _refuse_torch_layer),
    ],
}


def _mistakes_passing_pre_ln() -> list[str]:
    """The known mistakes (``_MISTAKES``) whose outputs are right on every case."""
    cases = _pre_ln_cases()
    with torch.no_grad():
        expected = [EncoderLayer.forward(layer, x)[0].double() for _, layer, x in cases]

        def right(kind: str) -> bool:
            return all(
                torch.allclose(_variant(layer, x, kind).double(), e, atol=1e-5)
                for (_, layer, x), e in zip(cases, expected)
            )

        return passing_everywhere(_MISTAKES, right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"pre_ln_layer": _mistakes_passing_pre_ln}


def _refuse_reference(*args: Any, **kwargs: Any) -> NoReturn:
    """The checker's own reference (``_variant``) called by an answer: its outputs copied."""
    raise RuntimeError(_REFERENCE_REFUSED)


_REFERENCE_REFUSED = own_text(  # the course grader's own words for it (tools/grade_course.py)
    f"it called `{__name__}._variant`, the checker's own code, which an answer may not use"
)

# In the notebook, what the grader refuses (REFUSALS) and the checker's reference (which the grader
# refuses as the checker's own code): a reader's answers that passed here and got 0 from the grader
_REFUSED_IN_NOTEBOOK = [(f"{__name__}._variant", None, _refuse_reference)]
_OWN_WORK = (
    "Compute the layer yourself, from layer.self_attn, layer.ff, layer.norm1 and layer.norm2."
)


@checker("pre_ln_layer")
def check_pre_ln(pre_ln_layer: Any) -> str:
    """Check ``pre_ln_layer(layer, x) -> [B, T, D]``: y + FFN(LN2(y)) with y = x + SelfAttn(LN1(x)), computed
    from ``layer.self_attn``, ``layer.ff``, ``layer.norm1``, ``layer.norm2`` of a pre-LN EncoderLayer."""
    attempted(pre_ln_layer, "pre_ln_layer")
    cases = _pre_ln_cases()
    for case, layer, x in cases:
        _forbid_forward(layer)
        with refused(REFUSALS["check_pre_ln"] + _REFUSED_IN_NOTEBOOK, pre_ln_layer):
            result = call(
                pre_ln_layer,
                layer,
                x,
                name="pre_ln_layer",
                case=case,
                hints={
                    "tuple": "Note: layer.self_attn(q, k, v) returns a pair (output, weights); take its first element.",
                    "the checker's own code": _OWN_WORK,
                },
            )
        # the right output is computed only now, so that no frame holds it while the answer runs
        with torch.no_grad():
            expected = EncoderLayer.forward(layer, x)[0].double()
            variants = {kind: _variant(layer, x, kind).double() for kind in _MISTAKES}
        assert torch.allclose(_variant(layer, x, "pre-LN").double(), expected, atol=1e-5)
        if isinstance(result, tuple):
            fail(
                f"on the case {case}, `pre_ln_layer` returned a tuple; return only the layer's output [B, T, D]."
            )
        result = expect_tensor(result, tuple(x.shape), name="pre_ln_layer", case=case)
        if torch.allclose(result, expected, atol=1e-5):
            continue
        for kind, why in _MISTAKES.items():
            # eps inside or outside the root: the same mistake
            # eps outside the root is within about 1.5e-5 of the right output: told apart from it
            # only by a tolerance of a few float32 roundings of outputs of size ~4
            atol = {"unbiased std": 1e-4, "eps outside the root": 3e-6}.get(kind, 1e-5)
            if torch.allclose(result, variants[kind], atol=atol):
                fail(f"on the case {case}, {why}.")
        fail(f"on the case {case}, {largest_difference(result, expected)}.")
    return f"`pre_ln_layer` equals the pre-LN layer on all {len(cases)} hidden cases ({'; '.join(c.split(', x')[0] for c, *_ in cases)})."


# --- exercise 3: where the parameters are ------------------------------------------------------------------

TOLERANCE = 0.01  # a prediction by hand may leave out biases and LayerNorms: they are far below 1%
# A wrong answer is diagnosed as a known mistake only when it is that mistake's count (biases in or
# out): a round guess that happens to fall within 1% of one must not be told how it was computed.
MISTAKE_TOLERANCE = 0.003


# Exercise 3's numbers: the book's (37,000 tokens, N = 12), or, in a course with per-student variants
# (tools/make_course.py --variants), each student's own, drawn from these.
VARIANT_BOOK = {"vocab": 37000, "n_layers": 12}
VARIANT_CHOICES = {"vocab": list(range(30000, 45000, 1000)), "n_layers": [8, 10, 12, 14, 16, 18]}


VARIANTS = {3: "parameter_variant"}  # exercise -> the function that gives a student their numbers
# the answer cell's words that name the book's numbers, and what a course with variants says instead
# (a teacher's review, s11, S3: a student's template still said "37,000 tokens" and "N = 12")
VARIANT_TEMPLATE = {
    3: [
        ("vocabularies of 37,000 tokens", "vocabularies of your own size (printed above)"),
        ("the total with N = 12", "the total with your own N (printed above)"),
    ]
}


def parameter_variant() -> dict[str, int]:
    """Exercise 3's numbers for the current reader: {"vocab": the size of each separate vocabulary in
    (a), "n_layers": the N of (c)}; the book's, or in a course with variants the student's own."""
    return variant("ch09 parameter counts", VARIANT_CHOICES, VARIANT_BOOK)


def _others(name: str, own: int) -> list[tuple[int, str]]:
    """In a course with variants, the other values of ``name`` a student might have answered for:
    the book's, then the other students' (each with the words that say whose it is)."""
    if student_id() is None:
        return []
    book = VARIANT_BOOK[name]
    others = [(book, "the book's")] if book != own else []
    return others + [
        (v, "another student's") for v in VARIANT_CHOICES[name] if v not in (own, book)
    ]


def _not_theirs(what: str, v: float, name: str, own: int, count) -> None:
    """Fail if ``v`` (the answer ``what``) is right for another value of ``name`` than the student's
    ``own`` (``count(value)``: the right answer for it), saying whose numbers it answers."""
    words = {"vocab": "a vocabulary of {:,}", "n_layers": "N = {}"}[name]
    for value, whose in _others(name, own):
        if _is(v, count(value)):
            fail(
                f"{what} = {v:,.0f} is the answer for {words.format(value)} ({whose} numbers); "
                f"yours are {words.format(own)}, printed under the exercise's statement."
            )


def _counts(vocab: int, n_layers: int) -> dict[str, int]:
    base = count_parameters(TransformerConfig.base())
    return {
        "base": base,
        "separate": vocab * 512,  # one more embedding matrix (the source's)
        "separate, library": count_parameters(TransformerConfig.base(vocab, vocab + 1)) - base,
        "half d_ff": base - count_parameters(TransformerConfig.base(d_ff=1024)),
        "N": count_parameters(TransformerConfig.base(n_layers=n_layers)),
    }


_near = partial(near, tolerance=TOLERANCE)  # relative


def _count(value: Any, what: str) -> float:
    """``value`` as a number of parameters: a number below 5 is a share of the base model, one below 1000
    an answer in millions (or a percentage), and a negative one a sign mistake, each told by name."""
    v = expect_number(value, what)
    shown = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"
    if v < 0:
        fail(
            f"{what} = {shown} is negative; the question asks how many parameters, a count, so write it as a positive number (loss_half_ff is the number removed)."
        )
    if v < 5:
        fail(
            f"{what} = {shown} looks like a share of the base model; the variables hold counts of parameters, written in full (the shares are for your own table, next to the counts)."
        )
    if v < 1000:
        fail(
            f"{what} = {shown} looks like an answer in millions (or a percentage); each answer is a count of parameters, written in full (5.4 million is 5_400_000, not 5.4)."
        )
    return v


def _is(value: float, target: float) -> bool:
    """``value`` is ``target`` computed with or without biases and LayerNorms (a known mistake's count)."""
    return abs(value / target - 1) <= MISTAKE_TOLERANCE


def _check_loss_half_ff(loss_half_ff: Any, n: dict) -> None:
    """loss_half_ff: within 1% of what halving d_ff removes; the usual ways to count half named."""
    base = n["base"]
    v = _count(loss_half_ff, "loss_half_ff")
    if not _near(v, n["half d_ff"]):
        # the two ways to count half, told apart where their counts differ (with the biases)
        both_matrices, one_matrix = 2 * 512 * 1024, 512 * 1024
        if v in (6 * (both_matrices + 1024), 6 * (both_matrices + 1024 + 512)):
            fail(
                f"loss_half_ff = {v:,.0f} counts the feed-forward networks of the encoder's 6 layers only; the decoder's 6 layers have one each as well."
            )
        if v == 12 * (one_matrix + 1024):
            fail(
                f"loss_half_ff = {v:,.0f} counts one matrix per network; each feed-forward network has two (d_model x d_ff and d_ff x d_model), and halving d_ff halves both."
            )
        if _is(v, n["half d_ff"] / 2):  # 6 x 2 matrices = 12 x 1 matrix, biases left out
            fail(
                f"loss_half_ff = {v:,.0f} counts either the encoder's 6 feed-forward networks only (the decoder's 6 layers have one each as well), or one matrix per network (each has two, d_model x d_ff and d_ff x d_model, both halved)."
            )
        if _is(v, n["half d_ff"] / 4):
            fail(
                f"loss_half_ff = {v:,.0f} misses two things: the decoder's 6 layers have a feed-forward network as well as the encoder's, and each network has two matrices (d_model x d_ff and d_ff x d_model), both halved."
            )
        if _is(v, 2 * n["half d_ff"]):
            fail(
                f"loss_half_ff = {v:,.0f} is as much as all the feed-forward weights, as if halving d_ff removed every one; it takes each of the 24 matrices from 512 x 2048 to 512 x 1024 (d_model x d_ff)."
            )
        if _is(v, base - n["half d_ff"]):
            fail(f"loss_half_ff = {v:,.0f} is the new total; the question asks for the loss.")
        fail(
            f"loss_half_ff = {v:,.0f} is not it. Count what one feed-forward network holds (two matrices and two bias vectors) and what halving d_ff removes from it, then how many such networks the base model has."
        )


def _check_total_n12(total_n12: Any, n: dict, N: int, times: str) -> None:
    """total_n12: within 1% of the total with N layers in each stack; the usual miscounts named."""
    more, base = N - 6, n["base"]  # more: new layers in each stack
    v = _count(total_n12, "total_n12")
    if not _near(v, n["N"]):
        if _is(v, N / 6 * base):
            fail(
                f"total_n12 = {v:,.0f} is {times} the base model, but the shared embedding does not grow with N; only the layers {'double' if N == 12 else 'grow'}."
            )
        if _is(v, n["N"] - base):
            fail(
                f"total_n12 = {v:,.0f} is what the {2 * more} new layers add; the question asks for the total."
            )
        encoder_layer, decoder_layer = 2 * 512 * 2048 + 4 * 512**2, 2 * 512 * 2048 + 8 * 512**2
        if _is(v, base + 2 * more * encoder_layer):
            fail(
                f"total_n12 = {v:,.0f} is the base model plus {2 * more} layers of an encoder layer's size. {'Six' if more == 6 else more} of the new layers are decoder layers, and a decoder layer also has a cross-attention over the encoder's output, with its own four d_model x d_model matrices."
            )
        embedding = TransformerConfig.base().src_vocab_size * 512  # shared and tied
        if abs(v / (N / 6 * (base - embedding)) - 1) <= 1e-4:  # with the biases, as computed
            fail(
                f"total_n12 = {v:,.0f} is the layers {'doubled' if N == 12 else 'grown'} without the embedding: the total also holds the shared embedding (vocabulary x d_model), once."
            )
        if _is(v, base + more * encoder_layer) or _is(v, base + more * decoder_layer):
            fail(
                f"total_n12 = {v:,.0f} is about the base model plus {more} layers of one kind (or the layers {'doubled' if N == 12 else 'grown'} without the embedding). N counts the layers of the encoder and of the decoder each, so {more} more encoder layers and {more} more decoder layers; and the total keeps the shared embedding, once."
            )
        _not_theirs(
            "total_n12",
            v,
            "n_layers",
            N,
            lambda k: count_parameters(TransformerConfig.base(n_layers=k)),
        )
        fail(
            f"total_n12 = {v:,.0f} is not it. Count one encoder layer (self-attention and feed-forward network) and one decoder layer (which adds a cross-attention); N = {N} adds {'six' if more == 6 else more} of each to the base model, and the shared embedding stays as it is."
        )


def _check_gain_separate(gain_separate: Any, n: dict, vocab: int) -> None:
    """gain_separate: within 1% of one more embedding matrix (the source's); the usual miscounts named."""
    base = n["base"]
    v = _count(gain_separate, "gain_separate")
    if not (_near(v, n["separate"]) or _near(v, n["separate, library"])):
        if _is(v, 2 * n["separate"]):
            fail(
                f"gain_separate = {v:,.0f} counts two new matrices of vocabulary x 512 (or one of vocabulary x 1024). Only the source embedding is new, vocabulary x d_model with base's d_model = 512 (1024 is the big model's): the pre-softmax layer stays tied to the target embedding (as the question says; sec. 3.4), so it adds nothing."
            )
        if _is(v, base + n["separate"]):
            fail(f"gain_separate = {v:,.0f} is the new total; the question asks for the gain.")
        _not_theirs("gain_separate", v, "vocab", vocab, lambda k: k * 512)
        fail(
            f"gain_separate = {v:,.0f} is not it. With separate vocabularies the source gets its own embedding matrix: vocabulary x d_model."
        )


@checker("parameter counts")
def check_parameter_counts(gain_separate: Any, loss_half_ff: Any, total_n12: Any) -> str:
    """Check the predictions of exercise 3 for the base model: ``gain_separate``, the parameters gained with
    separate source and target vocabularies of 37,000 tokens; ``loss_half_ff``, those lost when d_ff is
    halved; ``total_n12``, the total with N = 12. Each within 1%. In a course with per-student variants,
    the vocabulary and N are the student's own (:func:`parameter_variant`)."""
    answers = {"gain_separate": gain_separate, "loss_half_ff": loss_half_ff, "total_n12": total_n12}
    if all(v is None for v in answers.values()):
        not_attempted(
            "write your three predictions (gain_separate, loss_half_ff, total_n12) in the cell above, then run this cell again."
        )
    numbers = parameter_variant()
    N = numbers["n_layers"]
    times = "twice" if N == 12 else f"{N / 6:.3g} times"
    n = _counts(numbers["vocab"], N)
    # every wrong answer named at once (a reader's review, s32: one at a time took three round trips)
    parts = {
        "gain_separate": lambda v: _check_gain_separate(v, n, numbers["vocab"]),
        "loss_half_ff": lambda v: _check_loss_half_ff(v, n),
        "total_n12": lambda v: _check_total_n12(v, n, N, times),
    }
    wrong = failures(parts, answers)
    if len(wrong) > 1:
        fail(f"{len(wrong)} of your answers are not right yet. " + " ".join(wrong))
    if wrong:
        fail(wrong[0])
    base = n["base"]
    missing = [k for k, v in answers.items() if v is None]
    if missing:
        not_attempted(f"so far right; now predict {', '.join(missing)}.")
    return f"all three are right: + {n['separate'] / base:.0%} for a separate source vocabulary, - {n['half d_ff'] / base:.0%} with half the feed-forward width, {n['N'] / base:.2f} times the parameters with {times} the layers."
