// Small bridges between tso's types and oneDNN's: memory descriptors for
// tso tensors, and turning oneDNN's exceptions into tso Errors that name the
// primitive and the node. Internal to runtime/cpu.
#pragma once

#include <dnnl.hpp>
#include <string>

#include "core/error.h"
#include "core/graph.h"
#include "core/types.h"

namespace tso::cpu {

using dnnl::memory;
using Dims = memory::dims;

Dims dims_of(const Shape& s);
// oneDNN's data type for `t`, or undef for types oneDNN does not compute on
// (i64, f64, bool): such tensors are only moved, by own kernels.
memory::data_type dnnl_type(DType t);
// Row-major (plain) descriptor of `type`; a rank-0 tensor is {1}.
memory::desc plain_desc(const TensorType& type);
memory::desc plain_desc(const Dims& dims, memory::data_type dt = memory::data_type::f32);
// Row-major bytes (dimensions of extent 1 may have any stride).
bool is_plain(const memory::desc& md);
// The descriptor of `dims` with the dimension order of `md`'s strides (md
// strided, not blocked): e.g. NHWC stays NHWC at the new extents.
memory::desc same_order(const memory::desc& md, const Dims& dims);

// Whether oneDNN's int8 convolutions and products on this host sum u8 x s8
// products exactly in int32, as a quantized model's integer form
// (core/quantized.h) needs: where its ISA has VNNI (vpdpbusd: AVX-VNNI,
// AVX512-VNNI and later). Without it (AVX2, AVX-512 of Skylake) they add each
// two neighbouring products in int16 with saturation (vpmaddubsw), which
// oneDNN documents and leaves to the caller ("Nuances of int8
// computations"): 255 * 127 * 2 overflows int16, and a 3x3 convolution of
// full-range levels came out off by up to half its largest value. There the
// runtime runs such products in f32 on the dequantized values, as the model
// defines them. ONEDNN_MAX_CPU_ISA=AVX2 makes any host such a one.
bool int8_sums_exact();

// Whether oneDNN's int8 kernel of product `n` (core/quantized.h's
// runs_int8) computes it exactly on this host: wherever int8_sums_exact(),
// and elsewhere for a product of a u8 input by stored weights (int8_form)
// that all lie in [-64, 64], the range ONNX Runtime's quantizer gives them
// under reduce_range, for such hosts: a u8 level times such a weight, twice,
// is at most 255 * 64 * 2 = 32,640 and fits int16. Not for an s8 input or a
// grouped convolution there: oneDNN's AVX2 kernels for those came out wrong
// on seeded networks of weights within [-8, 8] (quantize_test.cc), whatever
// the reason inside them; they run in f32.
bool int8_kernel_exact(const Graph& g, const Node& n);

// Calls `f`; a dnnl::error it throws becomes an Error
// "<what>: oneDNN <call> failed: <status>".
template <class F>
Status dnnl_call(const std::string& what, F&& f) {
  try {
    f();
    return {};
  } catch (const dnnl::error& e) {
    return Error{what + ": oneDNN " + e.what() + " (status " + std::to_string(int(e.status)) + ")"};
  }
}

// "conv brgconv:avx2": a primitive's kind and the implementation oneDNN chose.
std::string impl_name(const char* kind, const dnnl::primitive_desc_base& pd);

}  // namespace tso::cpu
