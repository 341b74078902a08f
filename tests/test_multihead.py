"""Tests of multi-head attention in lib/attention.py (MultiHeadAttention, split_heads, merge_heads,
causal_mask, padding_mask) in three tiers -- shapes, properties, equivalence to torch.nn.MultiheadAttention
and to the paper's per-head formula -- and bad input.

Tolerances are explicit everywhere; the comment next to each says why it is the right size.
"""

import math
import re

import pytest
import torch
from torch import nn

from lib.attention import (
    MultiHeadAttention,
    additive_mask,
    causal_mask,
    merge_heads,
    padding_mask,
    split_heads,
)
from lib.positional import sinusoidal_encoding
from tests.tolerance import assert_float_close

D, H = 16, 4  # model width and heads used throughout: Dh = 4


def output_terms(keys):
    """The roundings of an output (tests/tolerance.py's terms): the in-projection over 16, scores over
    4 + scaling, softmax over the keys, weighted sum over the keys, out-projection over 16."""
    return D + D // H + 1 + keys + keys + D


def weights_terms(keys):
    """The roundings of the weights: the in-projection over 16, scores over 4 + scaling, softmax."""
    return D + D // H + 1 + keys


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def make_mha(d_model=D, n_heads=H, bias=True, seed=0, dtype=torch.float32):
    """A MultiHeadAttention with every parameter drawn from N(0, 1/D): the default zero biases would let
    a bias bug pass, and N(0, 1) weights would make scores of size ~D that saturate the softmax into
    near one-hot weights, hiding errors in the scaling."""
    mha = MultiHeadAttention(d_model, n_heads, bias=bias).to(dtype).eval()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=dtype) / math.sqrt(d_model))
    return mha


def torch_copy(mha):
    """torch.nn.MultiheadAttention holding the same weights: in_proj_weight stacks q, k, v row-wise."""
    ref = nn.MultiheadAttention(
        mha.d_model,
        mha.n_heads,
        bias=mha.q_proj.bias is not None,
        batch_first=True,
        dtype=mha.q_proj.weight.dtype,
    ).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([mha.q_proj.weight, mha.k_proj.weight, mha.v_proj.weight])
        )
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        if mha.q_proj.bias is not None:
            ref.in_proj_bias.copy_(torch.cat([mha.q_proj.bias, mha.k_proj.bias, mha.v_proj.bias]))
            ref.out_proj.bias.copy_(mha.out_proj.bias)
    return ref


# ============================================ tier 1: shapes ============================================


@pytest.mark.parametrize("B, Tq, Tk", [(1, 1, 1), (2, 5, 5), (3, 4, 7)])
def test_mha_shapes(B, Tq, Tk):
    mha = MultiHeadAttention(D, H)
    x, mem = randn(B, Tq, D), randn(B, Tk, D, seed=1)
    out, w = mha(x, mem, mem)
    assert out.shape == (B, Tq, D) and w.shape == (B, H, Tq, Tk)
    out, w = mha(x, mem, mem, need_weights=False)
    assert out.shape == (B, Tq, D) and w is None
    out, w = mha(x, mem, mem, mask=padding_mask([Tk] * B, Tk))
    assert out.shape == (B, Tq, D) and w.shape == (B, H, Tq, Tk)


def test_parameter_names_and_shapes():
    names = {n: tuple(p.shape) for n, p in MultiHeadAttention(D, H).named_parameters()}
    assert names == {
        f"{r}_proj.{t}": (D, D) if t == "weight" else (D,)
        for r in ("q", "k", "v", "out")
        for t in ("weight", "bias")
    }
    names = {n: tuple(p.shape) for n, p in MultiHeadAttention(D, H, bias=False).named_parameters()}
    assert names == {f"{r}_proj.weight": (D, D) for r in ("q", "k", "v", "out")}


def test_initialization_xavier_uniform_and_zero_biases():
    torch.manual_seed(0)
    mha = MultiHeadAttention(256, 8)
    bound = math.sqrt(6 / (256 + 256))  # xavier_uniform_ on a [D, D] matrix
    for proj in (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj):
        # 65536 uniform draws reach within ~1e-4 of the bound; their std is bound / sqrt(3) to ~0.5%
        assert proj.weight.abs().max() <= bound and proj.weight.abs().max() > 0.99 * bound
        assert abs(proj.weight.std().item() - bound / math.sqrt(3)) < 0.01 * bound
        assert torch.equal(proj.bias, torch.zeros(256))


def test_split_merge_and_mask_shapes():
    x = randn(2, 5, 12)
    assert split_heads(x, 3).shape == (2, 3, 5, 4)
    assert merge_heads(randn(2, 3, 5, 4)).shape == (2, 5, 12)
    assert causal_mask(6).shape == (6, 6) and causal_mask(6).dtype == torch.bool
    pm = padding_mask(torch.tensor([2, 5]), 5)
    assert pm.shape == (2, 1, 1, 5) and pm.dtype == torch.bool


# ============================================ tier 2: properties ========================================


def test_split_merge_round_trip_and_which_columns_go_to_which_head():
    x = torch.arange(2 * 5 * 12).reshape(2, 5, 12)  # integers: any dtype works, equality is exact
    heads = split_heads(x, 3)
    for h in range(3):
        # head h = columns h*Dh ... (h+1)*Dh - 1
        assert torch.equal(heads[:, h], x[..., 4 * h : 4 * (h + 1)])
    assert torch.equal(merge_heads(heads), x)
    y = randn(2, 3, 5, 4)
    assert torch.equal(split_heads(merge_heads(y), 3), y)
    # the split matters
    assert not torch.equal(split_heads(x, 4).flatten(), split_heads(x, 3).flatten())


def test_causal_and_padding_mask_values():
    T = 5
    # True on and below the diagonal
    expected = torch.tensor([[j <= i for j in range(T)] for i in range(T)])
    assert torch.equal(causal_mask(T), expected)
    # torch's own causal mask is the additive form of ours
    assert torch.equal(
        additive_mask(causal_mask(T)), nn.Transformer.generate_square_subsequent_mask(T)
    )
    lengths = [0, 2, 5]
    pm = padding_mask(lengths, T)
    assert torch.equal(pm[:, 0, 0], torch.tensor([[j < n for j in range(T)] for n in lengths]))
    assert torch.equal(padding_mask(torch.tensor(lengths), T), pm)


@pytest.mark.parametrize("need_weights", [True, False])
def test_self_attention_without_positions_is_permutation_equivariant(need_weights):
    mha, x = make_mha(), randn(2, 7, D)
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])
    out, w = mha(x, x, x, need_weights=need_weights)
    out_p, w_p = mha(x[:, perm], x[:, perm], x[:, perm], need_weights=need_weights)
    # the same sums over 7 keys, reordered
    assert_float_close(out_p, out[:, perm], terms=output_terms(7))
    if need_weights:
        assert_float_close(w_p, w[:, :, perm][..., perm], terms=weights_terms(7), scale=1)
    # with sinusoidal positions added, order matters: the permuted input gives other outputs
    pe = sinusoidal_encoding(7, D)
    y, y_p = x + pe, x[:, perm] + pe
    out_pos, _ = mha(y, y, y, need_weights=need_weights)
    out_pos_p, _ = mha(y_p, y_p, y_p, need_weights=need_weights)
    assert (out_pos_p - out_pos[:, perm]).abs().max() > 1e-2


@pytest.mark.parametrize("need_weights", [True, False])
def test_causal_outputs_up_to_t_ignore_later_tokens(need_weights):
    mha, T, t = make_mha(), 8, 4
    x = randn(2, T, D)
    x_changed = x.clone()
    x_changed[:, t + 1 :] = randn(2, T - t - 1, D, seed=9) * 3
    out, w = mha(x, x, x, causal_mask(T), need_weights=need_weights)
    out_changed, _ = mha(x_changed, x_changed, x_changed, causal_mask(T), need_weights=need_weights)
    # rows 0..t see the same allowed keys; the changed ones get weight exactly 0. The row sums may be
    # grouped differently by the kernels: 8 keys
    assert_float_close(out_changed[:, : t + 1], out[:, : t + 1], terms=output_terms(T))
    # later rows do change
    assert (out_changed[:, t + 1 :] - out[:, t + 1 :]).abs().amax(-1).min() > 1e-2
    if need_weights:
        assert torch.all(w[..., ~causal_mask(T)] == 0)  # exactly zero above the diagonal


def test_padded_keys_are_ignored_and_weights_are_distributions():
    mha, lengths, T = make_mha(), [3, 6], 6
    x = randn(2, T, D)
    x_changed = x.clone()
    x_changed[0, 3:] = randn(3, D, seed=5) * 3  # change only the padding of sequence 0
    mask = padding_mask(lengths, T)
    out, w = mha(x, x, x, mask)
    out_changed, _ = mha(x_changed, x_changed, x_changed, mask)
    # padded keys have weight exactly 0; real queries see identical keys, through kernels that may
    # block other data differently: 6 keys
    assert_float_close(out_changed[0, :3], out[0, :3], terms=output_terms(T))
    assert_float_close(out_changed[1], out[1], terms=output_terms(T))
    assert torch.all(w[0, :, :, 3:] == 0) and torch.all(w[0, :, :, :3] > 0)
    # softmax's sum over 6 + this sum over 6, of probabilities summing to 1
    assert_float_close(w.sum(-1), torch.ones(2, H, T), terms=T + T, scale=1)


def test_need_weights_true_and_false_agree_including_fully_masked_rows():
    mha = make_mha()
    x, mem = randn(3, 5, D), randn(3, 7, D, seed=1)
    masks = [
        None,
        causal_mask(5),
        padding_mask([5, 2, 0], 5),  # length 0: every row fully masked
        causal_mask(5) & padding_mask([5, 2, 1], 5),
    ]
    for mask in masks:
        out_w, _ = mha(x, x, x, mask)
        out_f, _ = mha(x, x, x, mask, need_weights=False)
        # lib's masked softmax vs torch's fused kernel: 5 keys
        assert_float_close(out_f, out_w, terms=output_terms(5))
        assert not out_w.isnan().any()
    # a fully masked row attends to nothing: zero weights, heads output 0, output = out_proj.bias
    out, w = mha(x, x, x, padding_mask([5, 2, 0], 5))
    assert torch.equal(w[2], torch.zeros(H, 5, 5))
    # 0 @ W + b is b exactly
    torch.testing.assert_close(out[2], mha.out_proj.bias.expand(5, D), rtol=0, atol=0)
    out_w, _ = mha(x, mem, mem, padding_mask([7, 3, 1], 7))  # cross-attention
    out_f, _ = mha(x, mem, mem, padding_mask([7, 3, 1], 7), need_weights=False)
    assert_float_close(out_f, out_w, terms=output_terms(7))  # as above, 7 keys


def test_dropout_only_in_training_and_returned_weights_are_before_dropout():
    mha = MultiHeadAttention(D, H, dropout=0.5)
    x = randn(2, 6, D)
    mha.eval()
    out_eval, w_eval = mha(x, x, x)
    out_eval_f, _ = mha(x, x, x, need_weights=False)
    assert_float_close(out_eval_f, out_eval, terms=output_terms(6))  # fused vs explicit, 6 keys
    mha.train()
    torch.manual_seed(0)
    out_train, w_train = mha(x, x, x)
    assert (out_train - out_eval).abs().max() > 1e-3  # dropout did something
    torch.testing.assert_close(w_train, w_eval, rtol=0, atol=0)  # the softmax weights themselves
    torch.manual_seed(0)
    out_train_f, _ = mha(x, x, x, need_weights=False)
    assert (out_train_f - out_eval).abs().max() > 1e-3


# ============================================ tier 3: equivalence =======================================


def per_head_reference(mha, query, key, value, mask=None):
    """The paper's formula (Vaswani et al. 2017, sec. 3.2.2) head by head, in float64, with explicit
    weight slices W_h^Q = q_proj.weight[h*Dh:(h+1)*Dh].T: Concat(head_1, ..., head_H) W^O + biases."""
    Dh = mha.d_head
    heads = []
    for h in range(mha.n_heads):
        rows = slice(h * Dh, (h + 1) * Dh)
        q = query @ mha.q_proj.weight[rows].T + mha.q_proj.bias[rows]  # [B, Tq, Dh]
        k = key @ mha.k_proj.weight[rows].T + mha.k_proj.bias[rows]  # [B, Tk, Dh]
        v = value @ mha.v_proj.weight[rows].T + mha.v_proj.bias[rows]  # [B, Tk, Dh]
        scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)  # [B, Tq, Tk]
        if mask is not None:
            scores = scores.masked_fill(
                ~mask.expand(scores.shape[0], H, *scores.shape[1:])[:, h], -math.inf
            )
        heads.append(torch.softmax(scores, -1) @ v)
    return torch.cat(heads, -1) @ mha.out_proj.weight.T + mha.out_proj.bias  # [B, Tq, D]


# Below, both sides compute the same sums in a different order: the rule of tests/tolerance.py (with
# float64's eps for float64 tensors), output_terms / weights_terms over the keys.
T64 = dict(dtype=torch.float64)


@pytest.mark.parametrize("mask_kind", [None, "causal", "padding", "causal_and_padding"])
def test_matches_the_per_head_formula(mask_kind):
    mha = make_mha(**T64)
    x = randn(2, 6, D, **T64)
    mask = {
        None: None,
        "causal": causal_mask(6),
        "padding": padding_mask([6, 4], 6),
        "causal_and_padding": causal_mask(6) & padding_mask([6, 4], 6),
    }[mask_kind]
    with torch.no_grad():
        ref = per_head_reference(mha, x, x, x, mask)
        for need_weights in (True, False):
            assert_float_close(
                mha(x, x, x, mask, need_weights=need_weights)[0], ref, terms=output_terms(6)
            )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("mask_kind", [None, "causal", "key_padding", "both", "cross_padding"])
def test_matches_torch_multihead_attention(mask_kind, dtype):
    mha = make_mha(dtype=dtype)
    ref = torch_copy(mha)
    B, T, S = 3, 6, 8
    x, mem = randn(B, T, D, dtype=dtype), randn(B, S, D, seed=1, dtype=dtype)
    lengths_t, lengths_s = [6, 4, 1], [8, 5, 2]
    # our masks (True = may attend) and torch's (True = NOT allowed): the conversion is a `~`
    if mask_kind == "cross_padding":
        q, kv, ours = x, mem, padding_mask(lengths_s, S)
        theirs = dict(key_padding_mask=~padding_mask(lengths_s, S)[:, 0, 0])  # [B, S]
    else:
        q, kv = x, x
        ours, theirs = {
            None: (None, {}),
            "causal": (causal_mask(T), dict(attn_mask=~causal_mask(T))),
            "key_padding": (
                padding_mask(lengths_t, T),
                dict(key_padding_mask=~padding_mask(lengths_t, T)[:, 0, 0]),
            ),
            "both": (
                causal_mask(T) & padding_mask(lengths_t, T),
                dict(
                    attn_mask=~causal_mask(T), key_padding_mask=~padding_mask(lengths_t, T)[:, 0, 0]
                ),
            ),
        }[mask_kind]
    # reordered sums over <= 8 keys, in the dtype's eps
    keys = kv.shape[1]
    with torch.no_grad():
        ref_out, ref_w = ref(q, kv, kv, need_weights=True, average_attn_weights=False, **theirs)
        out, w = mha(q, kv, kv, ours)
        assert_float_close(out, ref_out, terms=output_terms(keys))
        # per-head weights [B, H, Tq, Tk]
        assert_float_close(w, ref_w, terms=weights_terms(keys), scale=1)
        ref_out_f, _ = ref(q, kv, kv, need_weights=False, **theirs)
        out_f, w_f = mha(q, kv, kv, ours, need_weights=False)
        assert w_f is None
        assert_float_close(out_f, ref_out_f, terms=output_terms(keys))
        assert_float_close(out_f, ref_out, terms=output_terms(keys))


def test_matches_torch_without_bias():
    mha = make_mha(bias=False, **T64)
    x, mem = randn(2, 5, D, **T64), randn(2, 7, D, seed=1, **T64)
    with torch.no_grad():
        ref_out, ref_w = torch_copy(mha)(x, mem, mem, average_attn_weights=False)
        out, w = mha(x, mem, mem)
    assert_float_close(out, ref_out, terms=output_terms(7))  # 7 keys
    assert_float_close(w, ref_w, terms=weights_terms(7), scale=1)


def test_passing_our_mask_to_torch_unconverted_is_the_classic_bug():
    # our mask means "may attend"; torch.nn.MultiheadAttention reads a bool mask as "may NOT attend"
    mha = make_mha()
    ref = torch_copy(mha)
    x = randn(2, 6, D)
    pad = padding_mask([4, 3], 6)  # every sequence has padding, so neither convention empties a row
    with torch.no_grad():
        out, w = mha(x, x, x, pad)
        good, w_good = ref(x, x, x, key_padding_mask=~pad[:, 0, 0], average_attn_weights=False)
        bad, w_bad = ref(x, x, x, key_padding_mask=pad[:, 0, 0], average_attn_weights=False)
    assert_float_close(out, good, terms=output_terms(6))  # torch's kernel against ours, 6 keys
    assert (out - bad).abs().max() > 1e-2
    assert torch.all(w_bad[0, :, :, :4] == 0)  # unconverted: attends only to the padding
    causal = causal_mask(6)
    with torch.no_grad():
        out, _ = mha(x, x, x, causal)
        good, _ = ref(x, x, x, attn_mask=~causal)
        bad, w_bad = ref(x, x, x, attn_mask=causal, average_attn_weights=False)
    assert_float_close(out, good, terms=output_terms(6))
    # unconverted: each query sees only the future; the last query, with no future, gets NaN
    assert torch.all(w_bad[..., :-1, :][..., causal[:-1]] == 0)
    assert w_bad[..., -1, :].isnan().all() and bad[:, -1].isnan().all()


# ============================================ bad input =================================================


def shaped(*shape, dtype=torch.float32):
    return torch.zeros(*shape, dtype=dtype)


MHA = MultiHeadAttention(D, H)
X = shaped(2, 5, D)
BAD = [
    # (function call, exception, exact message fragment: argument, expected, received)
    (lambda: MultiHeadAttention(10, 3), ValueError, "d_model=10 is not divisible by n_heads=3"),
    (lambda: MultiHeadAttention(16, 0), ValueError, "n_heads: expected an int >= 1, got 0"),
    (lambda: MultiHeadAttention(16.0, 4), TypeError, "d_model: expected an int, got float"),
    (
        lambda: MultiHeadAttention(16, 4, dropout=1.0),
        ValueError,
        "dropout: expected a probability in [0, 1), got 1.0",
    ),
    (
        lambda: MHA(shaped(2, 5, 12), X, X),
        ValueError,
        "query: expected shape [B, Tq, 16], got shape (2, 5, 12)",
    ),
    (
        lambda: MHA(X, shaped(2, 5, 12), X),
        ValueError,
        "key: expected shape [B, Tk, 16], got shape (2, 5, 12)",
    ),
    (
        lambda: MHA(X, X, shaped(2, 5, 8)),
        ValueError,
        "value: expected shape [B, Tk, 16], got shape (2, 5, 8)",
    ),
    (
        lambda: MHA(X, shaped(2, 7, D), shaped(2, 6, D)),
        ValueError,
        "value: expected shape [B, 7, 16] (same length Tk=7 as key), got shape (2, 6, 16)",
    ),
    (
        lambda: MHA(shaped(5, D), X, X),
        ValueError,
        "query: expected shape [B, Tq, 16] (at least 3 dims), got shape (5, 16)",
    ),
    (
        lambda: MHA(shaped(1, 2, 5, D), X, X),
        ValueError,
        "query: expected shape [B, Tq, 16] (3 dims), got shape (1, 2, 5, 16)",
    ),
    (
        lambda: MHA(X, shaped(3, 5, D), shaped(3, 5, D)),
        ValueError,
        "key: expected batch dims broadcastable with query (batch dims (2,)), got shape (3, 5, 16)",
    ),
    (
        lambda: MHA(X, X, X.double()),
        TypeError,
        "value: expected dtype torch.float32 (same as the module's parameters), got torch.float64",
    ),
    (
        lambda: MHA(X.tolist(), X, X),
        TypeError,
        "query: expected a torch.Tensor of shape [B, Tq, 16], got list",
    ),
    (
        lambda: MHA(X, X, X, shaped(5, 5)),
        TypeError,
        "mask: expected a bool tensor (True = may attend), got torch.float32",
    ),
    (
        lambda: MHA(X, X, X, causal_mask(6)),
        ValueError,
        "mask: expected a shape broadcastable to [B, H, Tq, Tk] = (2, 4, 5, 5) (e.g. [Tq, Tk], [B, 1, 1, Tk]), got shape (6, 6)",
    ),
    (
        lambda: MHA(X, X, X, torch.ones(2, 5, 5, dtype=torch.bool)),
        ValueError,
        "mask: a 3-D mask is ambiguous (it would broadcast as [H, Tq, Tk], not [B, Tq, Tk])",
    ),
    # B != H would pass silently
    (
        lambda: MHA(X, X, X, torch.ones(4, 5, 5, dtype=torch.bool)),
        ValueError,
        "mask: a 3-D mask is ambiguous",
    ),
    (
        lambda: split_heads(shaped(2, 5, 10), 3),
        ValueError,
        "x: expected a width D divisible by n_heads=3, got shape (2, 5, 10)",
    ),
    (
        lambda: split_heads(shaped(5, 12), 3),
        ValueError,
        "x: expected shape [B, T, D] (3 dims), got shape (5, 12)",
    ),
    (
        lambda: merge_heads(shaped(2, 5, 12)),
        ValueError,
        "x: expected shape [B, H, T, Dh] (4 dims), got shape (2, 5, 12)",
    ),
    (lambda: causal_mask(0), ValueError, "T: expected an int >= 1, got 0"),
    (
        lambda: padding_mask([2, 7], 5),
        ValueError,
        "lengths: expected values in [0, T=5], got min 2 and max 7",
    ),
    (
        lambda: padding_mask(torch.tensor([2.0, 3.0]), 5),
        TypeError,
        "lengths: expected integer lengths, got dtype torch.float32",
    ),
    (
        lambda: padding_mask(torch.tensor([[2, 3]]), 5),
        ValueError,
        "lengths: expected shape [B] (1 dim), got shape (1, 2)",
    ),
]


@pytest.mark.parametrize("call, exc, message", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_is_caught_with_a_clear_message(call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call()


# --- attention_heads without weights (torch's fused kernel) equals the simple path a student reads ---


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "fully masked row"])
def test_fused_attention_equals_the_simple_path(mask_kind):
    from lib.attention import _scaled_dot_product_attention, attention_heads

    def fused_attention(q, k, v, mask):  # need_weights=False: torch's fused kernel
        heads, weights = attention_heads(q, k, v, mask, 0.0, need_weights=False)
        assert weights is None
        return heads

    q, k, v = randn(2, H, 5, 4, seed=1), randn(2, H, 5, 4, seed=2), randn(2, H, 5, 4, seed=3)
    mask = {
        "none": None,
        "causal": causal_mask(5),
        "padding": padding_mask([5, 2], 5),
        "fully masked row": padding_mask([5, 0], 5),
    }[mask_kind]
    heads, _ = _scaled_dot_product_attention(q, k, v, mask)
    # float32 rounding of two different summation orders over Tk = 5 terms of size ~1
    assert (fused_attention(q, k, v, mask) - heads).abs().max() < 1e-6


def test_layers_inside_a_model_do_not_check_again():
    from lib.transformer import Transformer, TransformerConfig

    model = Transformer(TransformerConfig(11, 11, d_model=16, n_heads=4, n_layers=1, d_ff=8))
    attentions = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    assert len(attentions) == 3 and not any(m.check_inputs for m in attentions)
    assert MultiHeadAttention(D, H).check_inputs  # a layer on its own checks its input
    unchecked = MultiHeadAttention(D, H, check_inputs=False)
    with pytest.raises(RuntimeError):  # torch's own error, deep inside: what the checks prevent
        unchecked(randn(2, 5, D), randn(2, 5, D + 1), randn(2, 5, D + 1))
