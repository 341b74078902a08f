"""The Attention Playground's graphs, exported from lib.playground (issue 24; `make live-models`).

For each model size the page offers (layers x heads x width, ``CONFIGS``) two ONNX graphs:

- ``step``: one training step, ``lib.playground.train_step``, as an ordinary inference graph
  (onnxruntime-web has no training API): inputs x, y [B, L] (int64, B free), lr, step, train_pos
  (0-d float32), mask bool [L, L], then every parameter p0 .. pN-1 (in named_parameters order, each
  in its shape), Adam's m and v (one flat vector [P] each, ``train_step``); outputs loss, token_acc,
  seq_acc (0-d), then the new parameters new_p0 .. new_pN-1, new_m and new_v. The function is
  traced with torch.fx's make_fx (forward, loss, torch.autograd.grad and Adam's update become one
  graph of aten operations), then exported by torch.onnx's dynamo exporter (onnxscript).
- ``steps``: ``UNROLL`` (K) training steps in one graph, so the page pays a ``session.run``'s
  overhead (copying every weight and Adam's state between JavaScript and WebAssembly, the worker's
  bookkeeping) once per K steps: inputs x, y [K, B, L] (K batches stacked), lr, step (the number of
  the first of the K steps), train_pos, mask and the state as ``step``'s; outputs loss, token_acc,
  seq_acc [K] (every step's), then the state after the K-th step. It is ``step``'s graph repeated
  K times (``unroll``: step k reads x[k] and y[k], step + k, and the state step k - 1 wrote), so it
  computes what K runs of ``step`` compute, operator for operator; tests/test_playground.py checks it
  against K of PyTorch's steps. (Tracing K calls of ``train_step`` through make_fx and the dynamo
  exporter gives the same graph but takes about 70 s for K = 4 at one size, growing with K.)
- ``probe``: the forward pass at any length T from 8 to ``TEST_LENGTH`` (32): x [B, T], mask [T, T],
  ``more`` [T - 8, D] (the position vectors past the table's 8 rows: the page computes them,
  sinusoidal's formula or zeros; [0, D] at the training length), parameters -> logits [B, T, V] and
  the attention weights of every layer stacked [N, B, H, T, T]: the page's attention maps and
  held-out accuracy at 8, and its second held-out accuracy at the test length. A test length N
  (16 or 32) runs at T = 32: the page masks every key at N and beyond, so the first N queries see
  exactly a sequence of N (``long_feeds``; tests/site/test_playground_graphs.py checks 8, 16 and 32
  against PyTorch's forward). Learned positions have no test length: no row past 8. (This was two
  graphs, one at 8 and one at 32; one graph whose length is an input halves the forward's export,
  10 to 15% of a set's export (measured): the saving that pays for RMSNorm's and grouped-query
  attention's sets.)

Five of the step's operations are traced as other operators computing the same numbers
(``page_decompositions``): onnxruntime-web's own kernels for them run several times slower per element
than its plain elementwise ones (benchmark 7's operator rates).

The exporter's per-node metadata (the FX node, stack trace and name scopes of each operator, 80% of
a step graph's bytes) is dropped: onnxruntime does not read it and the page downloads the files.

The table kinds of positions (learned, sinusoidal, none) are inputs, not graphs: the position table is
a parameter in every configuration (``train_pos`` = 0 keeps it fixed). RoPE and ALiBi, computed inside
attention, need graphs of their own (key ``L1-H2-D32-rope``). They are exported at width 32 only
(``IN_ATTENTION_SIZES``: 1 or 2 layers, 1, 2 or 4 heads: 12 graph sets), not at all 18 sizes (36):
one set took 70 to 175 s of a core on the shared 2-core build machine (L2-H4-D32, and L1-H2-D32
with its RoPE and ALiBi sets, measured), the 18 sets with a table are already the longest step of a
cold build before its chapters, and 36 more would triple it where 12 add two thirds; and the
question these settings ask (what positions do past the training length) turns on layers and heads,
not width (chapter 18 measures it at width 32). The page offers what is exported and says why the
rest is not (web/src/figures/playground.js ``notOffered``). First use downloads one set: 0.34 MB for
L1-H2-D32-alibi, 0.42 MB with the training worker; 0.61 MB for L2-H4-D32-rope-rmsnorm-kv2. The test lengths offered are 16 and 32
(``TEST_LENGTHS``), run by the probe. The task, mask, learning rate, batch size and seed are inputs too.

RMSNorm and grouped-query attention (chapter 17's decoder) change the layers, so they too need graphs
of their own (keys ``L2-H4-D32-rmsnorm``, ``L2-H4-D32-kv2``, ``L2-H4-D32-rope-rmsnorm-kv2``). They are
exported at one size, ``MODERN_SIZE``: 2 layers, 4 query heads, width 32, the shape of the book's
small Llama (``lib.llama.LlamaConfig.small``: 2 layers, 4 query heads, 2 key/value heads), as three
sets (``MODERN``): RMSNorm alone and 2 key/value heads alone, each with a position table (learned,
sinusoidal, none: one change from the Transformer's layer, L2-H4-D32), and both with RoPE, chapter
17's layer (its three changes from L2-H4-D32-rope). Every combination (2 norms x 1-3 key/value heads x
3 kinds of positions x 18 or 6 sizes) would be about 70 sets more, and even both kinds of positions
for each of the three (6 sets) would have made the build longer than before: the saving above (one
probe) pays for 3 sets of this size (measured: a set's export 10 to 15% shorter; issue 32).

OUT/playground/manifest.json lists the files, the parameters' names and shapes, and how the
page draws the initial weights (``lib.playground.init_plan``). A graph whose inputs did not change
(the hash of lib's playground, transformer, attention and positional code, this file, and the size)
is not exported again. The sizes are exported in ``--jobs`` processes at once (default: one per core,
each on one torch thread): the exports are independent, and on the build's 2 cores this halves the
longest step of a cold `make book` before its chapters.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import hashlib
import json
import math
import multiprocessing
import os
import sys
import tarfile
import time
import warnings
from pathlib import Path

import onnx
import onnxscript
import torch
from onnx import TensorProto, helper
from torch._decomp import decompositions
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import statically_known_true

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib import playground as pg  # noqa: E402
from lib._validate import check_int  # noqa: E402
from lib.positional import sinusoidal_encoding  # noqa: E402

CONFIGS = [(n, h, d) for n in (1, 2) for h in (1, 2, 4) for d in (16, 32, 64)]
IN_ATTENTION_SIZES = [(n, h, 32) for n in (1, 2) for h in (1, 2, 4)]  # rope and alibi (docstring)
MODERN_SIZE = (2, 4, 32)  # RMSNorm and grouped-query attention: chapter 17's small Llama's shape
# (norm, key/value heads, positions) at that size: "learned" stands for every table kind
MODERN = [("rmsnorm", 4, "learned"), ("layernorm", 2, "learned"), ("rmsnorm", 2, "rope")]
# every graph set, (layers, heads, width, positions, norm, key/value heads): the table kinds at every
# size, RoPE and ALiBi at width 32, then RMSNorm and grouped-query attention at MODERN_SIZE
JOBS = (
    [(*c, "learned", "layernorm", c[1]) for c in CONFIGS]
    + [(*c, kind, "layernorm", c[1]) for kind in pg.IN_ATTENTION for c in IN_ATTENTION_SIZES]
    + [(*MODERN_SIZE, kind, norm, kv) for norm, kv, kind in MODERN]
)
TEST_LENGTH = 32  # the long probe's length: the longest test length offered
TEST_LENGTHS = (16, 32)  # the test lengths the page offers beyond the training length
SOURCES = [
    "lib/playground.py",
    "lib/transformer.py",
    "lib/attention.py",
    "lib/positional.py",
    "lib/rope.py",
    "lib/alibi.py",
    "tools/export_playground.py",
]
RMSNORM_SOURCES = ["lib/llama.py"]  # RMSNorm's code: in the hash of the sets that use it only
OPSET = 18
GRAPHS = ("step", "steps", "probe")  # a set's graphs, each a file (its name in the manifest entry)
# The graph sets, committed (a few hundred kB): a fresh clone's build extracts each set whose source
# hash is current rather than spend 20 minutes of a 2-core machine exporting all of them (every
# set is still checked against PyTorch by tests/site/test_playground_graphs.py, and
# tests/test_playground.py exports sets itself). After a change to their code, `make
# playground-graphs` exports the changed sets and writes the archive again; tests/test_playground.py
# fails while the archive is behind the code.
ARCHIVE = ROOT / "tools" / "playground-graphs.tar.xz"
UNROLL = 8  # K, training steps per run of the ``steps`` graph (benchmarks/playground.py measured 4, 8 and 16)


def full_job(job: tuple) -> tuple[int, int, int, str, str, int]:
    """(layers, heads, width[, positions[, norm[, key/value heads]]]) with the defaults filled in:
    a position table ("learned" stands for every table kind), LayerNorm, as many key/value heads as
    heads."""
    n, h, d, positional, norm, kv = (*job, "learned", "layernorm", None)[:6]
    return n, h, d, positional, norm, h if kv is None else kv


def key(
    n_layers: int,
    n_heads: int,
    d_model: int,
    positional: str = "learned",
    norm: str = "layernorm",
    kv_heads: int | None = None,
) -> str:
    """The files' and the manifest's name of a graph set: its size, then what differs from the
    Transformer's layer with a position table: "L2-H4-D32", "L2-H4-D32-alibi",
    "L2-H4-D32-rope-rmsnorm-kv2"."""
    name = f"L{n_layers}-H{n_heads}-D{d_model}"
    if positional in pg.IN_ATTENTION:
        name += f"-{positional}"
    if norm != "layernorm":
        name += f"-{norm}"
    if kv_heads not in (None, n_heads):
        name += f"-kv{kv_heads}"
    return name


def parse_key(name: str) -> tuple[int, int, int, str, str, int]:
    """``key``'s inverse: "L2-H4-D32-alibi" -> (2, 4, 32, "alibi", "layernorm", 4)."""
    parts = name.split("-")
    n, h, d = (int(p[1:]) for p in parts[:3])
    rest = parts[3:]
    positional = next((p for p in rest if p in pg.IN_ATTENTION), "learned")
    norm = next((p for p in rest if p in pg.NORMS), "layernorm")
    kv = next((int(p[2:]) for p in rest if p.startswith("kv")), h)
    return n, h, d, positional, norm, kv


def model_for(
    n_layers: int,
    n_heads: int,
    d_model: int,
    positional: str = "learned",
    norm: str = "layernorm",
    kv_heads: int | None = None,
) -> pg.PlaygroundModel:
    """The model whose graphs a set's files hold: every table kind of positions (learned,
    sinusoidal, none) shares one graph, the table being an input; RoPE and ALiBi, computed inside
    attention, each need a graph of their own, and so do RMSNorm and fewer key/value heads."""
    return pg.PlaygroundModel(
        pg.PlaygroundConfig(
            n_layers=n_layers,
            n_heads=n_heads,
            d_model=d_model,
            positional=positional,
            norm=norm,
            n_kv_heads=kv_heads,
        )  # fmt: skip
    )


def step_function(model: pg.PlaygroundModel):
    """The step the graph computes: (x, y, lr, step, train_pos, mask, *params, m, v) ->
    (loss, token_acc, seq_acc, *params, m, v), m and v flat [P]."""

    def step(x, y, lr, t, train_pos, mask, *state):
        *params, m, v = state
        with torch.enable_grad():
            params = tuple(p.requires_grad_(True) for p in params)
            out = pg.train_step(model, params, m, v, t, x, y, lr, train_pos, mask)
        return (out.loss, out.token_accuracy, out.sequence_accuracy, *out.params, out.m, out.v)

    return step


def probe_function(model: pg.PlaygroundModel):
    """The forward pass at any length T >= 8: (x [B, T], mask [T, T], more [T - 8, D], *params) ->
    (logits [B, T, V], attentions [N, B, H, T, T]). ``more`` replaces what ``positions`` appends
    past the table's 8 rows (sinusoidal's formula, or zeros; no rows at T = 8), so that one graph
    serves every table kind; learned positions have no such rows and the page offers them no test
    length."""
    names = [n for n, _ in model.named_parameters()]

    def probe(x, mask, more, *params):
        table = dict(zip(names, params))
        model.positions = lambda L: torch.cat([table["pos"], more])  # [T, D]
        try:
            out = torch.func.functional_call(model, table, (x, mask), {"return_attention": True})
        finally:
            del model.positions
        return out.logits, torch.stack(out.attentions)  # [B, T, V], [N, B, H, T, T]

    return probe


def long_feeds(model: pg.PlaygroundModel, x: torch.Tensor):
    """How the page feeds the probe a test batch x [B, N], 8 < N <= ``TEST_LENGTH``
    (web/src/playground/worker.js): x padded with zeros to [B, T]; the model's mask with every key
    at N and beyond masked, so that the first N queries see a sequence of N; ``more``, the rows past
    the table's 8: sinusoidal's formula for sinusoidal positions, else zeros. -> (x, mask, more).
    At the training length (N = 8) the page feeds x, the mask and ``more`` [0, D] as they are."""
    B, N = x.shape
    T, D = (TEST_LENGTH if N > pg.LENGTH else N), model.config.d_model
    padded = torch.zeros(B, T, dtype=x.dtype)
    padded[:, :N] = x  # [B, T]
    mask = model.mask(T) & (torch.arange(T) < N)  # [T, T]: keys < N only
    if model.config.positional == "sinusoidal":
        more = sinusoidal_encoding(T, D)[pg.LENGTH :]  # [T - 8, D]
    else:
        more = torch.zeros(T - pg.LENGTH, D)
    return padded, mask, more


# Long by its docstring (the benchmark's rates, operator by operator); the code is 40 lines.
def page_decompositions() -> dict:
    """How the trace writes five operations of the step: the same arithmetic, in operators that
    run in onnxruntime-web at about the rate of an Add, where its own kernels are slow (benchmark
    7's operator rates, microseconds on the feed-forward layer's [256, 256] activations in the page:
    LayerNormalization ~520, ReLU's gradient as LessOrEqual and Where ~110, a ReduceSum over rows
    ~90, Relu ~45, against ~20 for an Add or a Mul; written as below: ~160, ~40, ~8 and ~30).
    Measured on the K-step graphs of all 18 sizes in onnxruntime-web (Node, one thread), against
    the plain trace: 0.89-0.98x the time per step at widths 32 and 64, 1.00-1.05x at width 16
    (more operators on small tensors), 0.97x in geometric mean.

    - LayerNorm: mean, centred values, variance and 1 / sqrt as plain operators (the kernel's
      mean and 1 / std are returned too: its gradient reads them);
    - LayerNorm's gradient: PyTorch's own decomposition (torch._decomp), so that its sums over
      rows become products below;
    - ReLU: max(x, 0);
    - ReLU's gradient: the gradient times sign(ReLU's output) (autograd hands the output, >= 0,
      so its sign is the 0 / 1 mask; the model's only threshold_backward is ReLU's, and
      tests/site/test_playground_graphs.py checks every size's graphs against PyTorch's step);
    - a sum over leading axes (the biases' and LayerNorm's gradients: over the batch and the
      positions): a vector of ones times the rows, a matrix product. One vector of ones per number
      of rows, made once per trace, so a fresh table for each trace.
    Any other use of these operations is left as it is (the function answers NotImplemented)."""
    aten = torch.ops.aten
    ones = []  # [1, M] vectors of ones made so far in this trace

    def layer_norm(x, shape, weight, bias, eps):
        if len(shape) != 1 or weight is None or bias is None:
            return NotImplemented
        mean = x.mean(-1, keepdim=True)
        centred = x - mean
        rstd = torch.rsqrt((centred * centred).mean(-1, keepdim=True) + eps)
        return centred * rstd * weight + bias, mean, rstd

    def relu(x):
        return torch.maximum(x, x.new_zeros(()))

    def relu_gradient(grad, out, threshold):
        return grad * torch.sign(out) if threshold == 0 else NotImplemented

    def sum_leading(x, dims, keepdim=False, *, dtype=None):
        k = len(dims or ())
        if (
            dtype is not None
            or not 0 < k < x.dim()
            or sorted(d % x.dim() for d in dims) != list(range(k))
        ):
            return NotImplemented
        rows = x.reshape(-1, math.prod(x.shape[k:]))  # [M, R]: the summed axes flattened into rows
        one = next((o for o in ones if statically_known_true(o.shape[1] == rows.shape[0])), None)
        if one is None:
            one = torch.ones_like(rows[:, :1]).t()  # [1, M]
            ones.append(one)
        total = one @ rows  # [1, R]
        return total.view([1] * k + list(x.shape[k:]) if keepdim else list(x.shape[k:]))

    return {
        aten.native_layer_norm.default: layer_norm,
        aten.native_layer_norm_backward.default: decompositions.native_layer_norm_backward,
        aten.relu.default: relu,
        aten.threshold_backward.default: relu_gradient,
        aten.sum.dim_IntList: sum_leading,
    }  # fmt: skip


def example_inputs(model: pg.PlaygroundModel, batch: int = 4):
    x, y = pg.make_batch("reverse", batch, pg.Mulberry32(0))
    params = [p.detach().clone() for p in model.parameters()]
    P = pg.flat_size(model)
    scalars = [torch.tensor(3e-3), torch.tensor(1.0), torch.tensor(1.0)]
    return (x, y, *scalars, model.mask(), *params, torch.zeros(P), torch.zeros(P))


def io_names(model: pg.PlaygroundModel):
    params = [f"p{i}" for i in range(len(list(model.parameters())))]
    state = [*params, "m", "v"]
    step_in = ["x", "y", "lr", "step", "train_pos", "mask", *state]
    step_out = ["loss", "token_acc", "seq_acc", *[f"new_{s}" for s in state]]
    probe_in = ["x", "mask", "more", *params]
    return step_in, step_out, probe_in, ["logits", "attentions"]


def long_inputs(model: pg.PlaygroundModel, batch: int = 4, length: int = TEST_LENGTH - 3):
    """Example inputs of the probe: x [B, T], mask [T, T], more [T - 8, D], parameters. The example's
    T (29) equals no size of the model: symbolic tracing gives equal sizes one symbol, and at T = 32
    a width-32 one-head model's probe came out fixed at T = 32 (the page's length 8 refused)."""
    x, _ = pg.make_batch("reverse", batch, pg.Mulberry32(0), length)
    more = torch.zeros(length - pg.LENGTH, model.config.d_model)
    return (x, model.mask(length), more, *[p.detach().clone() for p in model.parameters()])


def strip(path: Path) -> onnx.ModelProto:
    """Drop the exporter's per-node metadata (debugging aids onnxruntime ignores) and rewrite the file."""
    model = onnx.load(path)
    for node in model.graph.node:
        del node.metadata_props[:]
    onnx.save(model, path)
    return model


def unroll(step: onnx.ModelProto, k: int) -> onnx.ModelProto:
    """``step``'s graph (``export_one``'s, inputs and outputs named by ``io_names``) repeated k times
    into one graph: x and y become [k, B, L], step k (0-based) reads x[k], y[k], ``step`` + k and the
    state step k - 1 wrote; the outputs are the k losses and accuracies, stacked, and the last state."""
    check_int(k, "k", 1)
    g = step.graph
    inputs = [i.name for i in g.input]
    outputs = [o.name for o in g.output]
    state = inputs[6:]
    if inputs[:6] != ["x", "y", "lr", "step", "train_pos", "mask"] or outputs[3:] != [
        f"new_{s}" for s in state
    ]:
        raise ValueError(
            f"step: expected the graph export_one writes, got inputs {inputs[:6]} and outputs {outputs[:4]}"
        )
    nodes = []
    for i in range(k):
        nodes += _unrolled_step(g, i, state)
    # the index and offset constants first (a graph lists every node after the ones it reads)
    nodes.sort(key=lambda n: 0 if n.op_type == "Constant" else 1)
    one = helper.make_tensor("unroll/one", TensorProto.INT64, [1], [1])
    nodes.insert(0, helper.make_node("Constant", [], [one.name], value=one))
    for out in ("loss", "token_acc", "seq_acc"):  # 0-d each step -> [k]
        nodes += [
            helper.make_node("Reshape", [f"unroll/{i}/{out}", one.name], [f"unroll/{i}/{out}/1"])
            for i in range(k)
        ]
        nodes.append(
            helper.make_node("Concat", [f"unroll/{i}/{out}/1" for i in range(k)], [out], axis=0)
        )
    nodes += [
        helper.make_node("Identity", [f"unroll/{k - 1}/new_{s}"], [f"new_{s}"]) for s in state
    ]
    new_inputs, new_outputs = _unrolled_io(g, k)
    graph = helper.make_graph(nodes, f"{g.name}_x{k}", new_inputs, new_outputs, list(g.initializer))
    model = helper.make_model(
        graph, opset_imports=list(step.opset_import), ir_version=step.ir_version
    )
    onnx.checker.check_model(model)
    return model


def _unrolled_step(g: onnx.GraphProto, i: int, state: list[str]) -> list[onnx.NodeProto]:
    """Step i's nodes: x[i], y[i] and step + i, then a copy of every node of ``g`` whose values are
    prefixed "unroll/{i}/", but for the shared ones (lr, train_pos, mask, the weights) and the state,
    which step i reads from step i - 1 (step 0 from the graph's inputs)."""
    shared = {"lr", "train_pos", "mask", *(t.name for t in g.initializer)}
    index = helper.make_tensor(f"unroll/{i}/index", TensorProto.INT64, [], [i])
    offset = helper.make_tensor(f"unroll/{i}/offset", TensorProto.FLOAT, [], [float(i)])
    nodes = [
        helper.make_node("Gather", ["x", index.name], [f"unroll/{i}/x"], axis=0),
        helper.make_node("Gather", ["y", index.name], [f"unroll/{i}/y"], axis=0),
        helper.make_node("Add", ["step", offset.name], [f"unroll/{i}/step"]),
    ]
    nodes += [helper.make_node("Constant", [], [c.name], value=c) for c in (index, offset)]
    rename = {
        "x": f"unroll/{i}/x",
        "y": f"unroll/{i}/y",
        "step": f"unroll/{i}/step",
        **({s: s for s in state} if i == 0 else {s: f"unroll/{i - 1}/new_{s}" for s in state}),
    }
    prefix = f"unroll/{i}/"  # every other value is step i's own
    for node in g.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.name = prefix + node.name
        copy.input[:] = [
            v if not v or v in shared else rename.get(v, prefix + v) for v in node.input
        ]
        copy.output[:] = [rename.get(v, prefix + v) for v in node.output]
        nodes.append(copy)
    return nodes


def _unrolled_io(
    g: onnx.GraphProto, k: int
) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
    """``g``'s inputs and outputs for the unrolled graph: x and y [B, L] -> [k, B, L]; the loss and
    the accuracies [] -> [k]; the others as they are."""
    new_inputs = []
    for inp in g.input:
        copy = onnx.ValueInfoProto()
        copy.CopyFrom(inp)
        if inp.name in ("x", "y"):  # [B, L] -> [k, B, L]
            dims = copy.type.tensor_type.shape.dim
            old = [onnx.TensorShapeProto.Dimension() for _ in dims]
            for o, d in zip(old, dims):
                o.CopyFrom(d)
            del dims[:]
            dims.extend([onnx.TensorShapeProto.Dimension(dim_value=k), *old])
        new_inputs.append(copy)
    new_outputs = []
    for out in g.output:
        copy = onnx.ValueInfoProto()
        copy.CopyFrom(out)
        if out.name in ("loss", "token_acc", "seq_acc"):  # [] -> [k]
            copy.type.tensor_type.shape.dim.extend([onnx.TensorShapeProto.Dimension(dim_value=k)])
        new_outputs.append(copy)
    return new_inputs, new_outputs


# Long by design: one step after another of the build, in the order they run.
def export_one(
    n_layers: int,
    n_heads: int,
    d_model: int,
    folder: Path,
    unroll_k: int = UNROLL,
    positional: str = "learned",
    norm: str = "layernorm",
    kv_heads: int | None = None,
) -> dict:
    model = model_for(n_layers, n_heads, d_model, positional, norm, kv_heads)
    step_in, step_out, probe_in, probe_out = io_names(model)
    args = example_inputs(model)
    batch = torch.export.Dim("batch", min=1, max=4096)
    # the probe's length T = 8 + rows (rows: the position vectors past the table, ``more``); the
    # page runs it at 8 (no rows) and 32
    rows = torch.export.Dim("rows", min=1, max=pg.MAX_LENGTH - pg.LENGTH)
    name = key(n_layers, n_heads, d_model, positional, norm, kv_heads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = make_fx(
            step_function(model), tracing_mode="symbolic", decomposition_table=page_decompositions()
        )(*args)
        dyn = [{0: batch}, {0: batch}] + [None] * (len(args) - 2)
        torch.onnx.export(
            graph, args, folder / f"{name}-step.onnx", dynamo=True, optimize=True, opset_version=OPSET,
            input_names=step_in, output_names=step_out, dynamic_shapes=dyn, verbose=False, external_data=False,
        )  # fmt: skip
        probe_args = long_inputs(model)
        graph = make_fx(
            probe_function(model),
            tracing_mode="symbolic",
            decomposition_table=page_decompositions(),
        )(*probe_args)
        length = rows + pg.LENGTH
        torch.onnx.export(
            graph, probe_args, folder / f"{name}-probe.onnx", dynamo=True, optimize=True, opset_version=OPSET,
            input_names=probe_in, output_names=probe_out, verbose=False, external_data=False,
            dynamic_shapes=[{0: batch, 1: length}, {0: length, 1: length}, {0: rows}]
            + [None] * (len(probe_args) - 3),
        )  # fmt: skip
    strip(folder / f"{name}-probe.onnx")
    onnx.save(
        unroll(strip(folder / f"{name}-step.onnx"), unroll_k),
        folder / f"{name}-steps{unroll_k}.onnx",
    )
    files = {
        "step": f"{name}-step.onnx",
        "steps": f"{name}-steps{unroll_k}.onnx",
        "probe": f"{name}-probe.onnx",
    }
    c = model.config
    return {
        **files,
        "unroll": unroll_k,
        "positional": positional if positional in pg.IN_ATTENTION else "table",
        "norm": c.norm,
        "kv_heads": c.n_kv_heads,
        "test_length": TEST_LENGTH,
        "bytes": sum((folder / f).stat().st_size for f in files.values()),
        "params": [
            {"name": n, "shape": list(p.shape), "init": kind, "bound": bound}
            for n, p, kind, bound in pg.init_plan(model)
        ],
    }


def code_of(path: Path) -> str:
    """A source file's code without its comments and docstrings (its syntax tree, dumped): what the
    graphs are traced from. A change to the prose of lib's docstrings exports nothing again."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def source_hash(job: tuple, unroll_k: int = UNROLL) -> str:
    """The hash of what a graph set's files depend on: the versions of Python, torch, onnx and
    onnxscript, the set, K and the code of ``SOURCES`` (``code_of``)."""
    n, h, d, positional, norm, kv = full_job(job)
    name = key(n, h, d, positional, norm, kv)
    versions = f"python {sys.version_info[:2]} torch {torch.__version__} onnx {onnx.__version__} "
    versions += f"onnxscript {onnxscript.__version__}"
    digest = hashlib.sha256(f"{versions} {name} K={unroll_k}".encode())
    for s in SOURCES + (RMSNORM_SOURCES if norm == "rmsnorm" else []):
        digest.update(code_of(ROOT / s).encode())
    return digest.hexdigest()[:16]


def from_archive(folder: Path, wanted: dict, archive: Path = ARCHIVE) -> dict:
    """The sets of ``wanted`` ({name: source hash}) that ``archive`` holds with that hash, their
    files extracted into ``folder``: {name: manifest entry}."""
    if not archive.is_file():
        return {}
    with tarfile.open(archive, "r:xz") as tar:
        held = json.load(tar.extractfile("manifest.json"))["models"]
        found = {n: e for n, e in held.items() if n in wanted and e.get("hash") == wanted[n]}
        for entry in found.values():
            for graph in GRAPHS:
                tar.extract(tar.getmember(entry[graph]), folder, filter="data")
    return found


def pack(folder: Path, archive: Path = ARCHIVE) -> int:
    """Write every set of ``folder``'s manifest and the manifest into ``archive`` (xz, the members
    in name order, without times or owners: the same files give the same archive). Its size."""
    models = json.loads((folder / "manifest.json").read_text())["models"]
    names = ["manifest.json", *sorted(e[g] for e in models.values() for g in GRAPHS)]
    with tarfile.open(archive, "w:xz", preset=9) as tar:
        for name in names:
            info = tar.gettarinfo(folder / name, arcname=name)
            info.mtime, info.mode = 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(folder / name, "rb") as f:
                tar.addfile(info, f)
    return archive.stat().st_size


def _export_timed(job: tuple, folder: Path, unroll_k: int) -> tuple[dict, float]:
    """export_one in a worker process (one torch thread), with its wall time."""
    torch.set_num_threads(1)
    n, h, d, positional, norm, kv = full_job(job)
    start = time.perf_counter()
    entry = export_one(n, h, d, folder, unroll_k, positional, norm, kv)
    return entry, time.perf_counter() - start


def export_all(
    out: Path,
    jobs_=JOBS,
    log=print,
    unroll_k: int = UNROLL,
    jobs: int = 1,
    archive: Path | None = None,
) -> dict:
    """Export the graph sets ``jobs_`` ((layers, heads, width[, positional[, norm[, kv heads]]]),
    ``full_job``) into OUT/playground, in ``jobs`` processes, and write the manifest of every set.
    A set already there with its current source hash is kept; one that ``archive`` holds with that
    hash is extracted from it (``from_archive``) rather than exported."""
    folder = out / "playground"
    folder.mkdir(parents=True, exist_ok=True)
    old_path = folder / "manifest.json"
    old = json.loads(old_path.read_text())["models"] if old_path.exists() else {}
    names = [key(*j) for j in JOBS]
    models = {k: v for k, v in old.items() if k in names}
    todo = {}
    for job in jobs_:
        job = full_job(job)
        name, digest = key(*job), source_hash(job, unroll_k)
        entry = old.get(name)
        if (
            entry
            and entry.get("hash") == digest
            and all(g in entry and (folder / entry[g]).exists() for g in GRAPHS)
        ):
            models[name] = entry
        else:
            todo[name] = (job, digest)
    if archive is not None and todo:
        found = from_archive(folder, {name: digest for name, (_, digest) in todo.items()}, archive)
        for name, entry in found.items():
            models[name] = entry
            del todo[name]
        if found:
            where = archive.relative_to(ROOT) if archive.is_relative_to(ROOT) else archive
            log(f"playground: {len(found)} graph sets from {where}")

    def done(name, result):
        entry, seconds = result
        models[name] = {**entry, "hash": todo[name][1]}
        log(f"playground {name}: {entry['bytes'] / 1e3:.0f} kB in {seconds:.0f} s")

    if jobs <= 1 or len(todo) <= 1:
        for name, (job, _) in todo.items():
            done(name, _export_timed(job, folder, unroll_k))
    else:  # fresh interpreters (spawn): no torch state shared with this process
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            futures = {
                pool.submit(_export_timed, job, folder, unroll_k): name
                for name, (job, _) in todo.items()
            }
            for future in concurrent.futures.as_completed(futures):
                done(futures[future], future.result())
    models = {k: models[k] for k in names if k in models}  # the sizes' order
    manifest = _manifest(models)
    old_path.write_text(json.dumps(manifest, indent=1))
    return manifest


def _manifest(models: dict) -> dict:
    """The manifest the page reads: the settings every graph set shares, and ``models``, one entry
    a set (its files, size and source hash)."""
    return {
        # 3: one probe for every length (2: a probe at 8 and one at 32; Adam's m and v one flat
        # input each since 2)
        "format": 3,
        "opset": OPSET,
        "length": pg.LENGTH,
        "vocab": pg.VOCAB,
        "none": pg.NONE,
        "tasks": list(pg.TASKS),
        # the positions the graphs compute: a table added to the embeddings (an input), or
        # inside attention (graphs of their own, at the sizes in_attention lists)
        "positional": list(pg.POSITIONAL),
        "in_attention": {
            "kinds": list(pg.IN_ATTENTION),
            "sizes": [key(*c) for c in IN_ATTENTION_SIZES],
        },
        # RMSNorm and grouped-query attention: at one size, each with the positions listed
        "modern": {"size": key(*MODERN_SIZE), "sets": [list(m) for m in MODERN]},
        "norms": list(pg.NORMS),
        "test": {"length": TEST_LENGTH, "lengths": list(TEST_LENGTHS)},
        "held_out": {"salt": pg.HELD_OUT_SALT, "size": pg.HELD_OUT_SIZE},
        "adam": {"betas": list(pg.BETAS), "eps": pg.EPS},
        "sizes": {"layers": [1, 2], "heads": [1, 2, 4], "width": [16, 32, 64]},
        "models": models,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "live")
    parser.add_argument(
        "--only", help="one set, e.g. L1-H2-D32, L2-H4-D32-alibi or L2-H4-D32-rope-rmsnorm-kv2"
    )
    parser.add_argument(
        "--unroll",
        type=int,
        default=UNROLL,
        help=f"K, steps per run of the steps graph (default {UNROLL})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="sizes exported at once, in that many processes (default: one per core)",
    )
    parser.add_argument(
        "--no-archive",
        action="store_true",
        help=f"export every set whose files are not in OUT, none from {ARCHIVE.name}",
    )
    parser.add_argument(
        "--pack", action="store_true", help=f"then write every set into {ARCHIVE.name} (to commit)"
    )
    args = parser.parse_args(argv)
    if args.pack and (args.only or args.unroll != UNROLL):
        parser.error("--pack writes every set at the default K: no --only or --unroll with it")
    torch.set_num_threads(1)
    todo = [j for j in JOBS if args.only in (None, key(*j))]
    start = time.perf_counter()
    archive = None if args.no_archive or args.unroll != UNROLL else ARCHIVE
    manifest = export_all(args.out, todo, unroll_k=args.unroll, jobs=args.jobs, archive=archive)
    total = sum(m["bytes"] for m in manifest["models"].values())
    print(
        f"playground: {len(manifest['models'])} graph sets, {total / 1e6:.1f} MB in all "
        f"({time.perf_counter() - start:.0f} s)"
    )
    if args.pack:
        size = pack(args.out / "playground")
        print(f"playground: wrote {ARCHIVE.relative_to(ROOT)} ({size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
