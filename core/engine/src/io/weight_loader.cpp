#include "io/weight_loader.h"

#include <ATen/ATen.h>

#include "dfi/base/error.h"

namespace dfi::engine {
namespace {

at::ScalarType scalarTypeOf(tensorfile::DType dtype, const tensorfile::TensorInfo& info) {
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
    case DType::F8_E4M3:
    case DType::F8_E5M2: break;
  }
  // FP8 weights need their block scales (a quantised checkpoint), which this engine does not read.
  throw FormatError("tensor dtype " + std::string(tensorfile::dtypeName(dtype)) +
                        " is not supported for model weights (expected F32, BF16 or F16)",
                    {.file = info.file.string(), .item = info.name});
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
                       at::TensorOptions().dtype(scalarTypeOf(info.dtype, info)));
}

at::Tensor WeightLoader::load(const std::string& name, const std::vector<int64_t>& expectedShape,
                              at::Device device) const {
  const at::Tensor mapped = loadStored(name, expectedShape);
  if (!at::isFloatingType(mapped.scalar_type())) {
    const tensorfile::TensorInfo& info = checkpoint_.info(name);
    throw FormatError("tensor dtype " + std::string(tensorfile::dtypeName(info.dtype)) +
                          " is not a floating-point type",
                      {.file = info.file.string(), .item = name});
  }
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
