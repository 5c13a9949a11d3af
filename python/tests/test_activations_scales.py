"""Fused activations and folded scales (issue 16 points 3 and 7): on small ONNX models built
here, `tso.optimize` fuses clip (relu6), sigmoid, tanh, relu and gelu (the five nodes exporters
write for it) into the convolution or gemm before them and folds a constant scalar
multiplication or division into the weights it scales, the optimized model agrees with ONNX
Runtime on the original, and close but false variants are left alone: a clip with other bounds
is not fused as relu6, a GELU's five nodes with another factor than 0.5 are not fused, a scale
that is not a constant is not folded."""

import functools

import numpy as np
import pytest
from onnx import helper, numpy_helper

import onnx_models
from onnx_models import applied, make_model, op_types, random_feeds

RNG = np.random.default_rng(16)
weight = functools.partial(onnx_models.weight, RNG, scale=0.5)
optimize = functools.partial(onnx_models.optimize, budget=60)
assert_same_function = functools.partial(onnx_models.assert_same_function, rtol=1e-4, atol=1e-5)


def scalar(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def conv_act_model(acts):
    """Per activation k: input xk -> Conv(wk, bk) -> the activation: one model, so one search
    fuses them all. `acts` lists (ONNX operator, bound inputs)."""
    nodes, inputs, outputs, inits = [], [], [], [scalar("lo", 0.0), scalar("six", 6.0),
                                                 scalar("five", 5.0)]
    for k, (op, bounds) in enumerate(acts):
        nodes.append(helper.make_node("Conv", [f"x{k}", f"w{k}", f"b{k}"], [f"c{k}"],
                                      name=f"conv{k}", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node(op, [f"c{k}"] + bounds, [f"y{k}"], name=f"act{k}"))
        inputs.append((f"x{k}", [1, 3, 8, 8]))
        outputs.append((f"y{k}", [1, 4, 8, 8]))
        inits += [weight(f"w{k}", (4, 3, 3, 3)), weight(f"b{k}", (4,))]
    return make_model("conv_act", nodes, inputs, outputs, inits)


def gemm_act_model(acts):
    nodes, inputs, outputs, inits = [], [], [], [scalar("lo", -1.0), scalar("hi", 0.5)]
    for k, (op, bounds) in enumerate(acts):
        nodes.append(helper.make_node("Gemm", [f"x{k}", f"w{k}", f"b{k}"], [f"c{k}"],
                                      name=f"gemm{k}"))
        nodes.append(helper.make_node(op, [f"c{k}"] + bounds, [f"y{k}"], name=f"act{k}"))
        inputs.append((f"x{k}", [2, 8]))
        outputs.append((f"y{k}", [2, 6]))
        inits += [weight(f"w{k}", (8, 6)), weight(f"b{k}", (6,))]
    return make_model("gemm_act", nodes, inputs, outputs, inits)


def test_activations_after_convs_are_fused():
    model = conv_act_model([("Clip", ["lo", "six"]), ("Sigmoid", []), ("Tanh", [])])
    optimized, report = optimize(model)
    assert report["classic_rewrites"]["fuse_activation"] == 3, applied(report)
    assert sum(r.startswith("act2_") for r in applied(report)) == 3, applied(report)
    assert report["operators"] == {"before": 6, "after": 3}
    assert_same_function(model, optimized, random_feeds(model, RNG, 4))


def test_activations_after_gemms_are_fused():
    model = gemm_act_model([(op, ["lo", "hi"] if op == "Clip" else [])
                            for op in ("Relu", "Sigmoid", "Tanh", "Clip")])
    optimized, report = optimize(model)
    assert report["classic_rewrites"]["fuse_activation"] == 4, applied(report)
    for op in ("relu", "sigmoid", "tanh", "clip"):
        assert f"hw_fuse_gemm_bias_{op}" in applied(report)
    assert report["operators"] == {"before": 8, "after": 4}
    assert_same_function(model, optimized, random_feeds(model, RNG, 3))


def erf_gelu(x, y, half):
    """y = x * half * (1 + erf(x / sqrt 2)): nn.GELU as torch.onnx writes it below opset 20,
    which has no Gelu (the importer reads these five nodes as one gelu)."""
    return [helper.make_node("Div", [x, "sqrt2"], [f"{y}_d"]),
            helper.make_node("Erf", [f"{y}_d"], [f"{y}_e"]),
            helper.make_node("Add", [f"{y}_e", "one"], [f"{y}_a"]),
            helper.make_node("Mul", [x, f"{y}_a"], [f"{y}_m"]),
            helper.make_node("Mul", [f"{y}_m", half], [y])]


def test_an_exported_gelu_after_a_conv_and_a_gemm_is_fused():
    """A conv and a gemm, each followed by the five nodes of an exported GELU, fuse it; a third
    chain with 0.6 for its 0.5 is no GELU and stays five nodes after its gemm."""
    nodes = ([helper.make_node("Conv", ["x0", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1])]
             + erf_gelu("c0", "y0", "half")
             + [helper.make_node("Gemm", ["x1", "w1", "b1"], ["c1"])] + erf_gelu("c1", "y1", "half")
             + [helper.make_node("Gemm", ["x2", "w2", "b2"], ["c2"])] + erf_gelu("c2", "y2", "other"))
    inits = [scalar("sqrt2", 2 ** 0.5), scalar("one", 1.0), scalar("half", 0.5),
             scalar("other", 0.6), weight("w0", (4, 3, 3, 3)), weight("b0", (4,))]
    inits += [weight(f"{n}{k}", s) for k in (1, 2) for n, s in (("w", (8, 6)), ("b", (6,)))]
    model = make_model("gelu", nodes, [("x0", [1, 3, 8, 8]), ("x1", [2, 8]), ("x2", [2, 8])],
                       [("y0", [1, 4, 8, 8]), ("y1", [2, 6]), ("y2", [2, 6])], inits)
    optimized, report = optimize(model)
    # Imported: conv, gelu, gemm, gelu, gemm and the five nodes; the two gelus fused.
    assert report["operators"] == {"before": 10, "after": 8}, applied(report)
    assert report["classic_rewrites"]["fuse_activation"] == 2, applied(report)
    assert "hw_fuse_gemm_bias_gelu" in applied(report)
    assert sum(r.startswith("act2_") for r in applied(report)) == 1, applied(report)
    assert_same_function(model, optimized, random_feeds(model, RNG, 3))


def test_a_clip_to_other_bounds_is_not_fused_as_relu6():
    model = conv_act_model([("Clip", ["lo", "five"])])
    optimized, report = optimize(model)
    assert report["classic_rewrites"]["fuse_activation"] == 0, applied(report)
    assert "Clip" in op_types(optimized)
    assert_same_function(model, optimized, random_feeds(model, RNG, 4))


def attention_scores_model(scale_op, scale_input="scale"):
    """BERT's attention scores at toy size: Q and K projections with biases, split into two
    heads (Reshape, Transpose), each scaled by a constant (Mul, as recent exports write it, or
    Div), then Q K^T."""
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q0"]),
        helper.make_node("Add", ["q0", "bq"], ["q1"]),
        helper.make_node("Reshape", ["q1", "heads"], ["q2"]),
        helper.make_node("Transpose", ["q2"], ["q3"], perm=[0, 2, 1, 3]),
        helper.make_node(scale_op, ["q3", scale_input], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k0"]),
        helper.make_node("Add", ["k0", "bk"], ["k1"]),
        helper.make_node("Reshape", ["k1", "heads"], ["k2"]),
        helper.make_node("Transpose", ["k2"], ["k3"], perm=[0, 2, 3, 1]),
        helper.make_node(scale_op, ["k3", scale_input], ["k"]),
        helper.make_node("MatMul", ["q", "k"], ["scores"]),
    ]
    inputs = [("x", [1, 4, 8])]
    inits = [weight("wq", (8, 8)), weight("bq", (8,)), weight("wk", (8, 8)), weight("bk", (8,)),
             numpy_helper.from_array(np.array([1, 4, 2, 4], dtype=np.int64), "heads")]
    if scale_input == "scale":
        inits.append(scalar("scale", 4.0 ** -0.5 if scale_op == "Mul" else 4.0 ** 0.5))
    else:
        inputs.append((scale_input, []))
    return make_model("attention", nodes, inputs, [("scores", [1, 2, 4, 4])], inits)


@pytest.mark.parametrize("scale_op", ["Mul", "Div"])
def test_a_constant_scale_folds_into_the_projections(scale_op):
    model = attention_scores_model(scale_op)
    optimized, report = optimize(model)
    assert scale_op not in op_types(optimized), op_types(optimized)
    assert report["folded_weights"] >= 2  # the scaled weights and biases, concatenated
    rules = applied(report)
    op = scale_op.lower()
    assert {f"hw_fold_{op}_into_heads_0213", f"hw_fold_{op}_into_heads_0231"} <= rules, rules
    x = RNG.standard_normal((1, 4, 8)).astype(np.float32)
    assert_same_function(model, optimized, {"x": x})


def test_a_scale_that_is_not_a_constant_is_not_folded():
    model = attention_scores_model("Mul", scale_input="s")
    optimized, report = optimize(model)
    # Still scaled at run time: a Mul of the optimized model reads s.
    assert any(n.op_type == "Mul" and "s" in n.input for n in optimized.graph.node)
    feeds = {"x": RNG.standard_normal((1, 4, 8)).astype(np.float32),
             "s": np.array(0.7, dtype=np.float32)}
    assert_same_function(model, optimized, feeds)
