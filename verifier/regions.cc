#include "verifier/regions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "verifier/box_derivation.h"
#include "verifier/position_eval.h"

namespace tso::verifier {

namespace {

Status check_pair(const Graph& source, const Graph& mutant, const RegionOptions& options) {
  if (options.tests < 2)
    return Error{"region check: tests = " + std::to_string(options.tests) + ", at least 2 needed"};
  if (source.outputs().size() != mutant.outputs().size())
    return Error{"region check: the source has " + std::to_string(source.outputs().size()) +
                 " outputs and the mutant " + std::to_string(mutant.outputs().size())};
  for (size_t o = 0; o < source.outputs().size(); ++o) {
    const TensorType &s = source.type(source.outputs()[o].ref),
                     &m = mutant.type(mutant.outputs()[o].ref);
    if (!(s == m))
      return Error{"region check: output " + std::to_string(o) + " is " + to_string(s) +
                   " in the source and " + to_string(m) + " in the mutant"};
  }
  std::map<std::string, TensorType> inputs;
  for (int i : source.input_nodes()) inputs[source.node(i).name] = source.node(i).outs[0];
  for (int i : mutant.input_nodes()) {
    const Node& n = mutant.node(i);
    auto it = inputs.find(n.name);
    if (it != inputs.end() && !(it->second == n.outs[0]))
      return Error{"region check: input '" + n.name + "' is " + to_string(it->second) +
                   " in the source and " + to_string(n.outs[0]) + " in the mutant"};
  }
  return Status::Ok();
}

// Merges boxes (of one output) that differ on one axis only, where they
// touch, until no two do.
void merge(std::vector<Box>* boxes) {
  const int rank = boxes->empty() ? 0 : static_cast<int>(boxes->front().starts.size());
  for (bool changed = true; changed;) {
    changed = false;
    for (int a = 0; a < rank; ++a) {
      auto key = [a](const Box& b) {
        std::vector<int64_t> k;
        for (size_t i = 0; i < b.starts.size(); ++i)
          if (static_cast<int>(i) != a) k.insert(k.end(), {b.starts[i], b.ends[i]});
        k.push_back(b.starts[a]);
        return k;
      };
      std::sort(boxes->begin(), boxes->end(),
                [&](const Box& x, const Box& y) { return key(x) < key(y); });
      std::vector<Box> merged;
      for (Box& b : *boxes) {
        if (!merged.empty()) {
          Box& last = merged.back();
          std::vector<int64_t> kl = key(last), kb = key(b);
          kl.pop_back();
          kb.pop_back();
          if (kl == kb && last.ends[a] == b.starts[a]) {
            last.ends[a] = b.ends[a];
            changed = true;
            continue;
          }
        }
        merged.push_back(std::move(b));
      }
      *boxes = std::move(merged);
    }
  }
}

}  // namespace

Expected<RegionResult> decide_regions(const Graph& source, const Graph& mutant,
                                      const RegionOptions& options) {
  TSO_RETURN_IF_ERROR(check_pair(source, mutant, options));
  Expected<std::vector<Layout>> ls = output_layouts(source);
  if (!ls) return ls.error();
  Expected<std::vector<Layout>> lm = output_layouts(mutant);
  if (!lm) return lm.error();

  struct Decided {
    int output;
    const Layout* layout;
    SubBox box;
    std::vector<std::vector<int64_t>> positions;
    bool wrong = false;
  };
  std::vector<Layout> layouts;
  for (size_t o = 0; o < ls->size(); ++o) layouts.push_back(refine((*ls)[o], (*lm)[o]));
  RegionResult result;
  if (options.max_boxes > 0) {
    double count = 0;  // intervals multiplied over every sub-axis, per output
    for (const Layout& l : layouts) {
      double n = 1;
      for (const AxisLayout& axis : l)
        for (const SubAxis& s : axis) n *= static_cast<double>(s.cuts.size() - 1);
      count += n;
    }
    if (count > static_cast<double>(options.max_boxes))
      return Error{"region check: " + std::to_string(static_cast<int64_t>(count)) +
                   " boxes, over " + std::to_string(options.max_boxes) + "; not decided"};
  }
  std::vector<Decided> boxes;
  for (size_t o = 0; o < layouts.size(); ++o)
    for (SubBox& box : boxes_of(layouts[o])) {
      std::vector<std::vector<int64_t>> positions = deciding_positions(layouts[o], box);
      result.positions += static_cast<int64_t>(positions.size());
      boxes.push_back({static_cast<int>(o), &layouts[o], std::move(box), std::move(positions)});
    }
  result.boxes = static_cast<int64_t>(boxes.size());

  PositionEvaluator es(source), em(mutant);
  for (int t = 0; t < options.tests; ++t) {
    es.start(options.seed, t);
    em.start(options.seed, t);
    for (Decided& d : boxes) {
      for (size_t p = 0; p < d.positions.size() && !d.wrong; ++p)
        d.wrong = !(es.output(d.output, d.positions[p]) == em.output(d.output, d.positions[p]));
      if (options.max_reads > 0 && es.reads() + em.reads() > options.max_reads)
        return Error{"region check: over " + std::to_string(options.max_reads) +
                     " tensor elements read deciding " + std::to_string(boxes.size()) +
                     " boxes; not decided"};
    }
  }
  std::vector<std::vector<Box>> wrong(layouts.size());
  for (const Decided& d : boxes)
    if (d.wrong)
      for (auto& [starts, ends] : contiguous_pieces(*d.layout, d.box))
        wrong[d.output].push_back({d.output, std::move(starts), std::move(ends)});
  for (std::vector<Box>& w : wrong) {
    merge(&w);
    result.wrong.insert(result.wrong.end(), w.begin(), w.end());
  }
  std::sort(result.wrong.begin(), result.wrong.end(), [](const Box& a, const Box& b) {
    return std::tie(a.output, a.starts, a.ends) < std::tie(b.output, b.starts, b.ends);
  });
  const int degree = std::max(polynomial_degree(source), polynomial_degree(mutant));
  result.false_equal_bound = std::pow(double(degree) / double(ref::Mod::kP), options.tests);
  return result;
}

}  // namespace tso::verifier
