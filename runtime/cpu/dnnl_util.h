// Small bridges between tso's types and oneDNN's: memory descriptors for
// tso tensors, and turning oneDNN's exceptions into tso Errors that name the
// primitive and the node. Internal to runtime/cpu.
#pragma once

#include <dnnl.hpp>
#include <string>

#include "core/error.h"
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
