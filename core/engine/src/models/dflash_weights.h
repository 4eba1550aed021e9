#pragma once
// The parameters of a DFlash drafter (docs/dflash.md 1.3) as tensors on the compute device, and
// the shape every one of them must have under a DrafterConfig.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/modelspec/weight_layout.h"
#include "models/draft_vocabulary.h"

namespace dfi::engine {

// DFlash2's grouped dynamic causal convolution (models/grouped_conv.h).
struct ConvWeights {
  at::Tensor baseKernel;        // [2, K, H]: the static kernels before (0) and after (1) the sublayer
  at::Tensor kernelProjection;  // [2*K*G, H]: the per-position dynamic kernels
};

// DFlash2's candidate selector (models/candidate_selector.h).
struct SelectorWeights {
  at::Tensor predecessorCodebook;  // [V, r]
  at::Tensor successorCodebook;    // [V, r]
  at::Tensor hiddenProjection;     // [r, H]
};

// DSpark's heads (models/dspark_heads.h); a tensor is undefined where the config has no use for it.
struct DsparkWeights {
  at::Tensor markovW1;                 // [Vt, r]: the previous token's embedding
  at::Tensor markovW2;                 // [Vd, r]: onto the draft vocabulary
  at::Tensor gateWeight, gateBias;     // gated: [r, H + r], [r]
  at::Tensor jointWeight, jointBias;   // rnn: [3r, 2r + H], [3r] (gate; candidate; output)
  at::Tensor confidenceWeight, confidenceBias;  // [1, H (+ r)], [1]
};

struct DrafterLayerWeights {
  at::Tensor inputLayernorm;
  at::Tensor qProj, kProj, vProj, oProj;
  at::Tensor qBias, kBias, vBias, oBias;  // undefined unless attention_bias (o_proj too, as Qwen3)
  at::Tensor qNorm, kNorm;
  at::Tensor postAttentionLayernorm;
  at::Tensor gateProj, upProj, downProj;
  std::optional<ConvWeights> attentionConv, mlpConv;  // DFlash2 only
};

struct DrafterWeights {
  // On the CPU in the stored dtype the tensors alias the memory map, which this keeps alive.
  std::shared_ptr<const tensorfile::Checkpoint> source;
  at::Tensor fc;          // [H, F*Ht]
  at::Tensor hiddenNorm;  // [H]
  std::vector<DrafterLayerWeights> layers;
  at::Tensor norm;        // [H]
  std::optional<SelectorWeights> selector;  // DFlash2 only
  std::optional<DsparkWeights> dspark;       // DSpark only
  std::optional<DraftVocabulary> vocabulary;  // a reduced draft vocabulary (speculators) only
};

// Reads a drafter directory, z-lab's or speculators' (their tensor names agree; speculators adds
// lm_head, d2t and t2d for a reduced vocabulary) (config.json's tensors in *.safetensors, named as
// tensorfile::NameMapping::dflashDrafter reads them), checks every tensor of
// modelspec::expectedDrafterTensors against the config (dfi::ValidationError naming the
// file, the tensor and both shapes; a missing tensor names what was looked for) and moves it
// to `dtype` on `device`. Tensors the forward does not use, and the config's warnings (fields
// the engine does not know, DrafterConfig::warnings), are logged as warnings.
DrafterWeights loadDrafterWeights(const std::filesystem::path& dir,
                                  const modelspec::DrafterConfig& config, int targetHiddenSize,
                                  at::ScalarType dtype, at::Device device);
// The same from a checkpoint already open under NameMapping::dflashDrafter (an evaluation opens
// each model directory once); the messages name checkpoint.path() as the directory.
DrafterWeights loadDrafterWeights(tensorfile::Checkpoint checkpoint, const modelspec::DrafterConfig& config,
                                  int targetHiddenSize, at::ScalarType dtype, at::Device device);

}  // namespace dfi::engine
