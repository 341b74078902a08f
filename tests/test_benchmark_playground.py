"""benchmarks/playground.py's floor (the step graph's matrix products alone, in a graph of their own) and
operator rates (chains of one operator, the same in onnxruntime and PyTorch)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from benchmarks.playground import (
    OPERATORS,
    floor_finding,
    operator_graph,
    operator_torch,
    operators_finding,
    products_graph,
)
from tests.tolerance import assert_float_close


def a_step_like_graph() -> onnx.ModelProto:
    """x [B, 8, 4] (B free) through a batched MatMul, a Gemm with transposed operands and bias, an Add."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),  # [B, 8, 4] @ [4, 6] -> [B, 8, 6]
        helper.make_node("Reshape", ["h", "flat"], ["h2"]),  # [8B, 6]
        helper.make_node(
            "Gemm", ["h2", "u", "c"], ["g"], transA=1, transB=1
        ),  # [6, 8B]^T.. -> [6, 5]
        helper.make_node("Add", ["g", "c"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "step",
        [
            helper.make_tensor_value_info("x", f, ["batch", 8, 4]),
            helper.make_tensor_value_info("w", f, [4, 6]),
            helper.make_tensor_value_info("u", f, [5, 24]),
            helper.make_tensor_value_info("c", f, [5]),
        ],
        [helper.make_tensor_value_info("out", f, None)],
        [helper.make_tensor("flat", TensorProto.INT64, [2], [-1, 6])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def test_products_graph_keeps_each_product_with_its_shapes_and_counts_its_flops():
    import onnxruntime as ort

    model, shapes, flops = products_graph(a_step_like_graph(), batch=3)
    assert [n.op_type for n in model.graph.node if n.op_type in ("MatMul", "Gemm")] == [
        "MatMul",
        "Gemm",
    ]
    # one input per distinct operand shape
    assert shapes == {"x0": [3, 8, 4], "x1": [4, 6], "x2": [24, 6], "x3": [5, 24]}
    # MatMul: 3 x (8 x 4 x 6); Gemm: h2^T [6, 24] @ u^T [24, 5]
    assert flops == 2 * 3 * 8 * 4 * 6 + 2 * 6 * 24 * 5
    rng = np.random.default_rng(0)
    feeds = {k: rng.standard_normal(v).astype(np.float32) for k, v in shapes.items()}
    (first,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, feeds)
    # the output: the first element of each product, computed with the operands' transposes
    want = [(feeds["x0"] @ feeds["x1"]).flat[0], (feeds["x2"].T @ feeds["x3"].T).flat[0]]
    # onnxruntime's kernels against numpy's: products over <= 24, of the summed terms' size
    sizes = [
        (abs(feeds["x0"]) @ abs(feeds["x1"])).flat[0],
        (abs(feeds["x2"].T) @ abs(feeds["x3"].T)).flat[0],
    ]
    assert_float_close(first, want, terms=24, scale=max(sizes))


def test_a_product_without_a_static_shape_is_refused():
    step = a_step_like_graph()
    step.graph.node[1].input[1] = "shape"  # the Reshape's target now comes in at run time
    step.graph.input.append(helper.make_tensor_value_info("shape", TensorProto.INT64, [2]))
    with pytest.raises(ValueError, match="no static shape for Gemm"):
        products_graph(step, batch=3)


def test_floor_finding_names_the_sizes_bounded_by_the_products():
    row = lambda case, page, floor, torch: dict(  # noqa: E731
        case=case, page=page, floor=floor, floor_native=floor / 5, flops=floor * 2e7, torch=torch
    )
    rows = [
        row("L1-H1-D16", 2.0, 0.5, 4.0),  # the rest: 1.5 ms
        row("L1-H1-D64", 8.0, 3.0, 4.3),  # 3.0 + 1.5 >= 4.3: bounded
        row("L2-H1-D64", 12.0, 6.0, 11.0),  # slower, but 6.0 + 0 (no D16 row) < 11.0: not bounded
    ]
    text = floor_finding(rows)
    assert "L1-H1-D64 3.00 ms (20 GFLOP/s; natively 0.60 ms, 100 GFLOP/s)" in text
    assert "L1-H1-D64: products 3.00 ms + the rest 5.00 ms (at width 16 1.50 ms)" in text
    assert "At L1-H1-D64 the page's products alone" in text and "At L1-H1-D64, L2" not in text
    rows[1]["torch"] = 4.6  # 3.0 + 1.5 < 4.6
    assert "the page's products alone plus" not in floor_finding(rows)
    rows[1]["torch"] = rows[2]["torch"] = 20.0  # faster everywhere
    assert "Where the page is slower" not in floor_finding(rows)


@pytest.mark.parametrize("op", list(OPERATORS))
def test_operator_chain_computes_the_same_in_onnxruntime_and_pytorch(op):
    """Benchmark 7's operator rates compare like with like: each chain, as an ONNX graph and in
    PyTorch eager, gives the same numbers (the float32 rounding of a different summation order at
    most) and has the operators it is named for, n of them."""
    import onnxruntime as ort

    graph = operator_graph(op, (4, 6), n=3)
    kinds = [node.op_type for node in graph.graph.node]
    assert kinds.count(OPERATORS[op].counted) == 3
    x = np.sin(np.arange(24)).astype(np.float32).reshape(4, 6)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        graph.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (got,) = session.run(None, {"x": x})
    want = operator_torch(op, torch.from_numpy(x), n=3)().numpy()
    rows = op.startswith("ReduceSum over rows")
    shape = (
        (6, 4) if op == "Transpose" else (1, 6) if rows else (4, 1) if "last axis" in op else (4, 6)
    )
    assert got.shape == want.shape == shape
    # onnxruntime's kernels against PyTorch's, 3 links of the chain: a LayerNorm over 6 is the mean 6,
    # the variance 6 and 5 ops; a softmax over 6 its sum 6, exp and division; a sum over <= 6 rows or
    # columns 6 (of terms of size <= 1: x = sin); an elementwise operator one rounding
    if "LayerNorm" in op:
        terms, scale = 3 * (6 + 6 + 5), None
    elif op == "Softmax":
        terms, scale = 3 * (6 + 2), 1.0
    elif op.startswith("ReduceSum"):
        terms, scale = 3 * 6, 3 * 6.0
    else:
        terms, scale = 3, None
    assert_float_close(got, want, terms=terms, scale=scale)


def test_operators_finding_reports_the_rates_and_the_rest_per_operator():
    rates = {"Add": [20.0, 14.0, 10.0], "Relu": [45.0, 7.0, 9.0]}
    rows = [
        dict(case="L1-H1-D64", page=8.0, floor=3.0, torch=5.0, operators=295, products=27),
        dict(case="L1-H1-D16", page=2.0, floor=0.5, torch=4.0, operators=295, products=27),
    ]
    text = operators_finding(rates, rows)
    assert (
        "Add 20.0 / 14.0 / 10.0 (page / PyTorch 2.0); Relu 45.0 / 7.0 / 9.0 (page / PyTorch 5.0)"
        in text
    )
    # 5.0 ms over 268 operators: 19 microseconds each, where 2.0 ms (5.0 - 3.0), 7.5 each, would do;
    # the faster size is not listed
    assert (
        "L1-H1-D64: 268 operators besides its 27 matrix products take 5.00 ms in the page, 19 microseconds "
        "each on average, where 2.00 ms, 7.5 each, would make it faster" in text
    )
    assert "L1-H1-D16:" not in text
    rows[0]["floor"] = 6.0  # the products alone slower than PyTorch's step
    assert "no time at all would" in operators_finding(rates, rows)
