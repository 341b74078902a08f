"""Run the benchmarks and write benchmarks/results.md (what `make bench` does).

    python -m benchmarks.run                    # every benchmark at full size (several minutes)
    python -m benchmarks.run --only mha,book    # some of them: mha, gpt_training, kv_cache, complexity, live, playground, llama, flash, book, grading, sandbox
    python -m benchmarks.run --quick            # tiny sizes, a few seconds: checks that everything runs
    BENCH_BOOK=chapters python -m benchmarks.run --only book --chapters 02,03   # time two chapters again

Environment variables:
    BENCH_THREADS  torch threads (default 1, see PREAMBLE)
    BENCH_BOOK     what of the book to measure now: chapters, build, or 1 (both); by default nothing:
                   benchmark 5 reports the stored timings (benchmarks/book.py explains)
    BENCH_GRADING  1: grade submissions with nbgrader now (a few minutes); by default benchmark 8
                   reports the stored measurement (benchmarks/grading.py explains)
    BENCH_SANDBOX  1: grade a class in tools/grade_course.py's sandbox now (a minute or two); by
                   default benchmark 9 reports the stored measurement (benchmarks/sandbox_grading.py)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

import torch

from benchmarks import (
    book,
    complexity,
    flash,
    gpt_training,
    grading,
    kv_cache,
    live,
    llama,
    mha,
    playground,
    sandbox_grading,
)
from benchmarks.common import Section, machine_info, render_results, threads_from_env

RESULTS = Path(__file__).resolve().parent / "results.md"
BENCHMARKS = {
    "mha": mha.run,
    "gpt_training": gpt_training.run,
    "kv_cache": kv_cache.run,
    "complexity": complexity.run,
    "live": live.run,
    "playground": playground.run,
    "llama": llama.run,
    "flash": flash.run,
}
# Tiny sizes for the smoke test: every code path once, nothing about speed.
QUICK = {
    "mha": dict(
        lengths=(8, 16), batch=2, d_model=16, n_heads=2, repeats=2, warmup=1, min_block_s=0.0
    ),
    "gpt_training": dict(
        vocab_size=32,
        block_size=8,
        n_layer=1,
        n_head=2,
        n_embd=16,
        batch=2,
        repeats=2,
        warmup=1,
        min_block_s=0.0,
    ),
    "kv_cache": dict(
        new_tokens=(2, 4),
        prompt_len=2,
        vocab_size=32,
        block_size=16,
        n_layer=1,
        n_head=2,
        n_embd=16,
        repeats=2,
        warmup=1,
    ),
    "complexity": dict(
        lengths=(8, 16, 32), d_model=16, n_heads=2, repeats=2, warmup=1, min_block_s=0.0
    ),
    "live": dict(repeats=2, warmup=1),
    "playground": dict(
        steps=2, warmup=1, keys=["L1-H2-D32"], rounds=1, unrolls=(4,), operators=("Add",)
    ),
    "llama": dict(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=4,
        intermediate_size=32,
        batch=2,
        block_size=8,
        cached=(8, 16),
        new_tokens=2,
        window=4,
        window_lengths=(2, 4, 8, 12),
        rope_lengths=(8, 16),
        rope_batch=1,
        repeats=2,
        warmup=1,
        min_block_s=0.0,
    ),
    "flash": dict(
        lengths=(64, 128, 256),
        head_dim=8,
        block=16,
        goal_length=256,
        repeats=2,
        warmup=1,
        min_block_s=0.0,
    ),
}

PREAMBLE = """\
Every comparison is measured side by side in one run: the implementations being compared alternate
within each round, so that the load of the shared machine falls on both alike, and each ratio is the
median of the ratios measured within the same round. Times are medians over the rounds with their
interquartile range (IQR), after warm-up calls. torch runs on {threads} thread(s) (`BENCH_THREADS`,
default 1): the build machine's cores are shared with other work, and a parallel operation waits
at its end for all of its threads, so that when another process holds a core the wait makes timings
longer and far noisier than on one thread. The goals are judged on the
ratio of CPU times (the process's CPU time does not include the time it waits for a core); the
wall-clock ratio is shown next to it. Benchmarks 5 and 6 report stored timings of the book and of
grading a class with nbgrader; how to measure them again is explained there.
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default="", help="comma-separated benchmarks to run (default: all)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes: check that everything runs"
    )
    parser.add_argument(
        "--output", type=Path, default=RESULTS, help="where to write the Markdown results"
    )
    parser.add_argument(
        "--chapters",
        default="",
        help="with BENCH_BOOK=chapters or 1: only the chapters whose file name starts with one of these comma-separated prefixes (e.g. 02,06)",
    )
    parser.add_argument(
        "--book-timings",
        type=Path,
        default=book.TIMINGS,
        help="the stored book timings (default benchmarks/book_timings.json)",
    )
    args = parser.parse_args(argv)
    stored = ["book", "grading", "sandbox"]
    names = [n for n in args.only.split(",") if n] or [*BENCHMARKS, *stored]
    unknown = sorted(set(names) - {*BENCHMARKS, *stored})
    if unknown:
        parser.error(
            f"--only: unknown benchmarks {unknown}; expected some of {[*BENCHMARKS, *stored]}"
        )

    threads = threads_from_env()
    torch.set_num_threads(threads)
    machine = machine_info()
    start = time.perf_counter()
    sections, failed = [], []
    for name in names:
        print(f"benchmark {name} ...", flush=True)
        t0 = time.perf_counter()
        try:
            if name == "book":
                measure = set() if args.quick else book.mode_from_env()
                prefixes = tuple(p for p in args.chapters.split(",") if p)
                sections.append(book.run(measure, prefixes, path=args.book_timings))
            elif name == "grading":
                sections.append(grading.run(False if args.quick else None))
            elif name == "sandbox":
                sections.append(sandbox_grading.run(False if args.quick else None))
            else:
                sections.append(BENCHMARKS[name](**(QUICK[name] if args.quick else {})))
        except Exception as error:  # one benchmark that fails does not lose the others' results
            traceback.print_exc()
            failed.append(name)
            message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
            sections.append(Section(name, f"{name}: failed", "", [], status=f"failed: {message}"))
        print(f"  {time.perf_counter() - t0:.0f} s", flush=True)
    machine["load_1min_end"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    command = (
        "python -m benchmarks.run"
        + (" --quick" if args.quick else "")
        + (f" --only {args.only}" if args.only else "")
    )
    if not args.quick and not args.only:
        command = "make bench"
    text = render_results(
        sections, machine, command, time.perf_counter() - start, PREAMBLE.format(threads=threads)
    )
    args.output.write_text(text)
    print(f"wrote {args.output}")
    if failed:
        print(
            f"benchmarks that failed: {', '.join(failed)} (their sections say why)", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
