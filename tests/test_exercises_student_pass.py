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
        "features that every animate noun and every place share",
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


@pytest.mark.parametrize(
    "score_variance, looks_like, message",
    [
        (16, "orange", "passed"),
        (1, "orange", "corrects for the width d_k, not for the size"),
        (8, "orange", "variances multiply"),
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
    assert message in verdict_of(ch07.check_one_head, n_params, False)


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
        "a block misplaced",
        lambda k, d: ch08._rotation(k, d).roll(1, 0),
        "outside its 2 x 2 diagonal blocks",
    ),
]


@pytest.mark.parametrize("what, my_rotation, message", ROTATION, ids=[m[0] for m in ROTATION])
def test_ch08_exercise_1_checks_the_rotation_too(what, my_rotation, message):
    # issue 22: the checker never checked M_k
    assert message in verdict_of(ch08.check_sinusoidal, _table, my_rotation)


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
        (2 * math.pi * 100 ** (126 / 128), True, "they never all come back at once"),
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
        (
            174e9,
            "the embeddings, (V + n_ctx) d = 0.64 billion, sit in the fourth significant figure",
        ),
        (173.9e9, "is 12 N d^2 alone (173.95 billion)"),
        (ch13.BLOCKS_12ND2, "is 12 N d^2 alone"),
        (175e9, "the paper's headline figure"),
        (174.6, "not in billions"),
    ],
)
def test_ch13_gpt3_size(gpt3_params, message):
    assert message.lower() in verdict_of(ch13.check_gpt3_size, gpt3_params, 0.0037).lower()


def test_ch13_twelve_n_d_squared_is_what_the_message_says():
    assert ch13.BLOCKS_12ND2 == 12 * 96 * 12288**2 == 173_946_175_488
    assert not re.search(
        r"174,000,000,000 is 12 N d\^2", verdict_of(ch13.check_gpt3_size, 174e9, None)
    )


# --- the same pass over the other chapters' predictions: each mistake gets its own cause ------------------

from lib.exercises import ch01, ch04, ch05, ch10, ch12, ch15  # noqa: E402

OTHER_PREDICTIONS = [
    (
        ch01.check_greedy_or_reference,
        ("reference", 0),
        "the errors are the model's, not the search's",
    ),
    (ch04.check_luong_looks_left, (True, True), "it can ask for the gold word itself"),
    (ch04.check_luong_looks_left, (False, False), "carries that a negation follows"),
    (ch05.check_without_positions, (1, True), "has nothing to put in order"),
    (ch05.check_without_positions, (3, False), "teacher forcing"),
    (ch10.check_pair_score, ({("w", "##i")}, 1 / 3), "it is a tie"),
    (ch10.check_pair_score, ({("w", "##i"), ("##i", "##d")}, 3), "is c_ab, the count of the pair"),
    (ch10.check_pair_score, ({("w", "i"), ("i", "d")}, 1 / 3), "not a pair of adjacent pieces"),
    (ch12.check_elmo_size, ("LSTM", "weight_hr", None), "the authors' cell has it too"),
    (ch15.check_other_adjectives, (True, True), "describes a street"),
    (ch15.check_other_adjectives, (False, False), "what the adjective can describe"),
]


@pytest.mark.parametrize(
    "check, args, message",
    OTHER_PREDICTIONS,
    ids=[f"{c.__module__[-4:]}-{m[:25]}" for c, _, m in OTHER_PREDICTIONS],
)
def test_other_chapters_name_the_cause(check, args, message):
    assert message in verdict_of(check, *args)
