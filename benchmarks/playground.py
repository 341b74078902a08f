"""Benchmark 7: the Attention Playground's training step in the page, in native onnxruntime and in PyTorch.

For each model size the page offers (tools/export_playground.py: the 18 sizes with a position table,
RoPE's and ALiBi's graphs at width 32, keys such as L1-H2-D32-alibi, and RMSNorm's and grouped-query
attention's at 2 layers, 4 heads, width 32, keys such as L2-H4-D32-rope-rmsnorm-kv2), one training step on a batch of 32
reverse sequences: in headless Chromium (the built site's chapter 8 page; the Playground's own Web
Worker, onnxruntime-web WebAssembly, one thread; timed inside the worker, so the figure's messages are
not counted; one step per run and K steps per run, interleaved), in Python's onnxruntime on the same
ONNX files (one thread), and in PyTorch eager (``lib.playground.Run.step``, one thread). Also the
levers: K (4, 8, 16: the unrolled graphs made here from the step graph and handed to the worker), a
batch of 128, onnxruntime's graph optimisation level. Also: the time the page takes
to learn reverse (learned positions, the default size) to 95% of held-out sequences, clicking Play, and
the bytes the Playground downloads on first use beyond the runtime the other live figures share.
"""

from __future__ import annotations

import base64
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, NamedTuple

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

from benchmarks.common import Column, Section
from benchmarks.live import SITE, _browser

ROOT = Path(__file__).resolve().parents[1]
RATIO_GOAL = 4.0  # page / native onnxruntime
LEARN_GOAL = 5.0  # seconds to 95% held-out sequences on reverse
BYTES_GOAL = 2e6  # beyond the runtime

BYTES = "const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;\n"

PAGE_STEPS = (
    BYTES
    + """
// plan: [[k, graph, n, warm], ...]: for each, the worker set to k steps per run (1: single steps;
// graph, base64: another K-step graph), warm steps, then n steps timed; fresh: a new run first
const [key, batch, fresh, plan] = Array.from(arguments).slice(0, 4);
const done = arguments[arguments.length - 1];
(async () => {
  const root = document.querySelector(".book-live[data-live='playground']");
  const state = root.playground;
  if (fresh) {
    const [layers, heads, width] = key.match(/\\d+/g).map(Number);
    const set = (k, v) => { const s = root.querySelector(`.book-pg-${k}`); s.value = String(v); };
    set("layers", layers); set("heads", heads); set("width", width); set("batch", batch);
    // RoPE's and ALiBi's keys name them, RMSNorm's and fewer key/value heads' too (L2-H4-D32-rope-rmsnorm-kv2)
    const tags = key.split("-").slice(3);
    set("pos", tags.find((t) => t === "rope" || t === "alibi") || "learned"); set("test", 8);
    set("norm", tags.includes("rmsnorm") ? "rmsnorm" : "layernorm");
    set("kv", (tags.find((t) => t.startsWith("kv")) || `kv${heads}`).slice(2));
    root.dataset.run = "";
    root.querySelector(".book-pg-reset").click();
    for (let i = 0; i < 600 && !(state.worker && root.dataset.run === "ready"); i++) await new Promise((r) => setTimeout(r, 50));
  }
  const reply = (type) => new Promise((resolve) => {
    const on = (event) => { if (event.data.type === type) { state.worker.removeEventListener("message", on); resolve(event.data); } };
    state.worker.addEventListener("message", on);
  });
  const times = [];
  const listen = (event) => { if (event.data.type === "progress" && event.data.ms) times.push([event.data.ms, event.data.steps.length]); };
  state.worker.addEventListener("message", listen);
  const go = async (k) => {  // k steps, and the held-out pass that ends them
    if (k === 0) return;
    const t0 = state.t;
    const paused = new Promise((resolve) => {
      const on = (event) => {
        if (event.data.type === "paused" && event.data.t >= t0 + k) { state.worker.removeEventListener("message", on); resolve(); }
      };
      state.worker.addEventListener("message", on);
    });
    state.worker.postMessage({ type: "step", n: k, probe: null });
    await paused;
  };
  const out = [];
  for (const [k, graph, n, warm] of plan) {
    const unrolled = reply("unrolled");
    state.worker.postMessage({ type: "unroll", k, bytes: graph ? bytes(graph) : null });
    await unrolled;
    await go(warm);
    times.length = 0;
    await go(n);
    out.push(times.slice());  // [ms, steps] of every chunk the worker reported
  }
  state.worker.removeEventListener("message", listen);
  done(out);
})().catch((e) => done("error: " + e.message));
"""
)

LEARN = """
const done = arguments[arguments.length - 1];
(async () => {
  const root = document.querySelector(".book-live[data-live='playground']");
  root.querySelector(".book-pg-reset").click();
  const state = root.playground;
  for (let i = 0; i < 600 && !(state.worker && root.dataset.run === "ready"); i++) await new Promise((r) => setTimeout(r, 50));
  const t0 = performance.now();
  root.querySelector(".book-pg-play").click();
  for (let i = 0; i < 6000; i++) {
    const last = state.held[state.held.length - 1];
    if (last && last[1] >= 0.95) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  root.querySelector(".book-pg-play").click();
  const last = state.held[state.held.length - 1];
  done([(performance.now() - t0) / 1000, last ? last[0] : 0, last ? last[1] : 0]);
})().catch((e) => done("error: " + e.message));
"""


PAGE_TIME = (
    BYTES
    + """
// the Playground's worker runs a graph of float inputs n times: its milliseconds per run
const [graph, shapes, n, chunk] = Array.from(arguments).slice(0, 4);
const done = arguments[arguments.length - 1];
const worker = document.querySelector(".book-live[data-live='playground']").playground.worker;
const on = (event) => { if (event.data.type === "timed" || event.data.type === "error") { worker.removeEventListener("message", on); done(event.data.ms || "error: " + event.data.error); } };
worker.addEventListener("message", on);
worker.postMessage({ type: "time", bytes: bytes(graph), shapes, n, chunk, level: "disabled" });
"""
)


def products_graph(step: onnx.ModelProto, batch: int = 32) -> tuple[onnx.ModelProto, dict, int]:
    """The step graph's matrix products alone: each MatMul and Gemm of ``step`` with the shapes it
    has at this batch, in a graph of their own (so nothing else runs). Its inputs are one tensor per
    distinct operand shape and its one output the first element of every product, so a run copies
    little in and out. Returns the graph, its inputs' shapes and the products' floating-point
    operations per run (2 M K N each): what a step costs at least where those products run at a
    given speed, the floor under the page's step."""
    from onnx import shape_inference

    step = onnx.ModelProto.FromString(step.SerializeToString())
    for value in step.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                dim.ClearField("dim_param")
                dim.dim_value = batch
    step = shape_inference.infer_shapes(step, strict_mode=True, data_prop=True)
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*step.graph.value_info, *step.graph.input]
    }
    shapes.update({t.name: list(t.dims) for t in step.graph.initializer})
    inputs, nodes, firsts, flops = {}, [], [], 0  # inputs: shape -> name
    for node in step.graph.node:
        if node.op_type not in ("MatMul", "Gemm"):
            continue
        a, b = (shapes.get(name) for name in node.input[:2])
        if not a or not b or 0 in a + b:
            raise ValueError(
                f"products_graph: no static shape for {node.op_type} {node.name}: {a}, {b}"
            )
        attrs = {x.name: helper.get_attribute_value(x) for x in node.attribute}
        if node.op_type == "Gemm":  # 2-D, maybe transposed operands (its bias is left out)
            m, k = a[::-1] if attrs.get("transA") else a
            n = b[0] if attrs.get("transB") else b[1]
            batches = 1
        else:  # batched: a [..., M, K] @ b [..., K, N]
            m, k, n = a[-2] if len(a) > 1 else 1, a[-1], b[-1]
            batches = int(
                np.prod(np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2])), dtype=np.int64)
            )
        flops += 2 * batches * m * k * n
        operands = [inputs.setdefault(tuple(s), f"x{len(inputs)}") for s in (a, b)]
        i = len(firsts)
        nodes += [
            helper.make_node(node.op_type, operands, [f"c{i}"], **attrs),
            helper.make_node("Reshape", [f"c{i}", "flat"], [f"f{i}"]),
            helper.make_node("Slice", [f"f{i}", "zero", "one"], [f"s{i}"]),
        ]
        firsts.append(f"s{i}")
    nodes.append(helper.make_node("Concat", firsts, ["first"], axis=0))
    graph = helper.make_graph(
        nodes,
        "products",
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, k) for k, v in inputs.items()],
        [helper.make_tensor_value_info("first", TensorProto.FLOAT, [len(firsts)])],
        [
            helper.make_tensor(name, TensorProto.INT64, [1], [v])
            for name, v in (("flat", -1), ("zero", 0), ("one", 1))
        ],
    )
    model = helper.make_model(
        graph, opset_imports=list(step.opset_import), ir_version=step.ir_version
    )
    onnx.checker.check_model(model)
    return model, {v: list(k) for k, v in inputs.items()}, flops


# One link of a chain of one operator of the step (benchmark 7's operator rates): its ONNX nodes from
# the link before (p) to this one (o); the same in PyTorch eager, as the step runs it there (k: x, ones,
# rx = relu(x)); the operator the link is named for. "as exported": how tools/export_playground.py
# writes that operation instead (``page_decompositions``), these rates being why. The sums read x each
# time and add into a running sum (sums of sums would overflow); Mul and Div take a tensor of ones (x
# times x, over and over, would reach denormal numbers, which CPUs process many times slower).
_N = lambda op, inputs, out, **attrs: helper.make_node(op, inputs, [out], **attrs)  # noqa: E731


class Link(NamedTuple):
    onnx: Callable
    torch: Callable
    counted: str


def _layer_norm_plain(p, o):
    return [
        _N("ReduceMean", [p, "last"], o + "_mean", keepdims=1),
        _N("Sub", [p, o + "_mean"], o + "_c"),
        _N("Mul", [o + "_c", o + "_c"], o + "_sq"),
        _N("ReduceMean", [o + "_sq", "last"], o + "_var", keepdims=1),
        _N("Add", [o + "_var", "eps"], o + "_ve"),
        _N("Sqrt", [o + "_ve"], o + "_sd"),
        _N("Reciprocal", [o + "_sd"], o + "_rstd"),
        _N("Mul", [o + "_c", o + "_rstd"], o + "_n"),
        _N("Mul", [o + "_n", "gain"], o + "_g"),
        _N("Add", [o + "_g", "shift"], o),
    ]


_LN = lambda t, k: torch.nn.functional.layer_norm(t, t.shape[-1:], eps=1e-5)  # noqa: E731
_RELU_GRAD = lambda t, k: torch.ops.aten.threshold_backward(t, k.rx, 0.0)  # noqa: E731
OPERATORS = {
    "Add": Link(lambda p, o: [_N("Add", [p, "x"], o)], lambda t, k: t + k.x, "Add"),
    "Mul": Link(lambda p, o: [_N("Mul", [p, "ones"], o)], lambda t, k: t * k.ones, "Mul"),
    "Div": Link(lambda p, o: [_N("Div", [p, "ones"], o)], lambda t, k: t / k.ones, "Div"),
    "Relu": Link(lambda p, o: [_N("Relu", [p], o)], lambda t, k: torch.relu(t), "Relu"),
    "Max(x, 0), ReLU as exported": Link(lambda p, o: [_N("Max", [p, "zero"], o)], lambda t, k: torch.relu(t), "Max"),
    "ReLU's gradient": Link(  # zero where the ReLU's output is <= 0, else the gradient
        lambda p, o: [_N("LessOrEqual", ["rx", "zero"], o + "_le"), _N("Where", [o + "_le", "zero", p], o)],
        _RELU_GRAD, "Where",
    ),
    "ReLU's gradient as exported (times the sign of the output)": Link(
        lambda p, o: [_N("Sign", ["rx"], o + "_s"), _N("Mul", [p, o + "_s"], o)], _RELU_GRAD, "Sign"
    ),
    "Softmax": Link(lambda p, o: [_N("Softmax", [p], o, axis=-1)], lambda t, k: t.softmax(-1), "Softmax"),
    "LayerNormalization": Link(
        lambda p, o: [_N("LayerNormalization", [p, "gain", "shift"], o, axis=-1, epsilon=1e-5)], _LN,
        "LayerNormalization",
    ),
    "LayerNorm as exported (10 plain operators)": Link(_layer_norm_plain, _LN, "Reciprocal"),
    "Transpose": Link(lambda p, o: [_N("Transpose", [p], o, perm=[1, 0])], lambda t, k: t.t().contiguous(), "Transpose"),
    "ReduceSum over rows": Link(
        lambda p, o: [_N("ReduceSum", ["x", "first"], o + "_r", keepdims=1), _N("Add", [p, o + "_r"], o)],
        lambda t, k: t + k.x.sum(0, keepdim=True), "ReduceSum",
    ),
    "ReduceSum over rows as exported (ones times the rows)": Link(
        lambda p, o: [_N("MatMul", ["ones_row", "x"], o + "_r"), _N("Add", [p, o + "_r"], o)],
        lambda t, k: t + k.x.sum(0, keepdim=True), "MatMul",
    ),
    "ReduceSum over the last axis": Link(
        lambda p, o: [_N("ReduceSum", ["x", "last"], o + "_r", keepdims=1), _N("Add", [p, o + "_r"], o)],
        lambda t, k: t + k.x.sum(-1, keepdim=True), "ReduceSum",
    ),
}  # fmt: skip


def _start(op: str, x):
    """Where op's chain starts: x, or for the sums a zero of the summed shape."""
    if op.startswith("ReduceSum over rows"):
        return x[:1] * 0
    if op.startswith("ReduceSum over the last axis"):
        return x[:, :1] * 0
    return x


def operator_graph(op: str, shape=(256, 256), n: int = 50) -> onnx.ModelProto:
    """n links of one of ``OPERATORS`` in a chain (each reads the one before, so none is skipped)
    from a float input x of a 2-D ``shape``; the output is the chain's end."""
    from onnx import numpy_helper

    start = _start(op, np.zeros(shape, np.float32))
    constants = {
        "ones": np.ones(shape, np.float32),
        "ones_row": np.ones((1, shape[0]), np.float32),
        "zero": np.array(0.0, np.float32),
        "eps": np.array(1e-5, np.float32),
        "gain": np.ones(shape[-1:], np.float32),
        "shift": np.zeros(shape[-1:], np.float32),
        "first": np.array([0], np.int64),
        "last": np.array([-1], np.int64),
        "start": start,
    }
    nodes, prev = [], "x" if start.shape == tuple(shape) else "start"
    for i in range(n):
        nodes += OPERATORS[op].onnx(prev, f"t{i}")
        prev = f"t{i}"
    used = {name for node in nodes for name in node.input}
    if "rx" in used:  # the ReLU's output, once, that the gradients read
        nodes.insert(0, _N("Relu", ["x"], "rx"))
    end = list(operator_torch(op, torch.zeros(shape), n)().shape)  # the chain's end's shape
    graph = helper.make_graph(
        nodes,
        op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, end)],
        [numpy_helper.from_array(v, k) for k, v in constants.items() if k in used],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(model)
    return model


def operator_torch(op: str, x: torch.Tensor, n: int = 50):
    """``operator_graph``'s chain in PyTorch eager on x: a function of no arguments that runs it."""
    link = OPERATORS[op].torch
    k = SimpleNamespace(x=x, ones=torch.ones_like(x), rx=torch.relu(x))

    def chain():
        t = _start(op, x)
        for _ in range(n):
            t = link(t, k)
        return t

    return chain


def _session(source, level: str | None = None):
    """Python's onnxruntime on one thread (intra- and inter-operator), the page's setting: source is
    a path or a serialised graph; level a GraphOptimizationLevel's name (None: onnxruntime's default)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    if level is not None:
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    source = str(source) if isinstance(source, Path) else source
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _least_of_medians(
    driver, graph: onnx.ModelProto, shapes: dict, n: int, warm: int, rounds: int = 3, torch_run=None
) -> tuple[float, ...]:
    """Milliseconds per run of a graph of float inputs (``shapes``), in the page's Playground worker
    and in native onnxruntime (one thread each), graph optimisations off (onnxruntime would
    otherwise compute equal operators on the same inputs once), and of ``torch_run`` (a function of
    no arguments, if given) in PyTorch eager. The least over ``rounds`` of the median of n samples
    after warm (other processes only ever add time), the three in turn in each round; in the page
    each sample times 5 runs, as a worker's clock ticks in 0.1 ms. Both sides get the same inputs."""
    data = graph.SerializeToString()
    encoded = base64.b64encode(data).decode()
    session = _session(data, "ORT_DISABLE_ALL")
    feeds = {
        k: np.sin(np.arange(np.prod(v))).astype(np.float32).reshape(v) for k, v in shapes.items()
    }

    def median_ms(call):
        times = []
        for _ in range(warm + n):
            t0 = time.perf_counter()
            call()
            times.append(1e3 * (time.perf_counter() - t0))
        return statistics.median(times[warm:])

    sides = [[] for _ in range(3 if torch_run else 2)]
    for _ in range(rounds):
        got = driver.execute_async_script(PAGE_TIME, encoded, shapes, warm + n, 5)
        if isinstance(got, str):
            raise RuntimeError(got)
        sides[0].append(statistics.median(got[warm:]))
        sides[1].append(median_ms(lambda: session.run(None, feeds)))
        if torch_run:
            sides[2].append(median_ms(torch_run))
    return tuple(min(side) for side in sides)


def _native_ms(
    path: Path, n: int, warm: int, batch: int = 32, level: str | None = None, k: int = 1
) -> list[float]:
    """Milliseconds per training step, n of them (after warm): runs of the step graph (k = 1) or
    of the K-step graph (k = K: K batches per run, the run's time divided by K)."""
    from lib import playground as pg

    session = _session(path, level)
    run = pg.Run(_config(path.name.split("-step")[0]))
    names = [i.name for i in session.get_inputs()]
    state = [p.numpy().copy() for p in (*run.params, run.m, run.v)]
    rng = pg.Mulberry32(0)
    times = []
    for i in range(warm + n):
        batches = [pg.make_batch("reverse", batch, rng) for _ in range(k)]
        x, y = (np.stack([b[j].numpy() for b in batches]) for j in (0, 1))
        if k == 1:
            x, y = x[0], y[0]
        feeds = [
            x,
            y,
            np.array(3e-3, np.float32),
            np.array(1 + i * k, np.float32),
            np.array(1.0, np.float32),
            run.model.mask().numpy(),
            *state,
        ]
        t0 = time.perf_counter()
        out = session.run(None, dict(zip(names, feeds)))
        if i >= warm:
            times.append(1e3 * (time.perf_counter() - t0) / k)
        state = out[3:]
    return times


def _page_ms(
    driver,
    key: str,
    n: int,
    warm: int,
    batch: int = 32,
    ks=((1, None),),
    rounds: int = 1,
    between=None,
) -> list[float]:
    """Milliseconds per step in the page, for each (k, graph) of ks: one new run, 100 warm-up steps
    in each mode (WebAssembly's optimising compiler takes over from its baseline one in the
    background, in the first seconds), then ``rounds`` times, for each mode in turn, warm steps and
    n steps timed inside the worker, chunk by chunk (about 50 ms of steps each); the median over
    the steps of their chunk's milliseconds per step (a median: other processes on a shared machine
    slow some chunks down). k = 1: single steps; graph: the bytes of another K-step graph.
    ``between``, if given, is called after each timed round: what the page is compared with is
    timed in turn with it, so that all sides meet the same moments of a shared machine."""

    def plan(n_, warm_):
        return [[k, base64.b64encode(g).decode() if g else None, n_, warm_] for k, g in ks]

    per_step = [[] for _ in ks]
    for i in range(rounds + 1):
        got = driver.execute_async_script(
            PAGE_STEPS, key, batch, i == 0, plan(0, 100) if i == 0 else plan(n, warm)
        )
        if isinstance(got, str):
            raise RuntimeError(got)
        for j, chunks in enumerate(got):
            for ms, steps in chunks:
                per_step[j] += [ms / steps] * steps
        if i > 0 and between is not None:
            between()
    return [statistics.median(t) for t in per_step]


def missed(rows: list[dict]) -> str:
    """The finding that names the sizes where the goal is not met with K steps per run, and why."""
    slow = [r["case"] for r in rows if r["page"] >= r["torch"]]
    far = [r["case"] for r in rows if r["ratio"] > RATIO_GOAL]
    return (
        f"Not met with K steps per run: the page slower than PyTorch eager at {', '.join(slow) or 'no size'}; beyond "
        f"{RATIO_GOAL:g}x of native onnxruntime at {', '.join(far) or 'no size'}. What is left there is the operators' "
        "own work (the matrix products grow with the width; WebAssembly has 128-bit SIMD, native code the wider "
        "vectors of this CPU, AVX-512 for onnxruntime, benchmark 6), not the per-run overhead that K removes."
    )


def floor_finding(rows: list[dict]) -> str:
    """What the step's matrix products alone cost in the page, against PyTorch's whole step; and
    where the page cannot be faster than PyTorch: its products alone plus the rest of the step at
    the smallest width (the same operators on a quarter of the width: what the rest costs at
    least) take longer than PyTorch's whole step."""
    rate = lambda r, ms: r["flops"] / ms / 1e6  # noqa: E731  (GFLOP/s)
    by_case = {r["case"]: r for r in rows}

    def rest_at_16(
        r,
    ):  # the page's step minus its products, at width 16 with these layers and heads
        small = by_case.get(r["case"].rsplit("-D", 1)[0] + "-D16")
        return small["page"] - small["floor"] if small else 0.0

    slow = [r for r in rows if r["page"] >= r["torch"]]
    bound = [r for r in slow if r["floor"] + rest_at_16(r) >= r["torch"]]
    text = (
        "The floor: the step's matrix products alone (its MatMul and Gemm operators with their shapes, in a graph of "
        "their own; `products_graph`) take "
        + ", ".join(
            f"{r['case']} {r['floor']:.2f} ms ({rate(r, r['floor']):.0f} GFLOP/s; natively {r['floor_native']:.2f} ms, "
            f"{rate(r, r['floor_native']):.0f} GFLOP/s)"
            for r in rows
        )
        + " in the page."
    )
    if slow:
        text += (
            " Where the page is slower than PyTorch eager: "
            + "; ".join(
                f"{r['case']}: products {r['floor']:.2f} ms + the rest {r['page'] - r['floor']:.2f} ms (at width 16 "
                f"{rest_at_16(r):.2f} ms) against PyTorch's {r['torch']:.2f} ms"
                for r in slow
            )
            + "."
        )
    if bound:
        text += (
            f" At {', '.join(r['case'] for r in bound)} the page's products alone plus the rest of its step as it costs "
            "at width 16 (the same operators on a quarter of the width) already take as long as PyTorch eager's whole "
            "step: no change that keeps the step's arithmetic makes the page faster than PyTorch there, in one "
            "WebAssembly thread on this CPU (128-bit SIMD against the AVX-512 kernels of PyTorch and native onnxruntime)."
        )
    return text


def operators_finding(rates: dict, rows: list[dict], shape=(256, 256), n: int = 50) -> str:
    """What one operator of each kind the step runs costs (``rates``: op -> microseconds in the
    page, natively, in PyTorch), and what the step's operators other than its matrix products cost
    the page on average, at the sizes where it is slower than PyTorch."""
    text = (
        f"Per operator, on a {list(shape)} tensor (the feed-forward layer's activations at width 64: 32 sequences of 8 "
        "positions by 4 x 64), microseconds in the page / natively / in PyTorch eager (one thread each; chains of "
        f"{n} of one operator, `operator_graph`; the least over the rounds of the median run): "
        + "; ".join(
            f"{op} {page:.1f} / {native:.1f} / {eager:.1f} (page / PyTorch {page / eager:.1f})"
            for op, (page, native, eager) in rates.items()
        )
        + "."
    )
    slow = [r for r in rows if r["page"] >= r["torch"] and "operators" in r]

    def others(r):  # the step's operators besides its products: how many, their page ms, the most
        count = r["operators"] - r["products"]  # they could take with the page faster than PyTorch
        return count, r["page"] - r["floor"], r["torch"] - r["floor"]

    if slow:
        text += (
            " The step's other operators, where the page is slower than PyTorch (the step minus its products, against "
            "PyTorch's whole step minus the page's products): "
            + "; ".join(
                f"{r['case']}: {others(r)[0]} operators besides its {r['products']} matrix products take {others(r)[1]:.2f} ms "
                f"in the page, {1e3 * others(r)[1] / others(r)[0]:.0f} microseconds each on average, where "
                + (
                    f"{others(r)[2]:.2f} ms, {1e3 * others(r)[2] / others(r)[0]:.1f} each, would make it faster"
                    if others(r)[2] > 0
                    else "no time at all would: the products alone take as long as PyTorch's step"
                )
                for r in slow
            )
            + "."
        )
    return text


def _config(key: str):
    """The configuration of a manifest key: "L1-H2-D32" (a position table), "L1-H2-D32-alibi",
    "L2-H4-D32-rope-rmsnorm-kv2" (tools/export_playground.py ``key``)."""
    from lib import playground as pg

    layers, heads, width, *tags = key.split("-")
    return pg.PlaygroundConfig(
        n_layers=int(layers[1:]), n_heads=int(heads[1:]), d_model=int(width[1:]),
        positional=next((t for t in tags if t in pg.IN_ATTENTION), "learned"),
        norm=next((t for t in tags if t in pg.NORMS), "layernorm"),
        n_kv_heads=next((int(t[2:]) for t in tags if t.startswith("kv")), None),
    )  # fmt: skip


def _torch_ms(key: str, n: int, warm: int) -> list[float]:
    """Milliseconds of n of ``lib.playground.Run.step`` (after warm), eager."""
    from lib import playground as pg

    run = pg.Run(_config(key))
    times = []
    for i in range(warm + n):
        t0 = time.perf_counter()
        run.step()
        if i >= warm:
            times.append(1e3 * (time.perf_counter() - t0))
    return times


def run(
    steps: int = 50,
    warmup: int = 10,
    site: Path = SITE,
    keys: list[str] | None = None,
    rounds: int = 3,
    unrolls: tuple[int, ...] = (4, 8, 16),
    operators: tuple[str, ...] | None = None,
) -> Section:
    method = (
        f"One training step (forward, loss, gradients, Adam) on a batch of 32 reverse sequences, in milliseconds: *page*: timed "
        "inside the Playground's Web Worker (onnxruntime-web WebAssembly with SIMD, one thread) on the built chapter 8 page "
        f"in headless Chromium: one run of each size, 100 warm-up steps in each mode, then {rounds} rounds of {warmup} "
        f"warm-up and {steps} timed steps in each mode in turn; the median over the timed steps of the milliseconds per "
        "step of the chunk (about 50 ms of steps) each belongs to; *native*: the median of the "
        f"same steps of the same ONNX file in Python's onnxruntime, one thread; *PyTorch*: the median of "
        f"`lib.playground.Run.step`, eager, one thread; both timed in turn with the page, {steps} steps of each "
        "after each of the page's rounds (a shared machine's slow moments reach all three alike). *learn*: seconds from Play until the page's held-out sequence "
        "accuracy (measured every 25 steps) reaches 95% on reverse with learned positions at the default size. "
        "*one step*: one `session.run` per step (the step graph); *K steps*: the page as it trains, the K-step graph "
        "(tools/export_playground.py, the step unrolled K times) for every run of K steps before a held-out check (24 of "
        "every 25 steps at K = 8) and the step graph for the rest; natively the K-step graph's run time divided by K. "
        "*page / native* and the goal's two conditions compare like with like: the page's K steps against the native "
        "K-step graph's. *matrix products alone*: the step graph's MatMul and Gemm operators with their shapes in a "
        "graph of their own (`products_graph`), timed in the page's worker: the least over 3 rounds of the median "
        f"of {steps} samples of 5 runs each, the floor under the page's step."
    )
    columns = [
        Column("case", "size"),
        Column("page1", "page, one step (ms)", ".2f"),
        Column("page", "page, K steps (ms)", ".2f"),
        Column("native1", "native, one step (ms)", ".2f"),
        Column("native", "native, K steps (ms)", ".2f"),
        Column("torch", "PyTorch (ms)", ".2f"),
        Column("floor", "page, matrix products alone (ms)", ".2f"),
        Column("ratio1", "page / native, one step", ".2f"),
        Column("ratio", "page / native, K steps", ".2f"),
        Column("met1", "goal met, one step", lambda m: "yes" if m else "**no**"),
        Column(
            "met",
            f"goal met, K steps (within {RATIO_GOAL:g}x and faster than PyTorch)",
            lambda m: "yes" if m else "**no**",
        ),
    ]
    section = Section("playground", "7. The Playground's training step", method, columns)
    folder = site / "_static" / "live" / "playground"
    if not (folder / "manifest.json").is_file() or not shutil.which("chromium"):
        section.status = f"skipped: no built site with the Playground at {site} or no Chromium"
        return section
    torch.set_num_threads(1)
    sys.path.insert(0, str(ROOT / "tools"))
    import export_playground as onnx_export

    manifest = json.loads((folder / "manifest.json").read_text())
    driver, httpd, url, profile = _browser(site)
    try:
        driver.get(f"{url}/notebooks/08_positional_encoding.html")
        time.sleep(1)
        for key, entry in manifest["models"].items():
            if keys is not None and key not in keys:
                continue
            K = entry["unroll"]
            others = {"native1": [], "native": [], "torch": []}  # timed between the page's rounds

            def between():
                others["native1"] += _native_ms(folder / entry["step"], steps, warmup)
                others["native"] += _native_ms(folder / entry["steps"], steps, warmup, k=K)
                others["torch"] += _torch_ms(key, steps, warmup)

            page1, page = _page_ms(
                driver, key, steps, warmup, ks=((1, None), (K, None)), rounds=rounds,
                between=between,
            )  # fmt: skip
            native1, native, eager = (statistics.median(others[k]) for k in others)
            step = onnx.load(folder / entry["step"])
            products, shapes, flops = products_graph(step)
            floor, floor_native = _least_of_medians(driver, products, shapes, steps, warmup)
            section.rows.append(
                dict(
                    case=key,
                    page1=page1,
                    page=page,
                    native1=native1,
                    native=native,
                    torch=eager,
                    ratio1=page1 / native1,
                    ratio=page / native,
                    met1=page1 / native1 <= RATIO_GOAL and page1 < eager,
                    met=page / native <= RATIO_GOAL and page < eager,
                    unroll=entry["unroll"],
                    floor=floor,
                    floor_native=floor_native,
                    flops=flops,
                    operators=len(step.graph.node),
                    products=sum(n.op_type in ("MatMul", "Gemm") for n in step.graph.node),
                )
            )
        # what one operator of each kind costs, the page against native onnxruntime and PyTorch
        x = np.sin(np.arange(256 * 256)).astype(np.float32).reshape(256, 256)  # as the page's input
        rates = {}
        for op in operators or OPERATORS:
            ms = _least_of_medians(
                driver, operator_graph(op), {"x": [256, 256]}, steps, warmup, rounds,
                torch_run=operator_torch(op, torch.from_numpy(x)),
            )  # fmt: skip
            rates[op] = [1e3 * v / 50 for v in ms]
        # the levers (issue 24): K, a larger batch per step, onnxruntime's graph optimisation level
        unrolled = {}  # (size, K) -> (page, native) ms per step, bytes
        for key in [k for k in ("L1-H2-D32", "L2-H4-D64") if keys is None or k in keys]:
            step = onnx.load(folder / manifest["models"][key]["step"])
            graphs = {k: onnx_export.unroll(step, k).SerializeToString() for k in unrolls}
            pages = _page_ms(driver, key, steps, warmup, ks=list(graphs.items()), rounds=rounds)
            for (k, graph), page in zip(graphs.items(), pages):
                with tempfile.TemporaryDirectory() as tmp:
                    (Path(tmp) / f"{key}-steps{k}.onnx").write_bytes(graph)
                    native = statistics.median(
                        _native_ms(Path(tmp) / f"{key}-steps{k}.onnx", steps, warmup, k=k)
                    )
                unrolled[key, k] = (page, native, len(graph))
        lever, path = {}, folder / manifest["models"]["L1-H2-D32"]["step"]
        for batch in (32, 128):
            lever[batch] = (
                _page_ms(driver, "L1-H2-D32", steps, warmup, batch, rounds=rounds)[0],
                statistics.median(_native_ms(path, steps, warmup, batch)),
            )
        levels = {
            level: statistics.median(_native_ms(path, steps, warmup, level=level))
            for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_ALL")
        }
        driver.get(f"{url}/notebooks/08_positional_encoding.html")
        time.sleep(1)
        learn = driver.execute_async_script(LEARN)
        if isinstance(learn, str):
            raise RuntimeError(learn)
    finally:
        driver.quit()
        httpd.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    default = manifest["models"]["L1-H2-D32"]
    first_use = (
        default["bytes"] + (site / "_static" / "live" / "playground_worker.js").stat().st_size
    )
    learned = learn[0] <= LEARN_GOAL and learn[2] >= 0.95
    section.goals.append(
        dict(
            goal=f"the page learns reverse to 95% of held-out sequences in {LEARN_GOAL:g} s",
            measured=f"{learn[0]:.1f} s ({100 * learn[2]:.0f}% at step {learn[1]})",
            met=learned,
        )
    )
    section.goals.append(
        dict(
            goal=f"first use downloads {BYTES_GOAL / 1e6:g} MB or less beyond the runtime",
            measured=f"{first_use / 1e6:.2f} MB",
            met=first_use <= BYTES_GOAL,
        )
    )
    rows = [r for r in section.rows]
    section.goals.append(
        dict(
            goal=f"page within {RATIO_GOAL:g}x of native onnxruntime and faster than PyTorch, every size",
            measured=f"{sum(r['met'] for r in rows)} of {len(rows)} sizes with K = {rows[0]['unroll'] if rows else '?'} steps "
            f"per run ({sum(r['met1'] for r in rows)} with one)",
            met=all(r["met"] for r in rows),
        )
    )
    section.findings.append(
        f"Learning reverse in the page (learned positions, 1 layer, 2 heads, width 32): {learn[0]:.1f} s to "
        f"{100 * learn[2]:.0f}% of held-out sequences at step {learn[1]} (goal {LEARN_GOAL:g} s: "
        f"{'met' if learn[0] <= LEARN_GOAL and learn[2] >= 0.95 else '**not met**'}). Bytes on first use beyond the "
        f"runtime: {first_use / 1e6:.2f} MB (the size's three graphs and the training worker; goal {BYTES_GOAL / 1e6:g} MB: "
        f"{'met' if first_use <= BYTES_GOAL else '**not met**'})."
    )
    (p32, n32), (p128, n128) = lever[32], lever[128]
    section.findings.append(
        f"The levers, on the default size (1 layer, 2 heads, width 32). A larger batch: at 128 sequences a step takes "
        f"{p128:.2f} ms in the page and {n128:.2f} ms natively (page / native {p128 / n128:.2f}), against {p32:.2f} and "
        f"{n32:.2f} ms at 32 ({p32 / n32:.2f}): the page's cost per sequence goes from {1e3 * p32 / 32:.0f} to "
        f"{1e3 * p128 / 128:.0f} microseconds (at 128, each operator call's fixed cost is shared by 4 times as many sequences). onnxruntime's graph "
        "optimisation level changes little (native, batch 32: "
        + ", ".join(f"{k.split('_', 1)[1].lower()} {v:.2f} ms" for k, v in levels.items())
        + "): the exported step is already a plain graph of small operators."
    )
    if rows:
        fast = [r for r in rows if r["page"] < r["torch"]]
        within = [r for r in rows if r["ratio"] <= RATIO_GOAL]
        section.findings.append(
            "K, the steps per run, measured (page and native ms per step, the K-step graph's bytes): "
            + "; ".join(
                f"{key} K = {k}: {p:.2f} and {n:.2f} ms, {b / 1e3:.0f} kB"
                for (key, k), (p, n, b) in unrolled.items()
            )
            + f". The exported K is {rows[0]['unroll']} (tools/export_playground.py UNROLL)."
        )
        section.findings.append(
            f"Several steps per run (K = {rows[0]['unroll']}): the page's time per step changes by "
            f"{statistics.median(100 * (r['page'] / r['page1'] - 1) for r in rows):+.0f}% (median over the sizes; from "
            f"{min(100 * (r['page'] / r['page1'] - 1) for r in rows):+.0f}% to {max(100 * (r['page'] / r['page1'] - 1) for r in rows):+.0f}%), "
            f"native onnxruntime's by {statistics.median(100 * (r['native'] / r['native1'] - 1) for r in rows):+.0f}%. "
            f"With it the page is faster than PyTorch eager at {len(fast)} of {len(rows)} sizes and within "
            f"{RATIO_GOAL:g}x of native onnxruntime at {len(within)}."
        )
        section.findings.append(missed(rows))
        section.findings.append(floor_finding(rows))
        section.findings.append(operators_finding(rates, rows))
    return section
