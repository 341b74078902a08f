"""Attention: score functions, masked softmax and scaled dot-product attention.

Shape legend (used in every docstring and shape comment below):

    B    batch; where a function says "leading dims", B may be several dims (batch, heads, ...)
         and the leading dims of q and k only need to broadcast against each other
    Tq   number of queries          Tk   number of keys (= number of values)
    Dq   query width                Dk   key width                Dv   value width
    H    hidden width of the additive score's small network

Mask convention, everywhere in this library: a *boolean* tensor, True where a query may attend
to a key, broadcastable to the scores [B, Tq, Tk] (e.g. [Tk], [B, 1, Tk] or [B, Tq, Tk]).
``additive_mask`` is the only place that turns it into the additive 0 / -inf form.

Pipeline: scores = score(q, k) -> weights = masked_softmax(scores, mask) -> output = weights @ v.
"""

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "masked_softmax", "additive_mask", "dot_product_score", "scaled_dot_product_score",
    "cosine_score", "GeneralScore", "AdditiveScore", "LocationScore", "attend",
    "scaled_dot_product_attention",
]


# --- input checks: catch bad input here, with a message naming the argument ----------------------

def _check_tensor(x, name: str, layout: str, min_dim: int, dtype=None, dtype_of: str = "",
                  width: int | None = None) -> None:
    """TypeError unless x is a floating tensor (of `dtype`, that of `dtype_of`, if given);
    ValueError if x.dim() < min_dim or (if `width` is given) x.shape[-1] != width."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor of shape {layout}, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"{name}: expected dtype {dtype} (same as {dtype_of}), got {x.dtype}")
    if x.dim() < min_dim:
        raise ValueError(f"{name}: expected shape {layout} (at least {min_dim} dim{'s' * (min_dim > 1)}), "
                         f"got shape {tuple(x.shape)}")
    if width is not None and x.shape[-1] != width:
        raise ValueError(f"{name}: expected shape {layout}, got shape {tuple(x.shape)}")


def _check_batch(a: Tensor, a_name: str, b: Tensor, b_name: str) -> None:
    """ValueError unless the leading (batch) dims of a and b broadcast against each other."""
    try:
        torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise ValueError(f"{b_name}: expected batch dims broadcastable with {a_name} (batch dims "
                         f"{tuple(a.shape[:-2])}), got shape {tuple(b.shape)}") from None


def _check_qk(q, k, min_dim: int = 3) -> None:
    """Checks shared by the parameter-free scores: q [B, Tq, D], k [B, Tk, D], batch dims broadcast."""
    lead = "..., " if min_dim < 3 else "B, "
    _check_tensor(q, "q", f"[{lead}Tq, D]", min_dim)
    _check_tensor(k, "k", f"[{lead}Tk, {q.shape[-1]}] (same width D as q)", min_dim, q.dtype, "q",
                  width=q.shape[-1])
    _check_batch(q, "q", k, "k")


# --- softmax with a mask ---------------------------------------------------------------------------

def masked_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """Softmax of ``scores`` along ``dim`` over the allowed entries only: the attention weights
    alpha_ij = exp(e_ij) / sum_k exp(e_ik) of Bahdanau et al. 2015, eq. 6, with a mask.

    scores [..., Tq, Tk] (any shape), mask bool broadcastable to scores, True = may attend.
    Returns weights of the same shape and dtype: each row sums to 1 over its allowed entries,
    masked entries are exactly 0, and a row with no allowed entry is all zeros, with zero
    gradients. Deviation, on purpose: the naive softmax(scores + (0 / -inf mask)) gives NaN for
    such a row, which then spreads through every later layer.

    Numerics: float16/bfloat16 scores are computed in float32 and cast back; the row maximum is
    taken over allowed entries only and subtracted before exp, so scores of 1e4 or 3e38 do not
    overflow.
    """
    _check_tensor(scores, "scores", "[..., Tq, Tk]", 1)
    if mask is None:
        mask = torch.ones((), dtype=torch.bool, device=scores.device)  # everything allowed
    elif not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask: expected a bool tensor (True = may attend), got {got}")
    try:
        ok = torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(f"mask: expected a shape broadcastable to the scores' {tuple(scores.shape)} "
                         f"(e.g. [Tk], [B, 1, Tk], [B, Tq, Tk]), got shape {tuple(mask.shape)}")

    x = scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores
    x = torch.where(mask, x, float("-inf"))                    # [B, Tq, Tk]; masked -> -inf
    row_max = x.amax(dim=dim, keepdim=True).detach()           # [B, Tq, 1]; max over allowed only
    row_max = row_max.masked_fill(row_max == float("-inf"), 0.0)  # fully masked row: shift by 0
    e = torch.exp(x - row_max)                                 # [B, Tq, Tk]; masked -> exactly 0
    # The row's largest allowed entry contributes exp(0) = 1, so the sum is >= 1 whenever a row
    # has an allowed entry; clamping at 1 therefore only touches fully masked rows (0/0 -> 0/1).
    denom = e.sum(dim=dim, keepdim=True).clamp_min(1.0)        # [B, Tq, 1]
    return (e / denom).to(scores.dtype)


def additive_mask(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """The one conversion from the boolean mask (True = may attend) to additive form.

    Returns a tensor shaped like ``mask`` holding 0 where allowed and -inf where not, for torch
    functions that add a float mask to the scores. Beware of torch's own boolean conventions:
    ``torch.nn.functional.scaled_dot_product_attention(attn_mask=...)`` uses ours (True = allowed),
    but ``torch.nn.MultiheadAttention``'s ``attn_mask`` and ``key_padding_mask`` use the opposite
    (True = NOT allowed): pass ``~mask`` there, or this function's output.
    """
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask: expected a bool tensor (True = may attend), got {got}")
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype: expected a floating-point torch.dtype, got {dtype}")
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))


# --- parameter-free score functions: q [B, Tq, D], k [B, Tk, D] -> scores [B, Tq, Tk] -------------

def dot_product_score(q: Tensor, k: Tensor) -> Tensor:
    """score(q_i, k_j) = q_i . k_j  (Luong et al. 2015, sec. 3.1, eq. 8, "dot").

    q [B, Tq, D], k [B, Tk, D] (leading dims broadcast) -> [B, Tq, Tk].
    """
    _check_qk(q, k)
    return q @ k.transpose(-2, -1)                             # [B, Tq, Tk]


def scaled_dot_product_score(q: Tensor, k: Tensor) -> Tensor:
    """score(q_i, k_j) = q_i . k_j / sqrt(Dk)  (Vaswani et al. 2017, eq. 1, inside the softmax).

    q [B, Tq, D], k [B, Tk, D] (leading dims broadcast) -> [B, Tq, Tk].
    """
    return dot_product_score(q, k) / math.sqrt(k.shape[-1])


def cosine_score(q: Tensor, k: Tensor, eps: float = 1e-8) -> Tensor:
    """score(q_i, k_j) = q_i . k_j / (|q_i| |k_j|)  (Graves et al. 2014, NTM content-based addressing,
    sec. 3.3.1, eqs. 5-6).

    q [B, Tq, D], k [B, Tk, D] (leading dims broadcast) -> [B, Tq, Tk], values in [-1, 1].
    Deviations: the NTM multiplies the cosine by a learned key strength beta > 0 before the
    softmax; that factor is left to the caller (``beta * cosine_score(q, k)``). Each norm is
    clamped at ``eps`` so that a zero vector scores 0 instead of NaN.
    """
    _check_qk(q, k)
    q_unit = F.normalize(q, dim=-1, eps=eps)                   # [B, Tq, D]
    k_unit = F.normalize(k, dim=-1, eps=eps)                   # [B, Tk, D]
    return q_unit @ k_unit.transpose(-2, -1)                   # [B, Tq, Tk]


# --- score functions with parameters -------------------------------------------------------------

class GeneralScore(nn.Module):
    """score(q_i, k_j) = q_i^T W_a k_j  (Luong et al. 2015, sec. 3.1, eq. 8, "general").

    forward(q [B, Tq, Dq], k [B, Tk, Dk]) -> [B, Tq, Tk]. ``W_a`` is nn.Linear(Dk, Dq, bias=False),
    so ``W_a.weight`` is the paper's matrix W_a of shape [Dq, Dk].
    Initialization: uniform in [-0.1, 0.1], as Luong et al. 2015, sec. 4.1, do for all parameters.
    """

    def __init__(self, d_query: int, d_key: int):
        super().__init__()
        self.d_query, self.d_key = d_query, d_key
        self.W_a = nn.Linear(d_key, d_query, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.W_a.weight, -0.1, 0.1)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        dtype, of = self.W_a.weight.dtype, "the module's parameters"
        _check_tensor(q, "q", f"[B, Tq, {self.d_query}]", 3, dtype, of, width=self.d_query)
        _check_tensor(k, "k", f"[B, Tk, {self.d_key}]", 3, dtype, of, width=self.d_key)
        _check_batch(q, "q", k, "k")
        return q @ self.W_a(k).transpose(-2, -1)               # [B, Tq, Dq] @ [B, Dq, Tk] -> [B, Tq, Tk]


class AdditiveScore(nn.Module):
    """score(q_i, k_j) = v_a^T tanh(W_q q_i + W_k k_j)  (Bahdanau et al. 2015: the alignment model
    e_ij = a(s_{i-1}, h_j) of sec. 3.1, eq. 6, in the form of appendix A.1.2, where W_q is their
    W_a and W_k their U_a).

    forward(q [B, Tq, Dq], k [B, Tk, Dk]) -> [B, Tq, Tk]. This is the same function as Luong et al.'s
    "concat" score v_a^T tanh(W_a [q; k]) (2015, eq. 8): W_a = [W_q | W_k] split into two column
    blocks, so W_a [q; k] = W_q q + W_k k. Splitting lets us project the Tq queries and Tk keys once
    each instead of all Tq x Tk concatenated pairs. Memory is O(B Tq Tk H).
    Initialization (Bahdanau et al. 2015, appendix B.1): W_q, W_k ~ N(0, 0.001^2) and v_a = 0, so at
    initialization every score is exactly 0 and the attention is uniform; re-initialize the
    weights yourself to draw an untrained but non-uniform example.
    """

    def __init__(self, d_query: int, d_key: int, d_hidden: int):
        super().__init__()
        self.d_query, self.d_key, self.d_hidden = d_query, d_key, d_hidden
        self.W_q = nn.Linear(d_query, d_hidden, bias=False)
        self.W_k = nn.Linear(d_key, d_hidden, bias=False)
        self.v_a = nn.Linear(d_hidden, 1, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.W_q.weight, std=0.001)
        nn.init.normal_(self.W_k.weight, std=0.001)
        nn.init.zeros_(self.v_a.weight)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        dtype, of = self.W_q.weight.dtype, "the module's parameters"
        _check_tensor(q, "q", f"[B, Tq, {self.d_query}]", 3, dtype, of, width=self.d_query)
        _check_tensor(k, "k", f"[B, Tk, {self.d_key}]", 3, dtype, of, width=self.d_key)
        _check_batch(q, "q", k, "k")
        hidden = self.W_q(q).unsqueeze(-2) + self.W_k(k).unsqueeze(-3)  # [B, Tq, 1, H] + [B, 1, Tk, H]
        return self.v_a(torch.tanh(hidden)).squeeze(-1)                # [B, Tq, Tk, 1] -> [B, Tq, Tk]


class LocationScore(nn.Module):
    """scores_i = W_a q_i  (Luong et al. 2015, sec. 3.1, eq. 9, "location": the softmax of these
    scores is the alignment; it depends on the query only, never on the keys' content).

    forward(q [B, Tq, Dq], k=None) -> [B, Tq, n_keys]. ``W_a`` is nn.Linear(Dq, n_keys, bias=False).
    Deviations: we return the scores, not their softmax (apply ``masked_softmax``, as for every
    other score); the number of source positions is fixed at ``n_keys``, so ``k``, if given, is
    only checked to have Tk == n_keys.
    Initialization: uniform in [-0.1, 0.1] (Luong et al. 2015, sec. 4.1).
    """

    def __init__(self, d_query: int, n_keys: int):
        super().__init__()
        self.d_query, self.n_keys = d_query, n_keys
        self.W_a = nn.Linear(d_query, n_keys, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.W_a.weight, -0.1, 0.1)

    def forward(self, q: Tensor, k: Tensor | None = None) -> Tensor:
        _check_tensor(q, "q", f"[B, Tq, {self.d_query}]", 3, self.W_a.weight.dtype,
                      "the module's parameters", width=self.d_query)
        if k is not None:
            _check_tensor(k, "k", f"[B, {self.n_keys}, Dk]", 3)
            if k.shape[-2] != self.n_keys:
                raise ValueError(f"k: expected shape [B, {self.n_keys}, Dk] (Tk = n_keys), "
                                 f"got shape {tuple(k.shape)}")
        return self.W_a(q)                                     # [B, Tq, n_keys]


# --- attention: weights and weighted sum of values -----------------------------------------------

def attend(scores: Tensor, values: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """weights = masked_softmax(scores, mask); output = weights @ values.

    scores [..., Tq, Tk], values [..., Tk, Dv] (leading dims broadcast), mask bool broadcastable
    to scores -> (output [..., Tq, Dv], weights [..., Tq, Tk]). The output row i is the context
    vector c_i = sum_j weights_ij v_j (Bahdanau et al. 2015, eq. 5). A fully masked row gives
    zero weights and a zero output.
    """
    _check_tensor(scores, "scores", "[..., Tq, Tk]", 2)
    _check_tensor(values, "values", "[..., Tk, Dv]", 2, scores.dtype, "scores")
    if values.shape[-2] != scores.shape[-1]:
        raise ValueError(f"values: expected shape [..., {scores.shape[-1]}, Dv] (Tk = scores' last dim), "
                         f"got shape {tuple(values.shape)}")
    _check_batch(scores, "scores", values, "values")
    weights = masked_softmax(scores, mask, dim=-1)             # [..., Tq, Tk]
    return weights @ values, weights                           # [..., Tq, Dv], [..., Tq, Tk]


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor,
                                 mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(Dk)) V  (Vaswani et al. 2017, eq. 1), masked.

    q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv] with any leading dims (e.g. [B, H, T, D]) that
    broadcast; mask bool, True = may attend -> (output [..., Tq, Dv], weights [..., Tq, Tk]).
    The output equals torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    (same boolean convention). On a fully masked row this gives zero weights and output; recent
    torch versions do the same there, older ones returned NaN.
    Deviation from the paper: none beyond the mask; no dropout (that belongs to the caller).
    """
    _check_qk(q, k, min_dim=2)
    _check_tensor(v, "v", "[..., Tk, Dv]", 2, q.dtype, "q")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v: expected shape [..., {k.shape[-2]}, Dv] (same length Tk as k), "
                         f"got shape {tuple(v.shape)}")
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # [..., Tq, Tk]
    _check_batch(scores, "q and k", v, "v")
    return attend(scores, v, mask)
