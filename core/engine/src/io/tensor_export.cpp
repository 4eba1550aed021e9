#include "io/tensor_export.h"

#include <span>

#include <ATen/ATen.h>

#include "dfi/base/error.h"

namespace dfi::engine {
namespace {

tensorfile::DType fileDType(at::ScalarType type, const std::string& name) {
  switch (type) {
    case at::kFloat: return tensorfile::DType::F32;
    case at::kBFloat16: return tensorfile::DType::BF16;
    case at::kHalf: return tensorfile::DType::F16;
    case at::kLong: return tensorfile::DType::I64;
    default: throw UsageError(std::string("cannot write a tensor of type ") + c10::toString(type), {.item = name});
  }
}

}  // namespace

void addTensor(tensorfile::SafetensorsWriter& writer, const std::string& name, const at::Tensor& tensor) {
  const at::Tensor host = tensor.to(at::kCPU).contiguous();
  const auto* bytes = static_cast<const std::byte*>(host.data_ptr());
  writer.add(name, fileDType(host.scalar_type(), name), host.sizes().vec(), std::span(bytes, host.nbytes()));
}

}  // namespace dfi::engine
