#!/usr/bin/env python3
"""Fill a graph-only ONNX model's missing weights with seeded random values.

    experiments/fill_weights.py MODEL OUT [--seed S]

The shared graph-only models (../shared/models/*.graph.onnx) keep every large
initializer's name, type and dims but mark its data EXTERNAL in a file that is
not shipped. This loads MODEL without external data and, for every initializer
whose data is external:
  - if the external file exists next to MODEL, embeds its data;
  - if not, fills it with the seeded float32 values `tso run MODEL
    --random-weights S` gives it (frontend/random_weights.cc), bit for bit,
    so that a filled copy and the graph-only model compute the same
    function: what the first node reading the tensor does with it decides
    the distribution (He scale, standard deviation sqrt(2 / fan_in), for
    tensors of rank >= 2; 1 + small noise for a BatchNormalization or
    LayerNormalization scale; [0.5, 1.5] for a BatchNormalization variance;
    standard deviation 0.01 for other vectors), so activations neither
    vanish nor explode through deep networks and the outputs depend on the
    inputs (uniform in +-1/sqrt(fan_in) weights with biases in [0.5, 1.5]
    left Inception-v3's and NASNet-A's outputs the same for any input, which
    blinds any numerical check of a rewrite).
It then clears the external-data fields and saves a self-contained OUT (with
its weights in OUT.data beside it when the model would pass protobuf's 2 GB
limit). Each tensor's values depend only on the seed, its name, its shape and
its first reader, so the same seed gives the same weights whatever the
initializer order.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.external_data_helper import uses_external_data

PROTOBUF_LIMIT = 2**31 - 1
# Leave room for the graph itself when deciding whether OUT fits in one file.
INLINE_LIMIT = PROTOBUF_LIMIT - 64 * 2**20


GOLDEN = np.uint64(0x9E3779B97F4A7C15)
SQRT3 = float(np.sqrt(3.0))


def name_hash(name):
    """FNV-1a of the name's bytes, as frontend/random_weights.cc hashes it."""
    h = 0xCBF29CE484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def uniforms(seed, name, n):
    """The frontend's n draws in [0, 1): splitmix64 from seed ^ hash(name)."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed ^ name_hash(name)) + np.arange(1, n + 1, dtype=np.uint64) * GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def fan_in(dims, use):
    op, _, trans_b = use
    if op in ("Conv", "ConvTranspose") or len(dims) != 2:
        return max(int(np.prod(dims[1:], dtype=np.int64)), 1)
    if op == "Gemm":
        return max(dims[1] if trans_b else dims[0], 1)
    return max(dims[0], 1)  # MatMul's B and embeddings: [K, N]


def random_tensor(name, dims, seed, use):
    """The values of frontend/random_weights.cc's random_weight for a float32 tensor."""
    op, index, _ = use
    u = uniforms(seed, name, int(np.prod(dims, dtype=np.int64)))
    unit = (2.0 * u - 1.0) * SQRT3
    if op == "BatchNormalization" and index == 4:
        v = 0.5 + u
    elif op in ("BatchNormalization", "LayerNormalization") and index == 1:
        v = 1.0 + 0.01 * unit
    elif len(dims) >= 2:
        v = np.sqrt(2.0 / fan_in(dims, use)) * unit
    else:
        v = 0.01 * unit
    return v.astype(np.float32).reshape(dims)


def first_uses(graph):
    """Per tensor name, (op_type, input index, Gemm transB) of the first node reading it."""
    uses = {}
    for node in graph.node:
        trans_b = node.op_type == "Gemm" and any(
            a.name == "transB" and a.i != 0 for a in node.attribute)
        for k, name in enumerate(node.input):
            if name and name not in uses:
                uses[name] = (node.op_type, k, trans_b)
    return uses


def external_file(tensor, base_dir):
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    path = os.path.join(base_dir, location) if location else ""
    return path if path and os.path.isfile(path) else None


def clear_external(tensor):
    del tensor.external_data[:]
    tensor.data_location = TensorProto.DEFAULT


def fill(model, base_dir, seed):
    """Returns (filled, embedded) counts; raises ValueError on a tensor it cannot fill."""
    filled = embedded = 0
    uses = first_uses(model.graph)
    for t in model.graph.initializer:
        if not uses_external_data(t):
            continue
        if external_file(t, base_dir):
            onnx.external_data_helper.load_external_data_for_tensor(t, base_dir)
            clear_external(t)
            embedded += 1
            continue
        if t.data_type != TensorProto.FLOAT:
            raise ValueError(f"initializer '{t.name}' is external and missing, and its type "
                             f"{TensorProto.DataType.Name(t.data_type)} is not float32")
        dims = [int(d) for d in t.dims]
        values = random_tensor(t.name, dims, seed, uses.get(t.name, ("", 0, False)))
        clear_external(t)
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.raw_data = values.tobytes()
        filled += 1
    # Anything else still external (a Constant node's tensor, a subgraph's
    # initializer) is beyond this script: say so rather than write a model
    # that fails to load.
    for t in onnx.external_data_helper._get_all_tensors(model):
        if uses_external_data(t):
            raise ValueError(f"tensor '{t.name}' still refers to external data (not a top-level "
                             "initializer); fill_weights.py fills initializers only")
    return filled, embedded


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    model = onnx.load(a.model, load_external_data=False)
    try:
        filled, embedded = fill(model, os.path.dirname(os.path.abspath(a.model)), a.seed)
    except ValueError as e:
        sys.exit(f"fill_weights.py: {a.model}: {e}")
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    size = model.ByteSize()
    if size > INLINE_LIMIT:
        location = os.path.basename(a.out) + ".data"
        onnx.save_model(model, a.out, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=location, size_threshold=1024)
        where = f"weights in {location}"
    else:
        onnx.save_model(model, a.out)
        where = "self-contained"
    print(f"{a.model}: {filled} initializers filled (seed {a.seed}), {embedded} embedded from "
          f"their files; wrote {a.out} ({size / 2**20:.1f} MiB, {where})")


if __name__ == "__main__":
    main()
