#include "core/types.h"

#include <cstdlib>
#include <cstdio>

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

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[i];
  return n;
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
