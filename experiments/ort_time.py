#!/usr/bin/env python3
"""Time one ONNX model on ONNX Runtime's CPU provider, in this process alone.

    experiments/ort_time.py MODEL [--threads T] [--runs K] [--warmup W] [--seed S]

The peer configuration of ../shared/MEASURING.md: CPUExecutionProvider,
ORT_ENABLE_ALL, intra_op_num_threads T, inter_op_num_threads 1, sequential
execution. Inputs are seeded random float32 (standard normal) of the model's
input shapes (a symbolic dim counts as 1). W untimed runs, then K runs each
timed with time.perf_counter around session.run. Prints exactly one line:

    ort min_ms=<x> median_ms=<y> runs=<K>

Errors go to stderr with a non-zero exit.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

NUMPY_TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}


def make_inputs(session, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        dtype = NUMPY_TYPES.get(i.type)
        if dtype is None:
            raise ValueError(f"input '{i.name}' has type {i.type}, which this script cannot fill")
        if np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        else:  # index-like inputs: zeros are valid for any embedding or gather
            feeds[i.name] = np.zeros(shape, dtype=dtype)
    return feeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.runs < 1 or a.warmup < 0 or a.threads < 1:
        sys.exit("ort_time.py: --runs >= 1, --warmup >= 0 and --threads >= 1")

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3  # errors only: keep stdout to the one line
    try:
        session = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
        feeds = make_inputs(session, a.seed)
        for _ in range(a.warmup):
            session.run(None, feeds)
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            session.run(None, feeds)
            times.append((time.perf_counter() - t0) * 1e3)
    except Exception as e:  # one line: the bench prints it in the table
        msg = " ".join(str(e).split())
        sys.exit(f"ort_time.py: {a.model}: {type(e).__name__}: {msg}")
    print(f"ort min_ms={min(times):.3f} median_ms={statistics.median(times):.3f} runs={a.runs}")


if __name__ == "__main__":
    main()
