#pragma once
// What a target family's decoder layers are made of, as its transformers modeling file builds
// them. The engine's layers and the expected weight layout read these traits instead of
// switching on the family, so a new family states them once, in its module
// (core/modelspec/src/families/).

namespace dfi::modelspec {

// The RMSNorm of the layer, final and q/k norms: x * w (Qwen3RMSNorm, LlamaRMSNorm);
// x * (1 + w) with w stored zero-centred (Qwen3_5RMSNorm, Qwen3NextRMSNorm); x * w computed in
// fp32 with w kept in fp32 at any dtype (GptOssRMSNorm, _keep_in_fp32_modules); x * w computed
// in fp32 with w kept in the compute dtype and upcast (Gemma4RMSNorm: plain w, not 1 + w).
enum class NormKind { Plain, ZeroCentred, Fp32Weight, Fp32Compute };

// The MLP of each decoder layer: a dense SwiGLU, or routed SwiGLU experts on the layers
// MoeConfig::moeLayer names (Qwen MoE's, MiniMax-M2's); or gpt-oss's clamped-SwiGLU experts on
// every layer; or Gemma 4's feed-forward block (its own pre/post norms, a dense GELU MLP and,
// with enable_moe_block, routed experts beside it whose outputs are added).
enum class MlpKind { DenseOrQwenMoe, GptOssExperts, Gemma4 };

// The gate activation of the gated MLPs and experts: silu (SwiGLU) or GELU with the tanh
// approximation (Gemma's gelu_pytorch_tanh).
enum class MlpActivation { Silu, GeluTanh };

struct FamilyTraits {
  NormKind norm = NormKind::Plain;
  bool qkNorm = true;  // per-head RMSNorm on queries and keys before the rotary embedding
  // The q/k RMSNorm spans all heads' channels at once (MiniMax-M2: weights [heads * head_dim]
  // and [kv_heads * head_dim]) instead of each head's.
  bool qkNormAcrossHeads = false;
  // attention_bias gives o_proj a bias too (Qwen, Llama, gpt-oss); GLM-4.5's covers q/k/v only.
  bool attentionBiasOnOutput = true;
  MlpKind mlp = MlpKind::DenseOrQwenMoe;
  MlpActivation activation = MlpActivation::Silu;
  // Gemma 4: the attention output is normed before the residual add (post_attention_layernorm,
  // where other families norm the MLP input with it); the MLP kind brings its own pre and post norms.
  bool sandwichNorms = false;
  bool scaledEmbeddings = false;    // Gemma: embeddings times sqrt(hidden_size), rounded to the dtype
  bool unitAttentionScale = false;  // Gemma 4: scores are q.k unscaled (q and k are RMS-normed)
  bool valueNorm = false;           // Gemma 4: a weightless RMSNorm on the values
  // expectedTargetTensors knows the family's dense layout. Qwen3-Next's fused projections and
  // gpt-oss's experts are stored in more than one layout and are checked at load instead.
  bool fixedTensorLayout = true;
};

}  // namespace dfi::modelspec
