"""What every benchmark shares: side-by-side timing, peak memory, the machine, log-log fits, tables.

Timing (``time_side_by_side``): the callables being compared run in *rounds*. In each round every
callable runs once (a block of ``inner`` calls, the same number for all), in an order that rotates
from round to round (A B, B A, A B, ... for two), so that a change of load on the shared machine
falls on all of them alike. Before the rounds, ``warmup`` calls of each (interleaved too) fill
caches, let the allocator reach its steady state and choose ``inner``: enough calls for a block of at
least ``min_block_s`` so that the timer's resolution does not matter. Python's garbage collector is
off inside a block. A result holds the wall-clock seconds per call of every round; we report the
median and the interquartile range (IQR, the 25th and 75th percentiles), and for a comparison the
*paired* ratio: the median over rounds of (time of A / time of B) within the same round.

Peak memory (``peak_memory``): the largest number of bytes held at once by the CPU allocator while a
callable runs, from torch.profiler's memory events (``profile_memory=True``): every allocation and
every free of the CPU allocator inside the profiled call, summed in time order. It counts every
tensor created inside the call, kernels' scratch buffers included, and nothing allocated before it
(inputs, parameters). It does not count memory that does not go through torch's allocator (Python
objects, the BLAS library's own buffers).
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch.profiler import ProfilerActivity, profile

__all__ = [
    "Summary",
    "Times",
    "summarize",
    "paired_ratio",
    "time_side_by_side",
    "threads_from_env",
    "peak_memory",
    "profile_ops",
    "loglog_slope",
    "machine_info",
    "Column",
    "Section",
    "TIMING_NOTE",
    "comparison_row",
    "comparison_columns",
    "yes_no",
    "render_section",
    "render_results",
]


# --- statistics ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """Median and interquartile range of a list of measurements, with their number."""

    median: float
    q1: float
    q3: float
    n: int


def summarize(values) -> Summary:
    """Median, 25th and 75th percentile (linear interpolation between order statistics) of values."""
    values = sorted(float(v) for v in values)
    if not values:
        raise ValueError("values: expected at least one measurement, got none")
    if len(values) == 1:
        return Summary(values[0], values[0], values[0], 1)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Summary(statistics.median(values), q1, q3, len(values))


def paired_ratio(a: list[float], b: list[float]) -> Summary:
    """Summary of a[i] / b[i] over the rounds i: the ratio of two callables timed in the same round."""
    if len(a) != len(b) or not a:
        raise ValueError(
            f"a, b: expected two equally long, non-empty lists, got lengths {len(a)} and {len(b)}"
        )
    return summarize([x / y for x, y in zip(a, b)])


# --- timing ----------------------------------------------------------------------------------------


@dataclass
class Times:
    """Seconds per call in each round: wall-clock, and CPU time of the process."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def _block(fn: Callable[[], object], inner: int) -> tuple[float, float]:
    """(wall-clock, process CPU) seconds per call of `inner` calls of fn, garbage collector off."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - start) / inner, (time.process_time() - start_cpu) / inner
    finally:
        if gc_was_on:
            gc.enable()


def time_side_by_side(
    fns: dict[str, Callable[[], object]],
    repeats: int = 7,
    warmup: int = 2,
    min_block_s: float = 0.05,
) -> dict[str, Times]:
    """Time every callable of ``fns`` in ``repeats`` interleaved rounds (see the module docstring).

    Returns {name: Times(wall=[seconds per call in round 0, round 1, ...], cpu=[...])}.
    """
    if not fns:
        raise ValueError("fns: expected at least one callable, got none")
    if repeats < 1 or warmup < 1:
        raise ValueError(f"repeats, warmup: expected ints >= 1, got {repeats} and {warmup}")
    names = list(fns)
    warm = {name: [] for name in names}
    for _ in range(warmup):
        for name in names:
            warm[name].append(_block(fns[name], 1)[0])
    typical = statistics.median(min(v) for v in warm.values())
    inner = max(1, math.ceil(min_block_s / max(typical, 1e-9)))
    times = {name: Times() for name in names}
    gc.collect()
    for r in range(repeats):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            wall, cpu = _block(fns[name], inner)
            times[name].wall.append(wall)
            times[name].cpu.append(cpu)
    return times


def threads_from_env(default: int = 1) -> int:
    """The torch thread count for the benchmarks: $BENCH_THREADS if set, else ``default``."""
    value = os.environ.get("BENCH_THREADS", "")
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"BENCH_THREADS: expected a positive integer, got {value!r}")
    return int(value)


# --- memory ----------------------------------------------------------------------------------------


def peak_memory(fn: Callable[[], object]) -> int:
    """Peak bytes held by torch's CPU allocator during one call of fn, counted from zero at the start
    (see the module docstring). fn's return value is dropped inside the measured region, so an output
    that is freed at once still counts while it was alive."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
        del out
    # The raw events: torch.profiler's own tables attribute allocations to operators and no longer
    # keep their order in time, which the running sum needs.
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    now = peak = 0
    for e in events:
        now += e.nbytes()
        peak = max(peak, now)
    return peak


def profile_ops(fn: Callable[[], object], top: int = 8) -> tuple[list[dict], float]:
    """The ``top`` operators by self CPU time during one call of fn (torch.profiler), as rows
    {"op", "calls", "self_ms", "share"}, and the total self CPU time in seconds."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events) / 1e6
    ops = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
    return [
        {
            "op": f"`{e.key}`",
            "calls": e.count,
            "self_ms": e.self_cpu_time_total / 1e3,
            "share": e.self_cpu_time_total / 1e6 / total,
        }
        for e in ops
    ], total


# --- fits ------------------------------------------------------------------------------------------


def loglog_slope(xs, ys) -> float:
    """Least-squares slope p of log y = p log x + c: the exponent of y ~ x^p."""
    xs, ys = list(xs), list(ys)
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError(
            f"xs, ys: expected two equally long lists of >= 2 values, got {len(xs)} and {len(ys)}"
        )
    if min(xs) <= 0 or min(ys) <= 0:
        raise ValueError("xs, ys: expected positive values for a log-log fit")
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


# --- the machine -----------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict:
    """What the numbers depend on: cores, torch threads, CPU, versions, load average now."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "torch_threads": torch.get_num_threads(),
        "cpu": _cpu_model(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "load_1min": round(load[0], 2),
    }


# --- tables ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A column of a results table: the row key it shows, its header, and a format for its values
    (a format spec such as ".2f", or a callable value -> str). None shows as an em dash."""

    key: str
    header: str
    fmt: str | Callable[[object], str] = ""

    def cell(self, value) -> str:
        if value is None:
            return "—"
        if callable(self.fmt):
            return self.fmt(value)
        return format(value, self.fmt)


@dataclass
class Section:
    """One benchmark's results: rows (dicts holding raw values, keyed as the columns), what was
    measured and how (``method``), what it shows (``findings``), and its status: "ok", or "skipped:
    <why>"."""

    key: str
    title: str
    method: str
    columns: list[Column]
    rows: list[dict] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    status: str = "ok"
    extra_tables: list[tuple[str, list[Column], list[dict]]] = field(default_factory=list)
    # {"goal": str, "measured": str, "met": bool | None}
    goals: list[dict] = field(default_factory=list)
    uses_torch_threads: bool = True  # False: the runner's torch thread count does not apply


TIMING_NOTE = "Times are per call: the median over {repeats} interleaved rounds (each round runs every implementation once, in an order that alternates from round to round, after {warmup} warm-up calls each), with the interquartile range in brackets. *ratio* is the median over rounds of the ratio of the two times measured in the same round, from wall-clock time and from the CPU time of the process; the CPU-time ratio does not count the time the process waits for a core that another process holds, so it is the steadier of the two on a shared machine."


def _ms(value) -> str:
    return f"{1e3 * value:.2f}"


def _range_ms(pair) -> str:
    return f"[{1e3 * pair[0]:.2f}, {1e3 * pair[1]:.2f}]"


def _range(pair) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def yes_no(flag) -> str:
    """yes / **no**; a string (a goal's "not re-measured") is shown as it is."""
    if isinstance(flag, str):
        return flag
    return "yes" if flag else "**no**"


def comparison_row(a: Times, b: Times, a_name: str, b_name: str) -> dict:
    """Raw values of one side-by-side comparison of a against b: wall-clock medians and IQRs (seconds)
    of each, their CPU-time medians, paired ratios a / b of wall-clock and of CPU time with their IQRs,
    and the number of rounds."""
    wall_a, wall_b = summarize(a.wall), summarize(b.wall)
    ratio, ratio_cpu = paired_ratio(a.wall, b.wall), paired_ratio(a.cpu, b.cpu)
    return {
        f"{a_name}_s": wall_a.median,
        f"{a_name}_iqr": (wall_a.q1, wall_a.q3),
        f"{a_name}_cpu_s": summarize(a.cpu).median,
        f"{b_name}_cpu_s": summarize(b.cpu).median,
        f"{b_name}_s": wall_b.median,
        f"{b_name}_iqr": (wall_b.q1, wall_b.q3),
        "ratio": ratio.median,
        "ratio_iqr": (ratio.q1, ratio.q3),
        "ratio_cpu": ratio_cpu.median,
        "ratio_cpu_iqr": (ratio_cpu.q1, ratio_cpu.q3),
        "rounds": ratio.n,
    }


def comparison_columns(
    a_name: str, b_name: str, a_header: str | None = None, b_header: str | None = None
) -> list[Column]:
    """The columns showing a comparison_row."""
    return [
        Column(f"{a_name}_s", f"{a_header or a_name} (ms)", _ms),
        Column(f"{a_name}_iqr", "IQR", _range_ms),
        Column(f"{b_name}_s", f"{b_header or b_name} (ms)", _ms),
        Column(f"{b_name}_iqr", "IQR", _range_ms),
        Column("ratio", "ratio, wall", ".3f"),
        Column("ratio_iqr", "IQR", _range),
        Column("ratio_cpu", "ratio, CPU", ".3f"),
        Column("ratio_cpu_iqr", "IQR", _range),
    ]


def _table(columns: list[Column], rows: list[dict]) -> str:
    lines = [
        "| " + " | ".join(c.header for c in columns) + " |",
        "|" + "|".join("---" for _ in columns) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(c.cell(row.get(c.key)) for c in columns) + " |")
    return "\n".join(lines)


def render_section(section: Section, machine: dict | None = None) -> str:
    """The Markdown of one benchmark: title, the machine (if given), method, table(s), findings."""
    parts = [f"## {section.title}", ""]
    if machine is not None:
        threads = (
            f"torch threads: {machine['torch_threads']}"
            if section.uses_torch_threads
            else "each chapter sets its own torch threads"
        )
        parts += [f"*Machine: {machine['cores']} cores, {threads}.*", ""]
    parts += [section.method.strip(), ""]
    if section.status != "ok":
        parts += [f"**{section.status}**", ""]
    if section.rows:
        parts += [_table(section.columns, section.rows), ""]
    for caption, columns, rows in section.extra_tables:
        parts += [caption, "", _table(columns, rows), ""]
    if section.findings:
        parts += ["What the numbers show:", ""] + [f"- {f}" for f in section.findings] + [""]
    return "\n".join(parts)


def render_results(
    sections: list[Section], machine: dict, command: str, seconds: float, preamble: str = ""
) -> str:
    """The whole results.md: the machine, then one section per benchmark."""
    head = [
        "# Benchmarks",
        "",
        f"Written by `{command}` ({seconds / 60:.1f} min). Do not edit by hand: run it again.",
        "",
    ]
    if preamble:
        head += [preamble.strip(), ""]
    head += [
        "| cores (usable) | torch threads | CPU | torch | Python | load average (1 min) at start | at end |",
        "|---|---|---|---|---|---|---|",
        f"| {machine['cores']} ({machine['usable_cores']}) | {machine['torch_threads']} | {machine['cpu']} | {machine['torch']} | {machine['python']} | {machine['load_1min']} | {machine.get('load_1min_end', '—')} |",
        "",
    ]
    goals = [dict(g, benchmark=s.title.split(":")[0]) for s in sections for g in s.goals]
    if goals:
        columns = [
            Column("benchmark", "benchmark"),
            Column("goal", "goal"),
            Column("measured", "measured"),
            Column("met", "met", yes_no),
        ]
        head += ["## Goals at a glance", "", _table(columns, goals), ""]
    return "\n".join(head + [render_section(s, machine) for s in sections])


def measured_or_stored(measure_now: bool, path, measure, **sizes) -> dict | None:
    """A benchmark too slow for every `make bench`: measured now (and stored in ``path``, JSON) when
    ``measure_now``, else the stored measurement; None when there is none."""
    if measure_now:
        result = measure(**sizes)
        path.write_text(json.dumps(result, indent=1) + "\n")
        return result
    return json.loads(path.read_text()) if path.exists() else None
