#include "io/weight_loader.h"

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/quantized_weights.h"

namespace dfi::engine {
namespace {

at::ScalarType scalarTypeOf(tensorfile::DType dtype) {
  using tensorfile::DType;
  switch (dtype) {
    case DType::Bool: return at::kBool;
    case DType::U8: return at::kByte;
    case DType::I8: return at::kChar;
    case DType::I16: return at::kShort;
    case DType::I32: return at::kInt;
    case DType::I64: return at::kLong;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::F32: return at::kFloat;
    case DType::F64: return at::kDouble;
    case DType::F8_E4M3: return at::kFloat8_e4m3fn;
    case DType::F8_E5M2: return at::kFloat8_e5m2;
  }
  return at::kByte;  // unreachable: every DType is listed
}

}  // namespace

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool WeightLoader::contains(const std::string& name) const { return checkpoint_.contains(name); }

at::Tensor WeightLoader::loadStored(const std::string& name, const std::vector<int64_t>& expectedShape) const {
  if (!checkpoint_.contains(name))
    throw ValidationError("tensor missing from the checkpoint (expected shape " + shapeText(expectedShape) + ")",
                          {.file = checkpoint_.path().string(), .item = name});
  const tensorfile::TensorView view = checkpoint_.tensor(name);
  const tensorfile::TensorInfo& info = view.info();
  if (info.shape != expectedShape)
    throw ValidationError("tensor has shape " + shapeText(info.shape) + " but the config implies " +
                              shapeText(expectedShape),
                          {.file = info.file.string(), .item = name});
  return mappedTensor(view);
}

at::Tensor mappedTensor(const tensorfile::TensorView& view) {
  const tensorfile::TensorInfo& info = view.info();
  // The mapping is read-only; from_blob does not write, and callers convert before writing.
  return at::from_blob(const_cast<void*>(view.data()), info.shape,
                       at::TensorOptions().dtype(scalarTypeOf(info.dtype)));
}

const tensorfile::TensorInfo* WeightLoader::stored(const std::string& name) const {
  return checkpoint_.contains(name) ? &checkpoint_.info(name) : nullptr;
}

std::string WeightLoader::fileOf(const std::string& name) const {
  const tensorfile::TensorInfo* info = stored(name);
  return info ? info->file.string() : checkpointPath();
}

at::Tensor WeightLoader::loadPart(const std::string& name, const std::vector<int64_t>& shape) const {
  copied_.push_back(name);
  return loadStored(name, shape);
}

at::Tensor WeightLoader::load(const std::string& name, const std::vector<int64_t>& expectedShape,
                              at::Device device) const {
  if (quantized_)
    if (std::optional<at::Tensor> dequantized = quantized_->load(*this, name, expectedShape))
      return dequantized->to(device, dtype_);
  const at::Tensor mapped = loadStored(name, expectedShape);
  const tensorfile::TensorInfo& info = checkpoint_.info(name);
  // FP8 values mean nothing without their scales: a quantised checkpoint read without its
  // quantization_config, or a tensor its format does not cover.
  if (info.dtype == tensorfile::DType::F8_E4M3 || info.dtype == tensorfile::DType::F8_E5M2)
    throw FormatError("tensor dtype " + std::string(tensorfile::dtypeName(info.dtype)) +
                          " holds quantised values whose scales this load does not apply (config.json's "
                          "quantization_config names the format, e.g. quant_method fp8 with weight_scale_inv)",
                      {.file = info.file.string(), .item = name});
  if (!at::isFloatingType(mapped.scalar_type()))
    throw FormatError("tensor dtype " + std::string(tensorfile::dtypeName(info.dtype)) +
                          " is not a floating-point type",
                      {.file = info.file.string(), .item = name});
  at::Tensor loaded = mapped.to(device, dtype_);
  // A copy (to a GPU, or into another dtype) leaves the mapped pages unused: drop them from the
  // resident set, so loading a large target never holds a second host copy of its weights.
  if (!loaded.is_alias_of(mapped)) {
    checkpoint_.releasePages(name);
    copied_.push_back(name);
  }
  return loaded;
}

void WeightLoader::releaseCopiedPages() const {
  for (const std::string& name : copied_) checkpoint_.releasePages(name);
}

}  // namespace dfi::engine
