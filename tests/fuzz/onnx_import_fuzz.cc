// libFuzzer target for the ONNX importer: any byte string must give a model
// or an Error, never a crash, a leak, undefined behaviour or a runaway
// allocation. Built with clang -fsanitize=fuzzer,address,undefined by
// run_fuzz.sh, which the CTest test `onnx_import_fuzz` runs for 60 s.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frontend/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tso::ImportOptions options;
  options.max_fold_elements = 1 << 16;  // keeps folded constants small
  options.random_weights_seed = 1;
  options.max_random_weight_bytes = int64_t{256} << 20;  // within -rss_limit_mb
  auto r = tso::import_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "fuzz.onnx", "/nonexistent-fuzz-dir", options);
  (void)r;
  return 0;
}
