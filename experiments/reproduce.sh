#!/usr/bin/env bash
# The project's results in one command: TASO's table (ONNX Runtime and tso's
# CPU runtime on each model and on tso optimize's output, predicted and
# measured speedups, published figures beside), PET's table (fully equivalent
# rules vs partial ones), the pipeline (generation, verification, search
# times) and, where nvidia-smi lists a GPU, gpu_bench.sh; OUT/results.md and
# PNG plots. Interrupted, the same command resumes (finished rows are kept in
# OUT/rows). Run it on an idle machine.
#
#   experiments/reproduce.sh [--quick] [--out DIR] [--models DIR] [--rounds R]
#       [--rows PATTERNS] [--skip PATTERNS] [--list] [--no-build]
#
# --quick: three models, batch 1, N=3, 3 rounds (under 10 minutes, an
# estimate); the full run: every model, batches 1 and 16, N=3 and 4, 5 rounds.
# See experiments/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "reproduce.sh: no $python; run ./setup.sh first" >&2
  exit 1
fi
exec "$python" "$root/experiments/reproduce.py" "$@"
