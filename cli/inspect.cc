// `tso inspect FILE`: reads a graph (canonical text format or ONNX) and prints
// what it holds: its inputs, one row per operator (attributes that differ
// from their defaults, input and output types, FLOPs, bytes of the weights it
// reads) and totals.
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
#include "core/shape_inference.h"
#include "core/text_format.h"

namespace tso::cli {
namespace {

constexpr size_t kMaxAttrSummary = 48;

struct InspectOptions {
  ModelFileOptions model;
};

int64_t tensor_bytes(const TensorType& t) { return t.shape.numel() * dtype_bytes(t.dtype); }

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

// Attributes whose value differs from the operator's default, as
// `key=value`; required attributes are always shown. The opaque operator's
// type is part of the operator column instead.
std::string attr_summary(const Node& node) {
  std::string out;
  for (const auto& [key, value] : node.attrs.entries()) {
    if (key == AttrKey::op_type) continue;
    const AttrInfo& info = attr_info(key);
    if (!info.default_text.empty()) {
      Expected<AttrValue> def = parse_attr_value(info.type, info.default_text);
      if (def.ok() && *def == value) continue;
    }
    if (!out.empty()) out += ' ';
    out += std::string(info.name) + "=" + print_attr_value(value);
  }
  if (out.size() > kMaxAttrSummary) out = out.substr(0, kMaxAttrSummary - 3) + "...";
  return out;
}

std::string op_label(const Node& node) {
  if (node.op == Op::Opaque) return "opaque:" + node.attrs.str(AttrKey::op_type);
  return std::string(op_name(node.op));
}

std::string join_types(const std::vector<TensorType>& types) {
  std::string out;
  for (const TensorType& t : types) {
    if (!out.empty()) out += ", ";
    out += to_string(t);
  }
  return out;
}

void print_sources(std::ostream& out, const Graph& g) {
  Table table(
      {{"#", Table::Align::kRight}, {"name"}, {"kind"}, {"type"}, {"bytes", Table::Align::kRight}});
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (!is_source(n.op)) continue;
    const bool named = n.op == Op::Input || n.op == Op::Weight;
    table.add_row({std::to_string(i), named ? n.name : "-", std::string(op_name(n.op)),
                   to_string(n.outs[0]),
                   n.op == Op::Weight ? std::to_string(tensor_bytes(n.outs[0])) : "-"});
  }
  out << "sources\n";
  table.print(out, 2);
}

struct Totals {
  std::map<std::string, int> op_counts;
  std::map<std::string, int> opaque_counts;  // by ONNX op_type
  int64_t flops = 0;
};

Totals print_operators(std::ostream& out, const Graph& g) {
  Table table({{"#", Table::Align::kRight},
               {"node"},
               {"op"},
               {"attributes"},
               {"inputs"},
               {"outputs"},
               {"FLOPs", Table::Align::kRight},
               {"param bytes", Table::Align::kRight}});
  Totals totals;
  for (int i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    if (is_source(n.op)) continue;
    std::vector<TensorType> in_types;
    int64_t param_bytes = 0;
    std::set<int> weights_read;
    for (const TensorRef& r : n.args) {
      in_types.push_back(g.type(r));
      if (g.node(r.node).op == Op::Weight && weights_read.insert(r.node).second)
        param_bytes += tensor_bytes(g.type(r));
    }
    const int64_t f = flops(n.op, n.attrs, in_types, n.outs);
    totals.flops += f;
    ++totals.op_counts[std::string(op_name(n.op))];
    if (n.op == Op::Opaque) ++totals.opaque_counts[n.attrs.str(AttrKey::op_type)];
    table.add_row({std::to_string(i), n.name.empty() ? "-" : n.name, op_label(n), attr_summary(n),
                   join_types(in_types), join_types(n.outs), std::to_string(f),
                   std::to_string(param_bytes)});
  }
  out << "operators\n";
  table.print(out, 2);
  return totals;
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
  out << "graph " << g.name() << " (" << file << ")\n\n";
  print_sources(out, g);
  out << '\n';
  Totals totals = print_operators(out, g);

  out << "\noutputs\n";
  Table outputs({{"name"}, {"from"}, {"type"}});
  for (const GraphOutput& o : g.outputs())
    outputs.add_row({o.name, describe_node(g, o.ref.node), to_string(g.type(o.ref))});
  outputs.print(out, 2);

  int64_t param_bytes = 0;
  for (const Node& n : g.nodes())
    if (n.op == Op::Weight) param_bytes += tensor_bytes(n.outs[0]);
  int num_ops = 0;
  for (const auto& [name, count] : totals.op_counts) num_ops += count;

  out << "\ntotals\n";
  Table t({{"what"}, {"value"}});
  t.add_row({"operators", std::to_string(num_ops) +
                              (num_ops ? " (" + counts_line(totals.op_counts) + ")" : "")});
  t.add_row({"FLOPs", with_magnitude(totals.flops)});
  t.add_row({"param bytes", with_magnitude(param_bytes, /*binary=*/true)});
  if (!totals.opaque_counts.empty()) t.add_row({"opaque", counts_line(totals.opaque_counts)});
  t.print(out, 2, /*header=*/false);  // the totals read as a list

  if (!totals.opaque_counts.empty()) {
    int n = 0;
    for (const auto& [type, count] : totals.opaque_counts) n += count;
    out << "\nwarning: " << n << " opaque node" << (n == 1 ? "" : "s") << " ("
        << counts_line(totals.opaque_counts)
        << "): tso rewrites around them and exports them unchanged, but cannot execute them\n";
  }
}

int run_inspect(const InspectOptions& opts) {
  int code = kExitOk;
  std::optional<ModelFile> m = load_model_file(opts.model, "inspect", &code);
  if (!m) return code;
  print_report(std::cout, m->graph, opts.model.file);
  if (m->is_onnx) print_opaque_nodes(std::cout, m->onnx.opaque_nodes);
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
