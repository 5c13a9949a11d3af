#include "verifier/correction.h"

#include <map>
#include <optional>
#include <string>

#include "verifier/region_plan.h"

namespace tso::verifier {
namespace {

using Ints = std::vector<int64_t>;

std::string ints_text(const Ints& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Status check_box(const Graph& mutant, const Box& box, int k) {
  const std::string what = "box " + std::to_string(k) + " (starts " + ints_text(box.starts) +
                           ", ends " + ints_text(box.ends) + ")";
  if (box.output < 0 || box.output >= static_cast<int>(mutant.outputs().size()))
    return Error{what + " names output " + std::to_string(box.output) + " of a graph with " +
                 std::to_string(mutant.outputs().size())};
  const TensorType& t = mutant.type(mutant.outputs()[box.output].ref);
  bool inside =
      static_cast<int>(box.starts.size()) == t.shape.rank() && box.ends.size() == box.starts.size();
  for (int a = 0; inside && a < t.shape.rank(); ++a)
    inside = 0 <= box.starts[a] && box.starts[a] < box.ends[a] && box.ends[a] <= t.shape[a];
  if (!inside)
    return Error{what + " does not lie inside output '" + mutant.outputs()[box.output].name +
                 "' of type " + to_string(t)};
  return Status::Ok();
}

// A tensor of the correction holding `region` of a source tensor.
struct Value {
  TensorRef ref;
  Region region;
};

// Recomputes boxes of the source's tensors into `b`, whose graph inputs
// `inputs` (by name) stand for the source's inputs and weights.
class BoxRecompute {
 public:
  BoxRecompute(const Graph& source, const std::map<std::string, TensorRef>& inputs, GraphBuilder* b,
               std::string prefix)
      : g_(source), inputs_(inputs), b_(b), prefix_(std::move(prefix)) {}

  Expected<TensorRef> run(TensorRef target, const Region& box) {
    want_.assign(g_.size(), {});
    plans_.assign(g_.size(), {});
    values_.assign(g_.size(), {});
    for (int i = 0; i < g_.size(); ++i) {
      const size_t outs = g_.node(i).outs.size();
      want_[i].resize(outs), plans_[i].resize(outs), values_[i].resize(outs);
    }
    want_[target.node][target.output] = box;
    // Reverse node order: every consumer has asked before its producer plans.
    for (int i = g_.size() - 1; i >= 0; --i) {
      const Node& n = g_.node(i);
      if (is_source(n.op)) continue;
      for (size_t o = 0; o < n.outs.size(); ++o) {
        if (!want_[i][o]) continue;
        Plan p = plan_region(g_, i, static_cast<int>(o), *want_[i][o]);
        for (const Plan::Read& r : p.reads) ask(n.args[r.arg], r.region);
        plans_[i][o] = std::move(p);
      }
    }
    for (int i = 0; i < g_.size(); ++i)
      for (size_t o = 0; o < want_[i].size(); ++o) {
        if (!want_[i][o]) continue;
        Expected<Value> v = emit(i, static_cast<int>(o));
        if (!v) return v.error();
        values_[i][o] = std::move(*v);
      }
    return take(*values_[target.node][target.output], box);
  }

 private:
  void ask(TensorRef t, const Region& r) {
    std::optional<Region>& w = want_[t.node][t.output];
    w = w ? bounding(*w, r) : r;
  }

  std::string name_of(const Node& n) const {
    return prefix_ + (n.name.empty() ? std::string(op_name(n.op)) : n.name);
  }

  // `want` out of a value holding more: a slice, on the axes that differ.
  Expected<TensorRef> take(const Value& v, const Region& want) {
    if (v.region == want) return v.ref;
    Ints starts, ends, axes;
    for (size_t a = 0; a < want.size(); ++a) {
      if (want[a] == v.region[a]) continue;
      axes.push_back(static_cast<int64_t>(a));
      starts.push_back(want[a].lo - v.region[a].lo);
      ends.push_back(want[a].hi - v.region[a].lo);
    }
    Attrs attrs;
    attrs.set(AttrKey::starts, starts).set(AttrKey::ends, ends).set(AttrKey::axes, axes);
    attrs.set(AttrKey::steps, Ints(axes.size(), 1));
    return b_->add1(Op::Slice, {v.ref}, std::move(attrs), prefix_ + "slice");
  }

  Expected<Value> emit(int i, int o) {
    const Node& n = g_.node(i);
    if (n.op == Op::Input || n.op == Op::Weight)
      return Value{inputs_.at(n.name), full_region(n.outs[0].shape)};
    if (is_source(n.op)) {
      Node copy = n;
      copy.name = name_of(n);
      return Value{b_->add_node(std::move(copy)), full_region(n.outs[0].shape)};
    }
    const Plan& p = *plans_[i][o];
    std::vector<TensorRef> args;
    bool whole = is_full(p.out, n.outs[o].shape);
    for (const Plan::Read& r : p.reads) {
      const TensorRef arg = n.args[r.arg];
      Expected<TensorRef> t = take(*values_[arg.node][arg.output], r.region);
      if (!t) return t.error();
      args.push_back(*t);
      whole = whole && is_full(r.region, g_.type(arg).shape);
    }
    if (p.kind == Plan::kForward) return Value{args[0], p.out};
    if (whole && p.op == n.op && p.attrs == n.attrs) {
      Node copy = n;
      copy.args = std::move(args);
      copy.name = name_of(n);
      return Value{{b_->add_node(std::move(copy)).node, o}, p.out};
    }
    Expected<std::vector<TensorRef>> r = b_->add(p.op, std::move(args), p.attrs, name_of(n));
    if (!r)
      return Error{"cannot recompute a box of " + describe_node(g_, i) + ": " + r.error().message};
    const TensorRef t = (*r)[p.op == n.op ? o : 0];
    TSO_CHECK(b_->type(t).shape == region_shape(p.out),
              describe_node(g_, i) + " recomputes " + to_string(b_->type(t).shape));
    return Value{t, p.out};
  }

  const Graph& g_;
  const std::map<std::string, TensorRef>& inputs_;
  GraphBuilder* b_;
  std::string prefix_;
  std::vector<std::vector<std::optional<Region>>> want_;
  std::vector<std::vector<std::optional<Plan>>> plans_;
  std::vector<std::vector<std::optional<Value>>> values_;
};

// Copies the mutant into `b`; returns its outputs and adds the source's
// inputs it lacks to `inputs`.
Expected<std::vector<TensorRef>> copy_mutant(const Graph& source, const Graph& mutant,
                                             GraphBuilder* b,
                                             std::map<std::string, TensorRef>* inputs) {
  std::vector<TensorRef> at(mutant.size());
  for (int i = 0; i < mutant.size(); ++i) {
    Node n = mutant.node(i);
    for (TensorRef& r : n.args) r = {at[r.node].node, r.output};
    at[i] = b->add_node(n);
    if (n.op == Op::Input || n.op == Op::Weight) (*inputs)[n.name] = at[i];
  }
  for (int i : source.input_nodes()) {
    const Node& n = source.node(i);
    auto it = inputs->find(n.name);
    if (it == inputs->end())
      (*inputs)[n.name] =
          n.op == Op::Input ? b->input(n.name, n.outs[0]) : b->weight(n.name, n.outs[0], n.data);
    else if (b->type(it->second) != n.outs[0])
      return Error{"input '" + n.name + "' is " + to_string(n.outs[0]) + " in the source and " +
                   to_string(b->type(it->second)) + " in the mutant"};
  }
  std::vector<TensorRef> outs;
  for (const GraphOutput& o : mutant.outputs()) outs.push_back({at[o.ref.node].node, o.ref.output});
  return outs;
}

}  // namespace

Expected<Graph> correct(const Graph& source, const Graph& mutant, const std::vector<Box>& wrong) {
  if (source.outputs().size() != mutant.outputs().size())
    return Error{"the source has " + std::to_string(source.outputs().size()) +
                 " outputs and the mutant " + std::to_string(mutant.outputs().size())};
  for (size_t i = 0; i < source.outputs().size(); ++i)
    if (source.type(source.outputs()[i].ref) != mutant.type(mutant.outputs()[i].ref))
      return Error{"output " + std::to_string(i) + " is " +
                   to_string(source.type(source.outputs()[i].ref)) + " in the source and " +
                   to_string(mutant.type(mutant.outputs()[i].ref)) + " in the mutant"};
  for (size_t k = 0; k < wrong.size(); ++k)
    TSO_RETURN_IF_ERROR(check_box(mutant, wrong[k], static_cast<int>(k)));
  if (wrong.empty()) return mutant;

  GraphBuilder b(mutant.name());
  std::map<std::string, TensorRef> inputs;
  Expected<std::vector<TensorRef>> outs = copy_mutant(source, mutant, &b, &inputs);
  if (!outs) return outs.error();
  for (size_t k = 0; k < wrong.size(); ++k) {
    const Box& box = wrong[k];
    const std::string prefix = "correction/box" + std::to_string(k) + "/";
    Region region;
    for (size_t a = 0; a < box.starts.size(); ++a) region.push_back({box.starts[a], box.ends[a]});
    BoxRecompute recompute(source, inputs, &b, prefix);
    Expected<TensorRef> patch = recompute.run(source.outputs()[box.output].ref, region);
    if (!patch)
      return Error{"correction of box " + std::to_string(k) + ": " + patch.error().message};
    Attrs attrs;
    attrs.set(AttrKey::starts, box.starts);
    Expected<TensorRef> written = b.add1(Op::UpdateSlice, {(*outs)[box.output], *patch},
                                         std::move(attrs), prefix + "update_slice");
    if (!written) return written.error();
    (*outs)[box.output] = *written;
  }
  for (size_t i = 0; i < outs->size(); ++i) b.output(mutant.outputs()[i].name, (*outs)[i]);
  return b.finish();
}

}  // namespace tso::verifier
