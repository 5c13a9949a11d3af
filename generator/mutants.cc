// Source programs, per-position comparison and the mutant pipeline.
#include "generator/mutants.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "generator/candidates.h"
#include "generator/enumerate.h"
#include "generator/generator.h"
#include "generator/mutant_families.h"
#include "generator/rule_writer.h"
#include "runtime/reference/executor.h"

namespace tso::gen {

namespace {

bool multilinear(const OpSet& set, const Program& p) {
  return std::all_of(p.ops.begin(), p.ops.end(), [&](const ProgOp& op) {
    const Op o = set.ops[op.tmpl].op;
    return o == Op::Conv2d || o == Op::Matmul;
  });
}

// A chain of conv2d nodes (each reading the previous one's output) with a
// relu after every conv: the layout families carry position-wise operators
// through unchanged, so a model's conv + relu runs in the mutant's layout as
// a whole, and the next mutant's layout change meets this one's inverse.
std::optional<Rule> with_relus(const Rule& rule) {
  const RuleSide& s = rule.source;
  if (s.outputs.size() != 1) return std::nullopt;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].op != Op::Conv2d) return std::nullopt;
    if (i > 0 && s.nodes[i].args[0] != RuleRef{RuleRef::Kind::kNode, static_cast<int>(i) - 1, 0})
      return std::nullopt;
  }
  Rule r = rule;
  r.source.nodes.clear();
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    RuleNode conv = s.nodes[i];
    const int index = static_cast<int>(r.source.nodes.size());
    if (i > 0) conv.args[0] = {RuleRef::Kind::kNode, index - 1, 0};
    r.source.nodes.push_back(std::move(conv));
    RuleNode relu;
    relu.op = Op::Relu;
    relu.args = {{RuleRef::Kind::kNode, index, 0}};
    r.source.nodes.push_back(std::move(relu));
  }
  r.source.outputs = {{RuleRef::Kind::kNode, static_cast<int>(r.source.nodes.size()) - 1, 0}};
  return r;
}

// The programs of one or two conv2d and matmul nodes, from the enumeration
// (canonical order, variables in first-use order), ordered by their code,
// then the chains of convolutions again with a relu after each.
std::vector<SourceProgram> source_programs(const OpSet& set, const MutantOptions& opt,
                                           const RuleOrigin& origin) {
  EnumerateOptions eo;
  eo.max_ops = 2;
  eo.sets = opt.sets;
  eo.seed = opt.seed;
  std::vector<Code> codes;
  for (const Record& r : enumerate(set, eo, nullptr).records)
    if (r.code[0] > 0 && multilinear(set, decode(set, r.code))) codes.push_back(r.code);
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  KindTable table(set);
  std::vector<SourceProgram> out;
  for (const Code& code : codes) {
    Candidate c;
    c.a = c.b = decode(set, code);
    Replayed r = replay(table, c.a);
    for (int t : live_tensors(r))
      if (t >= r.num_vars) c.a_out.push_back(t);
    c.b_out = c.a_out;
    Rule rule = make_rule(table, c, "", origin);
    rule.target = {};
    Expected<SourceProgram> s = make_source(std::move(rule));
    TSO_CHECK(s.ok(),
              s.ok() ? "" : "an enumerated program does not instantiate: " + s.error().message);
    out.push_back(std::move(*s));
  }
  const size_t plain = out.size();
  for (size_t i = 0; i < plain; ++i) {
    std::optional<Rule> r = with_relus(out[i].rule);
    if (!r) continue;
    Expected<SourceProgram> s = make_source(std::move(*r));
    TSO_CHECK(s.ok(),
              s.ok() ? "" : "a program with relus does not instantiate: " + s.error().message);
    out.push_back(std::move(*s));
  }
  return out;
}

std::map<std::string, ref::Tensor<ref::Mod>> random_feeds(const Rule& rule, int set,
                                                          uint64_t seed) {
  std::map<std::string, ref::Tensor<ref::Mod>> feeds;
  for (size_t v = 0; v < rule.inputs.size(); ++v) {
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + v * 1315423911ull + set * 2654435761ull);
    ref::Tensor<ref::Mod> t(rule.inputs[v].type.shape);
    for (ref::Mod& m : t.data) m = ref::Mod(rng() % ref::Mod::kP);
    feeds.emplace(rule.inputs[v].name, std::move(t));
  }
  return feeds;
}

}  // namespace

std::string FamilyCounts::text() const {
  return "family=" + family + " built=" + std::to_string(built) +
         " duplicates=" + std::to_string(duplicates) + " valid=" + std::to_string(valid) +
         " exact=" + std::to_string(exact) + " partial=" + std::to_string(partial) +
         " dropped=" + std::to_string(dropped);
}

Comparison compare_sides(const Rule& rule, int sets, uint64_t seed) {
  using V = Comparison::Verdict;
  Comparison c;
  Expected<Graph> src = instantiate(rule, RuleSideKind::kSource);
  Expected<Graph> dst = instantiate(rule, RuleSideKind::kTarget);
  if (!src || !dst) {
    c.reason = (src ? dst : src).error().message;
    return c;
  }
  if (src->outputs().size() != dst->outputs().size()) {
    c.reason = "the sides differ in output count";
    return c;
  }
  for (size_t o = 0; o < src->outputs().size(); ++o) {
    const TensorType& a = src->type(src->outputs()[o].ref);
    if (a != dst->type(dst->outputs()[o].ref)) {
      c.reason = "output " + std::to_string(o) + " is " + to_string(a) + " in the source and " +
                 to_string(dst->type(dst->outputs()[o].ref)) + " in the target";
      return c;
    }
    c.shapes.push_back(a.shape);
    c.equal.emplace_back(static_cast<size_t>(a.shape.numel()), 1);
  }
  for (int s = 0; s < sets; ++s) {
    const auto feeds = random_feeds(rule, s, seed);
    auto x = ref::evaluate<ref::Mod>(*src, feeds);
    auto y = ref::evaluate<ref::Mod>(*dst, feeds);
    TSO_CHECK(x.ok() && y.ok(),
              "rule " + rule.name + ": a side valid at the example types failed: " +
                  (x.ok() ? (y.ok() ? "" : y.error().message) : x.error().message));
    for (size_t o = 0; o < c.equal.size(); ++o)
      for (size_t i = 0; i < c.equal[o].size(); ++i)
        c.equal[o][i] &= (*x)[o].data[i] == (*y)[o].data[i];
  }
  size_t equal = 0, total = 0;
  for (const auto& e : c.equal) {
    equal += static_cast<size_t>(std::count(e.begin(), e.end(), 1));
    total += e.size();
  }
  c.verdict = equal == total ? V::kExact : equal == 0 ? V::kNowhere : V::kPartial;
  return c;
}

Expected<MutantResult> generate_mutants(const OpSet& set, const MutantOptions& opt) {
  if (opt.sets < 2) return Error{"fingerprints need at least 2 random input sets"};
  RuleOrigin origin;
  origin.kind = RuleOrigin::Kind::kGenerated;
  origin.version = kGeneratorVersion;
  origin.ops = set.name;
  origin.seed = opt.seed;
  MutantResult res;
  std::vector<SourceProgram> sources = source_programs(set, opt, origin);
  res.sources = sources.size();
  res.rules.header.push_back(std::string("generator: tso ") + kGeneratorVersion +
                             " mutants, ops: " + set.name + ", seed: " + std::to_string(opt.seed));
  res.rules.header.push_back("mutants: sources=" + std::to_string(sources.size()));
  res.rules.header.push_back("mutants: in each family the exact candidates come first (" +
                             set.rule_prefix + "_<family>_000 on), then the partial ones");
  std::set<std::string> seen;  // structure keys: sources equal up to renaming give one rule
  for (const Family& f : families()) {
    FamilyCounts n;
    n.family = f.name;
    std::vector<Rule> exact, partial;
    for (const SourceProgram& src : sources)
      for (Rule& r : f.build(src)) {
        ++n.built;
        if (!seen.insert(structure_key(r)).second) {
          ++n.duplicates;
          continue;
        }
        const Comparison c = compare_sides(r, opt.sets, opt.seed);
        if (c.verdict == Comparison::Verdict::kInvalid) continue;
        ++n.valid;
        if (c.verdict == Comparison::Verdict::kNowhere) {
          ++n.dropped;
          continue;
        }
        r.origin = origin;
        r.status = {};
        (c.verdict == Comparison::Verdict::kExact ? exact : partial).push_back(std::move(r));
      }
    n.exact = exact.size();
    n.partial = partial.size();
    exact.insert(exact.end(), std::make_move_iterator(partial.begin()),
                 std::make_move_iterator(partial.end()));
    for (size_t i = 0; i < exact.size(); ++i) {
      char index[24];
      std::snprintf(index, sizeof index, "%03zu", i);
      exact[i].name = set.rule_prefix + "_" + f.name + "_" + index;
      res.rules.rules.push_back(std::move(exact[i]));
    }
    res.rules.header.push_back("mutants: " + n.text());
    res.families.push_back(std::move(n));
  }
  return res;
}

}  // namespace tso::gen
