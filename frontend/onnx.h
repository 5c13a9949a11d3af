// ONNX import and export: the door between tso's IR and the model files users
// have. Import reads any ONNX model of opset 11 to 28 into a Graph in which
// every tensor has a static shape: initializers become weights, Identity and
// inference-mode Dropout disappear, shape-computation subgraphs fold to
// constants, and an operator the IR lacks becomes an opaque node that export
// writes back unchanged; control flow and the nodes whose shapes depend on
// the data, with all they feed, stay ONNX in a dynamic part that export
// writes back after the graph. Export writes a Graph as an ONNX model that
// passes onnx.checker with full_check. Neither ever prints: warnings are
// returned.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "core/types.h"

namespace tso {

// The supported range of the default ("ai.onnx") operator set: the operator
// mappings read kMinOnnxOpset on; a model from kOldestOnnxOpset up to it is
// upgraded to it at import by ONNX's version converter (whose adapters for
// opsets 1 to 6 need shapes the files of that time seldom carry).
constexpr int64_t kOldestOnnxOpset = 1;
constexpr int64_t kMinOnnxOpset = 11;
constexpr int64_t kMaxOnnxOpset = 28;

struct ImportOptions {
  // When set, initializers whose external data file is missing are filled
  // with seeded random values (He-style scale for conv and matmul weights,
  // small values for biases, positive variances for batchnorm); the values
  // depend only on the seed and the tensor's name. When unset a missing
  // external file is an error that names it.
  std::optional<uint64_t> random_weights_seed;
  // The bytes random weights may take in all; an initializer that would go
  // past them is an error naming it, before anything is allocated. Unset:
  // what the machine has available (rt::available_memory_bytes()).
  std::optional<int64_t> max_random_weight_bytes;
  // Static shapes for graph inputs whose ONNX shape has symbolic or unknown
  // dimensions (e.g. a batch dimension), keyed by input name; the key "" is
  // a model's only input. A shape must keep the input's rank and every
  // static dimension the model declares; a name that is not a graph input
  // is an error.
  std::map<std::string, Shape> input_shapes;
  // When set, the model is imported at this batch: the model's batch is the
  // first dimension of its first graph input of rank >= 1 (after
  // input_shapes), and every input whose first dimension is that batch gets
  // this one instead. A Reshape whose constant shape starts with the old
  // batch while its input starts with the new one gets the new batch there;
  // a Reshape whose shape then does not fit its input is an error naming the
  // node. value_info types, which describe the old batch, are then ignored.
  std::optional<int64_t> batch;
  // Constant folding leaves alone a node whose inputs or outputs have more
  // elements than this (the node is then imported as an operator on weights).
  int64_t max_fold_elements = int64_t{1} << 24;
};

// The nodes import keeps as ONNX, after the graph (`dynamic_part.h`): control
// flow (If, Loop, Scan) and the nodes whose output shapes depend on the data
// (NonZero, NonMaxSuppression, a TopK of a computed k), with every node they
// feed: a detection model's post-processing. tso's runtimes do not execute
// them; export writes them back after the graph, unchanged.
struct DynamicPart {
  // A serialized GraphProto: the nodes in a topological order, the constants
  // they read as initializers, and the model's outputs in the file's order
  // (those the graph computes too: export gives them the graph's types).
  std::string graph;
  // The graph outputs that are there only because the part reads them.
  std::vector<std::string> reads;
  int nodes = 0;
  std::string first;  // the first node, as messages name it: "node 'If_7' (If)"
  std::map<std::string, int> op_counts;  // nodes by operator ("domain.op" outside ai.onnx)
};

// What export needs to reproduce the model's envelope, recorded at import.
struct OnnxModelInfo {
  int64_t ir_version = 8;
  int64_t opset = 17;  // the default domain's
  // Every operator set the model imports, by domain ("" is the default).
  std::vector<std::pair<std::string, int64_t>> opset_imports = {{"", 17}};
  std::string producer_name;
  std::string producer_version;
  // The model's own default opset when import upgraded it (1 to 10, to 11);
  // 0 when it was read as written.
  int64_t upgraded_from = 0;
  // Model-local functions that an opaque node still calls, serialized
  // FunctionProtos (inline_functions.h); export writes them back.
  std::vector<std::string> functions;
  std::optional<DynamicPart> dynamic;
};

// Errors, naming the first of its nodes, when `info` has a dynamic part: for
// whatever needs the whole model's function (running it, profiling it).
Status check_static(const OnnxModelInfo& info, const std::string& file);

struct OpaqueNodeInfo {
  std::string name;     // ONNX node name (or its first output when unnamed)
  std::string op_type;  // e.g. "NonMaxSuppression"
  std::string domain;   // "" for the default domain
  std::string reason;   // why it is opaque: "not in the IR" or what the mapping lacks
};

struct ImportStats {
  int onnx_nodes = 0;              // nodes in the file's main graph
  int folded_nodes = 0;            // evaluated to constants at import
  int removed_identities = 0;      // Identity and Dropout nodes dropped
  int materialized_constants = 0;  // folded constants that became weights
  int rewritten_reshapes = 0;      // Reshape shapes given the new batch (ImportOptions::batch)
  int erf_gelus = 0;               // five-node GELUs read as one gelu (erf_gelu.h)
  int layernorms = 0;              // nine-node LayerNorms read as one (decomposed_layernorm.h)
  int inlined_calls = 0;           // calls of model-local functions replaced by their bodies
};

struct ImportedModel {
  Graph graph;
  OnnxModelInfo info;
  std::vector<OpaqueNodeInfo> opaque_nodes;
  std::vector<std::string> warnings;  // e.g. an unused initializer, a random-filled weight file
  ImportStats stats;
};

// The ONNX and protobuf libraries the frontend is built with, e.g.
// "ONNX 1.12.0, protobuf 3.21.12".
std::string onnx_library_versions();

// Reads `path`. Errors name the file and, where one is at fault, the node:
// "model.onnx: node 'conv1' (Conv): ...".
Expected<ImportedModel> import_onnx(const std::string& path, const ImportOptions& options = {});

// Imports a model held in memory; `display_name` is used in messages and
// `base_dir` resolves external data locations.
Expected<ImportedModel> import_onnx_bytes(std::string_view bytes, const std::string& display_name,
                                          const std::string& base_dir,
                                          const ImportOptions& options = {});

struct ExportOptions {
  // Weights are written as external data (one file, `<output>.weights`,
  // next to the model) when their total size exceeds this many bytes.
  int64_t external_data_threshold = int64_t{2} << 30;
  std::string producer_name = "tso";
};

// Writes `graph` to `path` with the envelope `info` (opset, IR version, names
// of other domains). Every weight needs its data. The file appears only when
// the whole model was written (a temporary file is renamed into place).
Status export_onnx(const Graph& graph, const OnnxModelInfo& info, const std::string& path,
                   const ExportOptions& options = {});
inline Status export_onnx(const ImportedModel& model, const std::string& path,
                          const ExportOptions& options = {}) {
  return export_onnx(model.graph, model.info, path, options);
}
// A graph not from ONNX: opset 17, IR version 8.
inline Status export_onnx(const Graph& graph, const std::string& path,
                          const ExportOptions& options = {}) {
  return export_onnx(graph, OnnxModelInfo{}, path, options);
}

// Serializes to memory instead of a file (weights always inline); for tests
// and tools that pipe models.
Expected<std::string> export_onnx_bytes(const Graph& graph, const OnnxModelInfo& info,
                                        const ExportOptions& options = {});

}  // namespace tso
