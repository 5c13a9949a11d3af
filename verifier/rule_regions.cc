#include "verifier/rule_regions.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "verifier/correction.h"

namespace tso::verifier {
namespace {

// The correction block of `corrected`, whose output k ends in
// `writes[k]` update_slice nodes on the mutant's output k: their patches,
// and every node the patches need, become the block's statements.
Expected<Correction> correction_block(const Rule& rule, const Graph& corrected,
                                      const std::vector<int>& writes) {
  Correction c;
  std::map<int, int> side_index;  // graph node -> correction statement
  // Emits the statements `t` needs, depth first, and returns its reference.
  std::function<Expected<RuleRef>(TensorRef)> emit = [&](TensorRef t) -> Expected<RuleRef> {
    const Node& n = corrected.node(t.node);
    if (n.op == Op::Input) {
      for (size_t v = 0; v < rule.inputs.size(); ++v)
        if (rule.inputs[v].name == n.name)
          return RuleRef{RuleRef::Kind::kVar, static_cast<int>(v), 0};
      return Error{"correction reads " + n.name + ", which is not a variable of rule " + rule.name};
    }
    if (auto it = side_index.find(t.node); it != side_index.end())
      return RuleRef{RuleRef::Kind::kNode, it->second, t.output};
    RuleNode rn;
    rn.op = n.op;
    rn.outputs = static_cast<int>(n.outs.size());
    for (const TensorRef& a : n.args) {
      Expected<RuleRef> r = emit(a);
      if (!r) return r;
      rn.args.push_back(*r);
    }
    for (const auto& [key, value] : n.attrs.entries()) {
      PatternAttr a;
      a.key = key;
      a.value = value;
      rn.attrs.push_back(std::move(a));
    }
    int index = static_cast<int>(c.side.nodes.size());
    c.side.nodes.push_back(std::move(rn));
    side_index[t.node] = index;
    return RuleRef{RuleRef::Kind::kNode, index, t.output};
  };
  for (size_t k = 0; k < writes.size(); ++k) {
    std::vector<const Node*> chain;  // outermost first
    TensorRef t = corrected.outputs()[k].ref;
    for (int w = 0; w < writes[k]; ++w) {
      const Node& n = corrected.node(t.node);
      if (n.op != Op::UpdateSlice)
        return Error{"rule " + rule.name + ": output " + std::to_string(k) +
                     " of the corrected target is not written by its correction"};
      chain.push_back(&n);
      t = n.args[0];
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      Expected<RuleRef> patch = emit((*it)->args[1]);
      if (!patch) return patch.error();
      CorrectionBox box;
      box.output = static_cast<int>(k);
      for (int64_t s : (*it)->attrs.ints(AttrKey::starts)) box.at.push_back(ShapeExpr::lit(s));
      c.side.outputs.push_back(*patch);
      c.boxes.push_back(std::move(box));
    }
  }
  return c;
}

}  // namespace

Expected<Rule> decide_rule(const Rule& rule, const RegionOptions& options,
                           double* false_equal_bound) {
  Expected<Graph> source = instantiate(rule, RuleSideKind::kSource);
  if (!source) return source.error();
  Expected<Graph> mutant = instantiate(rule, RuleSideKind::kTarget);
  if (!mutant) return mutant.error();
  Expected<RegionResult> regions = decide_regions(*source, *mutant, options);
  if (!regions) return Error{"rule " + rule.name + ": " + regions.error().message};
  if (false_equal_bound) *false_equal_bound = regions->false_equal_bound;
  Rule out = rule;
  out.correction = {};
  out.status.detail = std::to_string(regions->boxes);
  if (regions->wrong.empty()) {
    out.status.kind = RuleStatus::Kind::kExact;
    return out;
  }
  Expected<Graph> corrected = correct(*source, *mutant, regions->wrong);
  if (!corrected) return Error{"rule " + rule.name + ": " + corrected.error().message};
  std::vector<int> writes(mutant->outputs().size(), 0);
  for (const Box& b : regions->wrong) ++writes[b.output];
  Expected<Correction> c = correction_block(rule, *corrected, writes);
  if (!c) return c.error();
  out.status.kind = RuleStatus::Kind::kPartial;
  out.correction = std::move(*c);
  return out;
}

}  // namespace tso::verifier
