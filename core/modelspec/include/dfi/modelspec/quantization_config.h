#pragma once
// quantization_config of a quantised target checkpoint, as its quantiser wrote it, read into
// what the engine needs to dequantise each stored weight at load. Formats:
//   mxfp4               gpt-oss experts (`*_blocks`, `*_scales`), its family's own method
//   fp8                 FP8 E4M3 weights, one fp32 `weight_scale_inv` per weight_block_size block
//                       (or per tensor), as DeepSeek, Qwen3, MiniMax and GLM publish them
//   compressed-tensors  config_groups of pack-quantized INT1-8, float-quantized FP8 and
//                       nvfp4-pack-quantized FP4 weights, and the `ignore` list
//   modelopt            NVIDIA ModelOpt NVFP4 (`weight`, `weight_scale`, `weight_scale_2`), from
//                       config.json or the checkpoint's hf_quant_config.json
//   gptq, awq           INT4 `qweight`, `qzeros`, `scales` (and GPTQ's `g_idx`)
// A method or option the engine cannot dequantise exactly is refused by name at parse time.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfi::modelspec {

enum class QuantMethod { Mxfp4, Fp8, CompressedTensors, ModelOpt, Gptq, Awq };

// One weight's quantisation in compressed-tensors' terms (its QuantizationArgs).
struct WeightQuantArgs {
  enum class Type { Int, Float };
  enum class Strategy { Tensor, Channel, Group, TensorGroup, Block };
  Type type = Type::Int;
  int numBits = 8;
  Strategy strategy = Strategy::Tensor;
  int groupSize = 0;                      // Group, TensorGroup: inputs per scale
  std::array<int64_t, 2> blockStructure{};  // Block: [rows, cols] per scale
  bool symmetric = true;                  // false: a weight_zero_point per scale
};

// One entry of compressed-tensors' config_groups: which modules, stored how.
struct CompressedTensorsGroup {
  std::string name;  // its key in config_groups, for messages
  // Module class names ("Linear"), "re:"-prefixed regular expressions or exact module names.
  std::vector<std::string> targets;
  std::string format;  // "pack-quantized", "float-quantized", "nvfp4-pack-quantized"
  WeightQuantArgs weights;
};

struct QuantizationConfig {
  QuantMethod kind = QuantMethod::Mxfp4;
  std::string method;  // as written: "mxfp4", "fp8", "compressed-tensors", ...; `info` shows it
  // Modules kept in the checkpoint's float dtype (modules_to_not_convert, compressed-tensors'
  // ignore, ModelOpt's exclude_modules), as written. Which weights are stored quantised is read
  // from the checkpoint (a weight with its scales); compressed-tensors' list also says which
  // config group a module is not in (keepsUnquantized).
  std::vector<std::string> modulesToNotConvert;
  // fp8: [rows, cols] of the weight one scale covers; absent: one scale for the whole tensor.
  std::optional<std::array<int64_t, 2>> weightBlockSize;
  std::vector<CompressedTensorsGroup> groups;  // compressed-tensors
  // modelopt NVFP4, gptq, awq: inputs per scale (-1 for GPTQ's one group per column).
  int groupSize = 0;
  int bits = 0;             // gptq, awq
  bool descAct = false;     // gptq: act-order, rows permuted into groups by g_idx
  // gptq: the stored zero points are one less than the ones used (checkpoint_format "gptq",
  // GPTQ's v1 layout) or exact ("gptq_v2").
  bool zeroPointsOffByOne = true;

  // Whether `module` (a weight's name less ".weight") is on compressed-tensors' ignore list.
  bool keepsUnquantized(const std::string& module) const;
  // The compressed-tensors group whose targets name `module`, if any.
  const CompressedTensorsGroup* groupOf(const std::string& module) const;
};

// compressed-tensors' rule for targets and ignore entries: "re:<expr>" a regular expression that
// must match from the start (Python's re.match), anything else the module name itself.
bool moduleNameMatches(const std::string& pattern, const std::string& module);

}  // namespace dfi::modelspec
