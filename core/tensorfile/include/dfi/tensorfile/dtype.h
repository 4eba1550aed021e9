#pragma once
// Element types as safetensors names them, with their sizes. Every dtype found in LLM
// checkpoints is here; the reader honours the dtype of each tensor separately.

#include <cstddef>
#include <optional>
#include <string_view>

namespace dfi::tensorfile {

enum class DType {
  Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64, F8_E4M3, F8_E5M2,
};

// "BF16" -> DType::BF16; nullopt for a name safetensors does not define.
std::optional<DType> parseDType(std::string_view name);
std::string_view dtypeName(DType dtype);
std::size_t dtypeSize(DType dtype);

}  // namespace dfi::tensorfile
