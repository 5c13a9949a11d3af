#!/bin/sh
# `tso optimize` on the seven shared models with the committed default rules
# and default search settings: one table row per model (operators and
# predicted cost before/after, search time, expansions and why it stopped,
# and the classic rewrites applied by kind) from the JSON reports. A model the
# optimizer refuses gets its error in the row.
#   experiments/optimize_models.sh [BUILD_DIR] [EXTRA tso optimize FLAGS...]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
models=${TSO_MODELS:-$root/../shared/models}
tso=$build/tso
[ -x "$tso" ] || { echo "optimize_models.sh: no $tso; build the tso target" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-27s %7s %7s %9s %9s %8s %5s %-9s %5s %5s %5s %5s %5s\n' model ops_in ops_out \
  cost_in cost_out search_s exp stopped fuse mconv mmat bn enl
for m in squeezenet1_1.onnx squeezenet1_1.graph.onnx resnet50.graph.onnx \
         resnext50_32x4d.graph.onnx inception_v3.graph.onnx nasnetalarge.graph.onnx \
         bert_base_seq128.graph.onnx; do
  [ -f "$models/$m" ] || { echo "$m: not present in $models" >&2; continue; }
  rm -f "$tmp/r.json"
  if "$tso" optimize "$models/$m" -o "$tmp/out.onnx" --report "$tmp/r.json" --random-weights 7 \
       -q "$@" >/dev/null 2>"$tmp/err"; then
    python3 - "$tmp/r.json" "$m" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o, c, s, k = r["operators"], r["predicted_cost_us"], r["search"], r["classic_rewrites"]
print(f'{sys.argv[2]:<27} {o["before"]:>7} {o["after"]:>7} {c["before"]:>9.1f} {c["after"]:>9.1f} '
      f'{s["seconds"]:>8.3f} {s["expansions"]:>5} {s["stop_reason"]:<9} '
      f'{k["fuse_activation"]:>5} {k["merge_convolutions"]:>5} {k["merge_matmuls"]:>5} '
      f'{k["fold_batchnorm"]:>5} {k["enlarge_kernel"]:>5}')
PY
  else
    printf '%-27s failed (exit %s): %s\n' "$m" "$?" "$(tail -1 "$tmp/err" | cut -c1-160)"
  fi
done
echo "fuse: conv+activation fused; mconv/mmat: conv/matmul merges; bn: batchnorm folds; enl: kernels enlarged"
