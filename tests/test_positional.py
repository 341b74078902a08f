"""Tests of lib/positional.py in three tiers -- shapes, properties, equivalence to the formulas as
written -- and bad input. Tolerances are explicit; the comment next to each says why.
"""

import math
import re

import pytest
import torch

from lib.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    binary_encoding,
    relative_rotation,
    sinusoidal_encoding,
)
from tests.tolerance import assert_float_close, float_bound


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# The tables are computed in float64 and rounded once to float32: against a float64 reference, 1 term
# of float32's eps on values of size <= 1 (tests/tolerance.py).


# ============================================ tier 1: shapes ============================================


@pytest.mark.parametrize("max_len, d_model", [(1, 1), (10, 4), (50, 7), (3, 64)])
def test_sinusoidal_shape_and_dtype(max_len, d_model):
    pe = sinusoidal_encoding(max_len, d_model)
    assert pe.shape == (max_len, d_model) and pe.dtype == torch.float32


def test_binary_and_rotation_shapes():
    b = binary_encoding(10, 5)
    assert b.shape == (10, 5) and b.dtype == torch.float32
    assert set(b.unique().tolist()) == {0.0, 1.0}
    m = relative_rotation(3, 8)
    assert m.shape == (8, 8) and m.dtype == torch.float32
    # block-diagonal: nothing outside the 2x2 blocks on the diagonal
    blocks = torch.block_diag(*[torch.ones(2, 2)] * 4).bool()
    assert torch.equal(m[~blocks], torch.zeros(int((~blocks).sum())))


def test_module_shapes_buffers_and_parameters():
    sin, learned = (
        SinusoidalPositionalEncoding(8, max_len=20),
        LearnedPositionalEmbedding(8, max_len=20),
    )
    x = randn(3, 5, 8)
    assert sin(x).shape == (3, 5, 8) and learned(x).shape == (3, 5, 8)
    assert sin(x[0]).shape == (5, 8)  # no batch dim at all
    assert sin.pe.shape == (20, 8) and list(sin.parameters()) == []
    assert "pe" not in sin.state_dict()  # a fixed function, not a weight: kept out of checkpoints
    assert dict((n, tuple(p.shape)) for n, p in learned.named_parameters()) == {
        "embedding.weight": (20, 8)
    }


def test_learned_initialization_is_gpt_s():
    torch.manual_seed(0)
    w = LearnedPositionalEmbedding(64, max_len=512).embedding.weight
    # N(0, 0.02^2) with 32768 draws: the sample std is within ~1% of 0.02 (0.5% standard error)
    assert abs(w.std().item() - 0.02) < 0.0004 and abs(w.mean().item()) < 0.001


# ============================================ tier 2: properties ========================================


def test_values_in_unit_interval_and_row_zero():
    pe = sinusoidal_encoding(1000, 64)
    assert pe.abs().max() <= 1.0
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0] * 32))  # sin 0 = 0, cos 0 = 1, exactly
    # every (sin, cos) pair lies on the unit circle: the two table roundings, two squares and a sum
    assert_float_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(1000, 32), terms=2 + 2 + 1)


@pytest.mark.parametrize("d_model", [4, 16, 64])
def test_shift_by_k_is_a_fixed_rotation(d_model):
    pe = sinusoidal_encoding(600, d_model)
    for k in [0, 1, 2, 5, 17, 100, -1, -3, -250]:
        # every pos with pos and pos + k in the table
        pos = torch.arange(max(0, -k), 600 - max(0, k))
        m = relative_rotation(k, d_model)
        # each entry of PE[pos] @ M_k.T is a sum over d_model (all but two terms exact zeros) of
        # numbers in [-1, 1], on tables rounded once to float32 (PE[pos], M_k, PE[pos + k]): terms
        # d_model + 3, still far below what a wrong k, sign or block produces (below)
        assert_float_close(pe[pos] @ m.T, pe[pos + k], terms=d_model + 3)
    pos = torch.arange(0, 500)
    # it can fail
    assert (pe[pos] @ relative_rotation(3, d_model).T - pe[pos + 2]).abs().max() > 1e-2
    # M_k, not M_k.T
    assert (pe[pos] @ relative_rotation(3, d_model) - pe[pos + 3]).abs().max() > 1e-2


def test_rotations_compose_and_are_orthogonal():
    m2, m5, m7, m_2 = (relative_rotation(k, 16) for k in (2, 5, 7, -2))
    # products over 16 of rotations with entries in [-1, 1], each table rounded once to float32
    assert_float_close(m2 @ m5, m7, terms=16 + 3)
    assert_float_close(m2 @ m2.T, torch.eye(16), terms=16 + 2)
    assert_float_close(m_2, m2.T, terms=2)  # cos is even, sin odd: only the two tables' rounding
    assert torch.equal(relative_rotation(0, 16), torch.eye(16))


def test_dot_product_depends_only_on_the_distance():
    d = 64
    pe = sinusoidal_encoding(400, d).double()  # the float32 table, dot products summed in float64
    gram = pe @ pe.T  # [P, P]: PE[p] . PE[q]
    # PE[p] . PE[q] = sum_i cos(w_i (p - q)), a function of |p - q|. Each of the 64 products carries
    # the two float32 factors' rounding (2 terms of float32's eps, the float64 sums far below), of
    # products whose sizes add up to at most d/2 = 32 (Cauchy-Schwarz)
    bound = float_bound(torch.ones(()), terms=2, scale=d / 2, dtype=torch.float32)
    w = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    for delta in [0, 1, 2, 9, 50, 123]:
        p = torch.arange(0, 400 - delta)
        expected = torch.cos(w * delta).sum().expand(len(p))
        torch.testing.assert_close(gram[p, p + delta], expected, rtol=0, atol=bound)
        torch.testing.assert_close(gram[p + delta, p], expected, rtol=0, atol=bound)  # -delta: same
    # ... and it does change with the distance (so the test above could fail): d/2 = 32 at delta 0
    assert gram[0, 0] == pytest.approx(32.0, abs=bound) and gram[0, 1] < 31.5 and gram[0, 50] < 20


def test_binary_lowest_bit_flips_fastest():
    b = binary_encoding(64, 6)
    for j in range(6):
        # bit j is constant on runs of 2^j positions and flips between runs
        runs = b[:, j].reshape(-1, 2**j)
        assert torch.equal(runs, runs[:, :1].expand_as(runs))
        assert torch.all(runs[1:, 0] != runs[:-1, 0])


@pytest.mark.parametrize("module_cls", [SinusoidalPositionalEncoding, LearnedPositionalEmbedding])
def test_modules_add_the_right_rows(module_cls):
    mod = module_cls(6, max_len=10)
    table = mod.pe if module_cls is SinusoidalPositionalEncoding else mod.embedding.weight.detach()
    x = randn(2, 7, 6)
    out = mod(x).detach()
    assert torch.equal(out, x + table[:7])  # the same float32 addition: exact
    assert torch.equal(mod(torch.zeros(1, 7, 6)).detach()[0], table[:7])  # row t goes to position t
    assert torch.equal(mod(torch.zeros(1, 10, 6)).detach()[0], table)  # T = max_len is allowed
    # every row differs from the next, so adding a shifted slice could not pass the checks above
    assert (table[1:] - table[:-1]).abs().amax(-1).min() > 1e-3


def test_sinusoidal_module_table_and_dropout():
    mod = SinusoidalPositionalEncoding(16, max_len=50, dropout=0.5)
    assert torch.equal(mod.pe, sinusoidal_encoding(50, 16))
    x = randn(4, 30, 16)
    assert torch.equal(mod.eval()(x), x + mod.pe[:30])  # no dropout in eval mode
    y = mod.train()(x)
    zeros = (y == 0).float().mean()  # about half dropped, the rest scaled by 1 / (1 - p) = 2
    assert 0.4 < zeros < 0.6
    kept = y != 0
    # the kept entries are (x + pe) * 2: the same addition, and a multiply by a power of two: exact
    torch.testing.assert_close(y[kept], 2 * (x + mod.pe[:30])[kept], rtol=0, atol=0)
    # follows dtype
    assert torch.equal(mod.double().eval()(x.double()), x.double() + mod.pe[:30].double())


# ============================================ tier 3: the formulas as written ============================


@pytest.mark.parametrize("d_model, base", [(4, 10000.0), (7, 10000.0), (64, 10000.0), (6, 100.0)])
def test_sinusoidal_matches_double_loop(d_model, base):
    max_len = 50
    # PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(pos / base^(2i/d)), Vaswani sec. 3.5
    loop = [
        [
            (math.sin if j % 2 == 0 else math.cos)(pos / base ** (2 * (j // 2) / d_model))
            for j in range(d_model)
        ]
        for pos in range(max_len)
    ]
    # the float32 table against float64: one rounding
    assert_float_close(
        sinusoidal_encoding(max_len, d_model, base),
        torch.tensor(loop, dtype=torch.float64),
        terms=1,
    )


def test_lecture_worked_example_d4():
    # d = 4, base 10000: PE(pos) = [sin(pos/10000^0), cos(pos/10000^0), sin(pos/10000^(2/4)), cos(...)]
    #                            = [sin pos, cos pos, sin(pos/100), cos(pos/100)]
    written_down = torch.tensor(
        [
            [0.0, 1.0, 0.0, 1.0],  # pos 0
            [0.8414710, 0.5403023, 0.0099998, 0.9999500],  # pos 1: sin 1, cos 1, sin 0.01, cos 0.01
            [0.9092974, -0.4161468, 0.0199987, 0.9998000],  # pos 2
            [0.1411200, -0.9899925, 0.0299955, 0.9995500],  # pos 3
        ],
        dtype=torch.float64,
    )
    pe = sinusoidal_encoding(4, 4).double()
    # values written by hand: they are rounded to 7 decimals (<= 5e-8), the table to float32
    # (<= 6e-8): a bound from those roundings, atol 2e-7
    torch.testing.assert_close(pe, written_down, rtol=0, atol=2e-7)
    by_formula = torch.tensor(
        [[math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)] for p in range(4)],
        dtype=torch.float64,
    )
    assert_float_close(sinusoidal_encoding(4, 4), by_formula, terms=1)  # one rounding to float32


def test_binary_rows_are_the_binary_numbers():
    b = binary_encoding(16, 4)
    for n in range(16):
        bits = [float(c) for c in reversed(format(n, "04b"))]  # bit 0 (least significant) first
        assert b[n].tolist() == bits, n
    assert b[6].tolist() == [0.0, 1.0, 1.0, 0.0]  # 6 = 0110
    weights = 2.0 ** torch.arange(4)
    assert torch.equal(b @ weights, torch.arange(16.0))  # reading the bits back gives 0 ... 15


def test_relative_rotation_matches_the_trig_identities():
    d, k = 6, 3
    m = relative_rotation(k, d)
    for i in range(d // 2):
        a = k / 10000.0 ** (2 * i / d)
        block = torch.tensor(
            [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]], dtype=torch.float64
        )
        # the float32 matrix against float64: one rounding
        assert_float_close(m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], block, terms=1)


# ============================================ bad input =================================================

BAD = [
    (
        lambda: SinusoidalPositionalEncoding(8, max_len=10)(torch.zeros(2, 11, 8)),
        ValueError,
        "x: sequence length T=11 exceeds max_len=10",
    ),
    (
        lambda: LearnedPositionalEmbedding(8, max_len=10)(torch.zeros(2, 11, 8)),
        ValueError,
        "x: sequence length T=11 exceeds max_len=10",
    ),
    (
        lambda: SinusoidalPositionalEncoding(8)(torch.zeros(2, 5, 6)),
        ValueError,
        "x: expected shape [B, T, 8], got shape (2, 5, 6)",
    ),
    (
        lambda: LearnedPositionalEmbedding(8)(torch.zeros(2, 5, 8, dtype=torch.float64)),
        TypeError,
        "x: expected dtype torch.float32 (same as the module's parameters), got torch.float64",
    ),
    (
        lambda: SinusoidalPositionalEncoding(8)(torch.zeros(8)),
        ValueError,
        "x: expected shape [B, T, 8] (at least 2 dims), got shape (8,)",
    ),
    (
        lambda: SinusoidalPositionalEncoding(8)(torch.zeros(2, 5, 8, dtype=torch.int64)),
        TypeError,
        "x: expected a floating-point tensor, got dtype torch.int64",
    ),
    (
        lambda: binary_encoding(17, 4),
        ValueError,
        "n_positions=17 does not fit in n_bits=4 (at most 2**4",
    ),
    (lambda: binary_encoding(0, 4), ValueError, "n_positions: expected an int >= 1, got 0"),
    (lambda: relative_rotation(1, 5), ValueError, "d_model=5 must be even"),
    (
        lambda: relative_rotation(1.5, 4),
        TypeError,
        "k: expected an int (a shift in positions), got float",
    ),
    (lambda: sinusoidal_encoding(10, 0), ValueError, "d_model: expected an int >= 1, got 0"),
    (lambda: sinusoidal_encoding(10.0, 4), TypeError, "max_len: expected an int, got float"),
    (
        lambda: sinusoidal_encoding(10, 4, base=0.0),
        ValueError,
        "base: expected a positive finite number, got 0.0",
    ),
    (
        lambda: LearnedPositionalEmbedding(8, max_len=0),
        ValueError,
        "max_len: expected an int >= 1, got 0",
    ),
]


@pytest.mark.parametrize("call, exc, message", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_is_caught_with_a_clear_message(call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call()
