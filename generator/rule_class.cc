// The renaming class of a written rule as the least of its printings: each
// side printed as trees (a node as its operator, attributes and arguments,
// commutative arguments sorted), over every bijection of each group's used
// variables onto the group's positions and both orientations.
#include "generator/rule_class.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace tso::gen {
namespace {

class ClassPrinter {
 public:
  ClassPrinter(const OpSet& set, const Rule& rule) : rule_(rule) {
    for (const OpTemplate& t : set.ops)
      if (t.op == Op::Add && !t.bias) add_commutes_ = true;
    std::map<std::string, std::vector<int>> used;  // group -> used variables
    for (const RuleSide* s : {&rule.source, &rule.target}) {
      for (const RuleNode& n : s->nodes)
        for (const RuleRef& a : n.args)
          if (a.kind == RuleRef::Kind::kVar) note(a.index, &used);
      for (const RuleRef& a : s->outputs)
        if (a.kind == RuleRef::Kind::kVar) note(a.index, &used);
    }
    for (auto& [group, vars] : used) {
      std::sort(vars.begin(), vars.end());
      groups_.push_back({group, vars});
    }
    label_.assign(rule.inputs.size(), std::string());
  }

  std::string least() {
    best_.clear();
    each(0);
    return best_;
  }

 private:
  // A variable's group: the ranked ones, else those of its example rank.
  void note(int v, std::map<std::string, std::vector<int>>* used) const {
    const std::vector<std::string>& ranked = rule_.ranks.vars;
    std::string group = std::find(ranked.begin(), ranked.end(), rule_.inputs[v].name) != ranked.end()
                            ? "r"
                            : "t" + std::to_string(rule_.inputs[v].type.shape.rank());
    std::vector<int>& vars = (*used)[group];
    if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
  }

  // Every bijection of group g's used variables onto its positions.
  void each(size_t g) {
    if (g == groups_.size()) {
      for (bool swap : {false, true}) {
        std::string p = print(swap);
        if (best_.empty() || p < best_) best_ = std::move(p);
      }
      return;
    }
    const auto& [group, vars] = groups_[g];
    std::vector<int> order = vars;
    do {
      for (size_t i = 0; i < order.size(); ++i) label_[order[i]] = group + "." + std::to_string(i);
      each(g + 1);
    } while (std::next_permutation(order.begin(), order.end()));
  }

  std::string print(bool swap) const {
    const RuleSide& a = swap ? rule_.target : rule_.source;
    const RuleSide& b = swap ? rule_.source : rule_.target;
    std::vector<std::string> na = nodes(a), nb = nodes(b);
    std::vector<std::string> pairs;
    for (size_t k = 0; k < a.outputs.size(); ++k)
      pairs.push_back(ref(a.outputs[k], na) + "=" + ref(b.outputs[k], nb));
    std::sort(pairs.begin(), pairs.end());
    std::string out;
    for (const std::string& p : pairs) out += p + ";";
    for (std::vector<std::string>* side : {&na, &nb}) {
      std::sort(side->begin(), side->end());
      out += "|";
      for (const std::string& n : *side) out += n + ";";
    }
    if (!rule_.ranks.vars.empty()) {
      std::vector<std::string> ranked;
      for (const std::string& name : rule_.ranks.vars)
        for (size_t v = 0; v < rule_.inputs.size(); ++v)
          if (rule_.inputs[v].name == name) ranked.push_back(label_[v]);
      std::sort(ranked.begin(), ranked.end());
      out += "|rank " + std::to_string(rule_.ranks.lo) + ".." + std::to_string(rule_.ranks.hi);
      for (const std::string& l : ranked) out += " " + l;
    }
    return out;
  }

  // Each node of a side printed as the tree below it, in statement order.
  std::vector<std::string> nodes(const RuleSide& s) const {
    std::vector<std::string> text;
    for (const RuleNode& n : s.nodes) {
      std::vector<std::string> args;
      for (const RuleRef& a : n.args) args.push_back(ref(a, text));
      if (n.op == Op::Mul || (n.op == Op::Add && add_commutes_))
        std::sort(args.begin(), args.end());
      std::string t = std::string(op_name(n.op)) + "/" + std::to_string(n.outputs);
      for (const PatternAttr& a : n.attrs) t += " " + attr(a);
      t += "(";
      for (const std::string& a : args) t += a + ",";
      text.push_back(t + ")");
    }
    return text;
  }

  std::string ref(const RuleRef& r, const std::vector<std::string>& nodes) const {
    if (r.kind == RuleRef::Kind::kVar) return label_[r.index];
    return nodes[r.index] + "." + std::to_string(r.output);
  }

  static std::string attr(const PatternAttr& a) {
    std::string t = std::string(attr_info(a.key).name) + "=";
    switch (a.form) {
      case PatternAttr::Form::kValue:
        return t + print_attr_value(a.value);
      case PatternAttr::Form::kParam:
        return t + "?" + a.param;
      case PatternAttr::Form::kParamInverse:
        return t + "inv(?" + a.param + ")";
      default:
        return t + "expr" + std::to_string(static_cast<int>(a.form));
    }
  }

  const Rule& rule_;
  bool add_commutes_ = false;
  std::vector<std::pair<std::string, std::vector<int>>> groups_;
  std::vector<std::string> label_;  // per variable, under the bijection being printed
  std::string best_;
};

}  // namespace

std::string renaming_class_key(const OpSet& set, const Rule& rule) {
  return ClassPrinter(set, rule).least();
}

}  // namespace tso::gen
