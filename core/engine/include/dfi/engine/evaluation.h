#pragma once
// A whole drafter evaluation: for every drafter, every prompt is decoded live (greedy DFlash,
// the reference loop), then the drafter is re-run teacher-forced on that greedy continuation
// for each mask variant, and DDTree-N trees are built from the teacher-forced per-slot top-k.
// Every block becomes a record in a RecordSink. Torch-free API; the CLI (`run`, `serve`) and
// the tests drive it.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dfi/base/cancellation.h"
#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/analysis/run_summary.h"
#include "dfi/engine/model_options.h"
#include "dfi/session/records.h"
#include "dfi/engine/model_registry.h"
#include "dfi/engine/sampling.h"
#include "dfi/engine/step_counting.h"
#include "dfi/engine/record_sink.h"
#include "dfi/settings/settings.h"

namespace dfi::engine {

using session::EvaluationMode;  // the records' enum: live, teacher-forced, ddtree

// The settings of an evaluation are the settings vocabulary's (dfi/settings/settings.h): the
// command line, the "run" request and the GUI fill the same type, and a run records it
// (settings::settingsJson) as RunRecord.settings_json.
using EvaluationSettings = settings::RunSettings;
using settings::AnchorSelection;

struct EvaluationProgress {
  std::int64_t done = 0;   // (drafter, prompt) pairs finished
  std::int64_t total = 0;
  double elapsedSeconds = 0;
  double etaSeconds = 0;
  std::string current;     // "drafter 1/2, prompt 3/10"
};

// One response of a run (a prompt's generation, or its teacher-forced replay), for intervals
// and per-dataset breakdowns over responses.
struct ResponseSummary {
  session::PromptId promptId = 0;
  std::string dataset;  // the prompt's "dataset", empty when the file gives none
  analysis::ResponseAcceptance acceptance;
};

// One recorded run of an evaluation, with its responses' acceptance lengths: the input of the
// run summary (summaryRuns below), which alone computes tau and its intervals.
struct EvaluatedRun {
  session::RunId runId = 0;
  std::string name;  // "<drafter dir>/<mode>/<variant>"
  std::string drafter;
  EvaluationMode mode = EvaluationMode::Live;
  analysis::MaskVariant variant = analysis::MaskVariant::Reference;
  int sample = 0;  // the repeat of a sampled evaluation
  std::int64_t steps = 0;
  std::vector<ResponseSummary> responses;
  std::int64_t parityFlagged = 0;  // teacher-forced blocks whose training and inference paths differ
};

// Throws dfi::Error subclasses for bad inputs (before any compute where possible: every
// drafter is checked against the target first) and dfi::CancelledError when cancelled; records
// already in the sink stay there.
// With `registry`, models are taken from it and stay loaded for the next evaluation
// (`dflash-eval serve`).
std::vector<EvaluatedRun> runEvaluation(const EvaluationSettings& settings, RecordSink& sink,
                                      const std::function<void(const EvaluationProgress&)>& progress,
                                      const CancellationToken& cancel, ModelRegistry* registry = nullptr);

// The evaluation's runs as the run summary takes them (analysis/run_summary.h), labelled as
// `summary` labels a recorded session: the repeats of a sampled evaluation are one summary
// run, their responses tagged with the repeat; a prompt without a "dataset" belongs to the
// prompt set named after its file.
std::vector<analysis::SummaryRun> summaryRuns(const EvaluationSettings& settings, const std::vector<EvaluatedRun>& runs);

}  // namespace dfi::engine
