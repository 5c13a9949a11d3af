// Element types, shapes and tensor types: the vocabulary every part of tso
// uses to talk about tensors. Shapes are small fixed-capacity values so that
// the generator and the optimizer can copy them freely without allocating.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace tso {

enum class DType : uint8_t { kF32, kF16, kF64, kI64, kI32, kBool };

const char* dtype_name(DType t);               // "f32", "i64", ...
bool parse_dtype(std::string_view s, DType* out);
int64_t dtype_bytes(DType t);

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
