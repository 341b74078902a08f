"""The fast path of lib.gpt's key/value cache: the same interface and the same numbers as
``lib.gpt.KVCache``, without copying the whole cache at every step.

``lib.gpt.KVCache`` appends each new position with ``torch.cat``, which copies all P cached
positions of every layer at every generation step: O(P) work per step that does not teach
anything. ``FastKVCache`` keeps each layer's keys and values in a buffer [B, H, capacity, Dh]
that doubles when full and writes the new positions in place, so a step copies one position.
Use it through ``lib.gpt.step_function(model, cache_type=FastKVCache)`` or
``model(input_ids, kv_cache=FastKVCache())``. ``greedy_decode`` is ``lib.gpt.greedy_decode`` on the
fast path: this cache, and ``torch.inference_mode`` instead of ``torch.no_grad`` (PyTorch then
skips the autograd bookkeeping of every operation, which counts when a generation step is a few
hundred small operations). tests/test_gpt.py checks that both give the same logits and the same
generated tokens as the readable path, and benchmarks/kv_cache.py times both.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lib import decoding
from lib._validate import check_gpt_decoding
from lib.gpt import GPT, step_function

__all__ = ["FastKVCache", "greedy_decode"]


class FastKVCache:
    """``lib.gpt.KVCache`` with preallocated buffers: ``keys[l]``, ``values[l]`` are views
    [B, H, P, Dh] of buffers [B, H, capacity, Dh]; ``update`` writes in place and doubles the
    capacity when full; ``length`` and ``reorder`` as in KVCache."""

    def __init__(self):
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
            self._k.append(k.new_empty(B, H, max(2 * T, 64), Dh))
            self._v.append(v.new_empty(B, H, max(2 * T, 64), Dh))
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


@torch.inference_mode()
def greedy_decode(model: GPT, input_ids: Tensor, max_new_tokens: int) -> decoding.Decoded:
    """``lib.gpt.greedy_decode`` with ``FastKVCache`` under ``torch.inference_mode``: the same
    ``Decoded`` (tokens [B, max_new_tokens], log_prob [B]), whose tensors are inference tensors (use
    them as data, not in a computation that needs gradients)."""
    check_gpt_decoding(model, input_ids, max_new_tokens)
    step = step_function(model, cache_type=FastKVCache)
    return decoding.greedy(step, input_ids, max_new_tokens)
