#!/usr/bin/env bash
# tso's CUDA runtime beside PyTorch (eager, and eager captured in a CUDA
# graph, cudnn.benchmark and TF32 on) at batch 1 on the reference models,
# measured in the same run on the GPU machine:
#
#   experiments/gpu_bench.sh [--tso BINARY] [--models DIR] [--iters N]
#
# Without --tso it uses build/tso, building it first (cmake + ninja) when it
# is missing. Models default to ../shared/models (graph-only ONNX files; their
# large weights are filled with seeded random values). PyTorch comes from
# $PYTHON (default: /opt/torch/.venv/bin/python where it exists, else python3).
# Prints one row per model: tso's median latency, PyTorch's two, and the
# ratio tso / (PyTorch + CUDA graph).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tso=""
models="$root/../shared/models"
iters=200
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tso) tso=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z "$tso" ]]; then
  tso="$root/build/tso"
  if [[ ! -x "$tso" ]]; then
    cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
    cmake --build "$root/build" --target tso -j"$(nproc)" >&2
  fi
fi
python=${PYTHON:-python3}
[[ -z "${PYTHON:-}" && -x /opt/torch/.venv/bin/python ]] && python=/opt/torch/.venv/bin/python

names=(resnet50 resnext50_32x4d inception_v3 squeezenet1_1 bert_base_seq128 nasnetalarge)
declare -A eager graph
while read -r name e g; do
  eager[$name]=$e
  graph[$name]=$g
done < <("$python" "$root/experiments/torch_bench.py" --iters "$iters" "${names[@]}")

printf '%-18s %10s %14s %18s %10s\n' model "tso (ms)" "torch eager" "torch+CUDA graph" "tso/graph"
for name in "${names[@]}"; do
  out=$("$tso" run "$models/$name.graph.onnx" --device cuda --random-weights 1 --iters "$iters")
  ms=$(sed -n 's/^latency *median \([0-9.]*\) ms.*/\1/p' <<<"$out")
  if [[ -z "$ms" ]]; then
    echo "gpu_bench.sh: no latency in tso's output for $name:" >&2
    echo "$out" >&2
    exit 1
  fi
  ratio=$(awk -v a="$ms" -v b="${graph[$name]}" 'BEGIN { printf "%.2f", a / b }')
  printf '%-18s %10s %14s %18s %10s\n' "$name" "$ms" "${eager[$name]}" "${graph[$name]}" "$ratio"
done
