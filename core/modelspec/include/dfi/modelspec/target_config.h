#pragma once
// Typed, validated config of a target model: Qwen3 (flat), Qwen3.5 / Qwen3.6 (nested
// text_config, hybrid Gated DeltaNet + gated attention) and Qwen3-Next (flat hybrid), each
// dense or with mixture-of-experts MLPs (qwen3_moe, qwen3_5_moe, qwen3_next with experts);
// Llama 3.x and gpt-oss (sliding/full attention with sinks, clamped-SwiGLU experts, MXFP4 weights);
// MiniMax-M2 (q/k norms over all heads, partial rotary, sigmoid-routed experts) and GLM-4.5 /
// 4.6 / 4.7 (partial rotary, group-limited sigmoid routing, shared experts, dense first layers).
// Gemma 4's text model (gemma4_text, and gemma4's text_config). DeepSeek-V3 and Kimi K2 / K2.5's
// text model (multi-head latent attention, group-limited sigmoid routing, shared experts). GLM-5
// (the same, with DeepSeek sparse attention's indexer).
// parseTargetConfig normalises every spelling transformers reads (rope_theta + rope_scaling,
// rope_parameters flat or per layer type, partial_rotary_factor at either level) and throws
// dfi::ValidationError naming the file and the JSON path of the offending field.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/modelspec/decoder_geometry.h"
#include "dfi/modelspec/family_traits.h"
#include "dfi/modelspec/layer_type.h"
#include "dfi/modelspec/quantization_config.h"
#include "dfi/modelspec/rope_config.h"

namespace dfi::modelspec {

enum class TargetFamily { Qwen3, Qwen3_5, Qwen3Next, Llama, GptOss, MiniMaxM2, Glm4Moe, Gemma4, DeepseekV3, GlmMoeDsa };

std::string_view targetFamilyName(TargetFamily family);

// How a router turns its logits into the chosen experts and their weights.
enum class RouterScoring {
  // Qwen MoE: the top-k of softmax(logits), optionally renormalised.
  Softmax,
  // DeepSeek-V3's router (MiniMax-M2; GLM-4.5, DeepSeek-V3 / Kimi K2 and GLM-5 read the same
  // fields): s = sigmoid(logits); the choice is the top-k of s + e_score_correction_bias among
  // the experts of the topkGroups best of numGroups groups (a group ranked by the sum of its two
  // best biased scores); the weights are the chosen s, renormalised when normTopkProb, times
  // routedScalingFactor.
  Sigmoid,
};

// Sparse MLP parameters (qwen3_moe, qwen3_5_moe, qwen3_next with experts, minimax_m2,
// glm4_moe); absent for dense models. Which layers are sparse is moeLayer's rule.
struct MoeConfig {
  int numExperts = 0;
  int numExpertsPerToken = 0;
  int moeIntermediateSize = 0;
  // Qwen3.5-MoE and Qwen3-Next add a shared expert, scaled by sigmoid(shared_expert_gate x);
  // GLM-4.5 adds its shared experts (one MLP n_shared_experts times as wide) ungated;
  // Qwen3-MoE and MiniMax-M2 have none (0).
  int sharedExpertIntermediateSize = 0;
  bool sharedExpertGated = true;
  int decoderSparseStep = 1;
  std::vector<int> mlpOnlyLayers;  // layers that keep a dense MLP
  bool normTopkProb = true;        // renormalise the top-k probabilities to sum to one
  RouterScoring scoring = RouterScoring::Softmax;
  // Sigmoid scoring only: n_group, topk_group, routed_scaling_factor; and whether the router
  // weight and bias stay in fp32 with fp32 logits at any compute dtype (true for the DeepSeek-V3
  // line; MiniMax-M2 computes the logits in the compute dtype).
  int numGroups = 1;
  int topkGroups = 1;
  double routedScalingFactor = 1.0;
  bool routerInFp32 = false;

  bool hasSharedExpert() const { return sharedExpertIntermediateSize > 0; }
  // transformers' rule: sparse unless listed in mlp_only_layers, every decoder_sparse_step-th layer.
  bool moeLayer(int index) const;
};

// gpt-oss experts: (up + 1) * gate * sigmoid(alpha * gate) with gate clamped above at limit
// and up clamped to [-limit, limit].
struct SwigluClamp {
  double alpha = 1.702;
  double limit = 7.0;
};

// Gemma 4's per-layer inputs (PLE): a second embedding of hidden_size_per_layer_input values
// per layer, mixed with a projection of the embeddings and fed to each layer through a gate.
struct PerLayerInputs {
  int hiddenSize = 0;  // hidden_size_per_layer_input
  int vocabSize = 0;   // vocab_size_per_layer_input
};

// The attention width of one layer where layers differ (Gemma 4's full-attention layers:
// global_head_dim, num_global_key_value_heads, saved by transformers as per_layer_config).
struct AttentionShape {
  int headDim = 0;
  int numKeyValueHeads = 0;
  bool operator==(const AttentionShape&) const = default;
};
// Multi-head latent attention (DeepSeek-V3, Kimi K2): queries through a low-rank bottleneck
// (q_a_proj, q_a_layernorm, q_b_proj; one q_proj when qLoraRank is 0); keys and values expanded by
// kv_b_proj from one normed latent of kvLoraRank channels per token, shared by every head, beside
// one rotary key of qkRopeHeadDim channels shared by every head. The cache keeps the latent and
// the rotary key, as transformers' does. A head's query and key are its qkNopeHeadDim channels
// without position followed by the qkRopeHeadDim rotated ones; its value has vHeadDim.
struct LatentAttention {
  int qLoraRank = 0;  // 0: q_lora_rank null (a full-rank q_proj)
  int kvLoraRank = 0;
  int qkNopeHeadDim = 0;
  int qkRopeHeadDim = 0;
  int vHeadDim = 0;
  // rope_interleave: the rotary channels pair as (0, 1), (2, 3), ... (DeepSeek's layout) rather
  // than rotate-half's (i, i + d/2); the rotated output is stored de-interleaved, as transformers'.
  bool ropeInterleave = true;

  int qkHeadDim() const { return qkNopeHeadDim + qkRopeHeadDim; }
  bool operator==(const LatentAttention&) const = default;
};

// DeepSeek sparse attention as GLM-5 (glm_moe_dsa) configures it: a small indexer per "full" layer
// scores every earlier key for each query (its own interleaved-rope queries from the q LoRA
// output, one LayerNorm-ed key per token that it caches, per-head ReLU scores weighted by a
// projection of the input) and the latent attention attends only over the topk best of the keys
// the causal mask allows; a "shared" layer reuses the previous full layer's choice.
struct SparseAttentionIndexer {
  int numHeads = 0;  // index_n_heads
  int headDim = 0;   // index_head_dim; its first qk_rope_head_dim channels are rotated
  int topk = 0;      // index_topk
  std::vector<bool> ownIndexer;  // per layer: indexer_types "full" (true) or "shared" (false)
  bool operator==(const SparseAttentionIndexer&) const = default;
};

// The geometry is the DecoderGeometry base, read once for targets and drafters alike.
struct TargetConfig : DecoderGeometry {
  TargetFamily family = TargetFamily::Qwen3;
  std::string modelType;  // top-level model_type, one of supportedTargetModelTypes()
  std::vector<std::string> architectures;
  // Where the language-model parameters live in the config file: "" (flat) or "text_config".
  std::string textConfigPath;

  FamilyTraits traits;  // the family's layer make-up (its module in src/families/)
  bool tieWordEmbeddings = false;
  bool mlpBias = false;  // Llama: gate/up/down biases
  RopeConfig rope;  // every attention layer's, or the full-attention layers' when slidingRope is set
  std::optional<RopeConfig> slidingRope;  // Gemma 4: the sliding layers' own (rope_parameters.sliding_attention)
  std::vector<LayerType> layerTypes;  // one per layer
  std::optional<int> slidingWindow;   // Qwen3 with use_sliding_window; gpt-oss
  bool attentionSinks = false;        // gpt-oss: a learned logit per head joins each softmax

  bool attnOutputGate = false;  // Qwen3.5/Next gated attention
  int linearConvKernelDim = 0;
  int linearKeyHeadDim = 0;
  int linearValueHeadDim = 0;
  int linearNumKeyHeads = 0;
  int linearNumValueHeads = 0;
  std::optional<MoeConfig> moe;
  std::optional<SwigluClamp> swigluClamp;         // gpt-oss experts
  std::optional<QuantizationConfig> quantization;  // absent: unquantised weights (quantization_config.h)

  // Gemma 4 (all absent or zero elsewhere).
  std::vector<AttentionShape> layerAttention;  // per layer; empty: headDim and numKeyValueHeads everywhere
  bool attentionKEqV = false;  // full-attention layers have no v_proj: values are the key projection
  int numKvSharedLayers = 0;   // the last n layers reuse an earlier layer's keys and values
  bool useDoubleWideMlp = false;  // the KV-shared layers' MLPs are twice intermediate_size
  std::optional<PerLayerInputs> perLayerInputs;
  std::optional<double> finalLogitSoftcapping;  // logits = cap * tanh(logits / cap)

  // DeepSeek-V3 / Kimi K2: every layer's attention (headDim is then qkRopeHeadDim, as transformers
  // sets head_dim, and sizes the rotary embedding); absent elsewhere.
  std::optional<LatentAttention> latentAttention;
  std::optional<SparseAttentionIndexer> sparseIndexer;  // GLM-5, with latentAttention

  std::optional<int> bosTokenId;
  std::vector<int> eosTokenIds;
  std::string rawJson;  // the file as read

  int numLayersOfType(LayerType type) const;
  AttentionShape attentionShape(int layer) const;
  const RopeConfig& ropeOf(int layer) const;
  // The layer whose keys and values `layer` attends over: itself, or for a KV-shared layer the
  // last earlier layer of its type that computes its own (transformers' kv_sharing_modes).
  int kvSourceLayer(int layer) const;
  int mlpIntermediateSize(int layer) const;
};

// Also reads ModelOpt's hf_quant_config.json beside config.json when config.json has no
// quantization_config.
TargetConfig parseTargetConfig(const std::filesystem::path& configJson);
// Same, from JSON text already in memory; `origin` names the source in error messages.
TargetConfig parseTargetConfigText(std::string_view jsonText, const std::string& origin);

// The model types and architectures parseTargetConfig accepts, for messages and `info`.
const std::vector<std::string>& supportedTargetModelTypes();
const std::vector<std::string>& supportedTargetArchitectures();

}  // namespace dfi::modelspec
