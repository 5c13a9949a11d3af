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
