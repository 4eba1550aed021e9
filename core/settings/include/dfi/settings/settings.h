#pragma once
// The settings of an evaluation (`dflash-eval run`, the "run" request), a diagnosis (`diagnose`,
// the "diagnose" request) and an inspect (the "inspect" request), as typed values: one
// vocabulary for the command line, the protocol (its requests carry these types), the engine
// (which runs them) and the GUI (which fills them from its widgets). Torch-free and Qt-free.
//
// Their JSON (settings_fields.h: one field table per type, the keys of `run`'s options with '_'
// for '-') is the requests' payload and a run's recorded settings (RunRecord.settings_json); the
// keys never change, so older sessions read. validate() is the one check of each, called by the
// command line, `serve` and the Run dialog before anything runs.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::settings {

using session::EvaluationMode;  // live, teacher-forced, ddtree (EnumNames in record_fields.h)
using session::MaskVariant;     // reference, anchor-visible, ...

// Which positions of the greedy continuation get a teacher-forced block.
struct AnchorSelection {
  enum class Kind { LiveAnchors, Every, Random };
  Kind kind = Kind::LiveAnchors;  // the anchors the live loop visited (the parity check)
  int stride = 1;                 // Every: every stride-th generated position
  int count = 0;                  // Random: this many generated positions...
  std::uint64_t seed = 0;         // ...drawn with this seed

  bool operator==(const AnchorSelection&) const = default;
};
// "live", "every", "every:4", "random:64:7"; nullopt otherwise.
std::optional<AnchorSelection> parseAnchorSelection(std::string_view text);
// The text parseAnchorSelection reads back: "live", "every:4", "random:64:7".
std::string anchorSelectionText(const AnchorSelection& anchors);
inline constexpr std::string_view kAnchorSelectionSpellings = "live, every[:k] or random:N[:seed]";

// Shard `index` of `count`: prompt k goes to shard k % count. Written "i/N".
struct Shard {
  int index = 0;
  int count = 1;
  bool operator==(const Shard&) const = default;
};
std::optional<Shard> parseShard(std::string_view text);  // "i/N" with 0 <= i < N
std::string shardText(const Shard& shard);

// How the live loop drafts and counts the last steps of a response (EnumNames: "dflash",
// "full-blocks").
enum class StepCounting {
  // z-lab's dflash 0.1.0 (the published reference, the default): the last block is shortened to
  // the tokens the budget has left, a step counts only the tokens within the budget and up to
  // the first stop token, and no step runs when the first generated token is a stop token.
  Dflash,
  // The engine's earlier loop: every block has B slots and counts its accepted drafts and bonus
  // in full, past the budget or a stop token too.
  FullBlocks,
};
// One line for the summary: what the steps of a live run counted.
std::string_view stepCountingDescription(StepCounting counting);

// How the live loop picks tokens: greedy (temperature 0, the default) or sampled with z-lab's
// dflash 0.1.0 rule (temperature, then top-k, then top-p, renormalised).
struct SamplingOptions {
  double temperature = 0;  // 0: greedy (argmax), the package's default
  double topP = 1;         // nucleus: keep the most probable tokens whose mass before them is < top_p
  int topK = 0;            // keep the k most probable tokens; 0: the whole vocabulary
  std::uint64_t seed = 0;  // with the prompt id and the repeat, seeds every draw of a response

  bool greedy() const { return temperature <= 0; }
  bool operator==(const SamplingOptions&) const = default;
};
// The package's _validate_sampling: temperature >= 0, top_p in (0, 1], top_k >= 0; throws
// dfi::UsageError naming the field otherwise.
void validateSampling(const SamplingOptions& sampling);
// "greedy", or "T=1 top-p=0.95 top-k=20" (only the filters in use): the runs' label.
std::string samplingLabel(const SamplingOptions& sampling);

// Where and in which precision a model runs.
struct ModelOptions {
  // "cpu", "cuda", "cuda:N" or "cuda:local". Several devices place the decoder layers across
  // them in contiguous, nearly equal runs. Written as one comma list: "cuda:0,cuda:1".
  std::vector<std::string> devices{"cpu"};
  std::string dtype = "fp32";  // kDtypes
  // The most bytes of weights a device may take (--max-memory cuda:0=70GiB); the command line's
  // only, never written (a request runs on the engine's free memory).
  std::map<std::string, std::uint64_t> maxMemory;

  bool operator==(const ModelOptions&) const = default;
};
inline constexpr std::string_view kDtypes[] = {"fp32", "bf16", "fp16"};
std::vector<std::string> parseDeviceList(std::string_view text);  // "a,b" (empty parts dropped)
std::string deviceListText(const std::vector<std::string>& devices);

// A whole drafter evaluation (dfi/engine/evaluation.h runs it).
struct RunSettings {
  std::filesystem::path target;
  std::vector<std::filesystem::path> drafters;
  std::filesystem::path prompts;
  std::vector<EvaluationMode> modes{EvaluationMode::Live, EvaluationMode::TeacherForced, EvaluationMode::DDTree};
  std::vector<MaskVariant> maskVariants{MaskVariant::Reference};
  AnchorSelection anchors;
  int ddtreeBudget = 8;
  int maxNewTokens = 128;
  int topK = 8;  // per-slot top-k stored with every step (raised to the DDTree budget)
  ModelOptions model;
  bool chatTemplate = true;
  bool enableThinking = false;
  // Further chat template variables as a JSON object, as vLLM's chat_template_kwargs and
  // apply_chat_template(**kwargs) take them: {"reasoning_effort": "high"}. Empty: none.
  std::string chatTemplateKwargs;
  // Drafts blocks of this size instead of the checkpoint's block_size: at least 2 (an anchor
  // and one draft) and at most the trained size, whose slots the drafter has learned.
  std::optional<int> blockSize;
  std::optional<std::int64_t> limit;  // the first N prompts of the file, before sharding
  Shard shard;
  bool skipBadPrompts = false;  // a malformed prompt line is a warning, not an error
  // Every teacher-forced block is also drafted through the inference path (incremental, as
  // live) and the two compared; blocks that differ are flagged (docs/dflash.md 4.4).
  bool parityCheck = true;
  // Per teacher-forced step: statistics of the target taps, fc, hidden_norm and every drafter
  // layer (dfi/session/hidden_statistics.h). Off by default: ~8 records per tensor.
  bool hiddenStatistics = false;
  // Before the prompts, per drafter: time the target's verify forward over 1..n tokens and the
  // drafter's block on the evaluation's device, recorded with each of its runs, so that
  // `summary --what-if` can turn acceptance into speedup (dfi/analysis/budget_what_if.h).
  bool calibrateCost = false;
  // Pass bars a training pipeline sets before the evaluation ("tau(step40k) >= 4.0",
  // "paired(new - old) > -0.1"), recorded with the runs so that `dflash-eval gate` checks the
  // session against them (dfi/analysis/pass_bars.h).
  std::vector<std::string> passBars;
  StepCounting stepCounting = StepCounting::Dflash;  // how the live loop's last steps count
  // The live loop's token choice; teacher-forced and DDTree runs stay greedy measures.
  SamplingOptions sampling;
  int samples = 1;  // sampled evaluations: every run repeated with repeat r's seeds, r < samples

  bool operator==(const RunSettings&) const = default;
};

// `diagnose`: of the evaluation it reads the target, drafters, prompts, max new tokens, chat
// template and thinking, block size, limit, record top-k, devices and dtype of the baseline, and
// the sampling seed as the tap noise's seed; its modes, mask variants, anchors and sampling are
// its own (greedy live anchors, teacher-forced, reference mask).
struct DiagnoseSettings {
  RunSettings evaluation;
  // Hidden states dumped by the training pipeline (safetensors, the names `diff-dump` reads):
  // compared with every target layer, tensor by tensor, as lint.
  std::optional<std::filesystem::path> trainingDump;
  // The chat template the drafter's training data was rendered with (a .jinja file): its
  // rendering of the first prompt is compared with the target's, as lint. Default: the template
  // the drafter's checkpoint ships, if any.
  std::optional<std::filesystem::path> trainingTemplate;
  // Stop taking new prompts when the battery's projected time would pass it; every hypothesis
  // is still measured on the prompts taken.
  std::optional<double> budgetMinutes;
  // Relative scales of `tap-noise:<sigma>`: Gaussian noise of sigma times each tap's RMS. The
  // engine's choice, not written.
  std::vector<double> tapNoiseScales{0.05, 0.2, 0.5};

  std::uint64_t noiseSeed() const { return evaluation.sampling.seed; }
  bool operator==(const DiagnoseSettings&) const = default;
};

// One recorded block re-drafted with every probe on (dfi/engine/inspect.h).
struct InspectSettings {
  std::filesystem::path target;
  std::filesystem::path drafter;
  ModelOptions model;              // the devices and dtype the block's run recorded
  std::optional<int> blockSize;    // default: the checkpoint's
  std::vector<std::int64_t> ids;   // prompt and continuation: at least anchor + 1 tokens
  std::int64_t anchor = 0;
  MaskVariant variant = MaskVariant::Reference;
  int topK = 8;
  bool attention = true;
  bool statistics = true;
  // Keys the records carry, so the GUI can attach them to the block it asked about.
  session::RunId runId = 0;
  session::StepId stepId = 0;

  bool operator==(const InspectSettings&) const = default;
};

// Throw dfi::UsageError whose item names the field (its JSON key) for a value out of range or
// a combination that cannot run: no mode or mask variant, a block size below 2, an unknown
// dtype, thinking without the chat template, a greedy evaluation repeated, ...
void validate(const RunSettings& settings);
void validate(const DiagnoseSettings& settings);
void validate(const InspectSettings& settings);

// The JSON text of the settings (settings_fields.h), as RunRecord.settings_json records it.
std::string settingsJson(const RunSettings& settings);
// A run's recorded settings read back. Keys a run does not record (older files, imported runs)
// keep the defaults; throws dfi::FormatError naming the field for a value of the wrong type.
RunSettings recordedRunSettings(const std::string& settingsJson);

}  // namespace dfi::settings
