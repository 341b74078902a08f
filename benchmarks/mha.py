"""Benchmark 1: lib.attention_fast.FastMultiHeadAttention (lib.attention.MultiHeadAttention on its fast
path) against torch.nn.MultiheadAttention, with the readable lib.attention.MultiHeadAttention timed
beside them.

Both modules hold the same weights (torch's in_proj_weight is cat([q_proj, k_proj, v_proj])) and run
self-attention mha(x, x, x) on the same input x [B, T, D], no mask, timed side by side:

- forward: eval mode under torch.no_grad(). torch then takes its "fast path", the C++ operator
  torch._native_multi_head_attention; ours takes its own, ``lib.attention_fast.fast_self_attention``
  (Python: one in-projection with the three weights side by side, as torch's).
- forward+backward: train mode (dropout 0), x requires grad, out.sum().backward(); both run their
  Python forward (torch's fast path does not apply when gradients are needed).
- need_weights=False: our module calls torch's fused F.scaled_dot_product_attention, as torch's Python
  path does (forward+backward); its C++ fast path (forward) computes the weights explicitly all the
  same and drops them (shown by the profile in the findings).
- need_weights=True: both compute the weights explicitly and return them. Ours returns per-head
  weights [B, H, T, T], so torch is called with average_attn_weights=False (per-head weights, the same
  tensor): like with like. Torch's default, average_attn_weights=True, returns their mean over heads.
"""

from __future__ import annotations

import torch
from torch import nn

from benchmarks.common import (
    TIMING_NOTE,
    Column,
    Section,
    comparison_columns,
    comparison_row,
    paired_ratio,
    profile_ops,
    summarize,
    time_side_by_side,
    yes_no,
)
from lib.attention import MultiHeadAttention
from lib.attention_fast import FastMultiHeadAttention

GOALS = {False: 1.05, True: 1.15}  # need_weights -> the largest acceptable ratio ours / torch


def make_pair(
    d_model: int, n_heads: int, seed: int = 0
) -> tuple[FastMultiHeadAttention, nn.MultiheadAttention]:
    """Our module (the fast one) and torch's with the same weights."""
    torch.manual_seed(seed)
    ours = FastMultiHeadAttention(d_model, n_heads)
    theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(
            torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight])
        )
        theirs.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        theirs.out_proj.weight.copy_(ours.out_proj.weight)
        theirs.out_proj.bias.copy_(ours.out_proj.bias)
    return ours, theirs


def simple_forward(mha: MultiHeadAttention, query, key, value):
    """The readable ``lib.attention.MultiHeadAttention.forward`` with need_weights=True on mha's
    weights: three projections and ``lib.attention._scaled_dot_product_attention`` (the masked
    softmax into a new tensor), the path a student reads, instead of
    ``lib.attention_fast.fast_self_attention``, which ``FastMultiHeadAttention`` takes on
    self-attention when no gradient is needed. Timed in the same rounds, to show what the fast
    path buys."""
    return MultiHeadAttention.forward(mha, query, key, value)  # [B, Tq, D], [B, H, Tq, Tk]


def _calls(ours, theirs, x, need_weights: bool, backward: bool):
    """Three argument-free callables running one pass on x [B, T, D]: ours, torch's, and ours on the
    simple path (``simple_forward``)."""

    def ours_fn(x_):
        return ours(x_, x_, x_, need_weights=need_weights)

    def theirs_fn(x_):
        return theirs(x_, x_, x_, need_weights=need_weights, average_attn_weights=False)

    def forward(fn):
        def call():
            with torch.no_grad():
                return fn(x)

        return call

    def forward_backward(module, fn):
        params = list(module.parameters())

        def call():
            for p in params:
                p.grad = None
            x_ = x.detach().requires_grad_()
            out, _ = fn(x_)
            out.sum().backward()

        return call

    def simple_fn(x_):
        return simple_forward(ours, x_, x_, x_)

    if backward:
        return (
            forward_backward(ours, ours_fn),
            forward_backward(theirs, theirs_fn),
            forward_backward(ours, simple_fn),
        )
    return forward(ours_fn), forward(theirs_fn), forward(simple_fn)


def run(
    lengths=(64, 256, 1024),
    batch: int = 4,
    d_model: int = 256,
    n_heads: int = 8,
    repeats: int = 15,
    warmup: int = 2,
    min_block_s: float = 0.1,
) -> Section:
    ours, theirs = make_pair(d_model, n_heads)
    rows = []
    for T in lengths:
        x = torch.randn(batch, T, d_model, generator=torch.Generator().manual_seed(T))  # [B, T, D]
        for need_weights in (False, True):
            # like with like: same output (and the same per-head weights) before anything is timed
            ours.eval(), theirs.eval()
            with torch.no_grad():
                out, w = ours(x, x, x, need_weights=need_weights)
                ref, ref_w = theirs(x, x, x, need_weights=need_weights, average_attn_weights=False)
            diff = (out - ref).abs().max().item()
            if need_weights:
                diff = max(diff, (w - ref_w).abs().max().item())
            for backward in (False, True):
                ours.train(backward), theirs.train(backward)
                a, b, simple = _calls(ours, theirs, x, need_weights, backward)
                fns = {"ours": a, "torch": b, **({"simple": simple} if need_weights else {})}
                times = time_side_by_side(fns, repeats, warmup, min_block_s)
                goal = GOALS[need_weights]
                row = {
                    "T": T,
                    "pass": "forward+backward" if backward else "forward",
                    "need_weights": need_weights,
                    "goal": goal,
                    "max_abs_diff": diff,
                }
                row.update(comparison_row(times["ours"], times["torch"], "ours", "torch"))
                row["met"] = row["ratio_cpu"] <= goal
                row["simple_ratio_cpu"] = (
                    paired_ratio(times["simple"].cpu, times["torch"].cpu).median
                    if need_weights
                    else None
                )
                rows.append(row)
    ours.eval(), theirs.eval()
    # which kernels torch's fast path runs with need_weights=False, at the longest length
    x = torch.randn(batch, max(lengths), d_model, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch_ops, _ = profile_ops(lambda: theirs(x, x, x, need_weights=False), top=4)
        ours_ops, _ = profile_ops(lambda: ours(x, x, x, need_weights=False), top=4)
    # the fixed cost of one call: a forward pass on one token, where the arithmetic is negligible
    x1 = torch.randn(1, 1, d_model, generator=torch.Generator().manual_seed(1))  # [1, 1, D]
    a, b, _ = _calls(ours, theirs, x1, False, False)
    one = time_side_by_side({"ours": a, "torch": b}, repeats, warmup, min_block_s)
    fixed = {
        "what": "forward, B = 1, T = 1, need_weights=False",
        "ours_us": 1e6 * summarize(one["ours"].cpu).median,
        "torch_us": 1e6 * summarize(one["torch"].cpu).median,
    }
    method = f"`lib.attention_fast.FastMultiHeadAttention` (the library's `MultiHeadAttention` on its fast path) against `torch.nn.MultiheadAttention(batch_first=True)`, same weights, self-attention on x of shape [B={batch}, T, D={d_model}], {n_heads} heads, no mask, float32. *forward*: eval mode under `torch.no_grad()` (torch takes its C++ fast path `torch._native_multi_head_attention`, ours its Python fast path `lib.attention_fast.fast_self_attention`); *forward+backward*: `out.sum().backward()` with x requiring grad. need_weights=True: both return per-head weights [B, H, T, T] (torch with `average_attn_weights=False`; its default averages the heads). {TIMING_NOTE.format(repeats=repeats, warmup=warmup)} Here *ratio* is ours / torch: below 1, ours is faster. The goal is judged on the CPU-time ratio. *ratio, CPU, simple path*: the same ratio for need_weights=True computed on the path a student reads, the readable `lib.attention.MultiHeadAttention.forward`: three projections and `lib.attention._scaled_dot_product_attention` (`simple_forward` in `benchmarks/mha.py`), instead of the fast path `lib.attention_fast.fast_self_attention` that the fast layer takes on self-attention when no gradient is needed, timed in the same rounds (with gradients both are the simple path). *max abs diff*: largest difference of outputs (and weights) between ours and torch's, checked before timing."
    columns = [
        Column("T", "T"),
        Column("pass", "pass"),
        Column("need_weights", "need_weights"),
        *comparison_columns("ours", "torch"),
        Column("goal", "goal", lambda g: f"<= {g:.2f}"),
        Column("met", "met", yes_no),
        Column("simple_ratio_cpu", "ratio, CPU, simple path", ".3f"),
        Column("max_abs_diff", "max abs diff", ".1e"),
    ]
    section = Section(
        "mha", "1. Multi-head attention against torch.nn.MultiheadAttention", method, columns, rows
    )
    section.extra_tables.append(
        (
            "Fixed cost of one call (median CPU time per call, microseconds), measured in the same way:",
            [
                Column("what", "call"),
                Column("ours_us", "ours (µs)", ".0f"),
                Column("torch_us", "torch (µs)", ".0f"),
            ],
            [fixed],
        )
    )
    section.findings += findings(rows, fixed, torch_ops, ours_ops, max(lengths))
    for need_weights in (False, True):
        mine = [r for r in rows if r["need_weights"] == need_weights]
        worst = max(mine, key=lambda r: r["ratio_cpu"])
        section.goals.append(
            {
                "goal": f"time ours / torch <= {GOALS[need_weights]:.2f}, need_weights={need_weights}, every case",
                "measured": f"{min(r['ratio_cpu'] for r in mine):.3f} to {worst['ratio_cpu']:.3f} (highest: T = {worst['T']}, {worst['pass']})",
                "met": all(r["met"] for r in mine),
            }
        )
    return section


PROFILE_NOTES = "Profiling (torch.profiler, operator self-times; py-spy was not installed) of the need_weights=True forward pass found two differences from torch's fast path, both in the [B, H, T, T] tensors: (1) the library divided the scores by sqrt(Dh) after q k^T, one more pass over the largest tensor, where torch scales q (T x Dh numbers per head) before the product: the library now scales q too, on the simple path as well; (2) the softmax writes its result to a new [B, H, T, T] tensor, where torch overwrites the scores. For long sequences this allocation is the costly part: a tensor of 128 MiB (T = 1024) is fresh memory from the operating system on every call, paid in page faults. The fast path `attention_in_place` (now in lib/attention_fast.py) computes the softmax in place; the fast layer takes it when no gradient is needed and there is no mask (the masking is written once, in the simple path); with autograd the scores must be kept for the backward pass, so it allocates, as torch does. The input checks used `torch.broadcast_shapes`, about 10 µs per call here; a small pure-Python check (`lib._validate.broadcast_shape`) replaces it. The weights and outputs are the same up to rounding (scaling q before the product rounds differently from dividing the scores after it): the tests of lib/attention.py pass unchanged, and *max abs diff* above compares with torch. Later, on an Intel Xeon where the fixed cost of a call decided the shortest length, the layer got a fast path of its own for self-attention without gradients, `fast_self_attention`, tested equal to the readable forward: one matrix product for the three input projections, as torch does (the weights side by side, `fused_in_projection`, kept on the module until a parameter changes), q divided and q, k, v copied into the per-head layout in one pass (the readable forward divides q, then the batched products copy q, k and v one by one), each large tensor freed once used, and a self-attention input checked once instead of three times. Short lengths also depend on the C library's allocator: when it gives the heap back to the system at the end of a call, the next call pays for fresh pages; we counted from 0 to about 500 page faults a call at T = 64 for either implementation, changing from one process to the next, which moves a ratio there by several percent between runs. The fast paths now live in their own module, lib/attention_fast.py (`FastMultiHeadAttention`, the layer this benchmark times), beside the readable lib/attention.py that the chapters read, and tests/test_attention_fast.py checks that the two give the same outputs and gradients."


def findings(
    rows: list[dict], fixed: dict, torch_ops: list[dict], ours_ops: list[dict], t_max: int
) -> list[str]:
    """What the rows show, in sentences computed from them (and from the two profiles at T = t_max)."""
    out = []
    names = [op["op"] for op in torch_ops]
    fused = [
        op["op"] for op in ours_ops if "scaled_dot_product" in op["op"] and "_for_cpu" in op["op"]
    ]
    if "`aten::_softmax`" in names and fused:
        long_fwd = [
            r for r in rows if r["T"] == t_max and r["pass"] == "forward" and not r["need_weights"]
        ]
        out.append(
            f"With need_weights=False, torch's fast path (`torch._native_multi_head_attention`) still computes the T x T matrix of every head: its top operators at T = {t_max} are {', '.join(names)} (torch.profiler), no fused attention kernel; ours calls F.scaled_dot_product_attention, which on this CPU runs {fused[0]}"
            + (
                f", hence the forward ratio of {long_fwd[0]['ratio_cpu']:.2f} at T = {t_max}."
                if long_fwd
                else "."
            )
        )
    missed = [r for r in rows if not r["met"]]
    out.append(
        f"{len(rows) - len(missed)} of {len(rows)} cases meet their goal (CPU-time ratio)."
        + (
            ""
            if not missed
            else " Missed: "
            + "; ".join(
                f"T = {r['T']}, {r['pass']}, need_weights={r['need_weights']}: {r['ratio_cpu']:.3f} (IQR {r['ratio_cpu_iqr'][0]:.3f} to {r['ratio_cpu_iqr'][1]:.3f}, goal <= {r['goal']:.2f})"
                for r in missed
            )
            + "."
        )
    )
    weights = [r for r in rows if r["need_weights"]]
    if weights:
        simple = [r["simple_ratio_cpu"] for r in weights]
        fast = [r["ratio_cpu"] for r in weights]
        out.append(
            f"need_weights=True: the simple path ran at {min(simple):.2f} to {max(simple):.2f} times torch's time; the library's layer, with its fast path, at {min(fast):.2f} to {max(fast):.2f}."
        )
    out.append(PROFILE_NOTES)
    extra = fixed["ours_us"] - fixed["torch_us"]
    shortest = [
        r
        for r in rows
        if r["T"] == min(x["T"] for x in rows) and r["pass"] == "forward" and not r["need_weights"]
    ]
    if shortest:
        r = shortest[0]
        share = extra / (1e6 * r["ours_cpu_s"])
        out.append(
            f"Fixed cost: one call of our module costs {fixed['ours_us']:.0f} µs of CPU time on a single token against {fixed['torch_us']:.0f} µs for torch's fast path (one C++ operator); our forward without gradients checks its inputs, then is Python calling one in-projection (`F.linear` with the three weights side by side), the attention kernel and the output projection. At T = {r['T']} the forward ratio is {r['ratio_cpu']:.3f}; this fixed difference of {extra:.0f} µs accounts for about {100 * share:.0f}% of the call. With need_weights=True, both write q, k and v into the per-head layout [B, H, T, Dh] in one pass with q scaled; torch's pass (`aten::_transform_bias_rescale_qkv`) also adds the bias, which ours adds in the matrix product (`aten::addmm`, which first copies the bias into its output), and is a kernel written for it where ours is a general elementwise division."
        )
    return out
