#!/bin/sh
# Differential fuzzing of the optimizer over 10,000 seeded graphs
# (tests/optimizer_diff.h), at the lowest CPU priority: a progress line on
# stderr every 500 graphs, then the summary (graphs, rewrites fired by kind
# and by rule file, mismatches by stage). Every mismatch is printed with its
# seed and the one-line command that reproduces it; exit 1 when there is one.
#
#   tests/optimizer_diff_fuzz.sh [BUILD_DIR [COUNT [FIRST_SEED]]]
#
# Build the program first: cmake --build build --target optimizer_diff_fuzz
set -eu
build=${1:-build}
count=${2:-10000}
seed=${3:-1}
fuzz="$build/tests/optimizer_diff_fuzz"
if [ ! -x "$fuzz" ]; then
  echo "optimizer_diff_fuzz.sh: $fuzz not built (cmake --build $build --target optimizer_diff_fuzz)" >&2
  exit 2
fi
exec nice -n 19 "$fuzz" --seed "$seed" --count "$count" --progress 500 --min-rewrites 2
