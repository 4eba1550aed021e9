#include "latent_attention_fields.h"

namespace dfi::modelspec::detail {

void readLatentAttention(const ConfigObject& level, TargetConfig& c, const LatentAttentionDefaults& defaults) {
  LatentAttention mla = defaults.shape;
  // A null q_lora_rank (present, unlike an absent one, which takes the class default) asks for one
  // full-rank q_proj where the family has it.
  const bool nullQueryRank = level.json().contains("q_lora_rank") && level.json()["q_lora_rank"].is_null();
  if (nullQueryRank && defaults.fullRankQuery)
    mla.qLoraRank = 0;
  else if (nullQueryRank)
    level.problems().add(level.pathOf("q_lora_rank"), "must be a rank: this family has no full-rank query");
  else
    mla.qLoraRank = level.optionalInt("q_lora_rank", 1, kMaxHeadDim).value_or(mla.qLoraRank);
  mla.kvLoraRank = level.optionalInt("kv_lora_rank", 1, kMaxHeadDim).value_or(mla.kvLoraRank);
  mla.qkNopeHeadDim = level.optionalInt("qk_nope_head_dim", 0, kMaxHeadDim).value_or(mla.qkNopeHeadDim);
  mla.qkRopeHeadDim = level.optionalInt("qk_rope_head_dim", 2, kMaxHeadDim).value_or(mla.qkRopeHeadDim);
  mla.vHeadDim = level.optionalInt("v_head_dim", 1, kMaxHeadDim).value_or(mla.vHeadDim);
  if (defaults.ropeInterleaveField) mla.ropeInterleave = level.optionalBool("rope_interleave").value_or(mla.ropeInterleave);
  if (mla.qkRopeHeadDim % 2 != 0)
    level.problems().add(level.pathOf("qk_rope_head_dim"),
                         std::to_string(mla.qkRopeHeadDim) + " is odd: rotary channels come in pairs");
  // Both config classes' __post_init__: head_dim = qk_rope_head_dim (what the rotary embedding
  // spans), whatever the file says.
  c.headDim = mla.qkRopeHeadDim;
  c.latentAttention = mla;
}

}  // namespace dfi::modelspec::detail
