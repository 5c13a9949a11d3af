// IEEE half <-> float by bit manipulation.
#include "core/half.h"

#include <cstring>

namespace tso {

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  int e = int(exp) - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return sign | half;
  }
  uint32_t half = uint32_t(e) << 10 | mant >> 13, rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into inf: correct
  return sign | half;
}

}  // namespace tso
