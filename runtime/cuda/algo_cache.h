// cuDNN convolution algorithms, chosen by measurement once per convolution
// signature and remembered. Which algorithms exist and how fast they run is
// the GPU's business (a measuring callback, see conv.cu); this part only
// decides: the fastest that fits the workspace limit, measured at most once
// per signature. Plain C++, tested without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/types.h"

namespace tso::cuda {

// Everything a cuDNN forward convolution's speed depends on. Padding is
// symmetric here (asymmetric padding is pre-padded by the executor).
struct ConvSignature {
  Shape x, w, y;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, groups = 1;
  bool tf32 = false;
  bool fused = false;  // cudnnConvolutionBiasActivationForward (bias + relu)

  // e.g. "x[1,64,56,56] w[64,64,3,3] y[1,64,56,56] pad=1,1 stride=1,1 dil=1,1 groups=1
  // tf32=1 fused=1"
  std::string key() const;
};

struct ConvAlgoResult {
  int algo = -1;  // cudnnConvolutionFwdAlgo_t
  int64_t workspace_bytes = 0;
  float ms = 0;
  int math = 0;  // cudnnMathType_t the timing was taken with
};

class ConvAlgoCache {
 public:
  // Times every algorithm cuDNN offers for a signature; failures of single
  // algorithms are left out, a failure to measure at all is an Error.
  using Measure = std::function<Expected<std::vector<ConvAlgoResult>>(const ConvSignature&)>;

  explicit ConvAlgoCache(int64_t workspace_limit) : workspace_limit_(workspace_limit) {}

  // The cached choice for `sig`, or measures, picks the fastest algorithm
  // whose workspace fits, and caches it. No fitting algorithm is an error
  // naming the signature.
  Expected<ConvAlgoResult> choose(const ConvSignature& sig, const Measure& measure);

  int measurements() const { return measurements_; }
  size_t size() const { return cache_.size(); }
  int64_t workspace_limit() const { return workspace_limit_; }

 private:
  int64_t workspace_limit_;
  int measurements_ = 0;
  std::map<std::string, ConvAlgoResult> cache_;
};

}  // namespace tso::cuda
