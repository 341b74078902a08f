"""Benchmark 2: training throughput (tokens per second) of lib.gpt.GPT against a minimal
nanoGPT-style reference model written here, with the same configuration.

The reference (``RefGPT``) is the GPT-2 architecture as nanoGPT writes it (Radford et al. 2019;
Karpathy's nanoGPT ``model.py``): token and position embeddings, n_layer pre-LN blocks (LayerNorm ->
causal self-attention with one fused q/k/v projection ``c_attn`` and torch's
F.scaled_dot_product_attention(is_causal=True) -> residual; LayerNorm -> MLP 4x with GELU (tanh
approximation, as GPT-2) -> residual), a final LayerNorm and a language-model head tied to the token
embedding; biases everywhere; N(0, 0.02) initialization, the residual projections scaled by
1/sqrt(2 n_layer). A training step is the same for both: forward(idx, targets) -> loss, backward,
AdamW step, gradients set to None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.common import (
    TIMING_NOTE,
    Column,
    Section,
    comparison_columns,
    comparison_row,
    time_side_by_side,
    yes_no,
)
from lib.gpt import GPT, GPTConfig

GOAL = 0.95  # lib.gpt's tokens/s over the reference's tokens/s should be at least this


@dataclass(frozen=True)
class RefConfig:
    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0


class RefCausalSelfAttention(nn.Module):
    def __init__(self, c: RefConfig):
        super().__init__()
        self.n_head, self.dropout = c.n_head, c.dropout
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd)
        self.resid_dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)  # [B, T, C] each
        # [B, H, T, Dh]
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )  # [B, H, T, Dh]
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class RefMLP(nn.Module):
    def __init__(self, c: RefConfig):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class RefBlock(nn.Module):
    def __init__(self, c: RefConfig):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(c.n_embd), RefCausalSelfAttention(c)
        self.ln_2, self.mlp = nn.LayerNorm(c.n_embd), RefMLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class RefGPT(nn.Module):
    """The nanoGPT-style reference: forward(idx [B, T], targets [B, T] or None) -> (logits [B, T, V], loss)."""

    def __init__(self, c: RefConfig):
        super().__init__()
        self.config = c
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(c.vocab_size, c.n_embd),
                wpe=nn.Embedding(c.block_size, c.n_embd),
                drop=nn.Dropout(c.dropout),
                h=nn.ModuleList(RefBlock(c) for _ in range(c.n_layer)),
                ln_f=nn.LayerNorm(c.n_embd),
            )
        )
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)  # [T]
        # [B, T, C]
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))  # [B, T, V]
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def loss_of(output):
    """The loss from a forward's output: (logits, loss), or an object/dict with a ``loss``."""
    if isinstance(output, (tuple, list)):
        return output[1]
    if isinstance(output, dict):
        return output["loss"]
    return output.loss


def _step_fn(model, idx, targets, lr: float = 3e-4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)

    def step():
        loss = loss_of(model(idx, targets))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())  # tied weights are counted once


def run(
    vocab_size: int = 512,
    block_size: int = 128,
    n_layer: int = 4,
    n_head: int = 4,
    n_embd: int = 128,
    batch: int = 8,
    repeats: int = 9,
    warmup: int = 2,
    min_block_s: float = 0.1,
) -> Section:
    config = dict(
        vocab_size=vocab_size,
        block_size=block_size,
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        dropout=0.0,
    )
    method = f"One training step: the loss of `model(idx, targets)` (`GPTOutput.loss` for lib.gpt, the second of `(logits, loss)` for the reference), `loss.backward()`, `AdamW.step()` (lr 3e-4, weight decay 0.1), gradients set to None; a batch of {batch} sequences of {block_size} tokens (random ids, the same batch every step, so {batch * block_size} tokens per step); configuration vocab_size={vocab_size}, block_size={block_size}, n_layer={n_layer}, n_head={n_head}, n_embd={n_embd}, dropout=0 for both models. The reference is the minimal nanoGPT-style model written in `benchmarks/gpt_training.py` (one fused q/k/v projection, `F.scaled_dot_product_attention(is_causal=True)`). The two models' steps are timed side by side. {TIMING_NOTE.format(repeats=repeats, warmup=warmup)} Here *ratio* is lib.gpt's throughput over the reference's (the reference's time over lib.gpt's): above 1, lib.gpt trains faster. The goal is judged on the CPU-time ratio."
    columns = [
        Column("batch", "batch x block"),
        Column("params_lib", "parameters (lib.gpt)", ","),
        Column("params_ref", "parameters (reference)", ","),
        Column("lib_tok_s", "lib.gpt (tokens/s)", ",.0f"),
        Column("ref_tok_s", "reference (tokens/s)", ",.0f"),
        *comparison_columns("ref", "lib", "reference step", "lib.gpt step"),
        Column("goal", "goal", lambda g: f">= {g:.2f}"),
        Column("met", "met", yes_no),
    ]
    section = Section(
        "gpt_training",
        "2. Training throughput of lib.gpt.GPT against a nanoGPT-style reference",
        method,
        columns,
    )
    goal = f"tokens/s lib.gpt / reference >= {GOAL:.2f}"
    torch.manual_seed(0)
    ours = GPT(GPTConfig(**config)).train()
    torch.manual_seed(0)
    ref = RefGPT(RefConfig(**config)).train()
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(vocab_size, (batch, block_size), generator=g)  # [B, T]
    targets = torch.randint(vocab_size, (batch, block_size), generator=g)  # [B, T]
    times = time_side_by_side(
        {"lib": _step_fn(ours, idx, targets), "ref": _step_fn(ref, idx, targets)},
        repeats,
        warmup,
        min_block_s,
    )
    row = {
        "batch": f"{batch} x {block_size}",
        "params_lib": count_parameters(ours),
        "params_ref": count_parameters(ref),
        "goal": GOAL,
    }
    # ratio = t_ref / t_lib = throughput ratio
    row.update(comparison_row(times["ref"], times["lib"], "ref", "lib"))
    tokens = batch * block_size
    row["lib_tok_s"], row["ref_tok_s"] = tokens / row["lib_s"], tokens / row["ref_s"]
    row["met"] = row["ratio_cpu"] >= GOAL
    section.rows.append(row)
    section.goals.append(
        {
            "goal": goal,
            "measured": f"{row['ratio_cpu']:.3f} (IQR {row['ratio_cpu_iqr'][0]:.3f} to {row['ratio_cpu_iqr'][1]:.3f})",
            "met": row["met"],
        }
    )
    if row["params_lib"] != row["params_ref"]:
        section.findings.append(
            f"The two models do not have the same number of parameters ({row['params_lib']:,} against {row['params_ref']:,}): lib.gpt's architecture differs from the reference's, so the ratio compares slightly different models."
        )
    return section
