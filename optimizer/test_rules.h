// Rule texts for the optimizer's tests: the classic TASO rewrites written by
// hand (conv+relu fusion, merging convs that share an input, enlarging a 1x1
// kernel to merge it with a 3x3 one, merging two or three matmuls that share
// an input, of any rank 2..4 as the generator's lifted copies state them),
// marked verified so the tests exercise the default rule filter.
#pragma once

namespace tso::opt::testing {

inline constexpr const char* kClassicRules = R"(# tso rules v1

rule t_fuse_conv_relu {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w: f32[4,4,3,3]
  param ?s = [1,1]
  param ?p = same
  source {
    %0 = conv2d(x, w, stride=?s, pad=?p)
    %1 = relu(%0)
    output %1
  }
  target {
    %0 = conv2d(x, w, stride=?s, pad=?p, act=relu)
    output %0
  }
}

rule t_merge_conv {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w1: f32[4,4,3,3]
  input w2: f32[4,4,3,3]
  param ?p = same
  param ?a = none
  source {
    %0 = conv2d(x, w1, pad=?p, act=?a)
    %1 = conv2d(x, w2, pad=?p, act=?a)
    output %0, %1
  }
  target {
    %0 = concat(w1, w2, axis=0)
    %1 = conv2d(x, %0, pad=?p, act=?a)
    %2, %3 = split(%1, axis=1, sizes=[dim(w1,0), dim(w2,0)])
    output %2, %3
  }
}

rule t_merge_conv_enlarge {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w1: f32[4,4,1,1]
  input w2: f32[4,4,3,3]
  param ?a = none
  where dim(w1,2) == 1
  where dim(w1,3) == 1
  where odd(dim(w2,2))
  source {
    %0 = conv2d(x, w1, pad=same, act=?a)
    %1 = conv2d(x, w2, pad=same, act=?a)
    output %0, %1
  }
  target {
    %0 = enlarge(w1, kernel=[dim(w2,2), dim(w2,3)])
    %1 = concat(%0, w2, axis=0)
    %2 = conv2d(x, %1, pad=same, act=?a)
    %3, %4 = split(%2, axis=1, sizes=[dim(w1,0), dim(w2,0)])
    output %3, %4
  }
}

rule t_merge_matmul {
  origin handwritten
  status verified specs=test
  input x: f32[4,6]
  input w1: f32[6,3]
  input w2: f32[6,5]
  rank x in 2..4
  source {
    %0 = matmul(x, w1)
    %1 = matmul(x, w2)
    output %0, %1
  }
  target {
    %0 = concat(w1, w2, axis=1)
    %1 = matmul(x, %0)
    %2, %3 = split(%1, axis=-1, sizes=[dim(w1,1), dim(w2,1)])
    output %2, %3
  }
}

rule t_merge_matmul3 {
  origin handwritten
  status verified specs=test
  input x: f32[4,6]
  input w1: f32[6,3]
  input w2: f32[6,5]
  input w3: f32[6,2]
  rank x in 2..4
  source {
    %0 = matmul(x, w1)
    %1 = matmul(x, w2)
    %2 = matmul(x, w3)
    output %0, %1, %2
  }
  target {
    %0 = concat(w1, w2, w3, axis=1)
    %1 = matmul(x, %0)
    %2, %3, %4 = split(%1, axis=-1, sizes=[dim(w1,1), dim(w2,1), dim(w3,1)])
    output %2, %3, %4
  }
}

rule t_concat_of_split {
  origin handwritten
  status verified specs=test
  input x: f32[1,8,8,8]
  param ?ax = 1
  param ?sz = [4,4]
  source {
    %0, %1 = split(x, axis=?ax, sizes=?sz)
    %2 = concat(%0, %1, axis=?ax)
    output %2
  }
  target {
    output x
  }
}
)";

// Two rules whose composition merges a 1x1 and a 3x3 convolution of one
// input, as t_merge_conv_enlarge does in one step: the enlarged kernel costs
// more before the merge pays (the search's lookahead, search.h).
inline constexpr const char* kPlateauRules = R"(# tso rules v1

rule t_enlarge {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w: f32[4,4,1,1]
  where dim(w,2) == 1
  where dim(w,3) == 1
  source {
    %0 = conv2d(x, w, pad=same)
    output %0
  }
  target {
    %0 = enlarge(w, kernel=[3,3])
    %1 = conv2d(x, %0, pad=same)
    output %1
  }
}

rule t_merge_conv_same {
  origin handwritten
  status verified specs=test
  input x: f32[1,4,8,8]
  input w1: f32[4,4,3,3]
  input w2: f32[4,4,3,3]
  source {
    %0 = conv2d(x, w1, pad=same)
    %1 = conv2d(x, w2, pad=same)
    output %0, %1
  }
  target {
    %0 = concat(w1, w2, axis=0)
    %1 = conv2d(x, %0, pad=same)
    %2, %3 = split(%1, axis=1, sizes=[dim(w1,0), dim(w2,0)])
    output %2, %3
  }
}
)";

}  // namespace tso::opt::testing
