// Parser of operator-set files.
#include "generator/op_set.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "core/shape_inference.h"

namespace tso::gen {

namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The arity of each operator the enumeration knows how to apply.
int generator_arity(Op op) {
  switch (op) {
    case Op::ConstOnes:
    case Op::ConstEye:
    case Op::ConstEyeConv:
    case Op::ConstPool:
      return 0;
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Gelu:
    case Op::Clip:
    case Op::Split:
    case Op::Transpose:
    case Op::AvgPool:
    case Op::MaxPool:
    case Op::Enlarge:
      return 1;
    case Op::Conv2d:
    case Op::Matmul:
    case Op::Add:
    case Op::Mul:
    case Op::ScalarMul:
    case Op::Concat:
      return 2;
    default:
      return -1;
  }
}

bool identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool parse_type(std::string_view s, TensorType* out) {
  size_t lb = s.find('[');
  if (lb == std::string_view::npos || s.back() != ']') return false;
  if (!parse_dtype(s.substr(0, lb), &out->dtype)) return false;
  std::string_view dims = s.substr(lb + 1, s.size() - lb - 2);
  Shape shape;
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string d(dims.substr(0, comma));
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos) return false;
    if (shape.rank() == 4) return false;
    int64_t extent = 0;
    auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), extent);
    if (ec != std::errc() || end != d.data() + d.size() || extent < 1) return false;
    shape.push_back(extent);
    dims = comma == std::string_view::npos ? std::string_view{} : dims.substr(comma + 1);
  }
  out->shape = shape;
  return true;
}

class Parser {
 public:
  Parser(std::string_view file) : file_(file) {}

  Error error(int line, const std::string& msg) const {
    return Error{std::string(file_) + ":" + std::to_string(line) + ": " + msg};
  }

  Status vars(int line, const std::vector<std::string>& w, bool weight) {
    // input NAME... : TYPE
    if (w.size() < 4 || w[w.size() - 2] != ":")
      return error(line, "expected `" + w[0] + " NAME... : TYPE`");
    TensorType type;
    if (!parse_type(w.back(), &type))
      return error(line, "bad tensor type '" + w.back() + "' (expected e.g. f32[2,4], rank <= 4)");
    std::string cls_key = (weight ? "w" : "i") + to_string(type);
    auto [it, fresh] = classes_.emplace(cls_key, static_cast<int>(classes_.size()));
    for (size_t i = 1; i + 2 < w.size(); ++i) {
      for (const GenVar& v : set_.vars)
        if (v.name == w[i]) return error(line, "variable '" + w[i] + "' declared twice");
      set_.vars.push_back({w[i], type, weight, it->second});
    }
    if (set_.vars.size() > 64) return error(line, "at most 64 variables");
    return Status::Ok();
  }

  Status op(int line, const std::vector<std::string>& w) {
    if (w.size() < 2) return error(line, "expected `op NAME [KEY=VALUE]... [bias]`");
    OpTemplate t;
    if (!find_op(w[1], &t.op)) return error(line, "unknown operator '" + w[1] + "'");
    t.arity = generator_arity(t.op);
    if (t.arity < 0)
      return error(line, "operator '" + w[1] + "' is not supported by the generator");
    t.text = w[1];
    for (size_t i = 2; i < w.size(); ++i) {
      if (w[i] == "bias") {
        if (t.op != Op::Conv2d && t.op != Op::Add)
          return error(line, "'bias' applies to conv2d and add only");
        if (t.bias) return error(line, "'bias' given twice");
        t.bias = true;
        t.arity = t.op == Op::Conv2d ? 3 : 2;
        t.text += " bias";
        continue;
      }
      size_t eq = w[i].find('=');
      if (eq == std::string::npos)
        return error(line, "expected KEY=VALUE or bias, got '" + w[i] + "'");
      std::string key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
      AttrKey k;
      if (!find_attr_key(key, &k)) return error(line, "unknown attribute '" + key + "'");
      Expected<AttrValue> v = parse_attr_value(attr_info(k).type, value);
      if (!v) return error(line, "attribute '" + key + "': " + v.error().message);
      t.text += " " + w[i];
      if (t.op == Op::Conv2d && k == AttrKey::kernel) {
        t.conv_kernel = std::get<std::vector<int64_t>>(*v);
        if (t.conv_kernel.size() != 2) return error(line, "conv2d kernel needs 2 values");
        continue;
      }
      if (!op_info(t.op).takes(k))
        return error(line, "operator '" + w[1] + "' takes no attribute '" + key + "'");
      if ((t.op == Op::Split && k == AttrKey::sizes) ||
          (t.op == Op::Conv2d && k == AttrKey::groups))
        return error(line, "'" + key + "' is derived from the arguments; do not set it");
      t.attrs.set(k, std::move(*v));
    }
    if (t.op == Op::Conv2d && t.conv_kernel.empty())
      return error(line, "conv2d needs kernel=[KH,KW] (the weight's kernel)");
    Attrs probe = t.attrs;
    if (t.op == Op::Split) probe.set(AttrKey::sizes, std::vector<int64_t>{1, 1});
    if (Status s = complete_attrs(t.op, &probe); !s.ok()) return error(line, s.error().message);
    if (set_.ops.size() == 255) return error(line, "at most 255 operator templates");
    set_.ops.push_back(std::move(t));
    return Status::Ok();
  }

  // `lift conv2d ATTR...` (stride, pad, dilation, groups) and `lift pool
  // ATTR...` (kernel, stride, pad of avgpool and maxpool).
  Status lift(int line, const std::vector<std::string>& w) {
    if (w.size() >= 2 && w[1] != "conv2d" && w[1] != "pool") return lift_layout(line, w);
    const bool conv = w.size() < 2 || w[1] == "conv2d";
    const std::vector<AttrKey> allowed =
        conv ? std::vector<AttrKey>{AttrKey::stride, AttrKey::pad, AttrKey::dilation,
                                    AttrKey::groups}
             : std::vector<AttrKey>{AttrKey::kernel, AttrKey::stride, AttrKey::pad};
    const std::string names = conv ? "stride, pad, dilation" : "kernel, stride";
    const std::string last = conv ? "groups" : "pad";
    if (w.size() < 3)
      return error(line, std::string("expected `lift ") + (conv ? "conv2d" : "pool") +
                             " ATTR...` (" + names + ", " + last + ")");
    int& first = conv ? lift_line_ : lift_pool_line_;
    if (first != 0)
      return error(line,
                   "`lift " + w[1] + "` given twice (first on line " + std::to_string(first) + ")");
    first = line;
    std::vector<AttrKey>& keys = conv ? set_.lift_conv2d : set_.lift_pool;
    for (size_t i = 2; i < w.size(); ++i) {
      AttrKey k;
      if (!find_attr_key(w[i], &k) || std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        return error(line, "cannot lift '" + w[i] + "' (" + names + " or " + last + ")");
      if (std::find(keys.begin(), keys.end(), k) != keys.end())
        return error(line, "'" + w[i] + "' lifted twice");
      keys.push_back(k);
    }
    return Status::Ok();
  }

  // `lift transpose perm`, `lift concat axis`, `lift split axis`, `lift rank LO..HI`.
  Status lift_layout(int line, const std::vector<std::string>& w) {
    LayoutLift& l = set_.lift_layout;
    bool* flag = nullptr;
    if (w.size() == 3 && w[1] == "transpose" && w[2] == "perm") flag = &l.perm;
    if (w.size() == 3 && w[1] == "concat" && w[2] == "axis") flag = &l.concat_axis;
    if (w.size() == 3 && w[1] == "split" && w[2] == "axis") flag = &l.split_axis;
    if (flag) {
      if (*flag) return error(line, "`lift " + w[1] + " " + w[2] + "` given twice");
      *flag = true;
      return Status::Ok();
    }
    const size_t dots = w.size() == 3 && w[1] == "rank" ? w[2].find("..") : std::string::npos;
    if (dots == std::string::npos)
      return error(line,
                   "expected `lift conv2d ATTR...`, `lift pool ATTR...`, `lift transpose perm`, "
                   "`lift concat axis`, `lift split axis` or `lift rank LO..HI`");
    if (l.rank_lo != 0) return error(line, "`lift rank` given twice");
    int lo = 0, hi = 0;
    auto number = [](std::string_view x, int* out) {
      auto [p, ec] = std::from_chars(x.data(), x.data() + x.size(), *out);
      return ec == std::errc() && p == x.data() + x.size();
    };
    if (!number(std::string_view(w[2]).substr(0, dots), &lo) ||
        !number(std::string_view(w[2]).substr(dots + 2), &hi) || lo < 1 || hi > 4 || lo > hi)
      return error(line,
                   "`lift rank LO..HI` takes ranks in 1..4 (the specs' ranks), got '" + w[2] + "'");
    l.rank_lo = lo;
    l.rank_hi = hi;
    return Status::Ok();
  }

  Expected<OpSet> run(std::string_view text) {
    int line = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view l = text.substr(pos, end - pos);
      pos = end + 1;
      ++line;
      if (size_t hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
      std::vector<std::string> w = words(l);
      if (w.empty()) continue;
      Status s;
      if (w[0] == "name") {
        if (w.size() != 2) return error(line, "expected `name NAME`");
        set_.name = w[1];
      } else if (w[0] == "prefix") {
        if (w.size() != 2 || !identifier(w[1]))
          return error(line, "expected `prefix NAME` (letters, digits, '_'; not a digit first)");
        set_.rule_prefix = w[1];
      } else if (w[0] == "input" || w[0] == "weight") {
        s = vars(line, w, w[0] == "weight");
      } else if (w[0] == "op") {
        s = op(line, w);
      } else if (w[0] == "lift") {
        s = lift(line, w);
      } else {
        return error(line, "expected `name`, `prefix`, `input`, `weight`, `op` or `lift`, got '" +
                               w[0] + "'");
      }
      if (!s.ok()) return s.error();
    }
    if (set_.name.empty()) return error(line, "the operator set has no `name` line");
    if (set_.vars.empty()) return error(line, "the operator set declares no input");
    if (set_.ops.empty()) return error(line, "the operator set declares no operator");
    const LayoutLift& l = set_.lift_layout;
    if ((l.perm || l.concat_axis || l.split_axis) && l.rank_lo == 0)
      return error(
          line,
          "`lift transpose perm`, `lift concat axis` and `lift split axis` need `lift rank "
          "LO..HI` (the ranks their copies are proved at)");
    return std::move(set_);
  }

 private:
  std::string_view file_;
  OpSet set_;
  std::map<std::string, int> classes_;
  int lift_line_ = 0;
  int lift_pool_line_ = 0;
};

}  // namespace

Expected<OpSet> parse_op_set(std::string_view text, std::string_view filename) {
  return Parser(filename).run(text);
}

Expected<OpSet> load_op_set(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot read the operator set"};
  std::stringstream s;
  s << in.rdbuf();
  return parse_op_set(s.str(), path);
}

std::string default_op_set_path() { return TSO_SOURCE_DIR "/generator/taso.ops"; }

}  // namespace tso::gen
