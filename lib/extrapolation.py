"""Length extrapolation (chapter 18): a tiny causal Transformer whose positions are learned,
sinusoidal, RoPE, ALiBi or none, and a toy task to train it at one length and test it at longer ones.

Shape legend (used in every docstring and shape comment below):

    B    batch          T    tokens          V    symbols
    D    model width    H    heads           Dh   D / H, the width of one head

The model (``TinyDecoder``): token embedding, plus a position table for "learned" (Radford et al.
2018's, as ``lib.gpt``) and "sinusoidal" (Vaswani et al. 2017, ``lib.positional``); then pre-LN
layers of causal self-attention (``lib.flash.flash_attention``: queries and keys rotated for
"rope", ``lib.rope``; the bias of ``lib.alibi`` for "alibi"; nothing for "none", where only the
causal mask tells positions apart, Haviv et al. 2022) and a GELU feed-forward network; a final
LayerNorm and a read-out to V symbols. A learned table has ``max_len`` rows, of which training at
length T reaches only the first T: the others keep their initial values.

The task (``previous_token_batch``): random symbols x [B, T], and the answer at every position t >= 1
is the symbol before it, x_{t-1}. The offset is the same at every length, so a model that found it
from the relative position of two tokens can do the task at any length; one that tied it to absolute
positions cannot go past what it saw.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lib._validate import check_choice, check_int, check_type
from lib.alibi import alibi_slopes
from lib.flash import flash_attention
from lib.positional import sinusoidal_encoding
from lib.rope import apply_rope, rope_cos_sin, rope_frequencies

__all__ = ["POSITIONS", "TinyConfig", "TinyDecoder", "previous_token_batch", "previous_token_loss",
           "previous_token_accuracy"]  # fmt: skip

POSITIONS = ("learned", "sinusoidal", "rope", "alibi", "none")


@dataclass(frozen=True)
class TinyConfig:
    positions: str = "alibi"  # one of POSITIONS
    vocab_size: int = 16
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    max_len: int = 512  # rows of the learned and sinusoidal tables

    def __post_init__(self):
        check_choice(self.positions, "positions", POSITIONS)
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "max_len"):
            check_int(getattr(self, name), name, 1)
        if self.d_model % (2 * self.n_heads):
            raise ValueError(f"d_model={self.d_model} must split into n_heads={self.n_heads} heads "
                             "of an even width (RoPE turns pairs)")  # fmt: skip


class _Layer(nn.Module):
    def __init__(self, D: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))


class TinyDecoder(nn.Module):
    """forward(ids [B, T]) -> logits [B, T, V]; T up to ``max_len`` with a table, any T otherwise."""

    def __init__(self, config: TinyConfig):
        super().__init__()
        check_type(config, "config", TinyConfig)
        c = self.config = config
        D, H = c.d_model, c.n_heads
        self.embed = nn.Embedding(c.vocab_size, D)
        self.position = nn.Embedding(c.max_len, D) if c.positions == "learned" else None
        table = sinusoidal_encoding(c.max_len, D) if c.positions == "sinusoidal" else None
        self.register_buffer("table", table, persistent=False)
        slopes = alibi_slopes(H).float() if c.positions == "alibi" else None
        self.register_buffer("slopes", slopes, persistent=False)
        self.layers = nn.ModuleList(_Layer(D) for _ in range(c.n_layers))
        self.norm, self.head = nn.LayerNorm(D), nn.Linear(D, c.vocab_size)
        for p in self.parameters():  # GPT-2's initialization: N(0, 0.02), biases 0
            nn.init.normal_(p, std=0.02) if p.dim() > 1 else nn.init.zeros_(p)
        for m in self.modules():
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)

    def forward(self, ids: Tensor) -> Tensor:
        c, T = self.config, ids.shape[1]
        if c.positions in ("learned", "sinusoidal") and T > c.max_len:
            raise ValueError(f"ids: expected at most max_len={c.max_len} tokens, got {T}")
        x = self.embed(ids)  # [B, T, D]
        if self.position is not None:
            x = x + self.position.weight[:T]
        if self.table is not None:
            x = x + self.table[:T]
        if c.positions == "rope":
            cos, sin = rope_cos_sin(torch.arange(T), rope_frequencies(c.d_model // c.n_heads))
        for layer in self.layers:
            qkv = layer.qkv(layer.norm1(x)).unflatten(-1, (3, c.n_heads, -1))  # [B, T, 3, H, Dh]
            q, k, v = qkv.permute(2, 0, 3, 1, 4)  # [B, H, T, Dh] each
            if c.positions == "rope":
                q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            heads = flash_attention(q, k, v, causal=True, alibi_slopes=self.slopes)
            x = x + layer.proj(heads.transpose(1, 2).flatten(2))  # [B, T, D]
            x = x + layer.mlp(layer.norm2(x))
        return self.head(self.norm(x))  # [B, T, V]


def previous_token_batch(batch_size: int, length: int, vocab_size: int,
                         generator: torch.Generator) -> Tensor:  # fmt: skip
    """Random symbols [B, T]; the answers are the same tensor shifted by one (``previous_token_loss``)."""
    check_int(batch_size, "batch_size", 1)
    check_int(length, "length", 2)
    return torch.randint(0, vocab_size, (batch_size, length), generator=generator)


def previous_token_loss(model: TinyDecoder, ids: Tensor) -> Tensor:
    """Cross-entropy of predicting x_{t-1} at every position t >= 1."""
    logits = model(ids)[:, 1:]  # [B, T - 1, V]
    return F.cross_entropy(logits.flatten(0, 1), ids[:, :-1].flatten())


@torch.no_grad()
def previous_token_accuracy(model: TinyDecoder, ids: Tensor) -> float:
    """The share of positions t >= 1 where the most probable symbol is x_{t-1}."""
    model.eval()
    return (model(ids)[:, 1:].argmax(-1) == ids[:, :-1]).float().mean().item()
