// libFuzzer target for measured cost tables (runtime/common/cost_table.h),
// the files `tso profile` writes, `tso optimize --cost` reads and the cost
// cache keeps: any text gives a table or an Error; an accepted table has
// finite, non-negative times and survives writing and reading back.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/common/cost_table.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tso::Expected<tso::rt::CostTable> table = tso::rt::parse_cost_table(text, "fuzz.json");
  if (!table) return 0;
  for (const tso::rt::CostEntry& e : table->entries) {
    TSO_FUZZ_CHECK(std::isfinite(e.median_ms) && e.median_ms >= 0, "median time finite, >= 0");
    TSO_FUZZ_CHECK(std::isfinite(e.min_ms) && e.min_ms >= 0, "minimum time finite, >= 0");
  }
  tso::Expected<tso::rt::CostTable> again =
      tso::rt::parse_cost_table(tso::rt::cost_table_json(*table), "written.json");
  TSO_FUZZ_CHECK(again.ok(), "a written table parses");
  TSO_FUZZ_CHECK(again->entries.size() == table->entries.size(), "written table keeps entries");
  return 0;
}
