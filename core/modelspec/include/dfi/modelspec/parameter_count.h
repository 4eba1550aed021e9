#pragma once
// Parameters of a target checkpoint from its headers alone (no tensor data read): per decoder
// layer, the embeddings and the head, in total and active per token. A mixture-of-experts layer
// activates only k of its E routed experts per token, so its experts count k/E towards the
// active parameters (shared experts and the router always count).

#include <cstdint>
#include <vector>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/target_config.h"
#include "dfi/tensorfile/tensor_info.h"

namespace dfi::modelspec {

// The parameters one stored tensor holds. MXFP4 weights (gpt-oss) are stored as U8 `*_blocks`,
// two 4-bit values a byte, and U8 `*_scales`, one shared exponent per 32 values: the blocks hold
// 2 parameters a byte and the scales none (they are quantisation metadata). The other quantised
// formats likewise: packed FP4 (`weight_packed` or ModelOpt's `weight` in U8) 2 a byte, packed
// integers (`weight_packed`, `qweight` in I32) 32 / packedBits a word, and their scales, zero
// points, global scales, input scales, `weight_shape` and `g_idx` none. So the plan of a quantised
// target is of its dequantised weights.
std::uint64_t storedParameters(const tensorfile::TensorInfo& info, int packedBits = 4);

struct PartParameters {
  std::uint64_t total = 0;
  std::uint64_t routed = 0;  // of total: routed experts' parameters (mlp.experts.*; Gemma 4: experts.*)
};

struct TargetParameters {
  std::vector<PartParameters> layers;  // one per decoder layer
  PartParameters embeddings;           // model.embed_tokens
  PartParameters head;                 // model.norm and lm_head (the embeddings again when tied)
  bool headIsEmbeddings = false;       // tied, without an lm_head tensor of its own
  double routedShare = 1.0;            // k/E: the routed experts one token uses
  // Each parameter once (a tied head's embeddings are not counted twice).
  std::uint64_t total() const;
  std::uint64_t active() const;
};

// `checkpoint` opened with the text-engine mapping (tensorfile::NameMapping::qwenText, the default).
// Tensors outside the layers and the embeddings (model.norm, lm_head) count towards the head.
TargetParameters countTargetParameters(const tensorfile::Checkpoint& checkpoint, const TargetConfig& config);

}  // namespace dfi::modelspec
