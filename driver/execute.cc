#include "driver/execute.h"

#include <cstring>
#include <map>

#include "driver/cpu_costs.h"
#include "frontend/constant_folding.h"
#include "runtime/cpu/run_model.h"
#include "runtime/reference/executor.h"
#ifdef TSO_HAVE_CUDA_RUNTIME
#include "runtime/cuda/run_model.h"
#endif

namespace tso::driver {

std::vector<int> graph_inputs(const Graph& g) {
  std::vector<int> out;
  for (int i : g.input_nodes())
    if (g.node(i).op == Op::Input) out.push_back(i);
  return out;
}

Status check_inputs(const Graph& g, const std::vector<WeightData>& inputs) {
  const std::vector<int> nodes = graph_inputs(g);
  if (inputs.size() != nodes.size())
    return Error{"the graph has " + std::to_string(nodes.size()) + " input" +
                 (nodes.size() == 1 ? "" : "s") + ", given " + std::to_string(inputs.size())};
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = g.node(nodes[k]);
    const WeightData& w = inputs[k];
    if (!(w.type == n.outs[0]))
      return Error{"input '" + n.name + "' is " + to_string(n.outs[0]) + ", given " +
                   to_string(w.type)};
    if (static_cast<int64_t>(w.bytes.size()) != n.outs[0].shape.numel() * dtype_bytes(w.type.dtype))
      return Error{"input '" + n.name + "': " + std::to_string(w.bytes.size()) + " bytes for " +
                   to_string(w.type)};
  }
  return Status::Ok();
}

Expected<std::vector<WeightData>> run_reference(const Graph& g,
                                                const std::vector<WeightData>& inputs) {
  std::map<std::string, ref::Tensor<float>> feeds;
  size_t k = 0;
  for (int i : graph_inputs(g)) {
    const Node& n = g.node(i);
    Expected<ref::Tensor<float>> t = ref::weight_value<float>(inputs[k++]);
    if (!t) return Error{"input '" + n.name + "': " + t.error().message};
    feeds.emplace(n.name, std::move(*t));
  }
  Expected<std::vector<ref::Tensor<float>>> outs = ref::evaluate<float>(g, feeds);
  if (!outs) return outs.error();
  // Each output in its declared element type (the executor holds every
  // element as a float: integers by value, bool as 0 and 1), as the other
  // devices give it.
  std::vector<WeightData> result;
  for (size_t o = 0; o < outs->size(); ++o) {
    const ref::Tensor<float>& t = (*outs)[o];
    onnx_frontend::HostTensor h =
        onnx_frontend::HostTensor::zeros(g.type(g.outputs()[o].ref).dtype, t.shape);
    for (size_t e = 0; e < t.data.size(); ++e) {
      if (h.is_float())
        h.f[e] = t.data[e];
      else
        h.i[e] = static_cast<int64_t>(t.data[e]);
    }
    result.push_back(onnx_frontend::weight_from_host(h));
  }
  return result;
}

Expected<std::vector<WeightData>> execute(const Graph& g, std::vector<WeightData> inputs,
                                          const std::string& device) {
  TSO_RETURN_IF_ERROR(check_inputs(g, inputs));
  if (device == "reference") return run_reference(g, inputs);
  if (device == "cpu") {
    cpu::RunOptions o;
    o.iters = 0;  // the one run that computes the outputs, nothing timed
    o.warmup = 0;
    o.choices_file = plan_choices_path(0);
    o.inputs = std::move(inputs);
    Expected<cpu::RunReport> r = cpu::run_model(g, o);
    if (!r) return r.error();
    return std::move(r->outputs);
  }
  if (device == "cuda") {
#ifdef TSO_HAVE_CUDA_RUNTIME
    cuda::RunOptions o;
    o.iters = 1;
    o.warmup = 0;
    o.inputs = std::move(inputs);
    Expected<cuda::RunReport> r = cuda::run_model(g, o);
    if (!r) return r.error();
    return std::move(r->outputs);
#else
    return Error{"device 'cuda' is not in this build (no CUDA compiler was found)"};
#endif
  }
  return Error{"unknown device '" + device + "': cpu, reference or cuda"};
}

}  // namespace tso::driver
