// ONNX Resize's geometry, shared by its mappings (import_repeat.cc: nearest
// by whole factors; resize_gather.cc: any other) and its fold
// (fold_resize.cc: any mode, of constants): the output extent and scale of
// each axis, and which input elements an output element reads, with what
// weights (internal to frontend/).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "frontend/constant_folding.h"
#include "onnx/onnx_pb.h"

namespace tso::onnx_frontend {

struct ResizePlan {
  std::vector<int64_t> out;   // the output's extents
  std::vector<double> scale;  // output / input along each axis, as the node gives it
  std::string mode;           // nearest, linear or cubic
  std::string transform;      // coordinate_transformation_mode
  std::string rounding;       // nearest_mode
};

// The plan of a Resize of an input of shape `x` by constant `scales` or
// `sizes` (either may be null; sizes win when both are given and non-empty,
// as ONNX wants only one). An Error for a malformed node; `*unsupported`
// says why a well-formed node is left alone (keep_aspect_ratio_policy with
// sizes, antialias, tf_crop_and_resize).
Expected<ResizePlan> plan_resize(const onnx::NodeProto& n, const Shape& x, const HostTensor* scales,
                                 const HostTensor* sizes, std::string* unsupported);

// The input coordinate output element `o` of an axis resized from `in` to
// `out` elements by `scale` reads under `transform`.
double source_coordinate(const std::string& transform, int64_t o, int64_t in, int64_t out,
                         double scale);

// The input element nearest mode reads at coordinate `x` of an axis of `in`
// elements: rounded as `rounding` says, clamped to the axis.
int64_t nearest_index(const std::string& rounding, double x, int64_t in);

// (input element, weight) pairs of one output element along an axis.
using ResizeTaps = std::vector<std::pair<int64_t, double>>;

// The taps of output element `o` of axis `d`, of `in` input elements, as
// ONNX's reference weighs them: nearest's one element, linear's two and
// cubic's four neighbours (cubic_coeff_a of node `n`), the axis's edge
// repeated past its ends, or those outside left out and the rest
// renormalized with exclude_outside.
ResizeTaps resize_taps(const ResizePlan& p, const onnx::NodeProto& n, int d, int64_t o,
                       int64_t in);

}  // namespace tso::onnx_frontend
