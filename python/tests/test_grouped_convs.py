"""Merges into grouped convolutions (issue 16 points 2 and 7): on small ONNX models built here,
`tso.optimize` with the shipped rules and the H100's analytic cost model merges two
convolutions of equal width into one Conv with group=2, both where they read two inputs and
their outputs are concatenated and where they read the two halves of one input cut by a Split
(ResNeXt's branches written out), and the optimized model agrees with ONNX Runtime on the
original. The close but false variant is left alone: with unequal widths (8 and 4 output
channels) a grouped conv would cut the weights at another place than the branches do, so the
rules (where dim(w2,0) == dim(w1,0)) do not apply."""

import functools

import numpy as np
import pytest
from onnx import helper, numpy_helper

import onnx_models
from onnx_models import applied_in_order, make_model, op_types, random_feeds

RNG = np.random.default_rng(162)
weight = functools.partial(onnx_models.weight, RNG, scale=0.3)
optimize = functools.partial(onnx_models.optimize, budget=200)
assert_same_function = functools.partial(onnx_models.assert_same_function, rtol=1e-4, atol=1e-5)


def branches_model(form, width2):
    """Two 3x3 convolutions of 8 input channels each (8 and `width2` output channels), their
    outputs concatenated. form "two_inputs": the convolutions read inputs a and b; "split":
    they read the halves of x[1,16,16,16]."""
    convs = [helper.make_node("Conv", ["p", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["q", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["c1", "c2"], ["y"], axis=1)]
    inits = [weight("w1", (8, 8, 3, 3)), weight("w2", (width2, 8, 3, 3))]
    if form == "two_inputs":
        nodes, inputs = convs, [("p", [1, 8, 16, 16]), ("q", [1, 8, 16, 16])]
    else:
        nodes = [helper.make_node("Split", ["x", "halves"], ["p", "q"], axis=1)] + convs
        inputs = [("x", [1, 16, 16, 16])]
        inits.append(numpy_helper.from_array(np.array([8, 8], np.int64), "halves"))
    return make_model(f"branches_{form}", nodes, inputs, [("y", [1, 8 + width2, 16, 16])], inits)


def convs_by_group(model):
    """The group attribute of each Conv of `model` (1 where it has none)."""
    return sorted(next((a.i for a in n.attribute if a.name == "group"), 1)
                  for n in model.graph.node if n.op_type == "Conv")


@pytest.mark.parametrize("form", ["two_inputs", "split"])
def test_convs_of_equal_width_merge_into_a_grouped_conv(form):
    model = branches_model(form, 8)
    optimized, report = optimize(model)
    assert convs_by_group(optimized) == [2], (op_types(optimized), applied_in_order(report))
    # Two inputs: their concatenation feeds the grouped conv; one input: the Split and the
    # Concat it undoes go too.
    ops = op_types(optimized)
    assert ops == (["Concat", "Conv"] if form == "two_inputs" else ["Conv"]), (
        ops, applied_in_order(report))
    assert report["predicted_cost_us"]["after"] < report["predicted_cost_us"]["before"]
    assert_same_function(model, optimized, random_feeds(model, RNG))


@pytest.mark.parametrize("form", ["two_inputs", "split"])
def test_convs_of_unequal_widths_stay_apart(form):
    model = branches_model(form, 4)
    optimized, report = optimize(model)
    assert convs_by_group(optimized) == [1, 1], applied_in_order(report)
    assert_same_function(model, optimized, random_feeds(model, RNG))
