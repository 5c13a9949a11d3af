#!/usr/bin/env python3
"""Run every export in a directory through tso and ONNX Runtime; print a table.

    .venv/bin/python tests/exports/census.py DIR [--tso build/tso] [--opset N] > census.md

For each DIR/*.graph.onnx (as export_models.py writes them): the model filled with seeded
weights (experiments/fill_weights.py, seed 0), the opaque nodes `tso inspect` reports, and
the largest relative error of each output of `tso run` on the CPU runtime and on the
reference executor against ONNX Runtime (graph optimizations off) on the same inputs:
f32 uniform in [-1, 1), token ids in [5, 900), attention masks of ones, token types of
zeros. With --opset N, each export below opset N is first upgraded to it by onnx's version
converter (what a newer exporter would write for the same operators), and the others are
left out. The wider census of
tests/exports/README.md is this script's output.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper, version_converter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def inputs_for(session, rng):
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if "int64" in i.type:
            if "mask" in i.name:
                feeds[i.name] = np.ones(shape, np.int64)
            elif "type" in i.name:
                feeds[i.name] = np.zeros(shape, np.int64)
            else:
                feeds[i.name] = rng.integers(5, 900, shape).astype(np.int64)
        else:
            feeds[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
    return feeds


def relative_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.abs(got - want).max() / max(np.abs(want).max(), 1e-12)


def opset_of(path):
    model = onnx.load(path, load_external_data=False)
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def census_row(tso, path, work, opset=None):
    full = os.path.join(work, "model.onnx")
    if opset is not None:
        upgraded = os.path.join(work, "upgraded.graph.onnx")
        model = onnx.load(path, load_external_data=False)
        try:
            onnx.save(version_converter.convert_version(model, opset), upgraded)
        except Exception as e:  # the converter's own limits: report, go on
            return [f"upgrade to opset {opset} failed: {str(e).splitlines()[0][:100]}", "", ""]
        path = upgraded
    fill = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "fill_weights.py"),
                           path, full, "--seed", "0"], capture_output=True, text=True)
    if fill.returncode:
        return ["fill failed", "", ""]
    inspect = subprocess.run([tso, "inspect", full], capture_output=True, text=True)
    if inspect.returncode:
        return ["import failed: " + inspect.stderr.strip().splitlines()[-1][:120], "", ""]
    opaque = re.search(r"^\s*opaque (.*)$", inspect.stdout, re.M)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(full, options, providers=["CPUExecutionProvider"])
    feeds = inputs_for(session, np.random.default_rng(0))
    os.makedirs(os.path.join(work, "in"), exist_ok=True)
    for k, (name, value) in enumerate(feeds.items()):
        with open(os.path.join(work, "in", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
    want = session.run(None, feeds)
    errors = []
    for device in ("cpu", "reference"):
        out = os.path.join(work, device)
        run = subprocess.run([tso, "run", full, "--device", device, "--iters", "1", "--inputs",
                              os.path.join(work, "in"), "--outputs", out],
                             capture_output=True, text=True)
        if run.returncode:
            errors.append("fails")
            continue
        worst = 0.0
        for k, w in enumerate(want):
            t = onnx.TensorProto()
            with open(os.path.join(out, f"output_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            worst = max(worst, relative_error(numpy_helper.to_array(t), w))
        errors.append(f"{worst:.1e}")
    return [opaque.group(1).strip() if opaque else "none"] + errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"))
    ap.add_argument("--opset", type=int, help="upgrade each export to this opset first")
    a = ap.parse_args()
    files = sorted(f for f in os.listdir(a.dir) if f.endswith(".graph.onnx"))
    print("| export | opaque nodes | CPU runtime vs ONNX Runtime | reference vs ONNX Runtime |")
    print("| --- | --- | ---: | ---: |")
    for f in files:
        if a.opset and opset_of(os.path.join(a.dir, f)) >= a.opset:
            continue
        with tempfile.TemporaryDirectory() as work:
            row = census_row(a.tso, os.path.join(a.dir, f), work, a.opset)
        name = f[:-len(".graph.onnx")] + (f".op{a.opset}" if a.opset else "")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
