// The analytic cost model: a roofline per kernel against a device
// description. A node's time is its launch cost plus the larger of its FLOPs
// over the device's peak rate (tensor-core rate for conv2d, matmul and gemm,
// vector rate for the rest) and the bytes it reads and writes over the
// memory bandwidth. Views cost nothing: reshape, flatten, squeeze,
// unsqueeze, and a split whose pieces are contiguous.
#pragma once

#include <string>

#include "core/error.h"
#include "optimizer/cost_model.h"

namespace tso::opt {

// A device description (optimizer/devices/*.json, format in README.md).
struct Device {
  std::string name;
  double matmul_flops = 0;   // peak FLOP/s of conv2d, matmul and gemm
  double vector_flops = 0;   // peak FLOP/s of everything else
  double bytes_per_s = 0;    // memory bandwidth
  double launch_us = 0;      // fixed cost of one kernel
};

Expected<Device> parse_device(const std::string& json, const std::string& source);
Expected<Device> load_device(const std::string& path);

class AnalyticCost : public CostModel {
 public:
  explicit AnalyticCost(Device device) : device_(std::move(device)) {}
  double node_us(const Node& n, std::span<const TensorType> inputs) const override;
  std::string describe() const override;
  const Device& device() const { return device_; }

 private:
  Device device_;
};

// Whether `n` is a view of its input (no kernel, no copy).
bool is_view(const Node& n, std::span<const TensorType> inputs);

}  // namespace tso::opt
