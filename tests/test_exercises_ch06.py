"""The messages of the chapter *Self-attention*'s checkers added after a reader's report (more of
its checkers' cases are in tests/test_exercises.py)."""

from __future__ import annotations

import math
import re

import pytest
import torch

from lib.exercises import ExerciseFailed, ch06


def _channels(query: dict, key: dict, strength: float = 4.0) -> tuple[torch.Tensor, torch.Tensor]:
    """W_Q2, W_K2 [10, 2] with entries {feature: channel} (query `strength`, key 1)."""
    W_Q2, W_K2 = torch.zeros(10, 2), torch.zeros(10, 2)
    for feature, channel in query.items():
        W_Q2[ch06.FEATURES.index(feature), channel] = strength
    for feature, channel in key.items():
        W_K2[ch06.FEATURES.index(feature), channel] = 1.0
    return W_Q2, W_K2


def test_one_channel_that_cannot_flip_the_preference_is_told_where_to_look():
    """The animate channel alone moves the ratio but never makes 'street' win after 'wide': the
    message says which sentence fails and what to look at, without naming the features."""
    with pytest.raises(ExerciseFailed) as failed:
        ch06.check_second_layer(*_channels({"animate": 0}, {"animate": 0}))
    message = str(failed.value)
    assert "not enough to change the preference" in message
    assert "what 'wide' hands over to 'it'" in message and "higher score for 'street'" in message
    assert "place" not in message.split("gets it wrong")[1], message  # the answer stays unsaid


def test_a_very_strong_right_design_prints_ratios_that_show():
    """Strength 100 passes; its ratios are written in scientific notation, not as 74659.55 and 0.00."""
    verdict = str(
        ch06.check_second_layer(
            *_channels({"animate": 0, "place": 1}, {"animate": 0, "place": 1}, 100.0)
        )
    )
    assert "0.00 (wide)" not in verdict and re.search(r"\de-\d\d \(wide\)", verdict), verdict
    assert re.search(r"\de\+\d\d \(tired\)", verdict), verdict
    # the chapter's design keeps two decimals
    assert "1.57 (tired) and 0.35 (wide)" in str(
        ch06.check_second_layer(*_channels({"animate": 0, "place": 1}, {"animate": 0, "place": 1}))
    )


def test_a_design_whose_adjective_ties_with_the_referent_passes_with_a_note():
    """Keys that read 'animate' and 'place' alone pass, but 'tired' ties with 'animal' (0.186 each): the
    verdict says so. A key of -1 on 'adjective' (the chapter's worked solution) breaks the tie: no note."""
    tied = str(
        ch06.check_second_layer(*_channels({"animate": 0, "place": 1}, {"animate": 0, "place": 1}))
    )
    assert "'it' gives 'tired' 0.186 and 'animal' 0.186" in tied, tied
    assert "does not single out the referent" in tied
    W_Q2, W_K2 = _channels({"animate": 0, "place": 1}, {"animate": 0, "place": 1})
    W_K2[ch06.FEATURES.index("adjective")] = -1.0
    broken = str(ch06.check_second_layer(W_Q2, W_K2))
    assert "1.57 (tired) and 0.35 (wide)" in broken and "single out" not in broken, broken


def test_crossed_channels_name_the_two_words():
    """Both 'animal' and 'street' are nouns: the message for crossed channels names each word."""
    with pytest.raises(ExerciseFailed) as failed:
        ch06.check_second_layer(*_channels({"animate": 0, "place": 1}, {"place": 0, "animate": 1}))
    message = str(failed.value)
    assert "favours the key of 'street'" in message and "favours the key of 'animal'" in message
    assert "the noun" not in message, message


@pytest.mark.parametrize(
    "looks_like",
    ["orange", "the orange curves", "Orange (unscaled)", "unscaled", "orange, at d_k = 16"],
)
def test_looks_like_accepts_a_phrase_that_names_orange(looks_like):
    assert ch06.check_wider_entries(16, looks_like)


@pytest.mark.parametrize(
    "looks_like, message",
    [
        ("the blue curves", "variance 1 at every width"),
        ("blue or orange", "names both"),
        ("green", '"blue" or "orange"'),
    ],
)
def test_looks_like_rejects_blue_both_or_neither(looks_like, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch06.check_wider_entries(16, looks_like)


def test_a_softmax_over_the_queries_is_named():
    """Each step's full [t + 1, t + 1] scores with the softmax down the columns (dim=0), last row kept."""

    def incremental_outputs(X, W_Q, W_K, W_V):
        out = []
        for t in range(len(X)):
            P = X[: t + 1]
            A = torch.softmax((P @ W_Q) @ (P @ W_K).T / math.sqrt(W_Q.shape[1]), 0)
            out.append((A @ (P @ W_V))[-1])
        return torch.stack(out)

    with pytest.raises(ExerciseFailed, match="sum to 1 over the keys") as failed:
        ch06.check_incremental(incremental_outputs)
    assert "over the queries" in str(failed.value) and "dim=-1" not in str(failed.value)


def test_a_wrong_shape_does_not_name_the_channels():
    """Exercise 1 leaves the choice of channels to the reader (its hint is folded): so does the checker."""
    with pytest.raises(
        ExerciseFailed, match=r"should have shape \[10, 2\] \(10 features, 2 channels\)"
    ) as failed:
        ch06.check_second_layer(torch.zeros(10, 3), torch.zeros(10, 2))
    assert "animate" not in str(failed.value) and "place" not in str(failed.value)


ALIASED = """
import math
import torch
from lib.attention import attend as _a, causal_mask as _cm


def _allowed(T):  # a mask made by a helper, out of the answer's sight
    return torch.ones(T, T).tril().bool()


def incremental_outputs(X, W_Q, W_K, W_V):
    scores = (X @ W_Q) @ (X @ W_K).T / math.sqrt(W_Q.shape[1])
    return _a(scores, X @ W_V, MASK)[0]
"""


@pytest.mark.parametrize(
    "mask, message", [("_cm(len(X))", "uses `causal_mask`"), ("_allowed(len(X))", "passes a mask")]
)
def test_an_aliased_attend_and_causal_mask_are_seen_in_the_notebook(mask, message):
    """Aliases at a notebook's top level (``attend as _a, causal_mask as _cm``): the name check
    resolves them through the function's globals, and the aliased ``attend`` refuses a mask."""
    namespace: dict = {}
    exec(ALIASED.replace("MASK", mask), namespace)
    with pytest.raises(ExerciseFailed, match=message):
        ch06.check_incremental(namespace["incremental_outputs"])


HIDDEN_MASKS = {
    "where": """
def incremental_outputs(X, W_Q, W_K, W_V):
    scores = (X @ W_Q) @ (X @ W_K).T / math.sqrt(W_Q.shape[1])
    steps = torch.arange(len(X))
    scores = torch.where(steps[:, None] >= steps[None], scores, float("-inf"))
    return torch.softmax(scores, dim=-1) @ (X @ W_V)
""",
    "is_causal": """
def incremental_outputs(X, W_Q, W_K, W_V):
    Q, K, V = (X @ W)[None] for W in (W_Q, W_K, W_V))
    return F.scaled_dot_product_attention(Q, K, V, **{"is_" + "causal": True})[0]
""".replace("(X @ W)[None] for", "((X @ W)[None] for"),
}


@pytest.mark.parametrize("how", sorted(HIDDEN_MASKS))
def test_a_mask_the_name_check_cannot_see_is_caught_by_its_behaviour(how):
    """A mask built by hand (torch.where and -inf) or torch's is_causal hidden in **{...}: each
    computes with the future rows, so with them set to NaN the earlier rows turn NaN."""
    namespace: dict = {"math": math, "torch": torch, "F": torch.nn.functional}
    exec(HIDDEN_MASKS[how], namespace)
    with pytest.raises(ExerciseFailed, match="set to NaN"):
        ch06.check_incremental(namespace["incremental_outputs"])


TORCH_ATTENTION = """
def incremental_outputs(X, W_Q, W_K, W_V):
    out = []
    for t in range(len(X)):
        P = X[: t + 1]
        q = (X[t] @ W_Q)[None]
        out.append(F.scaled_dot_product_attention(q, P @ W_K, P @ W_V, KEYWORD)[0])
    return torch.stack(out)
"""


@pytest.mark.parametrize("keyword", ["is_causal=False", "attn_mask=None"])
def test_naming_torchs_mask_argument_with_no_mask_passes(keyword):
    """A right answer that writes `is_causal=False` or `attn_mask=None` to say that it uses no mask
    builds none: it passes (a reader's report: it was refused for the name alone)."""
    namespace: dict = {"torch": torch, "F": torch.nn.functional}
    exec(TORCH_ATTENTION.replace("KEYWORD", keyword), namespace)
    verdict = ch06.check_incremental(namespace["incremental_outputs"])
    assert verdict.passed and "equals causal self-attention" in verdict.message


def test_torchs_is_causal_true_is_still_refused():
    """`is_causal=True` over the whole sequence gives the right numbers but computes with the future:
    the rows-set-to-NaN test refuses it and says that the exercise uses no mask."""
    namespace: dict = {"torch": torch, "F": torch.nn.functional}
    exec(
        """
def incremental_outputs(X, W_Q, W_K, W_V):
    Q, K, V = ((X @ W)[None] for W in (W_Q, W_K, W_V))
    return F.scaled_dot_product_attention(Q, K, V, is_causal=True)[0]
""",
        namespace,
    )
    with pytest.raises(ExerciseFailed, match="set to NaN") as failed:
        ch06.check_incremental(namespace["incremental_outputs"])
    assert "with no mask" in str(failed.value)


SHIFTED = """
def incremental_outputs(X, W_Q, W_K, W_V):
    out = []
    for t in range(len(X)):
        P = PREFIX
        A = torch.softmax((P @ W_Q) @ (P @ W_K).T / math.sqrt(W_Q.shape[1]), -1)
        out.append((A @ (P @ W_V))[-1])
    return torch.stack(out)
"""


@pytest.mark.parametrize(
    "prefix, message",
    [
        ("X[: max(t, 1)]", "output of token t - 1"),  # a reader's report: X[:t], row 0 patched
        ("X[: t + 2]", "output of token t + 1"),
    ],
)
def test_a_prefix_off_by_one_is_named(prefix, message):
    """A prefix that ends one token early (X[:t], the empty step 0 patched) or late (X[: t + 2]):
    the rows come out shifted by one, and the checker says so, not only by how much they differ."""
    namespace: dict = {"math": math, "torch": torch}
    exec(SHIFTED.replace("PREFIX", prefix), namespace)
    with pytest.raises(ExerciseFailed, match=re.escape(message)) as failed:
        ch06.check_incremental(namespace["incremental_outputs"])
    assert "largest difference" not in str(failed.value)
