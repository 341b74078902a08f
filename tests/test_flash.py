"""Tests of lib/flash.py (online softmax, tiled attention, FlashAttention's backward) and lib/alibi.py:
shapes, properties, equivalence to the plain attention of lib.attention, to torch's
scaled_dot_product_attention and to autograd, and bad input.

Tolerances follow tests/tolerance.py: terms counts the roundings on the way, written next to each.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from lib.alibi import alibi_bias, alibi_slopes
from lib.attention import causal_mask, masked_softmax, padding_mask, scaled_dot_product_attention
from lib.flash import flash_attention, online_softmax, tiled_attention
from tests.tolerance import assert_float_close, float_bound


def randn(*shape, seed=0, dtype=torch.float32, std=1.0):
    return std * torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def qkv(B=2, H=3, Tq=37, Tk=37, D=16, Dv=12, dtype=torch.float32):
    # scores q.k/sqrt(D) of standard deviation 1.5: weights neither uniform nor one-hot
    return (
        randn(B, H, Tq, D, seed=1, dtype=dtype, std=1.5**0.5),
        randn(B, H, Tk, D, seed=2, dtype=dtype, std=1.5**0.5),
        randn(B, H, Tk, Dv, seed=3, dtype=dtype),
    )


def plain(q, k, v, mask=None, slopes=None):
    """The reference: the whole [Tq, Tk] matrix of scores, ALiBi's bias added, lib's masked softmax."""
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if slopes is not None:
        scores = scores + alibi_bias(slopes, q.shape[-2], k.shape[-2]).to(q.dtype)
    weights = masked_softmax(scores, mask)
    return weights @ v, scores, weights


def forward_terms(D, Tk, block_k):
    """Tiled against plain, both in float32: each side's score is off by 1 + D roundings (the scaling
    of q, the product over D) of the scores' size; a score error ds moves an output by up to
    2 max|ds| times the values' size (so 2 * 2 (1 + D)); then the sum of exponentials over Tk keys
    and one rescaling of it per key tile; the weighted sum of the values over Tk; the division."""
    return 2 * 2 * (1 + D) + Tk + math.ceil(Tk / block_k) + Tk + 1


def forward_scale(scores, v):
    return max(1.0, scores.detach().abs().max().item()) * v.abs().max().item()


# ============================================ online softmax ============================================


@pytest.mark.parametrize("block", [1, 2, 3, 7, 10, 50])
def test_online_softmax_equals_softmax(block):
    x = randn(4, 3, 10, seed=5, dtype=torch.float64, std=3.0)
    result = online_softmax(x, block)
    # the exponentials (1 rounding each), the running sum over 10 terms, its rescaling at each of the
    # (at most 10) blocks, the division: 1 + 10 + 10 + 1 terms, of weights <= 1
    assert_float_close(result.weights, torch.softmax(x, -1), terms=1 + 10 + 10 + 1, scale=1)
    assert torch.equal(result.maximum, x.amax(-1))
    expected_total = torch.exp(x - x.amax(-1, keepdim=True)).sum(-1)
    assert_float_close(result.total, expected_total, terms=2 * 10 + 1)
    assert len(result.steps) == math.ceil(10 / block)


def test_online_softmax_steps_of_a_small_case():
    x = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0], dtype=torch.float64)
    steps = online_softmax(x, block=2).steps
    e = math.exp
    expected = [
        (3.0, e(1 - 3) + 1),  # block [1, 3]: the maximum 3, terms e^(1-3) + e^0
        (5.0, (e(1 - 3) + 1) * e(3 - 5) + e(2 - 5) + 1),  # a new maximum: old sum times e^(3-5)
        (5.0, (e(1 - 3) + 1) * e(3 - 5) + e(2 - 5) + 1 + e(-5)),  # the same maximum: add e^(0-5)
    ]
    for (m, total), (m_expected, l_expected) in zip(steps, expected):
        assert m.item() == m_expected
        assert abs(total.item() - l_expected) <= float_bound(torch.tensor(l_expected), terms=2 * 5)


def test_online_softmax_survives_scores_that_overflow_exp():
    x = torch.tensor([[1000.0, 1001.0, 999.0, -1000.0]])
    result = online_softmax(x, block=1)
    assert torch.isfinite(result.weights).all()
    assert_float_close(result.weights, torch.softmax(x, -1), terms=1 + 4 + 4 + 1, scale=1)


# ============================================ tiled attention: forward ============================================


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "T, block_q, block_k", [(37, 8, 5), (37, 64, 64), (32, 8, 16), (32, 1, 32), (5, 2, 3)]
)
def test_tiled_forward_equals_plain_attention(T, block_q, block_k, causal):
    q, k, v = qkv(Tq=T, Tk=T)
    mask = causal_mask(T) if causal else None
    expected, scores, weights = plain(q, k, v, mask)
    out, lse = tiled_attention(q, k, v, causal=causal, block_q=block_q, block_k=block_k)
    assert out.shape == expected.shape and out.dtype == q.dtype and lse.shape == q.shape[:-1]
    terms = forward_terms(16, T, block_k)
    assert_float_close(out, expected, terms=terms, scale=forward_scale(scores, v))
    library, _ = scaled_dot_product_attention(q, k, v, mask)  # lib.attention, the book's plain path
    assert_float_close(out, library, terms=terms, scale=forward_scale(scores, v))
    # the log-sum-exp: the scores' error (1 + D, both sides), the sum over T, the log
    reference_lse = torch.logsumexp(scores.masked_fill(~mask, -math.inf) if causal else scores, -1)
    assert_float_close(lse, reference_lse, terms=2 * (1 + 16) + T + 1, scale=scores.abs().max())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T, block", [(37, 8), (37, 6), (64, 16)])
def test_tiled_forward_equals_torch_sdpa_with_padding(T, block, causal):
    q, k, v = qkv(Tq=T, Tk=T)
    lengths = torch.tensor([T, T - 11])
    mask = padding_mask(lengths, T)  # [B, 1, 1, T]
    full = mask & causal_mask(T) if causal else mask
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=full)
    out, _ = tiled_attention(q, k, v, mask=mask, causal=causal, block_q=block, block_k=block + 1)
    _, scores, _ = plain(q, k, v)
    scale = forward_scale(scores, v)
    assert_float_close(out, expected, terms=forward_terms(16, T, block + 1), scale=scale)


def test_causal_queries_are_the_last_positions_as_with_a_cache():
    q, k, v = qkv(Tq=9, Tk=30)
    out, _ = tiled_attention(q, k, v, causal=True, block_q=4, block_k=7)
    expected, scores, _ = plain(q, k, v, causal_mask(9, past=21))
    assert_float_close(
        out, expected, terms=forward_terms(16, 30, 7), scale=forward_scale(scores, v)
    )


def test_a_row_with_no_allowed_key_gives_zeros_and_no_nan():
    q, k, v = qkv(B=1, H=1, Tq=6, Tk=10)
    mask = torch.ones(6, 10, dtype=torch.bool)
    mask[2] = False  # query 2 may attend nothing
    mask[4, :5] = False  # query 4 only the keys of the second tile
    out, lse = tiled_attention(q, k, v, mask=mask, block_q=3, block_k=5)
    assert torch.equal(out[..., 2, :], torch.zeros(1, 1, 12)) and lse[..., 2].item() == math.inf
    expected, scores, _ = plain(q, k, v, mask)
    assert_float_close(
        out, expected, terms=forward_terms(16, 10, 5), scale=forward_scale(scores, v)
    )
    q.requires_grad_(True)
    flash_attention(q, k, v, mask=mask, block_q=3, block_k=5).sum().backward()
    assert torch.isfinite(q.grad).all() and torch.equal(q.grad[..., 2, :], torch.zeros(1, 1, 16))


def test_half_precision_is_computed_in_float32_and_rounded_once():
    q, k, v = qkv(Tq=20, Tk=20)
    out, _ = tiled_attention(q.half(), k.half(), v.half(), causal=True, block_q=8, block_k=8)
    assert out.dtype == torch.float16
    expected, _, _ = plain(q.half().double(), k.half().double(), v.half().double(), causal_mask(20))
    # float32 inside (the forward's terms at float32's eps), then one rounding to float16 (eps 9.8e-4,
    # 8192 times float32's): the float16 rounding dominates; 2 terms of float16 cover both
    assert_float_close(out, expected, terms=2)


# ============================================ FlashAttention: backward ============================================


def _grads(f, q, k, v, d_out):
    q, k, v = (t.clone().requires_grad_(True) for t in (q, k, v))
    out = f(q, k, v)
    out.backward(d_out)
    return out.detach(), q.grad, k.grad, v.grad


@pytest.mark.parametrize(
    "causal, padded, alibi, block_q, block_k",
    [
        (False, False, False, 8, 5),
        (True, False, False, 8, 5),
        (True, True, False, 16, 16),
        (False, True, False, 6, 9),
        (True, False, True, 7, 8),
        (True, True, True, 64, 64),
    ],
)
def test_flash_gradients_equal_autograd_through_plain_attention(
    causal, padded, alibi, block_q, block_k
):
    T, D, Dv = 37, 16, 12
    q, k, v = qkv(Tq=T, Tk=T, D=D, Dv=Dv)
    d_out = randn(*q.shape[:-1], Dv, seed=9)
    mask = padding_mask(torch.tensor([T, 25]), T) if padded else None
    full = mask
    if causal:
        full = causal_mask(T) if mask is None else mask & causal_mask(T)
    slopes = alibi_slopes(3) if alibi else None

    def reference(q, k, v):
        return plain(q, k, v, full, slopes)[0]

    def flash(q, k, v):
        return flash_attention(q, k, v, mask, causal, slopes, block_q, block_k)

    expected = _grads(reference, q, k, v, d_out)
    actual = _grads(flash, q, k, v, d_out)
    # the sizes of the summed terms, from the reference in float64: P <= 1, dP = dO V^T,
    # dS = P (dP - D) with D_i = sum_j P_ij dP_ij
    _, scores, p = plain(q.double(), k.double(), v.double(), full, slopes)
    dp = d_out.double() @ v.double().transpose(-2, -1)
    ds = p * (dp - (p * dp).sum(-1, keepdim=True))
    s_max, do_max = max(1.0, scores.abs().max().item()), d_out.abs().max().item()
    v_max, qk_max = v.abs().max().item(), max(q.abs().max().item(), k.abs().max().item())
    weights_terms = 2 * 2 * (1 + D) + T + math.ceil(T / block_k) + 1  # the weights P, as forward
    # output: the forward's terms
    assert_float_close(
        actual[0], expected[0], terms=forward_terms(D, T, block_k), scale=s_max * v_max
    )
    # dV = P^T dO: P's error, then the sum over T queries and one addition per query tile
    dv_terms = weights_terms + T + math.ceil(T / block_q)
    assert_float_close(actual[3], expected[3], terms=dv_terms, scale=s_max * do_max)
    # dS: P's error times |dP - D| (dP over Dv, D over Dv and T), then dQ = dS K / sqrt(D) summed
    # over T keys (one addition per key tile) and dK = dS^T Q / sqrt(D) over T queries
    ds_scale = s_max * 2 * Dv * do_max * v_max  # |dP - D| <= 2 Dv max|dO| max|V|
    dqk_terms = weights_terms + 2 * Dv + T + 2 + T + math.ceil(T / min(block_q, block_k)) + 1
    for got, want in ((actual[1], expected[1]), (actual[2], expected[2])):
        assert_float_close(got, want, terms=dqk_terms, scale=ds_scale * qk_max / math.sqrt(D))
    assert ds.abs().max() > 0.1  # the gradients compared are not near zero


def test_flash_attention_keeps_the_dtype_and_passes_gradcheck_in_float64():
    q, k, v = (
        t.requires_grad_(True) for t in qkv(B=1, H=2, Tq=6, Tk=7, D=4, Dv=3, dtype=torch.float64)
    )
    mask = torch.rand(1, 1, 6, 7, generator=torch.Generator().manual_seed(0)) < 0.7
    mask[..., 0] = True
    slopes = alibi_slopes(2)

    def f(q, k, v):
        return flash_attention(q, k, v, mask, True, slopes, 4, 3)

    assert torch.autograd.gradcheck(f, (q, k, v))


# ============================================ memory ============================================


from benchmarks.common import peak_memory as _peak_bytes  # noqa: E402 (the benchmarks' counter)


def test_tiled_attention_never_holds_the_score_matrix():
    T, D = 1024, 64
    q, k, v = (randn(T, D, seed=s) for s in range(3))
    plain_peak = _peak_bytes(lambda: scaled_dot_product_attention(q, k, v))
    tiled_peak = _peak_bytes(lambda: tiled_attention(q, k, v, block_q=128, block_k=128))
    assert plain_peak >= 2 * T * T * 4  # the scores and the weights, T x T float32 each
    # the output [T, D] and lse [T], and a few tiles [128, 128] at a time
    assert tiled_peak <= T * D * 4 + T * 4 + 8 * 128 * 128 * 4 < plain_peak / 8


# ============================================ ALiBi ============================================


def test_alibi_slopes_of_eight_heads_are_the_papers():
    # Press et al. 2022, sec. 3: "for a model with 8 heads, the slopes ... are 1/2^1, 1/2^2, ..., 1/2^8"
    assert alibi_slopes(8).tolist() == [2.0**-h for h in range(1, 9)]
    sixteen = torch.tensor([2.0 ** (-h / 2) for h in range(1, 17)], dtype=torch.float64)
    assert_float_close(alibi_slopes(16), sixteen, terms=2)  # (2^-0.5)^h rounds: 2 eps
    assert alibi_slopes(1).tolist() == [2.0**-8]


@pytest.mark.parametrize(
    "n, expected",
    [
        # the 4 slopes of 4 heads, then slopes 0 and 2 of 8 heads (the released code's rule)
        (6, [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3]),
        # the 8 slopes of 8 heads, then slopes 0, 2, 4, 6 of 16 heads: 2^-0.5, 2^-1.5, ...
        (12, [2.0**-h for h in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]),
        (3, [2.0**-4, 2.0**-8, 2.0**-2]),
    ],
)
def test_alibi_slopes_of_other_head_counts_follow_the_released_code(n, expected):
    slopes = alibi_slopes(n)
    assert slopes.dtype == torch.float64
    # 2^(-8/n) to a power: the power is rounded once in float64, within 2 eps of the exact value
    assert_float_close(slopes, torch.tensor(expected, dtype=torch.float64), terms=2)


def test_alibi_bias_is_minus_slope_times_distance():
    slopes = alibi_slopes(4)
    bias = alibi_bias(slopes, 3, 5)  # queries at positions 2, 3, 4
    assert bias.shape == (4, 3, 5) and bias.dtype == torch.float64
    assert bias[0, 0].tolist() == [-0.5, -0.25, 0.0, -0.25, -0.5]  # m = 1/4, query at 2
    assert bias[1, 2].tolist() == [-4 / 16, -3 / 16, -2 / 16, -1 / 16, 0.0]


# ============================================ bad input ============================================


def test_bad_input_is_named():
    q, k, v = qkv(Tq=5, Tk=5)
    cases = [
        (TypeError, "q", lambda: tiled_attention(q.long(), k, v)),
        (ValueError, "k", lambda: tiled_attention(q, k[..., :8], v)),
        (ValueError, "leading dims", lambda: tiled_attention(q, k[:1], v[:1])),
        (ValueError, "v", lambda: tiled_attention(q, k, v[..., :4, :])),
        (TypeError, "mask", lambda: tiled_attention(q, k, v, mask=torch.ones(5, 5))),
        (
            ValueError,
            "mask",
            lambda: tiled_attention(q, k, v, mask=torch.ones(4, 5, dtype=torch.bool)),
        ),
        (TypeError, "causal", lambda: tiled_attention(q, k, v, causal=1)),
        (
            ValueError,
            "causal",
            lambda: tiled_attention(q, k[..., :3, :], v[..., :3, :], causal=True),
        ),
        (
            ValueError,
            "alibi_slopes",
            lambda: tiled_attention(q, k, v, alibi_slopes=alibi_slopes(4)),
        ),
        (ValueError, "block_q", lambda: flash_attention(q, k, v, block_q=0)),
        (TypeError, "block_k", lambda: flash_attention(q, k, v, block_k=2.0)),
        (ValueError, "block", lambda: online_softmax(torch.ones(3), block=0)),
        (ValueError, "x", lambda: online_softmax(torch.ones(2, 0))),
        (TypeError, "x", lambda: online_softmax([1.0, 2.0])),
        (ValueError, "n_heads", lambda: alibi_slopes(0)),
        (TypeError, "n_heads", lambda: alibi_slopes(8.0)),
        (ValueError, "Tq", lambda: alibi_bias(alibi_slopes(2), 6, 5)),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name):
            call()
