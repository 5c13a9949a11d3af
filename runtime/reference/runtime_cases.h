// Graphs in the canonical text format that every runtime's tests run and
// compare with the reference executor: together they cover every operator
// and the paths the runtimes choose between (cuDNN/cuBLASLt variants,
// oneDNN layouts and post-ops, own kernels). With helpers that give them
// stored weights and seeded inputs. Test-only; runtime/cuda and runtime/cpu
// tests include it.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>

#include "core/testing/stored_weights.h"
#include "core/text_format.h"
#include "runtime/reference/tensor.h"

namespace tso::ref::testing {

struct Case {
  const char* name;
  const char* text;
};

// Seeded uniform values: +-1/sqrt(fan_in) for rank >= 2, [0.5, 1.5] for
// vectors and scalars (positive, so that variances and divisors are).
inline std::vector<float> seeded_values(const TensorType& type, uint64_t seed) {
  const Shape& s = type.shape;
  float lo = 0.5f, hi = 1.5f;
  if (s.rank() >= 2) {
    const double fan_in = double(s.numel()) / double(std::max<int64_t>(s[0], 1));
    hi = static_cast<float>(1.0 / std::sqrt(std::max(fan_in, 1.0)));
    lo = -hi;
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(s.numel());
  for (float& x : v) x = dist(rng);
  return v;
}

// Parses `text` and stores seeded values in every weight, or `fixed[name]`
// in each element of the weights named there.
inline Graph graph_with_weights(std::string_view text, uint64_t seed,
                                const std::map<std::string, float>& fixed = {}) {
  uint64_t k = seed;
  return tso::testing::with_stored(text, [&](const Node& n) {
    std::vector<float> v = seeded_values(n.outs[0], k++);
    if (auto it = fixed.find(n.name); it != fixed.end()) std::fill(v.begin(), v.end(), it->second);
    return tso::testing::float_bytes(v);
  });
}

// Normal(0, 1) values for every graph input, by name.
inline std::map<std::string, ref::Tensor<float>> random_feeds(const Graph& g, uint64_t seed) {
  std::map<std::string, ref::Tensor<float>> feeds;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (int i : g.input_nodes()) {
    const Node& n = g.node(i);
    if (n.op != Op::Input) continue;
    std::vector<float> v(n.outs[0].shape.numel());
    for (float& x : v) x = dist(rng);
    feeds[n.name] = ref::Tensor<float>(n.outs[0].shape, std::move(v));
  }
  return feeds;
}

inline const Case kCases[] = {
    {"conv_bias_relu_fused", R"(graph g {
  input x: f32[1,8,12,12]
  weight w: f32[16,8,3,3]
  weight b: f32[16]
  %c = conv2d(x, w, b, pad=same, act=relu)
  output y = %c
})"},
    {"conv_asymmetric_same_stride2_sigmoid", R"(graph g {
  input x: f32[2,3,9,9]
  weight w: f32[4,3,2,2]
  weight b: f32[4]
  %c = conv2d(x, w, b, stride=[2,2], pad=same, act=sigmoid)
  output y = %c
})"},
    {"conv_grouped_dilated_tanh", R"(graph g {
  input x: f32[1,8,10,10]
  weight w: f32[8,2,3,3]
  %c = conv2d(x, w, pad=[2,2,2,2], dilation=[2,2], groups=4, act=tanh)
  output y = %c
})"},
    {"conv_bias_relu6_fused", R"(graph g {
  input x: f32[1,8,12,12]
  weight w: f32[16,8,3,3]
  weight b: f32[16]
  %c = conv2d(x, w, b, pad=same, act=clip, min=0, max=6)
  output y = %c
})"},
    {"conv_strided_gelu_fused", R"(graph g {
  input x: f32[2,3,9,9]
  weight w: f32[4,3,3,3]
  %c = conv2d(x, w, stride=[2,2], pad=same, act=gelu)
  output y = %c
})"},
    {"conv_depthwise_bias", R"(graph g {
  input x: f32[1,16,7,7]
  weight w: f32[16,1,3,3]
  weight b: f32[16]
  %c = conv2d(x, w, b, pad=[1,0,1,2], groups=16)
  output y = %c
})"},
    {"matmul_batched_relu", R"(graph g {
  input a: f32[2,3,5,7]
  input b: f32[2,3,7,4]
  %m = matmul(a, b, act=relu)
  output y = %m
})"},
    {"matmul_gelu_clip", R"(graph g {
  input a: f32[2,6,8]
  weight b: f32[8,5]
  weight v: f32[5,4]
  %m = matmul(a, b, act=gelu)
  %n = matmul(%m, v, act=clip, max=0.25)
  output y = %n
})"},
    {"matmul_folded_rows", R"(graph g {
  input a: f32[2,6,8]
  weight b: f32[8,5]
  %m = matmul(a, b)
  output y = %m
})"},
    {"matmul_cross_broadcast", R"(graph g {
  input a: f32[2,1,3,4]
  input b: f32[1,5,4,6]
  input v: f32[6,2]
  %m = matmul(a, b)
  %n = matmul(%m, v)
  output y = %n
})"},
    {"gemm_bias_epilogue", R"(graph g {
  input a: f32[3,16]
  weight b: f32[10,16]
  weight c: f32[10]
  %g = gemm(a, b, c, trans_b=1, act=relu)
  output y = %g
})"},
    {"row_products_of_a_recurrent_cell", R"(graph g {
  input x: f32[1,70]
  input h: f32[1,130]
  weight w: f32[70,130]
  weight bw: f32[130]
  weight u: f32[1,130,130]
  %a = matmul(x, w)
  %b = add(%a, bw)
  %s = sigmoid(%b)
  %m = mul(%s, h)
  %r = reshape(%m, shape=[1,1,130])
  %c = matmul(%r, u)
  %t = tanh(%c)
  output y = %t
})"},
    {"gemm_one_row_transposed", R"(graph g {
  input a: f32[1,16]
  weight b: f32[10,16]
  weight c: f32[10]
  %g = gemm(a, b, c, trans_b=1, act=relu)
  output y = %g
})"},
    {"gemm_general_c", R"(graph g {
  input a: f32[16,3]
  input b: f32[16,10]
  input c: f32[3,1]
  %g = gemm(a, b, c, alpha=0.5, beta=2, trans_a=1, act=tanh)
  output y = %g
})"},
    {"gemm_bias_clip_and_gelu", R"(graph g {
  input a: f32[3,16]
  weight b: f32[10,16]
  weight c: f32[10]
  weight d: f32[10,6]
  %g = gemm(a, b, c, trans_b=1, act=clip, min=-0.5, max=0.5)
  %h = gemm(%g, d, act=gelu)
  output y = %h
})"},
    {"elementwise_broadcasting", R"(graph g {
  input x: f32[2,3,4]
  input z: f32[3,1]
  input s: f32[]
  %a = add(x, z)
  %m = mul(%a, z)
  %b = sub(%m, x)
  %d = div(%b, %a)
  %e = smul(%d, s)
  output y = %e
})"},
    {"unary_chain", R"(graph g {
  input x: f32[4,33]
  %r = relu(x)
  %s = sigmoid(x)
  %t = tanh(%s)
  %e = erf(%t)
  %g = gelu(x)
  %n = neg(%g)
  %c = clip(%n, min=-0.2, max=0.3)
  %x = exp(%c)
  %q = sqrt(%x)
  %p = pow(%q, %s)
  %o = add(%p, %r)
  %f = add(%o, %e)
  output y = %f
})"},
    {"normalizations", R"(graph g {
  input x: f32[2,4,3,3]
  input h: f32[2,5,24]
  weight bs: f32[4]
  weight bb: f32[4]
  weight bm: f32[4]
  weight bv: f32[4]
  weight ls: f32[24]
  weight lb: f32[1]
  %b = batchnorm(x, bs, bb, bm, bv, epsilon=0.001)
  %s = softmax(%b, axis=1)
  %l = layernorm(h, ls, lb, axis=-1)
  %t = softmax(%l, axis=-1)
  output y = %s
  output z = %t
})"},
    {"reductions_and_pools", R"(graph g {
  input x: f32[1,3,11,11]
  %r = reduce_mean(x, axes=[1,3], keepdims=0)
  %a = avgpool(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1], ceil_mode=1)
  %i = avgpool(x, kernel=[2,2], stride=[2,2], pad=same, count_include_pad=1)
  %m = maxpool(x, kernel=[3,3], stride=[2,2], pad=same)
  %g = global_avgpool(x)
  output y = %r
  output a = %a
  output i = %i
  output m = %m
  output g = %g
})"},
    {"movement", R"(graph g {
  input x: f32[1,4,6,5]
  weight w: f32[3,4,1,3]
  %t = transpose(x, perm=[0,3,1,2])
  %s = slice(x, starts=[5,1], ends=[0,4], axes=[2,3], steps=[-2,1])
  %p = pad(x, pads=[0,1,2,0,0,0,1,3], value=0.5)
  %z = pad(x, pads=[0,0,1,1,0,0,1,1])
  %e = enlarge(w, kernel=[3,5])
  %r = reshape(%t, shape=[5,24])
  %f = flatten(%p, axis=2)
  %q = squeeze(x, axes=[0])
  %u = unsqueeze(%q, axes=[1])
  output t = %r
  output s = %s
  output p = %f
  output z = %z
  output e = %e
  output u = %u
})"},
    // A conv's (NHWC on the CPU) output corrected in place by a conv's patch
    // and then by a second box (a chain); a base read again later and a
    // graph input, both copied.
    {"update_slice_in_place_and_copied", R"(graph g {
  input x: f32[1,8,6,6]
  input xs: f32[1,8,4,6]
  input p: f32[1,2,3,6]
  weight w: f32[8,8,3,3]
  weight k: f32[3,8,3,3]
  %c = conv2d(x, w, pad=same)
  %k = conv2d(xs, k)
  %u = update_slice(%c, %k, starts=[0,2,3,1])
  %v = update_slice(%u, p, starts=[0,6,0,0])
  %r = relu(x)
  %s = update_slice(%r, p, starts=[0,1,3,0])
  %t = add(%s, %r)
  %i = update_slice(x, %k, starts=[0,5,1,2])
  output y = %v
  output z = %t
  output i = %i
})"},
    {"split_and_concat_views_and_copies", R"(graph g {
  input x: f32[1,6,4]
  input v: f32[2,3]
  %r = relu(x)
  %a, %b = split(%r, axis=1, sizes=[2,4])
  %c, %d = split(v, axis=1, sizes=[1,2])
  %s = sigmoid(%a)
  %t = tanh(%b)
  %k = concat(%t, %s, x, %s, axis=1)
  %m = concat(%d, %c, axis=1)
  output y = %k
  output z = %m
})"},
    {"constants", R"(graph g {
  input x: f32[2,2,5,5]
  input m: f32[3,3]
  %e = const_eye_conv(shape=[2,2,3,3])
  %c = conv2d(x, %e, pad=same)
  %p = const_pool(shape=[2,1,3,3])
  %q = conv2d(x, %p, groups=2)
  %i = const_eye(shape=[3,3])
  %o = const_ones(shape=[3,3])
  %j = add(%i, %o)
  %n = matmul(m, %j)
  output c = %c
  output q = %q
  output n = %n
})"},
    {"conv_odd_channels_stride_dilation", R"(graph g {
  input x: f32[1,13,17,15]
  weight w: f32[19,13,3,3]
  weight b: f32[19]
  %c = conv2d(x, w, b, stride=[2,2], pad=[1,2,0,1], dilation=[2,1])
  output y = %c
})"},
    {"conv_chain_residual_clip_layouts", R"(graph g {
  input x: f32[1,24,10,10]
  weight w1: f32[24,24,3,3]
  weight b1: f32[1,24,1,1]
  weight w2: f32[24,3,3,3]
  weight w3: f32[40,24,1,1]
  weight fc: f32[10,40]
  %c1 = conv2d(x, w1, pad=same)
  %a1 = add(%c1, b1)
  %r1 = relu(%a1)
  %c2 = conv2d(%r1, w2, pad=same, groups=8)
  %s = add(%c2, %r1)
  %k = clip(%s, min=0, max=6)
  %c3 = conv2d(%k, w3, stride=[2,2])
  %g = gelu(%c3)
  %p = maxpool(%g, kernel=[3,3], stride=[2,2], pad=same)
  %q = global_avgpool(%p)
  %f = flatten(%q, axis=1)
  %o = gemm(%f, fc, trans_b=1)
  output y = %o
})"},
    {"conv_grouped_4_channels_widened", R"(graph g {
  input x: f32[1,64,10,10]
  weight w: f32[64,4,3,3]
  weight b: f32[64]
  %c = conv2d(x, w, b, pad=same, groups=16, act=relu)
  %d = conv2d(%c, w, stride=[2,2], pad=[1,1,1,1], groups=16)
  output y = %d
})"},
    {"conv_grouped_2_and_8_channels_strided", R"(graph g {
  input x: f32[2,16,11,9]
  weight a: f32[16,2,3,3]
  weight b: f32[16]
  weight c: f32[16,8,3,3]
  %p = conv2d(x, a, b, stride=[2,2], pad=[1,0,1,2], groups=8)
  %r = relu(%p)
  %q = conv2d(%r, c, pad=same, groups=2)
  %s = add(%q, %r)
  output y = %s
})"},
    {"conv_batchnorm_folded_as_post_ops", R"(graph g {
  input x: f32[2,5,7,7]
  weight w: f32[6,5,3,3]
  weight s: f32[6]
  weight t: f32[6]
  weight m: f32[6]
  weight v: f32[6]
  weight q: f32[6,1,1]
  %c = conv2d(x, w)
  %b = batchnorm(%c, s, t, m, v, epsilon=0.001)
  %r = sigmoid(%b)
  %d = div(%r, q)
  %e = sub(%d, q)
  output y = %e
})"},
    {"concat_of_convs_then_conv", R"(graph g {
  input x: f32[1,12,9,9]
  weight a: f32[16,12,1,1]
  weight b: f32[8,12,3,3]
  weight c: f32[8,24,3,3]
  %p = conv2d(x, a, act=relu)
  %q = conv2d(x, b, pad=same, act=relu)
  %k = concat(%p, %q, axis=1)
  %r = conv2d(%k, c, pad=[1,1,1,1], groups=1)
  %s = concat(%k, %r, axis=1)
  %t = avgpool(%s, kernel=[3,3], stride=[1,1], pad=[1,1,1,1], count_include_pad=0)
  output y = %t
})"},
    {"projections_bert_style", R"(graph g {
  input h: f32[1,12,32]
  weight wq: f32[32,32]
  weight bq: f32[32]
  weight wk: f32[32,32]
  weight w1: f32[32,64]
  weight b1: f32[64]
  weight w2: f32[64,32]
  weight g: f32[32]
  weight e: f32[32]
  weight sc: f32[]
  %q = matmul(h, wq)
  %qb = add(%q, bq)
  %k = matmul(h, wk)
  %q4 = reshape(%qb, shape=[1,12,4,8])
  %k4 = reshape(%k, shape=[1,12,4,8])
  %qt = transpose(%q4, perm=[0,2,1,3])
  %kt = transpose(%k4, perm=[0,2,3,1])
  %s = matmul(%qt, %kt)
  %sc = smul(%s, sc)
  %p = softmax(%sc, axis=-1)
  %u = matmul(h, w1)
  %ub = add(b1, %u)
  %ug = gelu(%u)
  %d = matmul(%ug, w2)
  %r = add(%d, h)
  %n = layernorm(%r, g, e, axis=-1)
  output p = %p
  output n = %n
  output ub = %ub
})"},
    {"gemm_row_bias_and_scalar_c", R"(graph g {
  input a: f32[5,7]
  weight b: f32[7,9]
  weight c: f32[5,1]
  weight d: f32[1]
  %g = gemm(a, b, c, alpha=2, beta=0.5)
  %h = gemm(a, b, d, beta=3, act=sigmoid)
  output y = %g
  output z = %h
})"},
    {"binary_left_stretched_and_pow_scalar", R"(graph g {
  input x: f32[3,1,5]
  input z: f32[2,1]
  weight e: f32[]
  %s = sub(x, z)
  %d = div(z, x)
  %a = add(z, x)
  %p = pow(%a, e)
  %m = mul(%s, %d)
  output s = %m
  output p = %p
})"},
    {"isnan_where_broadcasting", R"(graph g {
  input x: f32[2,3,4]
  input c: f32[3,1]
  weight zero: f32[1]
  %s = sqrt(x)
  %n = isnan(%s)
  %w = where(%n, zero, %s)
  %t = sqrt(c)
  %m = isnan(%t)
  %v = where(%m, x, zero)
  output y = %w
  output v = %v
})"},
    {"nan_guard_broadcasting", R"(graph g {
  input x: f32[2,3,4]
  input z: f32[3,1]
  weight zero: f32[1]
  %d = sub(x, z)
  %s = sqrt(%d)
  %n = isnan(%s)
  %w = where(%n, zero, %s)
  %q = sqrt(z)
  %m = isnan(%q)
  %v = where(%m, x, %w)
  output y = %v
})"},
    {"leaky_relu_and_softplus_fused_and_alone", R"(graph g {
  input x: f32[1,8,10,10]
  input m: f32[6,8]
  weight w: f32[8,8,3,3]
  weight v: f32[8,5]
  %c = conv2d(x, w, pad=same)
  %l = leaky_relu(%c, alpha=0.1)
  %p = matmul(m, v)
  %s = softplus(%p)
  %t = softplus(x)
  %k = leaky_relu(%t, alpha=-0.5)
  output y = %l
  output z = %s
  output u = %k
})"},
    {"log_abs_extremes_and_log_softmax", R"(graph g {
  input x: f32[1,8,10,10]
  weight w: f32[8,8,3,3]
  weight lo: f32[8,1,1]
  weight hi: f32[10]
  %c = conv2d(x, w, pad=same)
  %a = abs(%c)
  %l = log(%a)
  %m = max(%c, lo)
  %n = min(hi, %m)
  %s = log_softmax(%c, axis=1)
  %t = log_softmax(%n, axis=-1)
  output y = %l
  output z = %n
  output u = %s
  output v = %t
})"},
    // A diffusion UNet's timestep embedding: sinusoids of a computed tensor,
    // large arguments among them (the range reduction), then a product.
    {"sinusoids_of_a_computed_tensor", R"(graph g {
  input x: f32[2,64]
  weight f: f32[64]
  weight w: f32[128,32]
  %t = mul(x, f)
  %s = sin(%t)
  %c = cos(%t)
  %e = concat(%s, %c, axis=1)
  %p = matmul(%e, w)
  output y = %p
  output z = %s
})"},
    {"pad_and_crop_in_the_convolution_layout", R"(graph g {
  input x: f32[1,16,12,12]
  weight w: f32[16,16,1,1]
  %c = conv2d(x, w, act=relu)
  %p = pad(%c, pads=[0,0,0,0,0,0,1,1])
  %s = slice(%p, starts=[1,1], ends=[13,13], axes=[2,3], steps=[1,1])
  %a = avgpool(%s, kernel=[1,1], stride=[2,2])
  %q = pad(%c, pads=[0,0,1,1,0,0,1,1], value=-0.5)
  %m = maxpool(%q, kernel=[3,3], stride=[2,2])
  %t = slice(%c, starts=[0,3], ends=[16,-1], axes=[1,3], steps=[1,1])
  output a = %a
  output m = %m
  output t = %t
})"},
    {"split_of_a_merged_convolution", R"(graph g {
  input x: f32[1,8,9,9]
  weight w: f32[24,8,3,3]
  %c = conv2d(x, w, pad=same, act=relu)
  %a, %b = split(%c, axis=1, sizes=[16,8])
  %p = avgpool(%a, kernel=[3,3], stride=[1,1], pad=[1,1,1,1])
  %q = maxpool(%b, kernel=[3,3], stride=[2,2])
  output p = %p
  output q = %q
})"},
    {"movement_chain", R"(graph g {
  input x: f32[2,3,4]
  %t = transpose(x, perm=[2,0,1])
  %s = slice(%t, starts=[1], ends=[3], axes=[0], steps=[1])
  %c = concat(%s, %s, axis=2)
  output y = %c
})"},
};

}  // namespace tso::ref::testing
