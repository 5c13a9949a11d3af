// The Python module's native half, `tso._tso`: the driver's functions
// (driver/) on models given as a path or as serialized ONNX bytes, with
// numpy arrays for tensors. tso/__init__.py is the API users call; it turns
// onnx.ModelProto into bytes and back and the JSON report into a dict.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/execute.h"
#include "driver/model_source.h"
#include "driver/model_summary.h"
#include "driver/optimize_model.h"
#include "optimizer/report.h"
#include "python/convert.h"

namespace py = pybind11;

namespace tso::python {
namespace {

template <class T>
T value_or_raise(Expected<T> e) {
  if (!e) throw TsoError{e.error().message};
  return std::move(*e);
}

// Where the model comes from: `data` (serialized ONNX) named `path` in
// messages, or the file `path`; how to import it.
struct Source {
  std::string path;
  std::optional<py::bytes> data;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::optional<int64_t> batch;
  std::optional<uint64_t> random_weights;

  driver::ModelSource model_source() const {
    driver::ModelSource s;
    s.path = path;
    if (data) s.bytes = std::string(*data);
    s.import.batch = batch;
    s.import.random_weights_seed = random_weights;
    for (const auto& [name, dims] : input_shapes) {
      if (dims.size() > static_cast<size_t>(Shape::kMaxRank))
        throw TsoError{"input_shapes['" + name + "']: rank above " +
                       std::to_string(Shape::kMaxRank)};
      for (int64_t d : dims)
        if (d < 1)
          throw TsoError{"input_shapes['" + name + "']: extent " + std::to_string(d) +
                         " is below 1"};
      s.import.input_shapes.emplace(name, Shape(std::span<const int64_t>(dims)));
    }
    return s;
  }
};

driver::LoadedModel load(const Source& source) {
  return value_or_raise(driver::load_model(source.model_source()));
}

std::string onnx_bytes(const Graph& g, const driver::LoadedModel& m) {
  return value_or_raise(export_onnx_bytes(g, m.is_onnx ? m.onnx.info : OnnxModelInfo{}));
}

// Writes a line to sys.stderr (the GIL is held throughout).
void to_stderr(const std::string& line) {
  py::module_::import("sys").attr("stderr").attr("write")(line + "\n");
}

// (model bytes, report JSON, warnings): the optimized model, or the input
// where it measured faster: the caller's own bytes where they are that model
// as imported (no random weights filled in, the shapes as stored).
py::tuple optimize(const Source& source, driver::OptimizeModelOptions options, bool quiet) {
  std::vector<std::string> warnings;
  options.warning = [&](const std::string& line) { warnings.push_back(line); };
  if (!quiet) options.info = options.progress = to_stderr;
  driver::OptimizedModel m = value_or_raise(driver::optimize_model(source.model_source(), options));
  const bool as_given =
      source.data && !source.random_weights && !source.batch && source.input_shapes.empty();
  py::bytes model = m.report.speed.kept_input && as_given
                        ? *source.data
                        : py::bytes(onnx_bytes(m.written(), m.input));
  return py::make_tuple(model, opt::report_json(m.result, m.report), warnings);
}

// `inputs`: a dict by input name, or a sequence in input order.
std::vector<WeightData> input_values(const Graph& g, const py::object& inputs) {
  const std::vector<int> nodes = driver::graph_inputs(g);
  std::vector<WeightData> values;
  if (py::isinstance<py::dict>(inputs)) {
    py::dict d = inputs.cast<py::dict>();
    for (int i : nodes) {
      const std::string& name = g.node(i).name;
      if (!d.contains(name)) throw TsoError{"no value given for input '" + name + "'"};
      values.push_back(to_weight(d[name.c_str()], "input '" + name + "'"));
    }
    for (const auto& [key, value] : d) {
      std::string name = py::str(key);
      bool known = false;
      for (int i : nodes) known |= g.node(i).name == name;
      if (!known) throw TsoError{"'" + name + "' is not an input of the graph"};
    }
    return values;
  }
  py::sequence seq = inputs.cast<py::sequence>();
  for (size_t k = 0; k < seq.size(); ++k)
    values.push_back(to_weight(seq[k], k < nodes.size() ? "input '" + g.node(nodes[k]).name + "'"
                                                        : "input " + std::to_string(k)));
  return values;
}

py::list run(const Source& source, const py::object& inputs, const std::string& device) {
  driver::LoadedModel m = load(source);
  if (Status s = check_static(m.onnx.info, source.path); !s.ok()) throw TsoError{s.error().message};
  std::vector<WeightData> values = input_values(m.graph, inputs);
  std::vector<WeightData> outs =
      value_or_raise(driver::execute(m.graph, std::move(values), device));
  py::list result;
  for (const WeightData& w : outs) result.append(to_numpy(w));
  return result;
}

py::dict inspect(const Source& source) {
  driver::LoadedModel m = load(source);
  const Graph& g = m.graph;
  const driver::ModelSummary s = driver::summarize(g);
  py::dict d;
  d["name"] = g.name();
  py::list inputs, weights, operators, outputs, opaque;
  for (const driver::SourceRow& r : s.sources) {
    if (r.op == Op::Input) inputs.append(describe_tensor(r.name, r.type));
    if (r.op != Op::Weight) continue;
    py::dict w = describe_tensor(r.name, r.type);
    w["bytes"] = r.bytes;
    weights.append(w);
  }
  for (const driver::OperatorRow& r : s.operators) {
    py::dict o;
    o["index"] = r.index;
    o["node"] = r.node;
    o["op"] = r.op;
    o["attributes"] = r.attributes;
    std::vector<std::string> in, out;
    for (const TensorType& t : r.inputs) in.push_back(to_string(t));
    for (const TensorType& t : r.outputs) out.push_back(to_string(t));
    o["inputs"] = in;
    o["outputs"] = out;
    o["flops"] = r.flops;
    o["param_bytes"] = r.param_bytes;
    operators.append(o);
  }
  for (const driver::OutputRow& r : s.outputs) {
    py::dict o = describe_tensor(r.name, r.type);
    o["from"] = r.from;
    outputs.append(o);
  }
  for (const OpaqueNodeInfo& n : m.onnx.opaque_nodes) {
    py::dict o;
    o["name"] = n.name;
    o["op_type"] = n.op_type;
    o["domain"] = n.domain;
    o["reason"] = n.reason;
    opaque.append(o);
  }
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["weights"] = weights;
  d["operators"] = operators;
  int num_operators = 0;
  for (const auto& [op, count] : s.op_counts) num_operators += count;
  d["num_operators"] = num_operators;
  d["op_counts"] = s.op_counts;
  d["flops"] = s.flops;
  d["param_bytes"] = s.param_bytes;
  d["opaque_nodes"] = opaque;
  d["dynamic_part"] = py::none();
  if (const std::optional<DynamicPart>& part = m.onnx.info.dynamic) {
    py::dict p;
    p["nodes"] = part->nodes;
    p["first"] = part->first;
    p["op_counts"] = part->op_counts;
    p["reads"] = part->reads;
    d["dynamic_part"] = p;
  }
  d["warnings"] = m.onnx.warnings;
  return d;
}

Source make_source(std::string path, std::optional<py::bytes> data,
                   std::map<std::string, std::vector<int64_t>> input_shapes,
                   std::optional<int64_t> batch, std::optional<uint64_t> random_weights) {
  return {std::move(path), std::move(data), std::move(input_shapes), batch, random_weights};
}

}  // namespace
}  // namespace tso::python

PYBIND11_MODULE(_tso, m) {
  using namespace tso;
  using namespace tso::python;
  m.doc() = "tso's native half; use the `tso` package (python/README.md)";
  static py::exception<TsoError> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TsoError& e) {
      error(e.message.c_str());
    }
  });

  py::class_<Source>(m, "Source")
      .def(py::init(&make_source), py::arg("path"), py::arg("data"), py::arg("input_shapes"),
           py::arg("batch"), py::arg("random_weights"));

  m.def(
      "optimize",
      [](const Source& source, std::vector<std::string> rules, bool allow_unverified,
         std::string device, std::string cost, std::string cost_cache, std::string missing_costs,
         double alpha, double min_gain, int64_t budget, double time_limit, int64_t stall,
         double lookahead, int64_t lookahead_budget, int check_runs, bool verify_speed,
         bool quiet) {
        driver::OptimizeModelOptions o;
        o.rules = std::move(rules);
        o.allow_unverified = allow_unverified;
        o.target = {std::move(device), std::move(cost), std::move(cost_cache)};
        o.missing_costs = std::move(missing_costs);
        o.search.alpha = alpha;
        o.search.min_gain = min_gain;
        o.search.max_expansions = budget;
        o.search.time_limit_s = time_limit;
        o.search.stall_expansions = stall;
        o.search.lookahead.bound = lookahead;
        o.search.lookahead.budget = lookahead_budget;
        o.check.runs = check_runs;
        o.verify_speed = verify_speed;
        return optimize(source, std::move(o), quiet);
      },
      py::arg("source"), py::arg("rules"), py::arg("allow_unverified"), py::arg("device"),
      py::arg("cost"), py::arg("cost_cache"), py::arg("missing_costs"), py::arg("alpha"),
      py::arg("min_gain"), py::arg("budget"), py::arg("time_limit"), py::arg("stall"),
      py::arg("lookahead"), py::arg("lookahead_budget"), py::arg("check_runs"),
      py::arg("verify_speed"), py::arg("quiet"));
  m.def("run", &run, py::arg("source"), py::arg("inputs"), py::arg("device"));
  m.def("inspect", &inspect, py::arg("source"));
}
