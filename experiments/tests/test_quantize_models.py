"""experiments/quantize_models.py on a small convolutional model built here:
a QDQ model with u8 activations and i8 weights, whose weights fill the 8-bit
range by default and stay within 7 bits ([-64, 64]) with --reduce-range."""
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import quantize_models


def write_model(path):
    rng = np.random.default_rng(3)
    w1 = numpy_helper.from_array(rng.uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.uniform(-1, 1, 8).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.uniform(-1, 1, (4, 8, 1, 1)).astype(np.float32), "w2")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w2"], ["y"])],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [w1, b1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)


def quantize(tmp_path, monkeypatch, *flags):
    write_model(str(tmp_path / "small.onnx"))
    out = tmp_path / ("out" + "".join(flags))
    monkeypatch.setattr(sys, "argv", ["quantize_models.py", str(out), "--models", "small",
                                      "--models-dir", str(tmp_path), *flags])
    quantize_models.main()
    return onnx.load(str(out / "small.onnx"))


def int8_weights(model):
    stored = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return [stored[n.input[0]] for n in model.graph.node
            if n.op_type == "DequantizeLinear" and n.input[0] in stored
            and stored[n.input[0]].dtype == np.int8]


@pytest.mark.parametrize("flags,most", [((), 127), (("--reduce-range",), 64)])
def test_weights_fill_the_range_they_are_given(tmp_path, monkeypatch, flags, most):
    model = quantize(tmp_path, monkeypatch, *flags)
    weights = int8_weights(model)
    assert len(weights) == 2  # both convolutions' weights, per output channel
    assert max(int(np.abs(w.astype(np.int32)).max()) for w in weights) == most
    levels = [t for t in model.graph.initializer if t.data_type == TensorProto.UINT8]
    assert levels, "activations are quantized to u8"


def test_the_int8_model_computes_the_float_one(tmp_path, monkeypatch):
    model = quantize(tmp_path, monkeypatch, "--reduce-range")
    x = np.random.default_rng(5).random((1, 3, 8, 8), dtype=np.float32)

    def run(m):
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return s.run(None, {"x": x})[0]

    want = run(onnx.load(str(tmp_path / "small.onnx")))
    got = run(model)
    assert np.abs(got - want).max() <= 0.05 * np.abs(want).max()
