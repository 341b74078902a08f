"""The fast path of lib.gpt's generation: the same numbers as the readable path
(``lib.gpt.KVCache``, ``GPT.forward``), in less time.

``lib.gpt.KVCache`` appends each new position with ``torch.cat``, which copies all P cached
positions of every layer at every generation step: O(P) work per step that does not teach
anything. ``FastKVCache`` keeps each layer's keys and values in a buffer [B, H, capacity, Dh]
that doubles when full and writes the new positions in place, so a step copies one position.
Use it through ``lib.gpt.step_function(model, cache_type=FastKVCache)`` or
``model(input_ids, kv_cache=FastKVCache())``.

A generation step runs the model on one token: a few hundred small operations, where the time
goes to calling them more than to the arithmetic. ``fast_forward`` is ``GPT.forward`` in eval
mode with the module calls unrolled into the functions they call (``F.linear``,
``F.layer_norm``, ...): no per-step input checks, dropout, attention weights or hidden states, the
same operations on the same tensors otherwise. ``greedy_decode`` is ``lib.gpt.greedy_decode`` on
this path: ``fast_step_function`` (``fast_forward`` with a ``FastKVCache`` sized for the whole
generation), under ``torch.inference_mode`` instead of ``torch.no_grad`` (PyTorch then skips the
autograd bookkeeping of every operation). tests/test_gpt.py checks that they give the same
logits and the same generated tokens as the readable path, and benchmarks/kv_cache.py times both.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from lib import decoding
from lib._checks.gpt import check_gpt_decoding
from lib.attention import _merge_heads, _split_heads, causal_mask
from lib.decoding import Step
from lib.gpt import GPT, CausalSelfAttention, step_function

__all__ = ["FastKVCache", "fast_forward", "fast_step_function", "greedy_decode"]


class FastKVCache:
    """``lib.gpt.KVCache`` with preallocated buffers: ``keys[l]``, ``values[l]`` are views
    [B, H, P, Dh] of buffers [B, H, capacity, Dh]; ``update`` writes in place and doubles the
    capacity when full; ``length`` and ``reorder`` as in KVCache. ``capacity``: the positions to
    make room for at the first update (at least 64), e.g. prompt + new tokens, so that the
    buffers never grow."""

    def __init__(self, capacity: int = 0):
        self.capacity = capacity
        self.keys: list[Tensor] = []  # per layer: a view [B, H, P, Dh] of the buffer
        self.values: list[Tensor] = []
        self._k: list[Tensor] = []  # per layer: the buffer [B, H, capacity, Dh]
        self._v: list[Tensor] = []

    @property
    def length(self) -> int:
        """P, the number of positions cached (0 when empty)."""
        return self.keys[0].shape[2] if self.keys else 0

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append the new k, v [B, H, T, Dh] of `layer`; return all of them [B, H, P + T, Dh]."""
        B, H, T, Dh = k.shape
        if layer == len(self._k):  # first call: an empty buffer
            capacity = max(2 * T, 64, self.capacity)
            self._k.append(k.new_empty(B, H, capacity, Dh))
            self._v.append(v.new_empty(B, H, capacity, Dh))
            self.keys.append(self._k[layer][:, :, :0])
            self.values.append(self._v[layer][:, :, :0])
        n = self.keys[layer].shape[2]
        if n + T > self._k[layer].shape[2]:  # full: double the capacity
            for store in (self._k, self._v):
                bigger = store[layer].new_empty(B, H, 2 * (n + T), Dh)
                bigger[:, :, :n] = store[layer][:, :, :n]
                store[layer] = bigger
        self._k[layer][:, :, n : n + T] = k  # written in place
        self._v[layer][:, :, n : n + T] = v
        self.keys[layer] = self._k[layer][:, :, : n + T]  # [B, H, P + T, Dh]
        self.values[layer] = self._v[layer][:, :, : n + T]
        return self.keys[layer], self.values[layer]

    def reorder(self, rows: Tensor) -> None:
        """Keep the batch rows `rows` (int [B'], repeats allowed) of every layer's keys and values."""
        self._k = [k[rows] for k in self._k]
        self._v = [v[rows] for v in self._v]
        self.keys = [k[:, :, : p.shape[2]] for k, p in zip(self._k, self.keys)]
        self.values = [v[:, :, : p.shape[2]] for v, p in zip(self._v, self.values)]


def fast_forward(model: GPT, input_ids: Tensor, kv_cache: FastKVCache) -> Tensor:
    """``model(input_ids, kv_cache=kv_cache).logits`` in eval mode, with the module calls unrolled:
    input_ids [B, T] (the tokens after the P cached ones) -> logits [B, T, V]. No input checks
    (the caller checked once), no dropout: call it on a model in eval mode (or with dropout 0)."""
    t = model.transformer
    P, T = kv_cache.length, input_ids.shape[1]
    x = F.embedding(input_ids, t.wte.weight) + t.wpe.weight[P : P + T]  # [B, T, D]
    for layer, block in enumerate(t.h):
        h = F.layer_norm(x, *_norm_args(block.ln_1))
        x = x + _fast_self_attention(block.attn, h, kv_cache, layer)  # [B, T, D]
        h = F.layer_norm(x, *_norm_args(block.ln_2))
        h = F.gelu(F.linear(h, block.mlp.c_fc.weight, block.mlp.c_fc.bias), approximate="tanh")
        x = x + F.linear(h, block.mlp.c_proj.weight, block.mlp.c_proj.bias)  # [B, T, D]
    x = F.layer_norm(x, *_norm_args(t.ln_f))
    return F.linear(x, model.lm_head.weight)  # [B, T, V]


def _norm_args(ln: torch.nn.LayerNorm) -> tuple:
    return ln.normalized_shape, ln.weight, ln.bias, ln.eps


def _fast_self_attention(
    attn: CausalSelfAttention, x: Tensor, kv_cache: FastKVCache, layer: int
) -> Tensor:
    """``CausalSelfAttention.forward(x, kv_cache, layer)[0]`` in eval mode: x [B, T, D] -> [B, T, D]."""
    T = x.shape[1]
    qkv = F.linear(x, attn.c_attn.weight, attn.c_attn.bias)  # [B, T, 3D]
    q, k, v = _split_heads(qkv, 3 * attn.n_head).chunk(3, dim=1)  # 3 x [B, H, T, Dh]
    k, v = kv_cache.update(layer, k, v)  # [B, H, P + T, Dh]
    # one new token may attend every key: no mask; a prompt: causal over the cache and itself
    mask = None if T == 1 else causal_mask(T, device=x.device, past=k.shape[2] - T)
    # attention_heads(q, k, v, mask, need_weights=False) unrolled, like every call here
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # [B, H, T, Dh]
    return F.linear(_merge_heads(heads), attn.c_proj.weight, attn.c_proj.bias)  # [B, T, D]


def fast_step_function(model: GPT, capacity: int = 0) -> Step:
    """``lib.gpt.step_function(model)`` on the fast path: ``fast_forward`` with a ``FastKVCache``
    (``capacity`` positions made room for at once), in eval mode; a model in training mode with
    dropout gets ``lib.gpt.step_function(model, cache_type=FastKVCache)``, whose dropout the fast
    forward does not have."""
    if model.training and model.config.dropout > 0:
        return step_function(model, cache_type=FastKVCache)
    cache = FastKVCache(capacity)

    def step(tokens: Tensor, parents: Tensor | None):
        if parents is not None:
            cache.reorder(parents)  # each hypothesis continues its parent's keys and values
        return fast_forward(model, tokens[:, cache.length :], cache)[:, -1], None  # [K, V]

    return step


@torch.inference_mode()
def greedy_decode(model: GPT, input_ids: Tensor, max_new_tokens: int) -> decoding.Decoded:
    """``lib.gpt.greedy_decode`` on the fast path (``fast_step_function``) under
    ``torch.inference_mode``: the same ``Decoded`` (tokens [B, max_new_tokens], log_prob [B]),
    whose tensors are inference tensors (use them as data, not in a computation that needs
    gradients)."""
    check_gpt_decoding(model, GPT, input_ids, max_new_tokens)
    step = fast_step_function(model, capacity=input_ids.shape[1] + max_new_tokens)
    return decoding.greedy(step, input_ids, max_new_tokens)
