// IEEE 754 half precision (f16) to and from float, in software: f16 weights
// and tensors convert on any CPU, with no dependence on F16C.
#pragma once

#include <cstdint>

namespace tso {

// Exact: every half is a float.
float half_to_float(uint16_t h);
// Rounds to nearest, ties to even; past the largest half (65504) to infinity;
// NaN stays NaN (quiet).
uint16_t float_to_half(float f);

}  // namespace tso
