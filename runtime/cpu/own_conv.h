// What tso's own convolution kernels (winograd.h, grouped_conv.h) share as
// the plan sees them: the group's post-ops as an epilogue, timing against
// oneDNN's direct kernel, and the steps that run one. Internal to runtime/cpu.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "runtime/cpu/builder.h"
#include "runtime/cpu/epilogue.h"
#include "runtime/cpu/measure.h"

namespace tso::cpu {

// An epilogue step with its operand as a plan tensor (bound at run time).
struct EpiloguePlan {
  EpilogueOp::Kind kind;
  int tensor = -1;
  float lo = 0, hi = 0;
};

// The group's bias, batchnorm, residual and activations as an epilogue;
// false when one of them has no epilogue form.
bool epilogue_of(Builder& b, const FusionGroup& group, const memory::desc& nhwc,
                 std::vector<EpiloguePlan>* out);

// An own convolution kernel as the plan sees it (its weights transform and
// its run), so that timing and step building do not depend on the kernel.
struct OwnConv {
  std::string what;  // for profiles
  int64_t weights_floats = 0, scratch_bytes = 0;
  std::function<void(const float* oihw, float* out)> transform_weights;
  std::function<void(const float* src, const float* weights, float* dst, std::byte* scratch,
                     std::span<const EpilogueOp> epilogue, dnnl::stream& stream)>
      run;
};

// The best time of `conv` on scratch buffers (inputs zero); `bound` as in best_ms.
double time_own(const dnnl::engine& engine, const OwnConv& conv, int64_t src_floats,
                int64_t dst_floats, int64_t channels, const std::vector<EpiloguePlan>& epilogue,
                double bound);

// The steps of `conv` for `group`: its weights transformed once (a prologue
// step), then one run step from the NHWC input to the NHWC output.
void add_own_conv(Builder& b, const FusionGroup& group, const OwnConv& conv,
                  const std::vector<EpiloguePlan>& epilogue, const memory::desc& nhwc_in,
                  const memory::desc& nhwc_out);

// Whether to use an own kernel: forced by `choice`, or measured against the
// direct convolution (candidate 0); the index of the winner.
int choose(Builder& b, ExecutorOptions::Choice choice, const std::string& key,
           const std::vector<Candidate>& candidates);

}  // namespace tso::cpu
