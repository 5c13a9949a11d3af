#!/usr/bin/env bash
# TASO's table on the GPU: tso's CUDA runtime on each model at batch 1 and on
# the file `tso optimize --device cuda` makes of it, beside PyTorch eager,
# eager captured in a CUDA graph and torch.compile (reduce-overhead), by the
# protocol of ../shared/MEASURING.md: each configuration a fresh process, one
# untimed warm-up process each, then alternating rounds; per configuration
# the minimum of the rounds' minimums and the median of their medians.
#
#   experiments/gpu_bench.sh [--models a,b] [--models-dir DIR] [--tso BINARY]
#       [--python PYTORCH_PYTHON] [--rounds R] [--runs K] [--warmup W]
#       [--cache DIR] [--seed S] [--timeout S] [--optimize-flags "..."]
#       [--reoptimize]
#
# Defaults: TASO's seven models (NasRNN from `tso zoo`), ../shared/models
# (graph-only files filled with seeded weights), build/tso (never built here),
# R = 5, K = 200, W = 20, cache build/bench_models. PyTorch runs in $PYTHON,
# else /opt/torch/.venv/bin/python where it exists (../shared/GPU.md); this
# script itself runs in the project's venv where there is one, else there.
# See experiments/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  python=${PYTHON:-python3}
  [[ -z "${PYTHON:-}" && -x /opt/torch/.venv/bin/python ]] && python=/opt/torch/.venv/bin/python
fi
case "${1:-}" in
  -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
esac
exec "$python" "$root/experiments/gpu_bench.py" "$@"
