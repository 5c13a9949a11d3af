// grid_sample (RAFT's correlation lookups, spatial transformers) as one own
// step on row-major tensors: for each output position the taps of
// runtime/common/grid_sample.h, worked out once and applied to every
// channel; positions run on the OpenMP team.
#include <string>

#include "runtime/common/grid_sample.h"
#include "runtime/cpu/builder.h"

namespace tso::cpu {

Status lower_grid_sample(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const int grid = b.as_plain(b.value(n.args[1]));
  const Shape xs = b.tensor(x).type.shape, gs = b.tensor(grid).type.shape;
  rt::GridSampling s;
  if (!rt::parse_grid_sampling(n.attrs.str(AttrKey::mode), n.attrs.str(AttrKey::padding_mode),
                               n.attrs.i(AttrKey::align_corners), xs[2], xs[3], &s))
    return Error{b.describe(node) + ": unknown mode or padding_mode"};
  const int y = row_major_output(b, node, 0, {x, grid});
  const int64_t batch = xs[0], channels = xs[1], plane = xs[2] * xs[3], positions = gs[1] * gs[2];
  b.add_kernel("grid_sample (own)", b.describe(node), {x, grid}, {y},
               [=](const Bindings& m) -> Run {
                 const float* px = reinterpret_cast<const float*>(m.data(x));
                 const float* pg = reinterpret_cast<const float*>(m.data(grid));
                 float* py = reinterpret_cast<float*>(m.data(y));
                 return [=] {
#pragma omp parallel for schedule(static) if (batch * positions * channels > 16384)
                   for (int64_t q = 0; q < batch * positions; ++q) {
                     const int64_t i = q / positions, p = q % positions;
                     const rt::GridTaps t = rt::grid_taps(s, pg[q * 2], pg[q * 2 + 1]);
                     for (int64_t c = 0; c < channels; ++c) {
                       const float* in = px + (i * channels + c) * plane;
                       float v = 0;
                       for (int k = 0; k < t.count; ++k)
                         v += static_cast<float>(t.weight[k]) * in[t.index[k]];
                       py[(i * channels + c) * positions + p] = v;
                     }
                   }
                 };
               });
  b.set_value({node, 0}, y);
  return {};
}

}  // namespace tso::cpu
