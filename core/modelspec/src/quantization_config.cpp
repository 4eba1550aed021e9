#include "quantization_config.h"

#include <algorithm>
#include <regex>

namespace dfi::modelspec {

bool moduleNameMatches(const std::string& pattern, const std::string& module) {
  if (pattern.rfind("re:", 0) != 0) return module == pattern;
  try {
    return std::regex_search(module, std::regex(pattern.substr(3)), std::regex_constants::match_continuous);
  } catch (const std::regex_error&) {
    return false;  // a construct only Python's re knows; the module is then not named by it
  }
}

bool QuantizationConfig::keepsUnquantized(const std::string& module) const {
  return std::any_of(modulesToNotConvert.begin(), modulesToNotConvert.end(),
                     [&](const std::string& pattern) { return moduleNameMatches(pattern, module); });
}

const CompressedTensorsGroup* QuantizationConfig::groupOf(const std::string& module) const {
  for (const CompressedTensorsGroup& group : groups)
    for (const std::string& target : group.targets)
      // "Linear" is the class of every projection the engine loads through its weight loader.
      if (target == "Linear" || moduleNameMatches(target, module)) return &group;
  return nullptr;
}

namespace detail {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const std::vector<std::string>& linearWeightMethods() {
  static const std::vector<std::string> methods = {"fp8", "compressed-tensors", "modelopt", "gptq", "awq"};
  return methods;
}

void readFp8(const ConfigObject& q, QuantizationConfig& c) {
  c.kind = QuantMethod::Fp8;
  c.modulesToNotConvert = q.optionalStringList("modules_to_not_convert").value_or(std::vector<std::string>{});
  if (std::optional<std::vector<int>> block = q.optionalIntList("weight_block_size", 1)) {
    if (block->size() != 2)
      q.problems().add(q.pathOf("weight_block_size"), "expected [rows, cols] of one scale block, found " +
                                                          std::to_string(block->size()) + " numbers");
    else
      c.weightBlockSize = std::array<int64_t, 2>{(*block)[0], (*block)[1]};
  }
  // The weights are E4M3 in every published FP8 checkpoint; transformers reads no other.
  // DeepSeek-V3 writes "e4m3", MiniMax-M2 torch's name for the same format, "float8_e4m3fn".
  if (std::optional<std::string> fmt = q.optionalString("fmt"); fmt && *fmt != "e4m3" && *fmt != "float8_e4m3fn")
    q.problems().add(q.pathOf("fmt"), "FP8 format \"" + *fmt + "\" is not supported (supported: e4m3, float8_e4m3fn)");
  // UE8M0 scales (powers of two stored as bytes) need a dtype the safetensors reader lacks.
  if (std::optional<std::string> scaleFmt = q.optionalString("scale_fmt"); scaleFmt && *scaleFmt != "float32")
    q.problems().add(q.pathOf("scale_fmt"), "scale format \"" + *scaleFmt + "\" is not supported (supported: float32 scales)");
}

std::optional<WeightQuantArgs> readWeightArgs(const ConfigObject& w, const std::string& format) {
  WeightQuantArgs a;
  const std::string type = w.optionalString("type").value_or("int");
  if (type != "int" && type != "float") {
    w.problems().add(w.pathOf("type"), "weight type \"" + type + "\" is not supported (supported: int, float)");
    return std::nullopt;
  }
  a.type = type == "int" ? WeightQuantArgs::Type::Int : WeightQuantArgs::Type::Float;
  a.numBits = w.optionalInt("num_bits", 1, 8).value_or(8);
  a.symmetric = w.optionalBool("symmetric").value_or(true);
  const std::string strategy = w.optionalString("strategy").value_or("tensor");
  using S = WeightQuantArgs::Strategy;
  static const std::vector<std::pair<std::string, S>> strategies = {
      {"tensor", S::Tensor}, {"channel", S::Channel}, {"group", S::Group}, {"tensor_group", S::TensorGroup}, {"block", S::Block}};
  const auto found = std::find_if(strategies.begin(), strategies.end(), [&](const auto& s) { return s.first == strategy; });
  if (found == strategies.end()) {
    w.problems().add(w.pathOf("strategy"), "weight strategy \"" + strategy +
                                               "\" is not supported (supported: tensor, channel, group, tensor_group, block)");
    return std::nullopt;
  }
  a.strategy = found->second;
  if (a.strategy == S::Group || a.strategy == S::TensorGroup) {
    std::optional<int> group = w.requiredInt("group_size", 1);
    if (!group) return std::nullopt;
    a.groupSize = *group;
  }
  if (a.strategy == S::Block) {
    std::optional<std::vector<int>> block = w.optionalIntList("block_structure", 1);
    if (!block || block->size() != 2) {
      w.problems().add(w.pathOf("block_structure"), "required for strategy block: [rows, cols] of one scale block");
      return std::nullopt;
    }
    a.blockStructure = {(*block)[0], (*block)[1]};
  }
  // What each storage format holds (compressed-tensors' compressors accept nothing else).
  const bool isInt = a.type == WeightQuantArgs::Type::Int;
  std::string wrong;
  if (format == "pack-quantized" && !isInt) wrong = "pack-quantized stores integer weights, but type is float";
  if (format == "float-quantized" && (isInt || a.numBits != 8)) wrong = "float-quantized stores FP8 weights (type float, num_bits 8)";
  if (format == "float-quantized" && !a.symmetric) wrong = "asymmetric FP8 weights (symmetric: false) are not supported";
  if (format == "nvfp4-pack-quantized" && (isInt || a.numBits != 4 || a.strategy != S::TensorGroup || !a.symmetric))
    wrong = "nvfp4-pack-quantized stores symmetric FP4 weights with tensor_group scales";
  if (format != "nvfp4-pack-quantized" && a.strategy == S::TensorGroup)
    wrong = "a global scale (strategy tensor_group) is only read with nvfp4-pack-quantized weights";
  if (format == "pack-quantized" && !a.symmetric && a.strategy != S::Group && a.strategy != S::Channel)
    wrong = "asymmetric pack-quantized weights need the group or channel strategy (their zero points are packed)";
  if (!wrong.empty()) {
    w.problems().add(w.pathOf(format == "float-quantized" && !a.symmetric ? "symmetric" : "type"), wrong);
    return std::nullopt;
  }
  return a;
}

void readCompressedTensors(const ConfigObject& q, QuantizationConfig& c) {
  c.kind = QuantMethod::CompressedTensors;
  c.modulesToNotConvert = q.optionalStringList("ignore").value_or(std::vector<std::string>{});
  // "compressed": the weights are stored compressed; "frozen" or earlier: as floats.
  const std::string status = q.optionalString("quantization_status").value_or("compressed");
  const std::string defaultFormat = q.optionalString("format").value_or("dense");
  std::optional<ConfigObject> groups = q.optionalObject("config_groups");
  if (!groups) {
    q.problems().add(q.pathOf("config_groups"), "required in a compressed-tensors quantization_config");
    return;
  }
  static const std::vector<std::string> formats = {"pack-quantized", "float-quantized", "nvfp4-pack-quantized", "dense"};
  for (const auto& [name, value] : groups->json().items()) {
    std::optional<ConfigObject> g = groups->optionalObject(name);
    if (!g) continue;
    CompressedTensorsGroup group;
    group.name = name;
    group.targets = g->optionalStringList("targets").value_or(std::vector<std::string>{});
    group.format = status == "compressed" ? g->optionalString("format").value_or(defaultFormat) : "dense";
    if (std::find(formats.begin(), formats.end(), group.format) == formats.end()) {
      g->problems().add(g->pathOf("format"), "compressed-tensors format \"" + group.format +
                                                 "\" is not supported (supported: " + joined(formats) + ")");
      continue;
    }
    std::optional<ConfigObject> w = g->optionalObject("weights");
    if (!w) continue;  // activations only: the weights are stored as floats
    std::optional<WeightQuantArgs> args = readWeightArgs(*w, group.format);
    if (!args) continue;
    group.weights = *args;
    c.groups.push_back(std::move(group));
  }
}

void readModelOpt(const ConfigObject& q, QuantizationConfig& c) {
  c.kind = QuantMethod::ModelOpt;
  // Two spellings: hf_quant_config.json's {"quantization": {...}} and config.json's flat one.
  std::optional<ConfigObject> nested = q.optionalObject("quantization");
  const ConfigObject& level = nested ? *nested : q;
  const std::string algo = level.optionalString("quant_algo").value_or("");
  if (algo != "NVFP4" && algo != "nvfp4") {
    level.problems().add(level.pathOf("quant_algo"), "ModelOpt quant_algo \"" + algo + "\" is not supported (supported: NVFP4)");
    return;
  }
  c.groupSize = level.optionalInt("group_size", 1).value_or(16);
  c.modulesToNotConvert = level.optionalStringList("exclude_modules")
                              .value_or(level.optionalStringList("ignore").value_or(std::vector<std::string>{}));
}

void readGptqAwq(const ConfigObject& q, const std::string& method, QuantizationConfig& c) {
  c.kind = method == "gptq" ? QuantMethod::Gptq : QuantMethod::Awq;
  c.bits = q.optionalInt("bits", 1).value_or(method == "gptq" ? 4 : q.optionalInt("w_bit", 1).value_or(4));
  if (c.bits != 4) q.problems().add(q.pathOf("bits"), "only 4-bit " + method + " weights are supported, found " + std::to_string(c.bits));
  c.groupSize = q.optionalInt("group_size", -1).value_or(q.optionalInt("q_group_size", -1).value_or(128));
  if (c.groupSize == 0) q.problems().add(q.pathOf("group_size"), "must be positive, or -1 for one group per column");
  c.modulesToNotConvert = q.optionalStringList("modules_to_not_convert").value_or(std::vector<std::string>{});
  if (c.kind == QuantMethod::Gptq) {
    c.descAct = q.optionalBool("desc_act").value_or(false);
    // sym changes nothing here: symmetric checkpoints store their zero points too.
    const std::string format = q.optionalString("checkpoint_format").value_or("gptq");
    if (format != "gptq" && format != "gptq_v2")
      q.problems().add(q.pathOf("checkpoint_format"), "GPTQ checkpoint_format \"" + format +
                                                          "\" is not supported (supported: gptq, gptq_v2)");
    c.zeroPointsOffByOne = format == "gptq";
    return;
  }
  const std::string version = q.optionalString("version").value_or("gemm");
  if (version != "gemm" && version != "GEMM")
    q.problems().add(q.pathOf("version"), "AWQ version \"" + version + "\" is not supported (supported: gemm)");
  if (!q.optionalBool("zero_point").value_or(true))
    q.problems().add(q.pathOf("zero_point"), "AWQ without zero points is not supported");
}

}  // namespace

std::optional<QuantizationConfig> readQuantizationConfig(const ConfigObject& q, const std::string& modelType,
                                                         const std::vector<std::string>& familyMethods) {
  std::optional<std::string> method = q.optionalString("quant_method");
  std::vector<std::string> supported = familyMethods;
  supported.insert(supported.end(), linearWeightMethods().begin(), linearWeightMethods().end());
  if (!method) {
    q.problems().add(q.pathOf("quant_method"), "required in a quantization_config (supported: " + joined(supported) + ")");
    return std::nullopt;
  }
  if (std::find(supported.begin(), supported.end(), *method) == supported.end()) {
    const bool otherFamilies = *method == "mxfp4";
    q.problems().add(q.pathOf("quant_method"),
                     "quantization method \"" + *method + "\" is not supported for model_type " + modelType +
                         " (supported: " + joined(supported) + (otherFamilies ? "; mxfp4 for gpt_oss experts" : "") +
                         "; dequantize the checkpoint to bf16 first)");
    return std::nullopt;
  }
  QuantizationConfig c;
  c.method = *method;
  if (*method == "mxfp4")
    c.modulesToNotConvert = q.optionalStringList("modules_to_not_convert").value_or(std::vector<std::string>{});
  else if (*method == "fp8")
    readFp8(q, c);
  else if (*method == "compressed-tensors")
    readCompressedTensors(q, c);
  else if (*method == "modelopt")
    readModelOpt(q, c);
  else
    readGptqAwq(q, *method, c);
  return c;
}

std::optional<QuantizationConfig> readHfQuantConfig(const std::filesystem::path& modelDir) {
  const std::filesystem::path file = modelDir / "hf_quant_config.json";
  if (!std::filesystem::exists(file)) return std::nullopt;
  const nlohmann::json root = parseConfigJson(readConfigFile(file), file.string());
  ProblemList problems;
  const ConfigObject top(root, "", problems);
  QuantizationConfig c;
  c.method = "modelopt";
  readModelOpt(top, c);
  problems.throwIfAny(file.string());
  return c;
}

}  // namespace detail
}  // namespace dfi::modelspec
