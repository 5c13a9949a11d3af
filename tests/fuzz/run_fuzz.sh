#!/bin/sh
# Builds the importer's libFuzzer target with clang (ASan + UBSan) and runs it.
#   run_fuzz.sh SOURCE_DIR WORK_DIR SECONDS
# Exits 77 (CTest: skipped) when clang or libFuzzer is missing, saying why.
set -eu
src=$1 work=$2 seconds=$3
cxx=${TSO_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "skipped: $cxx not found (install clang and libclang-rt-dev for libFuzzer)"
  exit 77
fi
mkdir -p "$work/obj" "$work/corpus"
export FUZZ_CXX="$cxx"
export FUZZ_FLAGS="-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -DONNX_NAMESPACE=onnx -DONNX_ML=1 -DTSO_FRONTEND_VERSION=\"fuzz\" -I$src"
probe='extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }'
if ! echo "$probe" | "$cxx" -x c++ -fsanitize=fuzzer - -o "$work/probe" 2>/dev/null; then
  echo "skipped: $cxx cannot link -fsanitize=fuzzer (install libclang-rt-dev)"
  exit 77
fi
# Compile core, the frontend and the target, two at a time, only what changed.
newest_header=$(ls -t "$src"/core/*.h "$src"/frontend/*.h | head -1)
for f in "$src"/core/*.cc "$src"/frontend/*.cc "$src"/tests/fuzz/onnx_import_fuzz.cc; do
  case "$f" in *_test.cc) continue ;; esac
  o="$work/obj/$(echo "$f" | sed "s|$src/||; s|/|_|g").o"
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then
    echo "$f $o"
  fi
done | xargs -r -P 2 -n 2 sh -c '$FUZZ_CXX $FUZZ_FLAGS -c "$0" -o "$1"'
"$cxx" -fsanitize=fuzzer,address,undefined "$work"/obj/*.o -lonnx -lonnx_proto -lprotobuf -o "$work/onnx_import_fuzz"
# Seeds: small real models, conformance test models, and every input that
# once crashed the importer (tests/fuzz/regressions), so each is re-run first.
for m in "$src"/tests/fuzz/regressions/*.onnx "$src"/../shared/models/squeezenet1_1.graph.onnx /usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx \
         /usr/share/libonnx-testdata/data/node/test_slice/model.onnx /usr/share/libonnx-testdata/data/node/test_reshape_reduced_dims/model.onnx; do
  [ -f "$m" ] && cp "$m" "$work/corpus/$(echo "$m" | md5sum | cut -c1-12).onnx"
done
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$work/onnx_import_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 \
  -print_final_stats=1 "$work/corpus"
