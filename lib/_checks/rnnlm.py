"""The input checks of lib.rnnlm, built on the primitives of ``lib._validate``."""

from __future__ import annotations

from torch import Tensor

from lib._validate import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_probability,
    check_sizes,
)


def check_rnn_config(cell, **sizes) -> None:
    """A recurrent model's sizes, each an int >= 1, and its cell, 'lstm' or 'gru'."""
    check_sizes(**sizes)
    check_choice(cell, "cell", ("lstm", "gru"))


def check_rnnlm(vocab_size, d_emb, d_hidden, n_layers, cell, reverse, dropout) -> None:
    check_rnn_config(cell, vocab_size=vocab_size, d_emb=d_emb, d_hidden=d_hidden, n_layers=n_layers)
    check_bool(reverse, "reverse")
    check_probability(dropout, "dropout", "[0, 1)")


def check_reverse_padded(x, lengths: Tensor) -> None:
    if not isinstance(x, Tensor) or x.dim() < 2:
        raise ValueError(
            f"x: expected a tensor [B, T, ...], got {getattr(x, 'shape', type(x).__name__)}"
        )
    B, T = x.shape[:2]
    if lengths.shape != (B,) or lengths.min() < 0 or lengths.max() > T:
        raise ValueError(f"lengths: expected {B} ints in [0, {T}], got {lengths.tolist()}")


def check_sample(n, max_len, temperature) -> None:
    check_int(n, "n", 1)
    check_int(max_len, "max_len", 1)
    check_number(temperature, "temperature", "a number > 0", lambda v: v > 0)
