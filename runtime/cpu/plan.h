// The CPU plan: the steps a run executes, the tensors they read and write in
// the layouts the primitives chose, and where each tensor lives. Built once
// per graph by `build_plan` (plan.cc, with one lowering file per operator
// class), then bound to memory by the executor. Internal to runtime/cpu.
//
// Layouts. Primitives that care (convolutions, weights of matrix products)
// are created with `format_tag::any` and keep the layout they choose;
// layout-agnostic ones (eltwise, binary, pooling, batchnorm, softmax,
// concat, reductions) run on whatever layout their input has; own kernels and
// views need row-major tensors. `as_layout` inserts a reorder only where a
// consumer needs another layout, once per (tensor, layout).
//
// Constants. A step whose inputs are all constant (weights, constants, or
// outputs of such steps: weight reorders, enlarged or concatenated weights)
// is a prologue step: it runs once when the executor is created and its
// outputs are static. Every other step runs on each run; its outputs live in
// the arena, placed by lifetime.
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/cpu/dnnl_util.h"
#include "runtime/cpu/executor.h"
#include "runtime/cpu/fusion.h"

namespace tso::cpu {

enum class Storage : unsigned char {
  kHost,    // bytes owned outside the plan's blocks (stored weights, host constants)
  kInput,   // a graph input: the static block, written by set_input
  kStatic,  // the static block, written once by the prologue
  kShared,  // a stored weight reordered by the prologue, in a ConstantStore's copy
  kArena,   // the arena, placed by lifetime
  kView,    // bytes of another tensor
};

struct PlanTensor {
  TensorType type;  // logical type (the graph's)
  memory::desc md;  // layout; empty for dtypes oneDNN does not describe
  int64_t bytes = 0;
  Storage storage = Storage::kArena;
  std::shared_ptr<const void> host;  // kHost: keeps the bytes alive
  const std::byte* host_bytes = nullptr;
  int parent = -1;  // kView
  int source = -1;  // kShared: the stored weight (or a view of it) it is reordered from
  int64_t view_offset = 0;
  int first = -1, last = -1;  // kArena: steps of the run list that write and last read it
  int64_t offset = 0;         // kInput, kStatic, kArena: byte offset in its block
};

// What a bound step gets: memory for each plan tensor, the shared scratchpad.
class Bindings {
 public:
  virtual ~Bindings() = default;
  virtual std::byte* data(int tensor) const = 0;
  virtual memory mem(int tensor) const = 0;
  // A memory of `tensor`'s bytes described by another descriptor (a reshape).
  virtual memory mem(int tensor, const memory::desc& md) const = 0;
  virtual memory scratchpad() const = 0;
  virtual dnnl::stream& stream() const = 0;
};

// Thrown by an own kernel's run when the values it reads rule the step out
// (a gather index out of range), never from inside a parallel region; the
// executor returns it as an Error naming the step's nodes.
struct StepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Run = std::function<void()>;
using Bind = std::function<Run(const Bindings&)>;

struct PlanStep {
  std::string what;   // "conv brgconv:avx2", "reorder", "transpose (own)"
  std::string nodes;  // the graph nodes it computes
  std::vector<int> reads, writes;
  bool prologue = false;
  // A reorder or copy the plan inserted to bring another step's operand into
  // the layout, shape or type that step reads (a layout change, gemm's C
  // stretched, an int8 kernel's input quantized back).
  bool operand_copy = false;
  // The FLOPs of the graph nodes the step computes (node_flops, core/graph.h):
  // a node, or a fused group, lowered to several run steps is charged to the
  // first of them that is not an operand copy. `product`: they include a
  // conv2d, matmul or gemm.
  int64_t flops = 0;
  bool product = false;
  Bind bind;
};

struct Plan {
  std::vector<PlanTensor> tensors;
  std::vector<PlanStep> steps;        // prologue and run steps, in order
  std::map<std::string, int> inputs;  // graph input name -> tensor
  std::vector<int> outputs;           // graph output order -> row-major tensor
  int64_t scratchpad_bytes = 0;
  int fused_nodes = 0, reorders = 0, views = 0;
};

// Builds the plan of `g`; errors name the node (an opaque operator, a
// computing operator on a dtype other than f32, a primitive oneDNN refuses).
Expected<Plan> build_plan(const Graph& g, const ExecutorOptions& options,
                          const dnnl::engine& engine);

}  // namespace tso::cpu
