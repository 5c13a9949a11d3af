// Resize of a computed tensor in every mode end to end through the binary:
// linear to odd sizes (a segmentation head's upsampling to the input's size),
// cubic by fractional scales with align_corners, cubic with exclude_outside
// and another coefficient, and nearest by factors that are not whole numbers,
// downsampling one axis while upsampling the other. The model, built here,
// imports with no opaque node (each resize a sum of gathers of its taps),
// optimizes (checked), and computes what ONNX Runtime computes, on tso's CPU
// runtime and reference executor and in ONNX Runtime on the file tso writes.
// The close variant that tso does not map, an antialiased resize, stays
// opaque and is refused by name rather than run as a plain one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "frontend/onnx_test_util.h"
#include "onnx/onnx_pb.h"
#include "tests/binary_run.h"
#include "tests/frontend_test_util.h"
#include "tests/optimized_model_test_util.h"

namespace tso {
namespace {

namespace fs = std::filesystem;

using testing::add_node;
using testing::set_float;
using testing::set_int;
using testing::set_ints;
using testing::set_string;

// x: f32[1,3,5,7] -> Conv 3x3 (4 channels) -> Relu -> Resize linear to
// [12, 10] -> Resize cubic, align_corners, by [0.5, 1.5] to [6, 15] ->
// Resize cubic, exclude_outside, a = -0.5, to [8, 15] -> Resize nearest,
// asymmetric, floor, to [5, 20] -> Relu = y: f32[1,4,5,20]. The scales
// give whole extents: where scale * extent is not whole, ONNX Runtime's
// align_corners divides by the rounded extent, ONNX's reference and tso by
// the exact one. `antialias`: the first resize antialiased, its output
// typed by value_info (Debian's libonnx predates Resize-18's attribute).
fs::path write_model(const fs::path& dir, bool antialias) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("resize");
  testing::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 5, 7});
  testing::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, 4, 5, 20});
  std::mt19937_64 rng(53);
  testing::add_random_floats(g, "w", {4, 3, 3, 3}, rng);
  testing::add_i64s(g, "to_12x10", {1, 4, 12, 10});
  testing::add_f32s(g, "by_half_and_a_half", {1.0f, 1.0f, 0.5f, 1.5f});
  testing::add_i64s(g, "to_8x15", {1, 4, 8, 15});
  testing::add_i64s(g, "to_5x20", {1, 4, 5, 20});
  set_ints(add_node(g, "Conv", {"x", "w"}, "c"), "pads", {1, 1, 1, 1});
  add_node(g, "Relu", {"c"}, "a");
  onnx::NodeProto* up = add_node(g, "up", "Resize", {"a", "", "", "to_12x10"}, "r1");
  set_string(up, "mode", "linear");
  if (antialias) {
    set_int(up, "antialias", 1);
    testing::declare(g->add_value_info(), "r1", onnx::TensorProto::FLOAT, {1, 4, 12, 10});
  }
  onnx::NodeProto* cubic = add_node(g, "cubic", "Resize", {"r1", "", "by_half_and_a_half"}, "r2");
  set_string(cubic, "mode", "cubic");
  set_string(cubic, "coordinate_transformation_mode", "align_corners");
  onnx::NodeProto* outside = add_node(g, "outside", "Resize", {"r2", "", "", "to_8x15"}, "r3");
  set_string(outside, "mode", "cubic");
  set_int(outside, "exclude_outside", 1);
  set_float(outside, "cubic_coeff_a", -0.5f);
  onnx::NodeProto* nearest = add_node(g, "nearest", "Resize", {"r3", "", "", "to_5x20"}, "r4");
  set_string(nearest, "coordinate_transformation_mode", "asymmetric");
  set_string(nearest, "nearest_mode", "floor");
  add_node(g, "Relu", {"r4"}, "y");
  const fs::path p = dir / (antialias ? "resize_antialias.onnx" : "resize.onnx");
  std::ofstream(p, std::ios::binary) << m.SerializeAsString();
  return p;
}

testing::RunResult tso(const std::vector<std::string>& args, const fs::path& scratch) {
  return testing::run_binary(TSO_BINARY, args, scratch);
}

TEST(ResizeCli, EveryModeOfAComputedTensorMatchesOnnxRuntime) {
  if (!testing::have_python_oracle()) GTEST_SKIP() << testing::kNoVenv;
  const fs::path dir = testing::temp_dir("resize_cli");
  const fs::path model = write_model(dir, false), out = dir / "optimized.onnx";
  const std::string listing = testing::inspect_without_opaque_nodes(model, dir);
  EXPECT_NE(listing.find("gather"), std::string::npos) << listing;
  testing::optimize_checked_for_h100(model, out, dir);
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 5, 7}, 59);
  testing::expect_outputs_match_onnx_runtime(model, out, dir / "in", 1, dir);
  fs::remove_all(dir);
}

TEST(ResizeCli, AnAntialiasedResizeStaysOpaqueAndIsRefusedByName) {
  const fs::path dir = testing::temp_dir("resize_cli_antialias");
  const fs::path model = write_model(dir, true);
  testing::RunResult inspect = tso({"inspect", model.string()}, dir);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("opaque:Resize"), std::string::npos) << inspect.out;
  testing::write_random_input(dir / "in", "x", Shape{1, 3, 5, 7}, 59);
  testing::RunResult r =
      tso({"run", model.string(), "--iters", "1", "--inputs", (dir / "in").string()}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("node 'up' (opaque) is the ONNX operator 'Resize'"), std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tso
