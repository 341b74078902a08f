"""How the tests compare floating-point numbers: the one rule, and the helper that applies it.

Two computations of the same value agree exactly only when they are the same operations, in the same
order, on the same data (the same kernel on the same tensor, a copy, a reshape, a cached tensor read
back). Those are compared exactly (`torch.equal`, or `atol=0`).

Anywhere two summation orders or two kernels meet (a fused attention against the explicit one, a KV
cache's one-token products against the whole sequence's, AVX-512 against AVX2 against plain C++, MKL
against oneDNN), each rounding may add up to eps/2 of a running sum, and a sum of n terms may be off by
(n - 1) * eps/2 of the sum of the terms' sizes (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., eq. 4.4). So the bound is relative and scales with both

    |actual - expected| <= terms * eps * scale

- eps: the dtype's machine epsilon (float32 1.19e-7, float64 2.2e-16);
- scale: the size of the values compared (the largest |expected| by default; the size of the terms
  summed where they are larger than the result, as in a softmax's sum to 1);
- terms: how many roundings can accumulate into one value: the length of the sums on the way from the
  inputs (a product over d adds d, a softmax over T keys adds T, LayerNorm over D adds D), added up over
  the layers between the inputs and the compared values.

That is the worst case, so a test holds on any processor; it is still orders of magnitude below what a
real mistake moves (a wrong mask, position or weight changes values by about their own size).
Numbers a student computes by hand are judged by the same rule in `lib.exercises` (there the terms are
the few steps of a hand computation: see each checker's tolerance).
`make test-kernels` runs the suite on other kernel paths than this machine's own, to catch a bound that
holds on one processor only.
"""

from __future__ import annotations

import torch


def float_bound(
    expected: torch.Tensor, terms: int, scale: float | None = None, dtype: torch.dtype | None = None
) -> float:
    """terms * eps * scale, the largest difference two float computation orders may show (see above);
    eps is that of `dtype` (default: expected's dtype)."""
    if terms < 1:
        raise ValueError(f"terms must be at least 1, got {terms}")
    eps = torch.finfo(dtype or expected.dtype).eps
    if scale is None:
        scale = float(expected.detach().abs().max()) if expected.numel() else 0.0
    return terms * eps * scale


def assert_float_close(actual, expected, *, terms: int, scale: float | None = None):
    """Assert that two computations of the same values by different orders or kernels agree within
    terms * eps * scale (the module docstring says why); the relative tolerance is 0, the bound is
    already relative to the values' size."""
    expected, actual = torch.as_tensor(expected), torch.as_tensor(actual)
    # the coarser of the two dtypes rounds (a float32 result against a float64 reference)
    coarser = max(actual.dtype, expected.dtype, key=lambda t: torch.finfo(t).eps)
    bound = float_bound(expected, terms, scale, dtype=coarser)
    torch.testing.assert_close(actual, expected, rtol=0, atol=bound, check_dtype=False)
