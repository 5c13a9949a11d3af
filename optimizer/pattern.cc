#include "optimizer/pattern.h"

namespace tso::opt {

bool status_usable(const RuleStatus& status) {
  return status.kind == RuleStatus::Kind::kVerified || status.kind == RuleStatus::Kind::kPartial;
}

namespace {

const char* status_word(RuleStatus::Kind k) {
  switch (k) {
    case RuleStatus::Kind::kUnverified: return "unverified";
    case RuleStatus::Kind::kVerified: return "verified";
    case RuleStatus::Kind::kRefuted: return "refuted";
    case RuleStatus::Kind::kUnknown: return "unknown";
    case RuleStatus::Kind::kPartial: return "partial";
  }
  return "?";
}

}  // namespace

Expected<CompiledRule> compile_rule(const Rule& rule) {
  const RuleSide& src = rule.source;
  const int n = static_cast<int>(src.nodes.size());
  if (n == 0 || src.outputs.empty())
    return Error{"rule " + rule.name + ": the source side has no operators"};
  if (rule.status.kind == RuleStatus::Kind::kPartial)
    return Error{"rule " + rule.name + ": partial rules need their correction applied, which the "
                 "optimizer does not do yet"};
  CompiledRule c;
  c.rule = &rule;
  c.result_is_output.resize(n);
  for (int i = 0; i < n; ++i) c.result_is_output[i].assign(src.nodes[i].outputs, 0);
  for (const RuleRef& o : src.outputs) {
    if (o.kind != RuleRef::Kind::kNode)
      return Error{"rule " + rule.name + ": a source output is a variable"};
    c.result_is_output[o.index][o.output] = 1;
  }
  // The root: the node of the first output; it is usually the last operator
  // of a chain, so most of the pattern hangs below it.
  int root = src.outputs[0].index;
  c.root_op = src.nodes[root].op;
  std::vector<char> placed(n, 0), var_bound(rule.inputs.size(), 0);
  auto place = [&](const PlanStep& s) {
    c.plan.push_back(s);
    placed[s.node] = 1;
    for (const RuleRef& a : src.nodes[s.node].args)
      if (a.kind == RuleRef::Kind::kVar) var_bound[a.index] = 1;
  };
  place({PlanStep::Kind::kRoot, root, -1, 0, {}});
  while (static_cast<int>(c.plan.size()) < n) {
    bool progressed = false;
    // Down steps first: they are determined, with no candidates to try.
    for (size_t s = 0; s < c.plan.size() && !progressed; ++s) {
      const RuleNode& from = src.nodes[c.plan[s].node];
      for (size_t k = 0; k < from.args.size() && !progressed; ++k) {
        const RuleRef& a = from.args[k];
        if (a.kind == RuleRef::Kind::kNode && !placed[a.index]) {
          place({PlanStep::Kind::kDown, a.index, c.plan[s].node, static_cast<int>(k), {}});
          progressed = true;
        }
      }
    }
    for (int p = 0; p < n && !progressed; ++p) {
      if (placed[p]) continue;
      for (const RuleRef& a : src.nodes[p].args) {
        bool bound = a.kind == RuleRef::Kind::kVar ? var_bound[a.index] != 0 : placed[a.index] != 0;
        if (bound) {
          place({PlanStep::Kind::kUp, p, -1, 0, a});
          progressed = true;
          break;
        }
      }
    }
    if (!progressed)
      return Error{"rule " + rule.name + ": the source pattern is not connected"};
  }
  return c;
}

void RuleIndex::add(const RuleSet& set, const CompileOptions& options) {
  for (const Rule& r : set.rules) {
    if (!options.allow_unverified && !status_usable(r.status)) {
      skipped_.push_back({r.name, std::string("status ") + status_word(r.status.kind)});
      continue;
    }
    Expected<CompiledRule> c = compile_rule(r);
    if (!c) {
      skipped_.push_back({r.name, c.error().message});
      continue;
    }
    c->id = static_cast<int>(rules_.size());
    by_root_[static_cast<int>(c->root_op)].push_back(c->id);
    rules_.push_back(std::move(*c));
  }
}

}  // namespace tso::opt
