// libFuzzer target for the generator's op-set files (generator/op_set.h):
// any text gives an op set or an Error, never a crash or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "generator/op_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tso::gen::parse_op_set(text, "fuzz.ops");
  return 0;
}
