#include "runtime/common/geometry.h"

#include <algorithm>
#include <string>

namespace tso::rt {
namespace {

Expected<WindowAxis> resolve_axis(const Padding& p, int d, int64_t in, int64_t k, int64_t stride,
                                  int64_t dil, bool ceil_mode) {
  if (k < 1 || stride < 1 || dil < 1) return Error{"kernel, stride and dilation must be positive"};
  WindowAxis a{in, k, stride, dil, 0, 0, 0};
  const int64_t span = (k - 1) * dil + 1;
  if (p.mode == Padding::kSame) {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - in);
    a.pad_lo = total / 2;
    a.pad_hi = total - a.pad_lo;
  } else if (p.mode == Padding::kExplicit) {
    a.pad_lo = p.pads[d];
    a.pad_hi = p.pads[d + 2];
  }
  const int64_t room = in + a.pad_lo + a.pad_hi - span;
  if (room < 0)
    return Error{"window of " + std::to_string(span) + " is larger than the padded input of " +
                 std::to_string(in + a.pad_lo + a.pad_hi)};
  a.out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (a.out - 1) * stride >= in + a.pad_lo) --a.out;
  return a;
}

}  // namespace

Expected<std::vector<WindowAxis>> resolve_window(const Shape& x, int64_t kh, int64_t kw,
                                                 const Attrs& attrs, bool ceil_mode) {
  if (x.rank() != 4) return Error{"input " + to_string(x) + " is not NCHW"};
  const std::vector<int64_t>& st = attrs.ints(AttrKey::stride);
  std::vector<int64_t> dil{1, 1};
  if (attrs.has(AttrKey::dilation)) dil = attrs.ints(AttrKey::dilation);
  if (st.size() != 2 || dil.size() != 2) return Error{"stride and dilation need 2 values"};
  const Padding& p = attrs.pad(AttrKey::pad);
  std::vector<WindowAxis> axes;
  const int64_t k[2] = {kh, kw};
  for (int d = 0; d < 2; ++d) {
    Expected<WindowAxis> a = resolve_axis(p, d, x[2 + d], k[d], st[d], dil[d], ceil_mode);
    if (!a) return a.error();
    axes.push_back(*a);
  }
  return axes;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.rank(), 1);
  for (int i = s.rank() - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  std::vector<int64_t> own = strides_of(s), st(out.rank(), 0);
  const int shift = out.rank() - s.rank();
  for (int i = 0; i < s.rank(); ++i) st[shift + i] = s[i] == 1 ? 0 : own[i];
  return st;
}

Expected<MatmulGeometry> matmul_geometry(const Shape& a_in, const Shape& b_in) {
  if (a_in.rank() == 0 || b_in.rank() == 0)
    return Error{"matmul operands must have rank >= 1, got " + to_string(a_in) + " and " +
                 to_string(b_in)};
  Shape a = a_in.rank() == 1 ? Shape{1, a_in[0]} : a_in;
  Shape b = b_in.rank() == 1 ? Shape{b_in[0], 1} : b_in;
  const int ra = a.rank(), rb = b.rank();
  MatmulGeometry g;
  g.m = a[ra - 2];
  g.k = a[ra - 1];
  g.n = b[rb - 1];
  if (b[rb - 2] != g.k)
    return Error{"matmul inner dimensions differ: " + to_string(a_in) + " x " + to_string(b_in)};
  Shape ba(a.dims().first(ra - 2)), bb(b.dims().first(rb - 2));
  const int r = std::max(ba.rank(), bb.rank());
  for (int i = 0; i < r; ++i) {
    const int ia = i - (r - ba.rank()), ib = i - (r - bb.rank());
    const int64_t da = ia >= 0 ? ba[ia] : 1, db = ib >= 0 ? bb[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return Error{"matmul batch dimensions " + to_string(ba) + " and " + to_string(bb) +
                   " do not broadcast"};
    g.batch_shape.push_back(std::max(da, db));
  }
  const int64_t total = g.batch_shape.numel();
  if (bb.numel() == 1 && ba.numel() == total) {
    // One product: the batch of A is just more rows.
    g.m *= total;
    g.batch = 1;
    return g;
  }
  g.batch = total;
  auto stride_for = [&](const Shape& s, int64_t matrix, bool* expand) -> int64_t {
    if (s.numel() == 1) return 0;
    if (s.numel() == total) return matrix;
    *expand = true;
    return matrix;
  };
  g.stride_a = stride_for(ba, g.m * g.k, &g.expand_a);
  g.stride_b = stride_for(bb, g.k * g.n, &g.expand_b);
  return g;
}

}  // namespace tso::rt
