// The family table and source programs' symbolic extents.
#include "generator/mutant_families.h"

#include "generator/mutant_layouts.h"

namespace tso::gen {

Expected<SourceProgram> make_source(Rule rule) {
  Expected<Graph> g = instantiate(rule, RuleSideKind::kSource);
  if (!g) return g.error();
  SourceProgram s;
  s.var_dims = variable_dims(rule);
  s.node_dims = side_dims(rule, rule.source, *g, s.var_dims);
  s.rule = std::move(rule);
  s.graph = std::move(*g);
  return s;
}

std::span<const Family> families() {
  static constexpr Family kFamilies[] = {
      {"stack", stack_mutants},       {"tile", tile_mutants},   {"interleave", interleave_mutants},
      {"pad_even", pad_even_mutants}, {"merge", merge_mutants}, {"roundtrip", roundtrip_mutants},
  };
  return kFamilies;
}

}  // namespace tso::gen
