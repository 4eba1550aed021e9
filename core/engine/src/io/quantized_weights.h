#pragma once
// Weights a quantised checkpoint stores as integers or small floats with their scales,
// dequantised once at load into the compute dtype, with exactly the arithmetic of each format's
// reference (the `dequantize` paths of transformers and compressed-tensors, and the published
// packing of ModelOpt, GPTQ and AWQ). WeightLoader::load asks the checkpoint's format first, so
// every layer's projections load the same way whether they are stored quantised or not.
// One file per format: fp8_block_weights.cpp, compressed_tensors_weights.cpp,
// modelopt_weights.cpp, gptq_awq_weights.cpp.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/quantization_config.h"

namespace dfi::engine {

class WeightLoader;

class QuantizedWeights {
 public:
  virtual ~QuantizedWeights() = default;
  // The weight `name` ("<module>.weight", [out, in] = expectedShape) dequantised on the CPU in
  // the loader's dtype, or nullopt when the checkpoint stores it as a plain float tensor. Throws
  // ValidationError naming the file, the tensor, the config field and both shapes when a stored
  // part disagrees with the weight's shape.
  virtual std::optional<at::Tensor> load(const WeightLoader& weights, const std::string& name,
                                         const std::vector<int64_t>& expectedShape) const = 0;
};

// The format that dequantises a config's weights; nullptr for an unquantised checkpoint and for
// MXFP4, whose gpt-oss experts load through loadMxfp4.
std::shared_ptr<const QuantizedWeights> quantizedWeightsFor(const std::optional<modelspec::QuantizationConfig>& config);

// One per format (their files), for quantizedWeightsFor.
std::shared_ptr<const QuantizedWeights> fp8BlockWeights(const modelspec::QuantizationConfig& config);
std::shared_ptr<const QuantizedWeights> compressedTensorsWeights(const modelspec::QuantizationConfig& config);
std::shared_ptr<const QuantizedWeights> modelOptWeights(const modelspec::QuantizationConfig& config);
std::shared_ptr<const QuantizedWeights> gptqAwqWeights(const modelspec::QuantizationConfig& config);

// What the formats share ----------------------------------------------------------------

// (codes - zeroPoints) * scales, every operand broadcast from its grid: scales [R / rows, C / cols]
// (rounded up) covers rows x cols of codes [R, C]; zeroPoints, when defined, has the scales'
// grid. All fp32, each element one IEEE product as torch computes it: the formats' references
// compute these products in fp32 or in a 16-bit dtype whose operands multiply exactly in fp32.
at::Tensor scaleByGrid(const at::Tensor& codes, const at::Tensor& scales, const at::Tensor& zeroPoints, int64_t rows,
                       int64_t cols);

// The ValidationError of a stored part whose shape disagrees with the weight's: "`tensor` has
// shape [..] but the weight [R, C] with `field` implies [..]", naming the file and the tensor.
[[noreturn]] void throwPartShape(const WeightLoader& weights, const std::string& tensor, const std::vector<int64_t>& found,
                                 const std::vector<int64_t>& weightShape, const std::string& field,
                                 const std::vector<int64_t>& implied);

// A stored part of a quantised weight (scales, packed codes...) as stored, checked against the
// shape the weight and the config imply (throwPartShape's error otherwise) and its dtype
// against `dtypes` (FormatError naming them).
at::Tensor loadPart(const WeightLoader& weights, const std::string& tensor, const std::vector<int64_t>& weightShape,
                    const std::string& field, const std::vector<int64_t>& implied,
                    const std::vector<at::ScalarType>& dtypes);

// The module of a linear layer's weight ("<module>.weight", two-dimensional), whose quantised
// parts each format stores beside it as "<module>.<part>"; nullopt for any other tensor.
std::optional<std::string> linearModuleOf(const std::string& name, const std::vector<int64_t>& shape);

// FP4 E2M1 codes packed two per byte, low nibble first: [R, C / 2] uint8 -> [R, C] fp32.
at::Tensor unpackE2m1(const at::Tensor& packed);

}  // namespace dfi::engine
