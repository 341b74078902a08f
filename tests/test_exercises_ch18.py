"""The exercises of the chapter *Attention at scale*: the checkers accept the chapter's solutions and the
library, and reject the typical wrong answers with the right feedback (layout and student edition:
tests/test_exercises.py)."""

from __future__ import annotations

import math
import re

import nbformat
import numpy as np
import pytest
import torch

from lib.alibi import alibi_slopes
from lib.exercises import ExerciseFailed, ch18
from lib.flash import _scores_tile, online_softmax
from tests.test_exercises import ROOT, exercises, solution_function, tags

CHAPTER = ROOT / "notebooks" / "18_attention_at_scale.ipynb"


def test_the_chapter_has_four_checked_exercises_and_four_model_answers():
    found = {e["checker"]: e for e in exercises(CHAPTER)}
    assert set(found) == set(ch18.__all__)
    cells = nbformat.read(CHAPTER, as_version=4).cells
    answers = [c for c in cells if c.cell_type == "markdown" and "solution" in tags(c)]
    assert len(answers) == 4 and all(
        c.source.startswith('<details class="model-answer">') for c in answers
    )


@pytest.mark.parametrize(
    "checker, name",
    [
        ("check_running_max_and_sum", "running_max_and_sum"),
        ("check_alibi_slopes", "slopes_for"),
        ("check_tile_mask", "tile_mask"),
        ("check_tile_backward", "tile_backward"),
    ],
)
def test_the_checkers_accept_the_chapters_solutions(checker, name):
    assert getattr(ch18, checker)(solution_function(CHAPTER, checker, name)).passed


def test_the_references_are_the_librarys():
    for _, x, block in ch18._running_cases():
        result = online_softmax(x.double(), block)
        m, total = ch18.running_reference(x, block)
        assert result.maximum.item() == m
        assert abs(result.total.item() - total) <= 1e-12 * total
    for n in ch18._SLOPE_CASES:
        assert torch.allclose(alibi_slopes(n), torch.tensor(ch18.slopes_reference(n), dtype=torch.float64),
                              rtol=1e-15, atol=0)  # fmt: skip
    # the library's tiles mask exactly these cells (-inf) in a causal self-attention
    q = k = torch.zeros(1, 12, 4)
    for i0, i1, j0, j1 in ch18._TILE_CASES:
        s = _scores_tile(q, k, None, True, None, i0, i1, j0, j1)[0]
        assert torch.equal(s != -math.inf, ch18.tile_mask_reference(i0, i1, j0, j1))


def test_the_checkers_say_not_attempted_to_a_stub_and_refuse_the_librarys_softmax():
    def stub(x, block): ...

    assert ch18.check_running_max_and_sum(stub).status == "not attempted"
    assert ch18.check_alibi_slopes(lambda n: ch18.slopes_reference(n)).passed

    def library(x, block):
        result = online_softmax(x, block)
        return result.maximum, result.total

    with pytest.raises(ExerciseFailed, match="online_softmax"):
        ch18.check_running_max_and_sum(library)


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("no rescale", "still exp(x_j - m_old), relative to the old maximum"),
        ("rescaled upwards", "exp(m_new - m_old), which is >= 1"),
        ("block maximum", "that block's own maximum"),
    ],
)
def test_check_running_max_and_sum_names_each_mistake(mistake, message):
    def wrong(x, block):
        return ch18.running_reference(x, block, mistake=mistake)

    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch18.check_running_max_and_sum(wrong)


def test_check_running_max_and_sum_names_the_maximum_updated_after_the_exponentials():
    def late(x, block):
        m, total = 0.0, 0.0  # the exponentials taken with the old maximum, then rescaled
        for start in range(0, len(x), block):
            chunk = x[start : start + block]
            total = total + torch.exp(chunk - m).sum().item()
            new_max = max(m, chunk.max().item())
            total, m = total * math.exp(m - new_max), new_max
        return m, total

    with pytest.raises(ExerciseFailed, match="Update the maximum with the block first"):
        ch18.check_running_max_and_sum(late)


@pytest.mark.parametrize("backend", ["math", "torch", "numpy"])
def test_check_running_max_and_sum_names_the_inverted_rescale_factor(backend):
    """The maximum updated first and the block's terms taken with it, but the old sum rescaled by
    exp(m_new - m_old) (review s35b, 1): the checker names the factor, not the order of the update."""
    exp = {  # looked up at each call, as an answer's math.exp(...) is
        "math": lambda v: math.exp(v),
        "torch": lambda v: torch.exp(torch.tensor(v)).item(),
        "numpy": lambda v: float(np.exp(v)),
    }

    def inverted(x, block):
        m, total = -math.inf, 0.0
        for start in range(0, len(x), block):
            chunk = x[start : start + block]
            new_max = max(m, chunk.max().item())
            total = total * exp[backend](new_max - m) + torch.exp(chunk - new_max).sum().item()
            m = new_max
        return m, total

    with pytest.raises(
        ExerciseFailed, match="rescales your old sum has a positive exponent"
    ) as failed:
        ch18.check_running_max_and_sum(inverted)
    assert "Update the maximum with the block first" not in str(failed.value)
    assert "exp(m_old - m_new)" not in str(failed.value)  # names the mistake, not the fix


@pytest.mark.parametrize("start", [0.0, -1e9])
def test_check_running_max_and_sum_names_a_running_maximum_not_started_at_minus_infinity(start):
    def started(x, block):  # right but for the start: 0 (or -1e9) instead of -inf
        m, total = start, 0.0
        for i in range(0, len(x), block):
            chunk = x[i : i + block]
            new_max = max(m, chunk.max().item())
            total = total * math.exp(m - new_max) + torch.exp(chunk - new_max).sum().item()
            m = new_max
        return m, total

    with pytest.raises(
        ExerciseFailed, match=re.escape(f"started the running maximum at {start:g}")
    ):
        ch18.check_running_max_and_sum(started)


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("geometric", "power-of-two formula"),
        ("first ones", "every other one ([0::2])"),
        ("odd ones", "starting at the second ([1::2])"),
        ("ascending", "reverse order"),
    ],
)
def test_check_alibi_slopes_names_each_mistake(mistake, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch18.check_alibi_slopes(lambda n: ch18.slopes_reference(n, mistake=mistake))


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("local", "the tile's own lower triangle"),
        ("strict", "hides the diagonal"),
        ("inverted", "True where a query may NOT attend"),
        ("transposed", "the keys after it"),
        ("no_j0", "columns are keys j0 + c, not c"),
        ("no_i0", "rows are queries i0 + r, not r"),
        ("tril_sign", "`tril(diagonal=j0 - i0)`: the offset's sign is reversed"),
    ],
)
def test_check_tile_mask_names_each_mistake(mistake, message):
    def wrong(i0, i1, j0, j1):
        return ch18.tile_mask_reference(i0, i1, j0, j1, mistake=mistake)

    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch18.check_tile_mask(wrong)
    with pytest.raises(ExerciseFailed, match="torch.bool"):
        ch18.check_tile_mask(
            lambda i0, i1, j0, j1: ch18.tile_mask_reference(i0, i1, j0, j1).float()
        )


def _one_pass(x, block, size=None):
    """The online softmax in blocks of ``size`` (default: ``block``), as a reader writes it."""
    m, total = -math.inf, 0.0
    for start in range(0, len(x), size or block):
        chunk = x[start : start + (size or block)]
        new_max = max(m, chunk.max().item())
        total = total * math.exp(m - new_max) + torch.exp(chunk - new_max).sum().item()
        m = new_max
    return m, total


def _two_passes_over_x(x, block):
    m = x.max()
    return m, torch.exp(x - m).sum()


def _two_passes_over_blocks(x, block):
    m = max(x[s : s + block].max().item() for s in range(0, len(x), block))
    return m, sum(torch.exp(x[s : s + block] - m).sum().item() for s in range(0, len(x), block))


def _loop_over_x(x, block):
    m, total = -math.inf, 0.0
    for value in x:  # one pass, in blocks of 1
        new_max = max(m, value.item())
        total, m = total * math.exp(m - new_max) + math.exp(value.item() - new_max), new_max
    return m, total


def _one_score_at_a_time(x, block):
    m, total = -math.inf, 0.0
    for i in range(len(x)):
        new_max = max(m, float(x[i]))
        total, m = total * math.exp(m - new_max) + math.exp(float(x[i]) - new_max), new_max
    return m, total


@pytest.mark.parametrize(
    "answer, message",
    [
        (_two_passes_over_x, "reads all 5 scores at once"),
        (_two_passes_over_blocks, "reads block 0 (scores 0 to 1) again after block 2"),
        (lambda x, block: _one_pass(x, block, size=2), "in different blocks of 3"),
        (lambda x, block: _one_pass(x, block, size=len(x)), "reads all 5 scores at once"),
        (_one_score_at_a_time, "never reads block 0 (scores 0 to 1) as one tensor"),
        (_loop_over_x, "loops over x score by score (`for v in x`): one pass, but in blocks of 1"),
    ],
)
def test_check_running_max_and_sum_rejects_right_values_read_otherwise_than_one_pass(
    answer, message
):
    # each of these gives the right m and l: only how it reads x is wrong
    for _, x, block in ch18._running_cases():
        m, total = answer(x, block)
        assert (float(m), float(total)) == pytest.approx(ch18.running_reference(x, block), rel=1e-5)
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch18.check_running_max_and_sum(answer)


def test_check_running_max_and_sum_accepts_other_ways_of_reading_blocks():
    def split(x, block):  # torch.split, tensors throughout
        m, total = torch.tensor(-math.inf), torch.tensor(0.0)
        for chunk in x.double().split(block):
            new_max = torch.maximum(m, chunk.amax())
            total, m = total * torch.exp(m - new_max) + torch.exp(chunk - new_max).sum(), new_max
        return m, total

    def numbers(x, block):  # each block as Python numbers
        m, total = -math.inf, 0.0
        for start in range(0, x.shape[0], block):
            values = x[start : start + block].tolist()
            new_max = max(m, *values)
            total = total * math.exp(m - new_max) + sum(math.exp(v - new_max) for v in values)
            m = new_max
        return m, total

    for answer in (_one_pass, split, numbers):
        assert ch18.check_running_max_and_sum(answer).passed


def test_check_alibi_slopes_refuses_lib_alibi():
    import lib
    import lib.alibi

    slopes = alibi_slopes  # a name of the reader's own for the library's function

    for answer in (
        lambda n: alibi_slopes(n),
        lambda n: lib.alibi.alibi_slopes(n).tolist(),
        lambda n: slopes(n),
    ):
        with pytest.raises(ExerciseFailed, match=re.escape("calls lib.alibi (alibi_slopes);")):
            ch18.check_alibi_slopes(answer)
    # its private helper is named as it is (lecturer review course46, M3)
    from lib.alibi import _slopes

    for answer in (lambda n: lib.alibi._slopes(n), lambda n: _slopes(n)):
        with pytest.raises(ExerciseFailed, match=re.escape("calls lib.alibi (_slopes);")):
            ch18.check_alibi_slopes(answer)


def _reference_tensor(n):
    return torch.tensor(ch18.slopes_reference(n), dtype=torch.float64)


def test_check_alibi_slopes_accepts_float32_and_shows_the_digits_that_differ():
    assert ch18.check_alibi_slopes(lambda n: _reference_tensor(n).float().tolist()).passed

    def off(n):  # the last slope off by 1e-5 of itself: far beyond float32's rounding
        slopes = ch18.slopes_reference(n)
        slopes[-1] *= 1 + 1e-5
        return slopes

    with pytest.raises(
        ExerciseFailed, match=r"'n = 8', head 7 gets 0\.0039\d+; expected 0\.0039"
    ) as e:
        ch18.check_alibi_slopes(off)
    got, expected = re.search(r"gets (\S+); expected (\S+)\.", str(e.value)).groups()
    assert got != expected


def test_check_tile_mask_names_the_shapes_it_received_and_expected():
    with pytest.raises(ExerciseFailed, match=re.escape("shape [4, 3]; expected shape [4, 4]")):
        ch18.check_tile_mask(lambda i0, i1, j0, j1: torch.ones(i1 - i0, j1 - j0 - 1).bool())


@pytest.mark.parametrize("log_sum_exp", [True, False])
def test_check_running_max_and_sum_names_a_logarithm_returned_for_the_sum(log_sum_exp):
    def logged(x, block):
        m, total = _one_pass(x, block)
        return m, (m if log_sum_exp else 0.0) + math.log(total)

    message = "the log-sum-exp m + log l" if log_sum_exp else "the logarithm of the sum"
    with pytest.raises(ExerciseFailed, match=re.escape(message)):
        ch18.check_running_max_and_sum(logged)


@pytest.mark.parametrize(
    "answer, message",
    [
        (lambda n: [2 ** (-8 * h / n) for h in range(n)], "one head off: head 0 gets 2^0 = 1"),
        (lambda n: [1 / s for s in ch18.slopes_reference(n)], "the inverses of ALiBi's"),
        (
            lambda n: ch18.slopes_reference(2 ** math.ceil(math.log2(n)))[:n],
            "the first 6 slopes of the next power of two (8 heads)",
        ),
        (lambda n: [math.log2(s) for s in ch18.slopes_reference(n)], "logarithms (base 2)"),
    ],
)
def test_check_alibi_slopes_names_the_slips_without_giving_the_slopes(answer, message):
    with pytest.raises(ExerciseFailed, match=re.escape(message)) as e:
        ch18.check_alibi_slopes(answer)
    assert "expected" not in str(e.value)


def _stops_a_block_early(x, block):  # the off-by-one loop: the last block is never read
    m, total = -math.inf, 0.0
    for start in range(0, len(x) - block, block):
        chunk = x[start : start + block]
        new_max = max(m, chunk.max().item())
        total = total * math.exp(m - new_max) + torch.exp(chunk - new_max).sum().item()
        m = new_max
    return m, total


def _numpy_whole(x, block):  # the right loop, on a NumPy copy of the whole of x
    import numpy as np

    scores = x.numpy()
    m, total = -math.inf, 0.0
    for start in range(0, len(scores), block):
        chunk = scores[start : start + block]
        new_max = max(m, float(chunk.max()))
        total = total * math.exp(m - new_max) + float(np.exp(chunk - new_max).sum())
        m = new_max
    return m, total


def test_check_running_max_and_sum_names_a_loop_that_stops_early_and_a_whole_copy():
    with pytest.raises(ExerciseFailed) as e:
        ch18.check_running_max_and_sum(_stops_a_block_early)
    message = str(e.value)
    assert "'x = [1, 3, 2, 5, 0], block 2'" in message
    assert "those of scores 0 to 3 only: your sum misses score 4, at the end of x" in message
    assert "range(0, len(x), block)" in message and "rescale" not in message
    with pytest.raises(ExerciseFailed) as e:
        ch18.check_running_max_and_sum(_numpy_whole)
    message = str(e.value)
    assert "the values are right but your function converts all 5 scores at once (x.numpy())" in (
        message
    )
    assert "two passes" not in message and "Slice the tensor itself" in message


def test_check_running_max_and_sum_follows_a_copy_made_by_a_constructor():
    """Reader s23, T1: the right loop on torch.tensor(x) or torch.as_tensor(x, dtype=...) passes, as
    on x.double(); on a copy it cannot follow, the checker says so and blames no loop."""
    copies = (
        lambda x: torch.tensor(x),
        lambda x: torch.as_tensor(x, dtype=torch.float64),
        lambda x: torch.asarray(x),
        lambda x: x.new_tensor(x),
        lambda x: x.double(),
    )
    for copy in copies:
        assert ch18.check_running_max_and_sum(lambda x, block: _one_pass(copy(x), block)).passed
    with pytest.raises(ExerciseFailed) as e:
        ch18.check_running_max_and_sum(lambda x, block: _one_pass(torch.Tensor(x), block))
    message = str(e.value)
    assert "reads scores 0 to 4 from a copy of x that the checker cannot follow" in message
    assert "stops" not in message and "range(" not in message


def test_check_alibi_slopes_asks_for_a_list_of_floats():
    """The task asks for a list of floats: a tensor or a NumPy array of the right slopes is refused
    by its type (reader s20: a tensor passed), and so is a string or a list one short."""
    import numpy as np

    for answer, kind in (
        (lambda n: _reference_tensor(n), "a torch.Tensor"),
        (lambda n: np.array(ch18.slopes_reference(n), np.float32), "a NumPy array"),
    ):
        with pytest.raises(
            ExerciseFailed, match=re.escape(f"returned {kind}; expected a list of 8 floats")
        ):
            ch18.check_alibi_slopes(answer)
    with pytest.raises(ExerciseFailed, match=re.escape("returned str '0.5'; expected a list of 8")):
        ch18.check_alibi_slopes(lambda n: "0.5")
    with pytest.raises(ExerciseFailed, match=re.escape("returned 7 numbers; expected a list of 8")):
        ch18.check_alibi_slopes(lambda n: ch18.slopes_reference(n)[:-1])


def test_check_alibi_slopes_names_the_first_wrong_head():
    def half(n):  # the wrong base: k = n // 2 heads first (3 for 6 heads), not the power of two
        def geometric(m):
            return [2 ** (-8 * (h + 1) / m) for h in range(m)]

        if n & (n - 1) == 0:
            return geometric(n)
        k = n // 2
        return geometric(k) + geometric(2 * k)[0::2][: n - k]

    with pytest.raises(ExerciseFailed) as e:
        ch18.check_alibi_slopes(half)
    assert re.search(r"'n = 6', head 0 gets 0\.15749\d*; expected 0\.25", str(e.value)), str(
        e.value
    )


def test_check_running_max_and_sum_names_m_and_l_returned_the_other_way_round():
    def swapped(x, block):
        m, total = _one_pass(x, block)
        return total, m

    with pytest.raises(ExerciseFailed, match=re.escape("you returned (l, m)")):
        ch18.check_running_max_and_sum(swapped)
    # a wrong maximum that is not the sum is not called a swap
    with pytest.raises(ExerciseFailed, match="the largest score is 5") as raised:
        ch18.check_running_max_and_sum(lambda x, block: (4.0, _one_pass(x, block)[1]))
    assert "(l, m)" not in str(raised.value)


def test_check_running_max_and_sum_names_a_maximum_never_carried():
    # a reader's slip (review s25): new_max is computed but m = new_max is never written
    def uncarried(x, block):
        m, total = -math.inf, 0.0
        for start in range(0, len(x), block):
            x_b = x[start : start + block]
            new_max = max(m, x_b.max().item())
            total = total * math.exp(m - new_max) + torch.exp(x_b - new_max).sum().item()
        return new_max, total

    with pytest.raises(ExerciseFailed, match="not carried from block to block"):
        ch18.check_running_max_and_sum(uncarried)


def test_check_tile_mask_names_the_reviewers_mask_that_ignores_j0():
    # a reader's answer: query positions against the keys' places in the tile
    def wrong(i0, i1, j0, j1):
        return torch.arange(0, j1 - j0)[None] <= torch.arange(i0, i1)[:, None]

    assert torch.equal(wrong(0, 4, 2, 4), ch18.tile_mask_reference(0, 4, 2, 4, mistake="no_j0"))
    with pytest.raises(ExerciseFailed, match=re.escape("ignoring j0: columns are keys j0 + c")):
        ch18.check_tile_mask(wrong)


def test_check_tile_mask_names_trils_offset_with_the_wrong_sign():
    # a reader's answer after the tril hint: the offset j0 - i0 where the right one is i0 - j0
    def wrong(i0, i1, j0, j1):
        return torch.ones(i1 - i0, j1 - j0, dtype=torch.bool).tril(diagonal=j0 - i0)

    def right(i0, i1, j0, j1):
        return torch.ones(i1 - i0, j1 - j0, dtype=torch.bool).tril(diagonal=i0 - j0)

    assert ch18.check_tile_mask(right).passed
    with pytest.raises(ExerciseFailed, match=re.escape("in terms of c - r")) as raised:
        ch18.check_tile_mask(wrong)
    assert "wrong at query" not in str(raised.value)
    assert "i0 - j0" not in str(raised.value)  # names the mistake, does not hand over the fix


def test_check_tile_mask_names_an_additive_mask():
    # 0 where a query may attend, -inf where not: right in the additive convention
    def additive(i0, i1, j0, j1):
        allowed = ch18.tile_mask_reference(i0, i1, j0, j1)
        return torch.zeros(allowed.shape).masked_fill(~allowed, -math.inf)

    with pytest.raises(ExerciseFailed, match="additive mask") as raised:
        ch18.check_tile_mask(additive)
    assert "torch.bool" in str(raised.value)


def test_check_running_max_and_sum_accepts_the_blocks_in_any_order_each_read_once():
    def reverse(x, block):  # the update does not depend on the order of the blocks
        m, total = -math.inf, 0.0
        for start in reversed(range(0, len(x), block)):
            chunk = x[start : start + block]
            new_max = max(m, chunk.max().item())
            total = total * math.exp(m - new_max) + torch.exp(chunk - new_max).sum().item()
            m = new_max
        return m, total

    assert ch18.check_running_max_and_sum(reverse).passed

    def reverse_then_again(x, block):  # each block once in reverse, then block 1 a second time
        m, total = reverse(x, block)
        x[block : 2 * block].max()
        return m, total

    with pytest.raises(
        ExerciseFailed, match=re.escape("reads block 1 (scores 2 to 3) again after block 0")
    ):
        ch18.check_running_max_and_sum(reverse_then_again)


def test_check_running_max_and_sum_names_a_low_precision_not_an_algorithm_error():
    def half(x, block):  # the right algorithm, in float16
        x = x.half()
        m, total = torch.tensor(-math.inf).half(), torch.tensor(0.0).half()
        for start in range(0, len(x), block):
            chunk = x[start : start + block]
            new_max = torch.maximum(m, chunk.max())
            total = total * torch.exp(m - new_max) + torch.exp(chunk - new_max).sum()
            m = new_max
        return m, total

    with pytest.raises(ExerciseFailed, match=re.escape("not to float32 precision")):
        ch18.check_running_max_and_sum(half)


def test_the_graders_slope_cases_reach_beyond_any_pasted_table(monkeypatch):
    """Lecturer review s22, S3: a pasted table of the slopes of 1 to 256 heads passed every private
    case. The grader's cases (a seed) end with a head count in the thousands: the worked solution
    passes them, the table does not."""
    monkeypatch.setitem(ch18.SEEDS, "slopes_for", 7)
    assert 1000 <= ch18._slope_cases()[-1] < 10000
    assert ch18.check_alibi_slopes(
        solution_function(CHAPTER, "check_alibi_slopes", "slopes_for")
    ).passed
    table = {n: ch18.slopes_reference(n) for n in range(1, 257)}
    with pytest.raises(ExerciseFailed):
        ch18.check_alibi_slopes(lambda n: list(table[n]))


# --- exercise 4: the backward of one tile -------------------------------------------------------------


def _worked_tile_backward():
    return solution_function(CHAPTER, "check_tile_backward", "tile_backward")


def test_the_tile_backward_reference_is_the_librarys_and_sums_to_autograd():
    """Every tile's reference share, summed, is autograd's gradient of the whole attention, and is
    what lib.flash's backward adds for that tile (its loop, without a mask, one head)."""
    from lib.flash import flash_attention

    for name, bq, bk, q, k, v, do, _ in ch18._backward_cases():
        T, d = q.shape
        lse, delta, *expected = ch18._full_backward(q, k, v, do)
        sums = [torch.zeros(T, d, dtype=torch.float64) for _ in range(3)]
        for i0, i1 in ch18._tiles(T, bq):
            for j0, j1 in ch18._tiles(T, bk):
                dq, dk, dv = ch18.tile_backward_reference(
                    q[i0:i1], k[j0:j1], v[j0:j1], do[i0:i1], lse[i0:i1], delta[i0:i1], d**-0.5
                )
                sums[0][i0:i1] += dq
                sums[1][j0:j1] += dk
                sums[2][j0:j1] += dv
        assert all((a - e).abs().max() < 1e-9 for a, e in zip(sums, expected)), name
        leaves = [t.double().requires_grad_(True) for t in (q, k, v)]
        out = flash_attention(*(t[None, None] for t in leaves), None, False, None, bq, bk)
        library = torch.autograd.grad(out, leaves, do.double()[None, None])
        assert all((a - e).abs().max() < 1e-9 for a, e in zip(library, expected)), name


@pytest.mark.parametrize("seed", [4, 184, 7])
def test_check_tile_backward_accepts_the_worked_solution_in_float32_on_any_seed(monkeypatch, seed):
    monkeypatch.setitem(ch18.SEEDS, "tile_backward", seed)
    assert ch18.check_tile_backward(_worked_tile_backward()).passed


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("renormalised", "softmax of the tile's own scores"),
        ("scores unscaled", "recomputed the scores as q k^T, without `scale`"),
        ("no delta", "your dS is P * dP"),
        ("delta from the tile", "you summed P * dP over this tile's keys"),
        ("scale forgotten", "lack the factor `scale`"),
        ("scale twice", "carry `scale` twice"),
        ("transposed", "use dS the wrong way round"),
        ("dv transposed", "your dV is P dO"),
    ],
)
@pytest.mark.parametrize("seed", [4, 184])
def test_check_tile_backward_names_each_mistake(monkeypatch, seed, mistake, message):
    monkeypatch.setitem(ch18.SEEDS, "tile_backward", seed)

    def wrong(q, k, v, do, lse, delta, scale):
        grads = ch18.tile_backward_reference(q, k, v, do, lse, delta, scale, mistake=mistake)
        return tuple(g.float() for g in grads)

    with pytest.raises(ExerciseFailed, match=re.escape(message)) as failed:
        ch18.check_tile_backward(wrong)
    # the message names the mistake, not the formula that fixes it
    assert "ds.T @ q" not in str(failed.value) and "p.T @ do" not in str(failed.value)


def test_check_tile_backward_names_an_overflow_a_swap_and_a_low_precision():
    worked = _worked_tile_backward()

    def overflow(q, k, v, do, lse, delta, scale):  # exp(S) / exp(L): right in exact arithmetic
        p = torch.exp(q @ k.T * scale) / torch.exp(lse[:, None])
        ds = p * (do @ v.T - delta[:, None])
        return scale * ds @ k, scale * ds.T @ q, p.T @ do

    with pytest.raises(ExerciseFailed, match="scores reach|an exponential overflowed"):
        ch18.check_tile_backward(overflow)

    def swapped(*args):
        dq, dk, dv = worked(*args)
        return dk, dq, dv

    with pytest.raises(ExerciseFailed, match=re.escape("you returned (dk, dq, dv)")):
        ch18.check_tile_backward(swapped)

    def half(q, k, v, do, lse, delta, scale):
        grads = worked(*(t.half() for t in (q, k, v, do, lse, delta)), scale)
        return tuple(g.float() for g in grads)

    with pytest.raises(ExerciseFailed, match="your dq is wrong: the largest difference"):
        ch18.check_tile_backward(half)
    with pytest.raises(ExerciseFailed, match=re.escape("expected three tensors, (dq, dk, dv)")):
        ch18.check_tile_backward(lambda *args: worked(*args)[:2])


def test_check_tile_backward_names_autograd_in_the_answer():
    """Reader s30, chapter 18: an answer that asks autograd for the tile's gradients got torch's bare
    "element 0 of tensors does not require grad"; the checker says the exercise wants them by hand."""

    def by_autograd(q, k, v, do, lse, delta, scale):
        q, k, v = (x.clone().requires_grad_() for x in (q, k, v))
        o = torch.softmax(q @ k.T * scale, dim=-1) @ v
        return torch.autograd.grad(o, (q, k, v), do)

    with pytest.raises(ExerciseFailed) as failed:
        ch18.check_tile_backward(by_autograd)
    message = str(failed.value)
    assert "without autograd" in message and "autograd off" in message, message


def test_check_tile_backward_says_not_attempted_to_the_template():
    def tile_backward(q, k, v, do, lse, delta, scale): ...

    assert ch18.check_tile_backward(tile_backward).status == "not attempted"


@pytest.mark.parametrize("value", [True, False])
def test_check_tile_mask_names_a_constant_mask(value):
    # a course review: a stub returning a constant tensor of the right shape was told it ignored j0
    def constant(i0, i1, j0, j1):
        return torch.full((i1 - i0, j1 - j0), value)

    with pytest.raises(
        ExerciseFailed, match=f"{value} at every query and key, whatever the tile"
    ) as raised:
        ch18.check_tile_mask(constant)
    assert "ignoring" not in str(raised.value)


def test_check_running_max_and_sum_and_tile_backward_name_a_constant_answer():
    # a constant (0, 1) was named "the last block's own maximum" on the first case
    with pytest.raises(ExerciseFailed, match=re.escape("(m, l) = (0, 1) on every case")):
        ch18.check_running_max_and_sum(lambda x, block: (0.0, 1.0))

    def zeros(q, k, v, do, lse, delta, scale):
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)

    with pytest.raises(ExerciseFailed, match="your dq is 0 at every entry"):
        ch18.check_tile_backward(zeros)
