// Rules compiled for matching: each rule's source side becomes a plan that
// binds the pattern's nodes one at a time, starting at a root node and
// walking to neighbours either down (a node is an argument of one already
// bound) or up (a node consumes a tensor already bound). Patterns are
// compiled once and indexed by the operator of their root.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "optimizer/region_rule.h"
#include "substitutions/rules.h"

namespace tso::opt {

struct PlanStep {
  enum class Kind : uint8_t { kRoot, kDown, kUp };
  Kind kind = Kind::kRoot;
  int node = 0;   // the pattern node this step binds
  int from = -1;  // kDown: the bound node it is an argument of; kUp: unused
  int arg = 0;    // kDown: which argument of `from` (before commutation)
  RuleRef via;    // kUp: the bound tensor the node consumes
};

struct CompiledRule {
  int id = 0;  // index in the RuleIndex
  const Rule* rule = nullptr;
  Op root_op{};
  std::vector<PlanStep> plan;  // plan[0] binds the root
  // Per argument of the root: the operator of the pattern node it must be
  // produced by, or -1 for a variable. A cheap test before matching.
  std::vector<int> root_arg_ops;
  // Per rule variable: the rank a bound tensor must have (its example
  // type's: the rank the rule is proved at), or -1 for a variable of the
  // rule's rank clause (any rank of its range, checked once all are bound).
  std::vector<int> var_ranks;
  // An upper bound on the graph distance (argument and user edges) from the
  // root to any node of a match or producer of a tensor a variable binds:
  // after a rewrite, only roots this close to a changed node can match
  // differently (the incremental matching of match_set.h).
  int reach = 0;
  // Per source node: whether each of its results is a source output (a
  // result that is not must have no users outside the match).
  std::vector<std::vector<char>> result_is_output;
  // Rules decided by the region check (exact, partial): their targets,
  // decided again and corrected at each binding (region_rule.h).
  std::shared_ptr<RegionTargets> regions;
};

struct CompileOptions {
  // Rules with status unverified, refuted or unknown are skipped unless set.
  bool allow_unverified = false;
  // Also compile the reverse of every verified rule (reverse_rule.h), after
  // the set's rules in the forward direction. Rules used only because of
  // `allow_unverified` apply forward only.
  bool reverse_verified = true;
};

// The compiled rules of one or more rule sets. Holds pointers into the rule
// sets, which must outlive it.
class RuleIndex {
 public:
  RuleIndex() = default;
  // Compiled rules point into the reversed rules it owns: moves keep them
  // valid, copies would not.
  RuleIndex(RuleIndex&&) = default;
  RuleIndex& operator=(RuleIndex&&) = default;
  RuleIndex(const RuleIndex&) = delete;
  RuleIndex& operator=(const RuleIndex&) = delete;

  // Why a rule was left out (its name and the reason), for the report.
  struct Skipped {
    std::string rule;
    std::string reason;
  };

  // Compiles the usable rules of `set`, then the reverses of its verified
  // ones. A rule with the same source, target, parameters and conditions as
  // one already added (up to variable and parameter names: the same rule
  // found by two generator runs, or a reverse equal to another rule) is
  // skipped as a duplicate, so overlapping rule files cost nothing extra.
  void add(const RuleSet& set, const CompileOptions& options = {});

  const std::vector<CompiledRule>& rules() const { return rules_; }
  const std::vector<int>& by_root(Op op) const { return by_root_[static_cast<int>(op)]; }
  // The rules that may match at node `n` of `g`: those of its operator whose
  // root needs, for each of its first two arguments, that argument's
  // producer operator or any (either order for a commutative root), in id
  // order. A superset of the rules that match there.
  void candidates(const Graph& g, const Node& n, std::vector<int>* out) const;
  const std::vector<Skipped>& skipped() const { return skipped_; }
  // Verified rules whose reverse was not compiled, and why (not reversible,
  // a duplicate, not connected).
  const std::vector<Skipped>& not_reversed() const { return not_reversed_; }
  int reversed_count() const { return reversed_count_; }
  int max_reach() const { return max_reach_; }  // over the compiled rules

 private:
  // A rule's structure key and compiled form, worked out before it is added.
  struct Prepared {
    std::string key;
    Expected<CompiledRule> compiled = Error{"not compiled"};
  };
  static Prepared prepare(const Rule& r);
  // Adds a prepared rule unless it duplicates a compiled rule or did not
  // compile; else returns why.
  std::optional<std::string> insert(Prepared p);

  std::vector<CompiledRule> rules_;
  std::array<std::vector<int>, kNumOps> by_root_{};
  std::vector<Skipped> skipped_;
  std::vector<Skipped> not_reversed_;
  std::deque<Rule> reversed_;  // the reversed rules compiled, at stable addresses
  int reversed_count_ = 0;
  int max_reach_ = 0;
  // (root op, operator of argument 0, of argument 1; -1 any) -> rule ids
  std::unordered_map<uint64_t, std::vector<int>> by_root_args_;
  std::unordered_map<std::string, int> by_structure_;  // structure_key -> rule id
};

// Whether the optimizer may use a rule of this status by default.
bool status_usable(const RuleStatus& status);

// Compiles one rule; fails when its source side cannot be walked from one
// root (a disconnected pattern) or is empty.
Expected<CompiledRule> compile_rule(const Rule& rule);
// Points a compiled rule, and its region targets, at `rule`: an equal copy
// of the rule it was compiled from, moved to where it stays.
void point_at(CompiledRule* c, const Rule& rule);

}  // namespace tso::opt
