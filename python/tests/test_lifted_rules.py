"""Lifted rules (issue 16 points 1 and 7): on small ONNX models built here, `tso.optimize` with
substitutions/lifted_n3.rules (rules found on 2-D tensors, lifted to ranks 2..4 with the
transpose's permutation and the concat axis as parameters) removes a 4-D transpose and its
inverse around a relu and merges the relus of a concat's pieces on an axis no generated rule
names, and drops a split that undoes its concat on axis 2; the optimized model agrees with
ONNX Runtime on the original; close but false variants are left alone: a second transpose that
is not the inverse, a split on another axis than its concat's."""

import functools

import numpy as np
from onnx import helper, numpy_helper

import onnx_models
from conftest import ROOT
from onnx_models import applied, make_model, op_types, random_feeds

RNG = np.random.default_rng(161)
RULES = [str(ROOT / "substitutions" / "lifted_n3.rules")]
optimize = functools.partial(onnx_models.optimize, rules=RULES, budget=200)
assert_same_function = functools.partial(onnx_models.assert_same_function, rtol=1e-5, atol=1e-6)


def transpose_relu_model(second_perm):
    """NCHW -> NHWC, relu, and back (when second_perm is the inverse of [0,2,3,1])."""
    return make_model("transpose_relu", [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("Relu", ["t"], ["r"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=second_perm),
    ], [("x", [1, 3, 4, 5])],
        [("y", [1, 3, 4, 5] if second_perm == [0, 3, 1, 2] else [1, 5, 3, 4])])


def test_a_4d_transpose_and_its_inverse_around_a_relu_go():
    model = transpose_relu_model([0, 3, 1, 2])
    optimized, report = optimize(model)
    assert op_types(optimized) == ["Relu"], (op_types(optimized), applied(report))
    assert all(r.endswith("_lifted") for r in applied(report)), applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))


def test_a_transpose_that_is_not_the_inverse_stays():
    model = transpose_relu_model([0, 2, 3, 1])
    optimized, report = optimize(model)
    assert op_types(optimized).count("Transpose") == 2, (op_types(optimized), applied(report))
    assert_same_function(model, optimized, random_feeds(model, RNG))


def concat_relu_model(axis):
    return make_model("concat_relu", [
        helper.make_node("Relu", ["a"], ["ra"]),
        helper.make_node("Relu", ["b"], ["rb"]),
        helper.make_node("Concat", ["ra", "rb"], ["y"], axis=axis),
    ], [("a", [1, 2, 3, 4]), ("b", [1, 2, 3, 4])],
        [("y", [1, 2, 6, 4] if axis == 2 else [1, 4, 3, 4])])


def test_relus_of_a_concat_on_axis_2_merge():
    model = concat_relu_model(2)
    optimized, report = optimize(model)
    assert sorted(op_types(optimized)) == ["Concat", "Relu"], (op_types(optimized),
                                                              applied(report))
    assert all(r.endswith("_lifted") for r in applied(report)), applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))


def split_concat_model(split_axis):
    """Concat on axis 2, split in two, the pieces added: split on axis 2 gives back the concat's
    inputs; on axis 3 it does not."""
    out = [1, 2, 4, 4] if split_axis == 2 else [1, 2, 8, 2]
    return make_model("split_concat", [
        helper.make_node("Concat", ["a", "b"], ["c"], axis=2),
        helper.make_node("Split", ["c", "sizes"], ["p", "q"], axis=split_axis),
        helper.make_node("Add", ["p", "q"], ["y"]),
    ], [(n, [1, 2, 4, 4]) for n in "ab"], [("y", out)],
        [numpy_helper.from_array(np.array([4, 4] if split_axis == 2 else [2, 2], np.int64),
                                 "sizes")])


def test_a_split_of_a_concat_on_its_axis_goes():
    model = split_concat_model(2)
    optimized, report = optimize(model)
    assert op_types(optimized) == ["Add"], (op_types(optimized), applied(report))
    assert all(r.endswith("_lifted") for r in applied(report)), applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))


def test_a_split_on_another_axis_than_its_concat_stays():
    model = split_concat_model(3)
    optimized, report = optimize(model)
    assert sorted(op_types(optimized)) == ["Add", "Concat", "Split"], (op_types(optimized),
                                                                        applied(report))
    assert_same_function(model, optimized, random_feeds(model, RNG))
