#!/usr/bin/env python3
"""Run exports whose tail tso keeps as ONNX (detection models) through tso and ONNX Runtime.

    .venv/bin/python tests/exports/detection_census.py DIR [--tso build/tso] [--check TOL]

With --check (the test of tests/exports/detection/), the exit status is 1 unless every
export imports, optimizes and computes, in ONNX Runtime on the file tso wrote, the values
the part reads and the outputs to a relative error of TOL.

For each DIR/*.graph.onnx: the model filled with seeded weights (experiments/fill_weights.py,
seed 0); what `tso inspect` reports of the graph tso optimizes (its operators, FLOPs and
opaque nodes) and of the dynamic part it keeps as ONNX (its nodes, from which node on);
`tso optimize` for the analytic H100 model (no speed check: the rewrites a GPU would get,
the file's largest change), its rewrites and its numerical check; then ONNX Runtime (graph
optimizations off, the same inputs; as census.py makes them) on the file tso wrote against
the original: the largest relative error over the values the part reads of the graph (those
the written file's graph computes under a name the original has, the model's outputs
aside; each file cut to the nodes they need, so that they compare where the part itself
fails), and over the model's outputs, whose shapes the part computes from the data. The
outputs can differ where the part picks among near-equal scores (TopK, NonMaxSuppression):
the last column shows the same comparison for ONNX Runtime's own graph optimizations.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.helper
import onnxruntime as ort

from census import ROOT, inputs_for, relative_error


def run_ort(model, feeds, level=ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def computing(model, names):
    """`model` cut to the nodes `names` (values its nodes compute) need, which are
    its outputs: what the graph computes, whether or not the part runs."""
    producer = {o: n for n in model.graph.node for o in n.output if o}
    needed, todo = set(), list(names)
    while todo:
        n = producer.get(todo.pop())
        if n is not None and id(n) not in needed:
            needed.add(id(n))
            todo.extend(i for i in n.input if i)
    cut = onnx.ModelProto()
    cut.CopyFrom(model)
    del cut.graph.node[:]
    cut.graph.node.extend(n for n in model.graph.node if id(n) in needed)
    read = {i for n in cut.graph.node for i in n.input}
    kept = [t for t in model.graph.initializer if t.name in read]
    del cut.graph.initializer[:]
    cut.graph.initializer.extend(kept)
    del cut.graph.output[:]
    cut.graph.output.extend(onnx.helper.make_empty_tensor_value_info(name) for name in names)
    return cut


def compare(got, want):
    """The largest relative error over the numeric values, or why there is none."""
    if any(g.shape != w.shape for g, w in zip(got, want)):
        return "shapes differ"
    errors = [relative_error(g, w) for g, w in zip(got, want)
              if w.size and np.issubdtype(w.dtype, np.number)]
    return f"{max(errors):.1e}" if errors else "all empty"


def census_row(tso, path, work):
    full = os.path.join(work, "model.onnx")
    optimized = os.path.join(work, "optimized.onnx")
    report = os.path.join(work, "report.json")
    fill = subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "fill_weights.py"),
                           path, full, "--seed", "0"], capture_output=True, text=True)
    if fill.returncode:
        return ["fill failed"]
    inspect = subprocess.run([tso, "inspect", full], capture_output=True, text=True)
    if inspect.returncode:
        return ["import failed: " + inspect.stderr.strip().splitlines()[-1][:120]]
    ops = re.search(r"^\s*operators\s+(\d+)", inspect.stdout, re.M).group(1)
    flops = re.search(r"^\s*FLOPs\s+\d+ \((.*)\)$", inspect.stdout, re.M).group(1)
    opaque = re.search(r"^\s*opaque (.*)$", inspect.stdout, re.M)
    part = re.search(r"^\s*nodes\s+(\d+) from node '[^']*' \(([^)]*)\)", inspect.stdout, re.M)
    graph = f"{ops} operators, {flops}FLOP" + (f"; opaque {opaque.group(1).strip()}"
                                               if opaque else "")
    if not part:
        return [graph, "none"]
    dynamic = f"{part.group(1)} nodes from a {part.group(2)}"
    opt = subprocess.run([tso, "optimize", full, optimized, "--report", report, "-q",
                          "--no-verify-speed", "--device",
                          os.path.join(ROOT, "optimizer", "devices", "h100.json")],
                         capture_output=True, text=True)
    if opt.returncode:
        return [graph, dynamic, "optimize failed: " + opt.stderr.strip()[-120:]]
    r = json.load(open(report))
    rewrites = sum(a["count"] for a in r["rules_applied"])
    check = (f"{r['check']['max_relative_error']:.1e}" if r["check"]["performed"]
             else "not needed")
    feeds = inputs_for(ort.InferenceSession(full, providers=["CPUExecutionProvider"]),
                       np.random.default_rng(0))
    # The values the part reads: those the written file's graph (all but its
    # last nodes, the part) computes under a name the original gives a value too.
    original, written = onnx.load(full), onnx.load(optimized)
    static = written.graph.node[:len(written.graph.node) - int(part.group(1))]
    computed = {o for n in original.graph.node for o in n.output}
    outputs = [o.name for o in original.graph.output]
    reads = sorted({o for n in static for o in n.output if o in computed} - set(outputs))
    read_error = compare(run_ort(computing(written, reads), feeds),
                         run_ort(computing(original, reads), feeds))
    row = [graph, dynamic, str(rewrites), check, f"{read_error} ({len(reads)})"]
    try:
        want = run_ort(original, feeds)
        got = run_ort(written, feeds)
        ort_all = run_ort(original, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    except Exception as e:  # ONNX Runtime's own failures on the original
        words = str(e).splitlines()[0].split()
        return row + ["", "ONNX Runtime fails on the original: ... " + " ".join(words[-14:]), ""]
    shapes = ", ".join("x".join(map(str, w.shape)) for w in want)
    return row + [shapes, compare(got, want), compare(ort_all, want)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--tso", default=os.path.join(ROOT, "build", "tso"))
    ap.add_argument("--check", type=float, metavar="TOL",
                    help="exit 1 unless every export matches to this relative error")
    a = ap.parse_args()
    failed = []
    print("| export | graph tso optimizes | dynamic part | rewrites (H100) | check | "
          "values the part reads: tso's file vs the original | outputs | "
          "outputs: tso's file vs the original | outputs: ONNX Runtime's optimizations on vs "
          "off |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: |")
    for f in sorted(f for f in os.listdir(a.dir) if f.endswith(".graph.onnx")):
        with tempfile.TemporaryDirectory() as work:
            row = census_row(a.tso, os.path.join(a.dir, f), work)
        print(f"| {f[:-len('.graph.onnx')]} | " + " | ".join(row) + " |", flush=True)
        if a.check is not None and not matches(row, a.check):
            failed.append(f)
    if failed:
        print("not matching: " + ", ".join(failed), file=sys.stderr)
        sys.exit(1)


def matches(row, tolerance):
    """Whether a census row has every column, and its errors are within `tolerance`."""
    if len(row) < 8:
        return False
    errors = [row[4].split(" (")[0], row[6]]  # what the part reads; the outputs
    return all(e == "all empty" or (e[0].isdigit() and float(e) <= tolerance) for e in errors)


if __name__ == "__main__":
    main()
