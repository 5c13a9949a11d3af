// ONNX import: reads the model envelope, orders the nodes, and walks them
// once, folding constant subgraphs, mapping the rest onto IR operators and
// keeping what the IR lacks as opaque nodes.
#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "frontend/batch_override.h"
#include "frontend/decomposed_layernorm.h"
#include "frontend/dynamic_part.h"
#include "frontend/erf_gelu.h"
#include "frontend/host_tensor_util.h"
#include "frontend/import_ops.h"
#include "frontend/inline_functions.h"
#include "frontend/onnx.h"
#include "frontend/onnx_util.h"
#include "frontend/opaque.h"
#include "frontend/random_weights.h"
#include "frontend/upgrade_opset.h"
#include "onnx/common/version.h"
#include "runtime/common/memory.h"

namespace tso {

namespace {

using namespace onnx_frontend;

// Frees a tensor's stored values (their capacity too) once the graph has
// copied them; its name, type and dims stay.
void release_data(onnx::TensorProto* t) {
  std::string().swap(*t->mutable_raw_data());
  google::protobuf::RepeatedField<float>().Swap(t->mutable_float_data());
  google::protobuf::RepeatedField<double>().Swap(t->mutable_double_data());
  google::protobuf::RepeatedField<int32_t>().Swap(t->mutable_int32_data());
  google::protobuf::RepeatedField<int64_t>().Swap(t->mutable_int64_data());
}

// What an ONNX value name stands for during import.
struct Value {
  TensorType type;
  std::optional<TensorRef> ref;            // set once it is an IR tensor
  std::shared_ptr<const WeightData> data;  // constants: the stored bytes ...
  std::shared_ptr<const HostTensor> host;  // ... or the folded value
  bool is_const() const { return data || host; }
};

class Importer {
 public:
  Importer(const std::string& name, const std::string& base_dir, const ImportOptions& options)
      : file_(name), base_dir_(base_dir), options_(options) {}

  // Consumes the initializers' stored data: each one's bytes are freed once
  // the graph holds them, so a model is held about once, not twice.
  Expected<ImportedModel> run(onnx::ModelProto& model);

  // The NodeContext's view of the importer.
  Value* value(const std::string& name) {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  Expected<TensorRef> materialize(const std::string& name);
  const HostTensor* host_of(Value* v);
  bool used(const std::string& name) const { return uses_.count(name) > 0; }
  GraphBuilder& builder() { return builder_; }
  int64_t opset() const { return result_.info.opset; }
  TensorRef new_weight(const std::string& name, const HostTensor& value);

 private:
  Error error(const std::string& message) const { return Error{file_ + ": " + message}; }
  // `message` of node `n`, which names it once: as the ONNX node, where the
  // graph builder's error names the node it builds for it by the same name.
  Error node_error(const onnx::NodeProto& n, const std::string& message) const {
    const std::string built = "node '" + n.name() + "' (";
    if (!n.name().empty() && message.starts_with(built)) {
      const size_t end = message.find("): ");
      if (end != std::string::npos) return error(describe(n) + message.substr(end + 1));
    }
    return error(describe(n) + ": " + message);
  }
  Status upgrade_old_opset(onnx::ModelProto& model);
  Status read_envelope(const onnx::ModelProto& model);
  Status add_inputs(const onnx::GraphProto& g);
  Expected<Shape> input_shape(const onnx::ValueInfoProto& in, size_t input_count);
  Expected<std::optional<HostTensor>> reshape_shape_for_batch(const onnx::NodeProto& n);
  Status add_initializers(onnx::GraphProto* g);
  Expected<std::vector<int>> order_nodes(const onnx::GraphProto& g);
  Status import_node(const onnx::NodeProto& n);
  bool erf_gelu_holds(const ErfGeluChain& c);
  Status import_erf_gelu(const onnx::GraphProto& g, const ErfGeluChain& c);
  int64_t reduced_suffix(const onnx::NodeProto& mean, int rank);
  bool scalar_is(const std::string& name, int rank, double expected, bool at_least);
  bool layernorm_param_holds(const std::string& name, const TensorType& x, int64_t axis);
  Status import_layernorm(const onnx::GraphProto& g, const LayerNormChain& c);
  Status add_constant_node(const onnx::NodeProto& n);
  Expected<bool> try_fold(const onnx::NodeProto& n);
  Status add_opaque(const onnx::NodeProto& n, const std::string& reason);
  Status add_outputs(const onnx::GraphProto& g);
  Status finish_dynamic_part(const onnx::GraphProto& g);

  std::string file_, base_dir_;
  const ImportOptions& options_;
  const onnx::ModelProto* model_ = nullptr;
  GraphBuilder builder_;
  ImportedModel result_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, int> uses_;              // readers of each name
  std::unordered_map<std::string, WeightUse> weight_use_;  // first reader of each initializer
  std::map<std::string, TensorType> declared_;             // static value_info and output types
  std::unordered_set<std::string> weight_names_;
  std::optional<BatchChange> batch_;                    // set when ImportOptions::batch changes it
  std::unordered_map<int, ErfGeluChain> erf_gelus_;     // by the index of the chain's last node
  std::unordered_map<int, LayerNormChain> layernorms_;  // likewise
  std::unordered_set<int> deferred_;                    // the chains' inner nodes
  DynamicPartBuilder part_;                             // nodes kept as ONNX (dynamic_part.h)
  int64_t random_weight_bytes_ = 0;                     // made so far, in all
};

class ImporterContext : public NodeContext {
 public:
  ImporterContext(Importer& imp, const onnx::NodeProto& n) : imp_(imp), n_(n) {}
  // Input k reads as `value` for this node only (a Reshape's shape at a new
  // batch; the shape tensor may feed other nodes too).
  void replace_constant(int k, HostTensor value) { replaced_.emplace(k, std::move(value)); }
  const onnx::NodeProto& node() const override { return n_; }
  int64_t opset() const override { return imp_.opset(); }
  GraphBuilder& builder() override { return imp_.builder(); }
  bool has_input(int k) const override { return k < n_.input_size() && !n_.input(k).empty(); }
  Expected<TensorRef> tensor(int k) override {
    if (!has_input(k)) return Error{"input " + std::to_string(k) + " is missing"};
    if (auto it = replaced_.find(k); it != replaced_.end())
      return new_weight("input" + std::to_string(k), it->second);
    return imp_.materialize(n_.input(k));
  }
  const HostTensor* constant(int k) const override {
    if (auto it = replaced_.find(k); it != replaced_.end()) return &it->second;
    return has_input(k) ? imp_.host_of(imp_.value(n_.input(k))) : nullptr;
  }
  TensorType type(int k) const override {
    Value* v = has_input(k) ? imp_.value(n_.input(k)) : nullptr;
    return v ? v->type : TensorType{};
  }
  bool output_used(int k) const override {
    return k < n_.output_size() && !n_.output(k).empty() && imp_.used(n_.output(k));
  }
  TensorRef new_weight(const std::string& suffix, const HostTensor& value) override {
    std::string base = (n_.name().empty() ? n_.output(0) : n_.name()) + "." + suffix;
    return imp_.new_weight(base, value);
  }

 private:
  Importer& imp_;
  const onnx::NodeProto& n_;
  std::map<int, HostTensor> replaced_;
};

// A model older than kMinOnnxOpset is rewritten at it by ONNX's version
// converter (upgrade_opset.h); a warning says so.
Status Importer::upgrade_old_opset(onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset < kOldestOnnxOpset || opset >= kMinOnnxOpset) return Status::Ok();
  if (Status s = upgrade_opset(model, opset, kMinOnnxOpset); !s.ok())
    return error(s.error().message);
  result_.info.upgraded_from = opset;
  result_.warnings.push_back("opset " + std::to_string(opset) + " upgraded to " +
                             std::to_string(kMinOnnxOpset) + " by ONNX's version converter");
  return Status::Ok();
}

Status Importer::read_envelope(const onnx::ModelProto& model) {
  if (!model.has_graph() || model.ir_version() <= 0)
    return error("not an ONNX model (no IR version or no graph)");
  OnnxModelInfo& info = result_.info;
  info.ir_version = model.ir_version();
  info.producer_name = model.producer_name();
  info.producer_version = model.producer_version();
  info.opset_imports.clear();
  info.opset = -1;
  for (const auto& o : model.opset_import()) {
    std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    info.opset_imports.emplace_back(domain, o.version());
    if (domain.empty()) info.opset = o.version();
  }
  if (info.opset < 0) return error("imports no default (ai.onnx) operator set");
  if (info.opset < kMinOnnxOpset || info.opset > kMaxOnnxOpset)
    return error("opset " + std::to_string(info.opset) + " is not supported (supported: " +
                 std::to_string(kOldestOnnxOpset) + " to " +
                 std::to_string(kMaxOnnxOpset) + ", below " + std::to_string(kMinOnnxOpset) +
                 " upgraded by ONNX's version converter)");
  return Status::Ok();
}

namespace {

std::string join_dims(const std::vector<std::string>& dims) {
  std::string s;
  for (size_t k = 0; k < dims.size(); ++k) s += (k ? "," : "") + dims[k];
  return s;
}

}  // namespace

// The shape of graph input `in`: the one ImportOptions::input_shapes gives
// for it (by name, or unnamed for a model's only input), which must agree
// with every static dimension the model declares, else the declared one,
// which must then be static.
Expected<Shape> Importer::input_shape(const onnx::ValueInfoProto& in, size_t input_count) {
  const auto& tt = in.type().tensor_type();
  if (tt.has_shape() && tt.shape().dim_size() > Shape::kMaxRank)
    return error("graph input '" + in.name() + "' has rank above " +
                 std::to_string(Shape::kMaxRank));
  auto given = options_.input_shapes.find(in.name());
  if (given == options_.input_shapes.end() && input_count == 1)
    given = options_.input_shapes.find("");
  if (given != options_.input_shapes.end()) {
    const Shape& shape = given->second;
    for (int64_t d : shape.dims())
      if (d < 1)
        return error("the shape given for graph input '" + in.name() + "' has extent " +
                     std::to_string(d) + "; every extent must be at least 1");
    if (!tt.has_shape()) return shape;
    if (tt.shape().dim_size() != shape.rank())
      return error("graph input '" + in.name() + "' has rank " +
                   std::to_string(tt.shape().dim_size()) + ", the shape given for it rank " +
                   std::to_string(shape.rank()));
    for (int d = 0; d < shape.rank(); ++d) {
      const auto& dim = tt.shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() >= 0 && dim.dim_value() != shape[d])
        return error("dimension " + std::to_string(d) + " of graph input '" + in.name() + "' is " +
                     std::to_string(dim.dim_value()) +
                     " in the model; the shape given for it says " + std::to_string(shape[d]) +
                     " (only dynamic dimensions can be set; the batch option, --batch or "
                     "batch=, changes the batch)");
    }
    return shape;
  }
  if (!tt.has_shape()) return error("graph input '" + in.name() + "' has no shape");
  Shape shape;
  std::vector<std::string> example, dynamic;
  for (int d = 0; d < tt.shape().dim_size(); ++d) {
    const auto& dim = tt.shape().dim(d);
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(dim.dim_value());
      example.push_back(std::to_string(dim.dim_value()));
    } else {
      example.push_back("1");
      dynamic.push_back(std::to_string(d) +
                        (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : std::string()));
    }
  }
  if (dynamic.empty()) return shape;
  std::string which = dynamic[0];
  for (size_t k = 1; k < dynamic.size(); ++k) which += ", " + dynamic[k];
  return error("graph input '" + in.name() + "' has dynamic dimension" +
               (dynamic.size() > 1 ? "s " : " ") + which +
               ", which cannot be resolved; give the input a static shape, e.g. "
               "--input-shape " +
               in.name() + ":" + join_dims(example));
}

Status Importer::add_inputs(const onnx::GraphProto& g) {
  std::unordered_set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g.input())
    if (!inits.count(in.name())) inputs.push_back(&in);  // IR < 4 lists initializers as inputs too
  std::string names;
  for (const onnx::ValueInfoProto* in : inputs) names += (names.empty() ? "" : ", ") + in->name();
  for (const auto& given : options_.input_shapes) {
    const std::string& name = given.first;
    if (name.empty() && inputs.size() != 1)
      return error("a shape without an input name needs a model with one input; this one has " +
                   std::to_string(inputs.size()) + " (" + names + "): write NAME:D0,D1,...");
    if (!name.empty() && std::none_of(inputs.begin(), inputs.end(),
                                      [&](const auto* in) { return in->name() == name; }))
      return error("a shape is given for '" + name +
                   "', which is not a graph input (inputs: " + names + ")");
  }
  std::unordered_set<std::string> seen;
  std::vector<DType> dtypes;
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const onnx::ValueInfoProto* input : inputs) {
    const onnx::ValueInfoProto& in = *input;
    if (in.name().empty()) return error("a graph input has no name");
    if (!seen.insert(in.name()).second)
      return error("graph input '" + in.name() + "' is declared twice");
    const auto& tt = in.type().tensor_type();
    if (!in.type().has_tensor_type())
      return error("graph input '" + in.name() + "' is not a tensor");
    std::optional<DType> dt = dtype_from_onnx(tt.elem_type());
    if (!dt)
      return error("graph input '" + in.name() + "' has element type " +
                   onnx_type_name(tt.elem_type()) + ", which the IR does not support");
    Expected<Shape> shape = input_shape(in, inputs.size());
    if (!shape) return shape.error();
    dtypes.push_back(*dt);
    shapes.emplace_back(in.name(), *shape);
  }
  if (options_.batch) {
    Expected<std::optional<BatchChange>> change = change_batch(&shapes, *options_.batch);
    if (!change) return error(change.error().message);
    batch_ = *change;
  }
  for (size_t k = 0; k < shapes.size(); ++k) {
    const TensorType type{dtypes[k], shapes[k].second};
    if (Status s = check_size(type, "graph input '" + shapes[k].first + "'"); !s.ok())
      return error(s.error().message);
    Value& v = values_[shapes[k].first];
    v.type = type;
    v.ref = builder_.input(shapes[k].first, v.type);
  }
  return Status::Ok();
}

// At a new batch, the shape a Reshape of a computed tensor reads instead of
// its constant one; nullopt when it keeps its own.
Expected<std::optional<HostTensor>> Importer::reshape_shape_for_batch(const onnx::NodeProto& n) {
  if (!batch_ || n.input_size() < 2) return std::optional<HostTensor>();
  Value* data = value(n.input(0));
  const HostTensor* shape = host_of(value(n.input(1)));
  if (!data || data->is_const() || !shape) return std::optional<HostTensor>();
  Expected<std::optional<std::vector<int64_t>>> r = reshape_for_batch(
      *batch_, data->type.shape, host_to_ints(*shape), attr_int(n, "allowzero", 0) != 0);
  if (!r) return node_error(n, r.error().message);
  if (!*r) return std::optional<HostTensor>();
  ++result_.stats.rewritten_reshapes;
  return std::optional(host_ints(**r));
}

Status Importer::add_initializers(onnx::GraphProto* g) {
  for (onnx::TensorProto& t : *g->mutable_initializer()) {
    if (t.name().empty()) return error("an initializer has no name");
    if (values_.count(t.name())) return error("initializer '" + t.name() + "' is defined twice");
    Expected<LoadedTensor> lt = load_tensor(t, base_dir_);
    if (!lt) return error("initializer '" + t.name() + "' " + lt.error().message);
    release_data(&t);
    Value v;
    v.type = lt->type;
    v.data = lt->data;
    if (!lt->missing_file.empty()) {
      if (!options_.random_weights_seed)
        return error("initializer '" + t.name() + "': external data file " + lt->missing_file +
                     " is missing (use --random-weights SEED to fill graph-only models)");
      if (uses_.count(t.name())) {
        if (__builtin_add_overflow(random_weight_bytes_, byte_size(lt->type),
                                   &random_weight_bytes_))
          random_weight_bytes_ = std::numeric_limits<int64_t>::max();
        const int64_t limit =
            options_.max_random_weight_bytes.value_or(rt::available_memory_bytes());
        if (Status s = rt::check_fits(
                random_weight_bytes_, limit, "random weights",
                options_.max_random_weight_bytes ? "the import's budget" : "the machine");
            !s.ok())
          return error("initializer '" + t.name() + "' (" + to_string(lt->type) +
                       "): " + s.error().message);
        v.data =
            random_weight(*options_.random_weights_seed, t.name(), lt->type, weight_use_[t.name()]);
      }
      if (std::find(result_.warnings.begin(), result_.warnings.end(),
                    "random weights: " + lt->missing_file) == result_.warnings.end())
        result_.warnings.push_back("random weights: " + lt->missing_file);
    }
    if (!uses_.count(t.name()))
      result_.warnings.push_back("initializer '" + t.name() + "' is not used");
    values_[t.name()] = std::move(v);
  }
  return Status::Ok();
}

namespace {

// The nodes' dependencies, from reader to producer. A depth-first search
// from the nodes in file order finishes each node after its producers: the
// finishing order is a topological order, the file's own when the file is
// sorted. A back edge closes a cycle through the node it reaches.
using Dependencies = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

struct OrderVisitor : boost::default_dfs_visitor {
  std::vector<int>* order;
  int* on_cycle;
  void back_edge(Dependencies::edge_descriptor e, const Dependencies& d) const {
    if (*on_cycle < 0) *on_cycle = static_cast<int>(boost::target(e, d));
  }
  void finish_vertex(Dependencies::vertex_descriptor v, const Dependencies&) const {
    order->push_back(static_cast<int>(v));
  }
};

}  // namespace

// Orders the nodes producers first (see Dependencies); names every problem
// it meets.
Expected<std::vector<int>> Importer::order_nodes(const onnx::GraphProto& g) {
  const int n = g.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const std::string& o : g.node(i).output()) {
      if (o.empty()) continue;
      if (values_.count(o) || !producer.emplace(o, i).second)
        return node_error(g.node(i), "output '" + o + "' is defined more than once");
    }
  std::unordered_set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  Dependencies deps(n);
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& node = g.node(i);
    // A subgraph's reads of this graph's values are the node's inputs too.
    std::vector<std::string> reads(node.input().begin(), node.input().end());
    const size_t explicit_inputs = reads.size();
    for (std::string& name : outer_reads(node)) reads.push_back(std::move(name));
    for (size_t k = 0; k < reads.size(); ++k) {
      const std::string& in = reads[k];
      if (in.empty()) continue;
      ++uses_[in];
      if (auto it = producer.find(in); it != producer.end()) {
        boost::add_edge(i, it->second, deps);
      } else if (!values_.count(in) && !inits.count(in)) {
        return node_error(node, (k < explicit_inputs ? "input '" : "a subgraph reads '") + in +
                                    "', which is not a graph input, an initializer or any "
                                    "node's output");
      }
    }
    for (int k = 0; k < node.input_size(); ++k)
      if (!node.input(k).empty() && !weight_use_.count(node.input(k)))
        weight_use_[node.input(k)] = {node.op_type(), k,
                                      node.op_type() == "Gemm" && attr_int(node, "transB", 0)};
  }
  for (const auto& o : g.output()) ++uses_[o.name()];
  std::vector<int> order;
  int on_cycle = -1;
  boost::depth_first_search(deps, boost::visitor(OrderVisitor{{}, &order, &on_cycle}));
  if (on_cycle >= 0) return node_error(g.node(on_cycle), "is part of a cycle");
  return order;
}

Expected<TensorRef> Importer::materialize(const std::string& name) {
  Value* v = value(name);
  if (!v) return Error{"input '" + name + "' is not defined"};
  if (v->ref) return *v->ref;
  TSO_CHECK(v->is_const(), "value without tensor or data: " + name);
  std::shared_ptr<const WeightData> data = v->data;
  if (!data) data = std::make_shared<WeightData>(weight_from_host(*v->host));
  v->ref = builder_.weight(name, v->type, data);
  weight_names_.insert(name);
  if (v->host) ++result_.stats.materialized_constants;
  return *v->ref;
}

const HostTensor* Importer::host_of(Value* v) {
  if (!v || !v->is_const()) return nullptr;
  if (!v->host) {
    if (v->type.shape.numel() > options_.max_fold_elements) return nullptr;
    v->host = std::make_shared<HostTensor>(host_from_weight(*v->data));
  }
  return v->host.get();
}

TensorRef Importer::new_weight(const std::string& base, const HostTensor& value) {
  std::string name = base;
  for (int k = 1; values_.count(name) || weight_names_.count(name); ++k)
    name = base + "." + std::to_string(k);
  Value v;
  v.type = {value.dtype, value.shape};
  v.host = std::make_shared<HostTensor>(value);
  values_[name] = v;
  Expected<TensorRef> r = materialize(name);
  TSO_CHECK(r.ok());
  return *r;
}

Status Importer::add_constant_node(const onnx::NodeProto& n) {
  if (n.output_size() != 1 || n.attribute_size() != 1)
    return node_error(n, "needs exactly one output and one value attribute");
  const onnx::AttributeProto& a = n.attribute(0);
  HostTensor h;
  if (a.name() == "value") {
    Expected<LoadedTensor> t = load_tensor(a.t(), base_dir_);
    if (!t) return node_error(n, "value " + t.error().message);
    if (!t->data) return node_error(n, "value refers to a missing file " + t->missing_file);
    h = host_from_weight(*t->data);
  } else if (a.name() == "value_float" || a.name() == "value_int") {
    h = a.name() == "value_int" ? host_ints({a.i()}) : HostTensor::zeros(DType::kF32, Shape{1});
    if (a.name() == "value_float") h.f[0] = a.f();
    h.shape = Shape{};
  } else if (a.name() == "value_floats" || a.name() == "value_ints") {
    if (a.name() == "value_ints") {
      h = host_ints(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    } else {
      h = HostTensor::zeros(DType::kF32, Shape{a.floats_size()});
      for (int k = 0; k < a.floats_size(); ++k) h.f[k] = a.floats(k);
    }
  } else {
    return node_error(n, "attribute '" + a.name() + "' is not supported");
  }
  Value v;
  v.type = {h.dtype, h.shape};
  v.host = std::make_shared<HostTensor>(std::move(h));
  values_[n.output(0)] = std::move(v);
  ++result_.stats.folded_nodes;
  return Status::Ok();
}

// Folds the node when every input is a constant (Shape and Size need only
// static input shapes). Returns whether it folded.
Expected<bool> Importer::try_fold(const onnx::NodeProto& n) {
  if (!can_fold(n.op_type())) return false;
  const bool shape_only = n.op_type() == "Shape" || n.op_type() == "Size";
  std::vector<HostTensor> shape_holders;
  std::vector<const HostTensor*> inputs;
  shape_holders.reserve(n.input_size());
  for (const std::string& in : n.input()) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    Value* v = value(in);
    const HostTensor* h = host_of(v);
    if (!h && shape_only) {  // the shape is all these operators read
      shape_holders.push_back(HostTensor{v->type.dtype, v->type.shape, {}, {}});
      h = &shape_holders.back();
    }
    if (!h) return false;
    inputs.push_back(h);
  }
  auto r = fold_node(n, opset(), inputs, options_.max_fold_elements);
  if (!r) return node_error(n, r.error().message);
  if (!*r) return false;
  std::vector<HostTensor>& outs = **r;
  for (int k = 0; k < n.output_size() && k < static_cast<int>(outs.size()); ++k) {
    if (n.output(k).empty()) continue;
    Value v;
    v.type = {outs[k].dtype, outs[k].shape};
    v.host = std::make_shared<HostTensor>(std::move(outs[k]));
    values_[n.output(k)] = std::move(v);
  }
  ++result_.stats.folded_nodes;
  return true;
}

// An opaque node whose output shapes ONNX's shape inference leaves unknown
// joins the dynamic part instead.
Status Importer::add_opaque(const onnx::NodeProto& n, const std::string& reason) {
  std::vector<std::optional<OpaqueInput>> ins;
  for (const std::string& in : n.input())
    ins.push_back(in.empty() ? std::nullopt
                             : std::optional(OpaqueInput{value(in)->type, host_of(value(in))}));
  auto types = infer_opaque_outputs(n, ins, model_->opset_import(), declared_);
  if (!types) return node_error(n, types.error().message);
  if (!types->dynamic.empty()) {
    part_.add(n);
    return Status::Ok();
  }
  std::vector<TensorRef> args;
  for (const std::string& in : n.input()) {
    if (in.empty()) continue;
    Expected<TensorRef> r = materialize(in);
    if (!r) return node_error(n, r.error().message);
    args.push_back(*r);
  }
  std::vector<TensorType> outs;
  for (const auto& t : types->types)
    if (t) outs.push_back(*t);
  Attrs a;
  a.set(AttrKey::op_type, n.op_type())
      .set(AttrKey::domain, n.domain() == "ai.onnx" ? "" : n.domain());
  a.set(AttrKey::payload, opaque_payload(n));
  std::string name = n.name().empty() && n.output_size() > 0 ? n.output(0) : n.name();
  auto refs = builder_.add_opaque(args, a, outs, name);
  if (!refs) return node_error(n, refs.error().message);
  for (int k = 0, j = 0; k < n.output_size(); ++k) {
    if (n.output(k).empty()) continue;
    Value v;
    v.type = outs[j];
    v.ref = (*refs)[j++];
    values_[n.output(k)] = v;
  }
  result_.opaque_nodes.push_back({name, n.op_type(), n.domain(), reason});
  return Status::Ok();
}

Status Importer::import_node(const onnx::NodeProto& n) {
  // Every ONNX operator has an output; mappings name what they add after it.
  if (n.output_size() == 0) return node_error(n, "has no outputs");
  if (part_.takes(n)) {
    part_.add(n);
    return Status::Ok();
  }
  const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
  if (default_domain && n.op_type() == "Constant") return add_constant_node(n);
  if (default_domain && (n.op_type() == "Identity" || n.op_type() == "Dropout") &&
      n.input_size() >= 1 && n.output_size() >= 1 &&
      (n.output_size() < 2 || n.output(1).empty() || !used(n.output(1)))) {
    values_[n.output(0)] = *value(n.input(0));
    ++result_.stats.removed_identities;
    return Status::Ok();
  }
  if (default_domain) {
    Expected<bool> folded = try_fold(n);
    if (!folded) return folded.error();
    if (*folded) return Status::Ok();
  }
  ImporterContext ctx(*this, n);
  if (default_domain && n.op_type() == "Reshape") {
    Expected<std::optional<HostTensor>> shape = reshape_shape_for_batch(n);
    if (!shape) return shape.error();
    if (*shape) ctx.replace_constant(1, std::move(**shape));
  }
  Expected<Mapped> m = map_node(ctx);
  if (!m) return node_error(n, m.error().message);
  std::string reason = m->opaque_reason;
  for (int k = static_cast<int>(m->outputs.size()); reason.empty() && k < n.output_size(); ++k)
    if (ctx.output_used(k)) reason = "output " + std::to_string(k) + " has no IR counterpart";
  if (!reason.empty()) return add_opaque(n, reason);
  for (size_t k = 0; k < m->outputs.size() && k < size_t(n.output_size()); ++k) {
    if (n.output(static_cast<int>(k)).empty()) continue;
    Value v;
    v.ref = m->outputs[k];
    v.type = builder_.type(m->outputs[k]);
    values_[n.output(static_cast<int>(k))] = v;
  }
  return Status::Ok();
}

// Whether the chain's constants are the scalars GELU needs (f32, within
// 1e-6 of each, of no higher rank than x, so that they broadcast to nothing
// more) and x is computed f32 data.
bool Importer::erf_gelu_holds(const ErfGeluChain& c) {
  Value* x = value(c.x);
  if (!x || x->is_const() || x->type.dtype != DType::kF32) return false;
  for (const ChainConstant& k : c.constants) {
    const HostTensor* t = host_of(value(k.name));
    if (!t || t->dtype != DType::kF32 || t->numel() != 1 ||
        t->shape.rank() > x->type.shape.rank() || std::abs(t->get_f(0) - k.value) > 1e-6 * k.value)
      return false;
  }
  return true;
}

// At the chain's last node, every node it reads is imported: the chain is
// one gelu when its constants hold, else its nodes are imported one by one,
// in chain order (a topological one).
Status Importer::import_erf_gelu(const onnx::GraphProto& g, const ErfGeluChain& c) {
  const onnx::NodeProto& last = g.node(c.last);
  if (!erf_gelu_holds(c)) {
    for (int k : c.inner) TSO_RETURN_IF_ERROR(import_node(g.node(k)));
    return import_node(last);
  }
  Expected<TensorRef> x = materialize(c.x);
  if (!x) return node_error(last, x.error().message);
  Expected<TensorRef> y = builder_.add1(Op::Gelu, {*x}, {}, last.name());
  if (!y) return node_error(last, y.error().message);
  Value v;
  v.ref = *y;
  v.type = builder_.type(*y);
  values_[last.output(0)] = v;
  ++result_.stats.erf_gelus;
  return Status::Ok();
}

// The first axis of the suffix of x's axes a ReduceMean of rank-`rank` x
// averages over, keeping them; -1 for any other reduction (axes that are no
// suffix, keepdims 0, axes not constant).
int64_t Importer::reduced_suffix(const onnx::NodeProto& mean, int rank) {
  if (attr_int(mean, "keepdims", 1) != 1) return -1;
  std::optional<std::vector<int64_t>> axes = attr_ints(mean, "axes");
  if (mean.input_size() == 2) {
    const HostTensor* t = host_of(value(mean.input(1)));
    if (!t || t->is_float() || t->shape.rank() > 1) return -1;
    axes = host_to_ints(*t);
  }
  if (!axes || axes->empty()) return -1;
  for (int64_t& a : *axes) {
    if (a < -rank || a >= rank) return -1;
    if (a < 0) a += rank;
  }
  std::sort(axes->begin(), axes->end());
  for (size_t k = 0; k < axes->size(); ++k)
    if ((*axes)[k] != rank - static_cast<int64_t>(axes->size() - k)) return -1;
  return axes->front();
}

// Whether `name` is an f32 constant of one element and of rank <= `rank`
// equal to `expected`, or, when `at_least`, finite and no less than it.
bool Importer::scalar_is(const std::string& name, int rank, double expected, bool at_least) {
  const HostTensor* t = host_of(value(name));
  if (!t || t->dtype != DType::kF32 || t->numel() != 1 || t->shape.rank() > rank) return false;
  const double v = t->get_f(0);
  return at_least ? std::isfinite(v) && v >= expected : v == expected;
}

// Whether a layernorm's scale or bias may be `name`: an f32 tensor that
// broadcasts to the normalized shape of x (so that it broadcasts x to
// nothing more).
bool Importer::layernorm_param_holds(const std::string& name, const TensorType& x, int64_t axis) {
  Value* p = value(name);
  const Shape trailing(x.shape.dims().subspan(axis));
  return p && p->type.dtype == DType::kF32 && broadcast_shapes(p->type.shape, trailing) == trailing;
}

// At the chain's last node, every node it reads is imported. The chain is
// one layernorm when x is computed f32 data, both means reduce the same
// suffix of its axes, the exponent is 2 and epsilon a scalar >= 0; the
// affine mul and add join it when their operands broadcast to the
// normalized shape, and are imported after it otherwise. Any other chain is
// imported node by node, in chain order (a topological one).
Status Importer::import_layernorm(const onnx::GraphProto& g, const LayerNormChain& c) {
  const onnx::NodeProto& last = g.node(c.last);
  Value* x = value(c.x);
  const int rank = x ? x->type.shape.rank() : 0;
  const int64_t axis = x ? reduced_suffix(g.node(c.mean), rank) : -1;
  const bool holds = x && !x->is_const() && x->type.dtype == DType::kF32 && axis >= 0 &&
                     reduced_suffix(g.node(c.variance), rank) == axis &&
                     (c.exponent.empty() || scalar_is(c.exponent, rank, 2.0, false)) &&
                     scalar_is(c.epsilon, rank, 0.0, true);
  std::vector<int> nodes = c.inner;
  nodes.push_back(c.last);
  if (!holds) {
    for (int k : nodes) TSO_RETURN_IF_ERROR(import_node(g.node(k)));
    return Status::Ok();
  }
  const TensorType xt = x->type;
  const Shape trailing(xt.shape.dims().subspan(axis));
  // The nodes up to the Div are the normalization; what follows of the
  // chain joins it while its operand holds.
  constexpr size_t kNormalization = 7;  // ReduceMean through Div
  size_t joined = kNormalization;
  std::string params[2];
  for (const std::string* p : {&c.scale, &c.bias}) {
    if (joined == nodes.size() || !layernorm_param_holds(*p, xt, axis)) break;
    params[joined - kNormalization] = *p;
    ++joined;
  }
  std::vector<TensorRef> args;
  Expected<TensorRef> in = materialize(c.x);
  if (!in) return node_error(last, in.error().message);
  args.push_back(*in);
  for (int k : {0, 1}) {
    if (params[k].empty()) {
      HostTensor unit = HostTensor::zeros(DType::kF32, trailing);
      if (k == 0) std::fill(unit.f.begin(), unit.f.end(), 1.0);
      args.push_back(new_weight(k == 0 ? "unit_scale" : "zero_shift", unit));
      continue;
    }
    Expected<TensorRef> t = materialize(params[k]);
    if (!t) return node_error(last, t.error().message);
    args.push_back(*t);
  }
  Attrs a;
  a.set(AttrKey::axis, axis);
  a.set(AttrKey::epsilon, host_of(value(c.epsilon))->get_f(0));
  const onnx::NodeProto& end = g.node(nodes[joined - 1]);
  Expected<TensorRef> y = builder_.add1(Op::LayerNorm, args, std::move(a), end.name());
  if (!y) return node_error(end, y.error().message);
  Value v;
  v.ref = *y;
  v.type = builder_.type(*y);
  values_[end.output(0)] = v;
  ++result_.stats.layernorms;
  for (size_t k = joined; k < nodes.size(); ++k) TSO_RETURN_IF_ERROR(import_node(g.node(nodes[k])));
  return Status::Ok();
}

Status Importer::add_outputs(const onnx::GraphProto& g) {
  if (g.output_size() == 0) return error("the graph has no outputs");
  for (const auto& o : g.output()) {
    if (part_.computes(o.name())) continue;
    if (!value(o.name()))
      return error("graph output '" + o.name() + "' is not produced by any node");
    Expected<TensorRef> r = materialize(o.name());
    if (!r) return error(r.error().message);
    builder_.output(o.name(), *r);
  }
  return Status::Ok();
}

// What the dynamic part reads of the graph: constants become its own
// initializers, computed tensors graph outputs (graph inputs it reads by
// name). A warning says how much of the model it holds.
Status Importer::finish_dynamic_part(const onnx::GraphProto& g) {
  if (part_.empty()) return Status::Ok();
  std::unordered_set<std::string> outputs;
  int graph_outputs = 0;
  for (const auto& o : g.output()) {
    outputs.insert(o.name());
    graph_outputs += !part_.computes(o.name());
  }
  for (const std::string& name : part_.reads()) {
    Value* v = value(name);
    TSO_CHECK(v, "the dynamic part reads an undefined value: " + name);
    if (v->is_const()) {
      part_.add_constant(name, v->data ? *v->data : weight_from_host(*v->host));
    } else if (builder_.node(v->ref->node).op != Op::Input) {
      part_.add_computed(name);
      if (!outputs.count(name)) {
        builder_.output(name, *v->ref);
        ++graph_outputs;
      }
    }
  }
  DynamicPart d = part_.finish(g);
  // The part is written back as it is: its shapes (a Reshape's, a
  // ConstantOfShape's) would keep the model's batch.
  if (batch_)
    return error("a batch of " + std::to_string(batch_->to) +
                 " (--batch, batch=) changes the batch of a model whose " + d.first +
                 " and the nodes after it are kept as ONNX, unchanged at batch " +
                 std::to_string(batch_->from) + "; export the model at the batch wanted");
  if (graph_outputs == 0)
    return error("every output depends on " + d.first +
                 ", whose output shapes are known only when the model runs: nothing is left "
                 "for tso's graph");
  result_.warnings.push_back(std::to_string(d.nodes) + " node" + (d.nodes == 1 ? "" : "s") +
                             " from " + d.first +
                             " on are kept as ONNX after the graph (control flow, or shapes "
                             "known only when the model runs); tso's runtimes do not run them");
  result_.info.dynamic = std::move(d);
  return Status::Ok();
}

Expected<ImportedModel> Importer::run(onnx::ModelProto& model) {
  model_ = &model;
  Expected<InlinedFunctions> inlined = inline_local_functions(model);
  if (!inlined) return error(inlined.error().message);
  TSO_RETURN_IF_ERROR(upgrade_old_opset(model));
  TSO_RETURN_IF_ERROR(read_envelope(model));
  result_.stats.inlined_calls = inlined->calls;
  result_.info.functions = std::move(inlined->kept);
  const onnx::GraphProto& g = model.graph();
  builder_ = GraphBuilder(g.name().empty() ? "main" : g.name());
  // value_info and the graph outputs' declared types.
  std::vector<const onnx::ValueInfoProto*> infos;
  for (const auto& v : g.value_info()) infos.push_back(&v);
  for (const auto& v : g.output()) infos.push_back(&v);
  for (const onnx::ValueInfoProto* v : infos)
    if (auto t = v->type(); t.has_tensor_type()) {
      std::optional<DType> dt = dtype_from_onnx(t.tensor_type().elem_type());
      Shape s;
      bool ok = dt && t.tensor_type().has_shape() &&
                t.tensor_type().shape().dim_size() <= Shape::kMaxRank;
      for (int d = 0; ok && d < t.tensor_type().shape().dim_size(); ++d) {
        ok = t.tensor_type().shape().dim(d).has_dim_value() &&
             t.tensor_type().shape().dim(d).dim_value() >= 0;
        if (ok) s.push_back(t.tensor_type().shape().dim(d).dim_value());
      }
      // A declared type is a hint: one whose size overflows is ignored (a
      // node that needs it reports its own error).
      if (ok && checked_byte_size({*dt, s})) declared_[v->name()] = {*dt, s};
    }
  TSO_RETURN_IF_ERROR(add_inputs(g));
  if (batch_) declared_.clear();  // value_info describes the model's own batch
  Expected<std::vector<int>> order = order_nodes(g);
  if (!order) return order.error();
  TSO_RETURN_IF_ERROR(add_initializers(model.mutable_graph()));
  result_.stats.onnx_nodes = g.node_size();
  for (ErfGeluChain& c : find_erf_gelu_chains(g, uses_)) {
    deferred_.insert(c.inner.begin(), c.inner.end());
    erf_gelus_.emplace(c.last, std::move(c));
  }
  for (LayerNormChain& c : find_layernorm_chains(g, uses_)) {
    deferred_.insert(c.inner.begin(), c.inner.end());
    layernorms_.emplace(c.last, std::move(c));
  }
  for (int i : *order) {
    if (deferred_.count(i)) continue;
    if (auto gelu = erf_gelus_.find(i); gelu != erf_gelus_.end())
      TSO_RETURN_IF_ERROR(import_erf_gelu(g, gelu->second));
    else if (auto norm = layernorms_.find(i); norm != layernorms_.end())
      TSO_RETURN_IF_ERROR(import_layernorm(g, norm->second));
    else
      TSO_RETURN_IF_ERROR(import_node(g.node(i)));
  }
  TSO_RETURN_IF_ERROR(add_outputs(g));
  TSO_RETURN_IF_ERROR(finish_dynamic_part(g));
  Expected<Graph> graph = builder_.finish();
  if (!graph) return error(graph.error().message);
  result_.graph = std::move(*graph);
  return std::move(result_);
}

Error not_protobuf(const std::string& display_name) {
  return Error{display_name + ": not a valid ONNX protobuf (truncated or corrupt file?)"};
}

}  // namespace

Expected<ImportedModel> import_onnx_bytes(std::string_view bytes, const std::string& display_name,
                                          const std::string& base_dir,
                                          const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return not_protobuf(display_name);
  Importer importer(display_name, base_dir, options);
  return importer.run(model);
}

std::string onnx_library_versions() {
  const int pb = GOOGLE_PROTOBUF_VERSION;  // e.g. 3021012
  return std::string("ONNX ") + onnx::LAST_RELEASE_VERSION + ", protobuf " +
         std::to_string(pb / 1000000) + "." + std::to_string(pb / 1000 % 1000) + "." +
         std::to_string(pb % 1000);
}

Expected<ImportedModel> import_onnx(const std::string& path, const ImportOptions& options) {
  // Parsed from the stream, not from a copy of the file in memory: with the
  // initializers freed as they are read, the model is held about once.
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file"};
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  onnx::ModelProto model;
  if (ec || size > static_cast<uintmax_t>(INT32_MAX) || !model.ParseFromIstream(&in))
    return not_protobuf(path);
  std::string base = std::filesystem::path(path).parent_path().string();
  Importer importer(path, base.empty() ? "." : base, options);
  return importer.run(model);
}

}  // namespace tso
