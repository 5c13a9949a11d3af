#!/bin/sh
# The frontend's speed figures (issue 3): importing nasnetalarge.graph.onnx
# (target <= 2 s) and one forward pass of resnet50 on the reference executor
# (target <= 3 s on 2 cores), each the best of three runs of `tso run`.
#   experiments/frontend_bench.sh [TSO_BINARY] [MODELS_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tso=${1:-$root/build/tso}
models=${2:-$root/../shared/models}
best() {  # best() PATTERN: the smallest "<PATTERN> ... in N ms" figure on stdin
  grep "$1" | sed 's/.* in \([0-9.]*\) ms.*/\1/' | sort -n | head -1
}
for model in nasnetalarge resnet50; do
  out=$(for i in 1 2 3; do "$tso" run "$models/$model.graph.onnx" --device reference --random-weights 1 2>/dev/null; done)
  echo "$model: import $(echo "$out" | best '^loaded') ms, reference forward $(echo "$out" | best '^ran it') ms (best of 3)"
done
