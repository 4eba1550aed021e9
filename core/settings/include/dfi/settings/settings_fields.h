#pragma once
// The settings' fields (settings.h), defined once: each field's name is its JSON key, in a
// request (message_fields.h puts them next to the request id) and in a run's recorded
// settings_json. The keys are `dflash-eval run`'s options with '_' for '-', and never change:
// sessions written since the first version read. Values the engine keeps in another shape than
// the command line spells them (a path, "every:4", "0/1", "cuda:0,cuda:1", no_chat for the chat
// template) go through a codec (dfi/base/field_table.h's codedField).

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dfi/base/field_table.h"
#include "dfi/session/record_fields.h"  // EnumNames<EvaluationMode>, EnumNames<MaskVariant>
#include "dfi/settings/settings.h"

namespace dfi {

template <>
struct EnumNames<settings::StepCounting> {
  using E = settings::StepCounting;
  static constexpr std::array<std::pair<E, std::string_view>, 2> names{
      {{E::Dflash, "dflash"}, {E::FullBlocks, "full-blocks"}}};
};

namespace settings::codec {

struct Path {
  using Wire = std::string;
  static constexpr std::string_view expected = "a path";
  static Wire encode(const std::filesystem::path& p) { return p.string(); }
  static std::optional<std::filesystem::path> decode(const Wire& w) { return std::filesystem::path(w); }
};

struct OptionalPath {
  using Wire = std::optional<std::string>;
  static constexpr std::string_view expected = "a path";
  static Wire encode(const std::optional<std::filesystem::path>& p) {
    return p ? Wire(p->string()) : std::nullopt;
  }
  static std::optional<std::optional<std::filesystem::path>> decode(const Wire& w) {
    return std::optional<std::filesystem::path>(w ? std::optional<std::filesystem::path>(*w) : std::nullopt);
  }
};

struct PathList {
  using Wire = std::vector<std::string>;
  static constexpr std::string_view expected = "paths";
  static Wire encode(const std::vector<std::filesystem::path>& paths) {
    Wire w;
    for (const auto& p : paths) w.push_back(p.string());
    return w;
  }
  static std::optional<std::vector<std::filesystem::path>> decode(const Wire& w) {
    return std::vector<std::filesystem::path>(w.begin(), w.end());
  }
};

struct Anchors {
  using Wire = std::string;
  static constexpr std::string_view expected = kAnchorSelectionSpellings;
  static Wire encode(const AnchorSelection& a) { return anchorSelectionText(a); }
  static std::optional<AnchorSelection> decode(const Wire& w) { return parseAnchorSelection(w); }
};

struct ShardText {
  using Wire = std::string;
  static constexpr std::string_view expected = "i/N with 0 <= i < N";
  static Wire encode(const Shard& s) { return shardText(s); }
  static std::optional<Shard> decode(const Wire& w) { return parseShard(w); }
};

struct DeviceList {
  using Wire = std::string;
  static constexpr std::string_view expected = "cpu, cuda:N or a comma list of devices";
  static Wire encode(const std::vector<std::string>& d) { return deviceListText(d); }
  static std::optional<std::vector<std::string>> decode(const Wire& w) {
    auto devices = parseDeviceList(w);
    return devices.empty() ? std::nullopt : std::optional(std::move(devices));
  }
};

// A flag the engine keeps the other way round (no_chat: !chatTemplate).
struct Negated {
  using Wire = bool;
  static constexpr std::string_view expected = "true or false";
  static Wire encode(bool v) { return !v; }
  static std::optional<bool> decode(Wire w) { return !w; }
};

struct OnOff {
  using Wire = std::string;
  static constexpr std::string_view expected = "on or off";
  static Wire encode(bool v) { return v ? "on" : "off"; }
  static std::optional<bool> decode(const Wire& w) {
    if (w == "on") return true;
    if (w == "off") return false;
    return std::nullopt;
  }
};

// "enable_thinking": true, the older spelling of thinking "on" (older GUIs sent it, older files
// wrote it false beside "thinking"): read after "thinking", never written.
struct LegacyEnableThinking {
  using Wire = std::optional<bool>;
  static constexpr std::string_view expected = "true or false";
  static Wire encode(bool) { return std::nullopt; }
  static std::optional<bool> decode(const Wire& w, bool current) { return current || w.value_or(false); }
};

struct Unsigned64 {  // a seed: written as a JSON integer that older files wrote as int64
  using Wire = std::int64_t;
  static constexpr std::string_view expected = "an integer";
  static Wire encode(std::uint64_t v) { return static_cast<std::int64_t>(v); }
  static std::optional<std::uint64_t> decode(Wire w) { return static_cast<std::uint64_t>(w); }
};

}  // namespace settings::codec

namespace settings::detail {
inline constexpr FieldTraits kOptional{.optional = true};
}

template <>
struct FieldTable<settings::SamplingOptions> {
  using R = settings::SamplingOptions;
  static constexpr std::string_view name = "sampling";
  static constexpr auto kOptional = settings::detail::kOptional;
  static constexpr auto fields = std::tuple{
      field<R>("temperature", &R::temperature, "live loop sampling temperature; 0: greedy", kOptional),
      field<R>("top_p", &R::topP, "sampling: nucleus mass in (0, 1]", kOptional),
      field<R>("top_k", &R::topK, "sampling: keep the k most probable tokens; 0: all", kOptional),
      codedField<settings::codec::Unsigned64>("seed", &R::seed,
                                              "sampling: seed of every draw, mixed with repeat and prompt id", kOptional)};
};

template <>
struct FieldTable<settings::ModelOptions> {
  using R = settings::ModelOptions;
  static constexpr std::string_view name = "model";
  static constexpr auto kOptional = settings::detail::kOptional;
  // maxMemory is the command line's only (settings.h).
  static constexpr auto fields = std::tuple{
      codedField<settings::codec::DeviceList>("device", &R::devices,
                                              "cpu, cuda:N, a comma list of devices, cuda:local", kOptional),
      field<R>("dtype", &R::dtype, "fp32, bf16 or fp16", kOptional)};
};

template <>
struct FieldTable<settings::RunSettings> {
  using R = settings::RunSettings;
  static constexpr std::string_view name = "run settings";
  static constexpr auto kOptional = settings::detail::kOptional;
  static constexpr auto fields = std::tuple_cat(
      std::tuple{
          codedField<settings::codec::Path>("target", &R::target, "target model directory (Hugging Face layout)"),
          codedField<settings::codec::PathList>("drafters", &R::drafters, "DFlash drafter directories"),
          codedField<settings::codec::Path>("prompts", &R::prompts, "prompts JSONL"),
          field<R>("modes", &R::modes, "live, teacher-forced, ddtree", kOptional),
          field<R>("mask_variants", &R::maskVariants,
                   "reference, anchor-visible, block-causal, positions+1, no-context", kOptional),
          codedField<settings::codec::Anchors>("anchors", &R::anchors,
                                               "teacher-forced anchors: live, every[:k], random:N[:seed]", kOptional),
          field<R>("ddtree_budget", &R::ddtreeBudget, "DDTree node budget, root excluded", kOptional),
          field<R>("block_size", &R::blockSize, "draft blocks of N; default: the checkpoint's", kOptional),
          field<R>("max_new_tokens", &R::maxNewTokens, "tokens to generate per prompt", kOptional),
          field<R>("limit", &R::limit, "evaluate the first N prompts", kOptional),
          field<R>("record_top_k", &R::topK, "per-slot top-k stored with each step", kOptional)},
      fieldsThrough(&R::sampling, FieldTable<settings::SamplingOptions>::fields),
      std::tuple{field<R>("samples", &R::samples, "sampling: repeats of the evaluation", kOptional)},
      fieldsThrough(&R::model, FieldTable<settings::ModelOptions>::fields),
      std::tuple{
          codedField<settings::codec::Negated>("no_chat", &R::chatTemplate, "tokenize prompts as plain text", kOptional),
          codedField<settings::codec::OnOff>("thinking", &R::enableThinking,
                                             "on or off: the chat template's enable_thinking", kOptional),
          codedField<settings::codec::LegacyEnableThinking>("enable_thinking", &R::enableThinking,
                                                            "read only: the older spelling of thinking on", kOptional),
          field<R>("chat_template_kwargs", &R::chatTemplateKwargs,
                   "JSON object of further chat template variables, e.g. {\"reasoning_effort\": \"high\"}", kOptional),
          codedField<settings::codec::ShardText>("shard", &R::shard, "i/N: prompt k goes to shard k % N", kOptional),
          field<R>("skip_bad_prompts", &R::skipBadPrompts, "skip malformed prompt lines", kOptional),
          codedField<settings::codec::Negated>("no_parity", &R::parityCheck, "skip the train/eval parity check",
                                               kOptional),
          field<R>("hidden_statistics", &R::hiddenStatistics,
                   "record hidden-state statistics per teacher-forced step", kOptional),
          field<R>("calibrate_cost", &R::calibrateCost,
                   "time the target's verify forward and the drafter's block on the device, for the what-ifs' "
                   "speedup",
                   kOptional),
          field<R>("require", &R::passBars,
                   "pass bars `dflash-eval gate` checks the session against, e.g. \"tau(step40k) >= 4.0\"", kOptional),
          field<R>("step_counting", &R::stepCounting,
                   "live steps: dflash (dflash 0.1.0: last block shortened to the budget, counts cut at the budget "
                   "and the first stop token) or full-blocks (every block of B, counted in full)",
                   kOptional)});
};

// A diagnosis's keys are the evaluation's (its "seed" seeds the tap noise) and two of its own.
template <>
struct FieldTable<settings::DiagnoseSettings> {
  using R = settings::DiagnoseSettings;
  static constexpr std::string_view name = "diagnose settings";
  static constexpr auto kOptional = settings::detail::kOptional;
  static constexpr auto fields = std::tuple_cat(
      fieldsThrough(&R::evaluation, FieldTable<settings::RunSettings>::fields),
      std::tuple{codedField<settings::codec::OptionalPath>(
                     "training_dump", &R::trainingDump,
                     "SpecForge offline features (input_ids, aux_hidden_state) to check the taps against", kOptional),
                 codedField<settings::codec::OptionalPath>(
                     "training_template", &R::trainingTemplate,
                     "the chat template (.jinja) the drafter's training data was rendered with", kOptional),
                 field<R>("budget_minutes", &R::budgetMinutes, "stop taking prompts past this", kOptional)});
};

template <>
struct FieldTable<settings::InspectSettings> {
  using R = settings::InspectSettings;
  static constexpr std::string_view name = "inspect settings";
  static constexpr auto kOptional = settings::detail::kOptional;
  static constexpr auto fields = std::tuple_cat(
      std::tuple{codedField<settings::codec::Path>("target", &R::target, "target model directory"),
                 codedField<settings::codec::Path>("drafter", &R::drafter, "drafter directory"),
                 field<R>("ids", &R::ids, "the prompt and the response through the anchor"),
                 field<R>("anchor", &R::anchor, "the block's anchor position"),
                 field<R>("mask_variant", &R::variant, "the drafter's mask variant", kOptional),
                 field<R>("top_k", &R::topK, "per-slot top-k of the re-drafted step", kOptional),
                 field<R>("attention", &R::attention, "send every drafter layer's attention", kOptional),
                 field<R>("statistics", &R::statistics, "send the hidden-state statistics", kOptional)},
      fieldsThrough(&R::model, FieldTable<settings::ModelOptions>::fields),
      std::tuple{field<R>("block_size", &R::blockSize, "default: the checkpoint's", kOptional),
                 field<R>("run_id", &R::runId, "the run the records are keyed to", kOptional),
                 field<R>("step_id", &R::stepId, "the step the records are keyed to", kOptional)});
};

}  // namespace dfi
