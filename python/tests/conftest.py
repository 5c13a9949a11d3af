"""Fixtures of the Python module's tests: small ONNX models built with onnx.helper, the
repository's paths, and a cache directory of the test's own (nothing reads ~/.cache)."""

import os
import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100 = str(ROOT / "optimizer" / "devices" / "h100.json")


def two_conv_model(batch="batch", size=16):
    """Two 3x3 convolutions of one input, each with a relu, added: the rules merge the
    convolutions (5 operators become 3 on the H100's analytic model). Dimension 0 is `batch`:
    symbolic when a string."""
    rng = np.random.default_rng(7)
    weights = [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
        for name, shape in [("w1", (8, 3, 3, 3)), ("b1", (8,)), ("w2", (8, 3, 3, 3)), ("b2", (8,))]
    ]
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="c1", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["input", "w2", "b2"], ["c2"], name="c2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="r1"),
        helper.make_node("Relu", ["c2"], ["r2"], name="r2"),
        helper.make_node("Add", ["r1", "r2"], ["output"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "two_conv",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 8, size, size])],
        weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def model():
    return two_conv_model()


@pytest.fixture
def tso_binary():
    return os.environ.get("TSO_BINARY", str(ROOT / "build" / "tso"))
