// NVIDIA ModelOpt NVFP4 checkpoints (quant_method "modelopt", quant_algo NVFP4; the settings
// in config.json or hf_quant_config.json): `<module>.weight` uint8 [R, C / 2], two E2M1 codes a
// byte, low nibble first; `weight_scale` F8_E4M3 [R, C / group_size], in row-major order on disk
// (the swizzled layout is what serving kernels make of it after loading); `weight_scale_2` the
// fp32 per-tensor scale of those scales; `input_scale` the activations' (not the weights'). The
// value is code * (fp32(weight_scale) * weight_scale_2), each product in fp32, rounded once to
// the compute dtype: vLLM's NVFP4 emulation (dequantize_to_dtype with swizzle off) computes it so.

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/quantized_weights.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

class ModelOptWeights final : public QuantizedWeights {
 public:
  explicit ModelOptWeights(int64_t groupSize) : groupSize_(groupSize) {}

  std::optional<at::Tensor> load(const WeightLoader& weights, const std::string& name,
                                 const std::vector<int64_t>& shape) const override {
    const std::optional<std::string> linear = linearModuleOf(name, shape);
    if (!linear) return std::nullopt;
    const std::string& module = *linear;
    if (!weights.contains(module + ".weight_scale_2")) return std::nullopt;  // excluded: stored unquantised
    if (shape[1] % groupSize_ != 0 || shape[1] % 2 != 0)
      throw ValidationError("NVFP4 packs whole groups of " + std::to_string(groupSize_) + " inputs two a byte, but the weight has " +
                                std::to_string(shape[1]) + " inputs",
                            {.file = weights.fileOf(name), .item = name});
    const std::string group = "group_size " + std::to_string(groupSize_);
    const at::Tensor packed = loadPart(weights, name, shape, "two FP4 codes a byte", {shape[0], shape[1] / 2}, {at::kByte});
    const at::Tensor scales = loadPart(weights, module + ".weight_scale", shape, group, {shape[0], shape[1] / groupSize_},
                                       {at::kFloat8_e4m3fn});
    const at::Tensor global = loadPart(weights, module + ".weight_scale_2", shape, "one scale per tensor", {1}, {at::kFloat});
    return scaleByGrid(unpackE2m1(packed), scales.to(at::kFloat) * global, {}, 1, groupSize_).to(weights.dtype());
  }

 private:
  int64_t groupSize_;
};

}  // namespace

std::shared_ptr<const QuantizedWeights> modelOptWeights(const modelspec::QuantizationConfig& config) {
  return std::make_shared<ModelOptWeights>(config.groupSize);
}

}  // namespace dfi::engine
