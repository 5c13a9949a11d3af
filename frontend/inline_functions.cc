// Inlining of model-local functions: each call node becomes a copy of the
// function's body with its formal inputs and outputs bound to the call's
// values, its own values renamed apart and its attribute references resolved.
#include "frontend/inline_functions.h"

#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "frontend/dynamic_part.h"
#include "frontend/onnx_util.h"

namespace tso::onnx_frontend {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxNodes = 1'000'000;

// Field numbers of IR 9 and 10 that the ONNX library tso builds with (1.12)
// does not know; protobuf keeps them as unknown fields.
constexpr int kNodeOverload = 8;
constexpr int kFunctionAttributeProto = 11;
constexpr int kFunctionOverload = 13;

std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

std::vector<std::string> unknown_bytes(const google::protobuf::Message& m, int number) {
  std::vector<std::string> found;
  const google::protobuf::UnknownFieldSet& fields = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() == number &&
        fields.field(i).type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      found.push_back(fields.field(i).length_delimited());
  return found;
}

std::string overload_of(const google::protobuf::Message& m, int number) {
  std::vector<std::string> v = unknown_bytes(m, number);
  return v.empty() ? std::string() : v.back();  // the last value of a singular field wins
}

std::string key_of(const std::string& domain, const std::string& name,
                   const std::string& overload) {
  return canonical_domain(domain) + '\0' + name + '\0' + overload;
}

struct Function {
  const onnx::FunctionProto* proto = nullptr;
  std::string label;  // "domain.name" in messages
  std::map<std::string, onnx::AttributeProto> defaults;
  enum class State { kUnknown, kVisiting, kInlinable, kKept } state = State::kUnknown;
  size_t expanded_nodes = 0;  // once inlined, nested calls too; 0 until counted
  bool opsets_merged = false;
};

class Inliner {
 public:
  explicit Inliner(onnx::ModelProto& model) : model_(model) {}

  Expected<InlinedFunctions> run() {
    TSO_RETURN_IF_ERROR(index_functions());
    onnx::GraphProto* g = model_.mutable_graph();
    for (const auto& in : g->input()) names_.insert(in.name());
    for (const auto& t : g->initializer()) names_.insert(t.name());
    for (const auto& t : g->sparse_initializer()) names_.insert(t.values().name());
    for (const auto& n : g->node())
      for (const auto& o : n.output()) names_.insert(o);
    std::vector<const Function*> stack;
    for (onnx::NodeProto& n : *g->mutable_node()) TSO_RETURN_IF_ERROR(emit(std::move(n), stack));
    g->mutable_node()->Clear();
    g->mutable_node()->Reserve(static_cast<int>(out_.size()));
    for (onnx::NodeProto& n : out_) *g->add_node() = std::move(n);
    for (const auto& [domain, version] : added_opsets_) {
      onnx::OperatorSetIdProto* o = model_.add_opset_import();
      o->set_domain(domain);
      o->set_version(version);
    }
    if (calls_kept(*g))
      for (const auto& f : model_.functions()) result_.kept.push_back(f.SerializeAsString());
    return std::move(result_);
  }

 private:
  Status index_functions() {
    for (const auto& o : model_.opset_import())
      model_opsets_[canonical_domain(o.domain())] = o.version();
    for (const onnx::FunctionProto& fp : model_.functions()) {
      Function f;
      f.proto = &fp;
      f.label = (fp.domain().empty() ? "" : fp.domain() + ".") + fp.name();
      for (const std::string& bytes : unknown_bytes(fp, kFunctionAttributeProto)) {
        onnx::AttributeProto a;
        if (!a.ParseFromString(bytes) || a.name().empty())
          return Error{"function '" + f.label + "' has a malformed attribute default"};
        f.defaults[a.name()] = std::move(a);
      }
      const std::string key = key_of(fp.domain(), fp.name(), overload_of(fp, kFunctionOverload));
      if (!functions_.emplace(key, std::move(f)).second)
        return Error{"the model defines function '" + functions_.at(key).label + "' twice"};
    }
    return Status::Ok();
  }

  Function* callee(const onnx::NodeProto& n) {
    if (functions_.empty()) return nullptr;
    auto it = functions_.find(key_of(n.domain(), n.op_type(), overload_of(n, kNodeOverload)));
    return it == functions_.end() ? nullptr : &it->second;
  }

  // A function is inlined unless its body, or a function it calls, holds a
  // subgraph: names in a subgraph may refer to the body's values, and tso
  // runs no If or Loop anyway.
  bool inlinable(Function& f, int depth = 0) {
    // A cycle, or nesting past kMaxDepth, is reported when it is expanded.
    if (f.state == Function::State::kInlinable || f.state == Function::State::kVisiting ||
        depth > kMaxDepth)
      return true;
    if (f.state == Function::State::kKept) return false;
    f.state = Function::State::kVisiting;
    bool ok = true;
    for (const auto& n : f.proto->node()) {
      Function* g = callee(n);
      if (has_subgraph(n) || (g && !inlinable(*g, depth + 1))) ok = false;
    }
    f.state = ok ? Function::State::kInlinable : Function::State::kKept;
    return ok;
  }

  // The nodes a call of `f` becomes, counted before any is made and capped
  // past kMaxNodes, so that a doubling chain of calls fails at once.
  size_t expanded_nodes(Function& f, int depth) {
    if (f.expanded_nodes || depth > kMaxDepth) return std::max<size_t>(f.expanded_nodes, 1);
    size_t total = static_cast<size_t>(f.proto->output_size());  // pass-through Identities
    for (const auto& n : f.proto->node()) {
      Function* g = callee(n);
      total += g && inlinable(*g, depth + 1) ? expanded_nodes(*g, depth + 1) : 1;
      total = std::min(total, kMaxNodes + 1);
    }
    f.expanded_nodes = total;
    return total;
  }

  bool calls_kept(const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      if (callee(n)) return true;
      for (const auto& a : n.attribute()) {
        if (a.has_g() && calls_kept(a.g())) return true;
        for (const auto& sub : a.graphs())
          if (calls_kept(sub)) return true;
      }
    }
    return false;
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; !names_.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  Status merge_opsets(Function& f) {
    if (f.opsets_merged) return Status::Ok();
    f.opsets_merged = true;
    for (const auto& o : f.proto->opset_import()) {
      const std::string domain = canonical_domain(o.domain());
      auto it = model_opsets_.find(domain);
      if (it == model_opsets_.end()) {
        model_opsets_[domain] = o.version();
        added_opsets_.emplace_back(domain, o.version());
      } else if (it->second != o.version()) {
        return Error{"function '" + f.label + "' imports version " + std::to_string(o.version()) +
                     " of operator set '" + (domain.empty() ? "ai.onnx" : domain) +
                     "', the model version " + std::to_string(it->second) +
                     "; tso inlines functions at the model's versions only"};
      }
    }
    return Status::Ok();
  }

  Status emit(onnx::NodeProto n, std::vector<const Function*>& stack) {
    if (out_.size() >= kMaxNodes)
      return Error{"inlining the model's functions makes more than " + std::to_string(kMaxNodes) +
                   " nodes"};
    Function* f = callee(n);
    if (!f || !inlinable(*f)) {
      out_.push_back(std::move(n));
      return Status::Ok();
    }
    if (std::find(stack.begin(), stack.end(), f) != stack.end()) {
      std::string path;
      for (auto it = std::find(stack.begin(), stack.end(), f); it != stack.end(); ++it)
        path += (*it)->label + " -> ";
      return Error{"function '" + f->label + "' calls itself (" + path + f->label + ")"};
    }
    if (static_cast<int>(stack.size()) >= kMaxDepth)
      return Error{describe(n) + ": functions nest deeper than " + std::to_string(kMaxDepth) +
                   " calls"};
    if (stack.empty() && out_.size() + expanded_nodes(*f, 0) > kMaxNodes)
      return Error{"inlining the model's functions makes more than " + std::to_string(kMaxNodes) +
                   " nodes"};
    TSO_RETURN_IF_ERROR(merge_opsets(*f));
    stack.push_back(f);
    Status s = expand(n, *f, stack);
    stack.pop_back();
    return s;
  }

  Status expand(const onnx::NodeProto& call, const Function& f,
                std::vector<const Function*>& stack) {
    const onnx::FunctionProto& fp = *f.proto;
    auto fail = [&](const std::string& why) {
      return Error{describe(call) + ": function '" + f.label + "' " + why};
    };
    if (call.input_size() > fp.input_size())
      return fail("takes " + std::to_string(fp.input_size()) + " inputs, the call passes " +
                  std::to_string(call.input_size()));
    if (call.output_size() > fp.output_size())
      return fail("has " + std::to_string(fp.output_size()) + " outputs, the call reads " +
                  std::to_string(call.output_size()));
    ++result_.calls;
    const std::string base = !call.name().empty() ? call.name()
                             : call.output_size() ? call.output(0)
                                                  : f.label;
    std::unordered_map<std::string, std::string> rename;  // body name -> graph name
    for (int i = 0; i < fp.input_size(); ++i)
      if (!rename.emplace(fp.input(i), i < call.input_size() ? call.input(i) : "").second)
        return fail("names input '" + fp.input(i) + "' twice");
    std::unordered_map<std::string, std::string> formal_out;  // output -> the call's name
    for (int j = 0; j < fp.output_size(); ++j)
      if (!formal_out.emplace(fp.output(j), j < call.output_size() ? call.output(j) : "").second)
        return fail("names output '" + fp.output(j) + "' twice");
    for (const auto& n : fp.node())
      for (const std::string& o : n.output()) {
        if (o.empty()) continue;
        if (rename.count(o)) return fail("assigns '" + o + "' twice");
        auto it = formal_out.find(o);
        rename[o] =
            it != formal_out.end() && !it->second.empty() ? it->second : fresh(base + "/" + o);
      }
    for (int j = 0; j < fp.output_size(); ++j)
      if (!rename.count(fp.output(j)))
        return fail("never computes its output '" + fp.output(j) + "'");
    for (int k = 0; k < fp.node_size(); ++k) {
      onnx::NodeProto n = fp.node(k);
      for (std::string& in : *n.mutable_input()) {
        if (in.empty()) continue;
        auto it = rename.find(in);
        if (it == rename.end())
          return fail("reads '" + in + "', which it neither takes nor computes");
        in = it->second;
      }
      for (std::string& o : *n.mutable_output())
        if (!o.empty()) o = rename.at(o);
      n.set_name(base + "/" +
                 (fp.node(k).name().empty() ? fp.node(k).op_type() + "_" + std::to_string(k)
                                            : fp.node(k).name()));
      resolve_attributes(call, f, &n);
      TSO_RETURN_IF_ERROR(emit(std::move(n), stack));
    }
    // An output that is one of the function's inputs passes it through.
    for (int j = 0; j < call.output_size(); ++j) {
      const std::string& source = rename.at(fp.output(j));
      if (call.output(j).empty() || source == call.output(j)) continue;
      onnx::NodeProto id;
      id.set_op_type("Identity");
      id.set_name(base + "/" + fp.output(j));
      id.add_input(source);
      id.add_output(call.output(j));
      TSO_RETURN_IF_ERROR(emit(std::move(id), stack));
    }
    return Status::Ok();
  }

  // An attribute that refers to one of the function's (ref_attr_name) takes
  // the call's attribute of that name, else the function's default, else is
  // absent, as ONNX defines.
  static void resolve_attributes(const onnx::NodeProto& call, const Function& f,
                                 onnx::NodeProto* n) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> resolved;
    for (const onnx::AttributeProto& a : n->attribute()) {
      if (!a.has_ref_attr_name()) {
        *resolved.Add() = a;
        continue;
      }
      const onnx::AttributeProto* source = find_attr(call, a.ref_attr_name());
      if (!source)
        if (auto it = f.defaults.find(a.ref_attr_name()); it != f.defaults.end())
          source = &it->second;
      if (!source) continue;
      onnx::AttributeProto* r = resolved.Add();
      *r = *source;
      r->set_name(a.name());
      r->clear_ref_attr_name();
    }
    n->mutable_attribute()->Swap(&resolved);
  }

  onnx::ModelProto& model_;
  std::unordered_map<std::string, Function> functions_;
  std::unordered_map<std::string, int64_t> model_opsets_;
  std::vector<std::pair<std::string, int64_t>> added_opsets_;
  std::unordered_set<std::string> names_;
  std::vector<onnx::NodeProto> out_;
  InlinedFunctions result_;
};

}  // namespace

Expected<InlinedFunctions> inline_local_functions(onnx::ModelProto& model) {
  if (model.functions_size() == 0) return InlinedFunctions{};
  return Inliner(model).run();
}

}  // namespace tso::onnx_frontend
