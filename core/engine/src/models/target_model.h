#pragma once
// A target model (Qwen3, Qwen3.5 / Qwen3.6 hybrid, Qwen3-Next, Llama, gpt-oss, Gemma 4; dense or
// mixture-of-experts MLPs) loaded from a Hugging Face directory and run with libtorch,
// numerically matching transformers: embeddings (scaled for Gemma), per-layer inputs (Gemma 4),
// decoder layers, final norm, lm head (tied or not; soft-capped where the config says), optional
// KV / linear-attention cache and hidden-state taps.

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/engine/model_options.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/target_config.h"
#include "io/placement.h"
#include "kernels/rotary.h"
#include "models/decoder_layer.h"
#include "models/model_cache.h"
#include "models/per_layer_inputs.h"

namespace dfi::engine {

struct ForwardRequest {
  // Decoder-layer ids whose outputs to return (transformers' hidden_states[id + 1] and the
  // DFlash target_layer_ids convention). A tap of the last layer is its raw output, before
  // the final norm.
  std::vector<int> tapLayers;
  bool statistics = false;  // per tapped layer and position: mean, std, rms, abs-max
  bool routing = false;     // per tapped layer with experts: the experts chosen per position
  bool logits = true;
  // Logits of the last `logitsToKeep` positions only (0: every position), as transformers'
  // logits_to_keep: a prompt's prefill needs the last position's, and the LM head over a long
  // prompt and a real vocabulary is gigabytes (2000 x 151936 floats).
  std::int64_t logitsToKeep = 0;
  // Let the cache be cropped back into this forward afterwards (verification blocks).
  bool rewindable = false;
};

struct ForwardOutput {
  at::Tensor logits;       // [B, T, V] (T = logitsToKeep if set) in the compute dtype (undefined unless requested)
  at::Tensor finalHidden;  // [B, T, H] after the final norm (hidden_states[L] in transformers)
  std::vector<at::Tensor> taps;        // per tapLayers entry: [B, T, H], on that layer's device
  std::vector<at::Tensor> statistics;  // per tapLayers entry: [B, T, 4] fp32 (see hidden_stats.h)
  // With request.routing, per tapLayers entry: [B, T, k] experts and weights (undefined
  // tensors for a layer with a dense MLP).
  std::vector<ExpertRouting> routing;
};

class TargetModel {
 public:
  // Reads config.json and the safetensors weights of `dir`; throws dfi::Error subclasses
  // naming the file and tensor for anything missing or inconsistent.
  static std::unique_ptr<TargetModel> load(const std::filesystem::path& dir, const ModelOptions& options);
  // The same from a checkpoint and config already open (an evaluation opens each model
  // directory once): the memory plan is checked first, then the weights are copied out.
  static std::unique_ptr<TargetModel> load(tensorfile::Checkpoint checkpoint, modelspec::TargetConfig config,
                                           const ModelOptions& options);

  TargetModel(tensorfile::Checkpoint checkpoint, modelspec::TargetConfig config, const ModelOptions& options);

  const modelspec::TargetConfig& config() const { return config_; }
  const Placement& placement() const { return placement_; }
  const tensorfile::Checkpoint& checkpoint() const { return checkpoint_; }
  int numLayers() const { return static_cast<int>(layers_.size()); }
  bool layerHasExperts(int layer) const { return layers_.at(layer).hasExperts(); }

  ModelCache newCache() const;

  // ids: [B, T] int64 (any device). With a cache the tokens continue it (positions start at
  // cache->length()) and the cache is advanced.
  ForwardOutput forward(const at::Tensor& ids, ModelCache* cache, const ForwardRequest& request = {}) const;

  // The embeddings the decoder stack receives (transformers' hidden_states[0]: times
  // sqrt(hidden_size) for Gemma) and the lm head with any final logit soft-capping (on the last device).
  at::Tensor embed(const at::Tensor& ids) const;
  at::Tensor lmHead(const at::Tensor& hidden) const;
  // Throws dfi::UsageError (item "ids") naming the first id outside the vocabulary and its position.
  void checkTokenIds(std::span<const std::int64_t> ids) const;
  // The weights themselves, for a drafter that shares them (no copy: tensors are handles). A
  // DFlash drafter embeds with the raw matrix (times its own input_embedding_scale).
  const at::Tensor& embeddingWeight() const { return embedTokens_; }
  const at::Tensor& lmHeadWeight() const { return lmHead_; }

 private:
  tensorfile::Checkpoint checkpoint_;  // keeps CPU tensors that alias the memory map valid
  modelspec::TargetConfig config_;
  Placement placement_;
  std::vector<Rotary> rotaries_;   // one per distinct (rope, head width) among the layers
  std::vector<int> rotaryOfLayer_;  // index into rotaries_ per layer
  at::Tensor embedTokens_, embedScale_, finalNorm_, lmHead_;  // embedScale_: 0-dim, undefined unless scaled
  std::optional<PerLayerInputs> perLayerInputs_;
  bool sharesKv_ = false;  // some layer attends over another's keys and values
  std::vector<DecoderLayer> layers_;
};

}  // namespace dfi::engine
