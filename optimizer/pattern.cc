#include "optimizer/pattern.h"

#include <tbb/parallel_for.h>

#include <algorithm>

#include "optimizer/reverse_rule.h"

namespace tso::opt {

bool status_usable(const RuleStatus& status) {
  return status.kind == RuleStatus::Kind::kVerified || status.kind == RuleStatus::Kind::kPartial ||
         status.kind == RuleStatus::Kind::kExact;
}

namespace {

uint64_t args_key(Op op, int a0, int a1) {
  return static_cast<uint64_t>(op) << 32 | static_cast<uint64_t>(a0 + 1) << 16 |
         static_cast<uint64_t>(a1 + 1);
}

}  // namespace

void point_at(CompiledRule* c, const Rule& rule) {
  c->rule = &rule;
  c->regions = is_region_rule(rule) ? std::make_shared<RegionTargets>(rule) : nullptr;
}

void RuleIndex::candidates(const Graph& g, const Node& n, std::vector<int>* out) const {
  out->clear();
  auto producer = [&](size_t k) {
    return k < n.args.size() ? static_cast<int>(g.node(n.args[k].node).op) : -1;
  };
  const int p0 = producer(0), p1 = producer(1);
  uint64_t keys[7];
  int count = 0;
  auto want = [&](int a0, int a1) {
    uint64_t k = args_key(n.op, a0, a1);
    if (std::find(keys, keys + count, k) == keys + count) keys[count++] = k;
  };
  for (int a0 : {p0, -1})
    for (int a1 : {p1, -1}) want(a0, a1);
  if (n.args.size() == 2 && is_commutative(n.op)) {
    want(p1, p0);
    want(p1, -1);
    want(-1, p0);
  }
  for (int i = 0; i < count; ++i)
    if (auto it = by_root_args_.find(keys[i]); it != by_root_args_.end())
      out->insert(out->end(), it->second.begin(), it->second.end());
  std::sort(out->begin(), out->end());
}

Expected<CompiledRule> compile_rule(const Rule& rule) {
  const RuleSide& src = rule.source;
  const int n = static_cast<int>(src.nodes.size());
  if (n == 0 || src.outputs.empty())
    return Error{"rule " + rule.name + ": the source side has no operators"};
  CompiledRule c;
  point_at(&c, rule);
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
  for (const RuleRef& a : src.nodes[root].args)
    c.root_arg_ops.push_back(
        a.kind == RuleRef::Kind::kVar ? -1 : static_cast<int>(src.nodes[a.index].op));
  for (const RuleVar& v : rule.inputs) {
    const std::vector<std::string>& clause = rule.ranks.vars;
    const bool lifted = std::find(clause.begin(), clause.end(), v.name) != clause.end();
    c.var_ranks.push_back(lifted ? -1 : v.type.shape.rank());
  }
  constexpr int kFar = 1 << 20;
  std::vector<char> placed(n, 0);
  std::vector<int> depth(n, 0), var_depth(rule.inputs.size(), kFar);
  auto place = [&](const PlanStep& s, int d) {
    c.plan.push_back(s);
    placed[s.node] = 1;
    depth[s.node] = d;
    c.reach = std::max(c.reach, d);
    for (const RuleRef& a : src.nodes[s.node].args) {
      if (a.kind != RuleRef::Kind::kVar) continue;
      var_depth[a.index] = std::min(var_depth[a.index], d + 1);
      c.reach = std::max(c.reach, var_depth[a.index]);
    }
  };
  place({PlanStep::Kind::kRoot, root, -1, 0, {}}, 0);
  while (static_cast<int>(c.plan.size()) < n) {
    bool progressed = false;
    // Down steps first: they are determined, with no candidates to try.
    for (size_t s = 0; s < c.plan.size() && !progressed; ++s) {
      const int from = c.plan[s].node;
      const RuleNode& from_node = src.nodes[from];
      for (size_t k = 0; k < from_node.args.size() && !progressed; ++k) {
        const RuleRef& a = from_node.args[k];
        if (a.kind == RuleRef::Kind::kNode && !placed[a.index]) {
          place({PlanStep::Kind::kDown, a.index, from, static_cast<int>(k), {}}, depth[from] + 1);
          progressed = true;
        }
      }
    }
    for (int p = 0; p < n && !progressed; ++p) {
      if (placed[p]) continue;
      for (const RuleRef& a : src.nodes[p].args) {
        // The node is a user of the tensor's producer, one edge further.
        int d = a.kind == RuleRef::Kind::kVar ? var_depth[a.index]
                                              : (placed[a.index] ? depth[a.index] : kFar);
        if (d < kFar) {
          place({PlanStep::Kind::kUp, p, -1, 0, a}, d + 1);
          progressed = true;
          break;
        }
      }
    }
    if (!progressed) return Error{"rule " + rule.name + ": the source pattern is not connected"};
  }
  return c;
}

std::optional<std::string> RuleIndex::insert(Prepared p) {
  auto [it, fresh] = by_structure_.try_emplace(std::move(p.key), static_cast<int>(rules_.size()));
  if (!fresh) return "duplicate of " + rules_[it->second].rule->name;
  if (!p.compiled) {
    by_structure_.erase(it);
    return p.compiled.error().message;
  }
  CompiledRule& c = *p.compiled;
  c.id = static_cast<int>(rules_.size());
  max_reach_ = std::max(max_reach_, c.reach);
  const std::vector<int>& a = c.root_arg_ops;
  by_root_args_[args_key(c.root_op, a.size() > 0 ? a[0] : -1, a.size() > 1 ? a[1] : -1)].push_back(
      c.id);
  by_root_[static_cast<int>(c.root_op)].push_back(c.id);
  rules_.push_back(std::move(c));
  return std::nullopt;
}

RuleIndex::Prepared RuleIndex::prepare(const Rule& r) {
  return {structure_key(r), compile_rule(r)};
}

// Keying and compiling are the costly part of adding a rule file and are
// independent per rule, so they run in parallel; the insertions follow in
// file order, as one thread would make them.
void RuleIndex::add(const RuleSet& set, const CompileOptions& options) {
  const std::vector<Rule>& rules = set.rules;
  auto usable = [&](const Rule& r) { return options.allow_unverified || status_usable(r.status); };
  std::vector<Prepared> prepared(rules.size());
  tbb::parallel_for(size_t{0}, rules.size(), [&](size_t i) {
    if (usable(rules[i])) prepared[i] = prepare(rules[i]);
  });
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!usable(rules[i]))
      skipped_.push_back(
          {rules[i].name, std::string("status ") + status_name(rules[i].status.kind)});
    else if (std::optional<std::string> why = insert(std::move(prepared[i])))
      skipped_.push_back({rules[i].name, *why});
  }
  if (!options.reverse_verified) return;
  std::vector<std::optional<Expected<Rule>>> reversed(rules.size());
  tbb::parallel_for(size_t{0}, rules.size(), [&](size_t i) {
    if (rules[i].status.kind != RuleStatus::Kind::kVerified) return;
    reversed[i] = reverse_rule(rules[i]);
    if (*reversed[i]) prepared[i] = prepare(**reversed[i]);
  });
  // A reverse kept moves to reversed_, where it stays put, and its compiled
  // form is pointed there.
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!reversed[i]) continue;
    if (!*reversed[i]) {
      not_reversed_.push_back({rules[i].name, reversed[i]->error().message});
      continue;
    }
    Rule& rev = **reversed[i];
    const bool compiled = static_cast<bool>(prepared[i].compiled);
    if (compiled) {
      reversed_.push_back(std::move(rev));
      point_at(&*prepared[i].compiled, reversed_.back());
    }
    const std::string& name = compiled ? reversed_.back().name : rev.name;
    if (std::optional<std::string> why = insert(std::move(prepared[i]))) {
      not_reversed_.push_back({name, *why});
      if (compiled) reversed_.pop_back();
    } else {
      ++reversed_count_;
    }
  }
}

}  // namespace tso::opt
