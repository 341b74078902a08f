"""Smoke test of benchmarks/: every benchmark runs at tiny sizes (a few seconds in all) and returns
well-formed rows, and the results page renders. Nothing here is about speed: the timings at these
sizes mean nothing and are only checked to be positive and finite. What is checked for real: the
helpers' arithmetic (medians, ratios, log-log slopes, the peak-memory count of a known allocation),
that the compared implementations agree (benchmark 1 compares outputs before timing), and that the
book benchmark stores and reads its timings without touching the real build.
"""

import json
import math
import os
import subprocess
import sys

import nbformat
import pytest
import torch

from benchmarks import book, common, complexity, flash, gpt_training, kv_cache, mha, run

QUICK = run.QUICK


@pytest.fixture(autouse=True)
def keep_threads():
    """The runner sets torch's thread count for the whole process: restore it for the other tests."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def check_rows(section, n_rows):
    """Every row has a value for every column (None allowed only where a column is optional), every
    number is finite, and every row renders to a table line with one cell per column."""
    assert section.status == "ok", section.status
    assert len(section.rows) == n_rows
    keys = [c.key for c in section.columns]
    for row in section.rows:
        assert set(keys) <= set(row), f"missing {set(keys) - set(row)}"
        for key in keys:
            value = row[key]
            if isinstance(value, float):
                assert math.isfinite(value), (key, value)
            if isinstance(value, tuple):
                assert all(math.isfinite(v) for v in value) and value[0] <= value[1], (key, value)
    text = common.render_section(section)
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) >= n_rows + 1
    assert all(line.count("|") == len(keys) + 1 for line in table[: n_rows + 1])
    return text


# --- the helpers ---------------------------------------------------------------------------------------


def test_summary_and_paired_ratio():
    s = common.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median, s.q1, s.q3, s.n) == (3.0, 2.0, 4.0, 5)
    r = common.paired_ratio([2.0, 4.0, 9.0], [1.0, 2.0, 3.0])  # ratios 2, 2, 3
    assert r.median == 2.0
    with pytest.raises(ValueError, match="equally long"):
        common.paired_ratio([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least one"):
        common.summarize([])


def test_loglog_slope_recovers_the_exponent():
    ns = [64, 128, 256, 512]
    assert abs(common.loglog_slope(ns, [3 * n**2 for n in ns]) - 2) < 1e-12
    assert abs(common.loglog_slope(ns, [7 * n for n in ns]) - 1) < 1e-12
    with pytest.raises(ValueError, match="positive"):
        common.loglog_slope([1, 2], [0, 1])


def test_peak_memory_counts_a_known_allocation():
    n = 1_000_000
    peak = common.peak_memory(lambda: torch.empty(n))  # 4 MB of float32
    assert 4 * n <= peak <= 4 * n + 4096  # allocator rounding, no more
    two = common.peak_memory(lambda: (torch.empty(n), torch.empty(n)))  # both alive at once
    assert 8 * n <= two <= 8 * n + 8192


def test_time_side_by_side_alternates_and_returns_every_round():
    order = []
    fns = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    times = common.time_side_by_side(fns, repeats=4, warmup=1, min_block_s=0.0)
    # warm-up, then rotating rounds
    assert order == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert all(len(t.wall) == 4 and len(t.cpu) == 4 for t in times.values())
    assert all(x > 0 for t in times.values() for x in t.wall)


def test_environment_settings_are_checked(monkeypatch):
    monkeypatch.setenv("BENCH_THREADS", "two")
    with pytest.raises(ValueError, match="BENCH_THREADS"):
        common.threads_from_env()
    monkeypatch.setenv("BENCH_THREADS", "2")
    assert common.threads_from_env() == 2
    monkeypatch.setenv("BENCH_BOOK", "everything")
    with pytest.raises(ValueError, match="BENCH_BOOK"):
        book.mode_from_env()
    monkeypatch.setenv("BENCH_BOOK", "1")
    assert book.mode_from_env() == {"chapters", "build"}


# --- the benchmarks ------------------------------------------------------------------------------------


def test_mha_benchmark():
    section = mha.run(**QUICK["mha"])
    check_rows(section, len(QUICK["mha"]["lengths"]) * 4)
    # like with like: ours and torch's give the same output (float32 rounding only) before any timing
    assert all(r["max_abs_diff"] < 1e-5 for r in section.rows)
    # the simple path is timed next to the need_weights=True path only
    for r in section.rows:
        assert (r.get("simple_ratio_cpu") is None) == (not r["need_weights"])
    assert len(section.goals) == 2 and len(section.extra_tables) == 1


def test_simple_forward_computes_what_the_module_computes():
    ours, _ = mha.make_pair(16, 2)
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        out, w = ours(x, x, x)
        old_out, old_w = mha.simple_forward(ours, x, x, x)
    assert (out - old_out).abs().max() < 1e-6 and (w - old_w).abs().max() < 1e-6


def test_complexity_benchmark():
    section = complexity.run(**QUICK["complexity"])
    check_rows(section, len(QUICK["complexity"]["lengths"]) * 4)
    assert all(r["peak_bytes"] > 0 for r in section.rows)
    ((_, _, fits),) = section.extra_tables
    assert [f["layer"] for f in fits] == list(complexity.THEORY)
    assert all(math.isfinite(f["time_p"]) and math.isfinite(f["memory_p"]) for f in fits)


def test_gpt_benchmarks():
    training, generation = (
        gpt_training.run(**QUICK["gpt_training"]),
        kv_cache.run(**QUICK["kv_cache"]),
    )
    check_rows(training, 1)
    assert training.rows[0]["params_lib"] == training.rows[0]["params_ref"]  # the same architecture
    # one row per length for each cache: the readable KVCache and lib.gpt_fast's
    check_rows(generation, 2 * len(QUICK["kv_cache"]["new_tokens"]))
    assert {r["cache_type"] for r in generation.rows} == {
        "`KVCache` (torch.cat)",
        "`lib.gpt_fast.greedy_decode`",
    }
    assert all(r["same_tokens"] for r in generation.rows)  # cache or not, same tokens


def test_reference_gpt_shapes_and_loss():
    config = gpt_training.RefConfig(vocab_size=11, block_size=6, n_layer=1, n_head=2, n_embd=8)
    model = gpt_training.RefGPT(config)
    idx = torch.randint(11, (2, 6), generator=torch.Generator().manual_seed(0))
    logits, loss = model(idx, idx)
    assert logits.shape == (2, 6, 11)
    assert abs(loss.item() - math.log(11)) < 0.1  # N(0, 0.02) weights: nearly uniform predictions


def test_flash_benchmark():
    """Benchmark 10: the three attentions agree before anything is measured, the tiles' peak is a
    small fraction of the plain one's and grows at most linearly, and the plain one's peak is what
    its two [T, T] float32 matrices hold."""
    quick = QUICK["flash"]
    section = flash.run(**quick)
    check_rows(section, len(quick["lengths"]))
    assert all(r["max_abs_diff"] < 1e-5 for r in section.rows)
    for r in section.rows:
        assert r["plain_peak"] >= 2 * r["T"] ** 2 * 4  # scores and weights, float32
        assert r["tiled_peak"] < r["plain_peak"]
    growth = [r["tiled_growth"] for r in section.rows[1:]]
    assert section.rows[0]["tiled_growth"] is None and all(0 < x <= 2.2 for x in growth)
    assert all(r["plain_growth"] > 3.5 for r in section.rows[1:])  # T^2
    assert len(section.goals) == 2 and all(g["met"] is True for g in section.goals)
    assert f"at T = {quick['goal_length']}" in section.goals[0]["goal"]


def tiny_book(tmp_path):
    """A stand-in repository: two chapters and a _build folder, so that nothing real is touched."""
    (tmp_path / "notebooks").mkdir()
    for name in ("01_first.ipynb", "02_second.ipynb"):
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]),
            tmp_path / "notebooks" / name,
        )
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "marker").write_text("old build")
    return tmp_path


def test_book_benchmark_stores_and_reads_timings(tmp_path):
    root = tiny_book(tmp_path)
    timings = tmp_path / "timings.json"
    section = book.run(root=root, path=timings)  # nothing stored yet
    check_rows(section, 2)
    assert all(r["fresh_s"] is None for r in section.rows) and any(
        "Not measured" in f for f in section.findings
    )

    section = book.run(
        {"chapters"}, prefixes=("02",), root=root, path=timings, time_chapter=lambda path: 12.5
    )
    # within budget, but measured outside a git history: not placed at a commit, so not "yes"
    assert [r["fresh_s"] for r in section.rows] == [None, 12.5]
    assert section.rows[1]["within"] == book.NOT_REMEASURED
    # a notebook edited after its measurement is flagged
    (root / "notebooks" / "02_second.ipynb").write_text(
        (root / "notebooks" / "02_second.ipynb").read_text() + "\n"
    )
    assert "changed since" in book.run(root=root, path=timings).rows[1]["measured"]

    section = book.run({"build"}, root=root, path=timings, command=[sys.executable, "-c", "pass"])
    assert not (root / "_build" / "marker").exists()  # the cold build started from nothing
    stored = json.loads(timings.read_text())["builds"]
    assert (
        stored["cold"]["ok"]
        and stored["rebuild"]["ok"]
        and stored["rebuild"]["executed_notebooks"] == 0
    )
    ((_, _, builds),) = section.extra_tables
    assert all(b["seconds"] is not None and b["within"] for b in builds)
    assert len(section.goals) == 3
    # no git history here: a figure that cannot be placed at a commit is never shown as met
    assert [g["met"] for g in section.goals[1:]] == [book.NOT_REMEASURED] * 2


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_book_benchmark_never_shows_a_stale_figure_as_met(tmp_path):
    root = tiny_book(tmp_path)
    (root / "lib").mkdir()
    (root / "lib" / "model.py").write_text("x = 1\n")
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "notebooks", "lib")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "book")
    timings = tmp_path / "timings.json"
    book.run({"chapters"}, root=root, path=timings, time_chapter=lambda path: 12.5)
    section = book.run({"build"}, root=root, path=timings, command=[sys.executable, "-c", "pass"])
    stored = json.loads(timings.read_text())
    commit = stored["builds"]["cold"]["commit"]
    assert commit and stored["builds"]["cold"]["cpu"]
    # measured at the working tree's commit: current, met, and the goal names its date and commit
    assert [g["met"] for g in section.goals] == [True, True, True]
    assert (
        commit in section.goals[1]["measured"]
        and stored["builds"]["cold"]["measured"][:10] in (section.goals[1]["measured"])
    )
    # the library changes: every figure is now older than what it measures
    (root / "lib" / "model.py").write_text("x = 2\n")
    section = book.run(root=root, path=timings)
    assert [g["met"] for g in section.goals] == [book.NOT_REMEASURED] * 3
    assert "changed since" in section.goals[1]["measured"]
    assert all("lib or requirements changed since" in r["measured"] for r in section.rows)
    assert common.yes_no(book.NOT_REMEASURED) == "not re-measured"
    # a slow chapter is "no" whether or not its figure is current
    stored["chapters"]["01_first"]["seconds"] = 120.0
    timings.write_text(json.dumps(stored))
    assert book.run(root=root, path=timings).goals[0]["met"] is False


def test_runner_writes_every_section(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCH_BOOK", raising=False)
    monkeypatch.delenv("BENCH_THREADS", raising=False)
    out, timings = tmp_path / "results.md", tmp_path / "timings.json"
    assert run.main(["--quick", "--output", str(out), "--book-timings", str(timings)]) == 0
    text = out.read_text()
    for title in (
        "## Goals at a glance",
        "## 1. Multi-head attention",
        "## 2. Training throughput",
        "## 3. Generation with the key-value cache",
        "## 4. Time and memory",
        "## 5. The book",
        "## 7. The Playground's training step",
        "## 9. A modern decoder (lib.llama)",
        "## 10. Attention at scale (lib.flash)",
    ):
        assert title in text, title
    machine = next(line for line in text.splitlines() if line.startswith(f"| {os.cpu_count()} ("))
    assert machine.split("|")[2].strip() == "1"  # BENCH_THREADS unset: one thread
    with pytest.raises(SystemExit):
        run.main(["--only", "nonsense", "--output", str(out)])


def test_a_failing_benchmark_keeps_the_others_and_fails_the_run(tmp_path, monkeypatch):
    def broken(**_):
        raise RuntimeError("the browser timed out")

    monkeypatch.setitem(run.BENCHMARKS, "complexity", broken)
    out = tmp_path / "results.md"
    assert run.main(["--quick", "--only", "mha,complexity", "--output", str(out)]) == 1
    text = out.read_text()
    assert "## 1. Multi-head attention" in text
    assert "failed: RuntimeError: the browser timed out" in text


def test_book_benchmark_judges_a_chapter_by_its_current_figure(tmp_path, monkeypatch):
    """A chapter edited after its fresh-kernel timing, then executed by the last make book: the goal is
    judged by the build's time for the notebook as it is now, never by the older figure."""
    root = tiny_book(tmp_path)
    timings = tmp_path / "timings.json"
    book.run({"chapters"}, root=root, path=timings, time_chapter=lambda path: 80.0)
    (root / "notebooks" / "02_second.ipynb").write_text(
        (root / "notebooks" / "02_second.ipynb").read_text() + "\n"
    )
    monkeypatch.setattr(
        book,
        "_cache_records",
        lambda build: {"01_first": (20.0, 0.0, True), "02_second": (30.0, 0.0, True)},
    )
    section = book.run(root=root, path=timings)
    second = section.rows[1]
    assert second["fresh_s"] == 80.0 and "notebook changed since" in second["measured"]
    assert second["judged_s"] == 30.0 and not second["stale"]
    # 01's fresh figure cannot be placed at a commit (no git history here): the build's time counts
    assert section.rows[0]["judged_s"] == 20.0
    assert section.goals[0]["measured"].startswith(
        "slowest 30.0 s (02_second, during the last make book)"
    )
    assert section.goals[0]["met"] is True
    monkeypatch.setattr(
        book,
        "_cache_records",
        lambda build: {"01_first": (20.0, 0.0, True), "02_second": (95.0, 0.0, True)},
    )
    section = book.run(root=root, path=timings)
    assert section.goals[0]["measured"].startswith(
        "slowest 95.0 s (02_second, during the last make book)"
    )
    assert section.goals[0]["met"] is False
