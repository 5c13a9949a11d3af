#include "core/types.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace tso {

namespace {
struct DTypeInfo {
  DType type;
  const char* name;
  int64_t bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "f32", 4}, {DType::kF16, "f16", 2}, {DType::kF64, "f64", 8},
    {DType::kI64, "i64", 8}, {DType::kI32, "i32", 4}, {DType::kBool, "bool", 1},
    {DType::kU8, "u8", 1},   {DType::kI8, "i8", 1},
};
}  // namespace

const char* dtype_name(DType t) { return kDTypes[static_cast<int>(t)].name; }
int64_t dtype_bytes(DType t) { return kDTypes[static_cast<int>(t)].bytes; }

bool parse_dtype(std::string_view s, DType* out) {
  for (const DTypeInfo& d : kDTypes) {
    if (s == d.name) {
      *out = d.type;
      return true;
    }
  }
  return false;
}

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}

Shape::Shape(std::span<const int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}

void Shape::push_back(int64_t d) {
  TSO_CHECK(rank_ < kMaxRank, "shape rank exceeds " + std::to_string(kMaxRank));
  dims_[rank_++] = d;
}

Count operator*(Count a, Count b) {
  int64_t p = 0;
  if (!a.fits() || !b.fits() || __builtin_mul_overflow(a.v_, b.v_, &p)) return Count(-1);
  return Count(p);
}

Count operator+(Count a, Count b) {
  int64_t s = 0;
  if (!a.fits() || !b.fits() || __builtin_add_overflow(a.v_, b.v_, &s)) return Count(-1);
  return Count(s);
}

namespace {

// The product of the non-zero extents times `scale`, or 0 when an extent is
// 0; invalid when an extent is negative or the product overflows.
Count checked_size(const Shape& s, int64_t scale) {
  Count n = scale;
  bool empty = false;
  for (int64_t d : s) {
    empty |= d == 0;
    n = n * (d == 0 ? 1 : d);
  }
  return empty && n.fits() ? 0 : n;
}

}  // namespace

std::optional<int64_t> Shape::checked_numel() const { return checked_size(*this, 1).value(); }

int64_t Shape::numel() const {
  std::optional<int64_t> n = checked_numel();
  TSO_CHECK(n, "the element count of " + to_string(*this) + " overflows int64");
  return *n;
}

std::optional<int64_t> checked_byte_size(const TensorType& t) {
  return checked_size(t.shape, dtype_bytes(t.dtype)).value();
}

int64_t byte_size(const TensorType& t) {
  std::optional<int64_t> n = checked_byte_size(t);
  TSO_CHECK(n, "the byte size of " + to_string(t) + " overflows int64");
  return *n;
}

Status check_size(const TensorType& t, const std::string& what) {
  if (checked_byte_size(t)) return Status::Ok();
  return Error{what + ": " + to_string(t) +
               " does not fit in memory: its size in bytes overflows int64"};
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i) {
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  return out + ']';
}

std::string to_string(const TensorType& t) { return dtype_name(t.dtype) + to_string(t.shape); }

uint64_t hash_of(const Shape& s) {
  uint64_t h = hash_mix(0x51ab, static_cast<uint64_t>(s.rank()));
  for (int64_t d : s) h = hash_mix(h, static_cast<uint64_t>(d));
  return h;
}

uint64_t hash_of(const TensorType& t) {
  return hash_mix(hash_of(t.shape), static_cast<uint64_t>(t.dtype));
}

}  // namespace tso
