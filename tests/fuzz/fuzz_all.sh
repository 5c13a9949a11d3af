#!/bin/sh
# Runs every fuzz target of the sanitizer build (or the TARGETs named) for
# RUNS executions each (default: one million), one after the other, and
# prints executions, time and coverage per target. Build first with
# tests/sanitize.sh.
#   tests/fuzz/fuzz_all.sh [RUNS [TARGET...]]     e.g. fuzz_all.sh 1000000 onnx_import_fuzz
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-1000000}
[ $# -gt 0 ] && shift
targets=${*:-onnx_import_fuzz graph_text_fuzz rules_fuzz op_set_fuzz cost_table_fuzz device_fuzz}
build=$src/build-asan/tests/fuzz
[ -d "$build" ] || { echo "fuzz_all.sh: $build missing: run tests/sanitize.sh first" >&2; exit 2; }
printf '%-18s %12s %8s %8s %s\n' target executions seconds cov result
for name in $targets; do
  [ -x "$build/$name" ] || { echo "fuzz_all.sh: no fuzz target $build/$name" >&2; exit 2; }
  log=$build/$name.all.log
  start=$(date +%s)
  if sh "$src/tests/fuzz/run.sh" "$build/$name" "$src" "$build/$name.work" -runs="$runs" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED: see $log"
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  printf '%-18s %12s %8s %8s %s\n' "$name" "$execs" "$(($(date +%s) - start))" "$cov" "$result"
done
