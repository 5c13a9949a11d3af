#!/usr/bin/env bash
# ONNX Runtime's CPU provider and tso's CPU runtime on the same ONNX files, and
# on the file `tso optimize --device cpu` makes of each, by the protocol of
# ../shared/MEASURING.md: each configuration in its own process, one untimed
# warm-up process each, then alternating rounds (ORT input, tso input, ORT
# optimized, tso optimized, ...); per configuration the minimum of the rounds'
# minimums and the median of their medians. Tables: tso / ORT on the input
# files; the optimization (tso speedup input / optimized, ORT optimized / input,
# against issue 14's targets); predicted vs measured end-to-end latency.
#
#   experiments/cpu_bench.sh [--threads T] [--rounds R] [--runs K] [--warmup W]
#       [--heavy-runs K] [--models a,b] [--models-dir DIR] [--tso BINARY]
#       [--tso-flags "..."] [--out FILE.md] [--cache DIR] [--seed S] [--timeout S]
#       [--no-optimize] [--optimize-flags "..."] [--reoptimize]
#
# Defaults: T = usable cores, R = 5, K = 20 (10 for nasnetalarge and
# bert_base_seq128), W = 5, models ../shared/models, tso build/tso (never
# built here), graph-only models filled once into build/bench_models by
# experiments/fill_weights.py, optimized files, reports and the shared cost
# cache (cpu_costs.json) there too, reused until the input or tso changes
# (--reoptimize: measure the costs and optimize again). The setting and tables
# go to stdout, progress to stderr. A model that fails on one runtime keeps
# its row (`failed: ...`). Run it on an idle machine: no build or other
# benchmark at the same time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "cpu_bench.sh: no $python; run ./setup.sh first" >&2
  exit 1
fi
exec "$python" "$root/experiments/cpu_bench.py" "$@"
