"""Issue 22: the exercises answered as a student would, with the most plausible mistakes, and what each
mistake now gets. Every message must name the real cause; the mistakes that issue 22 found diagnosed
wrongly (or not at all) are here, with the others tried in the same pass.

Also: a checker trusts no object's account of itself (``lib.exercises.plain``).
"""

from __future__ import annotations

import math
import re

import pytest
import torch

from lib.exercises import ExerciseFailed, ch06, ch07, ch08, ch13, plain


def verdict_of(check, *args):
    """The checker's message: "passed ..." / "not attempted ..." or the feedback of a wrong answer."""
    try:
        return str(check(*args))
    except ExerciseFailed as e:
        return "wrong: " + e.message


# --- a checker compares plain values ------------------------------------------------------------------


class AlwaysEqual(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


class LyingString(str):
    def strip(self, *args):
        return "orange"

    def lower(self):
        return "orange"


class LyingFloat(float):
    def __float__(self):
        return 16.0


class CloseToAnything(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.allclose:
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def test_plain_makes_builtins_of_subclasses_and_keeps_what_they_hold():
    assert type(plain(AlwaysEqual(6))) is int and plain(AlwaysEqual(6)) == 6
    assert plain(AlwaysEqual(6)) != 2
    assert type(plain(LyingString("blue"))) is str and plain(LyingString("blue")).strip() == "blue"
    assert type(plain(LyingFloat(3.0))) is float and float(plain(LyingFloat(3.0))) == 3.0
    lying = torch.zeros(3).as_subclass(CloseToAnything)
    assert torch.allclose(lying, torch.ones(3))  # what it claims
    honest = plain(lying)
    assert type(honest) is torch.Tensor and not torch.allclose(honest, torch.ones(3))
    nested = plain([(AlwaysEqual(1), {"k": LyingFloat(2.0)})])
    assert (
        type(nested[0]) is tuple and type(nested[0][0]) is int and type(nested[0][1]["k"]) is float
    )
    values = torch.tensor([3.0, 1.0]).max(0)  # a structseq keeps its fields
    assert plain(values).values == 3.0
    parameter = torch.nn.Parameter(torch.ones(2))
    assert type(plain(parameter)) is torch.Tensor
    function = lambda x: x  # noqa: E731
    assert plain(function) is function and plain(None) is None and plain(True) is True


@pytest.mark.parametrize(
    "args, message",
    [
        ((LyingFloat(4.0), "orange"), "4 is the variance of one entry"),  # its __float__ says 16
        ((16, LyingString("blue")), "the blue curves"),  # its strip() says orange
        ((AlwaysEqual(4), "orange"), "4 is the variance of one entry"),
    ],
)
def test_objects_that_lie_about_themselves_are_checked_for_what_they_hold(args, message):
    assert message in verdict_of(ch06.check_wider_entries, *args)


def test_a_function_returning_a_tensor_that_claims_closeness_is_checked_for_its_data():
    def incremental_outputs(X, W_Q, W_K, W_V):
        return torch.zeros(len(X), W_V.shape[1]).as_subclass(CloseToAnything)

    assert verdict_of(ch06.check_incremental, incremental_outputs).startswith("wrong: ")


# --- chapter 6 -----------------------------------------------------------------------------------------


def _projections(query: list[str], key: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    W_Q2, W_K2 = torch.zeros(10, 2), torch.zeros(10, 2)
    for channel, (q, k) in enumerate(zip(query, key)):
        W_Q2[ch06.FEATURES.index(q), channel] = 4.0
        W_K2[ch06.FEATURES.index(k), channel] = 1.0
    return W_Q2, W_K2


SECOND_LAYER = [
    # (what the student did, query features, key features, what the message must say)
    ("right", ["animate", "place"], ["animate", "place"], "passed"),
    # issue 22: diagnosed as "your projections read only what the tokens are in X", but the query read Z
    (
        "every noun answers through 'thing' (key side)",
        ["animate", "place"],
        ["thing", "thing"],
        "your keys of 'animal' and 'street' are equal",
    ),
    (
        "the query reads what 'it' is ('pronoun')",
        ["pronoun", "pronoun"],
        ["animate", "place"],
        "Your query W_Q2 reads only what 'it' is in X",
    ),
    ("channels crossed", ["animate", "place"], ["place", "animate"], "the preferences are swapped"),
    (
        "'town' instead of 'place'",
        ["animate", "town"],
        ["animate", "town"],
        "it relies on a feature that 'animal' or 'street' has and 'criminal' or 'river' lacks",
    ),
]


@pytest.mark.parametrize(
    "what, query, key, message", SECOND_LAYER, ids=[m[0] for m in SECOND_LAYER]
)
def test_ch06_second_layer_names_the_cause(what, query, key, message):
    assert message in verdict_of(ch06.check_second_layer, *_projections(query, key))


def test_ch06_second_layer_names_a_query_change_that_meets_no_key_difference():
    # the query reads what Z added ('animate', channel 0); the keys differ only in 'town' (channel 1)
    W_Q2b = torch.zeros(10, 2)
    W_Q2b[ch06.FEATURES.index("animate"), 0] = 4.0
    W_K2b = torch.zeros(10, 2)
    W_K2b[ch06.FEATURES.index("town"), 1] = 1.0
    assert "not along the same channel" in verdict_of(ch06.check_second_layer, W_Q2b, W_K2b)


def _incremental(keys_from, scale=None):
    def incremental_outputs(X, W_Q, W_K, W_V):
        rows = []
        for t in range(len(X)):
            prefix = keys_from(X, t)
            q = X[t] @ W_Q
            w = torch.softmax(prefix @ W_K @ q / (scale or math.sqrt(W_Q.shape[1])), dim=-1)
            rows.append(w @ (prefix @ W_V))
        return torch.stack(rows)

    return incremental_outputs


INCREMENTAL = [
    ("right", _incremental(lambda X, t: X[: t + 1]), "passed"),
    # issue 22: only "largest difference 8.36 at index [1, 3]" before
    (
        "the token left out of its own attention",
        _incremental(lambda X, t: X[:t] if t else X[:1]),
        "not to token t itself",
    ),
    ("the whole sequence", _incremental(lambda X, t: X), "depends on the rows after t"),
    ("no scaling", _incremental(lambda X, t: X[: t + 1], scale=1.0), "did not divide the scores"),
]


@pytest.mark.parametrize("what, answer, message", INCREMENTAL, ids=[m[0] for m in INCREMENTAL])
def test_ch06_incremental_names_the_cause(what, answer, message):
    assert message in verdict_of(ch06.check_incremental, answer)


def _masked_one_liner(X, W_Q, W_K, W_V):
    from lib.attention import causal_mask, scaled_dot_product_attention

    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, causal_mask(len(X)))[0]


_PRECOMPUTED = torch.ones(20, 20).tril().bool()


def _masked_by_a_global(X, W_Q, W_K, W_V):
    import lib.attention

    T = len(X)
    return lib.attention.scaled_dot_product_attention(
        X @ W_Q, X @ W_K, X @ W_V, _PRECOMPUTED[:T, :T]
    )[0]


def test_ch06_incremental_refuses_a_mask():
    """The exercise says "with no mask": causal attention computed with one is named, not passed."""
    one_liner = verdict_of(ch06.check_incremental, _masked_one_liner)
    assert one_liner.startswith("wrong: ") and "uses `causal_mask`" in one_liner
    hidden = verdict_of(ch06.check_incremental, _masked_by_a_global)
    assert "passes a mask to the library's attention" in hidden
    import lib.attention  # the library's functions are restored after the check

    assert lib.attention.scaled_dot_product_attention.__name__ == "scaled_dot_product_attention"
    assert not hasattr(lib.attention.scaled_dot_product_attention, "__wrapped__")


def test_ch06_wider_entries_accepts_numpy_and_tensor_numbers():
    import numpy as np

    for variance in (np.float32(16), np.int64(16), torch.tensor(16.0)):
        assert verdict_of(ch06.check_wider_entries, variance, "orange").startswith("✓")


@pytest.mark.parametrize(
    "score_variance, looks_like, message",
    [
        (16, "orange", "passed"),
        (1, "orange", "corrects for the width d_k, not for the size"),
        (8, "orange", "8 = 4 + 4 adds the variances"),  # named, not the rule that gives 16
        (16, "blue", "the blue curves have scores of variance 1"),
    ],
)
def test_ch06_wider_entries(score_variance, looks_like, message):
    assert message in verdict_of(ch06.check_wider_entries, score_variance, looks_like)


# --- chapter 7 -----------------------------------------------------------------------------------------

N7 = ch07.N_PARAMETERS


@pytest.mark.parametrize(
    "n_params, message",
    [
        (N7, "passed"),
        (
            N7 - 4 * ch07.D,
            "leaves out the attention's four biases",
        ),  # before: "the number of heads"
        (N7 - ch07.POSITIONS * ch07.D, "leaves out the position vectors"),
        (N7 - ch07.HIDDEN - ch07.CLASSES, "leaves out the readout's biases"),
        (ch07.ATTENTION, "the attention layer alone"),
        (N7 - ch07.ATTENTION + 4 * ch07.ATTENTION, "the number of heads changes no matrix"),
        (12345, "Count every part"),
    ],
)
def test_ch07_one_head_count_names_the_missing_part(n_params, message):
    assert message in verdict_of(ch07.check_one_head, n_params, False, 0.197)


# --- chapter 8 -----------------------------------------------------------------------------------------


def _table(max_len, d_model, exponent="2i/d"):
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(0, d_model, 2, dtype=torch.float64)
    power = pair / d_model if exponent == "2i/d" else pair / 2 / d_model
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position / 10000.0**power)
    pe[:, 1::2] = torch.cos(position / 10000.0**power)
    return pe


def _stub(k, d_model):
    """Not written yet."""
    ...


ROTATION = [
    ("right", lambda k, d: ch08._rotation(k, d).float(), "passed"),
    ("not written yet", _stub, "now build M_k"),
    ("transposed (turns backwards)", lambda k, d: ch08._rotation(k, d).T, "M_(-k)"),
    (
        "pair index in the exponent",
        lambda k, d: ch08._rotation(k, d, exponent="i/d"),
        "10000^(i/d)",
    ),
    ("signs dropped", lambda k, d: ch08._rotation(k, d).abs(), "symmetric"),
    ("the identity", lambda k, d: torch.eye(d), "M_0"),
    (
        "angles taken as degrees",
        lambda k, d: ch08._rotation(k, d, angle_scale=math.pi / 180),
        "degree conversion",
    ),
    ("angles off", lambda k, d: ch08._rotation(k, d, angle_scale=1.1), "not the shift by k"),
    (
        "a block misplaced",
        lambda k, d: ch08._rotation(k, d).roll(1, 0),
        "outside its 2 x 2 diagonal blocks",
    ),
]


@pytest.mark.parametrize("what, my_rotation, message", ROTATION, ids=[m[0] for m in ROTATION])
def test_ch08_exercise_1_checks_the_rotation_too(what, my_rotation, message):
    # issue 22: the checker never checked M_k
    assert message in verdict_of(ch08.check_sinusoidal, _table, my_rotation)


def test_ch08_rotation_feedback_is_labelled_my_rotation_and_keeps_the_answer_back():
    # review: my_rotation's mistakes were reported as "my_sinusoidal: ..."; the transposed block's
    # message wrote out the right block
    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_sinusoidal(_table, lambda k, d: ch08._rotation(k, d).T)
    assert failed.value.exercise == "my_rotation" and "M_(-k)" in failed.value.message
    assert "[cos w k, sin w k]" not in failed.value.message
    # one number for one mistake: the difference in M_k, not a second one in the shifted table
    message = verdict_of(
        ch08.check_sinusoidal, _table, lambda k, d: ch08._rotation(k, d, angle_scale=1.1)
    )
    assert message.count("largest difference") == 1 and "by up to" not in message


def test_ch08_rotation_not_written_is_reported_under_my_rotation():
    # review: with my_sinusoidal right and my_rotation still the stub, the verdict was headed
    # "my_sinusoidal: not attempted", naming the function that was already done
    def my_rotation(k, d_model):
        """The template."""
        ...

    verdict = ch08.check_sinusoidal(_table, my_rotation)
    assert verdict.status == "not attempted" and verdict.exercise == "my_rotation"
    assert str(verdict).startswith("… my_rotation: not attempted.")
    assert "`my_rotation`" in verdict.message
    assert ch08.check_sinusoidal(_table).exercise == "my_rotation"


def test_ch08_pair_index_message_gives_the_tables_own_wavelengths():
    # issue 22: "about 2 pi 10000 positions"; for d = 16 the slowest pair turns in about 19,900
    message = verdict_of(ch08.check_sinusoidal, lambda n, d: _table(n, d, exponent="i/d"))
    assert "d_model = 16" in message and "19,869" in message and "353" in message
    assert abs(2 * math.pi * 10000 ** (14 / 16) - 19869) < 1


@pytest.mark.parametrize(
    "last_wavelength, distant_collision, message",
    [
        (2 * math.pi * 100 ** (126 / 128), False, "passed"),
        (2 * math.pi * 100, False, "the limit for a very wide table"),
        (100 ** (126 / 128), False, "positions per radian"),
        (2 * math.pi * 100 ** (126 / 128), True, "do they all come back close together at once?"),
    ],
)
def test_ch08_small_base(last_wavelength, distant_collision, message):
    assert message in verdict_of(ch08.check_small_base, last_wavelength, distant_collision)


# --- chapter 13 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gpt3_params, message",
    [
        (174.6e9, "passed"),
        (174.59e9, "passed"),
        # issue 22: rejected as "12 N d^2 alone", which is 173.95e9
        (174e9, "the embeddings sit in the fourth figure"),
        (173.9e9, "is 12 N D^2 alone"),
        (ch13.BLOCKS_12ND2, "is 12 N D^2 alone"),
        (175e9, "the paper's headline figure"),
        (174.6, "not in billions"),
    ],
)
def test_ch13_gpt3_size(gpt3_params, message):
    assert message.lower() in verdict_of(ch13.check_gpt3_size, gpt3_params, 0.0037).lower()


def test_ch13_twelve_n_d_squared_is_what_the_message_says():
    assert ch13.BLOCKS_12ND2 == 12 * 96 * 12288**2 == 173_946_175_488
    assert not re.search(
        r"174,000,000,000 is 12 N D\^2", verdict_of(ch13.check_gpt3_size, 174e9, None)
    )


# --- the same pass over the other chapters' predictions: each mistake gets its own cause ------------------

from lib.exercises import ch01, ch04, ch05, ch10, ch12, ch15  # noqa: E402


def ch05_without_positions(suffers_most, mostly_wrong_order):
    """check_without_positions given a blind_model (untrained, its embeddings at zero) and a
    chapter's model whose exactly right captions by number of shapes are the book's runs (without
    positions 86 of 88, 85 of 104, 29 of 108; the chapter's 86, 96, 78): the evaluation replaced,
    since training takes minutes."""
    from unittest import mock

    from lib.captioning import Captioner
    from lib.data.shapes import VOCAB

    torch.manual_seed(0)
    model = Captioner(len(VOCAB), d_feature=64, d_emb=32, d_hidden=64, d_attn=32)
    blind = Captioner(len(VOCAB), d_feature=64, d_emb=32, d_hidden=64, d_attn=32)
    with torch.no_grad():
        blind.encoder.row_embedding.weight.zero_()
        blind.encoder.col_embedding.weight.zero_()
    scores = {
        id(blind): {1: 86 / 88, 2: 85 / 104, 3: 29 / 108},
        id(model): {1: 86 / 88, 2: 96 / 104, 3: 78 / 108},
    }
    with mock.patch.multiple(
        ch05,
        exact_by_shapes=mock.Mock(side_effect=lambda m: scores[id(m)]),
        # of the 79 wrong three-shape captions without positions, 22 in the wrong order
        three_shape_errors=mock.Mock(return_value=(79, 22)),
    ):
        return ch05.check_without_positions(suffers_most, mostly_wrong_order, blind, model)


OTHER_PREDICTIONS = [
    (
        ch01.check_greedy_or_reference,
        (torch.zeros(400), None),
        "one value per test sentence (400)",
    ),
    # review ch04 s21, item 2: the predictions are judged once the share (0.9382) is measured
    (
        ch04.check_luong_looks_left,
        (True, True, 0.9382),
        "the row 'articles after another word' of your table",
    ),
    (ch04.check_luong_looks_left, (False, False, 0.9382), "Look at your table's row for 'ne'"),
    (ch05_without_positions, (1, False), "the captions with 1 shape, is not the group"),
    (ch05_without_positions, (3, True), "the three-shape captions it gets wrong beside the true"),
    (ch10.check_pair_score, ({("w", "##i")}, 1 / 3), "it is a tie"),
    (ch10.check_pair_score, ({("w", "##i"), ("##i", "##d")}, 3), "is c_ab, the count of the pair"),
    (ch10.check_pair_score, ({("w", "i"), ("i", "d")}, 1 / 3), "Did you mean ('##i', '##d')?"),
    (ch12.check_elmo_size, ("LSTM", "weight_hr", None), "the authors' cell has it too"),
    # review s38 m3: the predictions are judged once both weights (0.608, 0.350) are measured
    (
        ch15.check_other_adjectives,
        (True, True, 0.608, 0.350),
        "compare both with the same weights in the 'wide' sentence",
    ),
    (
        ch15.check_other_adjectives,
        (False, False, 0.608, 0.350),
        "Compare it with the same weight in the 'tired' sentence",
    ),
]


@pytest.mark.parametrize(
    "check, args, message",
    OTHER_PREDICTIONS,
    ids=[f"{c.__module__[-4:]}-{m[:25]}" for c, _, m in OTHER_PREDICTIONS],
)
def test_other_chapters_name_the_cause(check, args, message):
    assert message in verdict_of(check, *args)


# --- the function exercises (and predictions) of chapters 2, 3, 9, 11, 14 and 16 ------------------------
# Each entry: (chapter's checker, a student's wrong answer, what the verdict must name). The mistakes are
# the ones a first-time student makes (wrong axis, an epsilon before the log, a mask applied after the
# softmax, a LayerNorm without its gains, 0.1 where 0.5 is meant, a long tensor used as a mask, ...).

import torch.nn.functional as F  # noqa: E402

from lib.attention import GeneralScore  # noqa: E402
from lib.exercises import ch02, ch03, ch09, ch11, ch14, ch16  # noqa: E402


def _log_sharpen(dim=-1, eps=0.0, power=1.0):
    return lambda w, gamma: torch.softmax(gamma**power * torch.log(w + eps), dim=dim)


SHARPEN = [
    ("right, in log space", _log_sharpen(), "passed"),
    ("right, in float64", lambda w, g: torch.softmax(g * w.double().log(), -1), "passed"),
    (
        "w**gamma / sum: underflow at gamma = 300",
        lambda w, g: w**g / (w**g).sum(-1, keepdim=True),
        "(1/32)**300 is about 1e-451",
    ),
    ("an epsilon before the log", _log_sharpen(eps=1e-3), "your weights are those of w + 0.001"),
    (
        "log_softmax",
        lambda w, g: torch.log_softmax(g * torch.log(w), -1),
        "the logarithm of the sharpened weights",
    ),
    ("power 1/gamma", _log_sharpen(power=-1.0), "w**(1/gamma): it flattens the weights"),
    ("softmax over the batch", _log_sharpen(dim=0), "you normalised over the first dimension"),
    ("sum of the whole tensor", lambda w, g: w**g / (w**g).sum(), "sum of the whole tensor"),
    (
        "divided by the row maximum only",
        lambda w, g: (w / w.amax(-1, keepdim=True)) ** g,
        "not yet normalised",
    ),
    (
        "softmax(gamma * w)",
        lambda w, g: torch.softmax(g * w, -1),
        "multiplies the weights by gamma",
    ),
    (
        "in place",
        lambda w, g: torch.softmax(g * w.log_(), -1),
        "changed its input number 1 in place",
    ),
]


@pytest.mark.parametrize("what, sharpen, message", SHARPEN, ids=[s[0] for s in SHARPEN])
def test_ch02_sharpen_names_the_cause(what, sharpen, message):
    assert message in verdict_of(ch02.check_sharpen, sharpen)


DUPLICATE_KEY = [
    (((-0.3, -0.23), 2), "passed"),
    (((0.0, -1.5), 2), "is the new value alone"),  # the new item wins
    (((-0.6, 1.04), 2), "is v_2, the value of k_2 alone"),  # the hard lookup's answer
    (((-0.3, -0.23), 6), "which index it returns when several entries share"),
    (((-0.3, -0.23), 3), "key 3 does not have the highest score"),  # counted from 1
]


@pytest.mark.parametrize("args, message", DUPLICATE_KEY, ids=[m[:30] for _, m in DUPLICATE_KEY])
def test_ch02_duplicate_key_names_the_cause(args, message):
    assert message in verdict_of(ch02.check_duplicate_key, *args)


def _general_from(matrix):
    def projected_as_general(W_Q, W_K):
        d_k, d = W_Q.shape
        general = GeneralScore(d, d)
        with torch.no_grad():
            general.W_a.weight.copy_(matrix(W_Q, W_K, d_k, d))
        return general

    return projected_as_general


def _computed_but_not_copied(W_Q, W_K):
    d_k, d = W_Q.shape
    general = GeneralScore(d, d)
    W_a = W_Q.T @ W_K / math.sqrt(d_k)  # noqa: F841 (the mistake: never copied into the module)
    return general


def _assigned_tensor(W_Q, W_K):
    d_k, d = W_Q.shape
    general = GeneralScore(d, d)
    general.W_a.weight = W_Q.T @ W_K / math.sqrt(d_k)  # TypeError: a Parameter is expected
    return general


def _copied_with_grad_on(W_Q, W_K):
    d_k, d = W_Q.shape
    general = GeneralScore(d, d)
    general.W_a.weight.copy_(W_Q.T @ W_K / math.sqrt(d_k))  # no torch.no_grad(): raises when called
    return general


class _ForwardThatLies(GeneralScore):
    """A subclass whose forward returns the right scores from W_Q and W_K, its W_a left random."""

    def __init__(self, W_Q, W_K):
        super().__init__(W_Q.shape[1], W_Q.shape[1])
        self.W_Q, self.W_K = W_Q, W_K

    def forward(self, q, k):
        return (q @ self.W_Q.T) @ (k @ self.W_K.T).transpose(-2, -1) / math.sqrt(len(self.W_Q))


PROJECTED = [
    ("right", _general_from(lambda Q, K, dk, d: Q.T @ K / math.sqrt(dk)), "passed"),
    ("no scaling", _general_from(lambda Q, K, dk, d: Q.T @ K), "times too large"),
    ("by d_k", _general_from(lambda Q, K, dk, d: Q.T @ K / dk), "divide by d_k instead of sqrt"),
    (
        "by sqrt(d)",
        _general_from(lambda Q, K, dk, d: Q.T @ K / math.sqrt(d)),
        "the width of the raw vectors",
    ),
    (
        "transposed (nn.Linear stores [out, in])",
        _general_from(lambda Q, K, dk, d: K.T @ Q / math.sqrt(dk)),
        "your W_a is transposed",
    ),
    ("computed, never copied in", _computed_but_not_copied, "Did you copy your matrix into it"),
    (
        "a plain tensor assigned to the weight",
        _assigned_tensor,
        "rather than assigning a plain tensor",
    ),
    ("a forward that computes it itself", _ForwardThatLies, "W_a.weight has rank 8"),
    (
        "copied in without torch.no_grad() (raises when the reader calls it)",
        _copied_with_grad_on,
        "copy into the parameter under `torch.no_grad()`",
    ),
]


@pytest.mark.parametrize("what, answer, message", PROJECTED, ids=[p[0] for p in PROJECTED])
def test_ch03_projected_as_general_names_the_cause(what, answer, message):
    assert message in verdict_of(ch03.check_projected_as_general, answer)


def _softmax_then_mask_renormalised(scores, mask):
    w = torch.softmax(scores, -1) * mask
    return w / w.sum(-1, keepdim=True).clamp_min(1e-30)


def _max_over_all_then_mask(scores, mask):
    e = torch.exp(scores - scores.amax(-1, keepdim=True)) * mask
    return e / e.sum(-1, keepdim=True).clamp_min(1e-30)


def _filled(value, dim=-1, mask_of=lambda m: ~m):
    return lambda s, m: torch.nan_to_num(torch.softmax(s.masked_fill(mask_of(m), value), dim))


MASKED_SOFTMAX = [
    ("right", _filled(float("-inf")), "passed"),
    ("softmax, then mask", lambda s, m: torch.softmax(s, -1) * m, "after the softmax"),
    (
        "softmax, mask, renormalise",
        _softmax_then_mask_renormalised,
        "its largest score, 3e+04 at key 0, is a masked one",
    ),
    (
        "row maximum taken before masking",
        _max_over_all_then_mask,
        "its largest score, 3e+04 at key 0, is a masked one",
    ),
    ("filled with -1e9", _filled(-1e9), "the row becomes uniform"),
    ("filled with 0", _filled(0.0), "a masked score set to 0"),
    (
        "no nan_to_num",
        lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), -1),
        "a softmax over a row of -inf divides 0 by 0",
    ),
    ("mask inverted", _filled(float("-inf"), mask_of=lambda m: m), "True where a query MAY attend"),
    ("over the queries", _filled(float("-inf"), dim=0), "normalise over the last dimension"),
    (
        "exp without the max",
        lambda s, m: (torch.exp(s) * m) / (torch.exp(s) * m).sum(-1, keepdim=True).clamp_min(1e-30),
        "the exp of any score above 88 overflows",
    ),
]


@pytest.mark.parametrize(
    "what, answer, message", MASKED_SOFTMAX, ids=[m[0] for m in MASKED_SOFTMAX]
)
def test_ch03_masked_softmax_names_the_cause(what, answer, message):
    assert message in verdict_of(ch03.check_masked_softmax, answer)


PREDICTIONS_2_3 = [
    (ch03.check_key_strength, ({"k2"}, 0.5), "you left out a key whose score"),
    (ch03.check_key_strength, (set(), 0.5), "you named no key"),
    (
        ch03.check_key_strength,
        ({"k1", "k2"}, 1.0),
        "approaches 1 only if k2's score beats every other",
    ),
    (ch03.check_key_strength, ({"k1", "k2"}, 0.31), "the weight of k2 at beta = 1"),
    (
        ch03.check_key_strength,
        ({"k1", "k2", "k3"}, 0.5),
        "k3 has a smaller cosine with q1 than some other key",
    ),
    (ch03.check_unit_length, ({"cosine", "scaled dot"}, {"cosine"}), "scaled dot does not belong"),
    (
        ch03.check_unit_length,
        ({"cosine", "dot"}, {"cosine", "location"}),
        "it reads only the query, W_a q; did the queries change?",
    ),
    (ch03.check_unit_length, ({"cosine", "dot"}, {"cosine", "dot"}), "dot does not belong"),
    (ch03.check_unit_length, ("cosine, dot", {"cosine"}), "give a set of separate names"),
    (ch03.check_key_strength, ("k1, k3", 0.5), "give a set of separate names"),
]


@pytest.mark.parametrize(
    "check, args, message", PREDICTIONS_2_3, ids=[m[:30] for _, _, m in PREDICTIONS_2_3]
)
def test_ch03_predictions_name_the_cause(check, args, message):
    assert message in verdict_of(check, *args)


@pytest.mark.parametrize("answer", ["cosine, dot", "general,additive", "dot, location, "])
def test_ch03_a_string_with_commas_is_told_its_form_not_its_names(answer):
    """One string of names separated by commas: the form is wrong, and the message says so with the
    reader's own names, never whether they are right (a verdict on them would hand over the answer)."""
    verdict = verdict_of(ch03.check_unit_length, answer, None)
    assert "give a set of separate names" in verdict
    assert "not one of" not in verdict and "does not belong" not in verdict
    named = set(re.findall(r"'([^']*)'", verdict.split("quotes:")[1]))
    assert named == {p.strip() for p in answer.split(",") if p.strip()}


def _pre_ln(
    first_norm="norm1", second_norm="norm2", ff_reads="y", second_residual="y", final=False
):
    def pre_ln_layer(layer, x):
        norm = {
            "norm1": layer.norm1,
            "norm2": layer.norm2,
            "bare": lambda t: F.layer_norm(t, t.shape[-1:]),
        }
        h = norm[first_norm](x)
        y = x + layer.self_attn(h, h, h)[0]
        out = {"y": y, "x": x}[second_residual] + layer.ff(
            norm[second_norm]({"y": y, "x": x}[ff_reads])
        )
        return layer.norm2(out) if final else out

    return pre_ln_layer


def _post_ln(layer, x):
    y = layer.norm1(x + layer.self_attn(x, x, x)[0])
    return layer.norm2(y + layer.ff(y))


def _attention_pair_added(layer, x):
    h = layer.norm1(x)
    y = x + layer.self_attn(h, h, h)  # the (output, weights) pair
    return y + layer.ff(layer.norm2(y))


PRE_LN = [
    ("right", _pre_ln(), "passed"),
    ("post-LN", _post_ln, "that is post-LN"),
    ("LayerNorms without gains", _pre_ln("bare", "bare"), "leave out the layer's learned gains"),
    ("norms swapped", _pre_ln("norm2", "norm1"), "you swapped the two LayerNorms"),
    ("norm2 twice", _pre_ln("norm2", "norm2"), "you used norm2 before the attention too"),
    ("norm1 twice", _pre_ln("norm1", "norm1"), "you used norm1 before the feed-forward"),
    ("FFN reads LN2(x)", _pre_ln(ff_reads="x"), "the feed-forward network reads LN2(x)"),
    (
        "second residual adds x",
        _pre_ln(second_residual="x"),
        "the second residual connection adds x",
    ),
    ("a final norm in the layer", _pre_ln(final=True), "in the Encoder (encoder.norm)"),
    ("attention's pair added", _attention_pair_added, "returns a pair (output, weights)"),
]


@pytest.mark.parametrize("what, answer, message", PRE_LN, ids=[p[0] for p in PRE_LN])
def test_ch09_pre_ln_names_the_cause(what, answer, message):
    assert message in verdict_of(ch09.check_pre_ln, answer)


_ENC, _DEC = 3_152_384, 4_204_032  # one encoder layer, one decoder layer of base (biases included)
_BASE = 63_082_496

PARAMETER_COUNTS = [
    ((18_944_000, 12_582_912, 107_220_992), "passed"),
    ((2 * 18_944_000, None, None), "stays tied to the target embedding"),
    ((None, 6_291_456, None), "counts either the encoder's 6"),
    ((None, None, 2 * _BASE), "is twice the base model"),
    ((None, None, _BASE + 12 * _ENC), "a decoder layer also has a cross-attention"),
    ((None, None, _BASE + 6 * _ENC), "6 more encoder layers and 6 more decoder layers"),
]


@pytest.mark.parametrize(
    "args, message", PARAMETER_COUNTS, ids=[m[:30] for _, m in PARAMETER_COUNTS]
)
def test_ch09_parameter_counts_name_the_cause(args, message):
    assert message in verdict_of(ch09.check_parameter_counts, *args)


def _interpolated(**mistake):
    return lambda train, test, lam: ch11.interpolated_perplexity_reference(
        train, test, lam, **mistake
    )


INTERPOLATION = [
    ("right", _interpolated(), "passed"),
    (
        "U divided by the words alone",
        _interpolated(u_total_without_eos=True),
        "add up to more than 1",
    ),
    ("log10 undone by exp", _interpolated(log10=True), "you mixed two bases: log10"),
    ("log2 undone by exp", _interpolated(log2=True), "you mixed two bases: log2"),
    (
        "the mean of the sentences' cross-entropies",
        _interpolated(mean_sentence_entropy=True),
        "you averaged the sentences' cross-entropies",
    ),
    ("the weights swapped", _interpolated(swap=True), "you swapped the weights"),
    ("U without </s>", _interpolated(eos_in_u=False), "your U leaves out </s>"),
    ("U on the test sentences", _interpolated(unigram_from="test"), "you counted U on the test"),
    ("M without </s>", _interpolated(count_eos=False), "your M counts only the words"),
    ("</s> not predicted", _interpolated(predict_eos=False), "you left out the </s> of the test"),
]


@pytest.mark.parametrize("what, answer, message", INTERPOLATION, ids=[i[0] for i in INTERPOLATION])
def test_ch11_interpolation_names_the_cause(what, answer, message):
    assert message in verdict_of(ch11.check_interpolation, answer)


def _mask_for_mlm(kind="right"):
    def mask_for_mlm(input_ids, vocab_size, mask_token_id, special_ids, prob=0.15):
        special = torch.isin(input_ids, torch.tensor(list(special_ids)))
        chosen = (torch.rand(input_ids.shape) < prob) & ~special
        allowed = torch.tensor([i for i in range(vocab_size) if i not in special_ids])
        random_ids = allowed[torch.randint(len(allowed), input_ids.shape)]
        if kind == "second draw with 0.1":  # 80% [MASK], then 10% of the remaining 20% random
            to_mask = chosen & (torch.rand(input_ids.shape) < 0.8)
            to_random = chosen & ~to_mask & (torch.rand(input_ids.shape) < 0.1)
        else:
            action = torch.rand(input_ids.shape)
            to_mask, to_random = chosen & (action < 0.8), chosen & (action >= 0.8) & (action < 0.9)
        inputs = torch.where(to_mask, mask_token_id, input_ids)
        inputs = torch.where(to_random, random_ids, inputs)
        labels = torch.where(chosen, input_ids, 0 if kind == "labels 0" else -100)
        return inputs, labels

    return mask_for_mlm


MASK_FOR_MLM = [
    ("right", _mask_for_mlm(), "passed"),
    (
        "a second draw with 0.1",
        _mask_for_mlm("second draw with 0.1"),
        "the probability is 0.5, not 0.1",
    ),
    ("unchosen labelled 0", _mask_for_mlm("labels 0"), "have the label 0; it must be exactly -100"),
]


@pytest.mark.parametrize("what, answer, message", MASK_FOR_MLM, ids=[m[0] for m in MASK_FOR_MLM])
def test_ch14_mask_for_mlm_names_the_cause(what, answer, message):
    assert message in verdict_of(ch14.check_mask_for_mlm, answer)


_BCE = F.binary_cross_entropy_with_logits


def _replaced(original, corrupted):
    return (corrupted != original).float()


DISCRIMINATOR = [
    (
        "right",
        lambda z, o, m, c, a: _BCE(z[a.bool()], _replaced(o, c)[a.bool()]),
        "passed",
    ),
    (
        "right, through the sigmoid",
        lambda z, o, m, c, a: F.binary_cross_entropy(
            z[a.bool()].sigmoid(), _replaced(o, c)[a.bool()]
        ),
        "passed",
    ),
    (
        "labels from the masked positions",
        lambda z, o, m, c, a: _BCE(z[a.bool()], (m != o).float()[a.bool()]),
        "labelled every chosen (masked) position as replaced",
    ),
    (
        "padding zeroed, mean over every position",
        lambda z, o, m, c, a: (_BCE(z, _replaced(o, c), reduction="none") * a).mean(),
        "still divided by every position",
    ),
    (
        "mean per sentence, then over sentences",
        lambda z, o, m, c, a: (
            (_BCE(z, _replaced(o, c), reduction="none") * a).sum(1) / a.sum(1)
        ).mean(),
        "you averaged each sentence over its tokens",
    ),
    (
        "the long attention_mask as an index",
        lambda z, o, m, c, a: _BCE(z[a], _replaced(o, c)[a]),
        "PyTorch reads it as row numbers",
    ),
    (
        "binary_cross_entropy on the logits",
        lambda z, o, m, c, a: F.binary_cross_entropy(z[a.bool()], _replaced(o, c)[a.bool()]),
        "binary_cross_entropy takes probabilities",
    ),
    (
        "bool labels",
        lambda z, o, m, c, a: _BCE(z[a.bool()], (c != o)[a.bool()]),
        "convert the comparison with .float()",
    ),
    (
        "two-class logits (-l, l)",
        lambda z, o, m, c, a: F.cross_entropy(
            torch.stack([-z, z], -1)[a.bool()], (c != o).long()[a.bool()]
        ),
        "two-class logits (-l, l)",
    ),
]


@pytest.mark.parametrize("what, answer, message", DISCRIMINATOR, ids=[d[0] for d in DISCRIMINATOR])
def test_ch16_discriminator_loss_names_the_cause(what, answer, message):
    assert message in verdict_of(ch16.check_discriminator_loss, answer)


_ALBERT = 17_683_968

ALBERT = [
    ((_ALBERT, True), "passed"),
    ((_ALBERT + 522 * 128, None), "you used BERT's vocabulary of 30,522 tokens"),
    ((_ALBERT + 23 * 12_596_224, None), "you counted 24 layers"),
    ((_ALBERT + 522 * 128 + 23 * 12_596_224, None), "you counted 24 layers"),  # two slips at once
    ((_ALBERT - 132_096, None), "you left out the projection"),
    ((None, False), "fewer parameters than BERT-base"),
]


@pytest.mark.parametrize("args, message", ALBERT, ids=[m[:30] for _, m in ALBERT])
def test_ch16_albert_prediction_names_the_cause(args, message):
    assert message in verdict_of(ch16.check_albert_prediction, *args)
