#include "optimizer/analytic_cost.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.h"
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

namespace {

// Six significant digits: the figures of a device are estimates, and a file
// that says 0.0791 reads better than 0.07910000000000001.
double six_digits(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return std::strtod(text, nullptr);
}

}  // namespace

std::string device_json(const Device& d, const std::string& source) {
  nlohmann::ordered_json j;
  j["format"] = "tso-device";
  j["name"] = d.name;
  j["source"] = source;
  j["matmul_tflops"] = six_digits(d.matmul_flops / 1e12);
  j["vector_tflops"] = six_digits(d.vector_flops / 1e12);
  j["memory_gb_per_s"] = six_digits(d.bytes_per_s / 1e9);
  j["kernel_launch_us"] = six_digits(d.launch_us);
  return j.dump(2) + "\n";
}

Status save_device(const Device& d, const std::string& source, const std::string& path) {
  return write_file_atomically(path, device_json(d, source));
}

bool is_view(const Node& n, std::span<const TensorType> inputs) {
  switch (n.op) {
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
      return true;
    case Op::Split: {
      // Contiguous pieces: every dimension before the axis has extent 1.
      const Shape& s = inputs[0].shape;
      int64_t axis = n.attrs.i(AttrKey::axis);
      for (int d = 0; d < axis; ++d)
        if (s[d] != 1) return false;
      return true;
    }
    default:
      return false;
  }
}

KernelWork kernel_work(const Node& n, std::span<const TensorType> inputs) {
  KernelWork w;
  for (const TensorType& t : inputs) w.bytes += double(t.shape.numel()) * dtype_bytes(t.dtype);
  for (const TensorType& t : n.outs) w.bytes += double(t.shape.numel()) * dtype_bytes(t.dtype);
  // update_slice is charged as written in place (as the runtimes write a
  // correction's output): the patch read and written into its box, the base
  // not moved.
  if (n.op == Op::UpdateSlice)
    w.bytes = 2 * double(inputs[1].shape.numel()) * dtype_bytes(inputs[1].dtype);
  // gather reads only the rows it copies (an embedding lookup touches 128 of
  // 30522 rows): the indices, and the output's bytes read and written.
  if (n.op == Op::Gather || n.op == Op::GatherElements)
    w.bytes = double(inputs[1].shape.numel()) * dtype_bytes(inputs[1].dtype) +
              2 * double(n.outs[0].shape.numel()) * dtype_bytes(n.outs[0].dtype);
  w.flops = n.op == Op::Opaque ? 0 : double(flops(n.op, n.attrs, inputs, n.outs));
  w.matmul = n.op == Op::Conv2d || n.op == Op::Matmul || n.op == Op::Gemm;
  return w;
}

double roofline_us(const Device& d, const KernelWork& w) {
  double compute = w.flops / (w.matmul ? d.matmul_flops : d.vector_flops);
  return d.launch_us + 1e6 * std::max(compute, w.bytes / d.bytes_per_s);
}

double AnalyticCost::node_us(const Node& n, std::span<const TensorType> inputs) const {
  if (is_source(n.op) || is_view(n, inputs)) return 0;
  return roofline_us(device_, kernel_work(n, inputs));
}

std::string AnalyticCost::describe() const { return "analytic (" + device_.name + ")"; }

}  // namespace tso::opt
