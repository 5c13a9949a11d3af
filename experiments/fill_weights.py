#!/usr/bin/env python3
"""Fill a graph-only ONNX model's missing weights with seeded random values.

    experiments/fill_weights.py MODEL OUT [--seed S]

The shared graph-only models (../shared/models/*.graph.onnx) keep every large
initializer's name, type and dims but mark its data EXTERNAL in a file that is
not shipped. This loads MODEL without external data and, for every initializer
whose data is external:
  - if the external file exists next to MODEL, embeds its data;
  - if not, fills it with seeded random float32 values: uniform in
    +-1/sqrt(fan_in), fan_in = product of the dims after the first, for
    rank >= 2; uniform in [0.5, 1.5] for rank 1 (and rank 0).
It then clears the external-data fields and saves a self-contained OUT (with
its weights in OUT.data beside it when the model would pass protobuf's 2 GB
limit). Each tensor's values depend only on the seed and its name, so the
same seed gives the same weights whatever the initializer order.
"""
import argparse
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.external_data_helper import uses_external_data

PROTOBUF_LIMIT = 2**31 - 1
# Leave room for the graph itself when deciding whether OUT fits in one file.
INLINE_LIMIT = PROTOBUF_LIMIT - 64 * 2**20


def random_tensor(name, dims, seed):
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    if len(dims) >= 2:
        fan_in = int(np.prod(dims[1:]))
        bound = 1.0 / np.sqrt(max(fan_in, 1))
        return rng.uniform(-bound, bound, size=dims).astype(np.float32)
    return rng.uniform(0.5, 1.5, size=dims).astype(np.float32)


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
        values = random_tensor(t.name, dims, seed)
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
