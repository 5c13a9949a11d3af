#include "optimizer/search.h"

#include <chrono>
#include <memory>
#include <queue>
#include <unordered_map>
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
  bool contains(uint64_t h) const {
    if (h == kEmpty) return has_empty_;
    for (size_t i = slot(h);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == h) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }

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
template <typename T>
using MinQueue = std::priority_queue<T, std::vector<T>, std::greater<T>>;

// A graph of a lookahead, `depth` rewrites after its first, costlier one.
struct LookaheadEntry {
  QueueEntry entry;
  int depth;
  bool operator>(const LookaheadEntry& o) const { return entry > o.entry; }
};

// What a lookahead came to.
enum class Lookahead : uint8_t { kFound, kNothing, kTimeLimit };

// A lookahead graph is kept only when it is cheaper than the best by more
// than this fraction: a smaller gain is rounding in the summed cost deltas
// (a rewrite and its reverse by another route).
constexpr double kMinGain = 1e-9;

// Whether match `m` replaces or reads a node marked in `touched`.
bool touches(const Match& m, const std::vector<char>& touched) {
  for (int n : m.nodes)
    if (touched[n]) return true;
  for (const TensorRef& v : m.vars)
    if (v.node >= 0 && touched[v.node]) return true;
  return false;
}

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
    SearchResult r;
    r.initial_cost = states_[0].cost;
    r.best_over_time.push_back({0, 0, 0, r.initial_cost});
    int best = 0;
    int64_t best_at = 0;  // the expansion that found the best graph
    seen_.insert(states_[0].hash);
    queue_.push({states_[0].cost, seq_++, 0});
    for (;;) {
      const bool exhausted = queue_.empty();
      if (!exhausted && r.expansions >= options_.max_expansions) {
        r.stop = StopReason::kBudget;
        break;
      }
      if (!exhausted && out_of_time()) {
        r.stop = StopReason::kTimeLimit;
        break;
      }
      if (exhausted ||
          (options_.stall_expansions > 0 && r.expansions - best_at >= options_.stall_expansions)) {
        // A plateau: the lookahead may find a cheaper graph behind a costlier one.
        const Lookahead l =
            r.expansions < options_.max_expansions ? look_ahead(best, &r) : Lookahead::kNothing;
        if (l == Lookahead::kFound) {
          best_at = r.expansions;
          continue;
        }
        r.stop = l == Lookahead::kTimeLimit ? StopReason::kTimeLimit
                 : exhausted                ? StopReason::kExhausted
                                            : StopReason::kStalled;
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
        if (e.state != 0)
          r.best_over_time.push_back({elapsed(), measuring(), r.expansions, states_[best].cost});
      }
      expand(e.state, *b, states_[best].cost, &r);
      if (options_.progress && r.expansions % options_.progress_every == 0)
        options_.progress(
            {r.expansions, static_cast<int64_t>(queue_.size()), states_[best].cost, elapsed()});
    }
    // A gain below the minimum is no gain: the input comes back unchanged.
    if (best != 0 && !gains_enough(states_[best].cost, states_[0].cost, options_.min_gain)) {
      r.below_min_gain_cost = states_[best].cost;
      best = 0;
    }
    r.best_cost = states_[best].cost;
    r.best = build(best)->graph;
    std::vector<int> path;
    for (int s = best; s > 0; s = states_[s].parent) path.push_back(s);
    // From the root down, so that each parent is the graph just built.
    for (auto s = path.rbegin(); s != path.rend(); ++s) r.applied.push_back(applied(*s));
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
      queue_.push({cost, seq_++, add_state(s, m.match, cost, hash)});
      ++r->candidates;
    }
  }

  // The lookahead at a plateau (LookaheadOptions): a best-first search from
  // the rewrites of graph `best` that cost from alpha to `bound` times the
  // best, each later step a rewrite that touches what the path changed. The
  // first graph cheaper than the best joins the queue. Graphs the main search
  // has seen are left to it; lookahead graphs are not marked seen, so the
  // main search may still reach them within alpha.
  Lookahead look_ahead(int best, SearchResult* r) {
    const LookaheadOptions& o = options_.lookahead;
    if (r->lookahead_expansions >= o.budget || !(o.bound > options_.alpha))
      return Lookahead::kNothing;
    ++r->lookaheads;
    const double best_cost = states_[best].cost;
    const double bound = o.bound * best_cost;
    MinQueue<LookaheadEntry> open;
    HashSet queued;
    int64_t seq = 0;
    // Queues the rewrite `m` of state `s` unless the main search has seen
    // its graph, this lookahead queued it, or it costs too much.
    auto enqueue = [&](int s, const ScoredMatch& m, int depth) {
      const double cost = states_[s].cost + m.cost_delta;
      const uint64_t hash = states_[s].hash + m.hash_delta;
      if (!(cost < bound) || seen_.contains(hash) || !queued.insert(hash)) return;
      open.push({{cost, seq++, add_state(s, m.match, cost, hash)}, depth});
    };
    std::shared_ptr<Built> at_best = build(best);
    for (const ScoredMatch& m : *matches(best, *at_best))
      if (m.valid) enqueue(best, m, 0);
    // Per expanded lookahead state, its nodes the path from `best` changed.
    std::unordered_map<int, std::vector<char>> changed;
    while (!open.empty()) {
      if (r->lookahead_expansions >= o.budget) return Lookahead::kNothing;
      if (out_of_time()) return Lookahead::kTimeLimit;
      const LookaheadEntry e = open.top();
      open.pop();
      const int s = e.entry.state;
      const int parent = states_[s].parent;
      std::shared_ptr<Built> pb = build(parent);
      std::shared_ptr<Built> b = build(s);
      ++r->lookahead_expansions;
      std::vector<char> touched = path_changes(parent, *pb, s, *b, changed);
      std::shared_ptr<Matches> list = matches(s, *b);
      for (const ScoredMatch& m : *list) {
        if (!m.valid || !touches(m.match, touched)) continue;
        const double cost = states_[s].cost + m.cost_delta;
        if (cost < best_cost * (1 - kMinGain)) {
          const uint64_t hash = states_[s].hash + m.hash_delta;
          if (!seen_.insert(hash)) continue;  // the main search has it
          queue_.push({cost, seq_++, add_state(s, m.match, cost, hash)});
          ++r->lookahead_found;
          return Lookahead::kFound;
        }
        if (e.depth + 1 < o.depth) enqueue(s, m, e.depth + 1);
      }
      changed.emplace(s, std::move(touched));
    }
    return Lookahead::kNothing;
  }

  // The nodes of state `s`'s graph (`b`, its parent's `pb`) that the
  // lookahead's path changed: those its rewrite changed, and those the path
  // to its parent changed (`changed[parent]`; none when the path starts at
  // the parent).
  std::vector<char> path_changes(int parent, const Built& pb, int s, const Built& b,
                                 const std::unordered_map<int, std::vector<char>>& changed) {
    const std::vector<int>& from_parent = states_[s].from_parent;
    std::vector<char> out = changed_nodes(pb.context(model_), b.context(model_), from_parent);
    if (auto it = changed.find(parent); it != changed.end())
      for (size_t p = 0; p < from_parent.size(); ++p)
        if (it->second[p] && from_parent[p] >= 0) out[from_parent[p]] = 1;
    return out;
  }

  // A new state: state `parent`'s graph rewritten by `match`.
  int add_state(int parent, const Match& match, double cost, uint64_t hash) {
    State child;
    child.parent = parent;
    child.cost = cost;
    child.hash = hash;
    child.match = match;
    states_.push_back(std::move(child));
    return static_cast<int>(states_.size()) - 1;
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double measuring() const { return model_.measuring_seconds() - measured_before_; }
  // The time limit counts searching, not measuring.
  bool out_of_time() const { return elapsed() - measuring() > options_.time_limit_s; }

  // The matches of state `s` (graph `b`), carried from those of its nearest
  // ancestor whose graph and match list are cached (the root's always are),
  // through the node renumberings of the rewrites between; matched in full
  // only at the root.
  std::shared_ptr<Matches> matches(int s, const Built& b) {
    if (s == 0 && root_matches_) return root_matches_;
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

  // The rewrite that made state `s` from its parent, with its site.
  AppliedRewrite applied(int s) {
    const State& st = states_[s];
    AppliedRewrite a{st.match.rule->rule->name, st.replaced_names,
                     st.match.rule->regions != nullptr, st.correction_boxes,
                     st.correction_elements};
    std::shared_ptr<Built> parent = build(st.parent), here = build(s);
    std::vector<char> gone(parent->graph.size(), 0), added(here->graph.size(), 1);
    for (size_t i = 0; i < st.from_parent.size(); ++i)
      if (st.from_parent[i] < 0)
        gone[i] = 1;
      else
        added[st.from_parent[i]] = 0;
    a.before = site_nodes(parent->graph, parent->index, model_, gone);
    a.after = site_nodes(here->graph, here->index, model_, added);
    return a;
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
  MinQueue<QueueEntry> queue_;
  HashSet seen_;
  int64_t seq_ = 0;
  std::shared_ptr<Built> root_;
  std::shared_ptr<Matches> root_matches_;
  LruCache<Built> graphs_;
  LruCache<Matches> matches_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  const double measured_before_ = model_.measuring_seconds();
};

}  // namespace

SearchResult search(const Graph& g, const RuleIndex& rules, const CostModel& model,
                    const SearchOptions& options) {
  Search s(g, rules, model, options);
  return s.run();
}

}  // namespace tso::opt
