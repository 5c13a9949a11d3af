"""Merged projections of a rank-2 input (issue 16 points 1 and 7): three biased projections
(MatMul then Add of a bias vector) of one [tokens, features] input, as exporters write a linear
layer outside a batch, become one product on concatenated weights and biases through the copies
of substitutions/linear_bias_n5.rules lifted to ranks 2..4 (the rules themselves are stated for
a rank-3 input, and the matcher binds a rule's variables at their example ranks only); the
optimized model agrees with ONNX Runtime on the original. Close but false variants keep what
cannot merge: a projection of another input keeps its own product, and biases along the rows
(a [tokens, 1] column, not a vector along the last axis) are not merged by the biased rules.
The search uses linear_bias_n5.rules alone: with every shipped file, each MatMul and Add fuse
into a Gemm (hw_fuse_matmul_bias_add), which costs as much as the merge at these sizes on the
H100's analytic model (every operator at its 2.5 us floor) and which no rule merges."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import tso
from conftest import H100, ROOT

RNG = np.random.default_rng(1625)
TOKENS, FEATURES, OUT = 16, 32, 24
RULES = [str(ROOT / "substitutions" / "linear_bias_n5.rules")]


def weight(name, shape):
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.5).astype(np.float32), name)


def projections_model(sources, bias_shape=(OUT,)):
    """Projection k of input sources[k]: MatMul(w_k) then Add(b_k)."""
    nodes, inits = [], []
    for k, x in enumerate(sources):
        inits += [weight(f"w{k}", (FEATURES, OUT)), weight(f"b{k}", bias_shape)]
        nodes.append(helper.make_node("MatMul", [x, f"w{k}"], [f"m{k}"], name=f"matmul{k}"))
        nodes.append(helper.make_node("Add", [f"m{k}", f"b{k}"], [f"y{k}"], name=f"add{k}"))
    graph = helper.make_graph(
        nodes, "projections",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [TOKENS, FEATURES])
         for x in sorted(set(sources))],
        [helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, [TOKENS, OUT])
         for k in range(len(sources))],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    return model


def optimize(model):
    optimized, report = tso.optimize(model, device=H100, rules=RULES, budget=200)
    onnx.checker.check_model(optimized, full_check=True)
    return optimized, report


def applied(report):
    return {r["rule"] for r in report["rules_applied"]}


def products(model):
    return sum(n.op_type in ("MatMul", "Gemm") for n in model.graph.node)


def op_types(model):
    return [n.op_type for n in model.graph.node]


def assert_same_function(original, optimized):
    feeds = {i.name: RNG.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in original.graph.input}

    def run(m):
        session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds)

    for e, g in zip(run(original), run(optimized)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def merged_by_lifted_copies(report):
    """Rules applied, all of them copies lifted to rank 2 (the originals bind rank 3 only)."""
    rules = applied(report)
    return bool(rules) and all(r.startswith("linear_bias5_") and "_lifted" in r for r in rules)


def test_three_biased_projections_of_a_matrix_merge_into_one_product():
    model = projections_model(["x", "x", "x"])
    optimized, report = optimize(model)
    assert products(optimized) == 1, (op_types(optimized), applied(report))
    assert merged_by_lifted_copies(report), applied(report)
    assert_same_function(model, optimized)


def test_a_projection_of_another_input_keeps_its_product():
    model = projections_model(["x", "x", "z"])
    optimized, report = optimize(model)
    assert products(optimized) == 2, (op_types(optimized), applied(report))
    assert_same_function(model, optimized)


def test_biases_along_the_rows_are_not_merged_as_vectors():
    model = projections_model(["x", "x", "x"], bias_shape=(TOKENS, 1))
    optimized, report = optimize(model)
    assert not any(r.startswith("linear_bias5_") for r in applied(report)), applied(report)
    assert op_types(optimized).count("Add") == 3, (op_types(optimized), applied(report))
    assert_same_function(model, optimized)
