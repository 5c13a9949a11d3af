// Operator attributes: keys and types come from core/ops.def; values are a
// small variant. A node's attributes are kept sorted by key with every
// attribute of its operator present (defaults filled in), so two nodes with
// the same meaning have equal `Attrs`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/types.h"

namespace tso {

enum class AttrKey : uint8_t {
#define TSO_ATTR(key, type, default_text) key,
#include "core/ops.def"
};
constexpr int kNumAttrKeys = 0
#define TSO_ATTR(key, type, default_text) +1
#include "core/ops.def"
    ;

enum class AttrType : uint8_t { Int, Ints, Float, Act, Pad, Str };

// Activation fused into conv2d, matmul and gemm (applied to the whole result).
// gelu is the erf form; clip takes its bounds from the node's min and max.
enum class Act : uint8_t { kNone, kRelu, kSigmoid, kTanh, kGelu, kClip };
constexpr int kNumActs = 6;
const char* act_name(Act a);

// Spatial padding of conv2d and pooling. `kSame` pads so that the output has
// ceil(in / stride) elements, splitting any odd amount with the extra element
// at the end (ONNX SAME_UPPER, TASO's "same"); `kExplicit` gives
// [top, left, bottom, right].
struct Padding {
  enum Mode : uint8_t { kValid, kSame, kExplicit };
  Mode mode = kValid;
  std::array<int64_t, 4> pads{};  // meaningful for kExplicit only
  friend bool operator==(const Padding&, const Padding&) = default;
};

using AttrValue = std::variant<int64_t, std::vector<int64_t>, double, Act, Padding, std::string>;

struct AttrInfo {
  AttrKey key;
  std::string_view name;
  AttrType type;
  std::string_view default_text;  // "" when required
};
const AttrInfo& attr_info(AttrKey k);
bool find_attr_key(std::string_view name, AttrKey* out);

// Parses a value in text-format syntax for an attribute of type `type`:
// Int `3`, Ints `[1,2]`, Float `1e-5` / `inf`, Act `relu`, Pad `same` /
// `valid` / `[1,1,1,1]`, Str `"..."` with C escapes.
Expected<AttrValue> parse_attr_value(AttrType type, std::string_view text);
std::string print_attr_value(const AttrValue& v);
bool attr_value_has_type(const AttrValue& v, AttrType type);
uint64_t hash_of(const AttrValue& v);
// The default value of `k` from core/ops.def, parsed once; nullopt when the
// attribute is required.
const std::optional<AttrValue>& attr_default(AttrKey k);

class Attrs {
 public:
  using Entry = std::pair<AttrKey, AttrValue>;

  bool has(AttrKey k) const { return find(k) != nullptr; }
  const AttrValue* find(AttrKey k) const;
  // Typed accessors; the attribute must be present with that type (an
  // internal invariant: the checker guarantees it for every node).
  int64_t i(AttrKey k) const;
  const std::vector<int64_t>& ints(AttrKey k) const;
  double f(AttrKey k) const;
  Act act(AttrKey k) const;
  const Padding& pad(AttrKey k) const;
  const std::string& str(AttrKey k) const;

  Attrs& set(AttrKey k, AttrValue v);  // inserts or replaces, keeps keys sorted
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  friend bool operator==(const Attrs&, const Attrs&) = default;

 private:
  std::vector<Entry> entries_;
};

uint64_t hash_of(const Attrs& a);

}  // namespace tso
