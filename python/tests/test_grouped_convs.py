"""Merges into grouped convolutions (issue 16 points 2 and 7): on small ONNX models built here,
`tso.optimize` with the shipped rules and the H100's analytic cost model merges two
convolutions of equal width into one Conv with group=2, both where they read two inputs and
their outputs are concatenated and where they read the two halves of one input cut by a Split
(ResNeXt's branches written out), and the optimized model agrees with ONNX Runtime on the
original. The close but false variant is left alone: with unequal widths (8 and 4 output
channels) a grouped conv would cut the weights at another place than the branches do, so the
rules (where dim(w2,0) == dim(w1,0)) do not apply."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tso
from conftest import H100

RNG = np.random.default_rng(162)


def weight(name, shape):
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.3).astype(np.float32), name)


def make_model(name, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    return model


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


def optimize(model):
    optimized, report = tso.optimize(model, device=H100, budget=200)
    onnx.checker.check_model(optimized, full_check=True)
    return optimized, report


def convs_by_group(model):
    """The group attribute of each Conv of `model` (1 where it has none)."""
    return sorted(next((a.i for a in n.attribute if a.name == "group"), 1)
                  for n in model.graph.node if n.op_type == "Conv")


def applied(report):
    return [r["rule"] for r in report["rules_applied"]]


def assert_same_function(original, optimized):
    feeds = {i.name: RNG.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in original.graph.input}

    def run(m):
        session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds)

    for e, g in zip(run(original), run(optimized)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("form", ["two_inputs", "split"])
def test_convs_of_equal_width_merge_into_a_grouped_conv(form):
    model = branches_model(form, 8)
    optimized, report = optimize(model)
    assert convs_by_group(optimized) == [2], ([n.op_type for n in optimized.graph.node],
                                              applied(report))
    # Two inputs: their concatenation feeds the grouped conv; one input: the Split and the
    # Concat it undoes go too.
    ops = [n.op_type for n in optimized.graph.node]
    assert ops == (["Concat", "Conv"] if form == "two_inputs" else ["Conv"]), (ops,
                                                                              applied(report))
    assert report["predicted_cost_us"]["after"] < report["predicted_cost_us"]["before"]
    assert_same_function(model, optimized)


@pytest.mark.parametrize("form", ["two_inputs", "split"])
def test_convs_of_unequal_widths_stay_apart(form):
    model = branches_model(form, 4)
    optimized, report = optimize(model)
    assert convs_by_group(optimized) == [1, 1], applied(report)
    assert_same_function(model, optimized)
