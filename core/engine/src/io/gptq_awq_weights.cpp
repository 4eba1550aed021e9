// GPTQ and AWQ INT4 checkpoints (quant_method "gptq", "awq"), in the layouts AutoGPTQ /
// GPTQModel and AutoAWQ publish and vLLM reads (its gptq and awq loaders, awq_triton.py):
//   GPTQ  `qweight` int32 [in / 8, out]: eight codes of consecutive inputs a word, input
//         8w + j at bits 4j; `qzeros` int32 [groups, out / 8]: outputs packed the same way
//         along the row; `scales` [groups, out]; `g_idx` int32 [in], the group of each input
//         (with desc_act the inputs are permuted into groups, so g_idx is required). The
//         checkpoint_format "gptq" stores each zero point one less than the one applied.
//   AWQ   `qweight` int32 [in, out / 8] and `qzeros` [groups, out / 8]: eight outputs a word in
//         the interleaved order 0 2 4 6 1 3 5 7 (output 8w + j at bits 4 * kAwqSlot[j]);
//         `scales` [groups, out]; group g covers inputs g * group_size onwards.
// The value is (code - zero point) * scale with the scale's dtype (fp16 as published: the
// references compute in it), transposed to the [out, in] of the unquantised weight.

#include <array>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/quantized_weights.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

constexpr int kBits = 4, kPerWord = 8;
// AWQ: the slot (nibble) of output j of a word's eight.
constexpr std::array<int, kPerWord> kAwqSlot = {0, 4, 1, 5, 2, 6, 3, 7};
constexpr std::array<int, kPerWord> kInOrder = {0, 1, 2, 3, 4, 5, 6, 7};

// words [A, B] -> codes, eight a word: along the rows ([8A, B], GPTQ's qweight) or along the
// columns ([A, 8B]), code j of a word from nibble slot[j].
at::Tensor unpackNibbles(const at::Tensor& words, bool alongRows, const std::array<int, kPerWord>& slot) {
  const at::Tensor w = words.contiguous();
  const int64_t a = w.size(0), b = w.size(1);
  at::Tensor codes = at::empty(alongRows ? std::vector<int64_t>{a * kPerWord, b} : std::vector<int64_t>{a, b * kPerWord}, at::kInt);
  const auto* in = reinterpret_cast<const uint32_t*>(w.data_ptr<int32_t>());
  int32_t* out = codes.data_ptr<int32_t>();
  for (int64_t i = 0; i < a; ++i)
    for (int64_t k = 0; k < b; ++k)
      for (int j = 0; j < kPerWord; ++j) {
        const int32_t code = static_cast<int32_t>((in[i * b + k] >> (kBits * slot[j])) & 0xF);
        if (alongRows) out[(i * kPerWord + j) * b + k] = code;
        else out[i * b * kPerWord + k * kPerWord + j] = code;
      }
  return codes;
}

const std::vector<at::ScalarType> kScaleDtypes = {at::kHalf, at::kBFloat16, at::kFloat};

class GptqAwqWeights final : public QuantizedWeights {
 public:
  explicit GptqAwqWeights(modelspec::QuantizationConfig config) : config_(std::move(config)) {}

  std::optional<at::Tensor> load(const WeightLoader& weights, const std::string& name,
                                 const std::vector<int64_t>& shape) const override {
    const std::optional<std::string> linear = linearModuleOf(name, shape);
    if (!linear) return std::nullopt;
    const std::string& module = *linear;
    if (!weights.contains(module + ".qweight")) return std::nullopt;  // stored unquantised
    const int64_t out = shape[0], in = shape[1];
    const int64_t groupSize = config_.groupSize == -1 ? in : config_.groupSize;
    const int64_t groups = (in + groupSize - 1) / groupSize;
    const bool gptq = config_.kind == modelspec::QuantMethod::Gptq;
    const std::string packing = "bits 4";
    const std::string grouping = "group_size " + std::to_string(config_.groupSize);
    if (out % kPerWord != 0 || (gptq && in % kPerWord != 0))
      throw ValidationError("4-bit " + config_.method + " packs eight " + (gptq ? "inputs" : "outputs") +
                                " a word, but the weight is " + shapeText(shape),
                            {.file = weights.fileOf(module + ".qweight"), .item = module + ".qweight"});
    const at::Tensor qweight = loadPart(weights, module + ".qweight", shape, packing,
                                        gptq ? std::vector<int64_t>{in / kPerWord, out} : std::vector<int64_t>{in, out / kPerWord},
                                        {at::kInt});
    const at::Tensor qzeros = loadPart(weights, module + ".qzeros", shape, grouping + ", " + packing,
                                       {groups, out / kPerWord}, {at::kInt});
    const at::Tensor scales = loadPart(weights, module + ".scales", shape, grouping, {groups, out}, kScaleDtypes);
    at::Tensor codes, zeros = unpackNibbles(qzeros, false, gptq ? kInOrder : kAwqSlot);
    if (gptq && config_.zeroPointsOffByOne) zeros = zeros + 1;
    at::Tensor value;
    if (gptq) {
      codes = unpackNibbles(qweight, true, kInOrder);
      const at::Tensor groupOf = gptqGroups(weights, module, shape, in, groupSize, groups);
      // Each input row takes its group's zero points and scales: one scale per code.
      value = scaleByGrid(codes, scales.index_select(0, groupOf), zeros.index_select(0, groupOf), 1, 1);
    } else {
      codes = unpackNibbles(qweight, false, kAwqSlot);
      value = scaleByGrid(codes, scales, zeros, groupSize, 1);
    }
    return value.to(scales.scalar_type()).t().contiguous().to(weights.dtype());
  }

 private:
  // g_idx, checked to name groups that exist; without it, input i is in group i / group_size,
  // which only holds when desc_act did not permute the inputs.
  at::Tensor gptqGroups(const WeightLoader& weights, const std::string& module, const std::vector<int64_t>& shape, int64_t in,
                        int64_t groupSize, int64_t groups) const {
    const std::string name = module + ".g_idx";
    if (!weights.contains(name)) {
      if (config_.descAct)
        throw ValidationError("act-order GPTQ (desc_act: true) needs g_idx, the group of each input, and " + name +
                                  " is missing",
                              {.file = weights.fileOf(module + ".qweight"), .item = name});
      return at::arange(in, at::kLong).div(groupSize, "floor");
    }
    const at::Tensor groupOf = loadPart(weights, name, shape, "one group index per input", {in}, {at::kInt}).to(at::kLong);
    const int64_t low = groupOf.min().item<int64_t>(), high = groupOf.max().item<int64_t>();
    if (low < 0 || high >= groups)
      throw ValidationError(name + " names group " + std::to_string(low < 0 ? low : high) + ", but the weight " +
                                shapeText(shape) + " with group_size " + std::to_string(config_.groupSize) + " has " +
                                std::to_string(groups) + " groups",
                            {.file = weights.fileOf(name), .item = name});
    return groupOf;
  }

  modelspec::QuantizationConfig config_;
};

}  // namespace

std::shared_ptr<const QuantizedWeights> gptqAwqWeights(const modelspec::QuantizationConfig& config) {
  return std::make_shared<GptqAwqWeights>(config);
}

}  // namespace dfi::engine
