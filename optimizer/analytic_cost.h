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
// The description of `d` in that format, `source` saying where its figures
// come from (a datasheet, a calibration); parse_device reads it back.
std::string device_json(const Device& d, const std::string& source);
// Writes device_json to a temporary file beside `path` and renames it into
// place, so `path` appears only complete.
Status save_device(const Device& d, const std::string& source, const std::string& path);

// What the roofline charges one kernel: the FLOPs it computes, the bytes it
// reads and writes, and whether they run at the matmul peak.
struct KernelWork {
  double flops = 0;
  double bytes = 0;
  bool matmul = false;  // conv2d, matmul, gemm
};
KernelWork kernel_work(const Node& n, std::span<const TensorType> inputs);
// The roofline time of `w` on `d` in microseconds (views and sources aside).
double roofline_us(const Device& d, const KernelWork& w);

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
