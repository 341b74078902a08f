"""Tests of lib/attention.py in three tiers -- shapes, properties, equivalence to a reference --
and bad input.

Tolerances are explicit everywhere; the comment next to each says why it is the right size.
"""

import math
import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lib.attention import (
    AdditiveScore,
    GeneralScore,
    LocationScore,
    additive_mask,
    attend,
    cosine_score,
    dot_product_score,
    masked_softmax,
    scaled_dot_product_attention,
    scaled_dot_product_score,
)
from tests.tolerance import assert_float_close


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def random_mask(*shape, seed=0, p_allowed=0.6, keep_one=True):
    """Random bool mask; with keep_one, key 0 is always allowed so no row is fully masked."""
    mask = torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) < p_allowed
    if keep_one:
        mask[..., 0] = True
    return mask


def randomized(module, seed=0):
    """The module with every parameter drawn from N(0, 1): the default inits are small (or zero, for
    AdditiveScore's v_a), which would let a wrong formula pass a comparison of near-zero numbers."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


PARAM_FREE_SCORES = [dot_product_score, scaled_dot_product_score, cosine_score]
SIZES = [(1, 1, 1, 4), (2, 3, 5, 8), (4, 7, 2, 3)]  # (B, Tq, Tk, D)


# ============================================ tier 1: shapes ============================================


@pytest.mark.parametrize("score", PARAM_FREE_SCORES)
@pytest.mark.parametrize("B, Tq, Tk, D", SIZES)
def test_param_free_score_shapes(score, B, Tq, Tk, D):
    assert score(randn(B, Tq, D), randn(B, Tk, D, seed=1)).shape == (B, Tq, Tk)
    # extra leading dims, and leading dims that broadcast: [B, 1] against [1, H]
    assert score(randn(B, 3, Tq, D), randn(B, 3, Tk, D)).shape == (B, 3, Tq, Tk)
    assert score(randn(B, 1, Tq, D), randn(1, 3, Tk, D)).shape == (B, 3, Tq, Tk)


@pytest.mark.parametrize("B, Tq, Tk, D", SIZES)
def test_module_score_shapes(B, Tq, Tk, D):
    Dk = D + 2  # query and key widths differ on purpose
    q, k = randn(B, Tq, D), randn(B, Tk, Dk, seed=1)
    assert GeneralScore(D, Dk)(q, k).shape == (B, Tq, Tk)
    assert AdditiveScore(D, Dk, 6)(q, k).shape == (B, Tq, Tk)
    assert LocationScore(D, Tk)(q, k).shape == (B, Tq, Tk)
    assert LocationScore(D, Tk)(q).shape == (B, Tq, Tk)
    q4, k4 = randn(B, 2, Tq, D), randn(B, 2, Tk, Dk)  # extra leading dim
    assert GeneralScore(D, Dk)(q4, k4).shape == (B, 2, Tq, Tk)
    assert AdditiveScore(D, Dk, 6)(q4, k4).shape == (B, 2, Tq, Tk)
    assert LocationScore(D, Tk)(q4).shape == (B, 2, Tq, Tk)


def test_module_parameter_names_and_shapes():
    g, a, loc = GeneralScore(3, 5), AdditiveScore(3, 5, 7), LocationScore(3, 4)
    assert dict((n, tuple(p.shape)) for n, p in g.named_parameters()) == {"W_a.weight": (3, 5)}
    assert dict((n, tuple(p.shape)) for n, p in a.named_parameters()) == {
        "W_q.weight": (7, 3),
        "W_k.weight": (7, 5),
        "v_a.weight": (1, 7),
    }
    assert dict((n, tuple(p.shape)) for n, p in loc.named_parameters()) == {"W_a.weight": (4, 3)}


def test_module_initialization_follows_the_papers():
    torch.manual_seed(0)
    g, a, loc = GeneralScore(40, 50), AdditiveScore(40, 50, 60), LocationScore(40, 50)
    # Luong et al. 2015: uniform in [-0.1, 0.1]; 2000 draws fill the interval to within ~1e-3
    for w in (g.W_a.weight, loc.W_a.weight):
        assert w.abs().max() <= 0.1 and w.abs().max() > 0.09
    # Bahdanau et al. 2015: W ~ N(0, 0.001^2) -- 2400+ draws give the std within ~5%; v_a = 0
    for w in (a.W_q.weight, a.W_k.weight):
        assert abs(w.std().item() - 0.001) < 0.0001
    assert torch.equal(a.v_a.weight, torch.zeros(1, 60))


@pytest.mark.parametrize(
    "shape, dim", [((5,), -1), ((2, 3, 4), -1), ((2, 3, 4), 0), ((2, 2, 3, 4), 1)]
)
def test_masked_softmax_shape_and_dtype(shape, dim):
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        w = masked_softmax(randn(*shape).to(dtype), dim=dim)
        assert w.shape == shape and w.dtype == dtype


def test_additive_mask_shape_and_dtype():
    mask = random_mask(2, 3, 4)
    for dtype in (torch.float32, torch.float64, torch.float16):
        m = additive_mask(mask, dtype)
        assert m.shape == (2, 3, 4) and m.dtype == dtype


@pytest.mark.parametrize("B, Tq, Tk, D", SIZES)
def test_attend_and_sdpa_shapes(B, Tq, Tk, D):
    Dv = D + 1
    out, w = attend(randn(B, Tq, Tk), randn(B, Tk, Dv))
    assert out.shape == (B, Tq, Dv) and w.shape == (B, Tq, Tk)
    q, k, v = randn(B, 2, Tq, D), randn(B, 2, Tk, D, seed=1), randn(B, 2, Tk, Dv, seed=2)
    out, w = scaled_dot_product_attention(q, k, v)  # [B, H, T, D]
    assert out.shape == (B, 2, Tq, Dv) and w.shape == (B, 2, Tq, Tk)
    out, w = scaled_dot_product_attention(q[0, 0], k[0, 0], v[0, 0])  # no leading dims at all
    assert out.shape == (Tq, Dv) and w.shape == (Tq, Tk)


# ============================================ tier 2: properties ========================================


def test_rows_sum_to_one_and_masked_entries_are_exactly_zero():
    scores, mask = randn(4, 6, 9) * 5, random_mask(4, 6, 9)
    w = masked_softmax(scores, mask)
    # softmax's sum over 9 + this sum over 9, of probabilities summing to 1
    assert_float_close(w.sum(-1), torch.ones(4, 6), terms=9 + 9, scale=1)
    assert torch.all(w[~mask] == 0)
    assert torch.all(w[mask] > 0)
    _, w_att = attend(scores, randn(4, 9, 3), mask)
    assert_float_close(w_att.sum(-1), torch.ones(4, 6), terms=9 + 9, scale=1)  # as above


def test_fully_masked_row_is_zero_without_nan_in_values_or_gradients():
    scores = (randn(2, 3, 5) * 3).requires_grad_()
    mask = random_mask(2, 3, 5)
    mask[0, 1] = False  # row (0, 1) fully masked
    mask[1] = False  # whole batch element 1 fully masked
    w = masked_softmax(scores, mask)
    assert torch.equal(w[0, 1], torch.zeros(5)) and torch.equal(w[1], torch.zeros(3, 5))
    assert not w.isnan().any()
    (w * randn(2, 3, 5, seed=7)).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert torch.equal(scores.grad[~mask], torch.zeros(int((~mask).sum())))
    # the other rows get torch.softmax's gradient: its backward w * (g - sum_5 g w) over other shapes
    # (the fill's and the indexing's backward): 5 terms + 2, of the upstream gradients' size
    ref = scores.detach().clone().requires_grad_()
    w_ref = torch.softmax(ref.masked_fill(~mask, float("-inf")), -1)
    (w_ref[0, [0, 2]] * randn(2, 3, 5, seed=7)[0, [0, 2]]).sum().backward()
    upstream = randn(2, 3, 5, seed=7)[0, [0, 2]].abs().max().item()
    assert_float_close(scores.grad[0, [0, 2]], ref.grad[0, [0, 2]], terms=5 + 2, scale=upstream)
    out, w = attend(scores.detach(), randn(2, 5, 4), mask)
    assert torch.equal(out[1], torch.zeros(3, 4)) and not out.isnan().any()


@pytest.mark.parametrize("mask_shape", [(7,), (3, 1, 7), (3, 5, 7), (1, 5, 1)])
def test_mask_broadcasting(mask_shape):
    scores, mask = randn(3, 5, 7), random_mask(*mask_shape, keep_one=False, p_allowed=0.7)
    full = mask.expand(3, 5, 7)
    w = masked_softmax(scores, mask)
    assert torch.equal(w, masked_softmax(scores, full.clone()))
    assert torch.equal(w == 0, ~full)  # exactly the masked entries are zero


def test_mask_broadcasting_with_heads():
    # [B, H, Tq, Tk], key padding [B, 1, 1, Tk]
    scores, mask = randn(2, 4, 5, 6), random_mask(2, 1, 1, 6)
    w = masked_softmax(scores, mask)
    assert torch.equal(w == 0, ~mask.expand(2, 4, 5, 6))


@pytest.mark.parametrize("big", [1e4, 1e30, 3e38])
def test_huge_scores_give_no_nan_or_inf(big):
    scores = torch.tensor([[big, 0.0, -big], [big, big, 0.0], [-big, -big, -big]]).requires_grad_()
    w = masked_softmax(scores)
    (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert torch.isfinite(w).all() and torch.isfinite(scores.grad).all()
    # exp(-1e4) and smaller underflow to 0 in float32 and float64 alike, so these are exact
    expected = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    # softmax over 3 + expected's 1/3 rounded to float32, of probabilities summing to 1
    assert_float_close(w, expected, terms=3 + 1, scale=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_huge_masked_score_does_not_affect_the_allowed_entries(dtype):
    # the row max must be taken over allowed entries only: subtracting the masked 1e4 would
    # underflow every allowed exp to 0 and lose the row
    scores = torch.tensor([[1e4, 1.0, 2.0], [-1e4, 1.0, 2.0]], dtype=dtype)
    mask = torch.tensor([False, True, True])
    p = 1 / (1 + math.e)  # softmax([1, 2]) = [p, 1 - p]
    expected = torch.tensor([[0.0, p, 1 - p]] * 2, dtype=torch.float64)
    # against float64: `dtype`'s eps (the coarser); softmax over the 2 allowed + one rounding to dtype
    assert_float_close(masked_softmax(scores, mask), expected, terms=2 + 1, scale=1)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_matches_float64_reference(dtype):
    scores = (randn(4, 6, 9) * 4).to(dtype)
    scores[0, 0] = torch.tensor([1e4, 9e3, 0, -1e4, 0, 0, 0, 0, 0])  # would overflow exp in half
    mask = random_mask(4, 6, 9)
    w = masked_softmax(scores, mask)
    assert w.dtype == dtype
    # same rounded inputs
    ref = torch.softmax(scores.double().masked_fill(~mask, float("-inf")), -1)
    # computed in float32 then rounded once to `dtype`: 1 term of dtype's eps, and the float32
    # softmax over 9 (9 float32 eps, under one of dtype's): terms 2, of probabilities summing to 1
    assert_float_close(w, ref, terms=2, scale=1)
    assert torch.all(w[~mask] == 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_sdpa_half_precision_matches_float64_reference(dtype):
    q, k, v = (randn(2, 2, 5, 8, seed=s).to(dtype) for s in range(3))
    mask = random_mask(5, 5)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    ref_out, ref_w = scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    # in `dtype`: the scores are off by q / sqrt(8) + the product over 8 (9 terms of the scores' size
    # s); a score error ds moves weight i by w_i (ds_i - sum_j w_j ds_j), at most 2 max|ds|; then the
    # softmax over 5 and the rounding to dtype. The output: the same 2 max|ds| times the values' size,
    # the rounded weights (1), the sum over 5, the rounding (1).
    s = max(1.0, (q.double() @ k.double().mT / 8**0.5).abs().max().item())
    assert_float_close(w, ref_w, terms=2 * (1 + 8) + 5 + 1, scale=s)
    vmax = v.double().abs().max().item()
    assert_float_close(out, ref_out, terms=2 * (1 + 8) + 1 + 5 + 1, scale=s * vmax)


def test_location_score_ignores_the_keys_content():
    loc = LocationScore(4, 6)
    q, k = randn(2, 3, 4), randn(2, 6, 5, seed=1)
    w = masked_softmax(loc(q, k))
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    assert torch.equal(masked_softmax(loc(q, k[:, perm])), w)
    assert torch.equal(masked_softmax(loc(q)), w)
    # but it does depend on the query (so the test above could fail)
    assert (masked_softmax(loc(q + 1.0)) - w).abs().max() > 1e-3


def test_cosine_score_invariant_to_positive_scaling_and_bounded():
    q, k = randn(2, 4, 6), randn(2, 5, 6, seed=1)
    c = torch.rand(2, 5, 1, generator=torch.Generator().manual_seed(2)) * 9.9 + 0.1  # in [0.1, 10]
    s = cosine_score(q, k)
    # other data: the norms over 6 and divisions (6 + 1 each), the product over 6, and the rescaling
    # (1): cosines of size <= 1
    assert_float_close(cosine_score(q, k * c), s, terms=6 + 1 + 6 + 1 + 6 + 1, scale=1)
    assert_float_close(cosine_score(q * 3.0, k), s, terms=6 + 1 + 6 + 1 + 6 + 1, scale=1)
    # negation is exact and rounding is symmetric in sign: the same operations on negated numbers
    torch.testing.assert_close(cosine_score(q, -k), -s, rtol=0, atol=0)  # sign does matter
    assert s.abs().max() <= 1 + 1e-6
    # the norm over 6 and the division, twice, and the product over 6: against exactly 1
    assert_float_close(
        torch.diagonal(cosine_score(k, k), dim1=-2, dim2=-1),
        torch.ones(2, 5),
        terms=6 + 1 + 6 + 1 + 6,
    )
    # a zero key scores 0, not NaN (norms are clamped at eps)
    assert torch.equal(cosine_score(q, torch.zeros(2, 1, 6)), torch.zeros(2, 4, 1))


@pytest.mark.parametrize("D", [1, 4, 64])
def test_scaled_is_dot_over_sqrt_d(D):
    q, k = randn(2, 3, D), randn(2, 5, D, seed=1)
    # the library computes exactly this: the same product and division on the same numbers
    torch.testing.assert_close(
        scaled_dot_product_score(q, k), dot_product_score(q, k) / math.sqrt(D), rtol=0, atol=0
    )


def test_additive_mask_values_and_torch_conventions():
    # all keys but yourself: no row empty in either convention
    mask = ~torch.eye(4, dtype=torch.bool)
    m = additive_mask(mask)
    assert torch.equal(m[mask], torch.zeros(int(mask.sum())))
    assert torch.all(m[~mask] == float("-inf"))
    # F.scaled_dot_product_attention: bool True = allowed, same as the additive form
    q, k, v = (randn(1, 4, 8, seed=s) for s in range(3))
    # a bool and a float mask may take different kernels: scores over 8 + scaling, softmax over 4,
    # the sum over 4
    assert_float_close(
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        terms=8 + 1 + 4 + 4,
    )
    # nn.MultiheadAttention: bool True = NOT allowed, so it needs ~mask (as the docstring says)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    _, w_add = mha(q, k, v, attn_mask=m, average_attn_weights=False)
    _, w_inv = mha(q, k, v, attn_mask=~mask, average_attn_weights=False)
    _, w_same = mha(q, k, v, attn_mask=mask, average_attn_weights=False)
    # two mask forms, maybe two kernels: in-projection 8, scores over 4 + scaling, softmax over 4
    assert_float_close(w_inv, w_add, terms=8 + 4 + 1 + 4, scale=1)
    assert torch.all(w_add[..., ~mask] == 0)
    # our mask passed as-is: MHA attends only where we forbid
    assert torch.all(w_same[..., mask] == 0)


# ============================================ tier 3: equivalence =======================================


def double_loop(q, k, f):
    """scores[b, i, j] = f(q[b, i], k[b, j]) with explicit Python loops: the formula as written."""
    B, Tq, Tk = q.shape[0], q.shape[1], k.shape[1]
    return torch.tensor(
        [[[f(q[b, i], k[b, j]) for j in range(Tk)] for i in range(Tq)] for b in range(B)],
        dtype=torch.float64,
    )


def dot(u, w):
    return sum(float(a) * float(b) for a, b in zip(u, w))


def norm(u):
    return math.sqrt(dot(u, u))


def matvec(W, u):
    return [dot(row, u) for row in W]


Q64, K64 = randn(2, 3, 4, dtype=torch.float64), randn(2, 5, 4, seed=1, dtype=torch.float64)
# Everything below is float64; the loop sums in a different order from BLAS: the rule of
# tests/tolerance.py with float64's eps, terms counted per score (terms * eps covers both sides'
# (n - 1) eps/2, see tests/tolerance.py).


@pytest.mark.parametrize(
    "score, f, terms",
    [
        (dot_product_score, dot, 4),  # the product over 4
        (scaled_dot_product_score, lambda u, w: dot(u, w) / math.sqrt(len(w)), 4 + 1),
        # the product over 4, the norms over 4 (+ sqrt) and the divisions or products
        (cosine_score, lambda u, w: dot(u, w) / (norm(u) * norm(w)), 4 + 2 * (4 + 1) + 2),
    ],
)
def test_param_free_scores_match_double_loop(score, f, terms):
    assert_float_close(score(Q64, K64), double_loop(Q64, K64, f), terms=terms)


# square W_a (a transposed W_a would pass shape checks) and not
@pytest.mark.parametrize("Dk", [4, 6])
def test_module_scores_match_double_loop(Dk):
    q, k = Q64, randn(2, 5, Dk, seed=1, dtype=torch.float64)  # Dq = 4
    g = randomized(GeneralScore(4, Dk).double())
    W = g.W_a.weight.tolist()
    # W_a k over Dk, then the product over 4
    assert_float_close(g(q, k), double_loop(q, k, lambda u, w: dot(u, matvec(W, w))), terms=Dk + 4)

    a = randomized(AdditiveScore(4, Dk, 3).double(), seed=1)
    Wq, Wk, va = a.W_q.weight.tolist(), a.W_k.weight.tolist(), a.v_a.weight[0].tolist()

    def f(u, w):
        return dot(va, [math.tanh(x + y) for x, y in zip(matvec(Wq, u), matvec(Wk, w))])

    # W_q q over 4, W_k k over Dk, the sum, tanh, v_a over 3
    assert_float_close(a(q, k), double_loop(q, k, f), terms=4 + Dk + 1 + 1 + 3)

    loc = randomized(LocationScore(4, 5).double(), seed=2)
    Wl = loc.W_a.weight.tolist()
    # (W_a q_i)_j
    loop = [[[dot(Wl[j], q[b, i]) for j in range(5)] for i in range(3)] for b in range(2)]
    assert_float_close(loc(q, k), torch.tensor(loop, dtype=torch.float64), terms=4)  # over 4


def test_additive_equals_concat_form():
    a = randomized(AdditiveScore(4, 6, 5))
    q, k = randn(2, 3, 4), randn(2, 7, 6, seed=1)
    # [H, Dq + Dk]: Luong's W_a in v^T tanh(W_a [q; k])
    W_a = torch.cat([a.W_q.weight, a.W_k.weight], dim=1)
    pairs = torch.cat(
        [q[:, :, None, :].expand(2, 3, 7, 4), k[:, None, :, :].expand(2, 3, 7, 6)], -1
    )
    concat = torch.tanh(pairs @ W_a.T) @ a.v_a.weight[0]  # [B, Tq, Tk]
    # the same products summed in a different grouping: W [q; k] over 4 + 6 (+ the sum of the two
    # halves), tanh, v_a over 5
    assert_float_close(a(q, k), concat, terms=4 + 6 + 1 + 1 + 5)


@pytest.mark.parametrize("mask_kind", [None, "2d", "batch_head", "full", "causal"])
def test_sdpa_matches_torch(mask_kind):
    B, H, T, D = 2, 3, 6, 8
    q, k, v = randn(B, H, T, D), randn(B, H, T, D, seed=1), randn(B, H, T, D + 2, seed=2)
    mask = {
        None: None,
        "2d": random_mask(T, T, seed=3),
        "batch_head": random_mask(B, 1, T, T, seed=4),
        "full": random_mask(B, H, T, T, seed=5),
        "causal": torch.ones(T, T, dtype=torch.bool).tril(),
    }[mask_kind]
    out, w = scaled_dot_product_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    # torch's kernel against ours: scores over 8 + scaling, softmax over 6, the sum over 6
    # (scale: the outputs' size)
    terms = 8 + 1 + T + T
    assert_float_close(out, ref, terms=terms)
    if mask_kind == "causal":
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert_float_close(out, causal, terms=terms)
    explicit = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    if mask is None:
        # scores over 8 + scaling, of the scores' size (a score error moves a weight by at most twice
        # it), then softmax over 6
        s = max(1.0, (q @ k.transpose(-2, -1)).abs().max().item() / math.sqrt(D))
        assert_float_close(w, explicit, terms=2 * (8 + 1) + T, scale=s)
    else:
        assert torch.all(w[~mask.expand_as(w)] == 0)


def test_masked_softmax_matches_torch_softmax_with_additive_inf_mask():
    scores, mask = randn(3, 4, 7) * 3, random_mask(3, 4, 7, seed=1)  # no row fully masked
    inf_mask = torch.zeros(3, 4, 7).masked_fill(~mask, float("-inf"))  # built by hand, not via lib
    ref = torch.softmax(scores + inf_mask, dim=-1)
    # the same softmax kernel on the same numbers (adding 0 is exact, -inf gives -inf, as the fill
    # does; the masked weights are already 0): exact
    torch.testing.assert_close(masked_softmax(scores, mask), ref, rtol=0, atol=0)
    torch.testing.assert_close(
        masked_softmax(scores, mask),
        torch.softmax(scores + additive_mask(mask), -1),
        rtol=0,
        atol=0,
    )
    torch.testing.assert_close(masked_softmax(scores), torch.softmax(scores, -1), rtol=0, atol=0)
    torch.testing.assert_close(
        masked_softmax(scores, dim=0), torch.softmax(scores, 0), rtol=0, atol=0
    )


# ============================================ bad input =================================================


def shaped(*shape, dtype=torch.float32):
    return torch.zeros(*shape, dtype=dtype)


BAD = [
    # (function call, exception, exact message fragment: argument, expected, received)
    (
        lambda: masked_softmax([[1.0]]),
        TypeError,
        "scores: expected a torch.Tensor of shape [..., Tq, Tk], got list",
    ),
    (
        lambda: masked_softmax(shaped(2, 3, dtype=torch.int64)),
        TypeError,
        "scores: expected a floating-point tensor, got dtype torch.int64",
    ),
    (
        lambda: masked_softmax(shaped(2, 3), shaped(3)),
        TypeError,
        "mask: expected a bool tensor (True = may attend), got torch.float32",
    ),
    (
        lambda: masked_softmax(shaped(2, 3), torch.ones(4, dtype=torch.bool)),
        ValueError,
        "mask: expected a shape broadcastable to the scores' (2, 3) (e.g. [Tk], [B, 1, Tk], [B, Tq, Tk]), got shape (4,)",
    ),
    (
        lambda: masked_softmax(shaped(2, 3), torch.ones(5, 2, 3, dtype=torch.bool)),
        ValueError,
        "mask: expected a shape broadcastable to the scores' (2, 3)",
    ),
    (
        lambda: additive_mask(shaped(3)),
        TypeError,
        "mask: expected a bool tensor (True = may attend), got torch.float32",
    ),
    (
        lambda: additive_mask(torch.ones(3, dtype=torch.bool), torch.int64),
        TypeError,
        "dtype: expected a floating-point torch.dtype, got torch.int64",
    ),
    (
        lambda: GeneralScore(4, 6)(shaped(2, 3, 5), shaped(2, 7, 6)),
        ValueError,
        "q: expected shape [B, Tq, 4], got shape (2, 3, 5)",
    ),
    (
        lambda: GeneralScore(4, 6)(shaped(2, 3, 4), shaped(2, 7, 5)),
        ValueError,
        "k: expected shape [B, Tk, 6], got shape (2, 7, 5)",
    ),
    (
        lambda: GeneralScore(4, 6)(shaped(3, 4), shaped(2, 7, 6)),
        ValueError,
        "q: expected shape [B, Tq, 4] (at least 3 dims), got shape (3, 4)",
    ),
    (
        lambda: GeneralScore(4, 6)(shaped(2, 3, 4), shaped(3, 7, 6)),
        ValueError,
        "k: expected batch dims broadcastable with q (batch dims (2,)), got shape (3, 7, 6)",
    ),
    (
        lambda: GeneralScore(4, 6)(shaped(2, 3, 4, dtype=torch.float64), shaped(2, 7, 6)),
        TypeError,
        "q: expected dtype torch.float32 (same as the module's parameters), got torch.float64",
    ),
    (
        lambda: AdditiveScore(4, 6, 3)(shaped(2, 3, 4), shaped(2, 7, 4)),
        ValueError,
        "k: expected shape [B, Tk, 6], got shape (2, 7, 4)",
    ),
    (
        lambda: AdditiveScore(4, 6, 3)(shaped(2, 3, 6), shaped(2, 7, 6)),
        ValueError,
        "q: expected shape [B, Tq, 4], got shape (2, 3, 6)",
    ),
    (
        lambda: AdditiveScore(4, 6, 3)(shaped(2, 3, 4), "keys"),
        TypeError,
        "k: expected a torch.Tensor of shape [B, Tk, 6], got str",
    ),
    (
        lambda: LocationScore(4, 5)(shaped(2, 3, 4), shaped(2, 6, 8)),
        ValueError,
        "k: expected shape [B, 5, Dk] (Tk = n_keys), got shape (2, 6, 8)",
    ),
    (
        lambda: LocationScore(4, 5)(shaped(2, 3, 3)),
        ValueError,
        "q: expected shape [B, Tq, 4], got shape (2, 3, 3)",
    ),
    (
        lambda: attend(shaped(2, 3, 4), shaped(2, 5, 6)),
        ValueError,
        "values: expected shape [..., 4, Dv] (Tk = scores' last dim), got shape (2, 5, 6)",
    ),
    (
        lambda: attend(shaped(2, 3, 4), shaped(3, 4, 6)),
        ValueError,
        "values: expected batch dims broadcastable with scores (batch dims (2,)), got shape (3, 4, 6)",
    ),
    (
        lambda: attend(shaped(4), shaped(4, 6)),
        ValueError,
        "scores: expected shape [..., Tq, Tk] (at least 2 dims), got shape (4,)",
    ),
    (
        lambda: attend(shaped(2, 3, 4), shaped(2, 4, 6, dtype=torch.float64)),
        TypeError,
        "values: expected dtype torch.float32 (same as scores), got torch.float64",
    ),
    (
        lambda: attend(shaped(3, 4), shaped(4, 2), torch.ones(2, dtype=torch.bool)),
        ValueError,
        "mask: expected a shape broadcastable to the scores' (3, 4)",
    ),
    (
        lambda: scaled_dot_product_attention(shaped(2, 3, 8), shaped(2, 5, 4), shaped(2, 5, 6)),
        ValueError,
        "k: expected shape [..., Tk, 8] (same width D as q), got shape (2, 5, 4)",
    ),
    (
        lambda: scaled_dot_product_attention(shaped(2, 3, 8), shaped(2, 5, 8), shaped(2, 4, 6)),
        ValueError,
        "v: expected shape [..., 5, Dv] (same length Tk as k), got shape (2, 4, 6)",
    ),
    (
        lambda: scaled_dot_product_attention(
            shaped(2, 2, 3, 8), shaped(2, 2, 5, 8), shaped(3, 2, 5, 6)
        ),
        ValueError,
        "v: expected batch dims broadcastable with q and k (batch dims (2, 2)), got shape (3, 2, 5, 6)",
    ),
    (
        lambda: scaled_dot_product_attention(shaped(8), shaped(5, 8), shaped(5, 6)),
        ValueError,
        "q: expected shape [..., Tq, D] (at least 2 dims), got shape (8,)",
    ),
    (
        lambda: scaled_dot_product_attention(
            shaped(3, 8), shaped(5, 8), shaped(5, 6), torch.ones(3, 4, dtype=torch.bool)
        ),
        ValueError,
        "mask: expected a shape broadcastable to the scores' (3, 5)",
    ),
    (
        lambda: scaled_dot_product_attention(
            shaped(3, 8), shaped(5, 8), shaped(5, 6), shaped(3, 5)
        ),
        TypeError,
        "mask: expected a bool tensor (True = may attend), got torch.float32",
    ),
]
for _score in PARAM_FREE_SCORES:  # the three parameter-free scores share their checks; test each
    BAD += [
        (
            lambda s=_score: s(shaped(3, 4), shaped(2, 5, 4)),
            ValueError,
            "q: expected shape [B, Tq, D] (at least 3 dims), got shape (3, 4)",
        ),
        (
            lambda s=_score: s(shaped(2, 3, 4), shaped(2, 5, 6)),
            ValueError,
            "k: expected shape [B, Tk, 4] (same width D as q), got shape (2, 5, 6)",
        ),
        (
            lambda s=_score: s(shaped(2, 3, 4), shaped(3, 5, 4)),
            ValueError,
            "k: expected batch dims broadcastable with q (batch dims (2,)), got shape (3, 5, 4)",
        ),
        (
            lambda s=_score: s(shaped(2, 3, 4), shaped(2, 5, 4, dtype=torch.float64)),
            TypeError,
            "k: expected dtype torch.float32 (same as q), got torch.float64",
        ),
        (
            lambda s=_score: s(None, shaped(2, 5, 4)),
            TypeError,
            "q: expected a torch.Tensor of shape [B, Tq, D], got NoneType",
        ),
    ]


@pytest.mark.parametrize("call, exc, message", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_is_caught_with_a_clear_message(call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call()
