"""tso's Python API (python/README.md) against ONNX Runtime and the `tso` command."""

import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import tso
from conftest import H100, two_conv_model

STATIC = {"input": [2, 3, 16, 16]}


def onnxruntime_outputs(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def random_input(shape=(2, 3, 16, 16), seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_same_function(a, b, x):
    (ya,), (yb,) = onnxruntime_outputs(a, {"input": x}), onnxruntime_outputs(b, {"input": x})
    np.testing.assert_allclose(ya, yb, rtol=1e-4, atol=1e-4)


def test_optimize_a_model_proto(model):
    optimized, report = tso.optimize(model, device=H100, input_shapes=STATIC)
    assert isinstance(optimized, onnx.ModelProto)
    onnx.checker.check_model(optimized, full_check=True)
    assert report["format"] == "tso-optimize-report"
    assert report["model"] == "<onnx.ModelProto>"
    assert report["operators"] == {"before": 5, "after": 3}  # the two convolutions merged
    assert report["predicted_cost_us"]["after"] < report["predicted_cost_us"]["before"]
    assert report["check"]["performed"]
    assert not report["speed_check"]["ran"]  # a device file: no runtime times it
    assert [i.name for i in optimized.graph.input] == ["input"]
    assert [o.name for o in optimized.graph.output] == ["output"]
    assert_same_function(model, optimized, random_input())


def test_optimize_a_path(tmp_path):
    path = tmp_path / "two_conv.onnx"
    onnx.save(two_conv_model(batch=2), str(path))
    optimized, report = tso.optimize(path, device=H100, budget=20)
    assert report["model"] == str(path)
    assert report["operators"]["after"] < report["operators"]["before"]
    assert_same_function(onnx.load(str(path)), optimized, random_input())


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_run_matches_onnxruntime(model, device):
    x = random_input()
    (expected,) = onnxruntime_outputs(model, {"input": x})
    by_name = tso.run(model, {"input": x}, device=device)  # the batch from the array
    in_order = tso.run(model, [x], device=device, input_shapes=STATIC)
    for outputs in (by_name, in_order):
        assert len(outputs) == 1
        assert outputs[0].dtype == np.float32 and outputs[0].shape == (2, 8, 16, 16)
        np.testing.assert_allclose(outputs[0], expected, rtol=1e-4, atol=1e-4)


def test_inspect(model):
    s = tso.inspect(model, input_shapes=STATIC)
    assert s["name"] == "two_conv"
    assert s["inputs"] == [{"name": "input", "dtype": "f32", "shape": [2, 3, 16, 16]}]
    assert s["outputs"] == [{"name": "output", "dtype": "f32", "shape": [2, 8, 16, 16],
                             "from": "node 'add' (add)"}]
    assert s["num_operators"] == 5
    assert s["op_counts"] == {"add": 1, "conv2d": 2, "relu": 2}
    conv = next(o for o in s["operators"] if o["node"] == "c1")
    assert conv["op"] == "conv2d" and conv["inputs"][1] == "f32[8,3,3,3]"
    assert conv["flops"] == 2 * 8 * 16 * 16 * (2 * 27 + 1)  # multiply-adds and the bias, per image
    assert conv["param_bytes"] == (8 * 27 + 8) * 4
    assert s["flops"] == sum(o["flops"] for o in s["operators"])
    assert s["param_bytes"] == 2 * (8 * 27 + 8) * 4
    assert [w["name"] for w in s["weights"]] == ["w1", "b1", "w2", "b2"]
    assert s["opaque_nodes"] == [] and s["warnings"] == []


def cli_error(tso_binary, *args):
    r = subprocess.run([tso_binary, *args], capture_output=True, text=True)
    return r.returncode, r.stderr


def test_errors_carry_the_commands_messages(tmp_path, tso_binary):
    missing = str(tmp_path / "missing.onnx")
    with pytest.raises(tso.Error) as e:
        tso.inspect(missing)
    assert str(e.value) == f"cannot open '{missing}': No such file or directory"
    assert cli_error(tso_binary, "inspect", missing) == (1, f"tso inspect: {e.value}\n")

    dynamic = str(tmp_path / "dynamic.onnx")
    onnx.save(two_conv_model(), dynamic)
    with pytest.raises(tso.Error) as e:
        tso.optimize(dynamic, device=H100)
    assert "dynamic dimension 0 ('batch')" in str(e.value)
    assert "--input-shape input:" in str(e.value)
    assert cli_error(tso_binary, "inspect", dynamic) == (2, f"{e.value}\n")  # it names the file

    malformed = tmp_path / "malformed.onnx"
    malformed.write_bytes(b"\x0a\xff\xff not a model")
    with pytest.raises(tso.Error) as e:
        tso.inspect(str(malformed))
    assert str(malformed) in str(e.value)
    assert cli_error(tso_binary, "inspect", str(malformed)) == (2, f"{e.value}\n")
    with pytest.raises(tso.Error):
        tso.run(malformed.read_bytes(), [])


def test_errors_are_value_errors(model):
    assert issubclass(tso.Error, ValueError)
    with pytest.raises(tso.Error, match=r"input 'input' is f32\[2,3,16,16\], given f64"):
        tso.run(model, [random_input().astype(np.float64)], input_shapes=STATIC)
    with pytest.raises(tso.Error, match="no value given for input 'input'"):
        tso.run(model, {}, input_shapes=STATIC)
    with pytest.raises(tso.Error, match="unknown device 'tpu'"):
        tso.run(model, {"input": random_input()}, device="tpu")
    with pytest.raises(tso.Error, match=r"check_runs: 1 is not in \[2, 100\]"):
        tso.optimize(model, device=H100, input_shapes=STATIC, check_runs=1)
    with pytest.raises(tso.Error, match=r"min_gain: 0.6 is not in \[0.0, 0.5\]"):
        tso.optimize(model, min_gain=0.6)
    with pytest.raises(TypeError, match="unexpected keyword argument 'budgett'"):
        tso.optimize(model, budgett=3)
    with pytest.raises(TypeError, match="model: an onnx.ModelProto, bytes or a path"):
        tso.inspect(3)


def scores_above_threshold_model():
    """input [1,4,6,6] -> Conv -> Relu = features (an output) -> ReduceMax over the channels ->
    Greater(0.2) -> NonZero = found: i64[4, N] (an output, N known only when it runs)."""
    rng = np.random.default_rng(5)
    w = onnx.numpy_helper.from_array(rng.standard_normal((4, 4, 1, 1)).astype(np.float32), "w")
    threshold = onnx.numpy_helper.from_array(np.array(0.2, np.float32), "threshold")
    nodes = [onnx.helper.make_node("Conv", ["input", "w"], ["c"]),
             onnx.helper.make_node("Relu", ["c"], ["features"]),
             onnx.helper.make_node("ReduceMax", ["features"], ["peak"], axes=[1]),
             onnx.helper.make_node("Greater", ["peak", "threshold"], ["above"]),
             onnx.helper.make_node("NonZero", ["above"], ["found"], name="find")]
    graph = onnx.helper.make_graph(
        nodes, "scores",
        [onnx.helper.make_tensor_value_info("input", onnx.TensorProto.FLOAT, [1, 4, 6, 6])],
        [onnx.helper.make_tensor_value_info("features", onnx.TensorProto.FLOAT, [1, 4, 6, 6]),
         onnx.helper.make_tensor_value_info("found", onnx.TensorProto.INT64, [4, "n"])],
        [w, threshold])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


def test_a_dynamic_part_is_optimized_around_and_refused_by_run():
    model = scores_above_threshold_model()
    s = tso.inspect(model)
    assert s["dynamic_part"] == {"nodes": 1, "first": "node 'find' (NonZero)",
                                 "op_counts": {"NonZero": 1}, "reads": ["above"]}
    assert any("kept as ONNX" in w for w in s["warnings"])
    assert tso.inspect(two_conv_model(batch=2))["dynamic_part"] is None
    optimized, _ = tso.optimize(model, device=H100)
    onnx.checker.check_model(optimized, full_check=True)
    assert [o.name for o in optimized.graph.output] == ["features", "found"]
    feeds = {"input": random_input((1, 4, 6, 6))}
    want, got = onnxruntime_outputs(model, feeds), onnxruntime_outputs(optimized, feeds)
    assert want[1].shape[1] > 0
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(tso.Error, match=r"node 'find' \(NonZero\) holds control flow"):
        tso.run(model, feeds, device="cpu")
