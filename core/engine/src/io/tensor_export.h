#pragma once
// Engine tensors into .safetensors files (`forward`, `draft`): copied to host memory in their
// own dtype, so a file holds exactly what the engine computed.

#include <string>

#include <ATen/core/Tensor.h>

#include "dfi/tensorfile/safetensors_writer.h"

namespace dfi::engine {

// fp32, bf16, fp16 and int64 tensors; anything else is refused with a UsageError.
void addTensor(tensorfile::SafetensorsWriter& writer, const std::string& name, const at::Tensor& tensor);

}  // namespace dfi::engine
