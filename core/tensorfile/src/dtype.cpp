#include "dfi/tensorfile/dtype.h"

#include <array>
#include <utility>

namespace dfi::tensorfile {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array kDTypes{
    DTypeInfo{DType::Bool, "BOOL", 1},      DTypeInfo{DType::U8, "U8", 1},
    DTypeInfo{DType::I8, "I8", 1},          DTypeInfo{DType::I16, "I16", 2},
    DTypeInfo{DType::I32, "I32", 4},        DTypeInfo{DType::I64, "I64", 8},
    DTypeInfo{DType::F16, "F16", 2},        DTypeInfo{DType::BF16, "BF16", 2},
    DTypeInfo{DType::F32, "F32", 4},        DTypeInfo{DType::F64, "F64", 8},
    DTypeInfo{DType::F8_E4M3, "F8_E4M3", 1}, DTypeInfo{DType::F8_E5M2, "F8_E5M2", 1},
};

const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }

}  // namespace

std::optional<DType> parseDType(std::string_view name) {
  for (const auto& entry : kDTypes)
    if (entry.name == name) return entry.dtype;
  return std::nullopt;
}

std::string_view dtypeName(DType dtype) { return info(dtype).name; }
std::size_t dtypeSize(DType dtype) { return info(dtype).size; }

}  // namespace dfi::tensorfile
