// update_slice, a correction's write: the patch copied into its box of the
// base. The output keeps the base's layout when it is strided (NHWC after a
// convolution, or row-major), so no reorder surrounds the correction; blocked
// layouts are brought to row-major first. When nothing reads the base after
// this node, the output is the base's buffer and only the patch moves (a
// chain of updates, one per box, then writes one buffer); otherwise the base
// is copied first.
#include <algorithm>
#include <cstring>

#include "runtime/common/geometry.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/kernels.h"

namespace tso::cpu {

namespace {

// Element strides of `t`'s bytes: its descriptor's (strided, not blocked),
// or row-major where oneDNN does not describe it (non-f32) or it is a scalar.
std::vector<int64_t> element_strides(const PlanTensor& t) {
  const int r = t.type.shape.rank();
  if (r == 0 || t.md.get_ndims() != r) return rt::strides_of(t.type.shape);
  const Dims s = t.md.get_strides();
  return std::vector<int64_t>(s.begin(), s.end());
}

// The patch's copy with its dimensions in the order of the base's bytes
// (outermost first), so that NHWC channels become the inner rows strided_copy
// moves with memcpy.
struct BoxCopy {
  std::vector<int64_t> extent, src_st, dst_st;
};
BoxCopy in_base_order(const Shape& patch, const std::vector<int64_t>& patch_st,
                      const std::vector<int64_t>& base_st) {
  std::vector<int> order(patch.rank());
  for (int d = 0; d < patch.rank(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int c) { return base_st[a] > base_st[c]; });
  BoxCopy b;
  for (int d : order)
    b.extent.push_back(patch[d]), b.src_st.push_back(patch_st[d]), b.dst_st.push_back(base_st[d]);
  return b;
}

// `t` in a strided layout: itself, or row-major when its layout is blocked.
int strided(Builder& b, int t) {
  return b.tensor(t).md.get_ndims() > 0 && b.tensor(t).md.get_inner_nblks() > 0 ? b.as_plain(t) : t;
}

// Whether graph value `r` is read once, by node `at`, and is no graph output:
// then the tensor holding it is free to overwrite there.
bool last_read_by(const Graph& g, TensorRef r, int at) {
  int reads = 0;
  for (const Node& n : g.nodes())
    for (TensorRef a : n.args) reads += a == r;
  for (const GraphOutput& o : g.outputs())
    if (o.ref == r) return false;
  return reads == 1 && std::count(g.node(at).args.begin(), g.node(at).args.end(), r) == 1;
}

}  // namespace

Status lower_update_slice(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int base = strided(b, b.value(n.args[0])), patch = strided(b, b.value(n.args[1]));
  const memory::desc md = b.tensor(base).md;
  const std::vector<int64_t> base_st = element_strides(b.tensor(base));
  const std::vector<int64_t> patch_st = element_strides(b.tensor(patch));
  const Shape base_shape = b.tensor(base).type.shape, patch_shape = b.tensor(patch).type.shape;
  // The base's buffer is overwritten when the base owns it (an arena tensor,
  // not an input, constant or view of another value) or is an earlier
  // in-place update's output, and nothing reads the base later.
  const Storage storage = b.tensor(base).storage;
  const bool owned =
      storage == Storage::kArena || (storage == Storage::kView && base == b.value(n.args[0]) &&
                                     b.graph().node(n.args[0].node).op == Op::UpdateSlice);
  const bool in_place = owned && last_read_by(b.graph(), n.args[0], node);
  int y;
  if (in_place) {
    y = b.view(base, n.outs[0]);
    b.plan().tensors[y].md = md;
  } else {
    y = b.output_tensor(n.outs[0], md, {base, patch});
  }
  const std::vector<int64_t>& starts = n.attrs.ints(AttrKey::starts);
  int64_t box = 0;
  for (int d = 0; d < base_shape.rank(); ++d) box += starts[d] * base_st[d];
  const BoxCopy c = in_base_order(patch_shape, patch_st, base_st);
  const int elem = static_cast<int>(dtype_bytes(n.outs[0].dtype));
  const int64_t base_bytes = b.tensor(base).bytes;  // the output has the base's layout
  // Reads the base in both cases: the step runs each run unless the base is
  // constant (then it is copied once, in the prologue).
  b.add_kernel(in_place ? "update_slice in place (own)" : "update_slice (own)", b.describe(node),
               {base, patch}, {y}, [=](const Bindings& m) -> Run {
                 const std::byte *from = m.data(base), *p = m.data(patch);
                 std::byte* out = m.data(y);
                 return [=] {
                   if (!in_place) std::memcpy(out, from, base_bytes);
                   strided_copy({elem, c.extent, 0, c.src_st, box, c.dst_st}, p, out);
                 };
               });
  b.set_value({node, 0}, y);
  return {};
}

}  // namespace tso::cpu
