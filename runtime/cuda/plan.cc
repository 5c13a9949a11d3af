#include "runtime/cuda/plan.h"

#include <algorithm>

#include "runtime/common/geometry.h"
#include "runtime/common/memory.h"

namespace tso::cuda {
namespace {

// Product of the dimensions before `axis`: 1 means the slices along `axis`
// are consecutive byte ranges.
int64_t outer_extent(const Shape& s, int64_t axis) {
  int64_t n = 1;
  for (int i = 0; i < axis; ++i) n *= s[i];
  return n;
}

// Families that compute on f32 values. Data movement, and where (it selects
// elements, whatever their type), take any dtype.
bool computes(Kernel k) {
  return k != Kernel::kSource && k != Kernel::kView && k != Kernel::kCopy && k != Kernel::kPad &&
         k != Kernel::kConcat && k != Kernel::kUpdateSlice && k != Kernel::kWhere;
}

Status check_dtypes(const Graph& g, int i, Kernel k) {
  if (!computes(k)) return Status::Ok();
  const Node& n = g.node(i);
  auto bad = [&](const TensorType& t) -> Status {
    if (t.dtype == DType::kF32) return Status::Ok();
    return Error{describe_node(g, i) + ": the CUDA runtime computes in f32 only, got " +
                 to_string(t)};
  };
  if (k == Kernel::kIsNaN) return bad(g.type(n.args[0]));  // its result is a bool mask
  for (TensorRef r : n.args) TSO_RETURN_IF_ERROR(bad(g.type(r)));
  for (const TensorType& t : n.outs) TSO_RETURN_IF_ERROR(bad(t));
  return Status::Ok();
}

// Follows view parents to the tensor that owns the memory, summing offsets.
std::pair<int, int64_t> resolve_root(const std::vector<TensorPlan>& ts, int t) {
  int64_t offset = 0;
  while (ts[t].parent >= 0) {
    offset += ts[t].view_offset;
    t = ts[t].parent;
  }
  return {t, offset};
}

// Per tensor: how many times it is read (as a node argument or a graph
// output) and the last node that reads it (g.size() for a graph output).
struct Reads {
  std::vector<int> count, last;
};

Reads reads_of(const Graph& g, const Plan& plan) {
  Reads r{std::vector<int>(plan.tensors.size(), 0), std::vector<int>(plan.tensors.size(), -1)};
  auto read = [&](TensorRef ref, int at) {
    const int t = plan.tensor_id(ref);
    ++r.count[t];
    r.last[t] = std::max(r.last[t], at);
  };
  for (int i = 0; i < g.size(); ++i)
    for (TensorRef a : g.node(i).args) read(a, i);
  for (const GraphOutput& o : g.outputs()) read(o.ref, g.size());
  return r;
}

// Whether update_slice node `at` may write into its base `base`: the base
// owns its memory (or is an earlier in-place update's output, so a chain of
// updates writes one buffer), and that memory is read by no one at or after
// `at` but this node's base argument. Views planned later cannot change
// that: they are of readers of the base.
bool base_is_dead(const Graph& g, const Plan& plan, const std::vector<Kernel>& kernels,
                  const Reads& reads, int base, int at) {
  const TensorPlan& b = plan.tensors[base];
  const bool owned = b.parent < 0 || g.node(b.ref.node).op == Op::UpdateSlice;
  if (!owned || kernels[b.ref.node] == Kernel::kSource || reads.count[base] != 1) return false;
  const int root = resolve_root(plan.tensors, base).first;
  for (int t = 0; t < static_cast<int>(plan.tensors.size()); ++t)
    if (t != base && resolve_root(plan.tensors, t).first == root && reads.last[t] >= at)
      return false;
  return true;
}

}  // namespace

Status check_device_memory(const Plan& plan, int64_t free_bytes) {
  // make_plan checked that every buffer together fits in int64.
  const int64_t needed = plan.static_bytes + plan.arena.peak_bytes;
  return rt::check_fits(needed, free_bytes,
                        "the CUDA plan (static " + rt::format_bytes(plan.static_bytes) +
                            ", arena " + rt::format_bytes(plan.arena.peak_bytes) + ")",
                        "the GPU");
}

std::vector<int64_t> scratch_for(const Graph& g, int i) {
  const Node& n = g.node(i);
  std::vector<int64_t> out;
  switch (n.op) {
    case Op::Conv2d: {
      const Shape& x = g.type(n.args[0]).shape;
      const Shape& w = g.type(n.args[1]).shape;
      Expected<std::vector<rt::WindowAxis>> win = rt::resolve_window(x, w[2], w[3], n.attrs, false);
      if (win && (!(*win)[0].symmetric() || !(*win)[1].symmetric())) {
        const rt::WindowAxis &h = (*win)[0], &v = (*win)[1];
        out.push_back(x[0] * x[1] * (h.in + h.pad_lo + h.pad_hi) * (v.in + v.pad_lo + v.pad_hi) *
                      4);
      }
      break;
    }
    case Op::Matmul: {
      Expected<rt::MatmulGeometry> m =
          rt::matmul_geometry(g.type(n.args[0]).shape, g.type(n.args[1]).shape);
      if (m && m->expand_a) out.push_back(m->batch * m->m * m->k * 4);
      if (m && m->expand_b) out.push_back(m->batch * m->k * m->n * 4);
      break;
    }
    case Op::LayerNorm: {
      const Shape& x = g.type(n.args[0]).shape;
      int64_t trailing = 1;
      for (int d = static_cast<int>(n.attrs.i(AttrKey::axis)); d < x.rank(); ++d) trailing *= x[d];
      for (int p = 1; p <= 2; ++p)
        if (g.type(n.args[p]).shape.numel() != trailing) out.push_back(trailing * 4);
      break;
    }
    default:
      break;
  }
  return out;
}

Expected<Plan> make_plan(const Graph& g, const PlanOptions& options) {
  Plan plan;
  const int n = g.size();
  plan.first_tensor.resize(n);
  for (int i = 0; i < n; ++i) {
    plan.first_tensor[i] = static_cast<int>(plan.tensors.size());
    for (int o = 0; o < static_cast<int>(g.node(i).outs.size()); ++o) {
      TensorPlan t;
      t.ref = {i, o};
      t.type = g.node(i).outs[o];
      t.bytes = byte_size(t.type);
      plan.tensors.push_back(t);
    }
  }
  std::vector<Kernel> kernels(n);
  for (int i = 0; i < n; ++i) {
    Expected<Kernel> k = kernel_for_node(g, i);
    if (!k) return k.error();
    kernels[i] = *k;
    TSO_RETURN_IF_ERROR(check_dtypes(g, i, *k));
  }

  const Reads reads = reads_of(g, plan);
  // Views, in graph order (a view's parent is always planned before it).
  for (int i = 0; i < n; ++i) {
    const Node& node = g.node(i);
    const int out0 = plan.first_tensor[i];
    if (kernels[i] == Kernel::kSource) {
      plan.sources.push_back(i);
      continue;
    }
    if (kernels[i] == Kernel::kView && node.op != Op::Split) {
      plan.tensors[out0].parent = plan.tensor_id(node.args[0]);
      continue;
    }
    if (node.op == Op::Split) {
      const int64_t axis = node.attrs.i(AttrKey::axis);
      if (options.split_views && outer_extent(g.type(node.args[0]).shape, axis) == 1) {
        int64_t offset = 0;
        for (size_t o = 0; o < node.outs.size(); ++o) {
          plan.tensors[out0 + o].parent = plan.tensor_id(node.args[0]);
          plan.tensors[out0 + o].view_offset = offset;
          offset += plan.tensors[out0 + o].bytes;
        }
        continue;
      }
      kernels[i] = Kernel::kCopy;  // split copies its pieces out
    }
    StepPlan step;
    step.node = i;
    step.kernel = kernels[i];
    for (TensorRef r : node.args) step.inputs.push_back(plan.tensor_id(r));
    for (size_t o = 0; o < node.outs.size(); ++o) step.outputs.push_back(out0 + o);
    step.in_place.assign(step.inputs.size(), false);
    if (node.op == Op::Concat && options.concat_views &&
        outer_extent(node.outs[0].shape, node.attrs.i(AttrKey::axis)) == 1) {
      int64_t offset = 0;
      for (size_t a = 0; a < step.inputs.size(); ++a) {
        const int x = step.inputs[a];
        const int producer = plan.tensors[x].ref.node;
        const bool repeated =
            std::find(step.inputs.begin(), step.inputs.begin() + a, x) != step.inputs.begin() + a;
        if (!repeated && plan.tensors[x].parent < 0 && kernels[producer] != Kernel::kSource &&
            kernels[producer] != Kernel::kView) {
          plan.tensors[x].parent = out0;
          plan.tensors[x].view_offset = offset;
          step.in_place[a] = true;
          ++plan.concat_inputs_in_place;
        }
        offset += plan.tensors[x].bytes;
      }
    }
    if (node.op == Op::UpdateSlice && options.update_in_place &&
        base_is_dead(g, plan, kernels, reads, step.inputs[0], i)) {
      plan.tensors[out0].parent = step.inputs[0];
      step.in_place[0] = true;
      ++plan.updates_in_place;
    }
    step.scratch_bytes = scratch_for(g, i);
    plan.steps.push_back(std::move(step));
  }

  std::vector<int64_t> sizes;
  for (const TensorPlan& t : plan.tensors) sizes.push_back(t.bytes);
  for (const StepPlan& s : plan.steps)
    sizes.insert(sizes.end(), s.scratch_bytes.begin(), s.scratch_bytes.end());
  TSO_RETURN_IF_ERROR(rt::checked_total(sizes, kDeviceAlignment, "the CUDA plan"));

  // Static block: sources in node order, aligned.
  for (int i : plan.sources) {
    TensorPlan& t = plan.tensors[plan.first_tensor[i]];
    t.storage = Storage::kStatic;
    t.offset = plan.static_bytes;
    plan.static_bytes += rt::align_up(t.bytes, kDeviceAlignment);
  }

  // Lifetimes of the arena roots: from the first write of any tensor stored
  // in them to the last read; graph outputs stay alive to the end.
  const int ntensors = static_cast<int>(plan.tensors.size());
  std::vector<int> root(ntensors);
  std::vector<int64_t> root_offset(ntensors);
  for (int t = 0; t < ntensors; ++t)
    std::tie(root[t], root_offset[t]) = resolve_root(plan.tensors, t);
  std::vector<int> buffer_of(ntensors, -1);
  std::vector<rt::Lifetime> buffers;
  auto touch = [&](int t, int time) {
    const int r = root[t];
    if (plan.tensors[r].storage == Storage::kStatic) return;
    if (buffer_of[r] < 0) {
      buffer_of[r] = static_cast<int>(buffers.size());
      buffers.push_back({plan.tensors[r].bytes, time, time});
    }
    rt::Lifetime& l = buffers[buffer_of[r]];
    l.first = std::min(l.first, time);
    l.last = std::max(l.last, time);
  };
  for (const StepPlan& s : plan.steps) {
    for (int t : s.outputs) touch(t, s.node);
    for (int t : s.inputs) touch(t, s.node);
  }
  for (int i = 0; i < n; ++i)  // views read their parents when their consumers run
    if (kernels[i] == Kernel::kView)
      for (TensorRef r : g.node(i).args) touch(plan.tensor_id(r), i);
  for (const GraphOutput& o : g.outputs()) touch(plan.tensor_id(o.ref), n);
  std::vector<std::pair<int, int>> scratch_ids;  // (step, buffer)
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (int64_t b : plan.steps[s].scratch_bytes) {
      scratch_ids.push_back({static_cast<int>(s), static_cast<int>(buffers.size())});
      buffers.push_back({b, plan.steps[s].node, plan.steps[s].node});
    }
  plan.arena = rt::plan_arena(buffers, kDeviceAlignment);
  for (auto [s, b] : scratch_ids) plan.steps[s].scratch_offsets.push_back(plan.arena.offsets[b]);

  for (int t = 0; t < ntensors; ++t) {
    TensorPlan& tp = plan.tensors[t];
    const TensorPlan& r = plan.tensors[root[t]];
    if (tp.parent >= 0) ++plan.views;
    if (r.storage == Storage::kStatic) {
      tp.storage = Storage::kStatic;
      tp.offset = r.offset + root_offset[t];
    } else {
      tp.storage = Storage::kArena;
      // A tensor nobody reads or writes (dead split pieces) still gets a
      // valid address: its root's, or 0.
      tp.offset =
          (buffer_of[root[t]] >= 0 ? plan.arena.offsets[buffer_of[root[t]]] : 0) + root_offset[t];
    }
  }
  return plan;
}

}  // namespace tso::cuda
