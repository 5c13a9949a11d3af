#!/usr/bin/env bash
# The sanitizer build: the libraries and their tests compiled by clang with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# (TSO_SANITIZE) in build-asan/, then its tests: the unit and cross-stage tests
# except those labelled `cpu-slow` or `slow` (the real models, the committed
# rule files) and `gpu`, the timing (SERIAL) tests and the tests of the `tso`
# binary (CLI), and each parser's fuzz target for TSO_FUZZ_SECONDS (60 by
# default).
#   tests/sanitize.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DTSO_SANITIZE=ON -DTSO_CUDA=OFF -DTSO_FUZZ_SECONDS="${TSO_FUZZ_SECONDS:-60}" >/dev/null
cmake --build build-asan
# Leaks are findings too.
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j2 -LE 'slow|gpu' "$@"
