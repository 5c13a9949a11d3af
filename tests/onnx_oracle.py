"""Outside oracles for the frontend tests: the ONNX checker and ONNX Runtime.

  onnx_oracle.py check MODEL              onnx.checker.check_model(full_check=True)
  onnx_oracle.py ort MODEL INPUT_DIR OUT  runs MODEL on input_K.pb with ONNX Runtime
                                          (CPU) and writes output_K.pb into OUT
Exit status 0 on success; errors go to stderr.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def check(model_path):
    onnx.checker.check_model(onnx.load(model_path), full_check=True)


def ort(model_path, input_dir, out_dir):
    import onnxruntime

    opts = onnxruntime.SessionOptions()
    opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = onnxruntime.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    feeds = {}
    for k, inp in enumerate(sess.get_inputs()):
        t = onnx.TensorProto()
        with open(os.path.join(input_dir, f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[inp.name] = numpy_helper.to_array(t)
    outs = sess.run(None, feeds)
    os.makedirs(out_dir, exist_ok=True)
    for k, (o, value) in enumerate(zip(sess.get_outputs(), outs)):
        t = numpy_helper.from_array(np.asarray(value), o.name)
        with open(os.path.join(out_dir, f"output_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"check": check, "ort": ort}[cmd](*args)
