#include "io/quantized_weights.h"

#include <algorithm>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/fp4_e2m1.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

// grid [ceil(R / rows), ceil(C / cols)] -> [R, C], each entry repeated over its rows x cols.
at::Tensor expandGrid(const at::Tensor& grid, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  return grid.repeat_interleave(rows, 0).narrow(0, 0, r).repeat_interleave(cols, 1).narrow(1, 0, c);
}

std::string dtypeNames(const std::vector<at::ScalarType>& dtypes) {
  std::string out;
  for (const at::ScalarType t : dtypes) out += (out.empty() ? "" : " or ") + std::string(c10::toString(t));
  return out;
}

}  // namespace

std::shared_ptr<const QuantizedWeights> quantizedWeightsFor(const std::optional<modelspec::QuantizationConfig>& config) {
  if (!config) return nullptr;
  using modelspec::QuantMethod;
  switch (config->kind) {
    case QuantMethod::Mxfp4: return nullptr;
    case QuantMethod::Fp8: return fp8BlockWeights(*config);
    case QuantMethod::CompressedTensors: return compressedTensorsWeights(*config);
    case QuantMethod::ModelOpt: return modelOptWeights(*config);
    case QuantMethod::Gptq:
    case QuantMethod::Awq: return gptqAwqWeights(*config);
  }
  return nullptr;
}

at::Tensor scaleByGrid(const at::Tensor& codes, const at::Tensor& scales, const at::Tensor& zeroPoints, int64_t rows,
                       int64_t cols) {
  const int64_t r = codes.size(0), c = codes.size(1);
  at::Tensor values = codes.to(at::kFloat);
  if (r % rows == 0 && c % cols == 0) {
    // Whole blocks: broadcast each grid entry over its block through a view, no expanded copy.
    const auto blocks = [&](const at::Tensor& grid) {
      return grid.to(at::kFloat).reshape({r / rows, 1, c / cols, 1});
    };
    values = values.view({r / rows, rows, c / cols, cols});
    if (zeroPoints.defined()) values = values - blocks(zeroPoints);
    return (values * blocks(scales)).view({r, c});
  }
  if (zeroPoints.defined()) values = values - expandGrid(zeroPoints.to(at::kFloat), rows, cols, r, c);
  return values * expandGrid(scales.to(at::kFloat), rows, cols, r, c);
}

void throwPartShape(const WeightLoader& weights, const std::string& tensor, const std::vector<int64_t>& found,
                    const std::vector<int64_t>& weightShape, const std::string& field,
                    const std::vector<int64_t>& implied) {
  throw ValidationError(tensor + " has shape " + shapeText(found) + " but the weight " + shapeText(weightShape) +
                            " with " + field + " implies " + shapeText(implied),
                        {.file = weights.fileOf(tensor), .item = tensor});
}

at::Tensor loadPart(const WeightLoader& weights, const std::string& tensor, const std::vector<int64_t>& weightShape,
                    const std::string& field, const std::vector<int64_t>& implied,
                    const std::vector<at::ScalarType>& dtypes) {
  const tensorfile::TensorInfo* info = weights.stored(tensor);
  if (!info)
    throw ValidationError("tensor missing from the checkpoint (the weight " + shapeText(weightShape) + " with " + field +
                              " needs it, shape " + shapeText(implied) + ")",
                          {.file = weights.checkpointPath(), .item = tensor});
  // A per-tensor scale is written as a scalar or as a one-element vector.
  const bool scalar = implied == std::vector<int64_t>{1} && info->numel() == 1 && info->shape.size() <= 1;
  if (info->shape != implied && !scalar) throwPartShape(weights, tensor, info->shape, weightShape, field, implied);
  at::Tensor part = weights.loadPart(tensor, info->shape);
  if (std::find(dtypes.begin(), dtypes.end(), part.scalar_type()) == dtypes.end())
    throw FormatError(tensor + " is stored as " + std::string(tensorfile::dtypeName(info->dtype)) + ", expected " +
                          dtypeNames(dtypes),
                      {.file = info->file.string(), .item = tensor});
  return scalar ? part.reshape({1}) : part;
}

at::Tensor unpackE2m1(const at::Tensor& packed) {
  const at::Tensor bytes = packed.contiguous();
  const int64_t r = bytes.size(0), half = bytes.size(1);
  at::Tensor values = at::empty({r, 2 * half}, at::kFloat);
  const uint8_t* in = bytes.data_ptr<uint8_t>();
  float* out = values.data_ptr<float>();
  for (int64_t i = 0; i < r * half; ++i) {
    out[2 * i] = kE2m1Values[in[i] & 0x0F];
    out[2 * i + 1] = kE2m1Values[in[i] >> 4];
  }
  return values;
}

std::optional<std::string> linearModuleOf(const std::string& name, const std::vector<int64_t>& shape) {
  constexpr std::string_view suffix = ".weight";
  if (shape.size() != 2 || name.size() <= suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  return name.substr(0, name.size() - suffix.size());
}

}  // namespace dfi::engine
