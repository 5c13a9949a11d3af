"""tso, the tensor graph superoptimizer, from Python.

    import onnx, tso
    optimized, report = tso.optimize(onnx.load("model.onnx"), input_shapes={"input": [1, 3, 224, 224]})
    outputs = tso.run(optimized, {"input": x})
    summary = tso.inspect("model.onnx")

The functions call the same libraries as the `tso` command (python/README.md);
errors raise tso.Error (a ValueError) with the command's messages.
"""

import json
import os
import warnings

import onnx

from . import _tso

Error = _tso.Error


class Warning(UserWarning):  # noqa: A001 - tso.Warning, as tso.Error
    """What tso tells about a model or rule set while it works (import warnings, refused rules)."""


def _source(model, input_shapes=None, batch=None, random_weights=None):
    if isinstance(model, onnx.ModelProto):
        path, data = "<onnx.ModelProto>", model.SerializeToString()
    elif isinstance(model, (bytes, bytearray, memoryview)):
        path, data = "<bytes>", bytes(model)
    elif isinstance(model, (str, os.PathLike)):
        path, data = os.fspath(model), None
    else:
        raise TypeError(f"model: an onnx.ModelProto, bytes or a path, not {type(model).__name__}")
    shapes = {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}
    return _tso.Source(path, data, shapes, batch, random_weights)


def _check_range(name, value, low, high=None):
    if value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f"at least {low}"
        raise Error(f"{name}: {value} is not {bound}")


def optimize(model, *, device="", rules=(), budget=1000, time_limit=60.0, alpha=1.05,
             min_gain=0.001, stall=100, lookahead=1.3, lookahead_budget=50, input_shapes=None,
             batch=None, random_weights=None, check_runs=2, verify_speed=True, cost="",
             cost_cache="", missing_costs="", allow_unverified=False, quiet=True):
    """Optimizes a model as `tso optimize` does; returns (onnx.ModelProto, report dict).

    model: an onnx.ModelProto, serialized bytes, or a path (.onnx, or a graph in tso's text
    format; a model with external data is given by path). The options are the command's flags:
    device "cpu", "cuda" or a device file (default: cuda when a GPU is visible, else cpu),
    rules (rule files; default the shipped ones), budget, time_limit (seconds), alpha,
    min_gain, stall, lookahead, lookahead_budget, input_shapes {"name": [dims]}, batch,
    random_weights (seed), check_runs, verify_speed, cost (a cost table), cost_cache,
    missing_costs (a directory), allow_unverified; quiet=False writes progress to stderr. The
    model returned is the input where the search gained less than min_gain, or where the
    optimized one was not faster by its minimum, its median and in four rounds in five (eleven
    in fifteen where a second stage was timed; report["speed_check"]["written"] == "input");
    the report is the JSON report's data.
    """
    _check_range("alpha", alpha, 1.0, 10.0)
    _check_range("min_gain", min_gain, 0.0, 0.5)
    _check_range("budget", budget, 1)
    _check_range("time_limit", time_limit, 1e-9)
    _check_range("stall", stall, 0)
    _check_range("lookahead", lookahead, 1.0, 10.0)
    _check_range("lookahead_budget", lookahead_budget, 0)
    _check_range("check_runs", check_runs, 2, 100)
    source = _source(model, input_shapes, batch, random_weights)
    data, report, notes = _tso.optimize(
        source, [os.fspath(r) for r in rules], allow_unverified, os.fspath(device),
        os.fspath(cost), os.fspath(cost_cache), os.fspath(missing_costs), alpha, min_gain, budget,
        time_limit, stall, lookahead, lookahead_budget, check_runs, verify_speed, quiet)
    for note in notes:
        warnings.warn(note, Warning, stacklevel=2)
    return onnx.load_from_string(data), json.loads(report)


def run(model, inputs, device="cpu", *, input_shapes=None, batch=None, random_weights=None):
    """Runs a model once; returns its outputs as numpy arrays, in output order.

    inputs: a dict from input name to numpy array, or a list in input order; each array must
    have the input's dtype and shape (given a dict, the model's dynamic dimensions take the
    arrays' shapes unless input_shapes says otherwise). device: "cpu" (tso's oneDNN runtime),
    "reference" (the reference executor, slow) or "cuda".
    """
    if input_shapes is None and isinstance(inputs, dict):
        input_shapes = {name: list(getattr(x, "shape", ())) for name, x in inputs.items()}
    return _tso.run(_source(model, input_shapes, batch, random_weights), inputs, device)


def inspect(model, *, input_shapes=None, batch=None, random_weights=None):
    """What `tso inspect` prints, as a dict: name, inputs, outputs, weights, operators (each with
    node, op, attributes, inputs, outputs, flops, param_bytes), num_operators, op_counts, flops,
    param_bytes, opaque_nodes (name, op_type, domain, reason), dynamic_part (None, or what the
    import kept as ONNX after the graph: nodes, first, op_counts, reads) and the import's
    warnings."""
    return _tso.inspect(_source(model, input_shapes, batch, random_weights))


__all__ = ["Error", "Warning", "inspect", "optimize", "run"]
