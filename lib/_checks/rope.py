"""The input checks of lib.rope, built on the primitives of ``lib._validate``."""

from __future__ import annotations

import math

from torch import Tensor

from lib._validate import check_int, check_number


def check_rope_args(head_dim, theta, scaling, scaling_type: type, theta_name="theta") -> None:
    """``lib.rope.rope_frequencies``'s arguments: an even head_dim, a positive theta (called
    ``theta_name``), and scaling None or a Llama3RopeScaling."""
    check_int(head_dim, "head_dim", 2)
    if head_dim % 2:
        raise ValueError(f"head_dim={head_dim} must be even: RoPE rotates pairs of coordinates")
    check_number(theta, theta_name, "a positive finite number", lambda v: 0 < v < math.inf)
    if scaling is not None and not isinstance(scaling, scaling_type):
        raise TypeError(
            f"rope_scaling: expected None or a lib.rope.Llama3RopeScaling (other scalings are not implemented), got {type(scaling).__name__}"
        )
    if scaling is not None:
        s = scaling
        check_number(s.factor, "rope_scaling.factor", "a number >= 1", lambda v: v >= 1)
        if not 0 < s.low_freq_factor < s.high_freq_factor:
            raise ValueError(
                f"rope_scaling: expected 0 < low_freq_factor < high_freq_factor, got {s.low_freq_factor} and {s.high_freq_factor}"
            )
        check_int(
            s.original_max_position_embeddings, "rope_scaling.original_max_position_embeddings", 1
        )


def check_rope_permutation(weight, n_heads) -> None:
    """``lib.rope.to_halves`` / ``to_interleaved``: weight a tensor whose first dim is H * Dh,
    Dh even."""
    if not isinstance(weight, Tensor) or weight.dim() < 1:
        raise TypeError(
            f"weight: expected a tensor [H * Dh, ...] (a q or k projection), got {type(weight).__name__}"
        )
    check_int(n_heads, "n_heads", 1)
    rows = weight.shape[0]
    if rows % (2 * n_heads):
        raise ValueError(
            f"weight: {rows} rows do not split into n_heads={n_heads} heads of an even head_dim, got shape {tuple(weight.shape)}"
        )
