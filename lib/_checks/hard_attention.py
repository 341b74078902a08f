"""The input checks of lib.hard_attention, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from lib._validate import check_number


def check_hard_attention(reinforce_weight, entropy_weight, baseline_decay) -> None:
    """HardAttentionDecoder's loss weights, numbers >= 0, and its baseline's decay, in [0, 1)."""
    for name, value in (
        ("reinforce_weight", reinforce_weight),
        ("entropy_weight", entropy_weight),
    ):
        check_number(value, name, "a number >= 0", lambda v: v >= 0)
    check_number(baseline_decay, "baseline_decay", "a number in [0, 1)", lambda v: 0 <= v < 1)
