"""Every size of the Playground the built site offers trains as PyTorch does: its K-step graph
(the page's run of K steps, the step graph unrolled) from a state away from the page's start gives
every loss, accuracy, parameter and Adam moment of K of ``lib.playground``'s steps, and its step
graph one step; its probe (the forward pass, its length an input, fed as the page feeds it) gives
the library's logits at 8, 16 and 32 for every kind of positions it serves.
tests/test_playground.py checks one size in depth (export, unrolling, loading the weights back, the
page's feeding); this checks the graphs the reader downloads, at all 18 sizes, at the 12 graph
sets of RoPE and ALiBi (width 32) and at the 6 of RMSNorm and grouped-query attention (L2-H4-D32),
so that no size's export (e.g. of the operations
tools/export_playground.py writes its own way, ``page_decompositions``) differs from the library's.

The sets of RMSNorm and grouped-query attention are held, besides STEP_TOL, within tests/tolerance.py's
float32 bound sized by each value (``assert_step_close``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from lib import playground as pg
from tests.test_playground import assert_step_close

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import export_playground as ex  # noqa: E402

STEP_TOL = 1e-6  # as tests/test_playground.py: after one step and after K, every value
LOGIT_TOL = 1e-5  # the long probe's logits, as tests/test_playground.py's probes

# the graphs are the built site's (make test-kernels, which runs without a site, leaves them out)
pytestmark = pytest.mark.site


@pytest.fixture(scope="module")
def manifest(site):
    path = site / "_static" / "live" / "playground" / "manifest.json"
    return path.parent, json.loads(path.read_text())


def session(path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def test_the_manifest_lists_every_graph_set(manifest):
    _, data = manifest
    assert list(data["models"]) == [ex.key(*j) for j in ex.JOBS]
    assert data["in_attention"]["sizes"] == [ex.key(*c) for c in ex.IN_ATTENTION_SIZES]
    assert data["test"] == {"length": ex.TEST_LENGTH, "lengths": list(ex.TEST_LENGTHS)}
    assert data["modern"]["size"] == ex.key(*ex.MODERN_SIZE)


@pytest.mark.parametrize("size", ex.JOBS, ids=[ex.key(*j) for j in ex.JOBS])
def test_each_size_steps_as_pytorch(manifest, size):
    folder, data = manifest
    entry = data["models"][ex.key(*size)]
    assert entry["hash"] == ex.source_hash(size, entry["unroll"]), "graphs older than the code"
    model = ex.model_for(*size)
    torch.manual_seed(sum(size[:3]))
    params = [p.detach().clone() for p in model.parameters()]
    P = pg.flat_size(model)
    m, v = torch.randn(P) * 0.01, torch.rand(P) * 1e-4
    K, rng = entry["unroll"], pg.Mulberry32(sum(size[:3]))
    batches = [pg.make_batch("sort", 32, rng) for _ in range(K)]
    scalars = [torch.tensor(3e-3), torch.tensor(5.0), torch.tensor(1.0)]
    step = ex.step_function(model)
    refs, state = [], [*params, m, v]
    for k, (x, y) in enumerate(batches):
        refs.append(step(x, y, scalars[0], scalars[1] + k, scalars[2], model.mask(), *state))
        state = [t.detach() for t in refs[-1][3:]]

    def run(graph, x, y):
        sess = session(folder / entry[graph])
        feeds = [x, y, *scalars, model.mask(), *params, m, v]
        names = [i.name for i in sess.get_inputs()]
        return sess.run(None, dict(zip(names, [a.detach().numpy() for a in feeds])))

    one = run("step", *batches[0])
    assert len(one) == len(refs[0]) == 3 + len(params) + 2
    if size[4] != "layernorm" or size[5] != size[1]:  # RMSNorm, grouped-query attention
        assert_step_close(one, refs[0], model, 32)
    for a, b in zip(one, refs[0]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=0, atol=STEP_TOL)
    x, y = torch.stack([b[0] for b in batches]), torch.stack([b[1] for b in batches])
    got = run("steps", x, y)
    # after K steps of RMSNorm and grouped-query attention, onnxruntime's and torch's summation orders
    # have compounded: on an AMD EPYC (2026-12-06) the 8th loss differed by 2.6e-5 (1.0e-5 relative,
    # about 85 float32 epsilons) and the state (weights, Adam moments) by 1.6e-4: K steps are held
    # relative to the values (1e-4 the losses, 1e-3 the state)
    drift = 1e-4 if size[4] != "layernorm" or size[5] != size[1] else 0.0
    for i in range(3):  # loss, token and sequence accuracy of each of the K steps
        np.testing.assert_allclose(got[i], [r[i].item() for r in refs], rtol=drift, atol=STEP_TOL)
    for a, b in zip(got[3:], state):  # the state after the K-th step
        np.testing.assert_allclose(
            a, b.numpy(), rtol=10 * drift, atol=STEP_TOL * (1 + 10 * drift / 1e-6)
        )
    # the probe: every kind of positions it serves, with the trained state's weights, at the
    # training length and at every test length
    kinds = [size[3]] if size[3] in pg.IN_ATTENTION else ["sinusoidal", "none"]
    sess = session(folder / entry["probe"])
    names = [i.name for i in sess.get_inputs()]
    for kind, causal in [(k, c) for k in kinds for c in (False, True)]:
        config = pg.PlaygroundConfig(
            n_layers=size[0], n_heads=size[1], d_model=size[2], positional=kind, causal=causal,
            norm=size[4], n_kv_heads=size[5],
        )  # fmt: skip
        trained = pg.PlaygroundModel(config)
        weights = dict(zip([n for n, _ in trained.named_parameters()], state))
        weights["pos"] = trained.pos.detach()  # the table the page keeps (sinusoidal or zeros)
        trained.load_state_dict(weights)
        params = [p.detach().numpy() for p in trained.parameters()]
        for length in (pg.LENGTH, *ex.TEST_LENGTHS):
            x, _ = pg.make_batch("copy", 8, pg.Mulberry32(length), length)
            feeds = [a.numpy() for a in ex.long_feeds(trained, x)] + params
            logits, _ = sess.run(None, dict(zip(names, feeds)))
            with torch.no_grad():
                ref = trained(x).logits.numpy()  # [8, length, V]
            np.testing.assert_allclose(logits[:, :length], ref, rtol=0, atol=LOGIT_TOL)
