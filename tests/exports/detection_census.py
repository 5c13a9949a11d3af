#!/usr/bin/env python3
"""Run exports whose tail tso keeps as ONNX (detection models) through tso and ONNX Runtime.

    .venv/bin/python tests/exports/detection_census.py DIR [--tso build/tso] > census.md

For each DIR/*.graph.onnx: the model filled with seeded weights (experiments/fill_weights.py,
seed 0); what `tso inspect` reports of the graph tso optimizes (its operators, FLOPs and
opaque nodes) and of the dynamic part it keeps as ONNX (its nodes, from which node on);
`tso optimize` for the analytic H100 model (no speed check: the rewrites a GPU would get,
the file's largest change), its rewrites and its numerical check; and the largest relative
error of each output of ONNX Runtime on the file tso wrote against ONNX Runtime on the
original (graph optimizations off, the same inputs), with the outputs' shapes, which the
part computes from the data. Inputs as census.py makes them.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

from census import ROOT, inputs_for, relative_error


def run_ort(path, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]).run(None, feeds)


def census_row(tso, path, work):
    full = os.path.join(work, "model.onnx")
    optimized = os.path.join(work, "optimized.onnx")
    report = os.path.join(work, "report.json")
    fill = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "fill_weights.py"),
                           path, full, "--seed", "0"], capture_output=True, text=True)
    if fill.returncode:
        return ["fill failed"] + [""] * 5
    inspect = subprocess.run([tso, "inspect", full], capture_output=True, text=True)
    if inspect.returncode:
        return ["import failed: " + inspect.stderr.strip().splitlines()[-1][:120]] + [""] * 5
    ops = re.search(r"^\s*operators\s+(\d+)", inspect.stdout, re.M).group(1)
    flops = re.search(r"^\s*FLOPs\s+\d+ \((.*)\)$", inspect.stdout, re.M).group(1)
    opaque = re.search(r"^\s*opaque (.*)$", inspect.stdout, re.M)
    part = re.search(r"^\s*nodes\s+(\d+) from node '[^']*' \(([^)]*)\)", inspect.stdout, re.M)
    graph = f"{ops} operators, {flops}FLOP" + (f"; opaque {opaque.group(1).strip()}"
                                               if opaque else "")
    dynamic = f"{part.group(1)} nodes from a {part.group(2)}" if part else "none"
    opt = subprocess.run([tso, "optimize", full, optimized, "--report", report, "-q",
                          "--no-verify-speed", "--device",
                          os.path.join(ROOT, "optimizer", "devices", "h100.json")],
                         capture_output=True, text=True)
    if opt.returncode:
        return [graph, dynamic, "optimize failed: " + opt.stderr.strip()[-120:], "", "", ""]
    r = json.load(open(report))
    rewrites = sum(a["count"] for a in r["rules_applied"])
    check = (f"{r['check']['max_relative_error']:.1e}" if r["check"]["performed"]
             else "not needed")
    feeds = inputs_for(ort.InferenceSession(full, providers=["CPUExecutionProvider"]),
                       np.random.default_rng(0))
    want, got = run_ort(full, feeds), run_ort(optimized, feeds)
    shapes = ", ".join("x".join(map(str, w.shape)) for w in want)
    if any(g.shape != w.shape for g, w in zip(got, want)):
        error = "shapes differ: " + ", ".join("x".join(map(str, g.shape)) for g in got)
    else:
        error = f"{max(relative_error(g, w) for g, w in zip(got, want) if w.size):.1e}"
    return [graph, dynamic, str(rewrites), check, shapes, error]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"))
    a = ap.parse_args()
    print("| export | graph tso optimizes | dynamic part | rewrites (H100) | check | "
          "outputs | ONNX Runtime: tso's file vs the original |")
    print("| --- | --- | --- | ---: | ---: | --- | ---: |")
    for f in sorted(f for f in os.listdir(a.dir) if f.endswith(".graph.onnx")):
        with tempfile.TemporaryDirectory() as work:
            row = census_row(a.tso, os.path.join(a.dir, f), work)
        print(f"| {f[:-len('.graph.onnx')]} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
