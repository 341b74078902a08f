"""Tests of lib/attention_fast.py: the fast path of multi-head attention gives the readable layer's
numbers (lib/attention.py, the code the chapters read).

``FastMultiHeadAttention`` against ``MultiHeadAttention`` with the same weights: outputs, weights and
gradients, on self-attention and cross-attention, with and without masks, dropout off; then the fast
path's parts (the softmax in place, where it is taken, the self-attention without gradients and its
cached in-projection) against the simple path. Tolerances follow tests/tolerance.py: terms * eps *
the size of the values, the terms counted along the sums each value goes through.
"""

import pytest
import torch
from torch import nn

from lib.attention import (
    MultiHeadAttention,
    _scaled_dot_product_attention,
    causal_mask,
    padding_mask,
)
from lib.attention_fast import FastMultiHeadAttention
from tests.test_multihead import D, H, make_mha, output_terms, randn, weights_terms
from tests.tolerance import assert_float_close


def make_fast_mha(bias=True, seed=0):
    """A FastMultiHeadAttention holding make_mha's weights (every parameter drawn from N(0, 1/D))."""
    fast = FastMultiHeadAttention(D, H, bias=bias).eval()
    fast.load_state_dict(make_mha(bias=bias, seed=seed).state_dict())
    return fast


# --- the fast layer equals the readable layer: outputs, weights, gradients ----------------------------

B, TQ, TK = 3, 6, 8  # cross-attention: 6 queries over 8 keys; self-attention: 6 over 6


def layer_inputs(attention):
    """(query, key, value) leaf tensors: x three times, or x over a memory of TK positions."""
    x = randn(B, TQ, D, seed=1)
    if attention == "self":
        return (x, x, x)
    memory = randn(B, TK, D, seed=2)
    return (x, memory, memory)


def layer_mask(kind, keys):
    return {
        "none": None,
        "causal": causal_mask(
            TQ, past=keys - TQ
        ),  # [TQ, keys]: query i sees keys up to keys - TQ + i
        "padding": padding_mask([keys, 3, 1], keys),
        "fully masked row": padding_mask([keys, 0, 2], keys),
        "both": causal_mask(TQ, past=keys - TQ) & padding_mask([keys, 3, 1], keys),
    }[kind]


def gradient_terms(keys):
    """The roundings of a gradient: the backward pass runs the forward's sums transposed (each product
    over the other dimension: the out-projection over D, the weighted sum over the keys, the softmax's
    backward over the keys, the scores over Dh, the in-projection over D), and a parameter's gradient
    then sums over the B * TQ (or B * keys) positions."""
    return output_terms(keys) + D + keys + keys + D // H + D + B * max(TQ, keys)


def run_layer(layer, inputs, mask, need_weights, cotangent=None):
    """layer(query, key, value, mask, need_weights) on fresh copies of the inputs; with a cotangent
    [B, TQ, D], also the backward pass of (output * cotangent).sum() (+ the weights' sum when returned):
    -> (output, weights or None, {name: gradient} of the inputs and parameters, or {})."""
    layer.zero_grad(set_to_none=True)
    copies = {}
    for name, t in zip(("query", "key", "value"), inputs):
        copies.setdefault(id(t), (name, t.clone().requires_grad_(cotangent is not None)))
    query, key, value = (copies[id(t)][1] for t in inputs)
    with torch.set_grad_enabled(cotangent is not None):
        out, weights = layer(query, key, value, mask, need_weights)
    if cotangent is None:
        return out, weights, {}
    loss = (out * cotangent).sum() + (0 if weights is None else weights.square().sum())
    loss.backward()
    grads = {name: t.grad for name, t in copies.values()}
    grads.update({name: p.grad for name, p in layer.named_parameters()})
    return out.detach(), None if weights is None else weights.detach(), grads


@pytest.mark.parametrize("gradients", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "fused"])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "fully masked row", "both"])
@pytest.mark.parametrize("attention", ["self", "cross"])
def test_the_fast_layer_gives_the_readable_layers_outputs_and_gradients(
    attention, mask_kind, need_weights, gradients
):
    readable, fast = make_mha(), make_fast_mha()  # eval mode: dropout off
    inputs = layer_inputs(attention)
    keys = inputs[1].shape[1]
    mask = layer_mask(mask_kind, keys)
    cotangent = randn(B, TQ, D, seed=3) if gradients else None
    want, want_w, want_grads = run_layer(readable, inputs, mask, need_weights, cotangent)
    got, got_w, got_grads = run_layer(fast, inputs, mask, need_weights, cotangent)
    assert_float_close(got, want, terms=output_terms(keys))
    assert (got_w is None) == (want_w is None) == (not need_weights)
    if need_weights:  # weights in [0, 1]: their size is 1 (a row sums to 1)
        assert_float_close(got_w, want_w, terms=weights_terms(keys), scale=1)
    assert got_grads.keys() == want_grads.keys()
    assert len(got_grads) == (0 if not gradients else 8 + (1 if attention == "self" else 2))
    for name, want_grad in want_grads.items():
        assert_float_close(got_grads[name], want_grad, terms=gradient_terms(keys))
    if (
        mask_kind == "fully masked row"
    ):  # the sequence with no key: zero heads, so out = out_proj's bias
        assert torch.equal(got[1], fast.out_proj.bias.detach().expand(TQ, D))


def test_the_fast_layer_is_the_readable_layer_with_its_parameters_and_checks():
    readable, fast = make_mha(), make_fast_mha()
    assert isinstance(fast, MultiHeadAttention)
    assert fast.state_dict().keys() == readable.state_dict().keys()
    assert all(torch.equal(fast.state_dict()[k], v) for k, v in readable.state_dict().items())
    assert repr(fast) == repr(readable).replace("MultiHeadAttention", "FastMultiHeadAttention", 1)
    x = randn(2, 5, D)
    with (
        torch.no_grad(),
        pytest.raises(TypeError, match="mask: expected a bool tensor"),
    ):  # checked first
        fast(x, x, x, mask=torch.ones(5, 5))


# --- the parts of the fast path equal the simple path ------------------------------------------------


def test_attention_in_place_equals_the_simple_path_and_is_taken_without_gradients():
    from lib.attention_fast import attention_in_place, fast_attention_heads

    q, k, v = randn(2, H, 6, 4, seed=1), randn(2, H, 7, 4, seed=2), randn(2, H, 7, 4, seed=3)
    heads, weights = _scaled_dot_product_attention(q, k, v)
    fast_heads, fast_weights = attention_in_place(q, k, v)
    # scaling q before the product rounds differently from dividing the scores: float32 ulps
    assert (fast_heads - heads).abs().max() < 1e-6
    assert (fast_weights - weights).abs().max() < 1e-6
    # fast_attention_heads takes it without mask and gradient, the simple path otherwise: same numbers
    for mask, grad in ((None, False), (causal_mask(6, past=1), False), (None, True)):
        qq = q.clone().requires_grad_(grad)
        got, w = fast_attention_heads(qq, k, v, mask)
        want, want_w = _scaled_dot_product_attention(q, k, v, mask)
        assert (got - want).abs().max() < 1e-6 and (w - want_w).abs().max() < 1e-6
        assert got.requires_grad == grad


def test_the_softmax_in_place_applies_exactly_where_it_gives_the_same_numbers():
    from lib.attention_fast import fast_attention_heads, softmax_in_place_applies

    q, k, v = randn(2, H, 6, 4, seed=1), randn(2, H, 6, 4, seed=2), randn(2, H, 6, 4, seed=3)
    grad_q = q.clone().requires_grad_(True)
    cases = [  # (q, mask, dropout) -> the softmax in place applies, weights asked for
        ((q, None, 0.0), True),  # inference without mask
        ((q, causal_mask(6), 0.0), False),  # a mask: the simple path
        ((q, None, 0.1), False),  # dropout
        ((grad_q, None, 0.0), False),  # a gradient needs the scores
        ((q.half(), None, 0.0), False),  # float16 is softmaxed in float32 by the simple path
    ]
    for (qq, mask, p), applies in cases:
        assert softmax_in_place_applies(qq, k, mask, p, True) is applies, (mask is None, p)
    assert not softmax_in_place_applies(q, k, None, 0.0, False)  # no weights: the fused kernel
    # every path without dropout gives the readable numbers, with weights asked for or not
    for qq, mask in [(q, None), (q, causal_mask(6)), (grad_q, None)]:
        want, want_w = _scaled_dot_product_attention(q, k, v, mask)
        for need in (True, False):
            heads, weights = fast_attention_heads(qq, k, v, mask, 0.0, need)
            assert (heads - want).abs().max() < 1e-6  # float32 rounding, as above
            assert weights is None if not need else (weights - want_w).abs().max() < 1e-6


# --- the fast path of self-attention without gradients equals the readable forward ------------------


def readable_forward(mha, x, mask=None, need_weights=True):
    """mha(x, x, x, ...) of a FastMultiHeadAttention on the readable forward: with gradients on,
    fast_self_attention is not taken (and need_weights=True takes the simple path of attention_heads)."""
    with torch.enable_grad():
        out, weights = mha(x, x, x, mask, need_weights)
    return out.detach(), None if weights is None else weights.detach()


def assert_fast_equals_readable(mha, x, mask=None, need_weights=True):
    want, want_w = readable_forward(mha, x, mask, need_weights)
    with torch.no_grad():
        got, got_w = mha(x, x, x, mask, need_weights)
    # the same products in the same order (one fused in-projection computes each output from the same
    # row and column): float32 ulps at most, for outputs of order 1
    assert (got - want).abs().max() < 1e-6
    assert (got_w is None) == (want_w is None)
    if want_w is not None:
        assert (got_w - want_w).abs().max() < 1e-6


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "fully masked row", "both"])
def test_fast_self_attention_equals_the_readable_forward(need_weights, mask_kind, monkeypatch):
    import lib.attention_fast

    taken = []
    fast = lib.attention_fast.fast_self_attention
    monkeypatch.setattr(
        lib.attention_fast, "fast_self_attention", lambda *a: taken.append(1) or fast(*a)
    )
    mha, x = make_fast_mha(), randn(3, 6, D, seed=1)
    mask = {
        "none": None,
        "causal": causal_mask(6),
        "padding": padding_mask([6, 3, 1], 6),
        "fully masked row": padding_mask([6, 0, 2], 6),
        "both": causal_mask(6) & padding_mask([6, 3, 1], 6),
    }[mask_kind]
    assert_fast_equals_readable(mha, x, mask, need_weights)
    assert taken == [1]  # the readable forward did not take it, the no_grad call did
    with torch.no_grad():  # cross-attention (query is not key) keeps the readable forward
        mha(x, x.clone(), x.clone(), mask, need_weights)
    with torch.inference_mode():
        mha(x, x, x, mask, need_weights)
    assert taken == [1, 1]


def test_fast_self_attention_sees_every_change_of_the_parameters():
    from lib.attention_fast import fused_in_projection

    mha, x = make_fast_mha(), randn(2, 5, D, seed=1)
    assert_fast_equals_readable(mha, x)
    weight, bias = fused_in_projection(mha)
    assert weight is fused_in_projection(mha)[0]  # cached while nothing changes
    assert torch.equal(weight, torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight]))
    assert torch.equal(bias, torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
    # an optimizer step changes the parameters in place
    optimizer = torch.optim.AdamW(mha.parameters(), lr=0.1)
    with torch.enable_grad():
        mha(x, x, x)[0].square().sum().backward()
    optimizer.step()
    assert_fast_equals_readable(mha, x)
    # load_state_dict copies into the parameters
    mha.load_state_dict(make_mha(seed=7).state_dict())
    assert_fast_equals_readable(mha, x)
    # an in-place change without autograd, of a bias only
    with torch.no_grad():
        mha.v_proj.bias.add_(1.0)
    assert_fast_equals_readable(mha, x)
    # a parameter replaced by a new one, and by new data
    mha.k_proj.weight = nn.Parameter(randn(D, D, seed=8) / 4)
    assert_fast_equals_readable(mha, x)
    mha.q_proj.weight.data = randn(D, D, seed=9) / 4
    assert_fast_equals_readable(mha, x)
    # another dtype: .to() gives new tensors
    mha.double()
    assert_fast_equals_readable(mha, x.double())
    assert fused_in_projection(mha)[0] is fused_in_projection(mha)[0]  # kept again


def test_fast_self_attention_without_biases_and_with_dropout():
    mha, x = make_fast_mha(bias=False), randn(2, 5, D, seed=1)
    assert_fast_equals_readable(mha, x)
    assert_fast_equals_readable(mha, x, causal_mask(5), need_weights=False)
    # dropout in training mode under no_grad: the same random draws on both paths
    mha = FastMultiHeadAttention(D, H, dropout=0.5).train()
    for need_weights in (True, False):
        torch.manual_seed(3)
        want, want_w = readable_forward(mha, x, need_weights=need_weights)
        torch.manual_seed(3)
        with torch.no_grad():
            got, got_w = mha(x, x, x, need_weights=need_weights)
        assert (got - want).abs().max() < 1e-6
        if need_weights:
            assert (got_w - want_w).abs().max() < 1e-6
