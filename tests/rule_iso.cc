#include "tests/rule_iso.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tests/labelled_graph.h"

namespace tso::testing {
namespace {

// A shape expression with its variables left out ("dim(#,0)"), and the
// variables in order of appearance.
std::string expr_template(const ShapeExpr& e, std::vector<std::string>* vars) {
  switch (e.kind) {
    case ShapeExpr::Kind::kLit:
      return std::to_string(e.value);
    case ShapeExpr::Kind::kDim:
      vars->push_back(e.var);
      return "dim(#," + std::to_string(e.value) + ")";
    case ShapeExpr::Kind::kParam:  // named: renaming such parameters is not an isomorphism here
      return "?" + e.var;
    default:
      return "(" + std::to_string(static_cast<int>(e.kind)) + " " + expr_template(e.args[0], vars) +
             " " + expr_template(e.args[1], vars) + ")";
  }
}

// A rule as a labelled graph: variables and parameters are vertices without
// their names, so that isomorphisms are the renamings.
class RuleEncoder {
 public:
  enum class Mode { kStructureKey, kGenerator };
  RuleEncoder(const Rule& rule, Mode mode, const RenamingClasses* classes, bool swap_sides,
              Labels& labels, std::vector<AttrValue>& values)
      : rule_(rule),
        mode_(mode),
        classes_(classes),
        swap_(swap_sides),
        labels_(labels),
        values_(values) {}

  LabelledGraph encode() {
    side(0, rule_.source);
    side(1, rule_.target);
    // A rank clause's variables, in any order: a lifted copy is another rule
    // than its original (structure_key counts the clause too).
    if (!rule_.ranks.vars.empty()) {
      Vertex clause = add_vertex(g_, labels_.text("rank " + std::to_string(rule_.ranks.lo) + ".." +
                                                  std::to_string(rule_.ranks.hi)));
      for (size_t v = 0; v < rule_.inputs.size(); ++v)
        if (std::find(rule_.ranks.vars.begin(), rule_.ranks.vars.end(), rule_.inputs[v].name) !=
            rule_.ranks.vars.end())
          add_labelled_edge(g_, variable(static_cast<int>(v)), clause, labels_.text("ranked"));
    }
    if (mode_ == Mode::kStructureKey) {
      for (size_t j = 0; j < rule_.where.size(); ++j) {
        const Condition& c = rule_.where[j];
        std::vector<std::string> vars;
        std::string text = "where " + std::to_string(j) + " " +
                           std::to_string(static_cast<int>(c.kind)) + " " +
                           expr_template(c.lhs, &vars) + " " + expr_template(c.rhs, &vars);
        uses(add_vertex(g_, labels_.text(text)), vars);
      }
      for (int s = 0; s < 2; ++s) {
        const RuleSide& rs = s == 0 ? rule_.source : rule_.target;
        for (size_t k = 0; k < rs.outputs.size(); ++k)
          add_labelled_edge(
              g_, producer(s, rs.outputs[k]),
              add_vertex(g_, labels_.text("output " + std::to_string(s) + " " + std::to_string(k))),
              labels_.text("result " + std::to_string(rs.outputs[k].output)));
      }
    } else {
      // Output pairs, unordered: source output k and target output k meet.
      for (size_t k = 0; k < rule_.source.outputs.size(); ++k) {
        Vertex pair = add_vertex(g_, labels_.text("pair"));
        for (int s = 0; s < 2; ++s) {
          const RuleRef& r = (s == 0 ? rule_.source : rule_.target).outputs[k];
          add_labelled_edge(g_, producer(s, r), pair,
                            labels_.text("side " + std::to_string(side_label(s)) + " result " +
                                         std::to_string(r.output)));
        }
      }
    }
    return std::move(g_);
  }

 private:
  int side_label(int s) const { return swap_ ? 1 - s : s; }

  bool commutes(Op op) const {
    return mode_ == Mode::kGenerator &&
           (op == Op::Mul || (op == Op::Add && classes_->add_commutes));
  }

  void side(int s, const RuleSide& rs) {
    for (size_t i = 0; i < rs.nodes.size(); ++i) {
      const RuleNode& n = rs.nodes[i];
      std::string text = "node " + std::to_string(side_label(s)) + " " +
                         (mode_ == Mode::kStructureKey ? std::to_string(i) + " " : "") +
                         std::string(op_name(n.op)) + " outputs " + std::to_string(n.outputs);
      for (const PatternAttr& a : n.attrs) {
        text += " " + std::string(attr_info(a.key).name) + "=";
        if (a.form == PatternAttr::Form::kValue)
          text += "value " + std::to_string(Labels::value(values_, a.value));
        else if (a.form == PatternAttr::Form::kParam)
          text += "?";
        else
          text += "expr " + std::to_string(static_cast<int>(a.form));
      }
      Vertex v = add_vertex(g_, labels_.text(text));
      nodes_[s].push_back(v);
      for (const PatternAttr& a : n.attrs) attr(v, a);
      for (size_t k = 0; k < n.args.size(); ++k)
        add_labelled_edge(
            g_, producer(s, n.args[k]), v,
            labels_.text("arg " + (commutes(n.op) ? std::string() : std::to_string(k)) + "." +
                         std::to_string(n.args[k].output)));
    }
  }

  // A parameter's use, and in structure_key's mode an expression's uses of
  // variables, as edges into the node.
  void attr(Vertex node, const PatternAttr& a) {
    const std::string key(attr_info(a.key).name);
    if (a.form == PatternAttr::Form::kParam) {
      add_labelled_edge(g_, param(a.param), node, labels_.text("param of " + key));
    } else if (a.form != PatternAttr::Form::kValue && mode_ == Mode::kStructureKey) {
      std::vector<std::string> vars;
      std::string text = "expr of " + key;
      for (const ShapeExpr& e : a.exprs) text += " " + expr_template(e, &vars);
      Vertex v = add_vertex(g_, labels_.text(text));
      boost::add_edge(v, node, g_);
      uses(v, vars);
    }
  }

  void uses(Vertex user, const std::vector<std::string>& vars) {
    for (size_t j = 0; j < vars.size(); ++j)
      for (size_t v = 0; v < rule_.inputs.size(); ++v)
        if (rule_.inputs[v].name == vars[j])
          add_labelled_edge(g_, variable(static_cast<int>(v)), user,
                            labels_.text("use " + std::to_string(j)));
  }

  Vertex producer(int s, const RuleRef& r) {
    return r.kind == RuleRef::Kind::kVar ? variable(r.index) : nodes_[s][r.index];
  }

  // Created at first use, so unused declarations do not count.
  Vertex variable(int index) {
    auto [it, fresh] = vars_.try_emplace(index, 0);
    if (fresh) {
      std::string label = "variable";
      if (mode_ == Mode::kGenerator) {
        auto c = classes_->of_var.find(rule_.inputs[index].name);
        label += c == classes_->of_var.end() ? " " + rule_.inputs[index].name
                                             : " class " + std::to_string(c->second);
      }
      it->second = add_vertex(g_, labels_.text(label));
    }
    return it->second;
  }

  Vertex param(const std::string& name) {
    auto [it, fresh] = params_.try_emplace(name, 0);
    if (fresh) it->second = add_vertex(g_, labels_.text("parameter"));
    return it->second;
  }

  const Rule& rule_;
  Mode mode_;
  const RenamingClasses* classes_;
  bool swap_;
  Labels& labels_;
  std::vector<AttrValue>& values_;
  LabelledGraph g_;
  std::vector<Vertex> nodes_[2];
  std::map<int, Vertex> vars_;
  std::map<std::string, Vertex> params_;
};

}  // namespace

LabelledGraph RuleGraphs::encode(const Rule& r, bool swap_sides) {
  using M = RuleEncoder::Mode;
  return RuleEncoder(r, classes_ ? M::kGenerator : M::kStructureKey, classes_, swap_sides, labels_,
                     values_)
      .encode();
}

bool same_up_to_renaming(const Rule& a, const Rule& b) {
  RuleGraphs g;
  return vf2_isomorphic(g.encode(a), g.encode(b));
}

RenamingClasses renaming_classes(const gen::OpSet& set) {
  RenamingClasses c;
  for (const gen::GenVar& v : set.vars) c.of_var[v.name] = v.renaming_class;
  bool plain = false, bias = false;
  for (const gen::OpTemplate& t : set.ops)
    if (t.op == Op::Add) (t.bias ? bias : plain) = true;
  TSO_CHECK(!(plain && bias), "an op set with both adds: commutativity depends on the types");
  c.add_commutes = plain;
  return c;
}

bool same_generated_rule(const Rule& a, const Rule& b, const RenamingClasses& classes) {
  RuleGraphs g(classes);
  LabelledGraph ga = g.encode(a);
  return vf2_isomorphic(ga, g.encode(b)) || vf2_isomorphic(ga, g.encode(b, true));
}

}  // namespace tso::testing
