// libFuzzer target for rule files (substitutions/rules.h): any text gives a
// rule set or an Error; an accepted set prints to text that parses back to
// the same set, and every side of every rule instantiates at its example
// shapes or fails with an Error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "substitutions/rules.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tso::Expected<tso::RuleSet> set = tso::parse_rules(text, "fuzz.rules");
  if (!set) return 0;
  std::string printed = tso::print_rules(*set);
  tso::Expected<tso::RuleSet> again = tso::parse_rules(printed, "printed.rules");
  TSO_FUZZ_CHECK(again.ok(), "a printed rule set parses");
  TSO_FUZZ_CHECK(*again == *set, "parse_rules(print_rules(s)) == s");
  for (const tso::Rule& rule : set->rules) {
    for (tso::RuleSideKind side : {tso::RuleSideKind::kSource, tso::RuleSideKind::kTarget,
                                   tso::RuleSideKind::kCorrected}) {
      (void)tso::instantiate(rule, side);
    }
    (void)tso::structure_key(rule);
  }
  return 0;
}
