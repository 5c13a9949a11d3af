#!/usr/bin/env bash
# Runs every test of the build made by ./setup.sh. GPU tests (label `gpu`)
# skip, saying why, where no GPU is visible.
set -euo pipefail
cd "$(dirname "$0")"
exec ctest --test-dir build --output-on-failure -j2 "$@"
