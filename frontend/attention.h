// Attention (opset 23: torch.export writes F.scaled_dot_product_attention as
// one) as the IR's products, softmax and masks (internal to frontend/).
//
// Q [B, Hq, Sq, D], K [B, Hkv, Skv, D] and V [B, Hkv, Skv, Dv], or their 3-D
// forms [B, S, H * D] with q_num_heads and kv_num_heads, which are split into
// heads first and merged back after. The past key and value caches, when
// given, are concatenated before K and V along the sequence (the present
// outputs); with fewer key heads than query heads (grouped-query attention)
// each key head is repeated for its group of query heads. Then
//
//   scores = Q K^T * scale         (scale 1 / sqrt(D) unless given)
//   scores = softcap tanh(scores / softcap)    when softcap > 0
//   scores = scores + bias         attn_mask (a bool mask as 0 or -inf) and,
//                                  with is_causal, -inf above the diagonal
//                                  shifted by the past's length
//   Y = softmax(scores) V
//
// A query row whose every key is masked is a zero row, as the operator
// specifies, not NaN: where the mask is not a constant known to leave a key
// to every row, the softmax is replaced by 0 on rows whose bias has no
// finite entry. qk_matmul_output is the scores at the stage its mode names.
// Attention-24's nonpad_kv_seqlen, Attention-25's sliding windows and a
// softmax precision other than the input's leave the node opaque.
#pragma once

#include "core/error.h"
#include "frontend/import_ops.h"

namespace tso::onnx_frontend {

Expected<Mapped> map_attention(NodeContext& ctx);

}  // namespace tso::onnx_frontend
