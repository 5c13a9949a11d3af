// A product of one row by constant weights on tso's own kernel
// (row_product.h): the weights packed into panels once, in the prologue;
// on each run the kernel, then the group's post-ops as one oneDNN binary
// step (an add of zero carrying them) where the group has any.

#include <immintrin.h>

#include <cstring>
#include <optional>
#include <unordered_map>

#include "runtime/common/memory.h"
#include "runtime/cpu/builder.h"
#include "runtime/cpu/cache_residency.h"
#include "runtime/cpu/measure.h"
#include "runtime/cpu/post_ops.h"
#include "runtime/cpu/row_product.h"

namespace tso::cpu {

namespace {

// The step applying `post` to a [1, n] product: y = x + 0, then the chain.
dnnl::binary::primitive_desc post_op_step(const Builder& b, int64_t n, const PostOps& post) {
  dnnl::primitive_attr attr = b.attr();
  attr.set_post_ops(post.ops);
  const memory::desc row = plain_desc({1, n});
  return dnnl::binary::primitive_desc(b.engine(), dnnl::algorithm::binary_add, row,
                                      plain_desc({1, 1}), row, attr);
}

rt::AlignedBuffer<float> zeroed_floats(int64_t n) {
  rt::AlignedBuffer<float> f = rt::aligned_buffer<float>(n * 4);
  if (f) std::memset(f.get(), 0, std::max<int64_t>(n, 1) * 4);
  return f;
}

}  // namespace

double time_row_product(Builder& b, int64_t k, int64_t n, const PostOps& post) {
  const int64_t panel_floats = row_panel_floats(k, n);
  if (!can_time((panel_floats + k + 2 * n) * 4)) return kNotTimed;
  rt::AlignedBuffer<float> x = zeroed_floats(k), packed = zeroed_floats(panel_floats),
                           y = zeroed_floats(n);
  if (!x || !packed || !y) return kNotTimed;
  dnnl::stream stream(b.engine());
  // The post-op step on scratch memories of its own: what it reads does not
  // change its time.
  std::optional<dnnl::binary> step;
  std::unordered_map<int, memory> args;
  if (post.ops.len() > 0) {
    const dnnl::binary::primitive_desc pd = post_op_step(b, n, post);
    std::optional<std::unordered_map<int, memory>> scratch =
        scratch_args(b.engine(), pd, post.args);
    if (!scratch) return kNotTimed;
    step.emplace(pd);
    args = std::move(*scratch);
  }
  return best_ms(
      [&] {
        row_product(x.get(), packed.get(), k, n, y.get());
        if (step) {
          step->execute(stream, args);
          stream.wait();
        }
      },
      kNotTimed,
      [&] {
        flush_from_caches(packed.get(), panel_floats * 4);
        _mm_mfence();
      },
      kColdRuns);
}

void lower_row_product(Builder& b, const FusionGroup& group, int a, int64_t k, int64_t n, int bt,
                       bool transposed, const PostOps& post) {
  const int w = b.as_plain(bt);
  const int64_t panel_floats = row_panel_floats(k, n);
  const TensorType panels{DType::kF32, Shape{panel_floats}};
  const int packed = b.output_tensor(panels, plain_desc(panels), {w});
  b.add_kernel("pack row panels (own)", b.describe(group.anchor), {w}, {packed},
               [=](const Bindings& m) -> Run {
                 const float* src = reinterpret_cast<const float*>(m.data(w));
                 float* dst = reinterpret_cast<float*>(m.data(packed));
                 return [=] { pack_row_panels(src, k, n, transposed, dst); };
               });
  const TensorType& type = group_type(b, group);
  const bool chain = post.ops.len() > 0;
  const int product = b.output_tensor(type, plain_desc(type), {a, packed});
  b.add_kernel("row product (own)", b.describe(group.anchor), {a, packed}, {product},
               [=](const Bindings& m) -> Run {
                 const float* x = reinterpret_cast<const float*>(m.data(a));
                 const float* p = reinterpret_cast<const float*>(m.data(packed));
                 float* y = reinterpret_cast<float*>(m.data(product));
                 return [=] { row_product(x, p, k, n, y); };
               });
  if (!chain) {
    b.set_value({group.tail(), 0}, product);
    return;
  }
  const dnnl::binary::primitive_desc pd = post_op_step(b, n, post);
  b.note_scratchpad(pd);
  const int zero = b.host_floats({0.f}, Shape{1, 1});
  std::vector<int> reads = {product, zero};
  reads.insert(reads.end(), post.reads.begin(), post.reads.end());
  const int y = b.output_tensor(type, plain_desc(type), reads);
  std::vector<Arg> args = {{DNNL_ARG_SRC_0, product, pd.src0_desc()},
                           {DNNL_ARG_SRC_1, zero},
                           {DNNL_ARG_DST, y, pd.dst_desc()}};
  args.insert(args.end(), post.args.begin(), post.args.end());
  b.add_primitive(impl_name("post-ops", pd), group_nodes(b, group, post), dnnl::binary(pd),
                  std::move(args));
  b.set_value({group.tail(), 0}, y);
}

}  // namespace tso::cpu
