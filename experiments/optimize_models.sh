#!/bin/sh
# `tso optimize` on the seven shared models, with the committed default rules
# and with the handwritten rules (--allow-unverified): prints one table row per
# model and rule set (operators and predicted cost before/after, search time
# and why it stopped) from the JSON reports. A model the optimizer refuses
# gets its error in the row.
#   experiments/optimize_models.sh [BUILD_DIR] [BUDGET] [TIME_LIMIT_S]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
budget=${2:-200}
limit=${3:-60}
models=${TSO_MODELS:-/work/shared/models}
tso=$build/tso
[ -x "$tso" ] || { echo "optimize_models.sh: no $tso; build the tso target" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-28s %-11s %9s %9s %11s %11s %9s %11s\n' model rules ops_before ops_after cost_before cost_after search_s stopped
for m in squeezenet1_1.onnx squeezenet1_1.graph.onnx resnet50.graph.onnx \
         resnext50_32x4d.graph.onnx inception_v3.graph.onnx nasnetalarge.graph.onnx \
         bert_base_seq128.graph.onnx; do
  [ -f "$models/$m" ] || { echo "$m: not present in $models" >&2; continue; }
  for rules in default handwritten; do
    set -- "$models/$m" -o "$tmp/out.onnx" --report "$tmp/r.json" --random-weights 7 -q \
      --budget "$budget" --time-limit "$limit"
    [ "$rules" = handwritten ] && set -- "$@" --allow-unverified \
      --rules "$root/substitutions/handwritten.rules" --rules "$root/substitutions/taso_n3.rules"
    rm -f "$tmp/r.json"
    if "$tso" optimize "$@" >/dev/null 2>"$tmp/err"; then
      python3 - "$tmp/r.json" "$m" "$rules" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o, c, s = r["operators"], r["predicted_cost_us"], r["search"]
print(f'{sys.argv[2]:<28} {sys.argv[3]:<11} {o["before"]:>9} {o["after"]:>9} '
      f'{c["before"]:>11.2f} {c["after"]:>11.2f} {s["seconds"]:>9.3f} {s["stop_reason"]:>11}')
PY
    else
      printf '%-28s %-11s failed (exit %s): %s\n' "$m" "$rules" "$?" "$(tail -1 "$tmp/err" | cut -c1-160)"
    fi
  done
done
