#include "optimizer/analytic_cost.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/shape_inference.h"

namespace tso::opt {

Expected<Device> parse_device(const std::string& text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{source + ": not valid JSON"};
  try {
    if (j.at("format") != "tso-device")
      return Error{source + ": not a tso device description (format is " + j.at("format").dump() +
                   ")"};
    Device d;
    d.name = j.at("name").get<std::string>();
    d.matmul_flops = j.at("matmul_tflops").get<double>() * 1e12;
    d.vector_flops = j.at("vector_tflops").get<double>() * 1e12;
    d.bytes_per_s = j.at("memory_gb_per_s").get<double>() * 1e9;
    d.launch_us = j.at("kernel_launch_us").get<double>();
    if (d.matmul_flops <= 0 || d.vector_flops <= 0 || d.bytes_per_s <= 0 || d.launch_us < 0)
      return Error{source + ": rates must be positive and the launch cost not negative"};
    return d;
  } catch (const nlohmann::json::exception& e) {
    return Error{source + ": malformed device description: " + e.what()};
  }
}

Expected<Device> load_device(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_device(ss.str(), path);
}

bool is_view(const Node& n, std::span<const TensorType> inputs) {
  switch (n.op) {
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze: return true;
    case Op::Split: {
      // Contiguous pieces: every dimension before the axis has extent 1.
      const Shape& s = inputs[0].shape;
      int64_t axis = n.attrs.i(AttrKey::axis);
      for (int d = 0; d < axis; ++d)
        if (s[d] != 1) return false;
      return true;
    }
    default: return false;
  }
}

double AnalyticCost::node_us(const Node& n, std::span<const TensorType> inputs) const {
  if (is_source(n.op) || is_view(n, inputs)) return 0;
  double bytes = 0;
  for (const TensorType& t : inputs) bytes += double(t.shape.numel()) * dtype_bytes(t.dtype);
  for (const TensorType& t : n.outs) bytes += double(t.shape.numel()) * dtype_bytes(t.dtype);
  double f = n.op == Op::Opaque ? 0 : double(flops(n.op, n.attrs, inputs, n.outs));
  bool tensor_core = n.op == Op::Conv2d || n.op == Op::Matmul || n.op == Op::Gemm;
  double compute = f / (tensor_core ? device_.matmul_flops : device_.vector_flops);
  return device_.launch_us + 1e6 * std::max(compute, bytes / device_.bytes_per_s);
}

std::string AnalyticCost::describe() const { return "analytic (" + device_.name + ")"; }

}  // namespace tso::opt
