// libFuzzer target for the graph text format (core/text_format.h): any text
// gives a graph or an Error, never a crash or undefined behaviour, and a
// graph it accepts prints to text that parses back to the same graph.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text_format.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tso::Expected<tso::Graph> g = tso::parse_graph(text, "fuzz.tso");
  if (!g) return 0;
  std::string printed = tso::print(*g);
  tso::Expected<tso::Graph> again = tso::parse_graph(printed, "printed.tso");
  TSO_FUZZ_CHECK(again.ok(), "a printed graph parses");
  TSO_FUZZ_CHECK(*again == *g, "parse(print(g)) == g");
  TSO_FUZZ_CHECK(tso::print(*again) == printed, "printing is deterministic");
  return 0;
}
