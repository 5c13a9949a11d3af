// `tso inspect FILE`: reads a graph (canonical text format or ONNX) and prints
// what it holds: its inputs, one row per operator (attributes that differ
// from their defaults, input and output types, FLOPs, bytes of the weights it
// reads) and totals.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_file.h"
#include "cli/table.h"
#include "core/graph.h"
#include "core/text_format.h"
#include "driver/model_summary.h"

namespace tso::cli {
namespace {

constexpr size_t kMaxAttrSummary = 48;

struct InspectOptions {
  ModelFileOptions model;
};

// The exact count, then a rounded one once it is large: "13824 (13.8 K)"
// with decimal units, or "165672 (162 KiB)" with binary ones for bytes.
std::string with_magnitude(int64_t v, bool binary = false) {
  static const char* kDecimal[] = {"", "K", "M", "G", "T", "P"};
  static const char* kBinary[] = {"", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const double base = binary ? 1024 : 1000;
  double x = static_cast<double>(v);
  int u = 0;
  while (x >= base && u < 5) x /= base, ++u;
  if (u == 0) return std::to_string(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld (%.3g %s)", static_cast<long long>(v), x,
                binary ? kBinary[u] : kDecimal[u]);
  return buf;
}

std::string join_types(const std::vector<TensorType>& types) {
  std::string out;
  for (const TensorType& t : types) {
    if (!out.empty()) out += ", ";
    out += to_string(t);
  }
  return out;
}

void print_sources(std::ostream& out, const driver::ModelSummary& s) {
  Table table(
      {{"#", Table::Align::kRight}, {"name"}, {"kind"}, {"type"}, {"bytes", Table::Align::kRight}});
  for (const driver::SourceRow& r : s.sources)
    table.add_row({std::to_string(r.index), r.name.empty() ? "-" : r.name,
                   std::string(op_name(r.op)), to_string(r.type),
                   r.bytes < 0 ? "-" : std::to_string(r.bytes)});
  out << "sources\n";
  table.print(out, 2);
}

void print_operators(std::ostream& out, const driver::ModelSummary& s) {
  Table table({{"#", Table::Align::kRight},
               {"node"},
               {"op"},
               {"attributes"},
               {"inputs"},
               {"outputs"},
               {"FLOPs", Table::Align::kRight},
               {"param bytes", Table::Align::kRight}});
  for (const driver::OperatorRow& r : s.operators) {
    std::string attrs = r.attributes;
    if (attrs.size() > kMaxAttrSummary) attrs = attrs.substr(0, kMaxAttrSummary - 3) + "...";
    table.add_row({std::to_string(r.index), r.node.empty() ? "-" : r.node, r.op, attrs,
                   join_types(r.inputs), join_types(r.outputs), std::to_string(r.flops),
                   std::to_string(r.param_bytes)});
  }
  out << "operators\n";
  table.print(out, 2);
}

// "conv2d 2, relu 2, add 1": most frequent first, ties by name.
std::string counts_line(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, count] : v) {
    if (!out.empty()) out += ", ";
    out += name + " " + std::to_string(count);
  }
  return out;
}

void print_report(std::ostream& out, const Graph& g, const std::string& file) {
  const driver::ModelSummary summary = driver::summarize(g);
  out << "graph " << g.name() << " (" << file << ")\n\n";
  print_sources(out, summary);
  out << '\n';
  print_operators(out, summary);

  out << "\noutputs\n";
  Table outputs({{"name"}, {"from"}, {"type"}});
  for (const driver::OutputRow& o : summary.outputs)
    outputs.add_row({o.name, o.from, to_string(o.type)});
  outputs.print(out, 2);

  int num_ops = 0;
  for (const auto& [name, count] : summary.op_counts) num_ops += count;

  out << "\ntotals\n";
  Table t({{"what"}, {"value"}});
  t.add_row({"operators", std::to_string(num_ops) +
                              (num_ops ? " (" + counts_line(summary.op_counts) + ")" : "")});
  t.add_row({"FLOPs", with_magnitude(summary.flops)});
  t.add_row({"param bytes", with_magnitude(summary.param_bytes, /*binary=*/true)});
  if (!summary.opaque_counts.empty()) t.add_row({"opaque", counts_line(summary.opaque_counts)});
  t.print(out, 2, /*header=*/false);  // the totals read as a list

  if (!summary.opaque_counts.empty()) {
    int n = 0;
    for (const auto& [type, count] : summary.opaque_counts) n += count;
    out << "\nwarning: " << n << " opaque node" << (n == 1 ? "" : "s") << " ("
        << counts_line(summary.opaque_counts)
        << "): tso rewrites around them and exports them unchanged, but cannot execute them\n";
  }
}

void print_dynamic_part(std::ostream& out, const DynamicPart& d) {
  std::vector<std::pair<std::string, int>> counts(d.op_counts.begin(), d.op_counts.end());
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string ops;
  for (const auto& [op, count] : counts)
    ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(count);
  constexpr size_t kNamed = 6;  // a detection head's part reads one score column per class
  std::string reads;
  for (size_t k = 0; k < d.reads.size() && k < kNamed; ++k)
    reads += (k ? ", " : "") + d.reads[k];
  if (d.reads.size() > kNamed) reads += ", ...";
  out << "\ndynamic part: kept as ONNX after the graph and written back unchanged; tso's "
         "runtimes do not run it\n";
  Table t({{"what"}, {"value"}});
  t.add_row({"nodes", std::to_string(d.nodes) + " from " + d.first + " on (" + ops + ")"});
  if (!d.reads.empty())
    t.add_row({"reads", std::to_string(d.reads.size()) + " graph output" +
                            (d.reads.size() == 1 ? "" : "s") + " (" + reads + ")"});
  t.print(out, 2, /*header=*/false);
}

int run_inspect(const InspectOptions& opts) {
  int code = kExitOk;
  std::optional<ModelFile> m = load_model_file(opts.model, "inspect", &code);
  if (!m) return code;
  print_report(std::cout, m->graph, opts.model.file);
  if (m->is_onnx) print_opaque_nodes(std::cout, m->onnx.opaque_nodes);
  if (m->is_onnx && m->onnx.info.dynamic) print_dynamic_part(std::cout, *m->onnx.info.dynamic);
  std::cout.flush();
  return std::cout ? kExitOk : kExitIoError;
}

}  // namespace

Command add_inspect(CLI::App& tso) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App* app =
      tso.add_subcommand("inspect", "Print a graph's operators, shapes, FLOPs and parameter bytes");
  app->add_option("FILE", opts->model.file,
                  "graph in the canonical text format (.tso) or an ONNX model (.onnx)")
      ->required();
  add_model_file_options(app, &opts->model);
  return {app, [opts] { return run_inspect(*opts); }};
}

}  // namespace tso::cli
