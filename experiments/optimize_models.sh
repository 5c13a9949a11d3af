#!/usr/bin/env bash
# The shared models optimized by `tso optimize --device cpu` with the rule
# files and search of a baseline revision (before) and of today (after): per
# model the operators and the applied rewrites by kind, then the end-to-end
# latency of the input and both optimized files on tso's CPU runtime, measured
# in alternating rounds (experiments/optimize_models.py; --help lists the
# options). Run it on an idle machine: no build or other benchmark beside it.
#   experiments/optimize_models.sh [--models a,b] [--baseline REV] [--no-measure] [--out FILE.md]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "optimize_models.sh: no $python; run ./setup.sh first" >&2
  exit 1
fi
exec "$python" "$root/experiments/optimize_models.py" "$@"
