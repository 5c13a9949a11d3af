// Data movement on row-major tensors: views that own no memory (reshape,
// flatten, squeeze, unsqueeze; split pieces when every dimension before the
// axis is 1; slices that are one contiguous run) and strided copies
// (transpose, slice, pad, enlarge, expand, other splits, concat of non-f32
// tensors), any dtype; cast; update_slice in lower_update_slice.cc, gather in
// lower_gather.cc.
#include <algorithm>
#include <cstring>

#include "runtime/common/geometry.h"
#include "core/post_ops.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/kernels.h"

namespace tso::cpu {

namespace {

// One strided copy (and an optional fill of the whole output first) as a step.
struct CopyPlan {
  std::vector<int64_t> extent, src_st, dst_st;
  int64_t src_off = 0, dst_off = 0;
};

void add_copies(Builder& b, int node, const char* what, int y, std::vector<CopyPlan> copies,
                std::vector<int> srcs, bool fill_first, float fill_value) {
  const int elem = static_cast<int>(dtype_bytes(b.tensor(y).type.dtype));
  const int64_t count = b.tensor(y).type.shape.numel();
  std::vector<int> reads = srcs;
  b.add_kernel(
      std::string(what) + " (own)", b.describe(node), reads, {y}, [=](const Bindings& m) -> Run {
        std::vector<const std::byte*> in;
        for (int s : srcs) in.push_back(m.data(s));
        std::byte* out = m.data(y);
        return [=] {
          if (fill_first) {
            // A pad value is converted to the tensor's dtype.
            alignas(8) std::byte v[8] = {};
            if (elem == 4) std::memcpy(v, &fill_value, 4);
            if (elem == 8) {
              const int64_t i = static_cast<int64_t>(fill_value);
              std::memcpy(v, &i, 8);
            }
            fill(out, count, elem, v);
          }
          for (size_t c = 0; c < copies.size(); ++c) {
            const CopyPlan& p = copies[c];
            strided_copy({elem, p.extent, p.src_off, p.src_st, p.dst_off, p.dst_st}, in[c], out);
          }
        };
      });
}

void lower_transpose(Builder& b, int node, int x) {
  const Node& n = b.graph().node(node);
  const Shape xs = b.tensor(x).type.shape;
  const std::vector<int64_t>& perm = n.attrs.ints(AttrKey::perm);
  const std::vector<int64_t> st = rt::strides_of(xs);
  // The matmuls reading it read it through a view in its order.
  if (transpose_read_by_products(b.graph(), node, b.readers(node), b.is_output(node),
                                 b.weight_only())) {
    Dims view_st;
    for (int64_t a : perm) view_st.push_back(st[a]);
    const int y = b.view(x, n.outs[0]);
    b.plan().tensors[y].md =
        memory::desc(dims_of(n.outs[0].shape), memory::data_type::f32, view_st);
    b.set_value({node, 0}, y);
    return;
  }
  CopyPlan p;
  for (int64_t a : perm) p.extent.push_back(xs[a]), p.src_st.push_back(st[a]);
  p.dst_st = rt::strides_of(n.outs[0].shape);
  const int y = row_major_output(b, node, 0, {x});
  add_copies(b, node, "transpose", y, {p}, {x}, false, 0);
  b.set_value({node, 0}, y);
}

void lower_slice(Builder& b, int node, int x) {
  const Node& n = b.graph().node(node);
  const Shape xs = b.tensor(x).type.shape;
  const Shape& ys = n.outs[0].shape;
  const std::vector<int64_t>& starts = n.attrs.ints(AttrKey::starts);
  const std::vector<int64_t>& steps = n.attrs.ints(AttrKey::steps);
  std::vector<int64_t> axes = n.attrs.ints(AttrKey::axes);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const std::vector<int64_t> st = rt::strides_of(xs);
  CopyPlan p{std::vector<int64_t>(ys.begin(), ys.end()), st, rt::strides_of(ys)};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = axes[i] < 0 ? axes[i] + xs.rank() : axes[i];
    const int64_t dim = xs[ax], step = steps.empty() ? 1 : steps[i];
    if (dim == 0) continue;
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    p.src_off += s * st[ax];
    p.src_st[ax] = step * st[ax];
  }
  // A slice whose elements lie in one contiguous run of the source, in
  // order (rows of leading axes of extent 1: the frames a 3-D convolution's
  // temporal tap reads), is a view.
  bool contiguous = true;
  for (int d = 0; d < ys.rank(); ++d)
    contiguous = contiguous && (ys[d] == 1 || p.src_st[d] == p.dst_st[d]);
  if (contiguous) {
    b.set_value({node, 0}, b.view(x, n.outs[0], p.src_off * dtype_bytes(n.outs[0].dtype)));
    return;
  }
  const int y = row_major_output(b, node, 0, {x});
  add_copies(b, node, "slice", y, {p}, {x}, false, 0);
  b.set_value({node, 0}, y);
}

void lower_pad(Builder& b, int node, int x) {
  const Node& n = b.graph().node(node);
  const Shape xs = b.tensor(x).type.shape;
  const Shape& ys = n.outs[0].shape;
  const std::vector<int64_t>& pads = n.attrs.ints(AttrKey::pads);
  const int r = xs.rank();
  const std::vector<int64_t> xst = rt::strides_of(xs), yst = rt::strides_of(ys);
  CopyPlan p{std::vector<int64_t>(r), xst, yst};
  for (int i = 0; i < r; ++i) {
    const int64_t lo = std::max<int64_t>(0, -pads[i]);  // first input index kept
    p.extent[i] = std::max<int64_t>(0, std::min(xs[i], ys[i] - pads[i]) - lo);
    p.src_off += lo * xst[i];
    p.dst_off += (lo + pads[i]) * yst[i];
  }
  const int y = row_major_output(b, node, 0, {x});
  add_copies(b, node, "pad", y, {p}, {x}, true, static_cast<float>(n.attrs.f(AttrKey::value)));
  b.set_value({node, 0}, y);
}

// Whether `md` is an f32 strided layout other than row-major (NHWC after a
// convolution): the layout the in-layout pad, slice and split keep.
bool strided_f32(const memory::desc& md) {
  return md.get_ndims() > 0 && md.get_inner_nblks() == 0 && !is_plain(md) &&
         md.get_data_type() == memory::data_type::f32;
}

// The window of `x` (layout `md`) at `offsets` with extents `type`, copied by
// one reorder into a dense tensor of the same dimension order.
int window_copy(Builder& b, int node, const char* what, int x, const memory::desc& md,
                const TensorType& type, const Dims& offsets) {
  const memory::desc window = md.submemory_desc(dims_of(type.shape), offsets);
  const memory::desc out_md = same_order(md, dims_of(type.shape));
  dnnl::reorder::primitive_desc pd(b.engine(), window, b.engine(), out_md, b.attr());
  b.note_scratchpad(pd);
  const int y = b.output_tensor(type, out_md, {x});
  b.add_primitive(std::string(what) + " " + pd.impl_info_str(), b.describe(node), dnnl::reorder(pd),
                  {{DNNL_ARG_FROM, x, window}, {DNNL_ARG_TO, y}});
  return y;
}

// A pad that only grows an f32 tensor in a strided layout (NHWC after a
// convolution) stays in that layout: fill the output, then reorder the input
// into the window of it that it occupies.
bool lower_pad_in_layout(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  const memory::desc md = b.tensor(x).md;
  const std::vector<int64_t>& pads = n.attrs.ints(AttrKey::pads);
  if (!strided_f32(md)) return false;
  for (int64_t p : pads)
    if (p < 0) return false;
  const TensorType& type = n.outs[0];
  const memory::desc out_md = same_order(md, dims_of(type.shape));
  const Dims offsets(pads.begin(), pads.begin() + md.get_ndims());
  const memory::desc window = out_md.submemory_desc(md.get_dims(), offsets);
  const int y = b.output_tensor(type, out_md, {x});
  // The border only, as boxes: for each dimension d, the slabs before and
  // after the input along d, within the input's extent along the dimensions
  // before d and the whole extent after it.
  const Dims in_dims = md.get_dims(), out_dims = out_md.get_dims(), st = out_md.get_strides();
  const int r = static_cast<int>(in_dims.size());
  std::vector<CopyPlan> boxes;
  for (int d = 0; d < r; ++d)
    for (bool before : {true, false}) {
      const int64_t lo = pads[d], in = in_dims[d];
      CopyPlan box{std::vector<int64_t>(r), std::vector<int64_t>(r, 0),
                   std::vector<int64_t>(st.begin(), st.end())};
      for (int e = 0; e < r; ++e) {
        int64_t start = 0, extent = out_dims[e];
        if (e < d) start = pads[e], extent = in_dims[e];
        if (e == d) start = before ? 0 : lo + in, extent = before ? lo : out_dims[e] - lo - in;
        box.extent[e] = extent;
        box.dst_off += start * st[e];
      }
      bool empty = false;
      for (int64_t x : box.extent) empty = empty || x == 0;
      if (!empty) boxes.push_back(box);
    }
  const float value = static_cast<float>(n.attrs.f(AttrKey::value));
  // Reads x only to run when x changes (each run, or once for a constant).
  b.add_kernel("pad border (own)", b.describe(node), {x}, {y}, [=](const Bindings& m) -> Run {
    std::byte* out = m.data(y);
    return [=] {
      for (const CopyPlan& box : boxes)
        strided_copy({4, box.extent, 0, box.src_st, box.dst_off, box.dst_st},
                     reinterpret_cast<const std::byte*>(&value), out);
    };
  });
  dnnl::reorder::primitive_desc pd(b.engine(), md, b.engine(), window, b.attr());
  b.note_scratchpad(pd);
  b.add_primitive("pad " + std::string(pd.impl_info_str()), b.describe(node), dnnl::reorder(pd),
                  {{DNNL_ARG_FROM, x}, {DNNL_ARG_TO, y, window}});
  b.set_value({node, 0}, y);
  return true;
}

// A slice with unit steps of an f32 tensor in a strided layout (NHWC) stays
// in that layout: one reorder from the window it keeps (NASNet crops before
// its average pools).
bool lower_slice_in_layout(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  const memory::desc md = b.tensor(x).md;
  if (!strided_f32(md)) return false;
  const std::vector<int64_t>& steps = n.attrs.ints(AttrKey::steps);
  for (int64_t step : steps)
    if (step != 1) return false;
  const Shape xs = b.tensor(x).type.shape;
  const std::vector<int64_t>& starts = n.attrs.ints(AttrKey::starts);
  std::vector<int64_t> axes = n.attrs.ints(AttrKey::axes);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  Dims offsets(xs.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = axes[i] < 0 ? axes[i] + xs.rank() : axes[i];
    const int64_t s = starts[i] < 0 ? starts[i] + xs[ax] : starts[i];
    offsets[ax] = std::clamp<int64_t>(s, 0, xs[ax]);
  }
  const TensorType& type = n.outs[0];
  if (type.shape.numel() == 0) return false;
  b.set_value({node, 0}, window_copy(b, node, "slice", x, md, type, offsets));
  return true;
}

// A split of an f32 tensor in a strided layout (NHWC, after a merged
// convolution) keeps that layout: each piece is one reorder from its window
// into a dense tensor of the same order, instead of a trip through NCHW.
bool lower_split_in_layout(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.value(n.args[0]);
  const memory::desc md = b.tensor(x).md;
  if (!strided_f32(md)) return false;
  int64_t axis = n.attrs.i(AttrKey::axis);
  if (axis < 0) axis += md.get_ndims();
  Dims offsets(md.get_ndims(), 0);
  for (size_t k = 0; k < n.outs.size(); ++k) {
    const TensorType& type = n.outs[k];
    b.set_value({node, static_cast<int32_t>(k)},
                type.shape.numel() > 0 ? window_copy(b, node, "split", x, md, type, offsets)
                                       : b.output_tensor(type, plain_desc(type), {x}));
    offsets[axis] += type.shape[static_cast<int>(axis)];
  }
  return true;
}

void lower_enlarge(Builder& b, int node, int x) {
  const Shape xs = b.tensor(x).type.shape;
  const Shape& ys = b.graph().node(node).outs[0].shape;
  const std::vector<int64_t> yst = rt::strides_of(ys);
  CopyPlan p{std::vector<int64_t>(xs.begin(), xs.end()), rt::strides_of(xs), yst};
  p.dst_off = (ys[2] - xs[2]) / 2 * yst[2] + (ys[3] - xs[3]) / 2 * yst[3];
  const int y = row_major_output(b, node, 0, {x});
  add_copies(b, node, "enlarge", y, {p}, {x}, true, 0);
  b.set_value({node, 0}, y);
}

// Pieces of `x` along `axis`: views when every dimension before the axis is
// 1 (each piece is then a contiguous byte range), else copies.
void lower_split(Builder& b, int node, int x) {
  const Node& n = b.graph().node(node);
  const Shape xs = b.tensor(x).type.shape;
  int64_t axis = n.attrs.i(AttrKey::axis);
  if (axis < 0) axis += xs.rank();
  bool contiguous = true;
  for (int64_t i = 0; i < axis; ++i) contiguous = contiguous && xs[i] == 1;
  const std::vector<int64_t> st = rt::strides_of(xs);
  const int64_t elem = dtype_bytes(n.outs[0].dtype);
  int64_t start = 0;
  for (size_t k = 0; k < n.outs.size(); ++k) {
    const Shape& ps = n.outs[k].shape;
    if (contiguous) {
      b.set_value({node, static_cast<int32_t>(k)}, b.view(x, n.outs[k], start * st[axis] * elem));
    } else {
      CopyPlan p{std::vector<int64_t>(ps.begin(), ps.end()), st, rt::strides_of(ps)};
      p.src_off = start * st[axis];
      const int y = row_major_output(b, node, static_cast<int>(k), {x});
      add_copies(b, node, "split", y, {p}, {x}, false, 0);
      b.set_value({node, static_cast<int32_t>(k)}, y);
    }
    start += ps[static_cast<int>(axis)];
  }
}

void lower_expand(Builder& b, int node, int x) {
  const Shape xs = b.tensor(x).type.shape;
  const Shape& ys = b.graph().node(node).outs[0].shape;
  CopyPlan p{std::vector<int64_t>(ys.begin(), ys.end()), rt::broadcast_strides(xs, ys),
             rt::strides_of(ys)};
  const int y = row_major_output(b, node, 0, {x});
  add_copies(b, node, "expand", y, {p}, {x}, false, 0);
  b.set_value({node, 0}, y);
}

Status lower_cast(Builder& b, int node, int x) {
  const DType from = b.tensor(x).type.dtype, to = b.graph().node(node).outs[0].dtype;
  const int64_t count = b.tensor(x).type.shape.numel();
  const int y = row_major_output(b, node, 0, {x});
  b.add_kernel("cast (own)", b.describe(node), {x}, {y}, [=](const Bindings& m) -> Run {
    const std::byte* in = m.data(x);
    std::byte* out = m.data(y);
    return [=] { convert(in, from, out, to, count); };
  });
  b.set_value({node, 0}, y);
  return {};
}

void lower_concat_copies(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const Shape& ys = n.outs[0].shape;
  int64_t axis = n.attrs.i(AttrKey::axis);
  if (axis < 0) axis += ys.rank();
  const std::vector<int64_t> yst = rt::strides_of(ys);
  std::vector<CopyPlan> copies;
  std::vector<int> srcs;
  int64_t start = 0;
  for (const TensorRef& r : n.args) {
    const int t = b.as_plain(b.value(r));
    const Shape s = b.tensor(t).type.shape;
    CopyPlan p{std::vector<int64_t>(s.begin(), s.end()), rt::strides_of(s), yst};
    p.dst_off = start * yst[axis];
    copies.push_back(p);
    srcs.push_back(t);
    start += s[static_cast<int>(axis)];
  }
  const int y = row_major_output(b, node, 0, srcs);
  add_copies(b, node, "concat", y, copies, srcs, false, 0);
  b.set_value({node, 0}, y);
}

}  // namespace

int row_major_output(Builder& b, int node, int index, const std::vector<int>& reads) {
  const TensorType& type = b.graph().node(node).outs[index];
  // No descriptor for dtypes oneDNN lacks (i64, bool): making one throws.
  const memory::desc md =
      dnnl_type(type.dtype) == memory::data_type::undef ? memory::desc() : plain_desc(type);
  return b.output_tensor(type, md, reads);
}

bool is_movement(const Graph& g, int node) {
  const Node& n = g.node(node);
  switch (n.op) {
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
    case Op::Split:
    case Op::Transpose:
    case Op::Slice:
    case Op::Pad:
    case Op::Enlarge:
    case Op::UpdateSlice:
    case Op::Gather:
    case Op::GatherElements:
    case Op::Expand:
    case Op::Cast:
      return true;
    case Op::Concat:
      return n.outs[0].dtype != DType::kF32;
    default:
      return false;
  }
}

Status lower_movement(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  if (n.op == Op::Concat) {
    lower_concat_copies(b, node);
    return {};
  }
  if (n.op == Op::UpdateSlice) return lower_update_slice(b, node);
  if (n.op == Op::Gather) return lower_gather(b, node);
  if (n.op == Op::GatherElements) return lower_gather_elements(b, node);
  if (n.op == Op::Pad && lower_pad_in_layout(b, node)) return {};
  if (n.op == Op::Slice && lower_slice_in_layout(b, node)) return {};
  if (n.op == Op::Split && lower_split_in_layout(b, node)) return {};
  const int x = b.as_plain(b.value(n.args[0]));
  switch (n.op) {
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
      b.set_value({node, 0}, b.view(x, n.outs[0]));
      return {};
    case Op::Split:
      lower_split(b, node, x);
      return {};
    case Op::Transpose:
      lower_transpose(b, node, x);
      return {};
    case Op::Slice:
      lower_slice(b, node, x);
      return {};
    case Op::Pad:
      lower_pad(b, node, x);
      return {};
    case Op::Enlarge:
      lower_enlarge(b, node, x);
      return {};
    case Op::Expand:
      lower_expand(b, node, x);
      return {};
    case Op::Cast:
      return lower_cast(b, node, x);
    default:
      return Error{b.describe(node) + ": not a data-movement operator"};
  }
}

int broadcast_to(Builder& b, int node, int t, const Shape& shape) {
  t = b.as_plain(t);
  const TensorType type{b.tensor(t).type.dtype, shape};
  CopyPlan p{std::vector<int64_t>(shape.begin(), shape.end()),
             rt::broadcast_strides(b.tensor(t).type.shape, shape), rt::strides_of(shape)};
  const int y = b.output_tensor(type, plain_desc(type), {t});
  add_copies(b, node, "broadcast", y, {p}, {t}, false, 0);
  b.plan().steps.back().operand_copy = true;
  return y;
}

int strided_copy_tensor(Builder& b, int node, const char* what, int src, const TensorType& type,
                        std::vector<int64_t> extent, std::vector<int64_t> src_st,
                        std::vector<int64_t> dst_st) {
  const int y = b.output_tensor(type, plain_desc(type), {src});
  add_copies(b, node, what, y, {CopyPlan{std::move(extent), std::move(src_st), std::move(dst_st)}},
             {src}, true, 0);
  return y;
}

}  // namespace tso::cpu
