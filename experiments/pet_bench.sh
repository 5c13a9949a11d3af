#!/usr/bin/env bash
# Partial equivalence on tso's CPU runtime (issue 15): per model and batch,
# the input file and the files `tso optimize --device cpu` makes with the
# fully equivalent rules only and with the partial rules too, timed end to
# end in alternating rounds (../shared/MEASURING.md); which partial rules
# fired, their corrected boxes and the correction's measured time.
#
#   experiments/pet_bench.sh [--models csrnet,resnet18,inception_v3,bert_base_seq128]
#       [--batches 1,16] [--rounds R] [--runs K] [--heavy-runs K] [--threads T]
#       [--cache DIR] [--out FILE.md] [--reoptimize] [--optimize-flags "..."]
#
# Run it on an idle machine: no build or other benchmark at the same time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "pet_bench.sh: no $python; run ./setup.sh first" >&2
  exit 1
fi
exec "$python" "$root/experiments/pet_bench.py" "$@"
