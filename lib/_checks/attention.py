"""The input checks of lib.attention, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import torch
from torch import Tensor

from lib._validate import (
    broadcast_shape,
    check_bool_mask,
    check_int,
    check_mask_dtype,
    check_probability,
    check_size,
    check_tensor,
)


def check_batch_dims(a_shape, a_name: str, b: Tensor, b_name: str) -> None:
    """ValueError unless the leading (batch) dims of a and b broadcast against each other;
    a_shape is a's shape (a may be a tensor not computed yet, such as the scores)."""
    if broadcast_shape(tuple(a_shape)[:-2], b.shape[:-2]) is None:
        raise ValueError(
            f"{b_name}: expected batch dims broadcastable with {a_name} (batch dims {tuple(a_shape)[:-2]}), got shape {tuple(b.shape)}"
        )


def check_scores_and_mask(scores, mask) -> None:
    """masked_softmax's arguments: scores a floating tensor, mask None or bool broadcastable to it."""
    check_tensor(scores, "scores", "[..., Tq, Tk]", 1)
    if mask is not None:
        check_bool_mask(mask, scores.shape)


def check_additive_mask_args(mask, dtype) -> None:
    check_mask_dtype(mask)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype: expected a floating-point torch.dtype, got {dtype}")


def check_query_key(q, k, min_dim: int = 3) -> None:
    """The parameter-free scores' q [B, Tq, D], k [B, Tk, D], batch dims broadcast."""
    lead = "..., " if min_dim < 3 else "B, "
    check_tensor(q, "q", f"[{lead}Tq, D]", min_dim)
    D = q.shape[-1]
    check_tensor(k, "k", f"[{lead}Tk, {D}] (same width D as q)", min_dim, q.dtype, "q", width=D)
    check_batch_dims(q.shape, "q", k, "k")


def check_score_module_inputs(q, k, d_query: int, d_key: int, dtype) -> None:
    """GeneralScore's and AdditiveScore's q [B, Tq, Dq], k [B, Tk, Dk] of the parameters' dtype."""
    of = "the module's parameters"
    check_tensor(q, "q", f"[B, Tq, {d_query}]", 3, dtype, of, width=d_query)
    check_tensor(k, "k", f"[B, Tk, {d_key}]", 3, dtype, of, width=d_key)
    check_batch_dims(q.shape, "q", k, "k")


def check_location_score_inputs(q, k, d_query: int, n_keys: int, dtype) -> None:
    """LocationScore's q [B, Tq, Dq]; k, if given, with Tk == n_keys."""
    check_tensor(q, "q", f"[B, Tq, {d_query}]", 3, dtype, "the module's parameters", width=d_query)
    if k is not None:
        check_tensor(k, "k", f"[B, {n_keys}, Dk]", 3)
        if k.shape[-2] != n_keys:
            raise ValueError(
                f"k: expected shape [B, {n_keys}, Dk] (Tk = n_keys), got shape {tuple(k.shape)}"
            )


def check_attend_args(scores, values, mask) -> None:
    check_tensor(scores, "scores", "[..., Tq, Tk]", 2)
    check_tensor(values, "values", "[..., Tk, Dv]", 2, scores.dtype, "scores")
    if values.shape[-2] != scores.shape[-1]:
        raise ValueError(
            f"values: expected shape [..., {scores.shape[-1]}, Dv] (Tk = scores' last dim), got shape {tuple(values.shape)}"
        )
    check_batch_dims(scores.shape, "scores", values, "values")
    if mask is not None:
        check_bool_mask(mask, scores.shape)


def check_attention_args(q, k, v, mask) -> None:
    """scaled_dot_product_attention's q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv], mask."""
    check_query_key(q, k, min_dim=2)
    check_tensor(v, "v", "[..., Tk, Dv]", 2, q.dtype, "q")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v: expected shape [..., {k.shape[-2]}, Dv] (same length Tk as k), got shape {tuple(v.shape)}"
        )
    scores = broadcast_shape(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
    check_batch_dims(scores, "q and k", v, "v")
    if mask is not None:
        check_bool_mask(mask, scores)


def check_split_heads_args(x, n_heads) -> None:
    check_int(n_heads, "n_heads", 1)
    check_tensor(x, "x", "[B, T, D]", 3, exact=True, floating=False)
    if x.shape[-1] % n_heads:
        raise ValueError(
            f"x: expected a width D divisible by n_heads={n_heads}, got shape {tuple(x.shape)}"
        )


def check_merge_heads_args(x) -> None:
    check_tensor(x, "x", "[B, H, T, Dh]", 4, exact=True, floating=False)


def check_causal_mask_args(T, past) -> None:
    check_size(T, "T", 1)
    check_int(past, "past", 0)


def check_padding_mask_args(lengths, T) -> None:
    """padding_mask's T >= 1 and lengths: an integer tensor [B] of values in [0, T]."""
    check_int(T, "T", 1)
    check_tensor(lengths, "lengths", "[B]", 1, exact=True, floating=False)
    if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
        raise TypeError(f"lengths: expected integer lengths, got dtype {lengths.dtype}")
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > T):
        raise ValueError(
            f"lengths: expected values in [0, T={T}], got min {int(lengths.min())} and max {int(lengths.max())}"
        )


def check_mha_config(d_model, n_heads, dropout) -> None:
    check_int(d_model, "d_model", 1)
    check_int(n_heads, "n_heads", 1)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    check_probability(dropout, "dropout", "[0, 1)")


def check_mha_inputs(query, key, value, mask, d_model: int, n_heads: int, dtype) -> None:
    """MultiHeadAttention's query [B, Tq, D], key and value [B, Tk, D] of the parameters' dtype, and
    mask: None or bool broadcastable to [B, H, Tq, Tk], not 3-D unless its first dim is 1."""
    D, of = d_model, "the module's parameters"
    inputs = (("query", query, "Tq"), ("key", key, "Tk"), ("value", value, "Tk"))
    if query is key is value:  # self-attention: one tensor, checked once
        inputs = inputs[:1]
    for name, x, T in inputs:
        check_tensor(x, name, f"[B, {T}, {D}]", 3, dtype, of, width=D)
    for name, x, T in inputs:
        if x.dim() != 3:
            raise ValueError(
                f"{name}: expected shape [B, {T}, {D}] (3 dims), got shape {tuple(x.shape)}"
            )
    if len(inputs) == 3:
        if value.shape[1] != key.shape[1]:
            raise ValueError(
                f"value: expected shape [B, {key.shape[1]}, {D}] (same length Tk={key.shape[1]} as key), got shape {tuple(value.shape)}"
            )
        check_batch_dims(query.shape, "query", key, "key")
        check_batch_dims(query.shape, "query", value, "value")
    if mask is None:
        return
    check_mask_dtype(mask)
    B = max(query.shape[0], key.shape[0], value.shape[0])  # the batch dims broadcast (checked)
    scores = (B, n_heads, query.shape[1], key.shape[1])
    if mask.dim() == 3 and mask.shape[0] != 1:
        raise ValueError(
            f"mask: a 3-D mask is ambiguous (it would broadcast as [H, Tq, Tk], not [B, Tq, Tk]); expected [Tq, Tk], [B, 1, 1, Tk] or [B, 1, Tq, Tk], got shape {tuple(mask.shape)}"
        )
    if broadcast_shape(mask.shape, scores) != scores:
        raise ValueError(
            f"mask: expected a shape broadcastable to [B, H, Tq, Tk] = {scores} (e.g. [Tq, Tk], [B, 1, 1, Tk]), got shape {tuple(mask.shape)}"
        )
