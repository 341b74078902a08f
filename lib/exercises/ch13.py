"""Checkers for the exercises of the chapter *GPT*.

- :func:`check_top_p_filter`: exercise 1 (implement): the distribution that nucleus sampling draws from
  (Holtzman et al. 2020, sec. 3.1, eq. 3: the smallest set of most probable tokens whose probability
  reaches p, renormalized), as ``lib.gpt.sampling_distribution(probs.log(), top_p=p)`` computes it.
- :func:`check_gpt3_size`: exercise 2 (predict, then check): the parameters of GPT-3 175B (Brown et al.
  2020, Table 2.1) from 12 N D^2 and the embeddings, and the embeddings' share of them; in a course
  with per-student variants, of another row of the table (:func:`gpt3_variant`).
- :func:`check_first_word`: exercise 3 (change and explain): the prediction (a choice among three outcomes)
  and, separately, the measured test accuracy of the pretrained GPT fine-tuned as a classifier that reads
  position 1 instead of the last token, and that classifier itself, probed for the position it reads and
  run on the chapter's sentences (fine-tuned from the pretrained GPT, and scoring the accuracy written).

The rest of exercise 3 (why, and why BERT's ``[CLS]``, which the statement introduces, can come first) is answered in prose; the chapter's
solution computes the numbers this module knows and asserts them.
"""

from __future__ import annotations

import math
import random
from decimal import Decimal
from functools import cache, partial
from typing import Any, NoReturn

import torch
from torch import Tensor

from lib.data import stories

from . import (
    CheckFailed,
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    fail_as_percentage,
    fail_if_in_units,
    fmt,
    largest_difference,
    near,
    not_attempted,
    passing_everywhere,
    refusing,
    student_id,
    variant,
)

__all__ = ["check_top_p_filter", "check_gpt3_size", "check_first_word"]


# --- exercise 1: nucleus sampling by hand ---------------------------------------------------------------


def top_p_reference(probs: Tensor, p: float, *, mistake: str | None = None) -> Tensor:
    """The nucleus distribution of ``probs`` [V] for ``p`` (float64 [V]): sort in decreasing order, keep the
    smallest prefix whose sum is at least p, zero the rest, renormalize; as ``sampling_distribution`` does.

    ``mistake`` computes one of the usual wrong answers instead (the checker names them):
    "exclusive" keeps only the tokens whose running sum stays <= p (the token that crosses p is missing);
    "before <= p" keeps a token when the mass before it is <= p (one token too many when a running sum is p);
    "unnormalized" leaves out the renormalization; "sorted" returns the result in sorted order;
    "mask in sorted order" applies the mask computed in sorted order to the unsorted probabilities;
    "gathered" maps the mask back by indexing it with ``order`` (``keep_sorted[order]``), the permutation
    where its inverse is needed (a scatter with ``order``);
    "ascending" sorts in increasing order; "softmax" applies a softmax to ``probs`` first.
    """
    probs = probs.detach().double()
    if mistake == "softmax":
        probs = torch.softmax(probs, dim=-1)
    sorted_probs, order = probs.sort(descending=mistake != "ascending")  # [V], [V]
    running = sorted_probs.cumsum(-1)  # [V]
    if mistake == "exclusive":
        keep_sorted = running <= p
    elif mistake == "before <= p":
        keep_sorted = running - sorted_probs <= p
    else:
        keep_sorted = running - sorted_probs < p
    if mistake == "sorted":
        kept = sorted_probs * keep_sorted
    elif mistake == "mask in sorted order":
        kept = probs * keep_sorted  # the permutation forgotten
    elif mistake == "gathered":
        kept = probs * keep_sorted[order]  # the permutation, not its inverse
    else:
        # vocabulary order
        kept = probs * torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return kept if mistake == "unnormalized" else kept / kept.sum()


# The seed of the implement exercise's cases: a practice value here; a course's grader sets its own
# (grading/ch13.py of the repository, which the package does not ship: lib/exercises/__init__.py).
SEEDS = {"top_p_filter": 13}


def _near_p(probs: Tensor, p: float) -> bool:
    """Whether a running sum of ``probs`` in descending order is within 1e-4 of p (a case whose set
    to keep could depend on rounding), or two probabilities tie."""
    ordered = probs.double().sort(descending=True).values
    return bool(((ordered.cumsum(0) - p).abs() < 1e-4).any() or (ordered.diff() == 0).any())


def _top_p_cases() -> list[tuple[str, Tensor, float]]:
    """(description, probs [V], p) of the hidden cases: no ties among the non-zero probabilities, the tokens
    not in sorted order, and no running sum within 1e-4 of p (float32 rounding of a running sum of 200
    probabilities stays below 1e-5, so the set to keep does not depend on rounding), except the last case,
    where a running sum equals p exactly (0.5 and 0.5 + 0.3 are exact in float32): it tells the boundary
    rule "mass before the token < p" from "<= p"."""
    g = torch.Generator().manual_seed(SEEDS["top_p_filter"])
    cases = []
    for V, scale, p in [(12, 0.7, 0.5), (50, 1.5, 0.9), (200, 2.0, 0.99), (30, 1.0, 0.05)]:
        probs = torch.softmax(scale * torch.randn(V, generator=g), -1)
        while _near_p(probs, p):  # drawn again (never with the practice seed, SEEDS above)
            probs = torch.softmax(scale * torch.randn(V, generator=g), -1)
        cases.append((f"V = {V}, p = {p}", probs, p))
    peaked = torch.tensor([0.01, 0.005, 0.95, 0.02, 0.015])  # one token above p
    cases.append(("one token with probability 0.95, p = 0.9", peaked, 0.9))
    tail = torch.tensor([0.1, 0.0, 0.35, 0.0, 0.25, 0.3, 0.0, 0.0])  # zeros, as after a top-k
    cases.append(("some probabilities exactly 0, p = 0.8", tail, 0.8))
    wide = torch.softmax(torch.randn(40, generator=g, dtype=torch.float64), -1)
    while _near_p(wide, 0.7):
        wide = torch.softmax(torch.randn(40, generator=g, dtype=torch.float64), -1)
    cases.append(("float64, V = 40, p = 0.7", wide, 0.7))
    boundary = torch.tensor([0.3, 0.5, 0.2])  # the most probable token alone holds p exactly
    cases.append(("a running sum exactly p: [0.3, 0.5, 0.2], p = 0.5", boundary, 0.5))
    return cases


_TOP_P_MISTAKES = [
    (
        "before <= p",
        "you kept one token too many: a token whose preceding tokens already hold exactly p. The boundary is strict: such a set already reaches p, and the nucleus is the SMALLEST set that does.",
    ),
    (
        "sorted",
        "your result is in sorted order (largest first). Put each probability back at its token's index: scatter the kept values back with the indices that `sort` returned.",
    ),
    (
        "mask in sorted order",
        "you applied the mask computed on the sorted probabilities to the probabilities in vocabulary order, so you kept the first tokens of the vocabulary. Map the mask back to vocabulary order with the permutation that `sort` returned.",
    ),
    (
        "gathered",
        "you kept as many tokens as the nucleus, but you mapped the mask back to vocabulary order the wrong way: indexing the sorted mask with `order` gives token i the mask at rank order[i], but order[i] is a token's index, not token i's rank. `order[r]` is the index of the token at rank r: put each kept value back at its token's index, position r of the sorted result at index order[r].",
    ),
    (
        "ascending",
        "you kept the least probable tokens: sort in decreasing order (`descending=True`).",
    ),
    (
        "softmax",
        "you applied a softmax to `probs`, but they are probabilities already; softmax flattens them.",
    ),
]


def _name_top_p_mistake(
    case: str, probs: Tensor, p: float, result: Tensor, expected: Tensor
) -> NoReturn:
    """Fail with the mistake behind a wrong distribution: a usual one (``_TOP_P_MISTAKES``), the
    crossing token left out, no renormalization, the wrong number or choice of tokens; else the
    largest difference."""
    n_expected = int((expected > 0).sum())
    for mistake, message in _TOP_P_MISTAKES:
        if torch.allclose(result, top_p_reference(probs, p, mistake=mistake), atol=1e-5):
            fail(f"on the case {case}, {message}")
    exclusive = top_p_reference(probs, p, mistake="exclusive")
    if torch.allclose(result, exclusive, atol=1e-5):
        kept = probs.double()[exclusive > 0].sum().item()
        fail(
            f"on the case {case}, the probabilities you kept sum to {kept:.3g} before renormalizing, less than p = {p}: you kept only the tokens whose running sum stays below (or at) p. Keep the token that crosses p too: the nucleus is the smallest set whose sum is AT LEAST p."
        )
    total = result.sum().item()
    if abs(total - 1) > 1e-4:
        if torch.allclose(result, top_p_reference(probs, p, mistake="unnormalized"), atol=1e-5):
            fail(
                f"on the case {case}, your probabilities sum to {total:.3g} over the vocabulary: you kept the right tokens but did not renormalize. Divide the kept probabilities by their sum."
            )
        fail(
            f"on the case {case}, your probabilities sum to {total:.3g} over the vocabulary, not 1."
        )
    n_kept = int((result > 1e-12).sum())
    if n_kept != n_expected:
        fail(
            f"on the case {case}, you kept {n_kept} token{'s' * (n_kept != 1)}; the nucleus has {n_expected}: the {n_expected} most probable tokens are the smallest set whose probability reaches p = {p} (together {probs.double()[expected > 0].sum().item():.3g})."
        )
    if not torch.equal(result > 1e-12, expected > 0):
        fail(
            f"on the case {case}, you kept {n_kept} tokens, as many as the nucleus, but not the right ones. Keep the most probable tokens, and check how you map the mask from sorted order back to vocabulary order: position r of the sorted result belongs at index order[r] of the result."
        )
    fail(
        f"on the case {case}, you kept the right tokens, but not in proportion: {largest_difference(result, expected)}. Renormalizing divides every kept probability by the same number, their sum."
    )


_refuse_sampling = refusing(
    "sampling_distribution",
    "; the exercise is to write nucleus filtering yourself (sort, running sum, mask)",
)


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The library function the exercise asks to write is refused under any name (a wrapper too).
REFUSALS = {
    "check_top_p_filter": [
        ("lib.decoding.sampling_distribution", None, _refuse_sampling),
    ],
}


def _mistakes_passing_top_p() -> list[str]:
    """The known mistakes (``_TOP_P_MISTAKES``) whose distributions are right on every case."""
    cases = _top_p_cases()

    def right(mistake: str) -> bool:
        return all(
            torch.allclose(
                top_p_reference(probs, p, mistake=mistake), top_p_reference(probs, p), atol=1e-5
            )
            for _, probs, p in cases
        )

    return passing_everywhere(_TOP_P_MISTAKES, right)


# a course's private seeds are checked against these (lib/exercises/__init__.py: mistakes_passing)
PRIVATE_CASE_MISTAKES = {"top_p_filter": _mistakes_passing_top_p}


@checker("top_p_filter")
def check_top_p_filter(top_p_filter: Any) -> str:
    """Check ``top_p_filter(probs [V], p) -> [V]``: the probabilities of the smallest set of most probable
    tokens whose sum is at least p, renormalized; 0 for every other token; in vocabulary order. Compared with
    :func:`top_p_reference` to 1e-5 (float32 rounding of a sum over at most 200 numbers is ~1e-7), in any
    floating dtype: the exercise does not ask to keep the dtype of ``probs``, so a float32 result for the
    float64 case passes, with a note."""
    attempted(top_p_filter, "top_p_filter")
    if "sampling_distribution" in getattr(getattr(top_p_filter, "__code__", None), "co_names", ()):
        fail(
            "your `top_p_filter` calls the library's sampling_distribution; the exercise is to write nucleus filtering yourself (sort, running sum, mask), and to compare the two afterwards."
        )
    cases, narrowed = _top_p_cases(), None
    for description, probs, p in cases:
        case = f"'{description}'"
        result = call(top_p_filter, probs, p, name="top_p_filter", case=case)
        if isinstance(result, Tensor) and result.dtype == torch.bool:
            fail(
                f"on the case {case}, `top_p_filter` returned a boolean tensor, the mask of the kept tokens. Return the distribution itself: the kept probabilities, renormalized, and 0 elsewhere."
            )
        if isinstance(result, Tensor) and probs.dtype == torch.float64:
            # the exercise does not ask for the dtype: a float32 result is judged on its values
            narrowed = (case, result.dtype) if result.dtype != torch.float64 else narrowed
        result = expect_tensor(
            result, tuple(probs.shape), name="top_p_filter", case=case, allow_nan=True
        )
        expected = top_p_reference(probs, p)
        if torch.isnan(result).any():
            if probs.max().item() > p:  # "running sum <= p" keeps nothing here
                fail(
                    f"on the case {case}, your result is NaN: you kept no token and divided 0 by 0. The most probable token alone has {probs.max().item():.3g} > p = {p}, and your rule keeps only the tokens whose running sum stays below (or at) p. The nucleus is the smallest set whose sum REACHES p: it always holds the token that crosses p, so at least the most probable one."
                )
            fail(f"on the case {case}, your result holds NaN: did you divide by a sum of 0?")
        if (result < 0).any():
            fail(
                f"on the case {case}, your result holds the negative number {fmt(result.min().item())}: probabilities are >= 0."
            )
        if not torch.allclose(result, expected, atol=1e-5):
            _name_top_p_mistake(case, probs, p, result, expected)
    note = (
        f" A note: on the case {narrowed[0]}, `probs` is float64 and your result is {narrowed[1]}. Its values agree with the nucleus to 1e-5, so it passes; a result built from `probs` (`torch.zeros_like(probs)`, `probs * mask`) would keep float64's precision."
        if narrowed
        else ""
    )
    return f"`top_p_filter` keeps the nucleus and renormalizes it on all {len(cases)} hidden cases ({'; '.join(d for d, *_ in cases)}).{note}"


# --- exercise 2: the size of GPT-3 ------------------------------------------------------------------------

# Brown et al. 2020, Table 2.1
GPT3 = dict(vocab_size=50257, block_size=2048, n_layer=96, n_head=96, n_embd=12288)
GPT3_PARAMS = 174_604_259_328  # count_parameters(GPTConfig(**GPT3)); tests and the chapter check it
EMBEDDINGS = (GPT3["vocab_size"] + GPT3["block_size"]) * GPT3["n_embd"]  # wte + wpe = 642,723,840
BLOCKS_12ND2 = 12 * GPT3["n_layer"] * GPT3["n_embd"] ** 2  # 173,946,175,488
EMBEDDING_SHARE = EMBEDDINGS / GPT3_PARAMS  # 0.00368
TOTAL_TOLERANCE = 2.5e-4  # relative, for gpt3_params: four significant figures, 174.6 billion
SHARE_TOLERANCE = 5e-5  # absolute, for embedding_share: two significant figures, 0.0037
GPT2_CONTEXT = 1024  # a usual mistake: GPT-2's context for the position embeddings
EMBEDDINGS_GPT2_CONTEXT = (GPT3["vocab_size"] + GPT2_CONTEXT) * GPT3["n_embd"]

# Exercise 2's model: GPT-3 175B (the book's), or, in a course with per-student variants
# (tools/make_course.py --variants; course-kit review s22, M8), each student's own row of the paper's
# Table 2.1, as the quiz bank draws them: {name: (n_layer N, n_embd D, n_head, the paper's rounded
# size)}. 13B is left out (its width 5,140 is not a whole number of heads of 128), and XL gets 16
# heads of 128 (the table's 24 do not divide its width 2,048); the heads do not change the count.
GPT3_MODELS = {
    "Small": (12, 768, 12, 125e6),
    "Medium": (24, 1024, 16, 350e6),
    "Large": (24, 1536, 16, 760e6),
    "XL": (24, 2048, 16, 1.3e9),
    "2.7B": (32, 2560, 32, 2.7e9),
    "6.7B": (32, 4096, 32, 6.7e9),
    "175B": (96, 12288, 96, 175e9),
}
VARIANT_BOOK = {"model": "175B"}
VARIANT_CHOICES = {"model": ["Small", "Medium", "Large", "XL", "2.7B", "6.7B"]}
VARIANTS = {2: "gpt3_variant"}  # exercise -> the function that gives a student their numbers
# the answer cell's words that name the book's model, and what a course with variants says instead
VARIANT_TEMPLATE = {
    2: [
        (
            "the number of parameters of GPT-3's largest model",
            "the number of parameters of your GPT-3 model (printed above)",
        )
    ]
}


def gpt3_variant() -> dict[str, Any]:
    """Exercise 2's model for the current reader: GPT-3 175B for a reader of the book, a student's own
    row of the paper's table in a course with variants (the vocabulary and context are everyone's)."""
    name = variant("ch13 gpt3 size", VARIANT_CHOICES, VARIANT_BOOK)["model"]
    n_layer, n_embd, n_head, _ = GPT3_MODELS[name]
    return {"model": f"GPT-3 {name}", "n_layer": n_layer, "n_embd": n_embd, "n_head": n_head}


def gpt3_numbers(name: str) -> dict[str, Any]:
    """The counts of GPT-3 ``name`` (a key of :data:`GPT3_MODELS`) built as the library's GPT: the exact
    count (every block's 12 D^2 weights and 13 D biases and LayerNorm numbers, the token and position
    embeddings, the final LayerNorm's 2 D; the output layer tied), the estimate 12 N D^2 + (V + T) D,
    the embeddings and their share. tests/test_exercises_ch13.py holds the count to the library's."""
    N, D, _, headline = GPT3_MODELS[name]
    V, T = GPT3["vocab_size"], GPT3["block_size"]
    embeddings, blocks = (V + T) * D, 12 * N * D**2
    params = blocks + N * 13 * D + 2 * D + embeddings
    return {
        "name": name,
        "N": N,
        "D": D,
        "V": V,
        "T": T,
        "headline": headline,
        "params": params,
        "estimate": blocks + embeddings,
        "blocks": blocks,
        "embeddings": embeddings,
        "share": embeddings / params,
        "book": name == VARIANT_BOOK["model"],
    }


def _numbers() -> dict[str, Any]:
    """:func:`gpt3_numbers` of the current reader's model (:func:`gpt3_variant`)."""
    return gpt3_numbers(variant("ch13 gpt3 size", VARIANT_CHOICES, VARIANT_BOOK)["model"])


def _share_tolerance(share: float) -> float:
    """Half a unit of a share's second significant figure: 0.00005 for 0.00368 (SHARE_TOLERANCE)."""
    return 0.5 * 10.0 ** (math.floor(math.log10(share)) - 1)


def _size(count: float) -> str:
    """A count in words: 174.6 billion, 125.2 million."""
    return f"{count / 1e9:.1f} billion" if count >= 1e9 else f"{count / 1e6:.1f} million"


_near = partial(near, tolerance=TOTAL_TOLERANCE)  # relative


def _right_total(v: float, n: dict) -> bool:
    """v is the count or the estimate to four significant figures (TOTAL_TOLERANCE): for GPT-3 175B the
    two are 0.009% apart; for the small models of a variant, up to 0.1%."""
    return _near(v, n["params"]) or _near(v, n["estimate"])


def _gpt2_context_totals(n: dict | None = None) -> tuple[int, int]:
    """The totals with position embeddings for GPT-2's context: the estimate and the exact count."""
    n = n or gpt3_numbers(VARIANT_BOOK["model"])
    shorter = (n["T"] - GPT2_CONTEXT) * n["D"]
    return n["estimate"] - shorter, n["params"] - shorter


def _no_position_totals(n: dict | None = None) -> tuple[int, int]:
    """The totals without the position embedding W_p: the estimate and the exact count."""
    n = n or gpt3_numbers(VARIANT_BOOK["model"])
    no_wpe = n["T"] * n["D"]
    return n["estimate"] - no_wpe, n["params"] - no_wpe


def _check_context_of_total(v: float, n: dict) -> None:
    """Fail with the mistake's message if v is a total, unrounded, computed with GPT-2's context or
    without W_p: both lie within TOTAL_TOLERANCE of the right count, so only their exact values are told."""
    if any(abs(v / total - 1) <= 1e-7 for total in _gpt2_context_totals(n)):
        fail(
            f"gpt3_params = {v:,.0f} counts the position embedding W_p for GPT-2's context. GPT-3's context is longer (the exercise gives it): W_p has one row per position of the context."
        )
    if any(abs(v / total - 1) <= 1e-7 for total in _no_position_totals(n)):
        fail(
            f"gpt3_params = {v:,.0f} has no position embedding W_p. GPT-3's positions are learned, as GPT-2's: W_p has one row of D parameters per position of the context (the exercise gives it)."
        )


def _other_models(n: dict) -> list[tuple[dict, str]]:
    """In a course with variants, the other models a student might have answered for: the book's,
    then the other students' (each with the words that say whose it is)."""
    if student_id() is None:
        return []
    others = [] if n["book"] else [(gpt3_numbers(VARIANT_BOOK["model"]), "the book's")]
    return others + [
        (gpt3_numbers(name), "another student's")
        for name in VARIANT_CHOICES["model"]
        if name != n["name"]
    ]


def _not_theirs(what: str, text: str, n: dict, right) -> None:
    """Fail if the answer ``what`` (written ``text``) is right for another model than the student's
    (``right(numbers)``: whether it is right for those numbers), saying whose model it answers."""
    for other, whose in _other_models(n):
        if right(other):
            fail(
                f"{what} = {text} is the answer for GPT-3 {other['name']} ({whose} numbers); "
                f"yours is GPT-3 {n['name']}, printed under the exercise's statement."
            )


def _check_gpt3_params(gpt3_params: Any, n: dict) -> None:
    """gpt3_params: right to four significant figures (TOTAL_TOLERANCE), the usual misses named."""
    v = expect_number(gpt3_params, "gpt3_params")
    _check_context_of_total(v, n)
    # the paper's rounded size, unless it is the count or the estimate to four figures; told first:
    # for GPT-3 Large, 760 million lies within the tolerance of the estimate, 759.8 million
    four = {float(f"{x:.4g}") for x in (n["params"], n["estimate"])}
    if abs(v / n["headline"] - 1) <= 5e-4 and float(f"{v:.4g}") not in four:
        if n["book"]:
            fail(
                "gpt3_params = 175 billion is the paper's headline figure; your own estimate, 12 N D^2 for the blocks plus (V + block_size) D for the embeddings (block_size: the context), also rounds to it at three significant figures. The exercise asks for four: carry your estimate to four figures."
            )
        fail(
            f"gpt3_params = {v:,.0f} is the paper's headline figure, its rounded size of GPT-3 {n['name']}. The exercise asks for your own estimate to four significant figures: 12 N D^2 for the blocks plus (V + block_size) D for the embeddings (block_size: the context)."
        )
    if not _right_total(v, n):
        fail_if_in_units(v, "gpt3_params", n["params"], TOTAL_TOLERANCE)
        _not_theirs("gpt3_params", f"{v:,.0f}", n, partial(_right_total, v))
        # 12 N D^2 alone, to four figures or more (173.9 billion for GPT-3 175B)
        if abs(v - n["blocks"]) <= 0.05e9 * n["blocks"] / BLOCKS_12ND2:
            fail(
                f"gpt3_params = {v:,.0f} is 12 N D^2 alone: add the token and position embeddings."
            )
        untied = n["V"] * n["D"]  # an output layer of its own
        if _near(v, n["params"] + untied) or _near(v, n["estimate"] + untied):
            fail(
                f"gpt3_params = {v:,.0f} counts the token embedding twice. The output layer reuses W_e (tied weights), so it adds no parameter."
            )
        one_block = n["blocks"] / n["N"]
        if _near(v, one_block + n["embeddings"]) or _near(v, one_block):
            fail(f"gpt3_params = {v:,.0f} has one block: GPT-3 has N = {n['N']} of them.")
        if abs(v / n["params"] - 1) <= 0.005:
            fail(
                f"gpt3_params = {v:,.0f} is close, but not right to four significant figures. The embeddings sit in the fourth figure: compute the blocks and the embeddings without rounding, add them, and only then keep four figures."
                if n["book"]
                else f"gpt3_params = {v:,.0f} is close, but not right to four significant figures: compute the blocks and the embeddings without rounding, add them, and only then keep four figures."
            )
        fail(
            "gpt3_params = {:,.0f} is not it. A block holds about 12 D^2 weights (4 D^2 in attention: W_Q, W_K, W_V, W_O; 8 D^2 in the feed-forward network: D x 4D and 4D x D); count the N blocks with the width D of {}, then add the token and position embeddings, (V + block_size) D, with block_size the context.".format(
                v, "GPT-3" if n["book"] else "your model"
            )
        )


def _right_share(s: float, n: dict) -> bool:
    """s is the embeddings' share of the count or of the estimate, to two significant figures."""
    tolerance = _share_tolerance(n["share"])
    return any(abs(s - n["embeddings"] / t) <= tolerance for t in (n["params"], n["estimate"]))


def _check_embedding_share(embedding_share: Any, n: dict) -> None:
    """embedding_share: right to two significant figures (SHARE_TOLERANCE for GPT-3 175B), the usual
    misses named."""
    s = expect_number(embedding_share, "embedding_share")
    share, tolerance = n["share"], _share_tolerance(n["share"])
    scale = share / EMBEDDING_SHARE  # the book's absolute windows, scaled to the student's share
    # the embeddings over the blocks (12 N D^2 or the exact count) instead of over the total: 0.003695,
    # inside the tolerance, so told when written to three figures (0.00369) or more; to two it is the
    # right 0.0037 and passes
    blocks_shares = [
        n["embeddings"] / blocks for blocks in (n["blocks"], n["params"] - n["embeddings"])
    ]
    if any(abs(s - b) <= 1e-6 * scale or abs(s - round(b, 5)) <= 1e-8 for b in blocks_shares):
        fail(
            f"embedding_share = {fmt(s)} divides the embeddings by the blocks alone. The share is of the total: the blocks and the embeddings together."
        )
    wte_only = n["V"] * n["D"] / n["params"]  # 0.00354 for GPT-3 175B
    # inside the tolerance for the smaller models of a variant (GPT-3 Large: 0.1015 for 0.1057), so
    # told when unrounded too
    if abs(s - wte_only) <= 1e-6 * scale:
        fail(
            f"embedding_share = {fmt(s)} counts the token embedding only. The exercise counts the position embedding W_p too: its learned positions are parameters as well."
        )
    if not _right_share(s, n):
        if abs(s - 100 * share) <= 100 * tolerance:
            fail_as_percentage(s, "embedding_share")
        _not_theirs("embedding_share", fmt(s), n, partial(_right_share, s))
        if abs(s - wte_only) <= tolerance:  # 0.00354, to two or three figures
            fail(
                f"embedding_share = {fmt(s)} counts the token embedding only. The exercise counts the position embedding W_p too: its learned positions are parameters as well."
            )
        twice = (n["embeddings"] + n["V"] * n["D"]) / n["params"]  # 0.0072 for GPT-3 175B
        if 0.83 * twice < s < 1.11 * twice:
            fail(
                f"embedding_share = {fmt(s)} counts the token embedding twice. The output layer is tied to it."
            )
        if s > 0.05 * scale:
            fail(
                f"embedding_share = {fmt(s)} is far too large for GPT-3. Compare how the embeddings and the blocks grow with the width D and the number of layers N."
            )
        gpt2_embeddings = (n["V"] + GPT2_CONTEXT) * n["D"]
        if any(abs(s - gpt2_embeddings / t) <= 5e-6 * scale for t in _gpt2_context_totals(n)):
            fail(
                f"embedding_share = {fmt(s)} counts the position embedding W_p for GPT-2's context. GPT-3's context is longer (the exercise gives it): W_p has one row per position of the context."
            )
        one_figure = float(f"{share:.1g}")  # 0.004 for GPT-3 175B
        if abs(s / one_figure - 1) <= 1e-4:  # float32 too
            fail(
                f"embedding_share = {fmt(s)} is the share rounded to one significant figure. The exercise asks for two: 0.00..., with the two digits after the zeros."
                if n["book"]
                else f"embedding_share = {fmt(s)} is the share rounded to one significant figure. The exercise asks for two."
            )
        if n["book"] and abs(s - share) <= 4 * tolerance and f"{s:.2g}" == "0.0036":
            fail(
                f"embedding_share = {fmt(s)} is close, but not right to two significant figures. Two mistakes give it: position embeddings counted for GPT-2's context rather than GPT-3's (the exercise gives it), or a share truncated rather than rounded."
            )
        if abs(s - share) <= 4 * tolerance:
            fail(
                f"embedding_share = {fmt(s)} is close, but not right to two significant figures: divide the embeddings by the total without rounding either, then round the share."
            )
        # which side of the share it lies says which term to look at (review ch13_s33, point 2)
        side = (
            "too small: check the embeddings, all of V, block_size and D GPT-3's"
            if s < share
            else "too large: check that the total counts all N blocks"
        )
        fail(
            f"embedding_share = {fmt(s)} is not it, {side}. The share is the token and position embeddings, (V + block_size) D with block_size the context, divided by the total number of parameters."
        )


@checker("GPT-3 size")
def check_gpt3_size(gpt3_params: Any, embedding_share: Any) -> str:
    """Check the predictions of exercise 2: ``gpt3_params``, the number of parameters of GPT-3 175B built as
    the library's GPT, and ``embedding_share``, the fraction of them in the token and position embeddings.
    In a course with per-student variants, the model is the student's own row of the paper's table
    (:func:`gpt3_variant`): the count, the estimate and the share are computed from it, the mistakes
    below are named on it (with windows scaled to its share), and a count or a share for the book's
    model or a classmate's is said to be one.

    Tolerances: ``gpt3_params`` within 0.025% of the exact count, the four significant figures the exercise
    asks for. The estimate 12 N D^2 + (V + block_size) D is 0.009% below it (it leaves out the 13 D biases and
    LayerNorm weights per layer), so the tolerance accepts it and its rounding to four figures (174.6
    billion), and rejects 174.5 and 174.7 billion (-0.06%, +0.05%), 12 N D^2 alone (-0.38%), an untied output
    layer (+0.35%) and the paper's rounded 175 billion (+0.23%), each with its own reason; another number
    within 0.4% is told to keep four figures. Two mistakes land inside the tolerance: position embeddings
    for GPT-2's context (-0.016% with the estimate, -0.007% with the exact count) and none at all (-0.023%,
    -0.014%); their unrounded totals are told the mistake, their roundings to four figures pass.
    ``embedding_share`` (token and position embeddings, as the exercise defines it) within 0.00005 of 0.00368: that accepts two significant figures (0.0037) and rejects
    the token embedding alone (0.00354) and 0.0036 (a truncation, or the share with GPT-2's context). Position
    embeddings for GPT-2's context of 1024 instead of GPT-3's 2048 give a total that agrees to four figures
    (accepted when rounded) and a share of 0.00361: the unrounded totals of that mistake (the estimate and the
    exact count) and that share are told to look at the context; the unrounded totals without W_p are told
    that W_p is missing. A share of the blocks rather than of the total (0.003695) is inside the tolerance too: to
    three figures or more it is told the mistake. The messages name the mistake and never give the numbers to compute.
    """
    if gpt3_params is None and embedding_share is None:
        not_attempted(
            "write your two predictions (gpt3_params and embedding_share) in the cell above, then run this cell again."
        )
    n = _numbers()
    if gpt3_params is not None:
        _check_gpt3_params(gpt3_params, n)
    if embedding_share is not None:
        _check_embedding_share(embedding_share, n)
    if gpt3_params is None:
        not_attempted("your embedding_share is right; now predict gpt3_params.")
    if embedding_share is None:
        not_attempted("your gpt3_params is right; now predict embedding_share.")
    headline = "175" if n["book"] else _size(n["headline"])
    return f"both predictions are right: {_size(n['params'])} parameters (the paper rounds to {headline}), of which the embeddings are {n['embeddings'] / 1e6:.1f} million, {n['share']:.2%}; 12 N D^2 alone is {n['blocks'] / n['params']:.2%} of the total."


# --- exercise 3: read the first token -----------------------------------------------------------------------


# The chapter's data (its solution asserts these numbers): the pretrained GPT fine-tuned as in the chapter
# (150 steps, 200 training sentences) with a head on position 1 instead of the last token. Every sentence of
# the task starts with "the", so position 1 holds the same vector for all of them: the classifier gives one
# answer to every sentence, the majority label of its training sentences, 0 (112 of 200), right on the test
# sentences of label 0 (478 of 1000). Both shares are counted in the data, not measured on a model; a run
# whose training settles on the other label scores 1 - FIRST_WORD_ACCURACY.
def _label_0_share(n: int, seed: int) -> float:
    """The share of label 0 in the chapter's ``classification_examples(n, seed=seed)``."""
    examples = stories.classification_examples(n, seed=seed)
    return sum(label == 0 for _, label in examples) / len(examples)


# Exercise 3's first_word_accuracy is a measurement, the same for every student and public, as chapter
# 12's exercise 4 (course-kit review s22, S4). Its one check also checks the classifier the student
# wrote, which must score the value written: MEASURED_WITH_CODE keeps that check's points for the code
# in a graded course (tools/make_course.py); the number alone earns nothing.
MEASURED = {3}
MEASURED_WITH_CODE = {3}
FIRST_WORD_ACCURACY = _label_0_share(1000, seed=2)  # the test sentences: 0.478
TRAIN_MAJORITY = _label_0_share(200, seed=1)  # the training sentences: 0.56
# absolute: the measurement to three decimals (one test sentence is 0.001)
FIRST_WORD_TOLERANCE = 5e-4
TEST_VOCAB_SIZE = (
    253  # the chapter's vocabulary (len(vocab)), which its test sentences are written in
)
# the exercise asks for at least two decimals; fewer cannot tell 0.478 from 0.5
FIRST_WORD_MIN_DECIMALS = 2
# at or above: a head on the padded rows' last column (h[:, -1]), which sees the whole sentence (0.993)
LAST_COLUMN_ACCURACY = 0.95
# The chapter's GPTClassifier, whose head reads the last token, comes out of training: 0.928 on the
# Intel processor the text was computed on, 0.956 on an AMD one. The check cell hands the checker the
# reader's own run's accuracies (the chapter's `accuracy`; its "pretrained" entry is that classifier's),
# and the message for a number that is that classifier's accuracy is keyed to that run's value.
LAST_TOKEN_KEY = "pretrained"
FIRST_WORD_CHOICES = {
    "a": "about as high as the classifier that reads the last token",
    "b": "clearly above chance, but well below the classifier that reads the last token",
    "c": "chance level: no better than giving the same answer to every sentence",
}
FIRST_WORD_RIGHT_CHOICE = "c"


def _decimals(x: float) -> int:
    """How many decimals ``x`` is written with (0.48 -> 2; a measured float such as 0.4779999852 -> 10)."""
    exponent = Decimal(repr(float(x))).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _first_word_choice(choice: Any) -> str:
    """The letter of exercise 3's prediction, normalised; fail unless it is one of "a", "b", "c"."""
    if not isinstance(choice, str) or choice.strip().lower().strip("()") not in FIRST_WORD_CHOICES:
        fail(
            f'first_word_prediction should be one of the letters "a", "b" or "c" of the exercise, got {fmt(choice)}.'
        )
    return choice.strip().lower().strip("()")


# what a pass says next, right prediction or wrong: where to look, not why (the explanation is the exercise's)
EXPLAIN = "Now explain the measurement: ask which tokens the hidden state at position 1 can see under the causal mask, and whether they differ from one sentence of the task to the next."


def _wrong_prediction_note(choice: str) -> str:
    """What a pass says of a wrong prediction: the prediction is compared, not graded."""
    return f'Your prediction, "{choice}" ({FIRST_WORD_CHOICES[choice]}), was off, and that is what the experiment is for: keep it as you wrote it. {EXPLAIN}'


# exercise 3's probe of the reader's classifier: rows of token ids, <bos> first, then the same rows with
# another first word (position 1), and with other words after it (positions 2 on)
PROBE_ROWS, PROBE_LENGTH = 4, 8
PROBE_VOCAB = (
    20  # ids drawn below this when the classifier names no vocabulary (any story GPT has more)
)
BOS_ID = 1  # word_vocab's <bos>, the chapter's


def _probe_ids(vocab_size: int) -> Tensor:
    """[3 * PROBE_ROWS, PROBE_LENGTH] ids: rows of <bos> and words, the same rows with another first word,
    and the same rows with other words after the first (ids 4 on: not <pad>, <bos>, <eos>, <unk>)."""
    g = torch.Generator().manual_seed(13)
    words = vocab_size - 4
    ids = 4 + torch.randint(0, words, (PROBE_ROWS, PROBE_LENGTH), generator=g)  # [R, T]
    ids[:, 0] = BOS_ID

    def other(x: Tensor) -> Tensor:  # another word at every place
        return 4 + (x - 4 + torch.randint(1, words, x.shape, generator=g)) % words

    first, later = ids.clone(), ids.clone()
    first[:, 1] = other(ids[:, 1])
    later[:, 2:] = other(ids[:, 2:])
    return torch.cat([ids, first, later])


def _logits(output: Any) -> Any:
    """The logits in what a classifier returns: a tensor, or a ``GPTClassifierOutput`` (its ``logits``,
    also its first item)."""
    if isinstance(output, Tensor):
        return output
    if isinstance(getattr(output, "logits", None), Tensor):
        return output.logits
    if isinstance(output, (tuple, list)) and output and isinstance(output[0], Tensor):
        return output[0]
    return output


def _check_first_word_classifier(classifier: Any) -> None:
    """Fail unless ``classifier`` (token ids [B, T] -> logits [B, 2]) reads position 1: its logits change
    with the first word and not with the words after it."""
    if not callable(classifier):
        fail(
            f"first_word_classifier should be your fine-tuned classifier (a model called on token ids [B, T] that returns the logits [B, 2]), got {fmt(classifier)}."
        )
    config = getattr(getattr(classifier, "gpt", None), "config", None)
    vocab_size = getattr(config, "vocab_size", None)
    vocab_size = vocab_size if isinstance(vocab_size, int) and vocab_size > 5 else PROBE_VOCAB
    ids = _probe_ids(vocab_size)
    case = f"{len(ids)} rows of {PROBE_LENGTH} token ids, <bos> first"
    training = isinstance(classifier, torch.nn.Module) and classifier.training
    if training:
        classifier.eval()  # no dropout while it is probed
    try:
        output = call(classifier, ids, name="first_word_classifier", case=case)
    finally:
        if training:
            classifier.train()
    logits = expect_tensor(_logits(output), (len(ids), 2), name="first_word_classifier", case=case)
    base, first, later = logits.split(PROBE_ROWS)
    tolerance = 1e-5 * (1 + base.abs().max().item())
    if (later - base).abs().max().item() > tolerance:
        fail(
            "first_word_classifier's logits change when only the words after the first one change: your head reads a later position, or several (the last token, as the chapter's GPTClassifier reads it, sees them all; so does a mean over the positions). The exercise's head reads position 1, the first word right after <bos> (h[:, 1])."
        )
    if (first - base).abs().max().item() <= tolerance:
        fail(
            "first_word_classifier gives the same logits to inputs whose first word (position 1) differs: it does not read the first word. A head on position 0 reads <bos>, the same in every input; the exercise's head reads position 1, the first word right after <bos> (h[:, 1])."
        )


@cache
def _chapter_sentences() -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """((ids [200, T], labels [200]), (ids [1000, T], labels [1000])): the chapter's training and test
    sentences, "<bos> sentence <eos>" padded at the end, in the chapter's vocabulary (its cell that
    builds ``vocab`` from ``documents(3000, 8000, seed=0)``, rebuilt here: about a second)."""
    docs = [" ".join(story) for story in stories.generate_stories(3000, seed=0)]
    docs += stories.generate_sentences(8000, seed=0)
    random.Random(0).shuffle(docs)
    vocab = stories.word_vocab(docs)

    def encode(examples: list[tuple[str, int]]) -> tuple[Tensor, Tensor]:
        rows = [vocab.encode(s.split(), add_bos=True, add_eos=True) for s, _ in examples]
        T = max(map(len, rows))
        ids = torch.tensor([row + [vocab.pad_id] * (T - len(row)) for row in rows])  # [n, T]
        return ids, torch.tensor([label for _, label in examples])  # [n]

    return (
        encode(stories.classification_examples(200, seed=1)),
        encode(stories.classification_examples(1000, seed=2)),
    )


def _run_on(classifier: Any, ids: Tensor, sentences: str) -> Tensor:
    """``classifier``'s logits [n, 2] on ``ids`` [n, T] (in eval mode, without gradients)."""
    training = isinstance(classifier, torch.nn.Module) and classifier.training
    if training:
        classifier.eval()
    try:
        with torch.no_grad():
            output = call(classifier, ids, name="first_word_classifier", case=sentences)
    finally:
        if training:
            classifier.train()
    return expect_tensor(
        _logits(output), (len(ids), 2), name="first_word_classifier", case=sentences
    )


# A GPT fine-tuned from the pretrained one keeps its token embedding W_e (transformer.wte) near the
# pretrained W_e; one that started at random keeps a random W_e. The chapter's `gpt` (300 steps) is not
# shipped; lib.checkpoints' story GPT is, trained by the same recipe, seed and batches for 600 steps.
# Measured ||W_e - W_e(story GPT)|| / ||W_e(story GPT)||, the chapter's recipe and data, the same with
# ATEN_CPU_CAPABILITY=default: 0.22 for its `gpt` with a head on position 1 fine-tuned 150 steps (also
# after 1000 steps at lr 1e-2), 0.25 with the head on the last token; 0.97 to 1.02 for the same heads
# fine-tuned from random weights (a random W_e has norm 2.5, the pretrained 20, and fine-tuning moves
# only the rows of the tokens it reads). The bound lies between, with a wide margin on both sides.
PRETRAINED_DISTANCE = 0.6


@cache
def _pretrained_wte() -> Tensor:
    """The token embedding [253, 64] of the shipped pretrained story GPT (lib.checkpoints)."""
    from lib.checkpoints import load_story_gpt

    return load_story_gpt()[0].transformer.wte.weight.detach()


def _check_pretrained(classifier: Any) -> None:
    """Fail unless ``classifier`` holds a GPT whose token embedding lies within PRETRAINED_DISTANCE
    (relative) of the pretrained story GPT's: fine-tuned from the pretrained model. The embedding is
    found by its name, ``transformer.wte.weight`` (GPT-2's, which lib.gpt keeps), not by its class: the
    course's grader rebuilds a student's model from its weights, with plain modules for its classes."""
    parameters = (
        classifier.named_parameters(remove_duplicate=False)
        if isinstance(classifier, torch.nn.Module)
        else ()
    )
    wte = next((p for name, p in parameters if name.endswith("transformer.wte.weight")), None)
    if wte is None:
        fail(
            "the checker finds no GPT inside first_word_classifier (no token embedding transformer.wte, as lib.gpt's GPT names it): hand in the classifier model itself, a torch.nn.Module that holds the GPT it fine-tuned (as GPTClassifier holds `gpt`), not a function around it. The checker compares that GPT's weights with the pretrained model's."
        )
    wte, pretrained = wte.detach(), _pretrained_wte()
    distance = (
        ((wte - pretrained).norm() / pretrained.norm()).item()
        if wte.shape == pretrained.shape
        else math.inf
    )
    if not distance <= PRETRAINED_DISTANCE:
        how_far = (
            "its shape differs from the pretrained model's"
            if math.isinf(distance)
            else "it is farther from the pretrained model's than fine-tuning moves it, as a GPT from random weights is"
        )
        fail(
            f"first_word_classifier's GPT is not the pretrained one: the checker compared its token embedding (transformer.wte) with the pretrained model's, and {how_far}. Build your classifier on a copy of the pretrained `gpt`, as the chapter's fine-tuning does, then fine-tune and measure it again."
        )


def _measure_first_word(classifier: Any, typed: float) -> None:
    """Fail unless ``classifier`` was fine-tuned and its accuracy on the chapter's 1000 test sentences,
    measured here, is the one written (``typed``, within the rounding of its decimals).

    Fine-tuned: a ``head`` whose bias is still all 0 (GPTClassifier's initialization) never took an
    optimizer step; and the classifier's mean cross-entropy on the chapter's 200 training sentences is
    below ln 2 = 0.693, what a 50/50 answer scores. Fine-tuning drives it toward the entropy of the
    training labels, 0.686 (0.56 of label 0): the chapter's recipe ends at 0.686, other seeds at
    0.686 to 0.688 (logit gaps 0.13 to 0.30 in favour of label 0), inside the bound by more than
    float32 rounding (~1e-7); an untrained head on any GPT gives a logit gap ~N(0, 0.3^2), below the
    bound about half the time, which is why the bias is looked at too. Fine-tuned from random weights, the
    classifier learns the same label shares and scores the same: :func:`_check_pretrained` refuses it
    (review ch13_s22, point 1)."""
    (train_ids, train_y), (test_ids, test_y) = _chapter_sentences()
    vocab_size = getattr(
        getattr(getattr(classifier, "gpt", None), "config", None), "vocab_size", None
    )
    if isinstance(vocab_size, int) and vocab_size != TEST_VOCAB_SIZE:
        fail(
            f"first_word_classifier's GPT has a vocabulary of {vocab_size} tokens, the chapter's {TEST_VOCAB_SIZE}: the checker runs it on the chapter's test sentences, written in the chapter's vocabulary. Fine-tune a copy of the chapter's `gpt`."
        )
    _check_pretrained(classifier)
    bias = getattr(getattr(classifier, "head", None), "bias", None)
    if isinstance(bias, Tensor) and bias.numel() and not bias.detach().any():
        fail(
            "first_word_classifier's head has a bias of exactly 0, as GPTClassifier initializes it: your classifier was never fine-tuned (one optimizer step moves it). Fine-tune it as the chapter does (`fit`, 150 steps on the training sentences), then measure it."
        )
    train_logits = _run_on(classifier, train_ids, "the chapter's 200 training sentences")
    loss = torch.nn.functional.cross_entropy(train_logits, train_y).item()
    if not loss < math.log(2):
        fail(
            f"the checker ran first_word_classifier on the chapter's 200 training sentences: its mean cross-entropy there is {loss:.3f}, not below ln 2 = 0.693, what an answer of 50/50 for every sentence scores. A classifier fine-tuned on these sentences does better than that: fine-tune yours as the chapter does (`fit`, 150 steps), then measure it."
        )
    test_logits = _run_on(classifier, test_ids, "the chapter's 1000 test sentences")
    measured = (test_logits.argmax(-1) == test_y).double().mean().item()
    # the rounding of the decimals written, and float32's rounding of a share of 1000 (< 1e-7)
    tolerance = max(FIRST_WORD_TOLERANCE, 0.5 * 10.0 ** -_decimals(typed) + 1e-9)
    if abs(typed - measured) > tolerance:
        fail(
            f"the checker ran first_word_classifier on the chapter's 1000 test sentences: it scores {measured:.3f} there, and you wrote first_word_accuracy = {fmt(typed)}. Write the accuracy of the classifier you hand in, measured on the test sentences."
        )


def _last_token_accuracy(chapter_accuracy: Any) -> float | None:
    """The test accuracy of the chapter's classifier that reads the last token in the reader's own run:
    ``chapter_accuracy["pretrained"]`` of the chapter's ``accuracy`` (a number or a 0-d tensor in
    [0, 1]); None for anything else (no run's value, or a name the reader's cells bound anew)."""
    if not isinstance(chapter_accuracy, dict):
        return None
    value = chapter_accuracy.get(LAST_TOKEN_KEY)
    if isinstance(value, Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value <= 1 else None


def _fail_last_token(a: float, classifier: Any) -> NoReturn:
    """Fail for the chapter's last-token accuracy (the reader's run's), saying which head gives it
    (review ch13_s33, point 2): the classifier's probe fails as it would, unless it reads a later
    position."""
    said = f"first_word_accuracy = {fmt(a)} is the accuracy of the chapter's classifier that reads the last token"
    if classifier is not None:
        try:
            _check_first_word_classifier(classifier)
        except CheckFailed as failure:
            if "reads a later position" not in str(failure):
                raise
        else:
            fail(
                f"{said}, not your classifier's. Your first_word_classifier reads position 1: run it on the 1000 test sentences and write the accuracy it scores."
            )
    fail(
        f"{said}: your head still reads the last token, not what the experiment asks. The exercise's head reads position 1, the first word right after <bos> (h[:, 1])."
    )


def _check_first_word_accuracy(
    first_word_accuracy: Any, classifier: Any = None, chapter_accuracy: Any = None
) -> bool:
    """Fail unless ``first_word_accuracy`` is the measured accuracy of exercise 3 or the other constant
    answer's; True when it is the other label's (a run that settled on the minority label). An
    accuracy no head on position 1 scores is explained by ``classifier`` when one is given: it reads
    more than position 1, or the number is not its measurement (review ch13_s21, point 1); the
    accuracy of the chapter's last-token classifier in the reader's run (``chapter_accuracy``, the
    chapter's ``accuracy``: :func:`_last_token_accuracy`) is named as that."""
    a = expect_number(first_word_accuracy, "first_word_accuracy")
    if 1 < a <= 100:
        fail_as_percentage(a, "first_word_accuracy")
    if not 0 <= a <= 1:
        fail(f"first_word_accuracy = {fmt(a)} is not an accuracy: it lies between 0 and 1.")
    decimals = _decimals(a)
    # a value given to fewer decimals agrees when it is the measurement rounded to them
    tolerance = max(FIRST_WORD_TOLERANCE, 0.5 * 10.0**-decimals + 1e-9)
    measured = abs(a - FIRST_WORD_ACCURACY) <= tolerance
    other_label = abs(a - (1 - FIRST_WORD_ACCURACY)) <= tolerance
    last_token = _last_token_accuracy(chapter_accuracy)
    # before the bound for a head that sees the whole sentence: the last token's run may be above it
    if (
        last_token is not None
        and abs(a - last_token) <= tolerance
        and not (measured or other_label)
    ):
        _fail_last_token(a, classifier)
    if a >= LAST_COLUMN_ACCURACY:
        if classifier is not None:
            _check_first_word_classifier(classifier)  # fails if it reads more than position 1
            fail(
                f"first_word_accuracy = {fmt(a)}: your first_word_classifier reads position 1, as the exercise asks, but this number is not its measurement. Run the classifier you hand in on the 1000 test sentences and write the accuracy it scores."
            )
        fail(
            f"first_word_accuracy = {fmt(a)}: so few test sentences wrong is not what a head on position 1 measures. A head that reads more of the sentence can score that high: one on the last column of the padded rows (h[:, -1]), or a mean over the positions, sees the whole sentence under the causal mask. The exercise's head reads position 1, the first word right after <bos> (h[:, 1])."
        )
    if decimals < FIRST_WORD_MIN_DECIMALS:
        fail(
            f"first_word_accuracy = {fmt(a)} has {decimals} decimal{'s' * (decimals != 1)}: too few to tell one measurement from another on 1000 test sentences (0.5 is also what a guess would write). Write the accuracy your experiment prints, to at least {FIRST_WORD_MIN_DECIMALS} decimals (three are best: one sentence is 0.001)."
        )
    training_share = abs(a - TRAIN_MAJORITY) <= tolerance
    if training_share and not (measured or other_label):
        fail(
            f"first_word_accuracy = {fmt(a)} is the share of label 0 among the 200 training sentences, `(train_y == 0).float().mean()`. The exercise asks for the accuracy on the 1000 test sentences: measure it there."
        )
    if not (measured or other_label):
        fail(
            f"first_word_accuracy = {fmt(a)} is not what the experiment measures. Check that your head reads position 1 of the last hidden states (right after <bos>), that you fine-tune a copy of the pretrained `gpt` with the chapter's recipe and seeds, and that you measure on the 1000 test sentences."
        )
    return other_label and not measured


@checker("read the first token")
def check_first_word(
    first_word_prediction: Any,
    first_word_accuracy: Any,
    first_word_classifier: Any = None,
    accuracy: Any = None,
) -> str:
    """Check exercise 3, whose prediction and measurement are separate: ``first_word_prediction``, one of
    the letters "a", "b", "c" of the exercise (:data:`FIRST_WORD_CHOICES`; "c", chance level, is right),
    made before running anything; ``first_word_accuracy``, the test accuracy (a fraction) that the
    reader's experiment measured: within 0.0005 of the chapter's 0.478, or of 0.522, the score of the other
    constant answer (as a number; the classifier's measurement below decides); a value written to two
    decimals is accepted when it is one of them rounded (0.48, 0.52); and ``first_word_classifier``, the fine-tuned classifier (token ids [B, T] -> logits
    [B, 2], or its ``GPTClassifierOutput``; a torch.nn.Module that holds its GPT), probed on a batch (:func:`_probe_ids`): its logits must change
    when the first word (position 1) changes and stay when only the words after it change. Any constant
    answer scores 0.478 or 0.522, so the number alone cannot tell the experiment from a head on ``<bos>``
    (``h[:, 0]``) or from counting the test labels; the probe can (review ch13_s15, point 1). Nor can the
    probe tell a fine-tuned head from an untrained one: :func:`_measure_first_word` runs the classifier on
    the chapter's sentences, requires that it was fine-tuned from the pretrained GPT (its token
    embedding near the pretrained one's: :func:`_check_pretrained`, review ch13_s22, point 1) and that
    it scores what was written (review ch13_s20, point 1); a run that settled on label 1 (0.522) scores worse than 50/50 on its
    training sentences and is told to fine-tune.
    The prediction is compared only once a measurement and a classifier that agree are written, so
    that the letters cannot be tried in turn before running anything. The measurement is what passes:
    a wrong prediction beside it is recorded, not failed (predicting, then comparing, is the exercise);
    a pass, right prediction or wrong, says where to look for the explanation, not what it is;
    a value with fewer than two decimals (0.5, which cannot tell the measurement from chance) is asked for
    more, 0.95 or more (1.0, 0.993) is told which experiment gives it (a head on the padded last
    position, or a mean), or, beside a classifier that reads position 1, that it is not its measurement, and the share of label 0 among the training sentences (0.56) is told to measure on the test sentences.
    ``accuracy``, the chapter's dict of test accuracies from the reader's own run, gives the accuracy of
    its classifier that reads the last token (its "pretrained" entry): a first_word_accuracy equal to
    it is told which head scores it; training, and so that number, differs from one processor to
    another (0.928 on the Intel processor the text was computed on, 0.956 on an AMD one)."""
    if first_word_prediction is None and first_word_accuracy is None:
        not_attempted(
            'write your prediction (first_word_prediction: "a", "b" or "c"), run your experiment, and write the accuracy it measured (first_word_accuracy, a fraction of 1) and your fine-tuned classifier (first_word_classifier) in the cell above; then run this cell again.'
        )
    # the prediction is judged only beside a measurement: otherwise the letters could be tried in turn
    if first_word_accuracy is None:
        not_attempted(
            "now run the experiment and write the accuracy it measures (first_word_accuracy): your prediction is checked together with it."
        )
    _check_first_word_accuracy(first_word_accuracy, first_word_classifier, accuracy)
    if first_word_classifier is None:
        not_attempted(
            "now write your fine-tuned classifier too (first_word_classifier): the checker runs it on a few inputs to see which position it reads."
        )
    _check_first_word_classifier(first_word_classifier)
    _measure_first_word(first_word_classifier, float(first_word_accuracy))
    if first_word_prediction is None:
        not_attempted(
            'your first_word_accuracy is the measurement; now write the prediction you made before running (first_word_prediction: "a", "b" or "c").'
        )
    choice = _first_word_choice(first_word_prediction)
    settled = f"chance level, {FIRST_WORD_ACCURACY:.1%} (your run settled on label 0, the majority label of its training sentences)"
    if choice != FIRST_WORD_RIGHT_CHOICE:
        # a predict-then-check exercise: an honest wrong prediction beside a right measurement passes
        return f"your measurement is right: {settled}. {_wrong_prediction_note(choice)}"
    return f"right: {settled}. {EXPLAIN}"
