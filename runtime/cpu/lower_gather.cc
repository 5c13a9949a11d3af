// gather (embedding lookups, ViT's class token) as one own step on row-major
// tensors: each output row is a memcpy of the data row its index picks, so
// a lookup in a stored table reads the table where it lies and moves only
// the rows it needs. Indices are checked on every run: one out of range
// stops the run with an Error naming the node, the index and its position.
// gather_elements (DeBERTa's relative-position attention) likewise, one
// element per index.
#include <string>

#include "runtime/cpu/builder.h"
#include "runtime/cpu/kernels.h"

namespace tso::cpu {

Status lower_gather(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const int idx = b.as_plain(b.value(n.args[1]));
  const TensorType data = b.tensor(x).type, indices = b.tensor(idx).type;
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  GatherRows g;
  g.row_bytes = dtype_bytes(data.dtype);
  for (int d = 0; d < data.shape.rank(); ++d) {
    if (d < axis) g.outer *= data.shape[d];
    if (d > axis) g.row_bytes *= data.shape[d];
  }
  g.extent = data.shape[axis];
  g.count = indices.shape.numel();
  g.wide = indices.dtype == DType::kI64;
  const int y = row_major_output(b, node, 0, {x, idx});
  const std::string where =
      " is out of range for axis " + std::to_string(axis) + " of " + to_string(data);
  b.add_kernel("gather (own)", b.describe(node), {x, idx}, {y}, [=](const Bindings& m) -> Run {
    const std::byte* from = m.data(x);
    const std::byte* at = m.data(idx);
    std::byte* out = m.data(y);
    return [=] {
      const int64_t bad = gather(g, from, at, out);
      if (bad < 0) return;
      const int64_t k = g.wide ? reinterpret_cast<const int64_t*>(at)[bad]
                               : reinterpret_cast<const int32_t*>(at)[bad];
      throw StepError("gather: index " + std::to_string(k) + " at position " + std::to_string(bad) +
                      where);
    };
  });
  b.set_value({node, 0}, y);
  return {};
}

Status lower_gather_elements(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const int idx = b.as_plain(b.value(n.args[1]));
  GatherElements g;
  g.data = b.tensor(x).type.shape;
  g.indices = b.tensor(idx).type.shape;
  g.axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  g.elem_bytes = dtype_bytes(b.tensor(x).type.dtype);
  g.wide = b.tensor(idx).type.dtype == DType::kI64;
  const int y = row_major_output(b, node, 0, {x, idx});
  const std::string where =
      " is out of range for axis " + std::to_string(g.axis) + " of " + to_string(b.tensor(x).type);
  b.add_kernel("gather_elements (own)", b.describe(node), {x, idx}, {y},
               [=](const Bindings& m) -> Run {
                 const std::byte* from = m.data(x);
                 const std::byte* at = m.data(idx);
                 std::byte* out = m.data(y);
                 return [=] {
                   const int64_t bad = gather_elements(g, from, at, out);
                   if (bad < 0) return;
                   const int64_t k = g.wide ? reinterpret_cast<const int64_t*>(at)[bad]
                                            : reinterpret_cast<const int32_t*>(at)[bad];
                   throw StepError("gather_elements: index " + std::to_string(k) + " at position " +
                                   std::to_string(bad) + where);
                 };
               });
  b.set_value({node, 0}, y);
  return {};
}

}  // namespace tso::cpu
