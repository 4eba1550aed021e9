#pragma once
// A whole drafter evaluation: for every drafter, every prompt is decoded live (greedy DFlash,
// the reference loop), then the drafter is re-run teacher-forced on that greedy continuation
// for each mask variant, and DDTree-N trees are built from the teacher-forced per-slot top-k.
// Every block becomes a record in a RecordSink. Torch-free API; the CLI (`run`, `serve`) and
// the tests drive it.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/engine/model_options.h"
#include "dfi/session/records.h"
#include "dfi/engine/model_registry.h"
#include "dfi/engine/sampling.h"
#include "dfi/engine/step_counting.h"
#include "dfi/engine/record_sink.h"

namespace dfi::engine {

using session::EvaluationMode;  // the records' enum: live, teacher-forced, ddtree

// Which positions of the greedy continuation get a teacher-forced block.
struct AnchorSelection {
  enum class Kind { LiveAnchors, Every, Random };
  Kind kind = Kind::LiveAnchors;  // the anchors the live loop visited (the parity check)
  int stride = 1;                 // Every: every stride-th generated position
  int count = 0;                  // Random: this many generated positions...
  std::uint64_t seed = 0;         // ...drawn with this seed
};
// "live", "every", "every:4", "random:64:7"; throws dfi::UsageError otherwise.
AnchorSelection parseAnchorSelection(const std::string& text);
// The text parseAnchorSelection reads back: "live", "every:4", "random:64:7".
std::string anchorSelectionText(const AnchorSelection& anchors);

struct EvaluationSettings {
  std::filesystem::path target;
  std::vector<std::filesystem::path> drafters;
  std::filesystem::path prompts;
  std::vector<EvaluationMode> modes{EvaluationMode::Live, EvaluationMode::TeacherForced,
                                    EvaluationMode::DDTree};
  std::vector<analysis::MaskVariant> maskVariants{analysis::MaskVariant::Reference};
  AnchorSelection anchors;
  int ddtreeBudget = 8;
  int maxNewTokens = 128;
  int topK = 8;  // per-slot top-k stored with every step (raised to the DDTree budget)
  ModelOptions model;
  bool chatTemplate = true;
  bool enableThinking = false;
  // Drafts blocks of this size instead of the checkpoint's block_size: at least 2 (an anchor
  // and one draft) and at most the trained size, whose slots the drafter has learned.
  std::optional<int> blockSize;
  std::optional<std::int64_t> limit;  // the first N prompts of the file, before sharding
  int shardIndex = 0;
  int shardCount = 1;
  bool skipBadPrompts = false;  // a malformed prompt line is a warning, not an error
  // Every teacher-forced block is also drafted through the inference path (incremental, as
  // live) and the two compared; blocks that differ are flagged (spec-dflash 4.4).
  bool parityCheck = true;
  // Per teacher-forced step: statistics of the target taps, fc, hidden_norm and every
  // drafter layer (dfi/session/hidden_statistics.h). Off by default: ~8 records per tensor.
  bool hiddenStatistics = false;
  StepCounting stepCounting = StepCounting::Dflash;  // how the live loop's last steps count
  // The live loop's token choice; teacher-forced and DDTree runs stay greedy measures (argmax
  // drafts against the target's argmax), on the live loop's continuation.
  SamplingOptions sampling;
  int samples = 1;  // sampled evaluations: every run repeated with repeat r's seeds, r < samples

  std::string toJson() const;  // recorded with every run
};

struct EvaluationProgress {
  std::int64_t done = 0;   // (drafter, prompt) pairs finished
  std::int64_t total = 0;
  double elapsedSeconds = 0;
  double etaSeconds = 0;
  std::string current;     // "drafter 1/2, prompt 3/10"
};

class CancellationToken {
 public:
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  std::atomic<bool> cancelled_{false};
};

// One response of a run (a prompt's generation, or its teacher-forced replay), for intervals
// and per-dataset breakdowns over responses.
struct ResponseSummary {
  session::PromptId promptId = 0;
  std::string dataset;  // the prompt's "dataset", empty when the file gives none
  analysis::ResponseAcceptance acceptance;
};

// One row per recorded run: tau in the three public conventions (analysis/acceptance.h).
struct RunSummary {
  session::RunId runId = 0;
  std::string name;  // "<drafter dir>/<mode>/<variant>"
  std::string drafter;
  EvaluationMode mode = EvaluationMode::Live;
  analysis::MaskVariant variant = analysis::MaskVariant::Reference;
  int sample = 0;  // the repeat of a sampled evaluation
  std::int64_t steps = 0;
  double tauReference = 0, tauVllm = 0;
  std::optional<double> tauSglang;  // live runs only: the others generate no completion
  std::vector<ResponseSummary> responses;
  std::int64_t parityFlagged = 0;  // teacher-forced blocks whose training and inference paths differ
};

// Throws dfi::Error subclasses for bad inputs (before any compute where possible: every
// drafter is checked against the target first) and dfi::CancelledError when cancelled; records
// already in the sink stay there.
// With `registry`, models are taken from it and stay loaded for the next evaluation
// (`dflash-eval serve`).
std::vector<RunSummary> runEvaluation(const EvaluationSettings& settings, RecordSink& sink,
                                      const std::function<void(const EvaluationProgress&)>& progress,
                                      const CancellationToken& cancel, ModelRegistry* registry = nullptr);

}  // namespace dfi::engine
