"""Benchmark 8 (benchmarks/grading.py): the stored measurement of grading a class renders as a section of
benchmarks/results.md, with the projection for 300 students computed from it. The measurement itself
takes minutes (BENCH_GRADING=1); here a stored result is read back and the arithmetic checked."""

from __future__ import annotations

import json

import pytest

from benchmarks import common, grading


def test_the_stored_measurement_renders_with_its_projection(tmp_path):
    stored = {
        "date": "2026-01-01",
        "chapter": "02_attention_as_soft_lookup",
        "cores": 2,
        "load_1min": 1.0,
        "per_group": 3,
        "graders": 2,
        "points": 4,
        "sequential_s": 12.0,
        "parallel_s": 8.0,
        "all_graded": True,
        "exit_codes": [0, 0],
        "integrity": "ok",
        "errors": [],
    }
    path = tmp_path / "grading.json"
    path.write_text(json.dumps(stored))
    section = grading.run(False, path=path)
    assert section.status == "ok"
    one, two = section.rows
    assert one["class"] == pytest.approx(300 * 12.0 / 60) and two["class"] == pytest.approx(40.0)
    assert two["safe"] is True
    text = common.render_section(section)
    assert "60" in text and "40" in text and "1.5 times faster" in text


def test_a_failed_parallel_grader_is_not_called_safe(tmp_path):
    path = tmp_path / "grading.json"
    path.write_text(
        json.dumps(
            {
                "date": "2026-01-01",
                "chapter": "02",
                "cores": 2,
                "load_1min": 1.0,
                "per_group": 1,
                "graders": 2,
                "points": 4,
                "sequential_s": 10.0,
                "parallel_s": 6.0,
                "all_graded": True,
                "exit_codes": [0, 1],
                "integrity": "ok",
                "errors": ["database is locked"],
            }
        )
    )
    assert grading.run(False, path=path).rows[1]["safe"] is False


def test_without_a_stored_measurement_the_section_says_how_to_measure(tmp_path):
    section = grading.run(False, path=tmp_path / "missing.json")
    assert section.status.startswith("skipped") and "BENCH_GRADING=1" in section.status


def test_bench_grading_must_be_1_or_0(monkeypatch):
    monkeypatch.setenv("BENCH_GRADING", "yes")
    with pytest.raises(ValueError, match="BENCH_GRADING"):
        grading.measure_from_env()
