#include "tests/optimizer_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <unordered_map>

#include "core/testing/pattern_graph.h"
#include "core/text_format.h"
#include "optimizer/analytic_cost.h"
#include "optimizer/fold.h"
#include "optimizer/match_set.h"
#include "optimizer/rewriter.h"
#include "runtime/cpu/executor.h"
#include "runtime/reference/executor.h"
#include "substitutions/rules.h"

namespace tso::fuzz {

using Feeds = std::map<std::string, ref::Tensor<double>>;
using Outputs = std::vector<ref::Tensor<double>>;

struct OptimizerDiff::Impl {
  DiffOptions options;
  std::vector<RuleSet> sets;  // the compiled rules point into them
  opt::RuleIndex rules;
  std::unique_ptr<opt::AnalyticCost> model;
  std::unordered_map<std::string, Fired> fired;  // by rule name, reverses included

  Fired describe(const std::string& rule) const {
    auto it = fired.find(rule);
    return it == fired.end() ? Fired{rule, opt::RewriteKind::kOther, "?"} : it->second;
  }
  Graph walk(const Graph& g, std::mt19937_64& rng, DiffOutcome* o) const;
  // `f32_error` (null: none): per output, the relative error of the
  // original graph on the reference executor in float, the f32 rounding its
  // outputs carry; the bound is then at least `f32_factor` times it.
  void compare(const std::string& stage, const Graph& g, const Feeds& feeds, const Outputs& want,
               double tolerance, const std::vector<double>* f32_error, DiffOutcome* o) const;
  void compare_cpu(const std::string& stage, const Graph& g, const Feeds& feeds,
                   const Outputs& want, const std::vector<double>& f32_error, DiffOutcome* o) const;
};

namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Inputs uniform in [-1, 1), rounded to float so that the CPU runtime reads
// the very values the double reference does. std::mt19937_64's sequence is
// fixed by the standard; the scaling is ours.
Feeds random_inputs(const Graph& g, std::mt19937_64& rng) {
  Feeds feeds;
  for (const Node& n : g.nodes()) {
    if (n.op != Op::Input) continue;
    ref::Tensor<double> t(n.outs[0].shape);
    for (double& v : t.data)
      v = static_cast<float>(-1.0 + 2.0 * static_cast<double>(rng() >> 11) * 0x1.0p-53);
    feeds.emplace(n.name, std::move(t));
  }
  return feeds;
}

// core/ops.h's relative error, max|a-b| / max(max|b|, 1e-6); infinite when
// one side is NaN and the other not, or the shapes differ.
template <class A>
double relative_error(const std::vector<A>& a, const Shape& a_shape, const ref::Tensor<double>& b) {
  if (!(a_shape == b.shape) || a.size() != b.data.size())
    return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 1e-6;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = static_cast<double>(a[i]), y = b.data[i];
    if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
    if (std::isnan(y)) continue;
    diff = std::max(diff, std::abs(x - y));
    scale = std::max(scale, std::abs(y));
  }
  return diff / scale;
}

std::string too_far(double error, const std::string& output, double tolerance) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "max relative error %.3g on output '%s' (tolerance %.2g)", error,
                output.c_str(), tolerance);
  return buf;
}

}  // namespace

// Rewrites `g` by up to walk_steps matches picked at random among those whose
// target builds and that touch a node computed at run time (as the search
// takes them), whatever their cost.
Graph OptimizerDiff::Impl::walk(const Graph& g, std::mt19937_64& rng, DiffOutcome* o) const {
  Graph cur = g;
  opt::TensorIds ids(cur);
  for (int step = 0; step < options.walk_steps; ++step) {
    opt::GraphIndex index(cur);
    std::vector<opt::ScoredMatch> all = opt::all_matches({cur, index, ids, *model}, rules);
    std::vector<const opt::ScoredMatch*> valid;
    for (const opt::ScoredMatch& m : all)
      if (m.valid && std::any_of(m.match.nodes.begin(), m.match.nodes.end(),
                                 [&](int n) { return !index.constant[n]; }))
        valid.push_back(&m);
    if (valid.empty()) break;
    const opt::Match& m = valid[rng() % valid.size()]->match;
    Expected<opt::Replacement> rep = opt::build_replacement(cur, m);
    Expected<opt::Rewritten> w =
        rep ? opt::apply_replacement(cur, ids, *rep) : Expected<opt::Rewritten>(rep.error());
    if (!w) {
      o->mismatches.push_back(
          {"walk",
           "rule " + m.rule->rule->name + " scored valid but did not apply: " + w.error().message});
      break;
    }
    o->walked.push_back(describe(m.rule->rule->name));
    cur = std::move(w->graph);
    ids = std::move(w->ids);
  }
  return cur;
}

void OptimizerDiff::Impl::compare(const std::string& stage, const Graph& g, const Feeds& feeds,
                                  const Outputs& want, double tolerance,
                                  const std::vector<double>* f32_error, DiffOutcome* o) const {
  Expected<Outputs> got = ref::evaluate<double>(g, feeds);
  if (!got) return o->mismatches.push_back({stage, "reference executor: " + got.error().message});
  if (got->size() != want.size()) return o->mismatches.push_back({stage, "output count differs"});
  for (size_t i = 0; i < want.size(); ++i) {
    const double bound =
        f32_error ? std::max(tolerance, options.f32_factor * (*f32_error)[i]) : tolerance;
    double e = relative_error((*got)[i].data, (*got)[i].shape, want[i]);
    if (!(e <= bound))
      return o->mismatches.push_back({stage, too_far(e, g.outputs()[i].name, bound)});
  }
}

void OptimizerDiff::Impl::compare_cpu(const std::string& stage, const Graph& g, const Feeds& feeds,
                                      const Outputs& want, const std::vector<double>& f32_error,
                                      DiffOutcome* o) const {
  // One thread and no timing at plan time: results that depend on neither
  // the machine's load nor its cores.
  Expected<std::unique_ptr<cpu::Executor>> e =
      cpu::Executor::create(g, {.threads = 1, .measure = false});
  if (!e) return o->mismatches.push_back({stage, "plan: " + e.error().message});
  for (const auto& [name, t] : feeds) {
    std::vector<float> v(t.data.begin(), t.data.end());
    if (Status s = (*e)->set_input(name, v); !s)
      return o->mismatches.push_back({stage, "input " + name + ": " + s.error().message});
  }
  if (Status s = (*e)->run(); !s)
    return o->mismatches.push_back({stage, "run: " + s.error().message});
  for (size_t i = 0; i < want.size(); ++i) {
    Expected<std::vector<float>> got = (*e)->output(static_cast<int>(i));
    if (!got) return o->mismatches.push_back({stage, "output: " + got.error().message});
    const double tolerance = std::max(options.cpu_tolerance, options.f32_factor * f32_error[i]);
    double err = relative_error(*got, g.type(g.outputs()[i].ref).shape, want[i]);
    if (!(err <= tolerance))
      return o->mismatches.push_back({stage, too_far(err, g.outputs()[i].name, tolerance)});
  }
}

Expected<std::unique_ptr<OptimizerDiff>> OptimizerDiff::create(
    const std::vector<std::string>& rule_files, const std::string& device_file,
    const DiffOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::unordered_map<std::string, std::string> file_of;
  for (const std::string& path : rule_files) {
    std::optional<std::string> text = read_text(path);
    if (!text) return Error{"cannot read rule file " + path};
    Expected<RuleSet> s = parse_rules(*text, path);
    if (!s) return s.error();
    for (const Rule& r : s->rules) file_of[r.name] = std::filesystem::path(path).stem().string();
    impl->sets.push_back(std::move(*s));
  }
  for (const RuleSet& s : impl->sets) impl->rules.add(s);
  for (const opt::CompiledRule& c : impl->rules.rules()) {
    std::string base = c.rule->name.substr(0, c.rule->name.rfind(" (reverse)"));
    impl->fired[c.rule->name] = {c.rule->name, opt::classify_rewrite(*c.rule), file_of[base]};
  }
  Expected<opt::Device> d = opt::load_device(device_file);
  if (!d) return d.error();
  impl->model = std::make_unique<opt::AnalyticCost>(*d);
  return std::unique_ptr<OptimizerDiff>(new OptimizerDiff(std::move(impl)));
}

OptimizerDiff::OptimizerDiff(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OptimizerDiff::~OptimizerDiff() = default;
int OptimizerDiff::compiled_rules() const { return static_cast<int>(impl_->rules.rules().size()); }

DiffOutcome OptimizerDiff::run(uint64_t seed) const {
  const Impl& m = *impl_;
  DiffOutcome o;
  Graph g = testing::pattern_graph(seed, {.max_operators = m.options.max_operators});
  o.operators = g.num_operators();
  o.original = print(g);
  std::mt19937_64 rng(seed);
  Feeds feeds = random_inputs(g, rng);
  Expected<Outputs> want = ref::evaluate<double>(g, feeds);
  if (!want) {
    o.mismatches.push_back({"original", "reference executor: " + want.error().message});
    return o;
  }
  // The f32 rounding the original's outputs carry in any f32 executor: the
  // reference executor's, run in float on the same inputs.
  std::map<std::string, ref::Tensor<float>> float_feeds;
  for (const auto& [name, t] : feeds)
    float_feeds.emplace(
        name, ref::Tensor<float>(t.shape, std::vector<float>(t.data.begin(), t.data.end())));
  Expected<std::vector<ref::Tensor<float>>> in_float = ref::evaluate<float>(g, float_feeds);
  if (!in_float) {
    o.mismatches.push_back(
        {"original", "reference executor in float: " + in_float.error().message});
    return o;
  }
  std::vector<double> f32_error;
  for (size_t i = 0; i < want->size(); ++i)
    f32_error.push_back(relative_error((*in_float)[i].data, (*want)[i].shape, (*want)[i]));

  opt::SearchOptions search;
  search.max_expansions = m.options.max_expansions;
  search.stall_expansions = m.options.stall_expansions;
  search.time_limit_s = std::numeric_limits<double>::infinity();
  opt::SearchResult r = opt::search(g, m.rules, *m.model, search);
  for (const opt::AppliedRewrite& a : r.applied) o.searched.push_back(m.describe(a.rule));
  o.searched_graph = print(r.best);
  m.compare("search", r.best, feeds, *want, m.options.exact_tolerance, nullptr, &o);
  Expected<Graph> folded = opt::fold_weights(r.best);
  if (folded) {
    o.optimized = print(*folded);
    m.compare("fold", *folded, feeds, *want, m.options.folded_tolerance, &f32_error, &o);
  } else {
    o.mismatches.push_back({"fold", folded.error().message});
  }

  Graph walked = m.walk(g, rng, &o);
  o.walk = print(walked);
  m.compare("walk", walked, feeds, *want, m.options.exact_tolerance, nullptr, &o);

  if (m.options.cpu) {
    m.compare_cpu("cpu original", g, feeds, *want, f32_error, &o);
    if (folded && !(*folded == g))
      m.compare_cpu("cpu optimized", *folded, feeds, *want, f32_error, &o);
  }
  return o;
}

}  // namespace tso::fuzz
