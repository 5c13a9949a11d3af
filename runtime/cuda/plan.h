// The execution plan of a graph on the GPU, worked out once on the host:
// which kernel family runs each node, where every tensor lives, and how much
// device memory the run needs. Plain C++, tested without a GPU; the executor
// (executor.h) turns it into descriptors and launches.
//
// Memory. Graph inputs, weights and constants live in one static block,
// uploaded once. Every other tensor lives in one arena, placed by lifetime
// (runtime/common/arena.h). Offsets in both are multiples of kDeviceAlignment.
// Some tensors are views that own no memory:
//   - reshape, flatten, squeeze and unsqueeze alias their input;
//   - split outputs alias consecutive byte ranges of the input when every
//     dimension before the split axis is 1;
//   - concat inputs are written by their producers directly into their place
//     in the output when every dimension before the concat axis is 1, the
//     input is computed by a kernel (not a graph input, weight, constant or a
//     view), and it is not already placed in another concat; the concat then
//     copies only the remaining inputs;
//   - an update_slice's output is its base when nothing reads the base's
//     memory after it (the base has no other reader, is no graph output,
//     owns its memory and is computed by a kernel, and every tensor placed in
//     it was last read before): only the patch is copied, into its box.
// Per-node scratch (a pre-padded conv input for asymmetric padding, an
// operand broadcast to a matmul's full batch, layernorm parameters broadcast
// to the normalized shape) is an arena buffer alive for that node only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "runtime/common/arena.h"
#include "runtime/cuda/dispatch.h"

namespace tso::cuda {

// cuDNN and cuBLASLt want 256-byte aligned operands for their fastest paths.
constexpr int64_t kDeviceAlignment = 256;

struct PlanOptions {
  bool concat_views = true;  // place concat inputs in the output (else copy them)
  bool split_views = true;   // make split outputs views (else copy them)
  bool update_in_place = true;  // write update_slice's patch into its base (else copy the base)
};

enum class Storage : unsigned char { kStatic, kArena };

struct TensorPlan {
  TensorRef ref;
  TensorType type;
  int64_t bytes = 0;
  int parent = -1;          // the tensor this one is a view of, or -1 when it owns memory
  int64_t view_offset = 0;  // byte offset into the parent
  // Resolved location: the block and the byte offset in it.
  Storage storage = Storage::kArena;
  int64_t offset = 0;
};

struct StepPlan {
  int node = -1;
  Kernel kernel = Kernel::kSource;
  std::vector<int> inputs;               // tensor ids, in argument order
  std::vector<int> outputs;              // tensor ids
  std::vector<bool> in_place;            // concat, update_slice: input i is already in the output
  std::vector<int64_t> scratch_offsets;  // arena offsets of this node's scratch buffers
  std::vector<int64_t> scratch_bytes;
};

struct Plan {
  std::vector<TensorPlan> tensors;
  std::vector<int> first_tensor;  // per node: id of its output 0
  std::vector<StepPlan> steps;    // the nodes that launch work, in graph order
  std::vector<int> sources;       // input, weight and constant nodes
  int64_t static_bytes = 0;       // inputs, weights and constants
  rt::ArenaLayout arena;          // arena.peak_bytes is the arena's size
  int views = 0;                  // tensors that own no memory
  int concat_inputs_in_place = 0;
  int updates_in_place = 0;  // update_slice steps that write into their base

  int tensor_id(TensorRef r) const { return first_tensor[r.node] + r.output; }
  const TensorPlan& tensor(TensorRef r) const { return tensors[tensor_id(r)]; }
};

// Plans `g`. Errors name the node: an opaque operator, or a dtype other than
// f32 on an operator that computes (data movement takes any dtype).
Expected<Plan> make_plan(const Graph& g, const PlanOptions& options = {});

// An Error when the plan's static block and arena exceed `free_bytes` of
// device memory, before anything is allocated: "needs 40.0 GiB for the CUDA
// plan (static 8.0 GiB, arena 32.0 GiB) but the GPU has 21.3 GiB available".
Status check_device_memory(const Plan& plan, int64_t free_bytes);

// Scratch buffers a node needs beyond its inputs and outputs, in bytes, in
// the order the executor uses them (see plan.h's header comment).
std::vector<int64_t> scratch_for(const Graph& g, int node);

}  // namespace tso::cuda
