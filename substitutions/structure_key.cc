// structure_key: a rule written with its variables and parameters renamed
// in order of first use, so that two rules that are the same rewrite share it.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "substitutions/rules.h"

namespace tso {
namespace {

// Writes a rule with its variables and parameters numbered in order of first
// use (source, then target, then conditions).
class KeyWriter {
 public:
  explicit KeyWriter(const Rule& r) : rule_(r), var_ids_(r.inputs.size(), -1) {}

  std::string key() {
    side(rule_.source);
    out_ += '|';
    side(rule_.target);
    for (const Condition& c : rule_.where) {
      out_ += "|w" + std::to_string(static_cast<int>(c.kind));
      expr(c.lhs);
      expr(c.rhs);
    }
    if (!rule_.ranks.vars.empty()) {
      out_ += "|r" + std::to_string(rule_.ranks.lo) + '.' + std::to_string(rule_.ranks.hi);
      std::vector<int> ids;  // in any order the clause lists them
      for (const std::string& name : rule_.ranks.vars)
        for (size_t v = 0; v < rule_.inputs.size(); ++v)
          if (rule_.inputs[v].name == name) ids.push_back(var_id(int(v)));
      std::sort(ids.begin(), ids.end());
      for (int id : ids) out_ += 'v' + std::to_string(id);
    }
    return out_;
  }

 private:
  void side(const RuleSide& s) {
    for (const RuleNode& n : s.nodes) {
      out_ += std::to_string(static_cast<int>(n.op)) + '(';
      for (const RuleRef& a : n.args) ref(a);
      for (const PatternAttr& a : n.attrs) attr(a);
      out_ += ')' + std::to_string(n.outputs) + ';';
    }
    out_ += 'o';
    for (const RuleRef& a : s.outputs) ref(a);
  }

  void ref(const RuleRef& a) {
    if (a.kind == RuleRef::Kind::kVar) {
      out_ += 'v' + std::to_string(var_id(a.index)) + ',';
    } else {
      out_ += 'n' + std::to_string(a.index) + '.' + std::to_string(a.output) + ',';
    }
  }

  void attr(const PatternAttr& a) {
    out_ += ' ' + std::to_string(static_cast<int>(a.key)) + '=';
    switch (a.form) {
      case PatternAttr::Form::kValue:
        out_ += print_attr_value(a.value);
        break;
      case PatternAttr::Form::kParam:
        out_ += '?' + std::to_string(param_id(a.param));
        break;
      case PatternAttr::Form::kParamInverse:
        out_ += "~?" + std::to_string(param_id(a.param));
        break;
      default:
        out_ += 'e' + std::to_string(static_cast<int>(a.form));
        for (const ShapeExpr& e : a.exprs) expr(e);
    }
  }

  void expr(const ShapeExpr& e) {
    out_ += '{' + std::to_string(static_cast<int>(e.kind)) + ':' + std::to_string(e.value);
    if (e.kind == ShapeExpr::Kind::kDim)
      for (size_t v = 0; v < rule_.inputs.size(); ++v)
        if (rule_.inputs[v].name == e.var)
          out_ += ":v" + std::to_string(var_id(static_cast<int>(v)));
    if (e.kind == ShapeExpr::Kind::kParam) out_ += ":?" + std::to_string(param_id(e.var));
    for (const ShapeExpr& a : e.args) expr(a);
    out_ += '}';
  }

  int var_id(int v) {
    if (var_ids_[v] < 0) var_ids_[v] = next_var_++;
    return var_ids_[v];
  }
  int param_id(const std::string& name) {
    auto [it, fresh] = param_ids_.try_emplace(name, static_cast<int>(param_ids_.size()));
    return it->second;
  }

  const Rule& rule_;
  std::vector<int> var_ids_;
  int next_var_ = 0;
  std::unordered_map<std::string, int> param_ids_;
  std::string out_;
};

}  // namespace

std::string structure_key(const Rule& rule) { return KeyWriter(rule).key(); }

}  // namespace tso
