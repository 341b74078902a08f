"""Random draws that work on any device. A ``torch.Generator`` lives on one device (the
book's are CPU generators, so that a seed gives the same draws everywhere); these helpers draw on
the generator's device and move the result to the device of the data, so that the same seed gives
the same tokens on a CPU and on a GPU, and a CPU generator never meets CUDA probabilities."""

from __future__ import annotations

import torch
from torch import Tensor


def rand(shape, device: torch.device, generator: torch.Generator | None = None) -> Tensor:
    """Uniform [0, 1) draws of ``shape`` on ``device``, from ``generator`` if given."""
    if generator is None:
        return torch.rand(shape, device=device)
    return torch.rand(shape, generator=generator, device=generator.device).to(device)


def randint(high: int, shape, device: torch.device, generator: torch.Generator | None = None):
    """Integers in [0, high) of ``shape`` on ``device``, from ``generator`` if given."""
    if generator is None:
        return torch.randint(high, shape, device=device)
    return torch.randint(high, shape, generator=generator, device=generator.device).to(device)


def multinomial(probs: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """One index drawn from each row of ``probs`` [B, V] -> [B, 1] on probs' device."""
    if generator is None or generator.device == probs.device:
        return torch.multinomial(probs, 1, generator=generator)
    return torch.multinomial(probs.to(generator.device), 1, generator=generator).to(probs.device)
