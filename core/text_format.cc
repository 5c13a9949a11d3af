// The canonical text format: a printer and a recursive-descent parser over
// core/lexer.h's tokens (grammar in core/README.md). The parser builds
// through GraphBuilder, so a parsed graph gets exactly the attribute
// completion and type inference of a graph built in code, and parse(print(g))
// reproduces g.
#include "core/text_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/lexer.h"

namespace tso {
namespace {

// ASCII only, on purpose: the text format must not depend on the locale.
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) {
  return is_letter(c) || is_digit(c) || c == '.' || c == '/' || c == '-';
}
bool is_number_char(char c) { return is_name_char(c) || c == '+'; }  // 1e+05

// Names may hold '/' and '-' (ONNX's); numbers may be negative.
constexpr text::Syntax kGraphSyntax{.name_char = is_name_char,
                                    .number_char = is_number_char,
                                    .punct = "{}()[],:=",
                                    .signed_numbers = true};

// A name prints bare when the lexer reads it back as a single identifier;
// anything else (ONNX's "onnx::Conv_12", "input.1" is fine) is quoted.
std::string print_name(const std::string& name) {
  bool bare = !name.empty() && is_letter(name[0]) &&
              std::all_of(name.begin(), name.end(), is_name_char);
  return bare ? name : print_attr_value(AttrValue{name});
}

bool is_default(AttrKey k, const AttrValue& v) {
  const std::optional<AttrValue>& d = attr_default(k);
  return d && *d == v;
}

}  // namespace

std::string print(const Graph& g) {
  std::vector<std::vector<std::string>> refs(g.size());  // text of each node output
  std::string out = "graph " + print_name(g.name()) + " {\n";
  int next_local = 0;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    std::string op(op_name(n.op));
    if (n.op == Op::Input || n.op == Op::Weight) {
      refs[i] = {print_name(n.name)};
      out += "  " + op + " " + refs[i][0] + ": " + to_string(n.outs[0]) + "\n";
      continue;
    }
    out += "  ";
    for (size_t k = 0; k < n.outs.size(); ++k) {
      refs[i].push_back("%" + std::to_string(next_local++));
      out += (k ? ", " : "") + refs[i][k] + ": " + to_string(n.outs[k]);
    }
    out += " = " + op + "(";
    const char* sep = "";
    for (TensorRef a : n.args) {
      out += sep + refs[a.node][a.output];
      sep = ", ";
    }
    for (const auto& [key, value] : n.attrs.entries()) {
      if (!attr_info(key).default_text.empty() && is_default(key, value)) continue;
      out += sep + std::string(attr_info(key).name) + "=" + print_attr_value(value);
      sep = ", ";
    }
    out += ")\n";
  }
  for (const GraphOutput& o : g.outputs())
    out += "  output " + print_name(o.name) + " = " + refs[o.ref.node][o.ref.output] + "\n";
  return out + "}\n";
}

namespace {

using text::describe;
using text::Tok;
using text::Token;

// Lists the known operators nearest to `name`: the closest always, up to two
// more when they are about as close.
std::string unknown_op_message(std::string_view name) {
  std::vector<std::pair<int, std::string_view>> near;
  for (const OpInfo& info : all_ops()) near.emplace_back(edit_distance(name, info.name), info.name);
  std::sort(near.begin(), near.end());
  int close = std::max(2, static_cast<int>(name.size()) / 3);
  std::string list(near[0].second);
  for (size_t i = 1; i < 3 && near[i].first <= std::max(close, near[0].first); ++i)
    list += ", " + std::string(near[i].second);
  return "unknown operator '" + std::string(name) + "'; did you mean " + list + "?";
}

std::string attr_list(const OpInfo& info) {
  std::string list;
  for (int k = 0; k < kNumAttrKeys; ++k) {
    if (!info.takes(static_cast<AttrKey>(k))) continue;
    list += (list.empty() ? "" : ", ") + std::string(attr_info(static_cast<AttrKey>(k)).name);
  }
  return list.empty() ? "none" : list;
}

class Parser : text::TokenParser {
 public:
  Parser(std::string_view text, std::string_view file) : TokenParser(text, file, kGraphSyntax) {}

  Expected<Graph> parse() {
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(skip_newlines());
    Token head = tok_;
    if (!at_word("graph")) return error_at(tok_, "expected 'graph NAME {', got " + describe(tok_));
    TSO_RETURN_IF_ERROR(advance());
    Expected<std::string> name = parse_name("a graph name");
    TSO_RETURN_IF_ERROR(name);
    b_ = GraphBuilder(*name);
    TSO_RETURN_IF_ERROR(expect("{"));
    TSO_RETURN_IF_ERROR(end_of_statement());
    while (true) {
      TSO_RETURN_IF_ERROR(skip_newlines());
      if (at("}")) break;
      if (tok_.kind == Tok::kEnd)
        return error_at(tok_, "missing '}' closing the graph opened at line " +
                                  std::to_string(head.line));
      TSO_RETURN_IF_ERROR(statement());
    }
    if (output_names_.empty()) return error_at(tok_, "the graph has no outputs");
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(skip_newlines());
    if (tok_.kind != Tok::kEnd)
      return error_at(tok_, "unexpected " + describe(tok_) + " after the graph's closing '}'");
    Expected<Graph> g = b_.finish();
    if (!g.ok()) return error_at(head, g.error().message);
    return g;
  }

 private:
  struct Def {
    TensorRef ref;
    int line;
  };
  struct Result {  // one output of an operator statement
    Token tok;
    Token type_tok;
    std::optional<TensorType> type;
  };

  Status statement() {
    if (at_word("input") || at_word("weight")) return declare_input();
    if (at_word("output")) return declare_output();
    if (tok_.kind == Tok::kLocal) return operator_statement();
    return error_at(tok_, "expected a statement (input, weight, output or %name = op(...)), got " +
                              describe(tok_));
  }

  Expected<std::string> parse_name(const std::string& what) {
    if (tok_.kind != Tok::kName && tok_.kind != Tok::kString)
      return error_at(tok_, "expected " + what + ", got " + describe(tok_));
    std::string name = tok_.kind == Tok::kString ? tok_.value : std::string(tok_.text);
    TSO_RETURN_IF_ERROR(advance());
    return name;
  }

  Expected<TensorType> parse_type() {
    TensorType t;
    if (tok_.kind != Tok::kName)
      return error_at(tok_, "expected a type like f32[1,3], got " + describe(tok_));
    if (!parse_dtype(tok_.text, &t.dtype))
      return error_at(tok_, "unknown dtype " + describe(tok_) +
                                " (known: f32, f16, f64, i64, i32, bool)");
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(expect("[", "'[' after the dtype"));
    while (!at("]")) {
      if (t.shape.rank() > 0) TSO_RETURN_IF_ERROR(expect(",", "',' or ']'"));
      int64_t d = -1;
      const char* end = tok_.text.data() + tok_.text.size();
      if (tok_.kind != Tok::kNumber)
        return error_at(tok_, "expected a dimension, got " + describe(tok_));
      if (std::from_chars(tok_.text.data(), end, d).ptr != end || d < 0)
        return error_at(tok_, "bad dimension " + describe(tok_) +
                                  " (dimensions are non-negative integers)");
      if (t.shape.rank() == Shape::kMaxRank)
        return error_at(tok_, "more than " + std::to_string(Shape::kMaxRank) + " dimensions");
      t.shape.push_back(d);
      TSO_RETURN_IF_ERROR(advance());
    }
    TSO_RETURN_IF_ERROR(advance());
    return t;
  }

  Expected<TensorRef> parse_ref() {
    const Def* def = nullptr;
    if (tok_.kind == Tok::kLocal) {
      auto it = locals_.find(std::string(tok_.text));
      if (it != locals_.end()) def = &it->second;
    } else if (tok_.kind == Tok::kName || tok_.kind == Tok::kString) {
      auto it = names_.find(tok_.kind == Tok::kString ? tok_.value : std::string(tok_.text));
      if (it != names_.end()) def = &it->second;
    } else {
      return error_at(tok_, "expected a tensor (a name or %N), got " + describe(tok_));
    }
    if (!def) return error_at(tok_, "unknown tensor " + std::string(tok_.text));
    TSO_RETURN_IF_ERROR(advance());
    return def->ref;
  }

  Status declare_input() {
    bool weight = tok_.text == "weight";
    int line = tok_.line;
    TSO_RETURN_IF_ERROR(advance());
    Token name_tok = tok_;
    Expected<std::string> name = parse_name("a tensor name");
    TSO_RETURN_IF_ERROR(name);
    if (auto it = names_.find(*name); it != names_.end())
      return error_at(name_tok, "tensor " + std::string(name_tok.text) +
                                    " is already defined at line " +
                                    std::to_string(it->second.line));
    TSO_RETURN_IF_ERROR(expect(":"));
    Token type_tok = tok_;
    Expected<TensorType> type = parse_type();
    TSO_RETURN_IF_ERROR(type);
    const std::string what = (weight ? "weight '" : "input '") + *name + "'";
    if (Status s = check_size(*type, what); !s.ok()) return error_at(type_tok, s.error().message);
    TensorRef r = weight ? b_.weight(*name, *type) : b_.input(*name, *type);
    names_.emplace(*name, Def{r, line});
    return end_of_statement();
  }

  Status declare_output() {
    TSO_RETURN_IF_ERROR(advance());
    Token name_tok = tok_;
    Expected<std::string> name = parse_name("an output name");
    TSO_RETURN_IF_ERROR(name);
    if (!output_names_.insert(*name).second)
      return error_at(name_tok, "duplicate output " + std::string(name_tok.text));
    TSO_RETURN_IF_ERROR(expect("="));
    Expected<TensorRef> ref = parse_ref();
    TSO_RETURN_IF_ERROR(ref);
    b_.output(*name, *ref);
    return end_of_statement();
  }

  Status operator_statement() {
    Token start = tok_;
    std::vector<Result> results;
    while (true) {
      if (tok_.kind != Tok::kLocal)
        return error_at(tok_, "expected an output name like %0, got " + describe(tok_));
      std::string name(tok_.text);
      if (auto it = locals_.find(name); it != locals_.end())
        return error_at(tok_, name + " is already defined at line " +
                                  std::to_string(it->second.line));
      for (const Result& r : results)
        if (r.tok.text == name) return error_at(tok_, name + " is named twice");
      results.push_back({tok_, {}, {}});
      TSO_RETURN_IF_ERROR(advance());
      if (at(":")) {
        TSO_RETURN_IF_ERROR(advance());
        results.back().type_tok = tok_;
        Expected<TensorType> type = parse_type();
        TSO_RETURN_IF_ERROR(type);
        results.back().type = *type;
      }
      if (!at(",")) break;
      TSO_RETURN_IF_ERROR(advance());
    }
    TSO_RETURN_IF_ERROR(expect("=", "'=' or ','"));

    Op op;
    Token op_tok = tok_;
    if (tok_.kind != Tok::kName)
      return error_at(tok_, "expected an operator name, got " + describe(tok_));
    if (!find_op(tok_.text, &op)) return error_at(tok_, unknown_op_message(tok_.text));
    if (op == Op::Input || op == Op::Weight)
      return error_at(tok_, "graph inputs are declared as '" + std::string(tok_.text) +
                                " NAME: TYPE', not as operators");
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(expect("(", "'(' after the operator name"));
    std::vector<TensorRef> args;
    Attrs attrs;
    while (!at(")")) {
      if (!args.empty() || !attrs.empty()) TSO_RETURN_IF_ERROR(expect(",", "',' or ')'"));
      if (tok_.kind == Tok::kName && lex_.peek() == '=') {
        TSO_RETURN_IF_ERROR(parse_attr(op_info(op), &attrs));
        continue;
      }
      if (!attrs.empty())
        return error_at(tok_, "tensor arguments must come before attributes");
      Expected<TensorRef> ref = parse_ref();
      TSO_RETURN_IF_ERROR(ref);
      args.push_back(*ref);
    }
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(end_of_statement());
    return add_node(start, op_tok, op, std::move(args), std::move(attrs), results);
  }

  Status parse_attr(const OpInfo& info, Attrs* attrs) {
    Token key_tok = tok_;
    AttrKey key;
    if (!find_attr_key(tok_.text, &key) || !info.takes(key))
      return error_at(tok_, std::string(info.name) + " has no attribute " + describe(tok_) +
                                " (it takes: " + attr_list(info) + ")");
    if (attrs->has(key)) return error_at(tok_, "duplicate attribute " + describe(tok_));
    TSO_RETURN_IF_ERROR(advance());  // onto '=', which peek() saw
    Token value = lex_.raw_value();
    if (value.kind == Tok::kBad) return error_at(value, value.value);
    Expected<AttrValue> v = parse_attr_value(attr_info(key).type, value.text);
    if (!v.ok())
      return error_at(value, "attribute " + std::string(key_tok.text) + ": " + v.error().message);
    attrs->set(key, std::move(*v));
    return advance();
  }

  Status add_node(const Token& start, const Token& op_tok, Op op, std::vector<TensorRef> args,
                  Attrs attrs, const std::vector<Result>& results) {
    std::string name(results[0].tok.text);
    std::string who = "node '" + name + "' (" + std::string(op_tok.text) + ")";
    std::vector<TensorType> recorded;
    if (op == Op::Opaque) {
      for (const Result& r : results) {
        if (!r.type)
          return error_at(r.tok, "outputs of opaque nodes need a type: it is recorded, not inferred");
        recorded.push_back(*r.type);
      }
    }
    Expected<std::vector<TensorRef>> refs =
        op == Op::Opaque ? b_.add_opaque(std::move(args), std::move(attrs), recorded, name)
                         : b_.add(op, std::move(args), std::move(attrs), name);
    if (!refs.ok()) return error_at(start, refs.error().message);
    if (refs->size() != results.size())
      return error_at(start, who + " has " + std::to_string(refs->size()) +
                                 " outputs, but the statement names " +
                                 std::to_string(results.size()));
    for (size_t i = 0; i < results.size(); ++i) {
      const TensorType& inferred = b_.type((*refs)[i]);
      if (results[i].type && *results[i].type != inferred)
        return error_at(results[i].type_tok,
                        who + ": " + std::string(results[i].tok.text) + " is annotated " +
                            to_string(*results[i].type) + " but inferred " + to_string(inferred));
      locals_.emplace(std::string(results[i].tok.text), Def{(*refs)[i], start.line});
    }
    return {};
  }

  GraphBuilder b_;
  std::unordered_map<std::string, Def> names_;   // graph inputs
  std::unordered_map<std::string, Def> locals_;  // %-named operator outputs
  std::unordered_set<std::string> output_names_;
};

}  // namespace

Expected<Graph> parse_graph(std::string_view text, std::string_view filename) {
  return Parser(text, filename).parse();
}

}  // namespace tso
