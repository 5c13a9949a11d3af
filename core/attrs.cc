#include "core/attrs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>

namespace tso {

namespace {

constexpr AttrInfo kAttrs[] = {
#define TSO_ATTR(key, type, default_text) {AttrKey::key, #key, AttrType::type, default_text},
#include "core/ops.def"
};

constexpr const char* kActNames[] = {"none", "relu", "sigmoid", "tanh", "gelu", "clip"};
static_assert(std::size(kActNames) == kNumActs);

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view s, int64_t* out) {
  s = trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool parse_ints(std::string_view s, std::vector<int64_t>* out) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return false;
  s = trim(s.substr(1, s.size() - 2));
  out->clear();
  if (s.empty()) return true;
  while (true) {
    size_t comma = s.find(',');
    int64_t v;
    if (!parse_int(s.substr(0, comma), &v)) return false;
    out->push_back(v);
    if (comma == std::string_view::npos) return true;
    s.remove_prefix(comma + 1);
  }
}

bool parse_float(std::string_view s, double* out) {
  s = trim(s);
  if (s == "inf" || s == "+inf") return *out = INFINITY, true;
  if (s == "-inf") return *out = -INFINITY, true;
  if (s == "nan") return *out = NAN, true;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_string(std::string_view s, std::string* out) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return false;
  s = s.substr(1, s.size() - 2);
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') return false;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i == s.size()) return false;
    switch (s[i]) {
      case '\\': out->push_back('\\'); break;
      case '"': out->push_back('"'); break;
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'x': {
        int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) return false;
        out->push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        break;
      }
      default: return false;
    }
  }
  return true;
}

std::string print_float(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  // Keep floats recognisable as floats in the text ("1" would read as an int).
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string print_string(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + '"';
}

std::string print_ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out + ']';
}

}  // namespace

const char* act_name(Act a) { return kActNames[static_cast<int>(a)]; }

const AttrInfo& attr_info(AttrKey k) { return kAttrs[static_cast<int>(k)]; }

bool find_attr_key(std::string_view name, AttrKey* out) {
  for (const AttrInfo& a : kAttrs) {
    if (a.name == name) {
      *out = a.key;
      return true;
    }
  }
  return false;
}

Expected<AttrValue> parse_attr_value(AttrType type, std::string_view text) {
  auto bad = [&](const char* what) {
    return Error{"expected " + std::string(what) + ", got " + quoted(trim(text))};
  };
  switch (type) {
    case AttrType::Int: {
      int64_t v;
      if (!parse_int(text, &v)) return bad("an integer");
      return AttrValue{v};
    }
    case AttrType::Ints: {
      std::vector<int64_t> v;
      if (!parse_ints(text, &v)) return bad("a list of integers like [1,2]");
      return AttrValue{std::move(v)};
    }
    case AttrType::Float: {
      double v;
      if (!parse_float(text, &v)) return bad("a number");
      return AttrValue{v};
    }
    case AttrType::Act: {
      for (int i = 0; i < kNumActs; ++i)
        if (trim(text) == kActNames[i]) return AttrValue{static_cast<Act>(i)};
      return bad("an activation (none, relu, sigmoid, tanh, gelu, clip)");
    }
    case AttrType::Pad: {
      std::string_view t = trim(text);
      if (t == "valid") return AttrValue{Padding{}};
      if (t == "same") return AttrValue{Padding{Padding::kSame, {}}};
      std::vector<int64_t> v;
      if (!parse_ints(t, &v) || v.size() != 4)
        return bad("a padding (valid, same or [top,left,bottom,right])");
      return AttrValue{Padding{Padding::kExplicit, {v[0], v[1], v[2], v[3]}}};
    }
    case AttrType::Str: {
      std::string v;
      if (!parse_string(text, &v)) return bad("a quoted string");
      return AttrValue{std::move(v)};
    }
  }
  return bad("a value");
}

std::string print_attr_value(const AttrValue& v) {
  struct Printer {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(const std::vector<int64_t>& x) const { return print_ints(x); }
    std::string operator()(double x) const { return print_float(x); }
    std::string operator()(Act a) const { return act_name(a); }
    std::string operator()(const Padding& p) const {
      if (p.mode == Padding::kValid) return "valid";
      if (p.mode == Padding::kSame) return "same";
      return print_ints({p.pads.begin(), p.pads.end()});
    }
    std::string operator()(const std::string& s) const { return print_string(s); }
  };
  return std::visit(Printer{}, v);
}

bool attr_value_has_type(const AttrValue& v, AttrType type) {
  switch (type) {
    case AttrType::Int: return std::holds_alternative<int64_t>(v);
    case AttrType::Ints: return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrType::Float: return std::holds_alternative<double>(v);
    case AttrType::Act: return std::holds_alternative<Act>(v);
    case AttrType::Pad: return std::holds_alternative<Padding>(v);
    case AttrType::Str: return std::holds_alternative<std::string>(v);
  }
  return false;
}

uint64_t hash_of(const AttrValue& v) {
  uint64_t h = hash_mix(0xa77, v.index());
  struct Hasher {
    uint64_t h;
    uint64_t operator()(int64_t x) const { return hash_mix(h, static_cast<uint64_t>(x)); }
    uint64_t operator()(const std::vector<int64_t>& x) const {
      uint64_t r = hash_mix(h, x.size());
      for (int64_t e : x) r = hash_mix(r, static_cast<uint64_t>(e));
      return r;
    }
    uint64_t operator()(double x) const {
      uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      return hash_mix(h, bits);
    }
    uint64_t operator()(Act a) const { return hash_mix(h, static_cast<uint64_t>(a)); }
    uint64_t operator()(const Padding& p) const {
      uint64_t r = hash_mix(h, p.mode);
      for (int64_t e : p.pads) r = hash_mix(r, static_cast<uint64_t>(e));
      return r;
    }
    uint64_t operator()(const std::string& s) const {
      uint64_t r = hash_mix(h, s.size());
      for (unsigned char c : s) r = hash_mix(r, c);
      return r;
    }
  };
  return std::visit(Hasher{h}, v);
}

const AttrValue* Attrs::find(AttrKey k) const {
  for (const Entry& e : entries_)
    if (e.first == k) return &e.second;
  return nullptr;
}

namespace {
template <class T>
const T& get_typed(const Attrs& a, AttrKey k) {
  const AttrValue* v = a.find(k);
  TSO_CHECK(v != nullptr, std::string("missing attribute ") + std::string(attr_info(k).name));
  const T* t = std::get_if<T>(v);
  TSO_CHECK(t != nullptr, std::string("attribute ") + std::string(attr_info(k).name) +
                              " has the wrong type");
  return *t;
}
}  // namespace

int64_t Attrs::i(AttrKey k) const { return get_typed<int64_t>(*this, k); }
const std::vector<int64_t>& Attrs::ints(AttrKey k) const {
  return get_typed<std::vector<int64_t>>(*this, k);
}
double Attrs::f(AttrKey k) const { return get_typed<double>(*this, k); }
Act Attrs::act(AttrKey k) const { return get_typed<Act>(*this, k); }
const Padding& Attrs::pad(AttrKey k) const { return get_typed<Padding>(*this, k); }
const std::string& Attrs::str(AttrKey k) const { return get_typed<std::string>(*this, k); }

Attrs& Attrs::set(AttrKey k, AttrValue v) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), k,
                             [](const Entry& e, AttrKey key) { return e.first < key; });
  if (it != entries_.end() && it->first == k) {
    it->second = std::move(v);
  } else {
    entries_.insert(it, Entry{k, std::move(v)});
  }
  return *this;
}

uint64_t hash_of(const Attrs& a) {
  uint64_t h = hash_mix(0xa5, a.entries().size());
  for (const auto& [k, v] : a.entries()) h = hash_mix(hash_mix(h, static_cast<uint64_t>(k)), hash_of(v));
  return h;
}

const std::optional<AttrValue>& attr_default(AttrKey k) {
  static const auto table = [] {
    std::array<std::optional<AttrValue>, kNumAttrKeys> t;
    for (int i = 0; i < kNumAttrKeys; ++i) {
      const AttrInfo& info = attr_info(static_cast<AttrKey>(i));
      if (info.default_text.empty()) continue;
      Expected<AttrValue> v = parse_attr_value(info.type, info.default_text);
      TSO_CHECK(v.ok(), "bad default for attribute " + std::string(info.name));
      t[i] = std::move(*v);
    }
    return t;
  }();
  return table[static_cast<int>(k)];
}

}  // namespace tso
