"""The messages of the chapter *Positional encoding*'s checkers added after a reader's report (more
of its checkers' cases are in tests/test_exercises.py): each plausible mistake is named, and the
right answer, in float32 as the chapter's worked solution returns it, still passes."""

from __future__ import annotations

import math

import pytest
import torch

from lib.exercises import ExerciseFailed, ch08


def _integer_division(max_len, d_model):
    """The table with 10000 ** (2 * i // d_model): every exponent 0, every pair at frequency 1."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # [P, 1]
    i = torch.arange(0, d_model, 2)  # [D/2] even columns
    freq = 1 / 10000.0 ** (i // d_model)  # the bug: integer division
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe


def _even_columns_twice(max_len, d_model):
    """A loop over the even columns j = 2i that writes the paper's 2i/d as 2 * j / d: exponent 4i/d."""
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for j in range(0, d_model, 2):
            angle = pos / 10000 ** (2 * j / d_model)
            pe[pos, j], pe[pos, j + 1] = math.sin(angle), math.cos(angle)
    return pe


def _right_table(max_len, d_model):
    return ch08._table(max_len, d_model).float()


def _right_rotation(k, d_model):
    return ch08._rotation(k, d_model).float()


@pytest.mark.parametrize(
    "table, named",
    [
        (_integer_division, "every pair of yours turns at frequency 1"),
        (lambda m, d: ch08._table(m, d, angle_scale=math.pi / 180).float(), "as degrees"),
        (lambda m, d: ch08._table(m, d, angle_scale=180 / math.pi).float(), "180 / pi"),
        (_even_columns_twice, "twice the formula's"),
        (lambda m, d: ch08._table(m, d, base=1000.0).float(), "the base 1000"),
    ],
)
def test_a_table_s_named_mistakes(table, named):
    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_sinusoidal(table, _right_rotation)
    assert named in str(failed.value) and "largest difference" not in str(failed.value)


def test_one_angle_for_every_pair_is_named():
    """M_k built with the angle k in every block (frequency 1 everywhere), not k w_i."""

    def same_angle(k, d_model):
        m = torch.zeros(d_model, d_model)
        c, s = math.cos(k), math.sin(k)
        for i in range(0, d_model, 2):
            m[i : i + 2, i : i + 2] = torch.tensor([[c, s], [-s, c]])
        return m

    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_sinusoidal(_right_table, same_angle)
    assert "the same angle k" in str(failed.value)


def test_a_rotation_that_forgets_k_is_named():
    """Blocks that turn by w_i, not k w_i: M_1 for every k."""
    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_sinusoidal(_right_table, lambda k, d: _right_rotation(1, d))
    assert "that is M_1" in str(failed.value) and "largest difference" not in str(failed.value)


def test_the_right_answers_still_pass():
    assert "M_k on all" in ch08.check_sinusoidal(_right_table, _right_rotation).message
    # a float64 answer passes as well
    assert (
        "M_k on all"
        in ch08.check_sinusoidal(
            lambda m, d: ch08._table(m, d), lambda k, d: ch08._rotation(k, d)
        ).message
    )


def test_the_collision_message_does_not_overclaim():
    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_small_base(2 * math.pi * 100 ** (126 / 128), True)
    message = str(failed.value)
    assert "over positions 0 to 999" in message and "never all come back" not in message


@pytest.mark.parametrize("collision", [True, False, None])
def test_a_missing_wavelength_is_named_whatever_the_collision_answer(collision):
    # review s35b point 1: None with True got only the distant_collision message
    try:
        message = str(ch08.check_small_base(None, collision))
    except ExerciseFailed as failed:
        message = str(failed)
    assert "last_wavelength" in message and "not attempted" in message.lower(), message


WRAPPERS = """
from lib.positional import relative_rotation as _rr, sinusoidal_encoding as _se


def my_sinusoidal(max_len, d_model):
    return _se(max_len, d_model)


def my_rotation(k, d_model):
    return _rr(k, d_model)
"""


def test_a_wrapper_around_the_library_is_refused():
    """``def my_sinusoidal(m, d): return _se(m, d)``, the library under another name: its functions
    refuse while the reader's run (the grader's sandbox does the same: ch08.REFUSALS)."""
    namespace: dict = {}
    exec(WRAPPERS, namespace)
    with pytest.raises(ExerciseFailed, match="library's sinusoidal_encoding"):
        ch08.check_sinusoidal(namespace["my_sinusoidal"], _right_rotation)
    with pytest.raises(ExerciseFailed, match="library's relative_rotation"):
        ch08.check_sinusoidal(_right_table, namespace["my_rotation"])
    assert set(ch08.REFUSALS) == {"check_sinusoidal"}


@pytest.mark.parametrize("guess", [100, 1000, 2 * math.pi * 100])
def test_a_blind_wavelength_guess_is_not_given_the_answer(guess):
    # review s35 point 4: a first, blind guess got the formula 2 pi base^(2i/d), nearly the answer
    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_small_base(guess, False)
    message = str(failed.value)
    assert "2 pi base^" not in message and "100^(126/128)" not in message, message
    assert "last_wavelength" in message


@pytest.mark.parametrize(
    "wrong, mistake",
    [
        (2 * math.pi * 100, "which no pair of the table reaches"),
        (100 ** (126 / 128), "positions per radian"),
        (2 * math.pi * 100 ** (127 / 128), "the odd column's index"),
    ],
)
def test_a_near_miss_wavelength_is_told_its_mistake_not_the_answer(wrong, mistake):
    """Review s42, point 4: after 2 pi x 100 the checker said "the last pair is i = 63, and its exponent
    2i/d is 126/128", after 100^(126/128) "multiply by 2 pi": the answer in one step, in an exercise
    whose value is the prediction. Each message now names the mistake and asks the question that leads
    to the answer, without the last pair's exponent or the factor to apply."""
    with pytest.raises(ExerciseFailed) as failed:
        ch08.check_small_base(wrong, False)
    message = str(failed.value)
    assert mistake in message and "?" in message, message
    for answer in ("126/128", "i = 63", "multiply by 2 pi", "585"):
        assert answer not in message, (answer, message)
