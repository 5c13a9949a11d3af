// The plan builder shared by plan.cc and the lowering files: tensors, the
// value each graph tensor currently has, layout changes, and steps. Internal
// to runtime/cpu.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/cpu/plan.h"

namespace tso::cpu {

// One argument of a primitive step: a tensor, seen through `md` when set
// (a reshaped or re-ranked view of the same bytes).
struct Arg {
  int key = 0;  // DNNL_ARG_*
  int tensor = -1;
  memory::desc md{};
};

class Builder {
 public:
  Builder(const Graph& g, const ExecutorOptions& options, const dnnl::engine& engine);

  const Graph& graph() const { return g_; }
  const ExecutorOptions& options() const { return options_; }
  const dnnl::engine& engine() const { return engine_; }
  Plan& plan() { return plan_; }
  // Valid until the next call that adds a tensor (output_tensor, as_layout,
  // view, ...): copy what is needed across such calls.
  const PlanTensor& tensor(int t) const { return plan_.tensors[t]; }

  // The nodes reading any result of `node` (each once), whether a graph
  // output names one, and per node whether it is weight-only
  // (weight_only_nodes): the graph's, computed once.
  const std::vector<int>& readers(int node) const { return readers_[node]; }
  bool is_output(int node) const { return is_output_[node]; }
  const std::vector<char>& weight_only() const { return weight_only_; }

  // The tensor that holds graph value `r` now. Never levels (note_levels):
  // only int8 kernels read those, through quantized_value.
  int value(TensorRef r) const;
  void set_value(TensorRef r, int t) { value_[r.node][r.output] = t; }
  // The tensor graph value `r` is stored in, levels as they are (-1: none yet).
  int stored_value(TensorRef r) const { return value_[r.node][r.output]; }
  // Graph value `r` quantized for an int8 kernel into `want`: the levels an
  // int8 kernel wrote (their scale and zero point must be these), else
  // as_quantized(value(r), ...).
  int quantized_value(TensorRef r, const memory::desc& want, float scale, int32_t zero);
  // Tensor `t`, dense, holds the levels of a quantize pair (u8 or s8) in
  // place of the pair's f32 values (lower_int8.cc).
  struct Levels {
    float scale = 1;
    int32_t zero = 0;
  };
  void note_levels(int t, Levels levels) { levels_[t] = levels; }
  bool holds_levels(int t) const { return levels_.count(t) != 0; }

  // The tensor whose bytes `t` are: `t`, or the parent its views lead to.
  int root(int t) const;
  // A tensor is constant when its bytes are the same on every run: stored
  // weights, constants, and outputs of prologue steps (views of them too).
  bool is_const(int t) const;
  bool all_const(const std::vector<int>& ts) const;

  // A new tensor written by a step reading `reads`: static when they are
  // all constant, else in the arena.
  int output_tensor(const TensorType& type, const memory::desc& md, const std::vector<int>& reads);
  int input_tensor(const TensorType& type);
  int host_tensor(const TensorType& type, std::shared_ptr<const void> keep, const std::byte* bytes);
  // A host tensor holding `values` (f32), e.g. a batchnorm's folded scale.
  int host_floats(std::vector<float> values, const Shape& shape);
  // A tensor sharing `parent`'s bytes from `offset` on (parent row-major).
  int view(int parent, const TensorType& type, int64_t offset = 0);

  // `t` in layout `want`: `t` itself, or a reorder of it (made once).
  int as_layout(int t, const memory::desc& want);
  // `t` in row-major layout.
  int as_plain(int t);
  // f32 `t` quantized (round(t / scale) + zero, saturated) into `want`, a u8
  // or s8 layout (made once per tensor, layout and parameters): the input
  // of an int8 kernel. A pair step's output (note_pair) is its input
  // quantized by the pair's own formula (quantize_pair_input), in that
  // input's layout: the same levels, without the pair's floats in between;
  // otherwise a oneDNN reorder quantizes `t` (lossless where `t` holds
  // dequantized values).
  int as_quantized(int t, const memory::desc& want, float scale, int32_t zero);

  // The f32 input, scale, zero point (tensors) and quantized type of the pair
  // step (lower_quantize_pair) that wrote tensor `y`; for a fused group that
  // ends in a pair (fusion.h), `y` itself, which holds the pair's levels.
  struct PairSource {
    int x = -1, scale = -1, zero = -1;
    DType type = DType::kU8;
  };
  void note_pair(int y, PairSource source);
  // Drops the pair steps whose output no step reads and no graph output is:
  // every reader of it read the quantized input instead (as_quantized).
  void drop_unread_pairs();

  // A primitive with the shared scratchpad (its size is recorded).
  dnnl::primitive_attr attr() const;
  void note_scratchpad(const dnnl::primitive_desc_base& pd);
  // A step executing `prim` on `args` (DNNL_ARG_DST* are written, the rest read).
  void add_primitive(std::string what, std::string nodes, dnnl::primitive prim,
                     std::vector<Arg> args);
  // A step running own code; `bind` gets the bindings and returns the run.
  void add_kernel(std::string what, std::string nodes, std::vector<int> reads,
                  std::vector<int> writes, Bind bind);

  // "node 'conv1' (conv2d)" for messages.
  std::string describe(int node) const { return describe_node(g_, node); }

 private:
  void add_step(PlanStep s);

  const Graph& g_;
  const ExecutorOptions& options_;
  const dnnl::engine& engine_;
  Plan plan_;
  std::vector<std::vector<int>> value_;
  std::vector<std::vector<int>> readers_;
  std::vector<char> is_output_, weight_only_;
  struct Reorder {
    int from = -1;
    memory::desc md;
    int to = -1;
  };
  std::vector<Reorder> reorders_;
  struct Quantized {
    int from = -1;
    memory::desc md;
    float scale = 1;
    int32_t zero = 0;
    int to = -1;
  };
  std::vector<Quantized> quantized_;
  std::map<int, PairSource> pairs_;  // pair step output -> its source
  std::map<int, Levels> levels_;     // levels tensor -> its quantization
};

// Lowering of one group or node; each appends steps and sets the values of
// the nodes it computes. Errors name the node.
Status lower_linear(Builder& b, const FusionGroup& group);  // conv2d, matmul, gemm
// A 3x3 stride-1 conv2d group on Winograd when it applies and is faster than
// `direct` (with its post-op operands `direct_extra`); false: lower it direct.
Expected<bool> lower_winograd(Builder& b, const FusionGroup& group,
                              const dnnl::convolution_forward::primitive_desc& direct,
                              const std::vector<Arg>& direct_extra);
// A grouped 3x3 conv2d group of 4, 8 or 16 channels a group on tso's own
// kernel (grouped_conv.h) when it applies and is faster than `direct`;
// false: lower it direct.
Expected<bool> lower_grouped(Builder& b, const FusionGroup& group,
                             const dnnl::convolution_forward::primitive_desc& direct,
                             const std::vector<Arg>& direct_extra);
struct PostOps;
// A conv2d group (grouped or not) of a quantized model (a dequantize_linear of
// its input and of stored i8 weights) on oneDNN's int8 kernels; false: f32.
Expected<bool> lower_int8_conv(Builder& b, const FusionGroup& group);
// The same for a product of `rows` x K by constant K x N weights (stored
// [N, K] when `b_transposed`) with the group's post-ops `post`.
Expected<bool> lower_int8_product(Builder& b, const FusionGroup& group, int64_t rows, int64_t k,
                                  int64_t n, bool b_transposed, const PostOps& post);
// A matmul of two dequantized activations of shapes `ad` and `bd` (equal
// ranks; core/quantized.h's int8_activations) on oneDNN's int8 matmul;
// false: lower it in f32.
Expected<bool> lower_int8_activations(Builder& b, const FusionGroup& group, const Dims& ad,
                                      const Dims& bd, const PostOps& post);
// A 1x1 stride-1 NHWC conv2d group as an inner product of [rows, C] by
// [C, K] when that measures faster than `direct`; false: lower it direct.
bool lower_pointwise(Builder& b, const FusionGroup& group,
                     const dnnl::convolution_forward::primitive_desc& direct,
                     const std::vector<Arg>& direct_extra);
// A product of one row by constant weights (a [K] or [N, K] when
// `transposed`, `bt`) on row_product.h's kernel and the group's post-ops;
// its time on scratch buffers, its weights cold (time_primitive's
// cold_weights).
double time_row_product(Builder& b, int64_t k, int64_t n, const PostOps& post);
void lower_row_product(Builder& b, const FusionGroup& group, int a, int64_t k, int64_t n, int bt,
                       bool transposed, const PostOps& post);
Status lower_compute(Builder& b, int node);          // oneDNN primitives
Status lower_movement(Builder& b, int node);         // views and own kernels
Status lower_update_slice(Builder& b, int node);     // in place where the base is dead
Status lower_gather(Builder& b, int node);           // rows picked by indices, checked each run
Status lower_gather_elements(Builder& b, int node);  // one element per index, checked each run
Status lower_grid_sample(Builder& b, int node);      // taps per position, every channel
Status lower_quantize(Builder& b, int node);         // quantize_linear, dequantize_linear
// A pair of core/quantized.h's quantize_pairs as one step, lowered at the
// dequantize_linear.
Status lower_quantize_pair(Builder& b, int q, int dq);
// The input of pair `p` quantized by an own step in its layout (a dense
// one), then reordered into `want` where that differs; -1 where the input's
// layout is blocked or has padding (then the caller reorders).
int quantize_pair_input(Builder& b, const Builder::PairSource& p, const memory::desc& want);
bool is_movement(const Graph& g, int node);
// A new row-major tensor for output `index` of `node`, of any element type
// (no oneDNN descriptor for those oneDNN lacks: i64, bool).
int row_major_output(Builder& b, int node, int index, const std::vector<int>& reads);
// Comparisons, logic, cumsum, integer arithmetic and where on non-f32
// branches (token ids and attention masks; lower_logic.cc).
bool is_logic(const Graph& g, int node);
Status lower_logic_node(Builder& b, int node);
// `t` (row-major) stretched to `shape` by a copy, numpy broadcasting.
int broadcast_to(Builder& b, int node, int t, const Shape& shape);
// A new row-major tensor of `type`, zeroed, then written by one strided copy
// from row-major `src` (kernels.h StridedCopy, offsets 0).
int strided_copy_tensor(Builder& b, int node, const char* what, int src, const TensorType& type,
                        std::vector<int64_t> extent, std::vector<int64_t> src_st,
                        std::vector<int64_t> dst_st);

}  // namespace tso::cpu
