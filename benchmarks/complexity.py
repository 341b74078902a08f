"""Benchmark 4: time and peak memory of one layer against the sequence length n: self-attention, an
LSTM layer and a convolution (the lectures' complexity table, Vaswani et al. 2017, Table 1).

Per layer, at width d: self-attention O(n^2 d) operations, O(1) sequential steps; recurrent
O(n d^2), O(n) sequential steps; convolution (kernel k) O(k n d^2), O(1) sequential steps. At fixed d,
time should grow like n^2 for self-attention (once n^2 d outweighs the projections' 4 n d^2, i.e.
n > 4d) and like n for the other two. Memory: the self-attention layer that returns its weights holds
H matrices of n x n numbers (n^2); the fused kernel (need_weights=False) never holds a whole n x n
matrix (n); the LSTM and the convolution hold O(n d) activations (n).
"""

from __future__ import annotations

import torch
from torch import nn

from benchmarks.common import (
    Column,
    Section,
    loglog_slope,
    peak_memory,
    summarize,
    time_side_by_side,
)
from lib.attention_fast import FastMultiHeadAttention

THEORY = {  # layer -> (time exponent, memory exponent) at fixed d, for large n
    "self-attention (weights returned)": (2, 2),
    "self-attention (fused kernel)": (2, 1),
    "LSTM": (1, 1),
    "convolution (k = 3)": (1, 1),
}


def make_layers(d_model: int, n_heads: int, seed: int = 0) -> dict:
    """name -> function of x [1, n, d] running one forward pass of that layer."""
    torch.manual_seed(seed)
    attention = FastMultiHeadAttention(d_model, n_heads).eval()
    lstm = nn.LSTM(d_model, d_model, batch_first=True).eval()
    conv = nn.Conv1d(d_model, d_model, kernel_size=3, padding=1).eval()
    return {
        "self-attention (weights returned)": lambda x: attention(x, x, x, need_weights=True),
        "self-attention (fused kernel)": lambda x: attention(x, x, x, need_weights=False),
        "LSTM": lambda x: lstm(x),
        "convolution (k = 3)": lambda x: conv(x.transpose(1, 2)),
    }  # Conv1d wants [B, d, n]


def run(
    lengths=(256, 512, 1024, 2048, 4096),
    d_model: int = 128,
    n_heads: int = 4,
    repeats: int = 7,
    warmup: int = 1,
    min_block_s: float = 0.05,
    fit_last: int = 3,
) -> Section:
    layers = make_layers(d_model, n_heads)
    rows = []
    with torch.no_grad():
        for n in lengths:
            x = torch.randn(1, n, d_model, generator=torch.Generator().manual_seed(n))  # [1, n, d]
            fns = {name: (lambda f=f: f(x)) for name, f in layers.items()}
            times = time_side_by_side(fns, repeats, warmup, min_block_s)
            for name, f in fns.items():
                wall, cpu = summarize(times[name].wall), summarize(times[name].cpu)
                rows.append(
                    {
                        "layer": name,
                        "n": n,
                        "wall_s": wall.median,
                        "wall_iqr": (wall.q1, wall.q3),
                        "cpu_s": cpu.median,
                        "peak_bytes": peak_memory(f),
                    }
                )
    fit_n = list(lengths)[-fit_last:]
    fits = []
    for name in layers:
        mine = [r for r in rows if r["layer"] == name and r["n"] in fit_n]
        ns = [r["n"] for r in mine]
        fits.append(
            {
                "layer": name,
                "time_p": loglog_slope(ns, [r["cpu_s"] for r in mine]),
                "wall_p": loglog_slope(ns, [r["wall_s"] for r in mine]),
                "memory_p": loglog_slope(ns, [r["peak_bytes"] for r in mine]),
                "theory_time": THEORY[name][0],
                "theory_memory": THEORY[name][1],
            }
        )
    method = f"One layer of width d = {d_model} on one sequence x [1, n, d], forward pass under `torch.no_grad()`: `lib.attention_fast.FastMultiHeadAttention` (the library's multi-head attention on its fast path, {n_heads} heads) returning its weights (the full n x n matrix of every head) and with `need_weights=False` (torch's fused `scaled_dot_product_attention`), `torch.nn.LSTM(d, d)`, `torch.nn.Conv1d(d, d, 3, padding=1)`. The four layers are timed side by side at each n ({repeats} interleaved rounds, {warmup} warm-up call each; median wall-clock time with its IQR, and median CPU time). *Peak memory* is the largest number of bytes held at once by torch's CPU allocator during one forward pass, from `torch.profiler`'s memory events (`profile_memory=True`): every allocation and free inside the call summed in time order, kernels' scratch buffers included, the input and the parameters (allocated before the call) excluded. The exponents p of time ~ n^p and memory ~ n^p are least-squares slopes in log-log over the {fit_last} longest lengths (n = {', '.join(map(str, fit_n))}); the time exponent is fitted to the CPU times (steadier on a shared machine), the wall-clock one is shown next to it."
    columns = [
        Column("layer", "layer"),
        Column("n", "n"),
        Column("wall_s", "time (ms)", lambda v: f"{1e3 * v:.2f}"),
        Column("wall_iqr", "IQR", lambda p: f"[{1e3 * p[0]:.2f}, {1e3 * p[1]:.2f}]"),
        Column("cpu_s", "CPU time (ms)", lambda v: f"{1e3 * v:.2f}"),
        Column("peak_bytes", "peak memory (MiB)", lambda v: f"{v / 2**20:.2f}"),
    ]
    fit_columns = [
        Column("layer", "layer"),
        Column("time_p", "time exponent (CPU)", ".2f"),
        Column("wall_p", "time exponent (wall)", ".2f"),
        Column("theory_time", "expected", "d"),
        Column("memory_p", "memory exponent", ".2f"),
        Column("theory_memory", "expected", "d"),
    ]
    section = Section(
        "complexity",
        "4. Time and memory against sequence length (self-attention, LSTM, convolution)",
        method,
        columns,
        rows,
    )
    section.extra_tables.append(
        (f"Fitted exponents (n = {', '.join(map(str, fit_n))}, d = {d_model}):", fit_columns, fits)
    )
    section.findings += _findings(fits, rows, lengths, d_model)
    return section


def _findings(fits: list[dict], rows: list[dict], lengths, d_model: int) -> list[str]:
    by = {f["layer"]: f for f in fits}
    n_max = max(lengths)
    at_max = {r["layer"]: r for r in rows if r["n"] == n_max}
    w, fused = "self-attention (weights returned)", "self-attention (fused kernel)"
    out = [
        f"Memory: the layer that returns its weights grows like n^{by[w]['memory_p']:.2f} ({at_max[w]['peak_bytes'] / 2**20:.1f} MiB at n = {n_max}); the fused kernel like n^{by[fused]['memory_p']:.2f} ({at_max[fused]['peak_bytes'] / 2**20:.1f} MiB), the LSTM like n^{by['LSTM']['memory_p']:.2f} and the convolution like n^{by['convolution (k = 3)']['memory_p']:.2f}.",
        f"Time: self-attention grows like n^{by[w]['time_p']:.2f} (weights returned) and n^{by[fused]['time_p']:.2f} (fused), the LSTM like n^{by['LSTM']['time_p']:.2f}, the convolution like n^{by['convolution (k = 3)']['time_p']:.2f}. Expected: 2 for self-attention once its n^2 d term outweighs the projections' 4 n d^2 (n > 4d = {4 * d_model}), 1 for the other two.",
        f"At n = {n_max}, on one thread, the LSTM takes {1e3 * at_max['LSTM']['cpu_s']:.1f} ms of CPU time and fused self-attention {1e3 * at_max[fused]['cpu_s']:.1f} ms: with n > d, the LSTM does less work (n d^2 against n^2 d). What it loses is parallelism: its n steps run one after another, while self-attention is a few matrix products over all positions at once (O(1) sequential steps), which a single thread cannot show and a GPU exploits.",
    ]
    return out
