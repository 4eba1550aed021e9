#include "dfi/settings/settings.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::settings {
namespace {

// A positive integer that is the whole of `text`.
template <typename T>
std::optional<T> positive(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

template <typename T>
std::optional<T> nonNegative(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// The option as `run` spells it and the request's key: "--block-size" for block_size.
template <typename Record, typename Value>
std::string option(Value Record::*member) {
  std::string name(fieldName(member));
  std::ranges::replace(name, '_', '-');
  return "--" + name;
}

[[noreturn]] void refuse(const std::string& option, const std::string& why) { throw UsageError(option + ": " + why); }

void checkBlockSize(const std::optional<int>& blockSize, const std::string& option) {
  if (blockSize && *blockSize < 2)
    refuse(option, std::to_string(*blockSize) + " is below 2 (a block is an anchor and at least one draft slot)");
}

void validateModel(const ModelOptions& model) {
  const std::string device(fieldName(&ModelOptions::devices)), dtype(fieldName(&ModelOptions::dtype));
  if (model.devices.empty()) refuse("--" + device, "no device given");
  if (std::ranges::find(kDtypes, std::string_view(model.dtype)) == std::end(kDtypes))
    refuse("--" + dtype, "'" + model.dtype + "' is not fp32, bf16 or fp16");
}

}  // namespace

std::optional<AnchorSelection> parseAnchorSelection(std::string_view text) {
  AnchorSelection s;
  if (text == "live") return s;
  if (text == "every") return AnchorSelection{.kind = AnchorSelection::Kind::Every};
  if (text.starts_with("every:")) {
    const auto stride = positive<int>(text.substr(6));
    if (!stride) return std::nullopt;
    return AnchorSelection{.kind = AnchorSelection::Kind::Every, .stride = *stride};
  }
  if (text.starts_with("random:")) {
    const std::string_view rest = text.substr(7);
    const auto colon = rest.find(':');
    const auto count = positive<int>(rest.substr(0, colon));
    if (!count) return std::nullopt;
    s.kind = AnchorSelection::Kind::Random;
    s.count = *count;
    if (colon != std::string_view::npos) {
      const auto seed = nonNegative<std::uint64_t>(rest.substr(colon + 1));
      if (!seed) return std::nullopt;
      s.seed = *seed;
    }
    return s;
  }
  return std::nullopt;
}

std::string anchorSelectionText(const AnchorSelection& anchors) {
  switch (anchors.kind) {
    case AnchorSelection::Kind::LiveAnchors: return "live";
    case AnchorSelection::Kind::Every: return "every:" + std::to_string(anchors.stride);
    case AnchorSelection::Kind::Random:
      return "random:" + std::to_string(anchors.count) + ":" + std::to_string(anchors.seed);
  }
  return "live";
}

std::optional<Shard> parseShard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto index = nonNegative<int>(text.substr(0, slash));
  const auto count = positive<int>(text.substr(slash + 1));
  if (!index || !count || *index >= *count) return std::nullopt;
  return Shard{*index, *count};
}

std::string shardText(const Shard& shard) { return std::to_string(shard.index) + "/" + std::to_string(shard.count); }

std::vector<std::string> parseDeviceList(std::string_view text) {
  std::vector<std::string> devices;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    if (!part.empty()) devices.emplace_back(part);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return devices;
}

std::string deviceListText(const std::vector<std::string>& devices) {
  std::string text;
  for (const auto& d : devices) text += (text.empty() ? "" : ",") + d;
  return text;
}

void validateSampling(const SamplingOptions& s) {
  if (!(s.temperature >= 0))
    refuse(option(&SamplingOptions::temperature), "must be 0 (greedy) or more, got " + shortNumber(s.temperature));
  if (!(s.topP > 0 && s.topP <= 1)) refuse(option(&SamplingOptions::topP), "must be in (0, 1], got " + shortNumber(s.topP));
  if (s.topK < 0)
    refuse(option(&SamplingOptions::topK), "must be 0 (the whole vocabulary) or more, got " + std::to_string(s.topK));
}

std::string samplingLabel(const SamplingOptions& s) {
  if (s.greedy()) return "greedy";
  std::string label = "T=" + shortNumber(s.temperature);
  if (s.topP < 1) label += " top-p=" + shortNumber(s.topP);
  if (s.topK > 0) label += " top-k=" + std::to_string(s.topK);
  return label;
}

void validate(const RunSettings& s) {
  using R = RunSettings;
  if (s.target.empty()) refuse(option(&R::target), "no target model directory given");
  if (s.drafters.empty()) refuse(option(&R::drafters), "no drafter directory given");
  if (s.prompts.empty()) refuse(option(&R::prompts), "no prompts file given");
  if (s.modes.empty()) refuse(option(&R::modes), "no evaluation mode selected");
  if (s.maskVariants.empty()) refuse(option(&R::maskVariants), "no mask variant selected");
  for (EvaluationMode m : s.modes)
    if (!isKnownEnum(m)) refuse(option(&R::modes), "unknown mode");
  for (MaskVariant v : s.maskVariants)
    if (!isKnownEnum(v)) refuse(option(&R::maskVariants), "unknown mask variant");
  if (s.anchors.kind == AnchorSelection::Kind::Every && s.anchors.stride < 1)
    refuse(option(&R::anchors), "every:k needs k of 1 or more");
  if (s.anchors.kind == AnchorSelection::Kind::Random && s.anchors.count < 1)
    refuse(option(&R::anchors), "random:N needs N of 1 or more");
  if (s.ddtreeBudget < 1) refuse(option(&R::ddtreeBudget), "must be at least 1, got " + std::to_string(s.ddtreeBudget));
  checkBlockSize(s.blockSize, option(&R::blockSize));
  if (s.maxNewTokens < 1) refuse(option(&R::maxNewTokens), "must be at least 1, got " + std::to_string(s.maxNewTokens));
  if (s.limit && *s.limit < 1) refuse(option(&R::limit), std::to_string(*s.limit) + " is below 1");
  if (s.topK < 1) refuse(option(&R::topK), "must be at least 1, got " + std::to_string(s.topK));
  validateSampling(s.sampling);
  if (s.samples < 1) refuse(option(&R::samples), "must be at least 1, got " + std::to_string(s.samples));
  if (s.samples > 1 && s.sampling.greedy())
    refuse(option(&R::samples), std::to_string(s.samples) +
                                    " repeats a greedy evaluation, whose repeats are identical: add --temperature");
  validateModel(s.model);
  if (s.enableThinking && !s.chatTemplate)
    refuse(option(&R::enableThinking), "on needs the chat template, which --no-chat turns off");
  if (!s.chatTemplateKwargs.empty()) {
    if (!s.chatTemplate) refuse(option(&R::chatTemplateKwargs), "needs the chat template, which --no-chat turns off");
    const auto kwargs = nlohmann::json::parse(s.chatTemplateKwargs, nullptr, false);
    if (kwargs.is_discarded() || !kwargs.is_object())
      refuse(option(&R::chatTemplateKwargs), "'" + s.chatTemplateKwargs + "' is not a JSON object");
  }
  if (s.shard.count < 1 || s.shard.index < 0 || s.shard.index >= s.shard.count)
    refuse(option(&R::shard), "'" + shardText(s.shard) + "' is not i/N with 0 <= i < N");
  if (!isKnownEnum(s.stepCounting)) refuse(option(&R::stepCounting), "is not dflash or full-blocks");
}

void validate(const DiagnoseSettings& s) {
  validate(s.evaluation);
  if (s.budgetMinutes && !(*s.budgetMinutes > 0))
    refuse(option(&DiagnoseSettings::budgetMinutes), "must be above 0, got " + shortNumber(*s.budgetMinutes));
  for (double scale : s.tapNoiseScales)
    if (!(scale > 0)) throw UsageError("tap noise scales must be above 0, got " + shortNumber(scale));
}

void validate(const InspectSettings& s) {
  using R = InspectSettings;
  if (s.target.empty()) refuse(option(&R::target), "no target model directory given");
  if (s.drafter.empty()) refuse(option(&R::drafter), "no drafter directory given");
  if (s.anchor < 0) refuse(option(&R::anchor), "must be 0 or more, got " + std::to_string(s.anchor));
  if (s.topK < 0) refuse(option(&R::topK), "must be 0 or more, got " + std::to_string(s.topK));
  if (!isKnownEnum(s.variant)) refuse(option(&R::variant), "unknown mask variant");
  checkBlockSize(s.blockSize, option(&R::blockSize));
  validateModel(s.model);
}

std::string settingsJson(const RunSettings& settings) { return toJson(settings).dump(); }

RunSettings recordedRunSettings(const std::string& text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text.empty() ? std::string("{}") : text);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(std::string("recorded settings are not JSON: ") + e.what(), {.item = "settings_json"});
  }
  return fromJson<RunSettings>(json, "settings_json", /*lenient=*/true);
}

std::string_view stepCountingDescription(StepCounting counting) {
  return counting == StepCounting::Dflash
             ? "dflash 0.1.0's: the last block shortened to the token budget, a step's tokens counted up to "
               "the budget and the first stop token"
             : "full blocks: every block of B slots, its accepted drafts and bonus counted in full "
               "(past the budget or a stop token too)";
}

}  // namespace dfi::settings
