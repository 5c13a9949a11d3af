// Resize of a constant in any mode (internal to frontend/): DINOv2 and ViTs
// run at another size than they were trained at resize their position
// embeddings, a weight, bicubically in forward. Separable: each resized axis
// in turn, every output element a weighted sum of input elements along it,
// as ONNX's reference defines the weights (resize_taps).
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/fold_ops.h"
#include "frontend/host_tensor_util.h"
#include "frontend/onnx_util.h"
#include "frontend/resize_plan.h"

namespace tso::onnx_frontend {

namespace {

// `x` resized along axis d.
HostTensor resize_axis(const HostTensor& x, const ResizePlan& p, const onnx::NodeProto& n, int d) {
  Shape s = x.shape;
  const int64_t in = s[d];
  s[d] = p.out[d];
  HostTensor y = HostTensor::zeros(x.dtype, s);
  int64_t inner = 1;
  for (int k = d + 1; k < s.rank(); ++k) inner *= s[k];
  const int64_t outer = x.numel() / (in * inner);
  for (int64_t o = 0; o < p.out[d]; ++o) {
    const ResizeTaps taps = resize_taps(p, n, d, o, in);
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t i = 0; i < inner; ++i) {
        double v = 0;
        for (const auto& [at, w] : taps) v += w * x.f[(a * in + at) * inner + i];
        y.f[(a * p.out[d] + o) * inner + i] = v;
      }
  }
  return y;
}

}  // namespace

FoldResult fold_resize(const onnx::NodeProto& n, int64_t, FoldInputs in, int64_t limit) {
  Expected<const HostTensor*> x = need_input(in, 0);
  if (!x) return x.error();
  if (!(*x)->is_float()) return Declined();
  const HostTensor* scales = in.size() > 2 ? in[2] : nullptr;
  const HostTensor* sizes = in.size() > 3 ? in[3] : nullptr;
  std::string unsupported;
  Expected<ResizePlan> p = plan_resize(n, (*x)->shape, scales, sizes, &unsupported);
  if (!p) return p.error();
  if (!unsupported.empty()) return Declined();
  HostTensor y = **x;
  for (int d = 0; d < y.shape.rank(); ++d) {
    if (p->out[d] == y.shape[d] && p->scale[d] == 1.0) continue;
    Shape next = y.shape;
    next[d] = p->out[d];
    const std::optional<int64_t> count = next.checked_numel();
    if (!count || *count > limit) return Declined();
    y = resize_axis(y, *p, n, d);
  }
  for (double& v : y.f) v = round_to(y.dtype, v);
  return std::vector<HostTensor>{std::move(y)};
}

}  // namespace tso::onnx_frontend
