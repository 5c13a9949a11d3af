#!/usr/bin/env python3
"""Int8 versions of models in the QDQ format, as ONNX Runtime's quantizer writes them.

    experiments/quantize_models.py OUT_DIR [--models a,b] [--models-dir DIR]
        [--filled-dir DIR] [--seed S] [--calibration N] [--per-tensor] [--reduce-range]

For each model (default: the convolutional ones of ../shared/models:
squeezenet1_1, resnet50, resnext50_32x4d, inception_v3), this takes the model
with its weights (a graph-only model filled by experiments/fill_weights.py
with --seed S, cached in --filled-dir, build/bench_models by default, as
experiments/cpu_bench.sh fills them) and runs onnxruntime.quantization's
quantize_static on it: QDQ format, u8 activations and i8 weights (per output
channel unless --per-tensor), calibrated by min-max on N seeded inputs
(floats uniform in [0, 1), token ids in [0, 100), masks of ones; default 8).
--reduce-range gives the weights 7 bits ([-64, 64]), as ONNX Runtime advises
for CPUs without VNNI: there tso's CPU runtime runs such products on its int8
kernels too (runtime/cpu/README.md).
OUT_DIR/<model>.onnx is the int8 model; experiments/cpu_bench.sh --models-dir
OUT_DIR times it on ONNX Runtime (its int8 kernels) and on tso's CPU runtime.
Progress goes to stderr.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["squeezenet1_1", "resnet50", "resnext50_32x4d", "inception_v3"]


class RandomInputs(CalibrationDataReader):
    """N seeded inputs: floats uniform in [0, 1); integer inputs (token ids,
    masks) uniform in [0, 100), and 1 for inputs named like a mask."""

    def __init__(self, model, n, seed):
        rng = np.random.default_rng(seed)
        stored = {t.name for t in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in stored]

        def feed(i):
            shape = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]
            if i.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
                return rng.random(shape, dtype=np.float32)
            if "mask" in i.name:
                return np.ones(shape, dtype=np.int64)
            return rng.integers(0, 100, shape, dtype=np.int64)

        self.feeds = iter([{i.name: feed(i) for i in inputs} for _ in range(n)])

    def get_next(self):
        return next(self.feeds, None)


def with_weights(name, models_dir, filled_dir, seed):
    """The model's file with its weights: the shared one, or a filled copy."""
    full = os.path.join(models_dir, name + ".onnx")
    if os.path.exists(full):
        return full
    graph_only = os.path.join(models_dir, name + ".graph.onnx")
    if not os.path.exists(graph_only):
        sys.exit(f"quantize_models.py: no {full} and no {graph_only}")
    filled = os.path.join(filled_dir, f"{name}.seed{seed}.onnx")
    if not os.path.exists(filled) or os.path.getmtime(filled) < os.path.getmtime(graph_only):
        os.makedirs(filled_dir, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "fill_weights.py"),
                        graph_only, filled, "--seed", str(seed)], check=True)
    return filled


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--filled-dir", default=os.path.join(ROOT, "build", "bench_models"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calibration", type=int, default=8)
    ap.add_argument("--per-tensor", action="store_true")
    ap.add_argument("--reduce-range", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for name in a.models.split(","):
        source = with_weights(name, a.models_dir, a.filled_dir, a.seed)
        out = os.path.join(a.out_dir, name + ".onnx")
        print(f"quantizing {name} ({source}) -> {out}", file=sys.stderr)
        quantize_static(source, out, RandomInputs(onnx.load(source), a.calibration, a.seed),
                        quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=not a.per_tensor,
                        reduce_range=a.reduce_range)


if __name__ == "__main__":
    main()
