// compressed-tensors checkpoints (quant_method "compressed-tensors"), dequantised as the
// package's own compressors decompress them (compressed_tensors/compressors/: pack_quantized,
// naive_quantized's float-quantized, nvfp4; quantization/lifecycle/forward.py's dequantize):
//   pack-quantized        `weight_packed` int32: the [R, C] codes as one little-endian bit
//                         stream per row, code c at bit c * num_bits, each stored + 2^(bits-1);
//                         `weight_shape` [R, C]; `weight_zero_point` of asymmetric weights packed
//                         the same way down each column of its [R, groups] grid
//   float-quantized       `weight` in F8_E4M3
//   nvfp4-pack-quantized  `weight_packed` uint8, two E2M1 codes a byte (low nibble first),
//                         `weight_scale` F8_E4M3 per 16 inputs, `weight_global_scale` fp32
// and `weight_scale` per tensor [1], per channel [R, 1], per group [R, C / group_size] or per
// block. The value is (code - zero point) * scale, rounded to the scale's dtype (the package
// computes in it); NVFP4's is code * (scale / global scale) in fp32, rounded to bf16 (the dtype
// its decompressor unpacks to). Then the compute dtype.

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/quantized_weights.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

using modelspec::CompressedTensorsGroup;
using modelspec::WeightQuantArgs;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// words [R, W] int32, each row `count` codes of `bits` bits from bit 0 on -> [R, count] signed.
at::Tensor unpackBitStream(const at::Tensor& words, int bits, int64_t count) {
  const at::Tensor w = words.contiguous();
  const int64_t r = w.size(0), width = w.size(1);
  at::Tensor codes = at::empty({r, count}, at::kInt);
  const auto* in = reinterpret_cast<const uint32_t*>(w.data_ptr<int32_t>());
  int32_t* out = codes.data_ptr<int32_t>();
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const int32_t offset = 1 << (bits - 1);
  for (int64_t row = 0; row < r; ++row) {
    const uint32_t* line = in + row * width;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t bit = i * bits, word = bit / 32;
      // A code may straddle two words: read both, the next one as the high half.
      const uint64_t pair = line[word] | (word + 1 < width ? uint64_t{line[word + 1]} << 32 : 0);
      out[row * count + i] = static_cast<int32_t>((pair >> (bit % 32)) & mask) - offset;
    }
  }
  return codes;
}

struct ScaleGrid {
  std::vector<int64_t> shape;  // of weight_scale
  int64_t rows, cols;          // of the weight one scale covers
  std::string field;           // the config field that says so, for messages
};

ScaleGrid scaleGrid(const CompressedTensorsGroup& group, const std::vector<int64_t>& shape) {
  const WeightQuantArgs& a = group.weights;
  const int64_t r = shape[0], c = shape[1];
  const std::string field = "config_groups." + group.name + ".weights.";
  switch (a.strategy) {
    case WeightQuantArgs::Strategy::Tensor: return {{1}, r, c, field + "strategy tensor"};
    case WeightQuantArgs::Strategy::Channel: return {{r, 1}, 1, c, field + "strategy channel"};
    case WeightQuantArgs::Strategy::Group:
    case WeightQuantArgs::Strategy::TensorGroup:
      return {{r, ceilDiv(c, a.groupSize)}, 1, a.groupSize, field + "group_size " + std::to_string(a.groupSize)};
    case WeightQuantArgs::Strategy::Block: {
      const auto [bh, bw] = a.blockStructure;
      return {{ceilDiv(r, bh), ceilDiv(c, bw)}, bh, bw, field + "block_structure " + shapeText({bh, bw})};
    }
  }
  return {};
}

const std::vector<at::ScalarType> kFloatScales = {at::kBFloat16, at::kHalf, at::kFloat};

class CompressedTensorsWeights final : public QuantizedWeights {
 public:
  explicit CompressedTensorsWeights(modelspec::QuantizationConfig config) : config_(std::move(config)) {}

  std::optional<at::Tensor> load(const WeightLoader& weights, const std::string& name,
                                 const std::vector<int64_t>& shape) const override {
    const std::optional<std::string> linear = linearModuleOf(name, shape);
    if (!linear) return std::nullopt;
    const std::string& module = *linear;
    const tensorfile::TensorInfo* plain = weights.stored(name);
    const bool packed = weights.contains(module + ".weight_packed");
    const bool fp8 = plain && (plain->dtype == tensorfile::DType::F8_E4M3);
    if (!packed && !fp8) return std::nullopt;  // a float weight: ignored, or not targeted
    const CompressedTensorsGroup* group = config_.keepsUnquantized(module) ? nullptr : config_.groupOf(module);
    if (!group || group->format == "dense")
      throw ValidationError("the weight is stored quantised, but no compressed-tensors config group targets " + module +
                                (config_.keepsUnquantized(module) ? " (it is on the ignore list)" : ""),
                            {.file = weights.fileOf(packed ? module + ".weight_packed" : name), .item = name});
    if (group->format == "pack-quantized") return packQuantized(weights, module, *group, shape);
    if (group->format == "float-quantized") return floatQuantized(weights, module, *group, shape);
    return nvfp4(weights, module, *group, shape);
  }

 private:
  at::Tensor packQuantized(const WeightLoader& weights, const std::string& module, const CompressedTensorsGroup& group,
                           const std::vector<int64_t>& shape) const {
    const int bits = group.weights.numBits;
    const std::string bitsField = "config_groups." + group.name + ".weights.num_bits " + std::to_string(bits);
    const at::Tensor words = loadPart(weights, module + ".weight_packed", shape, bitsField,
                                      {shape[0], ceilDiv(shape[1] * bits, 32)}, {at::kInt});
    if (weights.contains(module + ".weight_shape")) {
      const at::Tensor stored = loadPart(weights, module + ".weight_shape", shape, "weight_shape", {2}, {at::kLong, at::kInt});
      const std::vector<int64_t> written = {stored[0].item<int64_t>(), stored[1].item<int64_t>()};
      if (written != shape)
        throw ValidationError("weight_shape says " + shapeText(written) + " but the config implies " + shapeText(shape),
                              {.file = weights.fileOf(module + ".weight_shape"), .item = module + ".weight_shape"});
    }
    const ScaleGrid grid = scaleGrid(group, shape);
    const at::Tensor scales = loadPart(weights, module + ".weight_scale", shape, grid.field, grid.shape, kFloatScales);
    at::Tensor zeros;
    if (!group.weights.symmetric) {
      const int64_t columns = grid.shape.size() == 2 ? grid.shape[1] : 1;
      const at::Tensor zeroWords = loadPart(weights, module + ".weight_zero_point", shape, grid.field + ", " + bitsField,
                                            {ceilDiv(grid.shape[0] * bits, 32), columns}, {at::kInt});
      zeros = unpackBitStream(zeroWords.t(), bits, grid.shape[0]).t();
    }
    return scaleByGrid(unpackBitStream(words, bits, shape[1]), scales, zeros, grid.rows, grid.cols)
        .to(scales.scalar_type())
        .to(weights.dtype());
  }

  at::Tensor floatQuantized(const WeightLoader& weights, const std::string& module, const CompressedTensorsGroup& group,
                            const std::vector<int64_t>& shape) const {
    const ScaleGrid grid = scaleGrid(group, shape);
    const at::Tensor codes = loadPart(weights, module + ".weight", shape, "its own shape", shape, {at::kFloat8_e4m3fn});
    const at::Tensor scales = loadPart(weights, module + ".weight_scale", shape, grid.field, grid.shape, kFloatScales);
    return scaleByGrid(codes, scales, {}, grid.rows, grid.cols).to(scales.scalar_type()).to(weights.dtype());
  }

  at::Tensor nvfp4(const WeightLoader& weights, const std::string& module, const CompressedTensorsGroup& group,
                   const std::vector<int64_t>& shape) const {
    const ScaleGrid grid = scaleGrid(group, shape);
    if (shape[1] % 2 != 0 || shape[1] % group.weights.groupSize != 0)
      throw ValidationError("NVFP4 packs whole groups of " + std::to_string(group.weights.groupSize) +
                                " inputs two a byte, but the weight has " + std::to_string(shape[1]) + " inputs",
                            {.file = weights.fileOf(module + ".weight_packed"), .item = module + ".weight_packed"});
    const at::Tensor packed = loadPart(weights, module + ".weight_packed", shape, "two FP4 codes a byte",
                                       {shape[0], shape[1] / 2}, {at::kByte});
    const at::Tensor scales = loadPart(weights, module + ".weight_scale", shape, grid.field, grid.shape, {at::kFloat8_e4m3fn});
    const at::Tensor global = loadPart(weights, module + ".weight_global_scale", shape, "strategy tensor_group", {1}, {at::kFloat});
    return scaleByGrid(unpackE2m1(packed), scales.to(at::kFloat) / global, {}, grid.rows, grid.cols)
        .to(at::kBFloat16)
        .to(weights.dtype());
  }

  modelspec::QuantizationConfig config_;
};

}  // namespace

std::shared_ptr<const QuantizedWeights> compressedTensorsWeights(const modelspec::QuantizationConfig& config) {
  return std::make_shared<CompressedTensorsWeights>(config);
}

}  // namespace dfi::engine
