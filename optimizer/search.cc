#include "optimizer/search.h"

#include <chrono>
#include <memory>
#include <queue>
#include <utility>

#include "optimizer/lru_cache.h"
#include "optimizer/match_set.h"
#include "optimizer/rewriter.h"

namespace tso::opt {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kExhausted:
      return "exhausted";
    case StopReason::kBudget:
      return "budget";
    case StopReason::kTimeLimit:
      return "time-limit";
    case StopReason::kStalled:
      return "stalled";
  }
  return "?";
}

namespace {

// A graph of the search: the root, or its parent plus one rewrite. The
// rewrite is kept as its match and built when the state is: most states are
// queued and never expanded.
struct State {
  int parent = -1;
  Match match;
  std::vector<std::string> replaced_names;  // filled when first built
  int correction_boxes = 0;                 // likewise, for a region rule
  int64_t correction_elements = 0;
  // Parent node -> node here (-1: gone), filled when first built: kept
  // after the graph leaves the cache, so matches carry through it.
  std::vector<int> from_parent;
  double cost = 0;
  uint64_t hash = 0;
};

// A state's graph with what matching and the incremental updates need.
struct Built {
  Graph graph;
  TensorIds ids;
  GraphIndex index;
  Built(Graph g, TensorIds i) : graph(std::move(g)), ids(std::move(i)), index(graph) {}
  MatchContext context(const CostModel& model) const { return {graph, index, ids, model}; }
};

using Matches = std::vector<ScoredMatch>;

// The structural hashes seen so far. Open addressing with linear probing in
// one array: the search tests one hash per rewrite within alpha (NASNet:
// 436,000 in 1000 expansions), and std::unordered_set's per-entry nodes
// made that 14% of its search time.
class HashSet {
 public:
  // False when `h` was already in the set.
  bool insert(uint64_t h) {
    if (h == kEmpty) return !std::exchange(has_empty_, true);
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = slot(h);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == h) return false;
      if (slots_[i] == kEmpty) {
        slots_[i] = h;
        ++size_;
        return true;
      }
    }
  }

 private:
  static constexpr uint64_t kEmpty = 0;

  // Graph hashes are sums of mixed terms; mixed again so that the low bits
  // that pick the slot depend on all of them.
  size_t slot(uint64_t h) const {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h & (slots_.size() - 1);
  }

  void grow() {
    std::vector<uint64_t> old(2 * slots_.size(), kEmpty);
    old.swap(slots_);
    for (uint64_t h : old) {
      if (h == kEmpty) continue;
      size_t i = slot(h);
      while (slots_[i] != kEmpty) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = h;
    }
  }

  std::vector<uint64_t> slots_ = std::vector<uint64_t>(1024, kEmpty);
  size_t size_ = 0;
  bool has_empty_ = false;
};

struct QueueEntry {
  double cost;
  int64_t seq;  // ties break by insertion order: deterministic
  int state;
  bool operator>(const QueueEntry& o) const { return cost != o.cost ? cost > o.cost : seq > o.seq; }
};

class Search {
 public:
  Search(const Graph& g, const RuleIndex& rules, const CostModel& model,
         const SearchOptions& options)
      : rules_(rules),
        model_(model),
        options_(options),
        graphs_(options.cached_graphs, 0),
        matches_(options.cached_matches, 0) {
    root_ = std::make_shared<Built>(g, TensorIds(g));
    State s;
    s.cost = graph_cost(root_->graph, root_->index, model_);
    s.hash = graph_hash(root_->graph, root_->ids);
    states_.push_back(std::move(s));
  }

  SearchResult run() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    const double measured_before = model_.measuring_seconds();
    auto measuring = [&] { return model_.measuring_seconds() - measured_before; };
    SearchResult r;
    r.initial_cost = states_[0].cost;
    int best = 0;
    int64_t best_at = 0;  // the expansion that found the best graph
    seen_.insert(states_[0].hash);
    queue_.push({states_[0].cost, seq_++, 0});
    r.stop = StopReason::kExhausted;
    while (!queue_.empty()) {
      if (r.expansions >= options_.max_expansions) {
        r.stop = StopReason::kBudget;
        break;
      }
      if (elapsed() - measuring() > options_.time_limit_s) {
        r.stop = StopReason::kTimeLimit;
        break;
      }
      if (options_.stall_expansions > 0 && r.expansions - best_at >= options_.stall_expansions) {
        r.stop = StopReason::kStalled;
        break;
      }
      QueueEntry e = queue_.top();
      queue_.pop();
      if (e.cost > options_.alpha * states_[best].cost) continue;
      std::shared_ptr<Built> b = build(e.state);
      ++r.expansions;
      if (e.state == 0 || states_[e.state].cost < states_[best].cost) {
        best = e.state;
        best_at = r.expansions;
      }
      expand(e.state, *b, states_[best].cost, &r);
      if (options_.progress && r.expansions % options_.progress_every == 0)
        options_.progress(
            {r.expansions, static_cast<int64_t>(queue_.size()), states_[best].cost, elapsed()});
    }
    r.best_cost = states_[best].cost;
    r.best = build(best)->graph;
    for (int s = best; s > 0; s = states_[s].parent)
      r.applied.push_back({states_[s].match.rule->rule->name, states_[s].replaced_names,
                           states_[s].match.rule->regions != nullptr, states_[s].correction_boxes,
                           states_[s].correction_elements});
    std::reverse(r.applied.begin(), r.applied.end());
    r.seconds = elapsed();
    r.measuring_seconds = measuring();
    if (options_.progress)
      options_.progress(
          {r.expansions, static_cast<int64_t>(queue_.size()), r.best_cost, r.seconds});
    return r;
  }

 private:
  // Every rewrite of state `s`'s graph within alpha of the best joins the queue.
  void expand(int s, const Built& b, double best_cost, SearchResult* r) {
    const double parent_cost = states_[s].cost;
    const uint64_t parent_hash = states_[s].hash;
    for (const ScoredMatch& m : *matches(s, b)) {
      if (!m.valid) {
        ++r->rejected;
        continue;
      }
      if (m.match.rule->regions) {
        auto [it, fresh] = r->region_candidates.try_emplace(m.match.rule->rule->name);
        it->second.best_delta =
            fresh ? m.cost_delta : std::min(it->second.best_delta, m.cost_delta);
        ++it->second.matches;
      }
      double cost = parent_cost + m.cost_delta;
      if (!(cost < options_.alpha * best_cost)) continue;
      uint64_t hash = parent_hash + m.hash_delta;
      if (!seen_.insert(hash)) {
        ++r->duplicates;
        continue;
      }
      State child;
      child.parent = s;
      child.cost = cost;
      child.hash = hash;
      child.match = m.match;
      states_.push_back(std::move(child));
      queue_.push({cost, seq_++, static_cast<int>(states_.size()) - 1});
      ++r->candidates;
    }
  }

  // The matches of state `s` (graph `b`), carried from those of its nearest
  // ancestor whose graph and match list are cached (the root's always are),
  // through the node renumberings of the rewrites between; matched in full
  // only at the root.
  std::shared_ptr<Matches> matches(int s, const Built& b) {
    auto out = std::make_shared<Matches>();
    if (s == 0) {
      *out = all_matches(b.context(model_), rules_);
      root_matches_ = out;
      return out;
    }
    std::vector<const std::vector<int>*> renumberings;  // bottom up
    std::shared_ptr<Built> ancestor;
    std::shared_ptr<Matches> from;
    for (int a = s; !from;) {
      renumberings.push_back(&states_[a].from_parent);
      a = states_[a].parent;
      if (a == 0) {
        ancestor = root_;
        from = root_matches_;
      } else if ((ancestor = graphs_.get(a))) {
        from = matches_.get(a);
      }
    }
    std::vector<int> index(ancestor->graph.size());
    for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int>(i);
    for (size_t k = renumberings.size(); k-- > 0;)
      for (int& i : index) i = i < 0 ? -1 : (*renumberings[k])[i];
    *out = carry_matches(ancestor->context(model_), *from, b.context(model_), index, rules_);
    matches_.put(s, out);
    return out;
  }

  std::shared_ptr<Built> build(int s) {
    if (s == 0) return root_;
    if (std::shared_ptr<Built> b = graphs_.get(s)) return b;
    std::shared_ptr<Built> parent = build(states_[s].parent);
    Expected<Replacement> rep = build_replacement(parent->graph, states_[s].match);
    TSO_CHECK(rep.ok(), "a match that built its target once failed to build it again");
    if (states_[s].replaced_names.empty()) {
      for (int n : rep->removed) states_[s].replaced_names.push_back(parent->graph.node(n).name);
      states_[s].correction_boxes = rep->correction_boxes;
      states_[s].correction_elements = rep->correction_elements;
    }
    Expected<Rewritten> w = apply_replacement(parent->graph, parent->ids, *rep);
    TSO_CHECK(w.ok(), "a rewrite that built its target failed to apply: " +
                          (w.ok() ? std::string() : w.error().message));
    if (states_[s].from_parent.empty()) states_[s].from_parent = std::move(w->new_index);
    auto b = std::make_shared<Built>(std::move(w->graph), std::move(w->ids));
    graphs_.put(s, b);
    return b;
  }

  const RuleIndex& rules_;
  const CostModel& model_;
  const SearchOptions& options_;
  std::vector<State> states_;
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<QueueEntry>> queue_;
  HashSet seen_;
  int64_t seq_ = 0;
  std::shared_ptr<Built> root_;
  std::shared_ptr<Matches> root_matches_;
  LruCache<Built> graphs_;
  LruCache<Matches> matches_;
};

}  // namespace

SearchResult search(const Graph& g, const RuleIndex& rules, const CostModel& model,
                    const SearchOptions& options) {
  Search s(g, rules, model, options);
  return s.run();
}

}  // namespace tso::opt
