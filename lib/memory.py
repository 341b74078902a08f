"""Peak memory of a piece of PyTorch code, counted by the tensors it creates (chapter 18; chapter 9
measures the same way with its own copy of this class).

``with PeakMemory() as m: f()`` then ``m.peak``: the largest number of bytes held at once by the
storages of the tensors that the operations inside the block created. Every operation's new output
storage is counted when it is created and uncounted when Python frees it; a view shares its base's
storage and is not counted again, nor is the result of an in-place operation. Tensors that existed
before the block (inputs, weights) are not counted, and neither is the scratch memory a kernel uses
internally: the count is that of the tensors a reader can see, which is what grows as T^2 when
attention builds its weights.
"""

from __future__ import annotations

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["PeakMemory"]


class PeakMemory(TorchDispatchMode):
    """Within ``with PeakMemory() as m:``, ``m.peak`` is the largest number of bytes held at once by
    tensors created inside the block, and ``m.now`` the bytes still held."""

    def __enter__(self):
        self.now, self.peak, self.alive = 0, 0, set()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if any(r.alias_info is not None for r in func._schema.returns):
            return out  # a view or an in-place result: memory that exists already
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.untyped_storage()._cdata not in self.alive:
                storage = t.untyped_storage()  # views share their storage: count it once
                self.alive.add(storage._cdata)
                self.now += storage.nbytes()
                self.peak = max(self.peak, self.now)
                weakref.finalize(storage, self._free, storage._cdata, storage.nbytes())
        return out

    def _free(self, key, nbytes):
        self.alive.discard(key)
        self.now -= nbytes
