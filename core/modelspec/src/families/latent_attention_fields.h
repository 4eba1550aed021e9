#pragma once
// Internal: the multi-head latent attention fields DeepSeek-V3 (deepseek_v3, Kimi K2) and GLM-5
// (glm_moe_dsa) read alike: q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
// v_head_dim. Only their config classes' defaults differ, and whether the file may ask for a
// full-rank query (DeepSeek-V3's q_lora_rank null) or another rotary layout (rope_interleave).

#include "family_module.h"

namespace dfi::modelspec::detail {

struct LatentAttentionDefaults {
  LatentAttention shape;       // the config class's defaults for every field
  bool fullRankQuery = false;  // q_lora_rank may be null (one q_proj)
  bool ropeInterleaveField = false;  // rope_interleave is read (otherwise shape.ropeInterleave always)
};

// Fills c.latentAttention, and c.headDim = qk_rope_head_dim as both config classes set head_dim.
void readLatentAttention(const ConfigObject& level, TargetConfig& c, const LatentAttentionDefaults& defaults);

}  // namespace dfi::modelspec::detail
