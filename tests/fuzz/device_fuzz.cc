// libFuzzer target for device files (optimizer/analytic_cost.h), the
// analytic cost model's input: any text gives a device or an Error; an
// accepted device has finite positive rates and a finite launch cost, since
// every operator's predicted cost is divided by them.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "optimizer/analytic_cost.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tso::Expected<tso::opt::Device> d = tso::opt::parse_device(text, "fuzz.json");
  if (!d) return 0;
  TSO_FUZZ_CHECK(std::isfinite(d->matmul_flops) && d->matmul_flops > 0, "matmul rate");
  TSO_FUZZ_CHECK(std::isfinite(d->vector_flops) && d->vector_flops > 0, "vector rate");
  TSO_FUZZ_CHECK(std::isfinite(d->bytes_per_s) && d->bytes_per_s > 0, "memory rate");
  TSO_FUZZ_CHECK(std::isfinite(d->launch_us) && d->launch_us >= 0, "launch cost");
  return 0;
}
