"""The page's sampler (web/src/sampling.js, under node) computes lib.decoding.sampling_distribution.

On 60 seeded logit vectors (random, with repeated values so that top-k meets ties, and peaked) under
every combination of temperature (0, 0.5, 1, 2), top-k (off, 1, 3, 10) and top-p (off, 0.5, 0.9):
the same distribution within 1e-6 (JavaScript computes in float64, torch here in float64 too).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path

import torch

from lib.decoding import sampling_distribution

ROOT = Path(__file__).resolve().parents[1]
NODE_SCRIPT = """
import { readFileSync } from "node:fs";
import { samplingDistribution } from "%s";
const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = job.cases.map(([logits, t, k, p]) => Array.from(samplingDistribution(logits, t, k, p)));
process.stdout.write(JSON.stringify(out));
"""


def cases():
    g = torch.Generator().manual_seed(0)
    vectors = []
    for i in range(60):
        v = torch.randn(40, generator=g, dtype=torch.float64) * (1 + i % 4)
        if i % 3 == 0:
            v = v.round()  # repeated values: ties at the k-th
        vectors.append(v)
    settings = itertools.product([0.0, 0.5, 1.0, 2.0], [None, 1, 3, 10], [None, 0.5, 0.9])
    return [(v, t, k, p) for v in vectors for t, k, p in settings]


def test_js_sampler_equals_the_library(tmp_path):
    node = shutil.which("node")
    assert node, "node is required"
    all_cases = cases()
    job = {"cases": [[v.tolist(), t, k, p] for v, t, k, p in all_cases]}
    (tmp_path / "job.json").write_text(json.dumps(job))
    (tmp_path / "run.mjs").write_text(NODE_SCRIPT % (ROOT / "web" / "src" / "sampling.js").as_uri())
    done = subprocess.run(
        [node, str(tmp_path / "run.mjs"), str(tmp_path / "job.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    worst = 0.0
    for (v, t, k, p), js in zip(all_cases, got, strict=True):
        ref = sampling_distribution(v, t, k, p)
        worst = max(worst, (torch.tensor(js, dtype=torch.float64) - ref).abs().max().item())
    assert worst < 1e-6, worst


SETTINGS_SCRIPT = """
import { readSettings } from "%s";
const out = JSON.parse(process.argv[2]).map(([t, k, p]) => {
  try { return readSettings(t, k, p); } catch (err) { return { error: err.message }; }
});
process.stdout.write(JSON.stringify(out));
"""


def test_the_live_figures_settings_boxes(tmp_path):
    """The GPT live figure's three boxes (web/src/sampling.js readSettings): what a reader may type is
    read as the library's arguments (top-k 0 and top-p 1: no cut); top-p 0 is the limit of the
    nucleus, the most probable token alone, i.e. greedy (temperature 0), with a note saying so; a
    negative temperature or top-k, a top-p outside [0, 1], or an empty temperature is refused with a
    message that names the box, as the lib refuses them (review 13c, point 15)."""
    node = shutil.which("node")
    assert node, "node is required"
    typed = [
        ("1", "0", "1"),
        ("0.5", "3", "0.9"),
        ("0", "", "1"),
        ("1", "0", "0"),
        ("-1", "0", "1"),
        ("", "0", "1"),
        ("1", "-3", "1"),
        ("1", "2.5", "1"),
        ("1", "0", "1.5"),
        ("1", "0", "-0.1"),
        ("1", "0", "abc"),
    ]
    (tmp_path / "run.mjs").write_text(
        SETTINGS_SCRIPT % (ROOT / "web" / "src" / "sampling.js").as_uri()
    )
    done = subprocess.run(
        [node, str(tmp_path / "run.mjs"), json.dumps(typed)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    plain = [{k: v for k, v in g.items() if k != "note"} for g in got[:4]]
    assert plain == [
        {"temperature": 1, "topK": None, "topP": None},
        {"temperature": 0.5, "topK": 3, "topP": 0.9},
        {"temperature": 0, "topK": None, "topP": None},
        {"temperature": 0, "topK": None, "topP": None},
    ]
    assert got[0]["note"] == "" and "greedy" in got[3]["note"]
    errors = [g.get("error", "") for g in got[4:]]
    for message, box, value in zip(
        errors,
        ["Temperature", "Temperature", "Top-k", "Top-k", "Top-p", "Top-p", "Top-p"],
        ["-1", "", "-3", "2.5", "1.5", "-0.1", "abc"],
        strict=True,
    ):
        assert message.startswith(box) and f'got "{value}"' in message, message
    # the settings read from the boxes give the library's distribution
    logits = torch.randn(20, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    for setting in got[:4]:
        ref = sampling_distribution(
            logits, float(setting["temperature"]), setting["topK"], setting["topP"]
        )
        assert ref.shape == (20,) and abs(ref.sum().item() - 1) < 1e-12
