"""The fast path of lib.attention's multi-head attention: the same numbers as the readable layer
(``lib.attention.MultiHeadAttention``, ``attention_heads``), in less time and memory.

What it is for: inference. ``FastMultiHeadAttention`` is ``MultiHeadAttention``, with the same
parameters, state dict and checks. On self-attention without gradients, its forward computes as
torch's own C++ fast path (``torch._native_multi_head_attention``) does:
- the three input projections are one matrix product (``fused_in_projection``);
- q / sqrt(Dh) and the copy of q, k, v into the per-head layout are one pass;
- the softmax overwrites the scores: one [B, H, T, T] tensor instead of two (for long sequences
  the largest allocation of the layer, fresh memory from the operating system at every call);
- each large tensor is freed once used.
With gradients, or on cross-attention, it computes as the readable layer. There too, without mask,
dropout or gradient, the softmax is taken in place (``fast_attention_heads``).

What it is measured against: benchmarks/mha.py times it against ``torch.nn.MultiheadAttention`` with
the same weights (the goals of ``make bench``: ours / torch's CPU time below 1.05 without the
weights, 1.15 with them) and against the readable path (its *simple path* column);
benchmarks/complexity.py measures its time and memory as the sequence grows. tests/test_attention_fast.py
checks that it gives the readable layer's outputs and gradients (self-attention and cross-attention,
masks, dropout off) and that its cache sees every change of the parameters.

Who uses it: the measurements that need the speed: benchmarks/mha.py, benchmarks/complexity.py and
chapter 6's timing of self-attention against an LSTM. No library model uses it: lib.transformer's
layers, like the chapters, use the readable lib/attention.py.
"""

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from lib._checks.attention import check_mha_inputs
from lib.attention import (
    MultiHeadAttention,
    _merge_heads,
    _split_heads,
    attention_heads,
)

__all__ = ["FastMultiHeadAttention", "fast_attention_heads"]


class FastMultiHeadAttention(MultiHeadAttention):
    """``lib.attention.MultiHeadAttention`` on the fast path: the same constructor, parameters and
    forward(query, key, value, mask=None, need_weights=True) -> (output, weights or None), the same
    numbers up to float rounding. Self-attention (``query is key is value``) without gradients takes
    ``fast_self_attention``; every other call takes the readable computation with
    ``fast_attention_heads`` in place of ``attention_heads``."""

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask=None, need_weights=True):
        if self.check_inputs:
            check_mha_inputs(
                query, key, value, mask, self.d_model, self.n_heads, self.q_proj.weight.dtype
            )
        if query is key is value and not torch.is_grad_enabled():  # inference
            return fast_self_attention(self, query, mask, need_weights)
        roles = ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))
        q, k, v = (_split_heads(proj(x), self.n_heads) for proj, x in roles)  # [B, H, T, Dh] each
        dropout_p = self.dropout if self.training else 0.0
        # heads [B, H, Tq, Dh]
        heads, weights = fast_attention_heads(q, k, v, mask, dropout_p, need_weights)
        return self.out_proj(_merge_heads(heads)), weights  # [B, Tq, D], [B, H, Tq, Tk] or None


# --- attention_heads with the softmax in place -----------------------------------------------------


def softmax_in_place_applies(
    q: Tensor, k: Tensor, mask: Tensor | None, dropout: float, need_weights: bool
) -> bool:
    """Whether ``attention_in_place`` may compute these heads: their weights are asked for (without
    weights, torch's fused kernel is faster still), in float32/float64, with no mask, dropout or
    gradient."""
    no_grad = not (q.requires_grad or k.requires_grad)
    float32_or_64 = q.dtype in (torch.float32, torch.float64)
    return need_weights and mask is None and dropout == 0 and no_grad and float32_or_64


def fast_attention_heads(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout: float = 0.0,
    need_weights: bool = True,
) -> tuple[Tensor, Tensor | None]:
    """``lib.attention.attention_heads`` (the same arguments and results) with the softmax in place
    where ``attention_in_place`` applies: weights asked for, no mask, no dropout, no gradient."""
    if softmax_in_place_applies(q, k, mask, dropout, need_weights):
        return attention_in_place(q, k, v)  # inference: the softmax in place
    return attention_heads(q, k, v, mask, dropout, need_weights)  # fused kernel or readable path


def attention_in_place(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """``_scaled_dot_product_attention`` without mask or dropout, for tensors that need no gradient,
    as torch's own fast path computes it: the softmax overwrites the scores. -> (heads, weights)."""
    # (q / sqrt(Dh)) k^T = q k^T / sqrt(Dh): as in the readable layer, q is scaled, not the scores
    return _attention_in_place_scaled_q(q / math.sqrt(k.shape[-1]), k, v)


def _attention_in_place_scaled_q(q_scaled: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """``attention_in_place`` for a q already divided by sqrt(Dh)."""
    scores = q_scaled @ k.transpose(-2, -1)  # [B, H, Tq, Tk]
    weights = torch.softmax(scores, dim=-1, out=scores)  # [B, H, Tq, Tk], in place
    return weights @ v, weights  # [B, H, Tq, Dh], [B, H, Tq, Tk]


# --- the fast path of MultiHeadAttention: self-attention without gradients ----------------------


def fast_self_attention(
    mha: MultiHeadAttention, x: Tensor, mask: Tensor | None = None, need_weights: bool = True
) -> tuple[Tensor, Tensor | None]:
    """``mha(x, x, x, mask, need_weights)`` when no gradient is recorded, as torch's own layer
    computes it: the three input projections in one matrix product (``fused_in_projection``), q,
    k, v cut from its result by views; where ``attention_in_place`` applies, q / sqrt(Dh) and the
    copy of q, k, v into the per-head layout in one pass (``_scale_q_per_head``). The same numbers
    as the readable forward: tests/test_attention_fast.py.
    x [B, T, D] -> (output [B, T, D], weights [B, H, T, T] or None)."""
    weight, bias = fused_in_projection(mha)  # [3D, D], [3D] or None
    # _split_heads for the three roles at once, the roles first
    qkv = F.linear(x, weight, bias).unflatten(-1, (3, mha.n_heads, -1))  # [B, T, 3, H, Dh]
    qkv = qkv.permute(2, 0, 3, 1, 4)  # [3, B, H, T, Dh], a view
    p = mha.dropout if mha.training else 0.0
    # qkv stands for q and k (their dtype and requires_grad), so no view is cut before it is needed
    if softmax_in_place_applies(qkv, qkv, mask, p, need_weights):
        qkv = _scale_q_per_head(qkv)  # contiguous [3, B, H, T, Dh], q / sqrt(Dh)
        heads, weights = _attention_in_place_scaled_q(*qkv.unbind(0))  # [B, H, T, Dh], [B, H, T, T]
    else:
        heads, weights = attention_heads(*qkv.unbind(0), mask, p, need_weights)
    del qkv  # each large tensor freed once used, as in torch's C++: a smaller heap at the peak
    out = F.linear(_merge_heads(heads), mha.out_proj.weight, mha.out_proj.bias)  # [B, T, D]
    return out, weights


def _scale_q_per_head(qkv: Tensor) -> Tensor:
    """qkv [3, B, H, T, Dh] (a view) -> a contiguous copy with q divided by sqrt(Dh)."""
    # (q / sqrt(Dh)) k^T = q k^T / sqrt(Dh); dividing the stacked tensor by (sqrt(Dh), 1, 1) scales
    # q and copies q, k, v into the layout the batched products read in one pass, not two
    divisor = qkv.new_tensor([math.sqrt(qkv.shape[-1]), 1.0, 1.0]).view(3, 1, 1, 1, 1)
    return torch.div(qkv, divisor, out=qkv.new_empty(qkv.shape))


class _FusedInProjection(NamedTuple):
    """``fused_in_projection``'s weights, kept on the module with what they were built from."""

    params: list[Tensor]  # the six tensors; holding them keeps their ids from being reused
    key: list[tuple[int, int, int]]  # (id, data_ptr(), _version) of each
    weight: Tensor  # [3D, D]
    bias: Tensor | None  # [3D]


def fused_in_projection(mha: MultiHeadAttention) -> tuple[Tensor, Tensor | None]:
    """cat([W^Q, W^K, W^V]) [3D, D] and cat([b^Q, b^K, b^V]) [3D] (None without biases), torch's
    ``in_proj_weight`` and ``in_proj_bias``: built on first use and kept on the module until one of
    the six tensors changes: a new tensor (a new Parameter, ``.to()``, ``w.data = ...``) by its
    identity and memory address, an in-place change (an optimizer step, load_state_dict,
    ``w.mul_(2)`` under no_grad) by its version counter, which PyTorch increments at each. A write
    through ``w.data`` (``w.data.mul_(2)``), which PyTorch does not count, is not seen."""
    # Why private attributes: the cache must cost less than the cat it saves, and id, data_ptr()
    # and _version are what change when a tensor is replaced or written (nn.Module's attribute
    # lookup, which _parameters skips, alone costs a microsecond).
    projections = (mha.q_proj, mha.k_proj, mha.v_proj)
    params = [p for proj in projections for p in proj._parameters.values() if p is not None]
    key = [(id(p), p.data_ptr(), p._version) for p in params]
    cached = getattr(mha, "_fused_in_projection", None)
    if cached is None or cached.key != key:
        weight = torch.cat([proj.weight for proj in projections])  # [3D, D]
        biases = [proj.bias for proj in projections if proj.bias is not None]
        bias = torch.cat(biases) if biases else None  # [3D]
        cached = _FusedInProjection(params, key, weight, bias)
        mha._fused_in_projection = cached
    return cached.weight, cached.bias
