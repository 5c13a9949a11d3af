"""Pooling attributes lifted (issue 16 points 1 and 7): substitutions/pool_n3.rules holds rules
found at 3x3 `same` pools with copies for any kernel, stride and padding (proved for every
value). On small ONNX models built here, the sum of two average pools of one kernel, stride and
padding (2x2 stride 2, and 3x3 stride 2 with explicit pads) becomes one pool of the sum, and
max pools of the pieces of a channel concatenation become one pool of the concatenation, only
through the lifted copies; the optimized model agrees with ONNX Runtime on the original. The
close but false variant, two average pools of other kernels with outputs of one shape, keeps
both pools."""

import functools

import numpy as np
from onnx import helper

import onnx_models
from conftest import ROOT
from onnx_models import applied, make_model, op_types, random_feeds

RNG = np.random.default_rng(1631)
RULES = [str(ROOT / "substitutions" / "pool_n3.rules")]
optimize = functools.partial(onnx_models.optimize, rules=RULES, budget=100)
assert_same_function = functools.partial(onnx_models.assert_same_function, rtol=1e-5, atol=1e-6)


def pools_model(nodes, inputs, output):
    """`nodes` of `inputs`, each [1, 4, 8, 8], to y of shape `output`."""
    return make_model("pools", nodes, [(n, [1, 4, 8, 8]) for n in inputs], [("y", output)])


def pool(op, x, out, kernel, stride, pads):
    return helper.make_node(op, [x], [out], kernel_shape=kernel, strides=stride, pads=pads)


def added_avgpools_model(second_kernel, second_pads):
    return pools_model([
        pool("AveragePool", "a", "pa", [3, 3], [2, 2], [1, 1, 1, 1]),
        pool("AveragePool", "b", "pb", second_kernel, [2, 2], second_pads),
        helper.make_node("Add", ["pa", "pb"], ["y"]),
    ], ["a", "b"], [1, 4, 4, 4])


def only_lifted(report):
    rules = applied(report)
    return bool(rules) and all("_lifted" in r for r in rules)


def test_two_strided_padded_avgpools_added_become_one_pool_of_the_sum():
    model = added_avgpools_model([3, 3], [1, 1, 1, 1])
    optimized, report = optimize(model)
    assert sorted(op_types(optimized)) == ["Add", "AveragePool"], (op_types(optimized),
                                                                    applied(report))
    assert only_lifted(report), applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))


def test_max_pools_of_a_concats_pieces_become_one_pool():
    model = pools_model([
        pool("MaxPool", "a", "pa", [2, 2], [2, 2], [0, 0, 0, 0]),
        pool("MaxPool", "b", "pb", [2, 2], [2, 2], [0, 0, 0, 0]),
        helper.make_node("Concat", ["pa", "pb"], ["y"], axis=1),
    ], ["a", "b"], [1, 8, 4, 4])
    optimized, report = optimize(model)
    assert sorted(op_types(optimized)) == ["Concat", "MaxPool"], (op_types(optimized),
                                                                   applied(report))
    assert only_lifted(report), applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))


def test_avgpools_of_other_kernels_stay_apart():
    model = added_avgpools_model([2, 2], [0, 0, 0, 0])
    optimized, report = optimize(model)
    assert op_types(optimized).count("AveragePool") == 2, (op_types(optimized), applied(report))
    assert_same_function(model, optimized, random_feeds(model, RNG))
