// Element types, shapes and tensor types: the vocabulary every part of tso
// uses to talk about tensors. Shapes are small fixed-capacity values so that
// the generator and the optimizer can copy them freely without allocating.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

#include "core/error.h"

namespace tso {

enum class DType : uint8_t { kF32, kF16, kF64, kI64, kI32, kBool, kU8, kI8 };

const char* dtype_name(DType t);               // "f32", "i64", ...
bool parse_dtype(std::string_view s, DType* out);
int64_t dtype_bytes(DType t);

// A count of elements, bytes or FLOPs with overflow-checked arithmetic: a
// product or sum past INT64_MAX, or a negative operand, makes the count
// invalid, and so every result computed from it, so a formula is written as
// usual and checked once at the end. Every size tso computes goes through it
// (or through the Shape and TensorType functions below, built on it).
class Count {
 public:
  constexpr Count(int64_t v) : v_(v < 0 ? kInvalid : v) {}

  bool fits() const { return v_ != kInvalid; }
  // The count, or nullopt where it overflowed.
  std::optional<int64_t> value() const {
    return fits() ? std::optional<int64_t>(v_) : std::nullopt;
  }

  friend Count operator*(Count a, Count b);
  friend Count operator+(Count a, Count b);

 private:
  static constexpr int64_t kInvalid = -1;
  int64_t v_;
};

// A static tensor shape of rank 0 (scalar) up to kMaxRank.
class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  int64_t back() const { return dims_[rank_ - 1]; }
  std::span<const int64_t> dims() const { return {dims_.data(), size_t(rank_)}; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }

  // Appends a dimension; aborts past kMaxRank (callers check user input first).
  void push_back(int64_t d);
  // The number of elements; nullopt when an extent is negative or the
  // product of the non-zero extents overflows int64. A zero extent makes the
  // count 0, yet the other extents must still multiply without overflow: the
  // runtimes compute strides and partial products from them.
  std::optional<int64_t> checked_numel() const;
  // checked_numel() of a shape known to fit, as every tensor of a Graph does
  // (the checker refuses the others); aborts when it does not.
  int64_t numel() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a.dims_[i] != b.dims_[i]) return false;
    return true;
  }

 private:
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};
};

std::string to_string(const Shape& s);  // "[1,3,224,224]"

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

std::string to_string(const TensorType& t);  // "f32[1,3,224,224]"

// The size of a tensor of type `t` in bytes; nullopt when it does not fit in
// int64 (under the rule of Shape::checked_numel).
std::optional<int64_t> checked_byte_size(const TensorType& t);
// checked_byte_size() of a type known to fit, as every tensor of a Graph
// does; aborts when it does not.
int64_t byte_size(const TensorType& t);
// An Error when `t`'s byte size does not fit in int64, naming the tensor
// (`what`, e.g. "input 'x'"): "input 'x': f32[4294967296,4294967296,16] does
// not fit in memory: its size in bytes overflows int64".
Status check_size(const TensorType& t, const std::string& what);

// Mixes `v` into the running hash `h` (64-bit, order-sensitive).
inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 32;
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

uint64_t hash_of(const Shape& s);
uint64_t hash_of(const TensorType& t);

}  // namespace tso
