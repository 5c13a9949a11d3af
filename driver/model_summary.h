// What a graph holds, as `tso inspect` prints it and the Python module's
// tso.inspect returns it: its sources, one row per operator (attributes that
// differ from their defaults, input and output types, FLOPs, bytes of the
// weights it reads), its outputs and totals.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tso::driver {

struct SourceRow {
  int index = 0;
  std::string name;  // empty for a source that is neither an input nor a weight
  Op op = Op::Input;
  TensorType type;
  int64_t bytes = -1;  // a weight's; -1 for the others
};

struct OperatorRow {
  int index = 0;
  std::string node;        // empty when unnamed
  std::string op;          // "conv2d", or "opaque:<ONNX op_type>"
  std::string attributes;  // "pad=same act=relu": values that differ from the defaults
  std::vector<TensorType> inputs, outputs;
  int64_t flops = 0;
  int64_t param_bytes = 0;  // of the weights it reads, each once
};

struct OutputRow {
  std::string name;
  std::string from;  // describe_node of the producer
  TensorType type;
};

struct ModelSummary {
  std::vector<SourceRow> sources;
  std::vector<OperatorRow> operators;
  std::vector<OutputRow> outputs;
  std::map<std::string, int> op_counts;      // by operator name
  std::map<std::string, int> opaque_counts;  // by ONNX op_type
  int64_t flops = 0;
  int64_t param_bytes = 0;  // every weight's
};

ModelSummary summarize(const Graph& g);

}  // namespace tso::driver
