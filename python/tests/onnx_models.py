"""Helpers of the tests that optimize small ONNX models built with onnx.helper: building and
checking a model, seeded random weights, `tso.optimize` on the H100's analytic cost model with
the optimized model checked in full, the rules a report applied, and ONNX Runtime (CPU) runs of
the original and the optimized model on the same random feeds. Each test file keeps its own
seeded numpy Generator and passes it in, so its draws are its own and in its own order."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import tso
from conftest import H100


def make_model(name, nodes, inputs, outputs, initializers=(), opset=18):
    """A float model of `nodes`; `inputs` and `outputs` list (name, shape). Checked in full."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    return model


def weight(rng, name, shape, scale):
    """An initializer of standard normal draws from `rng` times `scale`, as float32."""
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def optimize(model, budget, **options):
    """tso.optimize on the H100's device file with `budget` and `options` (rules=..., ...); the
    optimized model is checked in full."""
    optimized, report = tso.optimize(model, device=H100, budget=budget, **options)
    onnx.checker.check_model(optimized, full_check=True)
    return optimized, report


def applied(report):
    """The names of the rules the report applied, as a set."""
    return {r["rule"] for r in report["rules_applied"]}


def applied_in_order(report):
    """The names of the rules the report applied, in order, repeats included."""
    return [r["rule"] for r in report["rules_applied"]]


def op_types(model):
    return [n.op_type for n in model.graph.node]


def random_feeds(model, rng, scale=1):
    """Per input of `model`, in graph order: standard normal draws from `rng` of its (static)
    shape, as float32, times `scale`."""
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
            .astype(np.float32) * scale for i in model.graph.input}


def onnxruntime_outputs(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_same_function(original, optimized, feeds, rtol, atol):
    """ONNX Runtime gives close outputs for `original` and `optimized` on `feeds`."""
    expected = onnxruntime_outputs(original, feeds)
    got = onnxruntime_outputs(optimized, feeds)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
