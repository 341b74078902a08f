"""Benchmark 3: greedy generation with lib.gpt.GPT, with the key-value cache against without.

Two paths are timed against no cache: ``lib.gpt.KVCache``, the readable cache the chapter teaches
(``torch.cat`` of the past keys and values, which copies the whole cache at every step), and the
fast path ``lib.gpt_fast.greedy_decode`` (``fast_forward``, GPT.forward with its module calls
unrolled into the functions they call, and ``FastKVCache``, the same numbers written into
preallocated buffers, under ``torch.inference_mode``). The goal is judged on the fast path.

Without the cache, every new token runs the model over the whole sequence so far: the t-th step costs
O(t) positions, n new tokens O(n^2) in total. With it, every step runs the model on the one new token
and attends to the keys and values stored from the earlier steps: O(1) positions per step (the
attention itself still reads t keys). Both must give the same tokens.
"""

from __future__ import annotations

import torch

from benchmarks.common import (
    TIMING_NOTE,
    Column,
    Section,
    comparison_columns,
    comparison_row,
    profile_ops,
    time_side_by_side,
    yes_no,
)
from lib import decoding, gpt_fast
from lib.gpt import GPT, GPTConfig, KVCache, step_function
from lib.gpt_fast import FastKVCache

# with the cache at least 6x faster for 256 new tokens (issue 15)
GOAL_TOKENS, GOAL_SPEEDUP = 256, 6.0


PROFILE_NOTES = "With the cache, each new token runs the model on one position: small matrix products (`aten::addmm`, the linear layers) and, per layer, a few dozen other operators, each costing microseconds of dispatch however small its tensors; at this model size that fixed cost is a large part of every step. The fast path cuts what it can of it: `lib.gpt_fast.fast_forward` calls the functions (`F.linear`, `F.layer_norm`, `F.scaled_dot_product_attention`) instead of the modules that wrap them (each module call adds a few microseconds of Python), skips dropout and the input checks at every step (`greedy_decode` checks its input once), and the cache never grows its buffers."
# What an operator in the profile's top list stands for in lib/gpt.py's cached path, and what would avoid it.
OP_NOTES = {
    "aten::cat": "`aten::cat` on the fast path is `lib.decoding` appending each new token to the sequence (the readable `KVCache.update` adds two per layer, copying the whole cache)",
    "aten::tril": "`aten::tril` is `causal_mask(T, past=P)`, the [T, P + T] mask of T new queries (`lib.gpt.CausalSelfAttention` builds none for a one-token step, whose query may attend to every cached key)",
    "aten::where": "`aten::where` is F.scaled_dot_product_attention turning the boolean mask into an additive one",
}


def run(
    new_tokens=(64, 256, 512),
    prompt_len: int = 16,
    vocab_size: int = 512,
    block_size: int = 1024,
    n_layer: int = 4,
    n_head: int = 4,
    n_embd: int = 128,
    repeats: int = 5,
    warmup: int = 1,
    min_block_s: float = 0.0,
) -> Section:
    method = f"`lib.decoding.greedy(lib.gpt.step_function(model, use_cache, cache_type), prompt, n)` (what `lib.gpt.greedy_decode` runs), greedy, on one prompt of {prompt_len} random token ids, model in eval mode, configuration vocab_size={vocab_size}, block_size={block_size} (room for the prompt and every new token), n_layer={n_layer}, n_head={n_head}, n_embd={n_embd}, dropout=0, random weights (seed 0). Each call is timed once per round, without the cache, with the readable `lib.gpt.KVCache` (torch.cat) and on the fast path, `lib.gpt_fast.greedy_decode` (`lib.gpt_fast.fast_forward`, GPT.forward with its module calls unrolled and no per-step input checks; `FastKVCache`, buffers preallocated for the whole generation; under `torch.inference_mode`), side by side; each row compares one of them against no cache. {TIMING_NOTE.format(repeats=repeats, warmup=warmup)} Here *ratio* is the speed-up: the time without the cache over the time with it. *same tokens*: both calls generated exactly the same ids. The goal ({GOAL_SPEEDUP:g}x at {GOAL_TOKENS} new tokens) is judged on the CPU-time ratio of the fast path."
    columns = [
        Column("new_tokens", "new tokens"),
        Column("cache_type", "cache"),
        *comparison_columns("nocache", "cache", "without cache", "with cache"),
        Column("ms_per_token_cache", "with cache (ms/token)", ".2f"),
        Column("same_tokens", "same tokens", yes_no),
        Column("goal", "goal", lambda g: f">= {g:g}x"),
        Column("met", "met", yes_no),
    ]
    section = Section(
        "kv_cache", "3. Generation with the key-value cache against without", method, columns
    )
    goal = f"with the cache >= {GOAL_SPEEDUP:g}x faster at {GOAL_TOKENS} new tokens"
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=vocab_size,
            block_size=block_size,
            n_layer=n_layer,
            n_head=n_head,
            n_embd=n_embd,
            dropout=0.0,
        )
    ).eval()
    # [1, T0]
    prompt = torch.randint(vocab_size, (1, prompt_len), generator=torch.Generator().manual_seed(0))
    caches = {
        "cache": ("`KVCache` (torch.cat)", KVCache),
        "fast": ("`lib.gpt_fast.greedy_decode`", FastKVCache),
    }
    for n in new_tokens:

        def generate(cache_type=None, n=n):  # cache_type None: no cache
            if cache_type is FastKVCache:  # the fast path: FastKVCache under inference_mode
                return gpt_fast.greedy_decode(model, prompt, n).tokens
            step = step_function(model, cache_type is not None, cache_type or KVCache)
            with torch.no_grad():
                return decoding.greedy(step, prompt, n).tokens

        reference = generate()
        times = time_side_by_side(
            {
                "nocache": lambda: generate(),
                "cache": lambda: generate(KVCache),
                "fast": lambda: generate(FastKVCache),
            },
            repeats,
            warmup,
            min_block_s,
        )
        for name, (label, cache_type) in caches.items():
            at_goal = n == GOAL_TOKENS and name == "fast"
            row = {
                "new_tokens": n,
                "cache_type": label,
                "same_tokens": torch.equal(generate(cache_type), reference),
                "goal": GOAL_SPEEDUP if at_goal else None,
            }
            row.update(comparison_row(times["nocache"], times[name], "nocache", "cache"))
            row["ms_per_token_cache"] = 1e3 * row["cache_s"] / n
            row["met"] = row["ratio_cpu"] >= GOAL_SPEEDUP if at_goal else None
            section.rows.append(row)
    at_goal = [r for r in section.rows if r["goal"] is not None]
    section.goals.append(
        {
            "goal": goal,
            "measured": f"{at_goal[0]['ratio_cpu']:.2f}x"
            if at_goal
            else f"not measured ({GOAL_TOKENS} not among {list(new_tokens)})",
            "met": at_goal[0]["met"] if at_goal else None,
        }
    )
    n_prof = GOAL_TOKENS if GOAL_TOKENS in new_tokens else max(new_tokens)
    ops, total = profile_ops(lambda: gpt_fast.greedy_decode(model, prompt, n_prof))
    section.extra_tables.append(
        (
            f"Where generation on the fast path spends its time ({n_prof} new tokens; torch.profiler, operators by self CPU time, {1e3 * total:.0f} ms in all, profiler overhead included):",
            [
                Column("op", "operator"),
                Column("calls", "calls"),
                Column("self_ms", "self CPU (ms)", ".1f"),
                Column("share", "share", ".0%"),
            ],
            ops,
        )
    )
    notes = [OP_NOTES[op["op"].strip("`")] for op in ops if op["op"].strip("`") in OP_NOTES]
    section.findings.append(
        PROFILE_NOTES
        + (
            ""
            if not notes
            else " Among the top operators, in lib/gpt.py: " + "; ".join(notes) + "."
        )
    )
    if not all(r["same_tokens"] for r in section.rows):
        section.findings.append(
            "With and without the cache, greedy generation did not give the same tokens: the cached path computes something else (or rounds differently near a tie)."
        )
    return section
