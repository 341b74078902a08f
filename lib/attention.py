"""Attention: score functions, masked softmax, scaled dot-product and multi-head attention.

Shape legend (used in every docstring and shape comment below):

    B    batch; where a function says "leading dims", B may be several dims (batch, heads, ...)
         and the leading dims of q and k only need to broadcast against each other
    Tq   number of queries          Tk   number of keys (= number of values)
    Dq   query width                Dk   key width                Dv   value width
    Da   hidden width of the additive score's small network (``d_hidden``)
    D    model width (``d_model``) of multi-head attention
    H    number of heads            Dh   width of one head, D / H

Mask convention, everywhere in this library: a *boolean* tensor, True where a query may attend
to a key, broadcastable to the scores [B, Tq, Tk] (e.g. [Tk], [B, 1, Tk] or [B, Tq, Tk]); in
multi-head attention, to [B, H, Tq, Tk] (e.g. ``causal_mask(T)`` [Tq, Tk] or
``padding_mask(lengths, Tk)`` [B, 1, 1, Tk], or the two combined with ``&``).
``additive_mask`` is the only place that turns it into the additive 0 / -inf form.

Pipeline: scores = score(q, k) -> weights = masked_softmax(scores, mask) -> output = weights @ v.
Multi-head: project q, k, v -> split_heads -> attention in every head at once -> merge_heads -> project.

Each public function checks its arguments in one call (the detail is in lib/_checks/attention.py)
and then computes; a function with a leading underscore (``_masked_softmax``, ``_split_heads``, ...)
is the same computation without the checks, which the library's own layers call. A module (the
score modules, ``MultiHeadAttention``) built with ``check_inputs=False`` skips them: a model checks
its input once, at its door, and its layers do not check it again. One public function does not
check: ``attention_heads``, the step inside every head that the multi-head layers (and the GPT,
BERT and Llama blocks) call after checking their own inputs; it is public so that those files, and
chapter 7, can name it.

This file holds the computation the chapters read. Its fast path, the same numbers in less time and
memory (torch's own tricks, measured against ``torch.nn.MultiheadAttention`` by benchmarks/mha.py),
is lib/attention_fast.py: ``FastMultiHeadAttention``, tested equal to ``MultiHeadAttention``.
"""

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._checks.attention import (
    check_additive_mask_args,
    check_attend_args,
    check_attention_args,
    check_causal_mask_args,
    check_location_score_inputs,
    check_merge_heads_args,
    check_mha_config,
    check_mha_inputs,
    check_padding_mask_args,
    check_query_key,
    check_score_module_inputs,
    check_scores_and_mask,
    check_split_heads_args,
)

__all__ = [
    "masked_softmax",
    "additive_mask",
    "dot_product_score",
    "scaled_dot_product_score",
    "cosine_score",
    "GeneralScore",
    "AdditiveScore",
    "LocationScore",
    "attend",
    "scaled_dot_product_attention",
    "attention_heads",
    "split_heads",
    "merge_heads",
    "causal_mask",
    "padding_mask",
    "MultiHeadAttention",
]


# --- softmax with a mask ---------------------------------------------------------------------------


def masked_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """Softmax of ``scores`` along ``dim`` over the allowed entries only: the attention weights
    alpha_ij = exp(e_ij) / sum_k exp(e_ik) of Bahdanau et al. 2015, eq. 6, with a mask.

    scores [..., Tq, Tk], mask bool broadcastable to scores (True = may attend) -> weights of the
    same shape and dtype (float16/bfloat16 computed in float32); masked entries are exactly 0.
    Deviation, on purpose: a row with no allowed entry gives zeros with zero gradients, where the
    naive softmax(scores + (0 / -inf mask)) gives NaN that spreads through every later layer.
    """
    check_scores_and_mask(scores, mask)
    return _masked_softmax(scores, mask, dim)


def _masked_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """``masked_softmax`` without the input checks: the one masking of the library's attention."""
    x = scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores
    if mask is not None:
        x = x.masked_fill(~mask, float("-inf"))  # a masked score counts as exp(-inf) = 0
    weights = torch.softmax(x, dim=dim)  # torch subtracts the row max first: no overflow
    if mask is not None:
        # A row with no allowed entry is softmax(-inf, ..., -inf) = NaN; every entry
        # of such a row is masked, so filling the masked entries with 0 zeroes it. Its
        # gradient at the softmax's input is still NaN; the -inf fill above passes no
        # gradient back for the entries it filled, and that is what keeps the NaN from
        # reaching the scores.
        weights = weights.masked_fill(~mask, 0.0)
    return weights.to(scores.dtype)


def additive_mask(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """The one conversion from the boolean mask (True = may attend) to additive form.

    Returns a tensor shaped like ``mask`` holding 0 where allowed and -inf where not, for torch
    functions that add a float mask to the scores. Beware of torch's own boolean conventions:
    ``torch.nn.functional.scaled_dot_product_attention(attn_mask=...)`` uses ours (True = allowed),
    but ``torch.nn.MultiheadAttention``'s ``attn_mask`` and ``key_padding_mask`` use the opposite
    (True = NOT allowed): pass ``~mask`` there, or this function's output.
    """
    check_additive_mask_args(mask, dtype)
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
        ~mask, float("-inf")
    )


# --- parameter-free score functions: q [B, Tq, Dk], k [B, Tk, Dk] -> scores [B, Tq, Tk] -----------


def dot_product_score(q: Tensor, k: Tensor) -> Tensor:
    """score(q_i, k_j) = q_i . k_j  (Luong et al. 2015, sec. 3.1, eq. 8, "dot").

    q [B, Tq, Dk], k [B, Tk, Dk] (leading dims broadcast) -> [B, Tq, Tk].
    """
    check_query_key(q, k)
    return _dot_product_score(q, k)


def _dot_product_score(q: Tensor, k: Tensor) -> Tensor:
    return q @ k.transpose(-2, -1)  # [B, Tq, Tk]


def scaled_dot_product_score(q: Tensor, k: Tensor) -> Tensor:
    """score(q_i, k_j) = q_i . k_j / sqrt(Dk)  (Vaswani et al. 2017, eq. 1, inside the softmax).

    q [B, Tq, Dk], k [B, Tk, Dk] (leading dims broadcast) -> [B, Tq, Tk].
    """
    # eq. 1 as written: the scores are what this function returns, so it divides them; attention
    # itself divides q instead (_scaled_dot_product_attention: Tq x Dk numbers, not Tq x Tk)
    return dot_product_score(q, k) / math.sqrt(k.shape[-1])


def cosine_score(q: Tensor, k: Tensor, eps: float = 1e-8) -> Tensor:
    """score(q_i, k_j) = q_i . k_j / (|q_i| |k_j|)  (Graves et al. 2014, NTM content-based addressing,
    sec. 3.3.1, eqs. 5-6).

    q [B, Tq, Dk], k [B, Tk, Dk] (leading dims broadcast) -> [B, Tq, Tk], values in [-1, 1].
    Deviations: the NTM multiplies the cosine by a learned key strength beta > 0 before the
    softmax; that factor is left to the caller (``beta * cosine_score(q, k)``). Each norm is
    clamped at ``eps`` so that a zero vector scores 0 instead of NaN.
    """
    check_query_key(q, k)
    q_unit = F.normalize(q, dim=-1, eps=eps)  # [B, Tq, Dk]
    k_unit = F.normalize(k, dim=-1, eps=eps)  # [B, Tk, Dk]
    return q_unit @ k_unit.transpose(-2, -1)  # [B, Tq, Tk]


# --- score functions with parameters -------------------------------------------------------------


class GeneralScore(nn.Module):
    """score(q_i, k_j) = q_i^T W_a k_j  (Luong et al. 2015, sec. 3.1, eq. 8, "general").

    forward(q [B, Tq, Dq], k [B, Tk, Dk]) -> [B, Tq, Tk]. ``W_a`` is nn.Linear(Dk, Dq, bias=False),
    so ``W_a.weight`` is the paper's matrix W_a of shape [Dq, Dk].
    Initialization: uniform in [-0.1, 0.1], as Luong et al. 2015, sec. 4.1, do for all parameters.
    check_inputs=False: no input checks in forward.
    """

    def __init__(self, d_query: int, d_key: int, check_inputs: bool = True):
        super().__init__()
        self.d_query, self.d_key, self.check_inputs = d_query, d_key, check_inputs
        self.W_a = nn.Linear(d_key, d_query, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.W_a.weight, -0.1, 0.1)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        if self.check_inputs:
            check_score_module_inputs(q, k, self.d_query, self.d_key, self.W_a.weight.dtype)
        return q @ self.W_a(k).transpose(-2, -1)  # [B, Tq, Dq] @ [B, Dq, Tk] -> [B, Tq, Tk]


class AdditiveScore(nn.Module):
    """score(q_i, k_j) = v_a^T tanh(W_q q_i + W_k k_j)  (Bahdanau et al. 2015: the alignment model
    e_ij = a(s_{i-1}, h_j) of sec. 3.1, eq. 6, in the form of appendix A.1.2, where W_q is their
    W_a and W_k their U_a).

    forward(q [B, Tq, Dq], k [B, Tk, Dk]) -> [B, Tq, Tk]. This is the same function as Luong et al.'s
    "concat" score v_a^T tanh(W_a [q; k]) (2015, eq. 8): W_a = [W_q | W_k] split into two column
    blocks, so W_a [q; k] = W_q q + W_k k. Splitting lets us project the Tq queries and Tk keys once
    each instead of all Tq x Tk concatenated pairs. Memory is O(B Tq Tk Da).
    Initialization (Bahdanau et al. 2015, appendix B.1): W_q, W_k ~ N(0, 0.001^2) and v_a = 0, so at
    initialization every score is exactly 0 and the attention is uniform; re-initialize the
    weights yourself to draw an untrained but non-uniform example.
    check_inputs=False: no input checks in forward.
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int, check_inputs: bool = True):
        super().__init__()
        self.d_query, self.d_key, self.d_hidden = d_query, d_key, d_hidden
        self.check_inputs = check_inputs
        self.W_q = nn.Linear(d_query, d_hidden, bias=False)
        self.W_k = nn.Linear(d_key, d_hidden, bias=False)
        self.v_a = nn.Linear(d_hidden, 1, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.W_q.weight, std=0.001)
        nn.init.normal_(self.W_k.weight, std=0.001)
        nn.init.zeros_(self.v_a.weight)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        if self.check_inputs:
            check_score_module_inputs(q, k, self.d_query, self.d_key, self.W_q.weight.dtype)
        # [B, Tq, 1, Da] + [B, 1, Tk, Da]
        hidden = self.W_q(q).unsqueeze(-2) + self.W_k(k).unsqueeze(-3)
        return self.v_a(torch.tanh(hidden)).squeeze(-1)  # [B, Tq, Tk, 1] -> [B, Tq, Tk]


class LocationScore(nn.Module):
    """scores_i = W_a q_i  (Luong et al. 2015, sec. 3.1, eq. 9, "location": the softmax of these
    scores is the alignment; it depends on the query only, never on the keys' content).

    forward(q [B, Tq, Dq], k=None) -> [B, Tq, n_keys]. ``W_a`` is nn.Linear(Dq, n_keys, bias=False).
    Deviations: we return the scores, not their softmax (apply ``masked_softmax``, as for every
    other score); the number of source positions is fixed at ``n_keys``, so ``k``, if given, is
    only checked to have Tk == n_keys.
    Initialization: uniform in [-0.1, 0.1] (Luong et al. 2015, sec. 4.1).
    check_inputs=False: no input checks in forward.
    """

    def __init__(self, d_query: int, n_keys: int, check_inputs: bool = True):
        super().__init__()
        self.d_query, self.n_keys, self.check_inputs = d_query, n_keys, check_inputs
        self.W_a = nn.Linear(d_query, n_keys, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.W_a.weight, -0.1, 0.1)

    def forward(self, q: Tensor, k: Tensor | None = None) -> Tensor:
        if self.check_inputs:
            check_location_score_inputs(q, k, self.d_query, self.n_keys, self.W_a.weight.dtype)
        return self.W_a(q)  # [B, Tq, n_keys]


# --- attention: weights and weighted sum of values -----------------------------------------------


def attend(scores: Tensor, values: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """weights = masked_softmax(scores, mask); output = weights @ values.

    scores [..., Tq, Tk], values [..., Tk, Dv] (leading dims broadcast), mask bool broadcastable
    to scores -> (output [..., Tq, Dv], weights [..., Tq, Tk]). The output row i is the context
    vector c_i = sum_j weights_ij v_j (Bahdanau et al. 2015, eq. 5). A fully masked row gives
    zero weights and a zero output.
    """
    check_attend_args(scores, values, mask)
    return _attend(scores, values, mask)


def _attend(scores: Tensor, values: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``attend`` without the input checks, for the decoders that checked their input."""
    weights = _masked_softmax(scores, mask)  # [..., Tq, Tk]
    return weights @ values, weights  # [..., Tq, Dv], [..., Tq, Tk]


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(Dk)) V  (Vaswani et al. 2017, eq. 1), masked.

    q [..., Tq, Dk], k [..., Tk, Dk], v [..., Tk, Dv] with any leading dims (e.g. [B, H]) that
    broadcast; mask bool, True = may attend -> (output [..., Tq, Dv], weights [..., Tq, Tk]).
    The output equals torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    (same boolean convention). On a fully masked row this gives zero weights and output; recent
    torch versions do the same there, older ones returned NaN.
    Deviation from the paper: none beyond the mask; no dropout (that belongs to the caller).
    The computation is ``_scaled_dot_product_attention``; this function checks its arguments first.
    """
    check_attention_args(q, k, v, mask)
    return _scaled_dot_product_attention(q, k, v, mask)


def _scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout: float = 0.0
) -> tuple[Tensor, Tensor]:
    """``scaled_dot_product_attention`` without the input checks, with ``dropout`` on the weights
    (the returned weights are those before dropout)."""
    # (q / sqrt(Dk)) k^T = q k^T / sqrt(Dk): scaling q divides Tq x Dk numbers, not Tq x Tk scores
    scores = (q / math.sqrt(k.shape[-1])) @ k.transpose(-2, -1)  # [..., Tq, Tk]
    weights = _masked_softmax(scores, mask)  # [..., Tq, Tk], each row sums to 1 (or is all 0)
    dropped = F.dropout(weights, dropout) if dropout > 0 else weights
    return dropped @ v, weights  # [..., Tq, Dv], [..., Tq, Tk]


def attention_heads(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout: float = 0.0,
    need_weights: bool = True,
) -> tuple[Tensor, Tensor | None]:
    """Scaled dot-product attention inside each head, all H heads in one call: the step between
    ``_split_heads`` and ``_merge_heads`` in the library's multi-head layers, without input checks.

    q [B, H, Tq, Dh], k and v [B, H, Tk, Dh], mask bool broadcastable to [B, H, Tq, Tk] (True = may
    attend) -> (heads [B, H, Tq, Dh], weights [B, H, Tq, Tk] or None). ``dropout`` acts on the
    weights (0 in eval mode); the returned weights are those before dropout. need_weights=False
    takes torch's fused kernel: the same heads (up to rounding, tests/test_multihead.py), the
    weights never formed; its attn_mask has our convention, and torch >= 2.5 gives a fully masked
    row zero heads, as ``masked_softmax`` does.
    """
    if not need_weights:  # torch's fused kernel: the same heads, the weights never formed
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout), None
    return _scaled_dot_product_attention(q, k, v, mask, dropout)  # [B, H, Tq, Dh], [B, H, Tq, Tk]


# --- multi-head attention (Vaswani et al. 2017, sec. 3.2.2) --------------------------------------


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    """Cut the width of x into n_heads heads: [B, T, D] -> [B, H, T, Dh], Dh = D / H.

    Head h gets the columns h*Dh ... (h+1)*Dh - 1 of x, as in torch.nn.MultiheadAttention: those
    are the outputs of the rows h*Dh ... (h+1)*Dh - 1 of a projection's weight, i.e. of the paper's
    W_h (Vaswani et al. 2017, sec. 3.2.2). Any dtype; the inverse is ``merge_heads``. The layers
    call ``_split_heads``, the same without the input checks.
    """
    check_split_heads_args(x, n_heads)
    return _split_heads(x, n_heads)


def _split_heads(x: Tensor, n_heads: int) -> Tensor:
    # [B, T, D] -> [B, T, H, Dh] (unflatten) -> [B, H, T, Dh] (transpose)
    return x.unflatten(-1, (n_heads, -1)).transpose(-3, -2)


def merge_heads(x: Tensor) -> Tensor:
    """Concatenate the heads side by side: [B, H, T, Dh] -> [B, T, H*Dh] (the "Concat" of
    Vaswani et al. 2017, sec. 3.2.2). Inverse of ``split_heads``; the layers call
    ``_merge_heads``, the same without the input check."""
    check_merge_heads_args(x)
    return _merge_heads(x)


def _merge_heads(x: Tensor) -> Tensor:
    # [B, H, T, Dh] -> [B, T, H, Dh] (transpose) -> [B, T, H*Dh] (flatten)
    return x.transpose(-3, -2).flatten(-2)


def causal_mask(T: int, device=None, past: int = 0) -> Tensor:
    """bool [T, past + T], True where query i may attend key j, i.e. j <= past + i: no position
    sees the future (the decoder's masked self-attention, Vaswani et al. 2017, sec. 3.2.3).

    past=0 (the usual case): [T, T], True on and below the diagonal, as
    ``torch.ones(T, T, dtype=torch.bool).tril()``; torch's
    ``nn.Transformer.generate_square_subsequent_mask(T)`` is its additive form. past=P: the rows of
    T new queries at positions P .. P+T-1 over P cached keys and the T new ones (a key/value cache,
    ``lib.gpt.KVCache``): the last T rows of ``causal_mask(P + T)``, built without the others."""
    check_causal_mask_args(T, past)
    return torch.ones(T, past + T, dtype=torch.bool, device=device).tril(diagonal=past)


def padding_mask(lengths, T: int) -> Tensor:
    """bool [B, 1, 1, T], True at the real tokens: key j of sequence b may be attended iff
    j < lengths[b] (the padding sits at the end). The two singleton dims broadcast over heads
    and queries. ``lengths``: int tensor or list of ints [B], each in [0, T]. torch's
    ``key_padding_mask`` is the opposite: ``~padding_mask(lengths, T)[:, 0, 0]``."""
    if isinstance(lengths, (list, tuple)):
        lengths = torch.tensor(lengths)
    check_padding_mask_args(lengths, T)
    positions = torch.arange(T, device=lengths.device)  # [T]
    return (positions < lengths[:, None])[:, None, None, :]  # [B, T] -> [B, 1, 1, T]


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O,
    head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)  (Vaswani et al. 2017, sec. 3.2.2), Dh = D / H.

    forward(query [B, Tq, D], key [B, Tk, D], value [B, Tk, D], mask=None, need_weights=True)
        -> (output [B, Tq, D], weights [B, H, Tq, Tk] or None).
    Self-attention is ``mha(x, x, x)``; encoder-decoder attention is ``mha(y, memory, memory)``.
    One nn.Linear(D, D) per role holds its H projections: rows h*Dh ... (h+1)*Dh - 1 of
    ``q_proj.weight`` are (W_h^Q)^T. mask: as ``attention_heads``; a 3-D mask needs first dim 1
    (a [B, Tq, Tk] mask would broadcast against [B, H, Tq, Tk] as if its B were H).
    Equal to torch.nn.MultiheadAttention(D, H, batch_first=True) with in_proj_weight = the cat of
    our three weights (tests/test_multihead.py); beware, its masks mean the opposite.
    Deviations from the paper: biases (bias=False removes them); dropout on the weights in training,
    as torch does; a fully masked query row outputs 0 heads instead of NaN.
    Initialization: xavier_uniform_ on each [D, D] weight, zero biases (the paper states none).
    Fast path (inference): ``lib.attention_fast.FastMultiHeadAttention``.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        check_inputs: bool = True,
    ):
        super().__init__()
        check_mha_config(d_model, n_heads, dropout)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.dropout = float(dropout)
        self.check_inputs = check_inputs
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for proj in (self.q_proj, self.k_proj, self.v_proj, self.out_proj):
            nn.init.xavier_uniform_(proj.weight)
            if proj.bias is not None:
                nn.init.zeros_(proj.bias)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, dropout={self.dropout}"

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[Tensor, Tensor | None]:
        if self.check_inputs:
            check_mha_inputs(
                query, key, value, mask, self.d_model, self.n_heads, self.q_proj.weight.dtype
            )
        H = self.n_heads
        q = _split_heads(self.q_proj(query), H)  # [B, Tq, D] -> [B, H, Tq, Dh]
        k = _split_heads(self.k_proj(key), H)  # [B, Tk, D] -> [B, H, Tk, Dh]
        v = _split_heads(self.v_proj(value), H)  # [B, Tk, D] -> [B, H, Tk, Dh]
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = attention_heads(q, k, v, mask, dropout_p, need_weights)  # [B, H, Tq, Dh]
        return self.out_proj(_merge_heads(heads)), weights  # [B, Tq, D], [B, H, Tq, Tk] or None
