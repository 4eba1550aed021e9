// FP8 block-scaled weights (quant_method "fp8"), as DeepSeek-V3, Qwen3, MiniMax-M2 and GLM
// publish them: `<module>.weight` in F8_E4M3 and `<module>.weight_scale_inv` in fp32, one scale
// per weight_block_size [rows, cols] block (the last blocks of a dimension that is not a
// multiple are partial), or one for the whole tensor without weight_block_size. The value is
// fp32(code) * scale, rounded once to the compute dtype: transformers' Fp8Dequantize (its
// `dequantize=True` load, integrations/finegrained_fp8.py).

#include <ATen/ATen.h>

#include "io/quantized_weights.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

class Fp8BlockWeights final : public QuantizedWeights {
 public:
  explicit Fp8BlockWeights(std::optional<std::array<int64_t, 2>> block) : block_(block) {}

  std::optional<at::Tensor> load(const WeightLoader& weights, const std::string& name,
                                 const std::vector<int64_t>& shape) const override {
    // transformers names the scale after the weight: `<module>.weight` -> `<module>.weight_scale_inv`.
    const std::string scaleName = name + "_scale_inv";
    if (shape.size() != 2 || !weights.contains(scaleName)) return std::nullopt;  // stored unquantised
    const int64_t rows = block_ ? (*block_)[0] : shape[0], cols = block_ ? (*block_)[1] : shape[1];
    const std::vector<int64_t> grid =
        block_ ? std::vector<int64_t>{(shape[0] + rows - 1) / rows, (shape[1] + cols - 1) / cols} : std::vector<int64_t>{1};
    const at::Tensor codes = loadPart(weights, name, shape, "its own shape", shape, {at::kFloat8_e4m3fn});
    const at::Tensor scales = loadPart(weights, scaleName, shape,
                                       block_ ? "weight_block_size " + shapeText({rows, cols}) : "one scale per tensor",
                                       grid, {at::kFloat, at::kBFloat16, at::kHalf});
    return scaleByGrid(codes, scales.reshape({grid.size() == 1 ? 1 : grid[0], grid.size() == 1 ? 1 : grid[1]}), {},
                       rows, cols)
        .to(weights.dtype());
  }

 private:
  std::optional<std::array<int64_t, 2>> block_;
};

}  // namespace

std::shared_ptr<const QuantizedWeights> fp8BlockWeights(const modelspec::QuantizationConfig& config) {
  return std::make_shared<Fp8BlockWeights>(config.weightBlockSize);
}

}  // namespace dfi::engine
