// tso's own elementwise kernels at the widest vectors this CPU runs: the
// quantize formulas of runtime/common/quantize.h, bit for bit, and erf.
// Built for AVX2 (vector_kernels.cc) and for AVX-512
// (vector_kernels_avx512.cc, run where the CPU has AVX-512 F, BW, DQ and VL);
// the widest set is picked once. Each kernel does the leading whole vectors
// of its n elements on the calling thread and returns how many it did; the
// caller does the rest with the scalar formula. Internal to runtime/cpu.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/common/quantize.h"

namespace tso::cpu {

// One quantization's parameters: levels round(x / scale) + zero, clamped to
// `range`.
struct QuantLevels {
  float scale = 1;
  int zero = 0;
  rt::QuantRange range = rt::kI8Range;
};

struct VectorKernels {
  const char* isa;  // "avx512", "avx2" or "none"
  // dequantize(quantize(x)): the level of each element, back as a float.
  int64_t (*fake_quantize)(const float* x, QuantLevels q, float* y, int64_t n);
  int64_t (*quantize_u8)(const float* x, QuantLevels q, uint8_t* y, int64_t n);
  int64_t (*quantize_i8)(const float* x, QuantLevels q, int8_t* y, int64_t n);
  int64_t (*dequantize_u8)(const uint8_t* x, float scale, int zero, float* y, int64_t n);
  int64_t (*dequantize_i8)(const int8_t* x, float scale, int zero, float* y, int64_t n);
  // glibc's vector erff (libmvec), within its stated error bound of erff.
  int64_t (*erf)(const float* x, float* y, int64_t n);
};

// The widest set this CPU runs.
const VectorKernels& vector_kernels();

// Every set this build has and this CPU runs, widest first (for tests).
std::vector<const VectorKernels*> runnable_vector_kernels();

// Whether this build has its AVX-512 kernels (these, grouped_conv.h's) and
// this CPU runs them.
bool avx512_kernels_run();

}  // namespace tso::cpu
