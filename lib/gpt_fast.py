"""The fast path of lib.gpt's key/value cache: the same interface and the same numbers as
``lib.gpt.KVCache``, without copying the whole cache at every step.

``lib.gpt.KVCache`` appends each new position with ``torch.cat``, which copies all P cached
positions of every layer at every generation step: O(P) work per step that does not teach
anything. ``FastKVCache`` keeps each layer's keys and values in a buffer [B, H, capacity, Dh]
that doubles when full and writes the new positions in place, so a step copies one position.
Use it through ``lib.gpt.step_function(model, cache_type=FastKVCache)`` or
``model(input_ids, kv_cache=FastKVCache())``; tests/test_gpt.py checks that it gives the same
logits and the same generated tokens as ``KVCache``, and benchmarks/kv_cache.py times both.
"""

from __future__ import annotations

from torch import Tensor

__all__ = ["FastKVCache"]


class FastKVCache:
    """``lib.gpt.KVCache`` with preallocated buffers: ``keys[l]``, ``values[l]`` are views
    [B, H, P, Dh] of buffers [B, H, capacity, Dh]; ``update`` writes in place and doubles the
    capacity when full; ``length`` and ``reorder`` as in KVCache."""

    def __init__(self):
        self._k: list[Tensor] = []  # per layer: [B, H, capacity, Dh]
        self._v: list[Tensor] = []
        self._n: list[int] = []  # per layer: positions filled

    @property
    def keys(self) -> list[Tensor]:
        return [k[:, :, :n] for k, n in zip(self._k, self._n)]  # views [B, H, P, Dh]

    @property
    def values(self) -> list[Tensor]:
        return [v[:, :, :n] for v, n in zip(self._v, self._n)]  # views [B, H, P, Dh]

    @property
    def length(self) -> int:
        """P, the number of positions cached (0 when empty)."""
        return self._n[0] if self._n else 0

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append the new k, v [B, H, T, Dh] of `layer`; return all of them [B, H, P + T, Dh]."""
        B, H, T, Dh = k.shape
        if layer == len(self._k):  # first call: an empty buffer
            self._k.append(k.new_empty(B, H, max(2 * T, 64), Dh))
            self._v.append(v.new_empty(B, H, max(2 * T, 64), Dh))
            self._n.append(0)
        n = self._n[layer]
        if n + T > self._k[layer].shape[2]:  # full: double the capacity
            for store in (self._k, self._v):
                bigger = store[layer].new_empty(B, H, 2 * (n + T), Dh)
                bigger[:, :, :n] = store[layer][:, :, :n]
                store[layer] = bigger
        self._k[layer][:, :, n : n + T] = k  # written in place
        self._v[layer][:, :, n : n + T] = v
        self._n[layer] = n + T
        return self._k[layer][:, :, : n + T], self._v[layer][:, :, : n + T]  # [B, H, P + T, Dh]

    def reorder(self, rows: Tensor) -> None:
        """Keep the batch rows `rows` (int [B'], repeats allowed) of every layer's keys and values."""
        self._k = [k[rows] for k in self._k]
        self._v = [v[rows] for v in self._v]
