// The rule file loader: a recursive-descent parser over core/lexer.h's tokens,
// then per-rule checks (bindings, reachability, shape validity at the example
// types) whose errors point at the statement at fault.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "core/lexer.h"
#include "core/shape_inference.h"
#include "substitutions/rule_internal.h"
#include "substitutions/rules.h"

namespace tso {
namespace {

using namespace rules_internal;
using text::describe;
using text::Tok;
using text::Token;

// ASCII only, on purpose: the format must not depend on the locale.
bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// Shape expressions and conditions need + - * / and the comparisons; names are
// plain words; a minus sign is an operator.
constexpr text::Syntax kRuleSyntax{.name_char = is_word_char,
                                   .number_char = is_word_char,
                                   .punct = "{}()[],:=+-*/<",
                                   .pairs = true,
                                   .params = true};
using Form = PatternAttr::Form;

std::string unknown_op_message(std::string_view name) {
  std::string_view best;
  int best_d = 1 << 30;
  for (const OpInfo& info : all_ops()) {
    if (is_source(info.op) && info.op != Op::ConstOnes && info.op != Op::ConstEye &&
        info.op != Op::ConstEyeConv && info.op != Op::ConstPool)
      continue;
    int d = edit_distance(name, info.name);
    if (d < best_d) best_d = d, best = info.name;
  }
  return "unknown operator '" + std::string(name) + "'; did you mean " + std::string(best) + "?";
}

std::string arity_text(const OpInfo& info) {
  if (info.max_inputs == kVariadic) return "at least " + std::to_string(info.min_inputs);
  if (info.min_inputs == info.max_inputs) return std::to_string(info.min_inputs);
  return std::to_string(info.min_inputs) + " to " + std::to_string(info.max_inputs);
}

// Where each part of a rule was written, for the checks after parsing.
struct Locations {
  struct Use {
    int var;
    Token tok;
    enum class In : uint8_t { kSourceArg, kSourceAttr, kTarget, kWhere } in;
  };
  struct ParamUse {
    std::string name;
    AttrKey key;  // unused for an entry
    AttrType type;
    Token tok;
    bool in_source;
    bool entry = false;  // an integer inside a shape expression
  };
  std::vector<Token> var_decl;
  std::vector<Use> uses;
  std::vector<ParamUse> param_uses;
  std::vector<std::pair<Token, Token>> param_decl;  // the name and the raw value
  std::vector<Token> where;
  struct Side {
    std::vector<Token> stmt;  // first token of each statement
    std::vector<std::vector<std::pair<Token, TensorType>>> annotations;
    Token output;
  } source, target, correction;
  std::vector<Token> boxes;  // the `box` keyword of each correction box
};

class Parser : text::TokenParser {
 public:
  Parser(std::string_view text, std::string_view file)
      : TokenParser(text, file, kRuleSyntax), text_(text) {}

  Expected<RuleSet> parse() {
    RuleSet set;
    TSO_RETURN_IF_ERROR(header(&set));
    TSO_RETURN_IF_ERROR(advance());
    std::map<std::string, int> names;
    while (true) {
      TSO_RETURN_IF_ERROR(skip_newlines());
      if (tok_.kind == Tok::kEnd) break;
      if (!at_word("rule")) return error_at(tok_, "expected 'rule NAME {', got " + describe(tok_));
      Token name_tok = peek_token();
      Expected<Rule> r = rule();
      if (!r) return r.error();
      if (auto [it, fresh] = names.emplace(r->name, name_tok.line); !fresh)
        return error_at(name_tok, "rule " + r->name + " is already defined at line " +
                                      std::to_string(it->second));
      set.rules.push_back(std::move(*r));
    }
    return set;
  }

 private:
  // ---- tokens ---------------------------------------------------------------

  Expected<std::string> name(const char* what) {
    if (tok_.kind != Tok::kName)
      return error_at(tok_, std::string("expected ") + what + ", got " + describe(tok_));
    std::string s(tok_.text);
    TSO_RETURN_IF_ERROR(advance());
    return s;
  }
  // After `key`, with tok_ on '=': the raw value that follows.
  Expected<Token> raw_after_equals(const Token& key) {
    if (!at("="))
      return error_at(tok_, "expected '=' after " + describe(key) + ", got " + describe(tok_));
    Token v = lex_.raw_value();
    if (v.kind == Tok::kBad) return error_at(v, v.value);
    TSO_RETURN_IF_ERROR(advance());
    return v;
  }

  // ---- file header ----------------------------------------------------------

  // The leading block of comment lines: an optional version line, then the
  // header kept in RuleSet::header.
  Status header(RuleSet* set) {
    size_t pos = 0;
    int line = 0;
    bool first = true;
    while (pos < text_.size()) {
      size_t end = text_.find('\n', pos);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view l = text_.substr(pos, end - pos);
      ++line;
      pos = end + 1;
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      size_t lead = l.find_first_not_of(" \t");
      if (lead == std::string_view::npos) continue;
      if (l[lead] != '#') break;
      std::string_view c = l.substr(lead + 1);
      if (!c.empty() && c[0] == ' ') c.remove_prefix(1);
      // Trailing blanks (and the carriage returns of CRLF files) are not
      // kept: print_rules could not give them back.
      while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r'))
        c.remove_suffix(1);
      if (first && c.starts_with("tso rules v")) {
        if (c != "tso rules v1") {
          Token t;
          t.line = line;
          t.col = static_cast<int>(lead) + 1;
          return error_at(t, "unsupported rule file version '" + std::string(c.substr(10)) +
                                 "' (this tso reads v1)");
        }
      } else {
        set->header.emplace_back(c);
      }
      first = false;
    }
    return {};
  }

  // ---- rules ----------------------------------------------------------------

  Expected<Rule> rule() {
    Token head = tok_;
    TSO_RETURN_IF_ERROR(advance());
    Rule r;
    Expected<std::string> n = name("a rule name");
    if (!n) return n.error();
    r.name = *n;
    TSO_RETURN_IF_ERROR(expect("{"));
    TSO_RETURN_IF_ERROR(end_of_statement());
    loc_ = Locations{};
    vars_.clear();
    bool have_origin = false, have_status = false;
    int stage = 0;  // 0: declarations, 1: after source, 2: after target, 3: after correction
    while (true) {
      TSO_RETURN_IF_ERROR(skip_newlines());
      if (at("}")) break;
      if (tok_.kind == Tok::kEnd)
        return error_at(tok_, "missing '}' closing rule " + r.name + " opened at line " +
                                  std::to_string(head.line));
      Token kw = tok_;
      if (tok_.kind != Tok::kName)
        return error_at(tok_,
                        "expected origin, status, oneway, input, param, rank, where, source, "
                        "target or correction, got " +
                            describe(tok_));
      bool declaration = kw.text == "origin" || kw.text == "status" || kw.text == "oneway" ||
                         kw.text == "input" || kw.text == "param" || kw.text == "rank" ||
                         kw.text == "where";
      if (declaration && stage > 0)
        return error_at(kw, "'" + std::string(kw.text) + "' must come before source");
      if (kw.text == "origin") {
        if (have_origin) return error_at(kw, "duplicate origin");
        have_origin = true;
        TSO_RETURN_IF_ERROR(origin(&r.origin));
      } else if (kw.text == "status") {
        if (have_status) return error_at(kw, "duplicate status");
        have_status = true;
        status_tok_ = kw;
        TSO_RETURN_IF_ERROR(status(&r.status));
      } else if (kw.text == "oneway") {
        if (r.one_way) return error_at(kw, "duplicate oneway");
        r.one_way = true;
        TSO_RETURN_IF_ERROR(advance());
        TSO_RETURN_IF_ERROR(end_of_statement());
      } else if (kw.text == "input") {
        TSO_RETURN_IF_ERROR(input(&r));
      } else if (kw.text == "param") {
        TSO_RETURN_IF_ERROR(param(&r));
      } else if (kw.text == "rank") {
        if (!r.ranks.vars.empty()) return error_at(kw, "duplicate rank");
        TSO_RETURN_IF_ERROR(rank(&r));
      } else if (kw.text == "where") {
        TSO_RETURN_IF_ERROR(where(&r));
      } else if (kw.text == "source" || kw.text == "target") {
        bool source = kw.text == "source";
        if (stage != (source ? 0 : 1))
          return error_at(kw, source       ? "duplicate source"
                              : stage == 0 ? "target before source"
                                           : "duplicate target");
        stage = source ? 1 : 2;
        TSO_RETURN_IF_ERROR(
            side(source ? &r.source : &r.target, source ? &loc_.source : &loc_.target, source));
      } else if (kw.text == "correction") {
        if (stage != 2)
          return error_at(kw, stage == 3 ? "duplicate correction" : "correction before target");
        stage = 3;
        TSO_RETURN_IF_ERROR(correction(&r));
      } else {
        return error_at(kw,
                        "expected origin, status, oneway, input, param, rank, where, source, "
                        "target or correction, got " +
                            describe(kw));
      }
    }
    if (!have_origin) return error_at(tok_, "rule " + r.name + " has no origin");
    if (!have_status) return error_at(tok_, "rule " + r.name + " has no status");
    if (stage < 2)
      return error_at(tok_, "rule " + r.name + " has no " + (stage == 0 ? "source" : "target"));
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(end_of_statement());
    TSO_RETURN_IF_ERROR(check(&r));
    return r;
  }

  Status origin(RuleOrigin* o) {
    TSO_RETURN_IF_ERROR(advance());
    if (at_word("handwritten")) {
      o->kind = RuleOrigin::Kind::kHandwritten;
      TSO_RETURN_IF_ERROR(advance());
      return end_of_statement();
    }
    if (!at_word("generated"))
      return error_at(tok_, "expected 'generated' or 'handwritten', got " + describe(tok_));
    o->kind = RuleOrigin::Kind::kGenerated;
    TSO_RETURN_IF_ERROR(advance());
    std::set<std::string> seen;
    while (tok_.kind == Tok::kName) {
      Token key = tok_;
      std::string k(key.text);
      if (k != "version" && k != "ops" && k != "seed")
        return error_at(key, "unknown origin field " + describe(key) + " (version, ops, seed)");
      if (!seen.insert(k).second) return error_at(key, "duplicate origin field " + describe(key));
      TSO_RETURN_IF_ERROR(advance());
      Expected<Token> v = raw_after_equals(key);
      if (!v) return v.error();
      Expected<std::string> text = word(*v);
      if (!text) return text.error();
      if (k == "version") o->version = *text;
      if (k == "ops") o->ops = *text;
      if (k == "seed") {
        auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), o->seed);
        if (ec != std::errc() || p != text->data() + text->size())
          return error_at(*v, "seed must be a non-negative integer, got " + describe(*v));
      }
    }
    if (seen.size() != 3) return error_at(tok_, "origin generated needs version=, ops= and seed=");
    return end_of_statement();
  }

  // A raw value as a string: quoted text decoded, a bare word as written.
  Expected<std::string> word(const Token& v) {
    if (v.text.empty() || v.text[0] != '"') return std::string(v.text);
    Expected<AttrValue> s = parse_attr_value(AttrType::Str, v.text);
    if (!s) return error_at(v, s.error().message);
    return std::get<std::string>(*s);
  }

  Status status(RuleStatus* s) {
    TSO_RETURN_IF_ERROR(advance());
    struct Kind {
      RuleStatus::Kind kind;
      const char* key;
      const char* name() const { return status_name(kind); }
    };
    static const Kind kKinds[] = {
        {RuleStatus::Kind::kUnverified, nullptr}, {RuleStatus::Kind::kVerified, "specs"},
        {RuleStatus::Kind::kRefuted, "model"},    {RuleStatus::Kind::kUnknown, "reason"},
        {RuleStatus::Kind::kPartial, "boxes"},    {RuleStatus::Kind::kExact, "boxes"}};
    const Kind* k = nullptr;
    for (const Kind& c : kKinds)
      if (at_word(c.name())) k = &c;
    if (!k)
      return error_at(
          tok_, "expected a status (unverified, verified, refuted, unknown, partial, exact), got " +
                    describe(tok_));
    s->kind = k->kind;
    TSO_RETURN_IF_ERROR(advance());
    if (!k->key) return end_of_statement();
    if (!at_word(k->key))
      return error_at(tok_, "expected " + std::string(k->key) + "=... after " + k->name() +
                                ", got " + describe(tok_));
    Token key = tok_;
    TSO_RETURN_IF_ERROR(advance());
    Expected<Token> v = raw_after_equals(key);
    if (!v) return v.error();
    Expected<std::string> text = word(*v);
    if (!text) return text.error();
    s->detail = *text;
    return end_of_statement();
  }

  Status input(Rule* r) {
    TSO_RETURN_IF_ERROR(advance());
    Token name_tok = tok_;
    Expected<std::string> n = name("a variable name");
    if (!n) return n.error();
    if (auto it = vars_.find(*n); it != vars_.end())
      return error_at(name_tok, "variable " + *n + " is already declared at line " +
                                    std::to_string(loc_.var_decl[it->second].line));
    TSO_RETURN_IF_ERROR(expect(":"));
    Token type_tok = tok_;
    Expected<TensorType> t = type();
    if (!t) return t.error();
    if (Status s = check_size(*t, "variable " + *n); !s.ok())
      return error_at(type_tok, s.error().message);
    vars_.emplace(*n, static_cast<int>(r->inputs.size()));
    r->inputs.push_back({*n, *t});
    loc_.var_decl.push_back(name_tok);
    return end_of_statement();
  }

  Expected<TensorType> type() {
    TensorType t;
    if (tok_.kind != Tok::kName || !parse_dtype(tok_.text, &t.dtype))
      return error_at(tok_, "expected a type like f32[2,4], got " + describe(tok_));
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(expect("[", "'[' after the dtype"));
    while (!at("]")) {
      if (t.shape.rank() > 0) TSO_RETURN_IF_ERROR(expect(",", "',' or ']'"));
      int64_t d = -1;
      const char* end = tok_.text.data() + tok_.text.size();
      if (tok_.kind != Tok::kNumber || std::from_chars(tok_.text.data(), end, d).ptr != end)
        return error_at(tok_, "expected a dimension, got " + describe(tok_));
      if (t.shape.rank() == Shape::kMaxRank)
        return error_at(tok_, "more than " + std::to_string(Shape::kMaxRank) + " dimensions");
      t.shape.push_back(d);
      TSO_RETURN_IF_ERROR(advance());
    }
    TSO_RETURN_IF_ERROR(advance());
    return t;
  }

  Status param(Rule* r) {
    TSO_RETURN_IF_ERROR(advance());
    Token name_tok = tok_;
    if (tok_.kind != Tok::kParam)
      return error_at(tok_, "expected a parameter like ?k, got " + describe(tok_));
    std::string n(tok_.text.substr(1));
    for (const RuleParam& p : r->params)
      if (p.name == n) return error_at(tok_, "parameter ?" + n + " is already declared");
    TSO_RETURN_IF_ERROR(advance());
    Expected<Token> v = raw_after_equals(name_tok);
    if (!v) return v.error();
    r->params.push_back({n, AttrValue{}});  // typed once a use tells the attribute
    loc_.param_decl.emplace_back(name_tok, *v);
    return end_of_statement();
  }

  // `rank VAR... in LO..HI` (rules.h, RankClause), after the variables.
  Status rank(Rule* r) {
    TSO_RETURN_IF_ERROR(advance());
    int example = -1;
    while (tok_.kind == Tok::kName && !at_word("in")) {
      auto it = vars_.find(std::string(tok_.text));
      if (it == vars_.end()) return error_at(tok_, "rank: unknown variable " + describe(tok_));
      const std::string n(tok_.text);
      if (std::find(r->ranks.vars.begin(), r->ranks.vars.end(), n) != r->ranks.vars.end())
        return error_at(tok_, "rank: " + n + " is listed twice");
      const int vr = r->inputs[it->second].type.shape.rank();
      if (example >= 0 && vr != example)
        return error_at(tok_, "rank: " + n + " has rank " + std::to_string(vr) +
                                  " but the variables before it rank " + std::to_string(example));
      example = vr;
      r->ranks.vars.push_back(n);
      TSO_RETURN_IF_ERROR(advance());
    }
    if (r->ranks.vars.empty() || !at_word("in"))
      return error_at(tok_, "expected `rank VAR... in LO..HI`, got " + describe(tok_));
    TSO_RETURN_IF_ERROR(advance());
    const Token range = tok_;
    const std::string_view t = tok_.text;
    const size_t dots = t.find("..");
    int lo = 0, hi = 0;
    auto number = [](std::string_view x, int* out) {
      auto [p, ec] = std::from_chars(x.data(), x.data() + x.size(), *out);
      return ec == std::errc() && p == x.data() + x.size();
    };
    if (tok_.kind != Tok::kNumber || dots == std::string_view::npos ||
        !number(t.substr(0, dots), &lo) || !number(t.substr(dots + 2), &hi))
      return error_at(tok_, "expected a rank range like 2..4, got " + describe(tok_));
    if (lo < 1 || hi > Shape::kMaxRank || lo > hi || example < lo || example > hi)
      return error_at(range, "rank range " + std::string(t) + " must lie in 1.." +
                                 std::to_string(Shape::kMaxRank) + " and hold the example rank " +
                                 std::to_string(example));
    r->ranks.lo = lo;
    r->ranks.hi = hi;
    TSO_RETURN_IF_ERROR(advance());
    return end_of_statement();
  }

  Status where(Rule* r) {
    Token kw = tok_;
    TSO_RETURN_IF_ERROR(advance());
    Condition c;
    if (at_word("odd") && lex_.peek() == '(') {
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect("("));
      Expected<ShapeExpr> e = expr(Locations::Use::In::kWhere);
      if (!e) return e.error();
      TSO_RETURN_IF_ERROR(expect(")"));
      c.kind = Condition::Kind::kOdd;
      c.lhs = std::move(*e);
    } else {
      Expected<ShapeExpr> l = expr(Locations::Use::In::kWhere);
      if (!l) return l.error();
      static const std::pair<const char*, Condition::Kind> kOps[] = {{"==", Condition::Kind::kEq},
                                                                     {"!=", Condition::Kind::kNe},
                                                                     {"<", Condition::Kind::kLt},
                                                                     {"<=", Condition::Kind::kLe}};
      bool found = false;
      for (auto [text, kind] : kOps)
        if (at(text)) c.kind = kind, found = true;
      if (!found) return error_at(tok_, "expected ==, !=, < or <=, got " + describe(tok_));
      TSO_RETURN_IF_ERROR(advance());
      Expected<ShapeExpr> rhs = expr(Locations::Use::In::kWhere);
      if (!rhs) return rhs.error();
      c.lhs = std::move(*l);
      c.rhs = std::move(*rhs);
    }
    r->where.push_back(std::move(c));
    loc_.where.push_back(kw);
    return end_of_statement();
  }

  // ---- shape expressions ----------------------------------------------------

  static bool mentions_param(const ShapeExpr& e) {
    return e.kind == ShapeExpr::Kind::kParam ||
           std::any_of(e.args.begin(), e.args.end(), mentions_param);
  }

  // Parentheses and operators nest a shape expression at most this deep:
  // the parser and every walk over an expression (evaluation, printing,
  // the verifier's translation) recurse once a level, and a hostile file
  // nested thousands deep overflowed the stack.
  static constexpr int kMaxExprDepth = 32;

  static int depth(const ShapeExpr& e) {
    int d = 0;
    for (const ShapeExpr& a : e.args) d = std::max(d, depth(a));
    return d + 1;
  }

  Error too_deep(const Token& t) const {
    return error_at(t, "shape expression nested more than " + std::to_string(kMaxExprDepth) +
                           " levels deep");
  }

  // `op` applied to `l` and `r`, refused past kMaxExprDepth.
  Expected<ShapeExpr> binary(const Token& op, ShapeExpr::Kind kind, ShapeExpr l, ShapeExpr r) {
    ShapeExpr e = ShapeExpr::binary(kind, std::move(l), std::move(r));
    if (depth(e) > kMaxExprDepth) return too_deep(op);
    return e;
  }

  Expected<ShapeExpr> expr(Locations::Use::In in) {
    Expected<ShapeExpr> l = term(in);
    if (!l) return l;
    while (at("+") || at("-")) {
      const Token op = tok_;
      auto kind = at("+") ? ShapeExpr::Kind::kAdd : ShapeExpr::Kind::kSub;
      TSO_RETURN_IF_ERROR(advance());
      Expected<ShapeExpr> r = term(in);
      if (!r) return r;
      l = binary(op, kind, std::move(*l), std::move(*r));
      if (!l) return l;
    }
    return l;
  }

  Expected<ShapeExpr> term(Locations::Use::In in) {
    Expected<ShapeExpr> l = factor(in);
    if (!l) return l;
    while (at("*") || at("/")) {
      const Token op = tok_;
      auto kind = at("*") ? ShapeExpr::Kind::kMul : ShapeExpr::Kind::kDiv;
      TSO_RETURN_IF_ERROR(advance());
      Expected<ShapeExpr> r = factor(in);
      if (!r) return r;
      l = binary(op, kind, std::move(*l), std::move(*r));
      if (!l) return l;
    }
    return l;
  }

  Expected<int64_t> integer() {
    bool neg = at("-");
    if (neg) TSO_RETURN_IF_ERROR(advance());
    int64_t v = 0;
    const char* end = tok_.text.data() + tok_.text.size();
    if (tok_.kind != Tok::kNumber || std::from_chars(tok_.text.data(), end, v).ptr != end)
      return error_at(tok_, "expected an integer, got " + describe(tok_));
    TSO_RETURN_IF_ERROR(advance());
    return neg ? -v : v;
  }

  Expected<ShapeExpr> factor(Locations::Use::In in) {
    if (at("(")) {
      if (parens_ == kMaxExprDepth) return too_deep(tok_);
      TSO_RETURN_IF_ERROR(advance());
      ++parens_;
      Expected<ShapeExpr> e = expr(in);
      --parens_;
      if (!e) return e;
      TSO_RETURN_IF_ERROR(expect(")"));
      return e;
    }
    if (at_word("dim")) {
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect("(", "'(' after dim"));
      Token var = tok_;
      auto it = tok_.kind == Tok::kName ? vars_.find(std::string(tok_.text)) : vars_.end();
      if (it == vars_.end())
        return error_at(tok_, "dim() needs a declared variable, got " + describe(tok_));
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect(","));
      Expected<int64_t> axis = integer();
      if (!axis) return axis.error();
      TSO_RETURN_IF_ERROR(expect(")"));
      loc_.uses.push_back({it->second, var, in});
      return ShapeExpr::dim(it->first, *axis);
    }
    if (at("-") || tok_.kind == Tok::kNumber) {
      Expected<int64_t> v = integer();
      if (!v) return v.error();
      return ShapeExpr::lit(*v);
    }
    if (tok_.kind == Tok::kParam) {
      std::string name(tok_.text.substr(1));
      loc_.param_uses.push_back(
          {name, AttrKey{}, AttrType::Int, tok_, in == Locations::Use::In::kSourceAttr, true});
      TSO_RETURN_IF_ERROR(advance());
      return ShapeExpr::param(std::move(name));
    }
    return error_at(tok_,
                    "expected a shape expression (an integer, dim(VAR, AXIS), ?PARAM or '('), got " +
                        describe(tok_));
  }

  // ---- sides ----------------------------------------------------------------

  Status side(RuleSide* s, Locations::Side* loc, bool source) {
    Token kw = tok_;
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(expect("{"));
    TSO_RETURN_IF_ERROR(end_of_statement());
    std::map<std::string, std::pair<RuleRef, int>> locals;  // name -> ref, line
    bool have_output = false;
    while (true) {
      TSO_RETURN_IF_ERROR(skip_newlines());
      if (at("}")) break;
      if (tok_.kind == Tok::kEnd)
        return error_at(tok_, "missing '}' closing " + std::string(kw.text) + " opened at line " +
                                  std::to_string(kw.line));
      if (have_output) return error_at(tok_, "nothing may follow the output statement");
      if (at_word("output")) {
        loc->output = tok_;
        TSO_RETURN_IF_ERROR(advance());
        do {
          if (!s->outputs.empty()) TSO_RETURN_IF_ERROR(advance());
          Expected<RuleRef> r =
              ref(locals, source ? Locations::Use::In::kSourceArg : Locations::Use::In::kTarget);
          if (!r) return r.error();
          s->outputs.push_back(*r);
        } while (at(","));
        TSO_RETURN_IF_ERROR(end_of_statement());
        have_output = true;
        continue;
      }
      TSO_RETURN_IF_ERROR(statement(s, loc, source, &locals));
    }
    if (!have_output) return error_at(tok_, std::string(kw.text) + " has no output statement");
    TSO_RETURN_IF_ERROR(advance());
    return end_of_statement();
  }

  // `correction { statements; box %P output=K at=[EXPR, ...] ... }`: the
  // statements compute patches from the variables, each box line writes one
  // into a target output.
  Status correction(Rule* r) {
    Token kw = tok_;
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(expect("{"));
    TSO_RETURN_IF_ERROR(end_of_statement());
    std::map<std::string, std::pair<RuleRef, int>> locals;
    Correction& c = r->correction;
    while (true) {
      TSO_RETURN_IF_ERROR(skip_newlines());
      if (at("}")) break;
      if (tok_.kind == Tok::kEnd)
        return error_at(tok_,
                        "missing '}' closing correction opened at line " + std::to_string(kw.line));
      if (!at_word("box")) {
        if (!c.boxes.empty()) return error_at(tok_, "statements must come before the boxes");
        TSO_RETURN_IF_ERROR(statement(&c.side, &loc_.correction, false, &locals));
        continue;
      }
      loc_.boxes.push_back(tok_);
      TSO_RETURN_IF_ERROR(advance());
      Expected<RuleRef> patch = ref(locals, Locations::Use::In::kTarget);
      if (!patch) return patch.error();
      CorrectionBox box;
      if (!at_word("output"))
        return error_at(tok_, "expected output=K after the patch, got " + describe(tok_));
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect("="));
      Token out_tok = tok_;
      Expected<int64_t> out = integer();
      if (!out) return out.error();
      if (*out < 0 || *out >= static_cast<int64_t>(r->target.outputs.size()))
        return error_at(out_tok, "the target has no output " + std::to_string(*out));
      box.output = static_cast<int>(*out);
      if (!at_word("at"))
        return error_at(tok_, "expected at=[...] after output=K, got " + describe(tok_));
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect("="));
      TSO_RETURN_IF_ERROR(expect("["));
      while (!at("]")) {
        if (!box.at.empty()) TSO_RETURN_IF_ERROR(expect(",", "',' or ']'"));
        Expected<ShapeExpr> e = expr(Locations::Use::In::kTarget);
        if (!e) return e.error();
        box.at.push_back(std::move(*e));
      }
      TSO_RETURN_IF_ERROR(advance());
      c.side.outputs.push_back(*patch);
      c.boxes.push_back(std::move(box));
      TSO_RETURN_IF_ERROR(end_of_statement());
    }
    if (c.boxes.empty()) return error_at(tok_, "the correction has no box");
    loc_.correction.output = loc_.boxes.front();
    TSO_RETURN_IF_ERROR(advance());
    return end_of_statement();
  }

  Expected<RuleRef> ref(const std::map<std::string, std::pair<RuleRef, int>>& locals,
                        Locations::Use::In in) {
    RuleRef r;
    if (tok_.kind == Tok::kLocal) {
      auto it = locals.find(std::string(tok_.text));
      if (it == locals.end()) return error_at(tok_, "unknown tensor " + std::string(tok_.text));
      r = it->second.first;
    } else if (tok_.kind == Tok::kName) {
      auto it = vars_.find(std::string(tok_.text));
      if (it == vars_.end())
        return error_at(tok_, "unknown tensor " + std::string(tok_.text) +
                                  " (declare variables with 'input NAME: TYPE')");
      r.index = it->second;
      loc_.uses.push_back({it->second, tok_, in});
    } else {
      return error_at(tok_, "expected a tensor (a variable or %N), got " + describe(tok_));
    }
    TSO_RETURN_IF_ERROR(advance());
    return r;
  }

  Status statement(RuleSide* s, Locations::Side* loc, bool source,
                   std::map<std::string, std::pair<RuleRef, int>>* locals) {
    Token start = tok_;
    std::vector<Token> results;
    std::vector<std::pair<Token, TensorType>> annotations;
    while (true) {
      if (tok_.kind != Tok::kLocal)
        return error_at(tok_,
                        "expected a statement (%N = op(...) or output), got " + describe(tok_));
      std::string n(tok_.text);
      if (auto it = locals->find(n); it != locals->end())
        return error_at(tok_,
                        n + " is already defined at line " + std::to_string(it->second.second));
      for (const Token& r : results)
        if (r.text == tok_.text) return error_at(tok_, n + " is named twice");
      results.push_back(tok_);
      TSO_RETURN_IF_ERROR(advance());
      if (at(":")) {
        TSO_RETURN_IF_ERROR(advance());
        Token type_tok = tok_;
        Expected<TensorType> t = type();
        if (!t) return t.error();
        annotations.emplace_back(type_tok, *t);
      } else {
        annotations.emplace_back(Token{}, TensorType{});
        annotations.back().first.kind = Tok::kEnd;  // no annotation
      }
      if (!at(",")) break;
      TSO_RETURN_IF_ERROR(advance());
    }
    TSO_RETURN_IF_ERROR(expect("=", "'=' or ','"));
    Token op_tok = tok_;
    Op op;
    if (tok_.kind != Tok::kName)
      return error_at(tok_, "expected an operator name, got " + describe(tok_));
    if (!find_op(tok_.text, &op)) return error_at(tok_, unknown_op_message(tok_.text));
    if (op == Op::Input || op == Op::Weight || op == Op::Opaque)
      return error_at(tok_,
                      "'" + std::string(tok_.text) + "' cannot appear in a rule" +
                          (op == Op::Opaque ? "" : "; declare variables with 'input NAME: TYPE'"));
    const OpInfo& info = op_info(op);
    TSO_RETURN_IF_ERROR(advance());
    TSO_RETURN_IF_ERROR(expect("(", "'(' after the operator name"));
    RuleNode node;
    node.op = op;
    std::set<AttrKey> given;
    while (!at(")")) {
      if (!node.args.empty() || !given.empty()) TSO_RETURN_IF_ERROR(expect(",", "',' or ')'"));
      if (tok_.kind == Tok::kName && lex_.peek() == '=') {
        Expected<PatternAttr> a = attribute(info, source);
        if (!a) return a.error();
        if (!given.insert(a->key).second)
          return error_at(tok_, "duplicate attribute " + std::string(attr_info(a->key).name));
        node.attrs.push_back(std::move(*a));
        continue;
      }
      if (!given.empty()) return error_at(tok_, "tensor arguments must come before attributes");
      Expected<RuleRef> r =
          ref(*locals, source ? Locations::Use::In::kSourceArg : Locations::Use::In::kTarget);
      if (!r) return r.error();
      node.args.push_back(*r);
    }
    TSO_RETURN_IF_ERROR(advance());
    int n = static_cast<int>(node.args.size());
    if (n < info.min_inputs || (info.max_inputs != kVariadic && n > info.max_inputs))
      return error_at(op_tok, std::string(info.name) + " takes " + arity_text(info) +
                                  " tensor arguments, got " + std::to_string(n));
    if (info.outputs >= 1 && static_cast<int>(results.size()) != info.outputs)
      return error_at(start, std::string(info.name) + " has " + std::to_string(info.outputs) +
                                 " output(s), but the statement names " +
                                 std::to_string(results.size()));
    TSO_RETURN_IF_ERROR(complete(&node, given, op_tok));
    node.outputs = static_cast<int>(results.size());
    int index = static_cast<int>(s->nodes.size());
    for (size_t k = 0; k < results.size(); ++k)
      locals->emplace(
          std::string(results[k].text),
          std::pair{RuleRef{RuleRef::Kind::kNode, index, static_cast<int>(k)}, start.line});
    s->nodes.push_back(std::move(node));
    loc->stmt.push_back(start);
    loc->annotations.push_back(std::move(annotations));
    return end_of_statement();
  }

  // Fills the attributes a statement leaves out with their defaults; a
  // required one missing is an error.
  Status complete(RuleNode* node, const std::set<AttrKey>& given, const Token& op_tok) {
    const OpInfo& info = op_info(node->op);
    for (int k = 0; k < kNumAttrKeys; ++k) {
      AttrKey key = static_cast<AttrKey>(k);
      if (!info.takes(key) || given.count(key)) continue;
      PatternAttr a;
      a.key = key;
      if (!default_value(key, &a.value))
        return error_at(op_tok, std::string(info.name) + " needs attribute " +
                                    std::string(attr_info(key).name));
      node->attrs.push_back(std::move(a));
    }
    std::sort(node->attrs.begin(), node->attrs.end(),
              [](const PatternAttr& a, const PatternAttr& b) { return a.key < b.key; });
    return {};
  }

  Expected<PatternAttr> attribute(const OpInfo& info, bool source) {
    Token key_tok = tok_;
    PatternAttr a;
    if (!find_attr_key(tok_.text, &a.key) || !info.takes(a.key))
      return error_at(tok_, std::string(info.name) + " has no attribute " + describe(tok_));
    const AttrType type = attr_info(a.key).type;
    TSO_RETURN_IF_ERROR(advance());  // onto '=', which peek() saw
    if (lex_.peek() == '?') {
      TSO_RETURN_IF_ERROR(advance());
      a.form = Form::kParam;
      a.param = std::string(tok_.text.substr(1));
      loc_.param_uses.push_back({a.param, a.key, type, tok_, source});
      TSO_RETURN_IF_ERROR(advance());
      return a;
    }
    if (type == AttrType::Float || type == AttrType::Act || type == AttrType::Str ||
        (type == AttrType::Pad && lex_.peek() != '[')) {
      Expected<Token> v = raw_after_equals(key_tok);
      if (!v) return v.error();
      Expected<AttrValue> x = parse_attr_value(type, v->text);
      if (!x)
        return error_at(*v, "attribute " + std::string(key_tok.text) + ": " + x.error().message);
      a.value = std::move(*x);
      return a;
    }
    TSO_RETURN_IF_ERROR(advance());
    auto in = source ? Locations::Use::In::kSourceAttr : Locations::Use::In::kTarget;
    if (type == AttrType::Int) {
      Token first = tok_;
      Expected<ShapeExpr> e = expr(in);
      if (!e) return e.error();
      if (source && mentions_param(*e))
        return error_at(first, "a parameter in the source must be the whole value or list entry");
      a.form = Form::kExpr;
      a.exprs.push_back(std::move(*e));
    } else if (a.key == AttrKey::perm && at_word("inv")) {
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect("(", "'(' after inv"));
      if (tok_.kind != Tok::kParam)
        return error_at(tok_, "expected a parameter like inv(?p), got " + describe(tok_));
      a.form = Form::kParamInverse;
      a.param = std::string(tok_.text.substr(1));
      loc_.param_uses.push_back({a.param, a.key, type, tok_, source});
      TSO_RETURN_IF_ERROR(advance());
      TSO_RETURN_IF_ERROR(expect(")", "')' closing inv("));
      return a;
    } else {
      Token open = tok_;
      TSO_RETURN_IF_ERROR(expect("[", "'[' opening the list"));
      while (!at("]")) {
        if (!a.exprs.empty()) TSO_RETURN_IF_ERROR(expect(",", "',' or ']'"));
        Token entry = tok_;
        Expected<ShapeExpr> e = expr(in);
        if (!e) return e.error();
        // The source binds a parameter from a whole entry; inside an
        // expression it could only be solved for.
        if (source && e->kind != ShapeExpr::Kind::kParam && mentions_param(*e))
          return error_at(entry, "a parameter in the source must be the whole value or list entry");
        a.exprs.push_back(std::move(*e));
      }
      TSO_RETURN_IF_ERROR(advance());
      a.form = type == AttrType::Pad ? Form::kExprPads : Form::kExprList;
      if (type == AttrType::Pad && a.exprs.size() != 4)
        return error_at(open, "attribute pad: expected [top,left,bottom,right]");
    }
    // All literals: the attribute is a plain value, so equal meaning compares equal.
    bool literal = std::all_of(a.exprs.begin(), a.exprs.end(),
                               [](const ShapeExpr& e) { return e.kind == ShapeExpr::Kind::kLit; });
    if (literal) {
      std::vector<int64_t> xs;
      for (const ShapeExpr& e : a.exprs) xs.push_back(e.value);
      if (a.form == Form::kExpr)
        a.value = xs[0];
      else if (a.form == Form::kExprList)
        a.value = xs;
      else
        a.value = Padding{Padding::kExplicit, {xs[0], xs[1], xs[2], xs[3]}};
      a.form = Form::kValue;
      a.exprs.clear();
    }
    return a;
  }

  // ---- checks after a rule is read -------------------------------------------

  Status check(Rule* r) {
    TSO_RETURN_IF_ERROR(check_bindings(r));
    TSO_RETURN_IF_ERROR(check_params(r));
    if (r->source.nodes.empty())
      return error_at(loc_.source.output, "the source has no operator: it would match any tensor");
    TSO_RETURN_IF_ERROR(check_live(r->source, loc_.source, "source"));
    TSO_RETURN_IF_ERROR(check_live(r->target, loc_.target, "target"));
    if (r->source.outputs.size() != r->target.outputs.size())
      return error_at(loc_.target.output, "the target has " +
                                              std::to_string(r->target.outputs.size()) +
                                              " outputs but the source has " +
                                              std::to_string(r->source.outputs.size()));
    Expected<Graph> src = instantiated(*r, RuleSideKind::kSource);
    if (!src) return src.error();
    Expected<Graph> tgt = instantiated(*r, RuleSideKind::kTarget);
    if (!tgt) return tgt.error();
    TSO_RETURN_IF_ERROR(check_correction(*r));
    for (size_t k = 0; k < r->source.outputs.size(); ++k) {
      const TensorType& a = src->type(src->outputs()[k].ref);
      const TensorType& b = tgt->type(tgt->outputs()[k].ref);
      if (a != b)
        return error_at(loc_.target.output, "output " + std::to_string(k) + " is " + to_string(b) +
                                                " in the target but " + to_string(a) +
                                                " in the source at the example types");
    }
    return {};
  }

  // A partial rule has a correction and only a partial rule has one; every
  // patch fits its output at the example types.
  Status check_correction(const Rule& r) {
    bool partial = r.status.kind == RuleStatus::Kind::kPartial;
    if (partial && r.correction.boxes.empty())
      return error_at(status_tok_, "rule " + r.name + " is partial but has no correction");
    if (!partial && !r.correction.boxes.empty())
      return error_at(loc_.boxes.front(), "only a partial rule has a correction");
    if (!partial) return {};
    TSO_RETURN_IF_ERROR(check_live(r.correction.side, loc_.correction, "correction"));
    Failure f;
    Expected<Graph> g = instantiate_side(r, RuleSideKind::kCorrected, {}, &f);
    if (g) return {};
    std::string msg = g.error().message + " (at the example types)";
    int first_box = static_cast<int>(r.target.nodes.size() + r.correction.side.nodes.size());
    if (f.what == Failure::What::kNode && f.index >= first_box)
      return error_at(loc_.boxes[f.index - first_box], msg);
    if (f.what == Failure::What::kNode && f.index >= static_cast<int>(r.target.nodes.size()))
      return error_at(loc_.correction.stmt[f.index - r.target.nodes.size()], msg);
    return error_at(loc_.boxes.front(), msg);
  }

  Status check_bindings(const Rule* r) {
    std::vector<char> bound(r->inputs.size(), 0), used(r->inputs.size(), 0);
    for (const auto& u : loc_.uses) {
      used[u.var] = 1;
      if (u.in == Locations::Use::In::kSourceArg) bound[u.var] = 1;
    }
    for (const auto& u : loc_.uses) {
      if (bound[u.var]) continue;
      const std::string& v = r->inputs[u.var].name;
      switch (u.in) {
        case Locations::Use::In::kTarget:
          return error_at(u.tok, "the target uses " + v + ", which the source never binds");
        case Locations::Use::In::kWhere:
          return error_at(u.tok, "the condition uses " + v + ", which the source never binds");
        default:
          return error_at(u.tok, "the source uses the shape of " + v +
                                     " but never takes it as a tensor argument");
      }
    }
    for (size_t i = 0; i < used.size(); ++i)
      if (!used[i])
        return error_at(loc_.var_decl[i], "variable " + r->inputs[i].name + " is never used");
    return {};
  }

  Status check_params(Rule* r) {
    std::map<std::string, const Locations::ParamUse*> first;
    for (const auto& u : loc_.param_uses) {
      auto [it, fresh] = first.emplace(u.name, &u);
      if (!fresh && it->second->type != u.type)
        return error_at(u.tok, "?" + u.name + " is used for attributes of different types");
      if (u.in_source) it->second = it->second->in_source ? it->second : &u;
    }
    for (const auto& u : loc_.param_uses)
      if (!u.in_source && !first[u.name]->in_source)
        return error_at(u.tok, "the target uses ?" + u.name + ", which the source never binds");
    for (size_t i = 0; i < r->params.size(); ++i) {
      const auto& [name_tok, value_tok] = loc_.param_decl[i];
      auto it = first.find(r->params[i].name);
      if (it == first.end())
        return error_at(name_tok, "parameter ?" + r->params[i].name + " is never used");
      Expected<AttrValue> v = parse_attr_value(it->second->type, value_tok.text);
      if (!v)
        return error_at(value_tok, "parameter ?" + r->params[i].name + ": " + v.error().message);
      r->params[i].example = std::move(*v);
    }
    for (const auto& [n, u] : first) {
      const std::string& name = n;  // a lambda cannot capture a binding (clang < 16)
      bool declared = std::any_of(r->params.begin(), r->params.end(),
                                  [&](const RuleParam& p) { return p.name == name; });
      AttrValue d;
      if (!declared && (u->entry || !default_value(u->key, &d)))
        return error_at(u->tok,
                        "?" + n + " needs an example value: declare 'param ?" + n + " = VALUE'");
    }
    return {};
  }

  Status check_live(const RuleSide& s, const Locations::Side& loc, const char* which) {
    std::vector<char> live(s.nodes.size(), 0);
    for (const RuleRef& o : s.outputs)
      if (o.kind == RuleRef::Kind::kNode) live[o.index] = 1;
    for (int i = static_cast<int>(s.nodes.size()) - 1; i >= 0; --i) {
      if (!live[i])
        return error_at(loc.stmt[i], std::string("this ") + which +
                                         " statement reaches no output of the " + which);
      for (const RuleRef& a : s.nodes[i].args)
        if (a.kind == RuleRef::Kind::kNode) live[a.index] = 1;
    }
    return {};
  }

  // A side at the example types; a failure points at the statement, and type
  // annotations are compared with inference.
  Expected<Graph> instantiated(const Rule& r, RuleSideKind which) {
    Failure f;
    const Locations::Side& loc = which == RuleSideKind::kSource ? loc_.source : loc_.target;
    Expected<Graph> g = instantiate_side(r, which, {}, &f);
    if (!g) {
      std::string msg = g.error().message + " (at the example types)";
      if (f.what == Failure::What::kWhere) return error_at(loc_.where[f.index], msg);
      if (f.what == Failure::What::kNode) return error_at(loc.stmt[f.index], msg);
      return error_at(loc.output, msg);
    }
    const RuleSide& side = which == RuleSideKind::kSource ? r.source : r.target;
    for (size_t i = 0; i < side.nodes.size(); ++i) {
      const Node& n = g->node(static_cast<int>(r.inputs.size() + i));
      for (size_t k = 0; k < loc.annotations[i].size(); ++k) {
        const auto& [tok, t] = loc.annotations[i][k];
        if (tok.kind != Tok::kEnd && n.outs[k] != t)
          return error_at(tok, "annotated " + to_string(t) + " but inferred " +
                                   to_string(n.outs[k]) + " at the example types");
      }
    }
    return g;
  }

  std::string_view text_;
  int parens_ = 0;  // open parentheses of the shape expression being read
  Locations loc_;
  Token status_tok_;  // the status keyword's value, for errors about it
  std::map<std::string, int> vars_;
};

}  // namespace

Expected<RuleSet> parse_rules(std::string_view text, std::string_view filename) {
  return Parser(text, filename).parse();
}

}  // namespace tso
