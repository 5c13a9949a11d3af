#!/bin/sh
# The search's lookahead past plateaus (optimizer/search.h) on the shared
# models: `tso optimize` with the analytic model of an H100
# (optimizer/devices/h100.json) and the default rules, once with the
# lookahead off (--lookahead-budget 0) and once with its defaults; per model
# the predicted cost before and after each, the search time, the expansions
# and, with the lookahead on, its runs, finds and expanded graphs. The speed
# check is off (--no-verify-speed): only the search is compared.
#   experiments/lookahead_models.sh [MODEL...]   (default: every shared model)
# TSO_BUILD names the build directory (default build/), TSO_MODELS the
# shared models' directory. Times depend on the machine's load: run it on an
# idle machine, or say how loaded it was (the first line prints the load).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tso=${TSO_BUILD:-$root/build}/tso
models=${TSO_MODELS:-$root/../shared/models}
device=$root/optimizer/devices/h100.json
[ -x "$tso" ] || { echo "lookahead_models.sh: no $tso; build the tso target" >&2; exit 1; }
if [ $# -eq 0 ]; then
  set -- "$models"/squeezenet1_1.onnx "$models"/squeezenet1_1.graph.onnx \
    "$models"/resnet50.graph.onnx "$models"/resnext50_32x4d.graph.onnx \
    "$models"/inception_v3.graph.onnx "$models"/nasnetalarge.graph.onnx \
    "$models"/bert_base_seq128.graph.onnx
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run: its JSON report in $tmp/$2.json, or the error in the row.
optimize() {
  "$tso" optimize "$1" -o "$tmp/out.onnx" --device "$device" --random-weights 7 \
    --no-verify-speed -q --report "$tmp/$2.json" $3 >/dev/null 2>"$tmp/err"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-27s %9s %9s %9s %8s %8s %5s %5s %-9s %-9s %9s\n' model cost_in cost_off cost_on \
  off_s on_s exp_o exp_n stop_off stop_on lookahead
for m in "$@"; do
  name=$(basename "$m")
  [ -f "$m" ] || { echo "$name: not present" >&2; continue; }
  if ! optimize "$m" off "--lookahead-budget 0" || ! optimize "$m" on ""; then
    printf '%-27s failed: %s\n' "$name" "$(tail -1 "$tmp/err" | cut -c1-160)"
    continue
  fi
  python3 - "$tmp/off.json" "$tmp/on.json" "$name" <<'PY'
import json, sys
off, on = (json.load(open(p)) for p in sys.argv[1:3])
so, sn = off["search"], on["search"]
la = sn["lookahead"]
print(f'{sys.argv[3]:<27} {off["predicted_cost_us"]["before"]:>9.2f} '
      f'{off["predicted_cost_us"]["after"]:>9.2f} {on["predicted_cost_us"]["after"]:>9.2f} '
      f'{so["seconds"]:>8.3f} {sn["seconds"]:>8.3f} {so["expansions"]:>5} {sn["expansions"]:>5} '
      f'{so["stop_reason"]:<9} {sn["stop_reason"]:<9} '
      f'{la["found"]}/{la["runs"]}, {la["expansions"]} exp')
PY
done
echo "cost: predicted us (in; after the search with the lookahead off; on); off_s/on_s: search"
echo "seconds; exp_o/exp_n: expansions off/on; lookahead: runs that found a cheaper graph/runs,"
echo "graphs the lookahead expanded"
