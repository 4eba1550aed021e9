#pragma once
// Internal: the Qwen families' mixture-of-experts fields (Qwen3-MoE, Qwen3.5-MoE, Qwen3-Next),
// read the way each config class reads them.

#include "family_module.h"

namespace dfi::modelspec::detail {

void readQwenMoe(const ConfigObject& level, MoeFields fields, TargetConfig& c);

}  // namespace dfi::modelspec::detail
