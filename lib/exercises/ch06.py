"""Checkers for the exercises of the chapter *Self-attention*.

- :func:`check_second_layer`: exercise 1 (design, then check): projections of a second layer with which
  "it" finds its referent.
- :func:`check_wider_entries`: exercise 2 (predict, then check): queries and keys with entries of
  standard deviation 2.
- :func:`check_incremental`: exercise 3 (implement): causal self-attention computed one token at a time.

The first checker runs the chapter's hand-made model (:func:`hand_made_model`, a copy of the chapter's
embedding table and projections; the chapter's solution asserts that the two are the same).
"""

from __future__ import annotations

import dis
import functools
import inspect
import math
import numbers
import types
from typing import Any, Callable, NoReturn

import torch
from torch import Tensor

import lib.attention
from lib.attention import causal_mask, masked_softmax

from . import (
    attempted,
    call,
    checker,
    expect_number,
    expect_tensor,
    fail,
    fmt,
    largest_difference,
    names_used,
    not_attempted,
    replaced,
)

__all__ = ["check_second_layer", "check_wider_entries", "check_incremental"]


# --- the chapter's hand-made model -----------------------------------------------------------------------

FEATURES = [
    "thing",
    "animate",
    "place",
    "water",
    "town",
    "money",
    "pronoun",
    "adjective",
    "event",
    "function",
]
MEANING = ["animate", "place", "water", "town", "money"]
CHANNELS = [
    ("referent", ["pronoun"], ["thing"]),
    ("description", ["pronoun"], ["adjective"]),
    ("setting", ["place"], ["water", "town"]),
    ("participant", ["event"], ["animate"]),
    ("role", ["animate"], ["event"]),
]


def _vec(**features: float) -> Tensor:
    x = torch.zeros(len(FEATURES))
    for name, value in features.items():
        x[FEATURES.index(name)] = value
    return x


def hand_made_model() -> tuple[dict[str, Tensor], Tensor, Tensor, Tensor]:
    """(embedding {word: [10]}, W_Q [10, 5], W_K [10, 5], W_V [10, 10]): the chapter's model, rebuilt."""
    money_bank, river_bank = (
        _vec(thing=1, place=1, town=1, money=1),
        _vec(thing=1, place=1, water=1),
    )
    embedding = {
        "animal": _vec(thing=1, animate=1),
        "FBI": _vec(thing=1, animate=1),
        "criminal": _vec(thing=1, animate=1),
        "street": _vec(thing=1, place=1, town=1),
        "road": _vec(thing=1, place=1, town=1),
        "river": _vec(thing=1, place=1, water=1),
        "side": _vec(thing=1),
        "bank": (money_bank + river_bank) / 2,
        "it": _vec(pronoun=1),
        "tired": _vec(adjective=1, animate=1),
        "wide": _vec(adjective=1, place=1),
        "cross": _vec(event=1),
        "chasing": _vec(event=1),
        "run": _vec(event=1),
    }
    for word in "The the a that is on other of didn't because was too".split():
        embedding[word] = _vec(function=1)
    W_Q, W_K = torch.zeros(len(FEATURES), len(CHANNELS)), torch.zeros(len(FEATURES), len(CHANNELS))
    for c, (_, asks, answers) in enumerate(CHANNELS):
        for f in asks:
            W_Q[FEATURES.index(f), c] = 4.0
        for f in answers:
            W_K[FEATURES.index(f), c] = 1.0
    W_V = torch.diag(torch.tensor([float(f in MEANING) for f in FEATURES]))
    return embedding, W_Q, W_K, W_V


def _first_layer(sentence: str) -> tuple[list[str], Tensor]:
    """(tokens, H = X + Z [T, 10]): the input plus the output of the chapter's first layer."""
    embedding, W_Q, W_K, W_V = hand_made_model()
    tokens = sentence.split()
    X = torch.stack([embedding[t] for t in tokens]).double()  # [T, 10]
    # [T, T]
    A = masked_softmax((X @ W_Q.double()) @ (X @ W_K.double()).T / math.sqrt(W_Q.shape[1]))
    return tokens, X + A @ (X @ W_V.double())  # [T, 10]


# --- exercise 1: a second layer finds the referent -------------------------------------------------------

SENTENCE = "The {noun} didn't cross the {place} because it was too {adjective}"
# the chapter's first, then hidden
PAIRS = [("animal", "street"), ("criminal", "river"), ("FBI", "road")]


def _matrix(value: Any, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        kind = (
            "a NumPy array"
            if type(value).__name__ == "ndarray"
            else f"{type(value).__name__} {fmt(value)}"
        )
        fail(
            f"`{name}` should be a torch.Tensor of shape [10, 2] (features x channels), got {kind}."
        )
    if tuple(value.shape) == (2, 10):
        fail(
            f"`{name}` has shape [2, 10]: transposed. Rows are the 10 features of H, columns the 2 channels, so that H @ W has shape [T, 2]."
        )
    if tuple(value.shape) != (10, 2):
        fail(
            f"`{name}` should have shape [10, 2] (10 features, 2 channels), got {list(value.shape)}."
        )
    if not value.is_floating_point() or not torch.isfinite(value).all():
        fail(
            f"`{name}` should hold finite floating-point numbers (e.g. torch.zeros(10, 2), then set entries)."
        )
    return value.detach().double()


def _weights_of_it(W_Q2: Tensor, W_K2: Tensor, sentence: str) -> tuple[list[str], Tensor]:
    tokens, H = _first_layer(sentence)
    scores = (H @ W_Q2) @ (H @ W_K2).T / math.sqrt(W_Q2.shape[1])  # [T, T]
    return tokens, masked_softmax(scores)[tokens.index("it")]  # [T]


def _same_ratio_cause(W_Q2: Tensor, W_K2: Tensor, noun: str, place: str) -> str:
    """Why the ratio of the weights on ``noun`` and ``place`` is the same in both sentences.

    The ratio is exp((k_noun - k_place) . q_it / sqrt 2): it changes between the sentences only if the
    query of 'it' changes (W_Q2 reads what Z added) and the keys of the two words differ along that
    change (W_K2 tells the noun from the place)."""
    q, k = {}, {}
    for adjective in ("tired", "wide"):
        tokens, H = _first_layer(SENTENCE.format(noun=noun, place=place, adjective=adjective))
        q[adjective] = H[tokens.index("it")] @ W_Q2
        k[adjective] = H[tokens.index(noun)] @ W_K2 - H[tokens.index(place)] @ W_K2
    ratio = f"the ratio {noun} : {place} is the same in both"
    if torch.allclose(q["tired"], q["wide"], atol=1e-9):
        return f"{ratio}. Your query W_Q2 reads only what 'it' is in X (the same in both sentences, as in the first layer), so 'it' asks the same question after 'tired' and after 'wide'. A query that reads only X cannot tell the two sentences apart: what differs between them in H is what the first layer's output Z added."
    if torch.allclose(k["tired"], torch.zeros_like(k["tired"]), atol=1e-9):
        return f"{ratio}. Your query does change between the sentences (it reads what Z added to 'it'), but your keys of '{noun}' and '{place}' are equal: W_K2 reads only features that both have (such as 'thing'), so no query can prefer one of them."
    return f"{ratio}. Your query changes between the sentences and your keys of '{noun}' and '{place}' differ, but not along the same channel: the query's change meets no difference of the keys."


@checker("second layer")
def check_second_layer(W_Q2: Any, W_K2: Any) -> str:
    """Check exercise 1: with H = X + Z (the chapter's first layer), the second layer's weights
    softmax(H W_Q2 (H W_K2)^T / sqrt 2) of the query "it" prefer the animate noun in the sentence that ends
    in "tired" and the place in the one that ends in "wide"; for the chapter's sentences and two hidden
    cases with other nouns (named "practice cases" in the reader's kernel: ``case_wording``)."""
    if W_Q2 is None and W_K2 is None:
        not_attempted("set W_Q2 and W_K2 in the cell above, then run this cell again.")
    if W_Q2 is None or W_K2 is None:
        not_attempted(f"now set {'W_Q2' if W_Q2 is None else 'W_K2'} as well.")
    W_Q2, W_K2 = _matrix(W_Q2, "W_Q2"), _matrix(W_K2, "W_K2")
    if not W_Q2.any() or not W_K2.any():
        fail(
            f"{'W_Q2' if not W_Q2.any() else 'W_K2'} is all zeros, so every score is 0 and the weights are uniform. Put non-zero entries in the rows of the features a channel should read."
        )
    ratios = {}
    for noun, place in PAIRS:
        weights = {}
        for adjective in ("tired", "wide"):
            sentence = SENTENCE.format(noun=noun, place=place, adjective=adjective)
            tokens, w = _weights_of_it(W_Q2, W_K2, sentence)
            weights[adjective] = (w[tokens.index(noun)].item(), w[tokens.index(place)].item())
        ratios[noun] = {a: n / p for a, (n, p) in weights.items()}
        (n_tired, p_tired), (n_wide, p_wide) = weights["tired"], weights["wide"]
        said = f"'it' puts {n_tired:.3f} on '{noun}' and {p_tired:.3f} on '{place}' when the sentence ends in 'tired', {n_wide:.3f} and {p_wide:.3f} when it ends in 'wide'"
        which = (
            "the chapter's sentences"
            if noun == PAIRS[0][0]
            else f"the hidden case with '{noun}' and '{place}'"
        )
        if abs(math.log(ratios[noun]["tired"] / ratios[noun]["wide"])) < 1e-6:
            fail(f"in {which}, {said}: {_same_ratio_cause(W_Q2, W_K2, noun, place)}")
        if n_tired < p_tired and n_wide > p_wide:
            fail(
                f"in {which}, {said}: the preferences are swapped: in your channels, what 'tired' adds to the query of 'it' favours the key of '{place}', and what 'wide' adds favours the key of '{noun}'."
            )
        if n_tired <= n_wide and p_tired >= p_wide:
            fail(
                f"in {which}, {said}: 'tired' should move weight to '{noun}' and 'wide' to '{place}', not the other way round."
            )
        if not (n_tired > p_tired and p_wide > n_wide):
            wrong = (
                f"'tired' ({noun} should win)"
                if n_tired <= p_tired
                else f"'wide' ({place} should win)"
            )
            winner, adjective = (noun, "tired") if n_tired <= p_tired else (place, "wide")
            hint = f" Nothing in your channels turns what '{adjective}' hands over to 'it' (its value, now in the row of 'it' in H) into a higher score for '{winner}': which features does that value add to H, and does one of your channels read them on the query side and find them in the key of '{winner}'?"
            if noun != PAIRS[0][0]:
                hint = f" Your design works for 'animal' and 'street' but not here: it relies on a feature that 'animal' or 'street' has and '{noun}' or '{place}' lacks."
            fail(
                f"in {which}, {said}: the sentence ending in {wrong} gets it wrong. The ratio does change between the sentences, but not enough to change the preference.{hint}"
            )
    chapter = ratios[PAIRS[0][0]]
    passed = f"in the chapter's sentences the ratio of the weights on 'animal' and 'street' is {_ratio(chapter['tired'])} (tired) and {_ratio(chapter['wide'])} (wide), and the two hidden cases with other nouns (criminal / river, FBI / road) come out right too."
    return passed + _adjective_tie(W_Q2, W_K2)


def _adjective_tie(W_Q2: Tensor, W_K2: Tensor) -> str:
    """A note for a passing design in which 'tired' gets as much weight as 'animal' or more: the layer
    prefers 'animal' to 'street' without making it the word that 'it' attends to most."""
    tokens, w = _weights_of_it(
        W_Q2, W_K2, SENTENCE.format(noun="animal", place="street", adjective="tired")
    )
    animal, tired = w[tokens.index("animal")].item(), w[tokens.index("tired")].item()
    if tired < animal - 1e-9:
        return ""
    return f" One step further: 'it' gives 'tired' {tired:.3f} and 'animal' {animal:.3f}, so your layer prefers 'animal' to 'street' but does not single out the referent. Your keys cannot tell the adjective from the noun; a key can also subtract a feature that the adjective has and the noun lacks."


def _ratio(r: float) -> str:
    """A ratio of two weights: 1.57, or 7.47e+04 and 1.34e-05 when two decimals would not show it."""
    return f"{r:.2f}" if 0.01 <= r < 1000 else f"{r:.2e}"


# --- exercise 2: entries of standard deviation 2 ------------------------------------------------------------

_CURVES = {"orange": "orange", "unscaled": "orange", "blue": "blue", "scaled": "blue"}


def _curves_named(looks_like: Any) -> set[str]:
    """The colours a string names ("orange", "the orange curves", "unscaled" -> {"orange"})."""
    if not isinstance(looks_like, str):
        return set()
    words = looks_like.lower().replace("(", " ").replace(")", " ").replace(",", " ").split()
    return {_CURVES[w] for w in words if w in _CURVES}


@checker("wider entries")
def check_wider_entries(score_variance: Any, looks_like: Any) -> str:
    """Check the predictions of exercise 2 for queries and keys whose entries have standard deviation 2:
    ``score_variance``, the variance of q . k / sqrt(d_k), and ``looks_like``, "blue" or "orange": which
    curves of the chapter's measurement the softmax at d_k = 64 resembles."""
    if score_variance is None and looks_like is None:
        not_attempted(
            "write your two predictions (score_variance and looks_like) in the cell above, then run this cell again."
        )
    if score_variance is not None:
        v = expect_number(score_variance, "score_variance")
        if abs(v - 16) > 0.5:
            known = {
                1: "1 is the variance for entries of variance 1; the division by sqrt(d_k) corrects for the width d_k, not for the size of the entries.",
                2: "2 is the standard deviation of one entry, not a variance.",
                4: "4 is the variance of one entry of q or of k, but a score is built from products q_i k_i: start from the variance of one such product.",
                8: "8 = 4 + 4 adds the variances of q_i and k_i, but a product of two independent zero-mean numbers does not have the sum of their variances.",
                64: "64 is d_k, the width. The division by sqrt(d_k) is there to take the width out of the variance, so d_k cannot be left in the answer.",
                1024: "1024 looks like the variance of q . k before the division: score_variance asks for the scaled score q . k / sqrt(d_k).",
            }
            for value, reason in known.items():
                if abs(v - value) <= 0.5:
                    fail(f"score_variance = {fmt(v)}: {reason}")
            fail(
                f"score_variance = {fmt(v)} is not it. Work it out in three steps: the variance of one product q_i k_i of two independent zero-mean entries, then of the sum of d_k such products, then of that sum divided by sqrt(d_k)."
            )
    if looks_like is not None:
        curves = _curves_named(looks_like)
        if len(curves) != 1:
            fail(
                f'looks_like should be "blue" or "orange" (the colours of the chapter\'s figure), got {fmt(looks_like)}'
                + (", which names both." if len(curves) > 1 else ".")
            )
        if curves == {"blue"}:
            fail(
                "looks_like: the blue curves have scores of variance 1 at every width, and entries of standard deviation 2 do not give variance 1. Look for the curves whose scores, at some width, have the variance you predicted in score_variance."
            )
    if score_variance is None:
        not_attempted(
            "your looks_like is right; now predict the variance of the scaled scores (score_variance)."
        )
    if looks_like is None:
        not_attempted(
            "your score_variance is right; now say which curves the softmax resembles (looks_like)."
        )
    return "both predictions are right: variance 4 * 4 = 16 per product, 16 d_k for the sum, 16 after the division; so the softmax at d_k = 64 behaves like the unscaled (orange) one at d_k = 16."


# --- exercise 3: one token at a time ---------------------------------------------------------------------


# The seed of each exercise's cases: practice values here; a course's grader sets its own (grading/,
# lib/exercises/__init__.py says how).
SEEDS = {"incremental": 16}


def _incremental_cases() -> list[tuple[str, Tensor, Tensor, Tensor, Tensor]]:
    """(description, X [T, d], W_Q [d, d_k], W_K [d, d_k], W_V [d, d_v]) of the cases."""
    g = torch.Generator().manual_seed(SEEDS["incremental"])
    cases = []
    # the first case's widths differ from each other and from the chapter's (d_model = 10,
    # d_k = 5), so that a scale read from a global, sqrt(d_v) or sqrt(d_model) are told apart
    for T, d, d_k, d_v in [(6, 8, 4, 3), (1, 3, 2, 2), (12, 10, 16, 7)]:
        cases.append(
            (
                f"T = {T}, d_model = {d}, d_k = {d_k}, d_v = {d_v}",
                torch.randn(T, d, generator=g),
                torch.randn(d, d_k, generator=g) / math.sqrt(d),
                torch.randn(d, d_k, generator=g) / math.sqrt(d),
                torch.randn(d, d_v, generator=g),
            )
        )
    return cases


def _attention(
    X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, mask: Tensor | None, scale: float
) -> Tensor:
    X, W_Q, W_K, W_V = (t.double() for t in (X, W_Q, W_K, W_V))
    return masked_softmax((X @ W_Q) @ (X @ W_K).T / scale, mask) @ (X @ W_V)  # [T, d_v]


def _first_query(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor) -> Tensor:
    """Row t: the output of query 0 over the prefix 0..t (the first row of each step kept)."""
    rows = [
        _attention(X[: t + 1], W_Q, W_K, W_V, None, math.sqrt(W_Q.shape[1]))[0]
        for t in range(len(X))
    ]
    return torch.stack(rows)


def _column_softmax(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor) -> Tensor:
    """Row t: the last row of each step's output with the softmax over the queries (dim 0)."""
    X, W_Q, W_K, W_V = (t.double() for t in (X, W_Q, W_K, W_V))
    rows = []
    for t in range(len(X)):
        P = X[: t + 1]  # [t + 1, d]
        S = (P @ W_Q) @ (P @ W_K).T / math.sqrt(W_Q.shape[1])  # [t + 1, t + 1]
        rows.append((torch.softmax(S, dim=0) @ (P @ W_V))[-1])
    return torch.stack(rows)


CHAPTER_D_K = len(CHANNELS)  # 5: the width of the chapter's queries and keys


def _globals_read(func: Any) -> dict[str, tuple[Any, str]]:
    """The numbers and tensors of the reader's notebook that ``func`` reads as globals, directly or
    through a function of the same notebook it calls (such as the chapter's ``self_attention``):
    {name: (value, via)}, ``via`` the name of that function, or "" when ``func`` reads it itself."""
    space = getattr(func, "__globals__", None)
    if space is None:
        return {}
    found: dict[str, tuple[Any, str]] = {}
    seen = {id(func)}
    todo = [(getattr(func, "__code__", None), "")]
    while todo:
        code, via = todo.pop()
        if code is None:
            continue
        todo.extend((c, via) for c in code.co_consts if isinstance(c, types.CodeType))
        for instruction in dis.get_instructions(code):
            if instruction.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                continue
            name = instruction.argval
            if name not in space:
                continue
            value = space[name]
            if isinstance(value, types.FunctionType) and value.__globals__ is space:
                if id(value) not in seen:  # a helper of the same notebook: what it reads counts
                    seen.add(id(value))
                    todo.append((value.__code__, via or name))
            elif isinstance(value, Tensor) or (
                isinstance(value, numbers.Real) and not isinstance(value, bool)
            ):
                found.setdefault(name, (value, via))
    return found


def _tensors_read(read: dict[str, tuple[Any, str]]) -> str:
    """ "`W_Q` [10, 5] and `W_K` [10, 5] (through `self_attention`, which reads them)": the notebook's
    tensors in ``read``, grouped by the function they are read through; "" if none."""
    groups: dict[str, list[str]] = {}
    for name, (value, via) in read.items():
        if isinstance(value, Tensor):
            groups.setdefault(via, []).append(f"`{name}` {list(value.shape)}")
    parts = []
    for via, names in groups.items():
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        pronoun = "them" if len(names) > 1 else "it"
        parts.append(f"{listed} (through `{via}`, which reads {pronoun})" if via else listed)
    return "; ".join(parts)


def _shape_hint(read: dict[str, tuple[Any, str]], d: int, d_k: int, d_v: int) -> str:
    """Advice after a shape error: the widths of the hidden case, and the notebook's matrices the
    function reads instead of its arguments, if any."""
    widths = f"this case has d_model = {d}, d_k = {d_k}, d_v = {d_v}, not the chapter's widths"
    tensors = _tensors_read(read)
    if tensors:
        return f"The shapes do not fit because your function uses the notebook's own {tensors} instead of the matrices passed in: {widths}. Compute with the arguments X, W_Q, W_K, W_V only."
    return f"The shapes do not fit ({widths}): check the inner dimensions of each product."


SHAPE_ERRORS = (
    "shapes cannot be multiplied",
    "size mismatch",
    "must match the size",
    "inconsistent tensor size",
)

PREFIX_HINT = "At step t the prefix is X[: t + 1], the first t + 1 rows: X[:t] is empty at t = 0."

# names whose use builds or applies a mask: the exercise computes causal attention without one.
# Not torch's keywords `is_causal` and `attn_mask`: `is_causal=False` or `attn_mask=None` builds no
# mask, and a real one (`is_causal=True`) is caught by its behaviour in _check_prefix_only.
MASK_NAMES = {
    "causal_mask",
    "tril",
    "triu",
    "tril_",
    "triu_",
    "masked_fill",
    "masked_fill_",
}
NO_MASK = "the exercise computes causal attention with no mask: at step t, attend with the newest token's query over the prefix X[: t + 1] alone, where there is no future to hide."


class _MaskUsed(BaseException):  # not an Exception: `call` reports those as the reader's errors
    """Raised inside the reader's function when it passes a mask to the library's attention."""


def _mask_used(*args: Any, **kwargs: Any) -> None:
    raise _MaskUsed


# What the course's grader (tools/grade_course.py) enforces in its sandbox, where the reader's function
# runs in another process: {checker: [(library function, argument or None for any call, raiser)]}.
# The library's ways to attend with a mask (public and private): the sandbox and the notebook's
# checker both refuse a mask passed to any of them.
MASKING_FUNCTIONS = (
    "masked_softmax",
    "scaled_dot_product_attention",
    "attend",
    "_attend",
    "_masked_softmax",
    "_scaled_dot_product_attention",
    "attention_heads",
)
REFUSALS = {
    "check_incremental": [
        *((f"lib.attention.{name}", "mask", _mask_used) for name in MASKING_FUNCTIONS),
        # and the library's causal mask itself, under any name
        ("lib.attention.causal_mask", None, _mask_used),
    ]
}


def _names_resolved(func: Any) -> set[str]:
    """``names_used(func)`` and, for each of them bound in the function's globals, the name of what it
    is bound to: ``from lib.attention import causal_mask as _cm`` is seen as ``causal_mask``."""
    names = names_used(func)
    space = getattr(func, "__globals__", None)
    if isinstance(space, dict):
        for name in list(names):
            resolved = getattr(space.get(name), "__name__", None)
            if isinstance(resolved, str):
                names.add(resolved)
    return names


def _refusing_masks(func: Callable) -> Callable:
    """``func`` (the library's masked_softmax or scaled_dot_product_attention) that raises _MaskUsed
    when it is given a mask."""

    @functools.wraps(func)
    def guarded(*args, **kwargs):
        bound = inspect.signature(func).bind(*args, **kwargs)
        if bound.arguments.get("mask") is not None:
            raise _MaskUsed
        return func(*args, **kwargs)

    return guarded


def _no_masks(reader_function: Any):
    """While inside, the library's attention functions (masked_softmax, scaled_dot_product_attention,
    attend, attention_heads and their private twins) refuse a mask, both as attributes of
    lib.attention and as names in the reader's notebook (or module)."""
    originals = [getattr(lib.attention, name) for name in MASKING_FUNCTIONS]
    return replaced({f: _refusing_masks(f) for f in originals}, lib.attention, reader_function)


def _run_incremental(
    incremental_outputs: Any,
    case: str,
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    read: dict,
) -> Tensor:
    """The reader's Z [T, d_v] on one case, computed with the library's attention refusing a mask;
    a mask, a wrong shape or a row of NaN is reported."""
    T, d_k, d_v = len(X), W_Q.shape[1], W_V.shape[1]
    hints = dict.fromkeys(("IndexError", "size 0", "empty"), PREFIX_HINT)
    hints.update(dict.fromkeys(SHAPE_ERRORS, _shape_hint(read, X.shape[1], d_k, d_v)))
    try:
        with _no_masks(incremental_outputs):
            result = call(
                incremental_outputs,
                X,
                W_Q,
                W_K,
                W_V,
                name="incremental_outputs",
                case=f"'{case}'",
                hints=hints,
            )
    except _MaskUsed:
        fail(
            f"on the case '{case}', your `incremental_outputs` passes a mask to the library's attention: {NO_MASK}"
        )
    result = expect_tensor(
        result, (T, d_v), name="incremental_outputs", case=f"'{case}'", allow_nan=True
    )
    if not torch.isfinite(result).all():
        row = int((~torch.isfinite(result)).any(-1).nonzero()[0])
        fail(
            f"on the case '{case}', row {row} of your result is NaN or inf. "
            + (
                "Row 0 comes from the prefix X[:1], the first token alone: did you use X[:t] (empty at t = 0)?"
                if row == 0
                else "Check the softmax of that step."
            )
        )
    return result


def _check_scale(
    case: str, result: Tensor, X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, read: dict
) -> None:
    """Fail if the scores were divided by something else than sqrt(d_k): a notebook global, or the
    usual wrong widths."""
    T, d_k, d_v = len(X), W_Q.shape[1], W_V.shape[1]
    for name, (g, via) in read.items():
        if isinstance(g, Tensor) or g <= 0:
            continue
        through = f" (read through `{via}`)" if via else ""
        for scale, how in [(math.sqrt(g), f"sqrt({name})"), (float(g), name)]:
            if abs(scale - math.sqrt(d_k)) > 1e-9 and torch.allclose(
                result, _attention(X, W_Q, W_K, W_V, causal_mask(T), scale), atol=1e-5
            ):
                fail(
                    f"on the case '{case}', you divided the scores by {how} with the notebook's global `{name}` = {fmt(g)}{through}, not by the square root of the width of the W_Q passed in (d_k = {d_k} here). A function takes its sizes from its arguments: the hidden cases have other widths than the chapter's."
                )
    for scale, what in [
        (1.0, "you did not divide the scores by sqrt(d_k)"),
        (d_k, "you divided the scores by d_k instead of sqrt(d_k)"),
        (math.sqrt(X.shape[1]), "you divided by sqrt(d_model) instead of sqrt(d_k)"),
        (math.sqrt(d_v), "you divided by sqrt(d_v) instead of sqrt(d_k)"),
        (
            math.sqrt(CHAPTER_D_K),
            f"you divided by sqrt({CHAPTER_D_K}), the chapter's d_k, instead of the square root of the width of the W_Q passed in",
        ),
    ]:
        if abs(scale - math.sqrt(d_k)) > 1e-9 and torch.allclose(
            result, _attention(X, W_Q, W_K, W_V, causal_mask(T), scale), atol=1e-5
        ):
            fail(f"on the case '{case}', {what} (d_k = {d_k}).")


def _name_incremental_mistake(
    case: str,
    result: Tensor,
    expected: Tensor,
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    read: dict,
) -> NoReturn:
    """Fail with the mistake behind a wrong Z: the usual ones first, one after the other, else its
    largest difference."""
    T, d_k = len(X), W_Q.shape[1]
    strict = torch.ones(T, T).tril(-1).bool()  # j < t: every earlier token, not token t itself
    strict[0, 0] = True  # row 0 has nothing before it; compared from row 1 on
    if T > 1 and torch.allclose(
        result, _attention(X, W_Q, W_K, W_V, None, math.sqrt(d_k)), atol=1e-5
    ):
        fail(
            f"on the case '{case}', your row t depends on the rows after t: it equals self-attention over the whole sequence. At step t use only the first t + 1 rows, X[: t + 1]."
        )
    if T > 1 and torch.allclose(
        result[1:], _attention(X, W_Q, W_K, W_V, strict, math.sqrt(d_k))[1:], atol=1e-5
    ):
        fail(
            f"on the case '{case}', your row t attends to the tokens before t but not to token t itself: step t's keys and values come from X[:t]. The prefix is X[: t + 1], which includes the newest token: a causal mask hides the future (j > t), not the diagonal."
        )
    if T > 1 and torch.allclose(result[1:], expected[:-1], atol=1e-5):
        fail(
            f"on the case '{case}', your row t is the output of token t - 1 (your row 1 is the expected row 0, and so on): each step's prefix ends one token early, as X[:t] does. Step t's prefix must end with token t itself."
        )
    if T > 1 and torch.allclose(result[:-1], expected[1:], atol=1e-5):
        fail(
            f"on the case '{case}', your row t is the output of token t + 1 (your row 0 is the expected row 1, and so on): each step's prefix ends one token late. Step t's prefix must end with token t itself."
        )
    if T > 1 and torch.allclose(result, _first_query(X, W_Q, W_K, W_V), atol=1e-5):
        fail(
            f"on the case '{case}', you kept the first row of each step's output (the query of token 0). Keep the last row, [-1]: the output of the newest token t."
        )
    _check_scale(case, result, X, W_Q, W_K, W_V, read)
    if T > 1 and torch.allclose(result, _column_softmax(X, W_Q, W_K, W_V), atol=1e-5):
        fail(
            f"on the case '{case}', your softmax runs down the columns of each step's [t + 1, t + 1] score matrix, over the queries, so the weights of the newest query do not sum to 1 over the keys. Do the weights of each step sum to 1 over the keys of the prefix?"
        )
    V = X.double() @ W_V.double()
    if torch.allclose(result, V.cumsum(0), atol=1e-4):
        fail(
            f"on the case '{case}', row t of your result is the plain sum of the values 0..t: every weight is 1. Take the softmax over the keys (the last dimension of a [1, t + 1] score row)."
        )
    if _tensors_read(read):
        fail(
            f"on the case '{case}', {largest_difference(result, expected)}. Your function reads the notebook's own {_tensors_read(read)}: compute with the arguments X, W_Q, W_K, W_V only."
        )
    fail(f"on the case '{case}', {largest_difference(result, expected)}.")


def _check_prefix_only(
    incremental_outputs: Any, case: str, X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor
) -> None:
    """Fail unless rows 0..t of Z are computed from X[: t + 1] alone: with X's rows after t set to
    NaN, rows 0..t must stay finite and unchanged. A mask, however it is built (the library's,
    ``torch.where`` and -inf, a 0/1 product, torch's own ``is_causal``), hides the future from the
    weights but still computes with it: 0 x NaN is NaN, so its rows before t turn NaN."""
    T = len(X)
    if T < 3:
        return
    t = T // 2
    X_nan = X.clone()
    X_nan[t + 1 :] = float("nan")
    with _no_masks(incremental_outputs):
        result = call(
            incremental_outputs, X_nan, W_Q, W_K, W_V, name="incremental_outputs", case=f"'{case}'"
        )
    result = expect_tensor(
        result, (T, W_V.shape[1]), name="incremental_outputs", case=f"'{case}'", allow_nan=True
    )
    expected = _attention(X, W_Q, W_K, W_V, causal_mask(T), math.sqrt(W_Q.shape[1]))
    if not torch.allclose(result[: t + 1], expected[: t + 1], atol=1e-5):
        fail(
            f"on the case '{case}', with the rows of X after row {t} set to NaN, rows 0 to {t} of your result changed (NaN or other numbers): your function computes with the future tokens and then hides them, as a mask does: {NO_MASK}"
        )


@checker("incremental_outputs")
def check_incremental(incremental_outputs: Any) -> str:
    """Check ``incremental_outputs(X, W_Q, W_K, W_V) -> Z [T, d_v]``: row t is the output of token t computed
    from the first t + 1 rows of X only, so Z equals causal self-attention softmax(QK^T / sqrt(d_k), causal) V."""
    attempted(incremental_outputs, "incremental_outputs")
    masking = sorted(_names_resolved(incremental_outputs) & MASK_NAMES)
    if masking:
        fail(
            f"your `incremental_outputs` uses `{'`, `'.join(masking)}`, which builds or applies a mask: {NO_MASK}"
        )
    cases = _incremental_cases()
    read = _globals_read(incremental_outputs)
    for case, X, W_Q, W_K, W_V in cases:
        result = _run_incremental(incremental_outputs, case, X, W_Q, W_K, W_V, read)
        expected = _attention(X, W_Q, W_K, W_V, causal_mask(len(X)), math.sqrt(W_Q.shape[1]))
        if not torch.allclose(result, expected, atol=1e-5):
            _name_incremental_mistake(case, result, expected, X, W_Q, W_K, W_V, read)
    for case, X, W_Q, W_K, W_V in cases:
        _check_prefix_only(incremental_outputs, case, X, W_Q, W_K, W_V)
    return f"`incremental_outputs` equals causal self-attention on all {len(cases)} hidden cases ({'; '.join(c for c, *_ in cases)})."
