#include "optimizer/region_rule.h"

#include "verifier/correction.h"
#include "verifier/regions.h"

namespace tso::opt {

namespace {

// A decision at a model's shapes is bounded (milliseconds to a few tenths of
// a second): past these the rule does not apply at that binding. CSRNet's
// 512-channel dilated layer interleaved reads about 0.8 M elements.
verifier::RegionOptions bounded() {
  verifier::RegionOptions o;
  o.max_boxes = 4096;
  o.max_reads = 4'000'000;
  return o;
}

// The boxes a graph's update_slice nodes write, and their elements.
std::pair<int, int64_t> writes(const Graph& g) {
  std::pair<int, int64_t> w{0, 0};
  for (const Node& n : g.nodes()) {
    if (n.op != Op::UpdateSlice) continue;
    ++w.first;
    w.second += g.type(n.args[1]).shape.numel();
  }
  return w;
}

// The instance `corrected`, the correction being what it writes beyond the
// mutant.
std::shared_ptr<const RegionInstance> instance(Graph corrected, const Graph& mutant) {
  auto inst = std::make_shared<RegionInstance>();
  auto [boxes, elements] = writes(corrected);
  auto [own_boxes, own_elements] = writes(mutant);
  inst->boxes = boxes - own_boxes;
  inst->correction_elements = elements - own_elements;
  inst->target = std::move(corrected);
  return inst;
}

}  // namespace

bool is_region_rule(const Rule& rule) {
  return rule.status.kind == RuleStatus::Kind::kExact ||
         rule.status.kind == RuleStatus::Kind::kPartial;
}

Expected<std::shared_ptr<const RegionInstance>> RegionTargets::at(
    std::span<const TensorType> var_types, std::span<const AttrValue> params) {
  RuleBindings b;
  std::string key;
  for (size_t v = 0; v < rule_.inputs.size(); ++v) {
    b.types[rule_.inputs[v].name] = var_types[v];
    key += to_string(var_types[v]) + ";";
  }
  for (size_t p = 0; p < rule_.params.size(); ++p) {
    b.params[rule_.params[p].name] = params[p];
    key += print_attr_value(params[p]) + ";";
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  Expected<std::shared_ptr<const RegionInstance>> r = decide(b);
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.emplace(key, std::move(r)).first->second;
}

Expected<std::shared_ptr<const RegionInstance>> RegionTargets::decide(const RuleBindings& b) const {
  Expected<Graph> source = instantiate(rule_, RuleSideKind::kSource, b);
  if (!source) return source.error();
  // The stored correction, when it is exactly right at these shapes.
  Expected<Graph> mutant = instantiate(rule_, RuleSideKind::kTarget, b);
  if (!mutant) return mutant.error();
  Expected<Graph> stored = instantiate(rule_, RuleSideKind::kCorrected, b);
  if (stored) {
    Expected<verifier::RegionResult> check = verifier::decide_regions(*source, *stored, bounded());
    if (!check) return check.error();
    if (check->wrong.empty()) return instance(std::move(*stored), *mutant);
  }
  // Otherwise a correction derived here from the mutant's wrong boxes.
  Expected<verifier::RegionResult> regions = verifier::decide_regions(*source, *mutant, bounded());
  if (!regions) return regions.error();
  if (regions->wrong.empty()) return instance(*mutant, *mutant);
  Expected<Graph> fixed = verifier::correct(*source, *mutant, regions->wrong);
  if (!fixed) return fixed.error();
  Expected<verifier::RegionResult> check = verifier::decide_regions(*source, *fixed, bounded());
  if (!check) return check.error();
  if (!check->wrong.empty())
    return Error{"rule " + rule_.name + ": the derived correction leaves " +
                 std::to_string(check->wrong.size()) + " box(es) wrong"};
  return instance(std::move(*fixed), *mutant);
}

}  // namespace tso::opt
