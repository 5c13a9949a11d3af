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

import functools

import numpy as np
from onnx import helper

import onnx_models
from conftest import ROOT
from onnx_models import applied, make_model, op_types, random_feeds

RNG = np.random.default_rng(1625)
TOKENS, FEATURES, OUT = 16, 32, 24
RULES = [str(ROOT / "substitutions" / "linear_bias_n5.rules")]
weight = functools.partial(onnx_models.weight, RNG, scale=0.5)
optimize = functools.partial(onnx_models.optimize, rules=RULES, budget=200)
assert_same_function = functools.partial(onnx_models.assert_same_function, rtol=1e-4, atol=1e-4)


def projections_model(sources, bias_shape=(OUT,)):
    """Projection k of input sources[k]: MatMul(w_k) then Add(b_k)."""
    nodes, inits = [], []
    for k, x in enumerate(sources):
        inits += [weight(f"w{k}", (FEATURES, OUT)), weight(f"b{k}", bias_shape)]
        nodes.append(helper.make_node("MatMul", [x, f"w{k}"], [f"m{k}"], name=f"matmul{k}"))
        nodes.append(helper.make_node("Add", [f"m{k}", f"b{k}"], [f"y{k}"], name=f"add{k}"))
    return make_model("projections", nodes,
                      [(x, [TOKENS, FEATURES]) for x in sorted(set(sources))],
                      [(f"y{k}", [TOKENS, OUT]) for k in range(len(sources))], inits)


def products(model):
    return sum(n.op_type in ("MatMul", "Gemm") for n in model.graph.node)


def merged_by_lifted_copies(report):
    """Rules applied, all of them copies lifted to rank 2 (the originals bind rank 3 only)."""
    rules = applied(report)
    return bool(rules) and all(r.startswith("linear_bias5_") and "_lifted" in r for r in rules)


def test_three_biased_projections_of_a_matrix_merge_into_one_product():
    model = projections_model(["x", "x", "x"])
    optimized, report = optimize(model)
    assert products(optimized) == 1, (op_types(optimized), applied(report))
    assert merged_by_lifted_copies(report), applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))


def test_a_projection_of_another_input_keeps_its_product():
    model = projections_model(["x", "x", "z"])
    optimized, report = optimize(model)
    assert products(optimized) == 2, (op_types(optimized), applied(report))
    assert_same_function(model, optimized, random_feeds(model, RNG))


def test_biases_along_the_rows_are_not_merged_as_vectors():
    model = projections_model(["x", "x", "x"], bias_shape=(TOKENS, 1))
    optimized, report = optimize(model)
    assert not any(r.startswith("linear_bias5_") for r in applied(report)), applied(report)
    assert op_types(optimized).count("Add") == 3, (op_types(optimized), applied(report))
    assert_same_function(model, optimized, random_feeds(model, RNG))
