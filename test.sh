#!/usr/bin/env bash
# Runs every test of the build made by ./setup.sh. GPU tests (label `gpu`)
# skip, saying why, where no GPU is visible; the reason is repeated at the end.
set -euo pipefail
cd "$(dirname "$0")"
status=0
ctest --test-dir build --output-on-failure -j2 "$@" || status=$?
log=build/Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q "no usable GPU" "$log"; then
  echo "test: gpu tests skipped: $(grep -ho 'no usable GPU: .*' "$log" | sort -u | head -1)"
fi
exit $status
