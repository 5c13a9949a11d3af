// A graph in the canonical text format with stored values in its weights,
// for tests whose graphs must run or whose rules read weight values (the
// scales and zero points of a quantized model, token ids, class tokens).
// Header-only, for tests (it reports through GoogleTest).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/text_format.h"

namespace tso::testing {

// The bytes of `values` in element type `t` (f32, f64, i64, i32, u8 or i8).
inline std::vector<std::byte> bytes_in(DType t, const std::vector<double>& values) {
  std::vector<std::byte> b(values.size() * dtype_bytes(t));
  for (size_t k = 0; k < values.size(); ++k) {
    std::byte* p = b.data() + k * dtype_bytes(t);
    auto put = [p](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (t) {
      case DType::kF32:
        put(static_cast<float>(values[k]));
        break;
      case DType::kF64:
        put(values[k]);
        break;
      case DType::kI64:
        put(static_cast<int64_t>(values[k]));
        break;
      case DType::kI32:
        put(static_cast<int32_t>(values[k]));
        break;
      default:
        *p = std::byte(static_cast<uint8_t>(static_cast<int>(values[k])));
        break;
    }
  }
  return b;
}

// `text` parsed, with the bytes `fill(weight)` gives stored in every
// weight that has none (a parse failure is a test failure and an empty
// graph). Weights are filled in the order the text declares them.
template <class Fill>
Graph with_stored(std::string_view text, Fill fill) {
  Expected<Graph> p = parse_graph(text, "<test>");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  if (!p) return Graph{};
  GraphBuilder b(p->name());
  for (const Node& n : p->nodes()) {
    Node copy = n;
    if (n.op == Op::Weight && !n.data) {
      auto w = std::make_shared<WeightData>();
      w->type = n.outs[0];
      w->bytes = fill(n);
      copy.data = std::move(w);
    }
    b.add_node(std::move(copy));
  }
  for (const GraphOutput& o : p->outputs()) b.output(o.name, o.ref);
  Expected<Graph> g = b.finish();
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(*g) : Graph{};
}

// The bytes of f32 `values`.
inline std::vector<std::byte> float_bytes(const std::vector<float>& values) {
  std::vector<std::byte> b(values.size() * sizeof(float));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// `text` with every weight stored: those named in `values` hold them, in
// the weight's element type; the others hold seeded floats in [-1, 1).
inline Graph with_values(std::string_view text,
                         const std::map<std::string, std::vector<double>>& values) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  return with_stored(text, [&](const Node& n) {
    if (auto it = values.find(n.name); it != values.end()) {
      EXPECT_EQ(static_cast<int64_t>(it->second.size()), n.outs[0].shape.numel()) << n.name;
      return bytes_in(n.outs[0].dtype, it->second);
    }
    std::vector<double> v(n.outs[0].shape.numel());
    for (double& x : v) x = u(rng);
    return bytes_in(n.outs[0].dtype, v);
  });
}

}  // namespace tso::testing
