#pragma once
// Internal: reads a quantization_config (config.json's, or ModelOpt's hf_quant_config.json)
// into QuantizationConfig, recording every problem with its JSON path.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config_json.h"
#include "dfi/modelspec/quantization_config.h"

namespace dfi::modelspec::detail {

// `familyMethods`: the methods only this family's layers dequantise (gpt-oss: mxfp4); the
// methods that quantise linear weights (fp8, compressed-tensors, modelopt, gptq, awq) are
// read for every family, since every family loads its projections through one loader.
std::optional<QuantizationConfig> readQuantizationConfig(const ConfigObject& q, const std::string& modelType,
                                                         const std::vector<std::string>& familyMethods);

// ModelOpt writes its quantisation beside config.json, in hf_quant_config.json:
// {"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": [...]}}.
// nullopt when the directory has no such file.
std::optional<QuantizationConfig> readHfQuantConfig(const std::filesystem::path& modelDir);

}  // namespace dfi::modelspec::detail
