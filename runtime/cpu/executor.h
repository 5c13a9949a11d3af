// The CPU executor: compiles a graph once into a plan of oneDNN primitives
// and own kernels (plan.h), places every intermediate tensor in one arena by
// lifetime, reorders weights once, and runs the plan many times on one
// OpenMP thread team. Plain C++ header: no oneDNN types.
//
// Errors, never crashes: an opaque node, a tensor whose byte count
// overflows, a plan that needs more memory than the machine has (checked
// before anything is allocated), or any failing oneDNN call is an Error
// that names the primitive and the node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"

namespace tso::cpu {

class ConstantStore;  // constant_store.h

struct ExecutorOptions {
  int threads = 0;  // OpenMP threads for every primitive and kernel; 0: all cores
  // Fuse bias, activations and residual adds into convolutions and matrix
  // products as oneDNN post-ops (off: each runs as its own step; tests
  // compare both against the reference).
  bool fuse = true;
  // Where an operator has several implementations (inner product or matmul
  // for a product by weights; direct or Winograd for a 3x3 convolution), time
  // each per shape at plan time and keep the fastest (off: the library's
  // default, inner product and direct).
  bool measure = true;
  // Where those choices are remembered across processes (plan_choices.h: a
  // JSON file of device_description(threads), created on first use; the
  // CLI's is ~/.cache/tso/plans-<device hash>.json); empty: for this process
  // only. A file that is not such a file, or of another device, is an error
  // naming it.
  std::string choices_file = "";
  // Rank-4 f32 graph inputs are laid out NHWC (set_input takes NHWC bytes):
  // how a convolution's output reaches its consumers inside a model, so the
  // profiler times one operator in the layout it runs on there.
  bool channels_last_inputs = false;
  // An alternative implementation is used where measured faster (kMeasured,
  // with `measure`), never, or always where it applies (for tests).
  enum class Choice : unsigned char { kMeasured, kOff, kAlways };
  // 3x3 stride-1 convolutions on Winograd (F(4x4,3x3) when always).
  Choice winograd = Choice::kMeasured;
  // 1x1 stride-1 NHWC convolutions as inner products.
  Choice pointwise_product = Choice::kMeasured;
  // Grouped 3x3 convolutions of 4, 8 or 16 channels a group on tso's own
  // AVX-512 kernel (grouped_conv.h), where the CPU has AVX-512.
  Choice grouped = Choice::kMeasured;
  // Products of one row by constant weights on tso's own kernel
  // (row_product.h), its post-ops in a step of their own.
  Choice row_product = Choice::kMeasured;
  // Stored weights reordered into a primitive's layout are looked up here
  // first and, when another executor of this process made the same copy,
  // shared with it rather than made again (constant_store.h); null: each
  // executor holds its own.
  std::shared_ptr<ConstantStore> constants = nullptr;
};

struct ExecutorStats {
  int64_t arena_bytes = 0;       // intermediate tensors, placed by lifetime
  int64_t static_bytes = 0;      // inputs, weights (in the primitives' layouts), constants
  int64_t shared_bytes = 0;      // of static_bytes, weight copies another executor made
  int64_t scratchpad_bytes = 0;  // the one scratchpad every primitive shares
  int steps = 0;                 // steps a run executes
  int fused_nodes = 0;           // nodes folded into another step as post-ops
  int reorders = 0;              // layout changes between steps (weights excluded)
  int views = 0;                 // tensors that own no memory
  int threads = 0;
  int64_t peak_bytes() const { return arena_bytes + static_bytes + scratchpad_bytes; }
};

// One step's share of a profiled run.
struct StepTime {
  std::string what;   // primitive or kernel, e.g. "conv brgconv:avx2"
  std::string nodes;  // the graph nodes it computes, e.g. "node 'conv1' (conv2d) + relu"
  double ms = 0;      // summed over the profiled runs
  // The FLOPs of the nodes it computes (PlanStep::flops): nominal, so a
  // Winograd step, which multiplies less, shows a rate above the machine's.
  int64_t flops = 0;
  bool product = false;  // it computes a conv2d, matmul or gemm
};

class Executor {
 public:
  static Expected<std::unique_ptr<Executor>> create(const Graph& g,
                                                    const ExecutorOptions& options = {});
  // As above, then `g`'s references to its weights are given up once planned
  // (Graph::release_weight_data; the rest of `g` stays): the prologue frees
  // each weight as soon as it has been copied into the plan's layout, and the
  // model's weights are held about once, not twice, while the executor is
  // made (`tso run`: BERT-base, 342 MB of weights, peaked at 707 MB of
  // resident memory).
  static Expected<std::unique_ptr<Executor>> create_releasing_weights(
      Graph& g, const ExecutorOptions& options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Copies a graph input (by name, f32 or any dtype as raw bytes); the byte
  // count must match its type.
  Status set_input(const std::string& name, std::span<const std::byte> bytes);
  Status set_input(const std::string& name, std::span<const float> values);
  // Runs the graph once.
  Status run();
  // Output `index` (graph output order), in plain row-major layout.
  Expected<std::vector<std::byte>> output_bytes(int index) const;
  Expected<std::vector<float>> output(int index) const;

  // Runs `iters` times after `warmup` untimed runs; each run's milliseconds.
  Expected<std::vector<double>> time_runs(int iters, int warmup);
  // Runs `iters` times timing every step; one entry per step, in plan order.
  Expected<std::vector<StepTime>> profile_steps(int iters);
  // Writes back and evicts from every cache level the constants a run reads
  // (weights in the primitives' layouts, stored constants), so the next run
  // reads them from memory as it does inside a model, where the rest of
  // the model passes through the caches between two runs of one operator.
  // Activations and inputs stay where they are. Returns the bytes evicted.
  int64_t evict_constants();

  ExecutorStats stats() const;
  // oneDNN's version and the ISA it dispatches to, e.g. "oneDNN 3.2.0, avx2".
  static std::string library_info();

  struct Impl;

 private:
  explicit Executor(std::unique_ptr<Impl> impl);
  // `create`; the weights of `release` (`g` itself, or null) are given up once planned.
  static Expected<std::unique_ptr<Executor>> create(const Graph& g, const ExecutorOptions& options,
                                                    Graph* release);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tso::cpu
