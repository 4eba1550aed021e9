#pragma once
// Internal: the layers of the hybrid Qwen families (Qwen3.5 / 3.6 and Qwen3-Next): Gated
// DeltaNet linear attention with every full_attention_interval-th layer gated full attention.

#include "family_module.h"

namespace dfi::modelspec::detail {

void readHybridLayers(const ConfigObject& level, TargetConfig& c);

}  // namespace dfi::modelspec::detail
