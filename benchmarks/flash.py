"""Benchmark 10: attention at scale (chapter 18): the peak memory of lib.flash's tiled attention
against the plain attention that builds the T x T matrix, and the tiled forward's time against the
plain one and against torch's fused ``scaled_dot_product_attention``.

The plain attention (``lib.attention.scaled_dot_product_attention``) holds the scores S and the
weights P, two [T, T] float32 matrices: 8 T^2 bytes, growing 4 times per doubling of T. The tiled
attention (``lib.flash.tiled_attention``) holds its output and log-sum-exp, T (D + 1) numbers, and a
few [Bq, Bk] tiles whose size does not depend on T: it grows at most 2 times per doubling. The goal
is that measured: the tiles' peak at most 1/16 of the plain one's at T = 4096, and at most 2.2 times
larger at each doubling of T. Time has no goal: on a CPU every line of the Python loop is a separate
PyTorch call, so the tiles are not faster there (the chapter's section on GPUs says why).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from benchmarks.common import (
    TIMING_NOTE,
    Column,
    Section,
    paired_ratio,
    peak_memory,
    summarize,
    time_side_by_side,
    yes_no,
)
from lib.attention import scaled_dot_product_attention
from lib.flash import tiled_attention

GOAL_FRACTION = 1 / 16  # tiled / plain peak memory, at most, at T = GOAL_T
GOAL_T = 4096
GOAL_GROWTH = 2.2  # tiled peak at 2T / at T, at most


def make_methods(block: int) -> dict:
    """name -> function of (q, k, v) [1, 1, T, D] running one forward pass."""
    return {
        "plain": lambda q, k, v: scaled_dot_product_attention(q, k, v),
        "tiled": lambda q, k, v: tiled_attention(q, k, v, block_q=block, block_k=block),
        # 4-D inputs: torch's CPU flash kernel (chapter 18 checks which kernel runs)
        "torch": lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
    }


def _mib(n: float) -> str:
    return f"{n / 2**20:,.2f}"


def run(
    lengths=(1024, 2048, 4096, 8192),
    head_dim: int = 64,
    block: int = 128,
    goal_length: int = GOAL_T,
    repeats: int = 5,
    warmup: int = 1,
    min_block_s: float = 0.05,
) -> Section:
    methods = make_methods(block)
    rows = []
    with torch.no_grad():
        for n in lengths:
            g = torch.Generator().manual_seed(n)
            q, k, v = (torch.randn(1, 1, n, head_dim, generator=g) for _ in range(3))
            calls = {name: (lambda f=f: f(q, k, v)) for name, f in methods.items()}
            # like with like: the three compute the same output before anything is measured
            plain_out = calls["plain"]()[0]
            gap = max(
                (calls["tiled"]()[0] - plain_out).abs().max().item(),
                (calls["torch"]() - plain_out).abs().max().item(),
            )
            del plain_out
            peaks = {name: peak_memory(f) for name, f in calls.items()}
            times = time_side_by_side(calls, repeats, warmup, min_block_s)
            row = {"T": n, "max_abs_diff": gap}
            for name in methods:
                row[f"{name}_peak"] = peaks[name]
                row[f"{name}_s"] = summarize(times[name].wall).median
                row[f"{name}_cpu_s"] = summarize(times[name].cpu).median
            row["memory_ratio"] = peaks["tiled"] / peaks["plain"]
            over_plain = paired_ratio(times["tiled"].cpu, times["plain"].cpu)
            over_torch = paired_ratio(times["tiled"].cpu, times["torch"].cpu)
            row["tiled_over_plain"] = over_plain.median
            row["tiled_over_plain_iqr"] = (over_plain.q1, over_plain.q3)
            row["tiled_over_torch"] = over_torch.median
            row["tiled_over_torch_iqr"] = (over_torch.q1, over_torch.q3)
            rows.append(row)
    for before, after in zip(rows, rows[1:]):
        after["tiled_growth"] = after["tiled_peak"] / before["tiled_peak"]
        after["plain_growth"] = after["plain_peak"] / before["plain_peak"]
    rows[0]["tiled_growth"] = rows[0]["plain_growth"] = None

    method = f"One head, D = {head_dim}, float32 inputs q, k, v of shape [1, 1, T, {head_dim}] (random, seeded), forward pass under `torch.no_grad()`, without a mask: *plain*, `lib.attention.scaled_dot_product_attention` (the chapter *Self-attention*'s, which builds the scores and the weights, [T, T] each); *tiled*, `lib.flash.tiled_attention` in tiles of {block} x {block} (Python loops over the tiles, chapter 18); *torch*, `torch.nn.functional.scaled_dot_product_attention`, which on 4-D CPU inputs runs PyTorch's own tiled kernel in C++ (`_scaled_dot_product_flash_attention_for_cpu`). Before anything is measured, the three outputs are compared (*largest difference*: float32 rounding). *Peak memory* is the largest number of bytes held at once by torch's CPU allocator during one call, from `torch.profiler`'s memory events, as in benchmark 4: every allocation and free inside the call, kernels' scratch buffers included, the inputs excluded. The goals: the tiled peak at most 1/{round(1 / GOAL_FRACTION)} of the plain one's at T = {goal_length}, and growing linearly in T, at most {GOAL_GROWTH} times from one length to the next (each is twice the one before). {TIMING_NOTE.format(repeats=repeats, warmup=warmup)} Here the three run in each round; *tiled / plain* and *tiled / torch* are ratios of CPU times (above 1: the tiles are slower). No goal on time: see the findings."
    columns = [
        Column("T", "T"),
        Column("plain_peak", "plain peak (MiB)", _mib),
        Column("tiled_peak", "tiled peak (MiB)", _mib),
        Column("memory_ratio", "tiled / plain", lambda r: f"1/{1 / r:.0f}"),
        Column("tiled_growth", "tiled, growth from T/2", ".2f"),
        Column("plain_growth", "plain, growth from T/2", ".2f"),
        Column("torch_peak", "torch peak (MiB)", _mib),
        Column("plain_s", "plain (ms)", lambda v: f"{1e3 * v:.1f}"),
        Column("tiled_s", "tiled (ms)", lambda v: f"{1e3 * v:.1f}"),
        Column("torch_s", "torch (ms)", lambda v: f"{1e3 * v:.1f}"),
        Column("tiled_over_plain", "tiled / plain, CPU", ".2f"),
        Column("tiled_over_plain_iqr", "IQR", lambda p: f"[{p[0]:.2f}, {p[1]:.2f}]"),
        Column("tiled_over_torch", "tiled / torch, CPU", ".2f"),
        Column("tiled_over_torch_iqr", "IQR", lambda p: f"[{p[0]:.2f}, {p[1]:.2f}]"),
        Column("max_abs_diff", "largest difference", ".1e"),
    ]
    section = Section(
        "flash",
        "10. Attention at scale (lib.flash): tiled attention's peak memory and time",
        method,
        columns,
        rows,
    )
    at_goal = next(r for r in rows if r["T"] == goal_length)
    section.goals.append(
        {
            "goal": f"tiled attention's peak memory <= 1/{round(1 / GOAL_FRACTION)} of plain's at T = {goal_length} (one head, D = {head_dim})",
            "measured": f"1/{1 / at_goal['memory_ratio']:.0f} ({_mib(at_goal['tiled_peak'])} MiB against {_mib(at_goal['plain_peak'])} MiB)",
            "met": at_goal["memory_ratio"] <= GOAL_FRACTION,
        }
    )
    growth = [r["tiled_growth"] for r in rows[1:]]
    section.goals.append(
        {
            "goal": f"tiled peak linear in T: at most {GOAL_GROWTH}x per doubling, T = {', '.join(map(str, lengths))}",
            "measured": ", ".join(f"{x:.2f}" for x in growth),
            "met": bool(growth) and max(growth) <= GOAL_GROWTH,
        }
    )
    last = rows[-1]
    plain_growth = ", ".join(f"{r['plain_growth']:.2f}" for r in rows[1:])
    tiled_growth = ", ".join(f"{x:.2f}" for x in growth)
    over_plain = ", ".join(f"{r['tiled_over_plain']:.2f}" for r in rows)
    over_torch = ", ".join(f"{r['tiled_over_torch']:.2f}" for r in rows)
    met = "; ".join(yes_no(g["met"]) for g in section.goals)
    section.findings += [
        f"Memory: the plain attention's peak grows {plain_growth} times per doubling (T^2: its scores and weights, 8 T^2 bytes, {_mib(8 * last['T'] ** 2)} MiB at T = {last['T']}); the tiles' {tiled_growth} times (their output and log-sum-exp grow as T, the tiles of {block} x {block} do not grow at all). At T = {last['T']}: {_mib(last['tiled_peak'])} MiB against {_mib(last['plain_peak'])} MiB, 1/{1 / last['memory_ratio']:.0f}. Goals met: {met}.",
        f"Time (no goal): the tiled loop takes {over_plain} times the plain attention's CPU time and {over_torch} times torch's kernel's at T = {', '.join(map(str, lengths))}. On a CPU every line of the loop is a separate PyTorch call from the interpreter and writes its result to memory for the next one to read; torch's kernel runs the same tiles in C++. On a GPU a fused kernel keeps each tile in on-chip SRAM and moves several times fewer bytes from HBM, which is where attention's time goes there (chapter 18, *Why it is faster on a GPU*).",
    ]
    return section
