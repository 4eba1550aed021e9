#pragma once
// `dflash-eval diagnose`: for every drafter, a battery of hypotheses, each a variant of the
// teacher-forced evaluation that would score higher if the drafter had been trained (or is
// served) with a given mismatch: mask variants, taps moved or ablated or noised, positions,
// the first slot's input, the block size, prompt formatting, the target's numerics, the
// window. Every variant drafts at the anchors of the baseline's live loop on the same
// continuation, so each is a paired comparison; dfi/analysis/diagnosis.h reads the result back.
// Drafter-side variants reuse one target pass per prompt (every layer's hidden states kept
// once); only target-side variants run the target again. Lint findings come first, before any
// weight is loaded. Torch-free API.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "dfi/analysis/diagnosis.h"
#include "dfi/engine/evaluation.h"

namespace dfi::engine {

// Target, drafters (each gets its own diagnosis), prompts, max new tokens, chat template and
// thinking, block size, devices and dtype of the baseline; its modes, mask variants, anchors
// and sampling are the diagnosis's own: greedy live anchors, teacher-forced, reference mask.
// The evaluation's sampling seed seeds the tap noise (DiagnoseSettings::noiseSeed).
using DiagnosisSettings = settings::DiagnoseSettings;

struct DiagnosisOutcome {
  std::vector<session::RunId> baselines;  // one per drafter, in drafter order
  std::int64_t prompts = 0;               // prompts every hypothesis was measured on
  bool budgetReached = false;
};

// The lint findings of one drafter against the target (no weights read).
std::vector<analysis::LintFinding> lintDrafter(const DiagnosisSettings& settings, const std::filesystem::path& drafter);

// Throws dfi::Error subclasses for bad input before any compute, and dfi::CancelledError when
// cancelled: every step already written stays in the sink, so the hypotheses measured so far
// read back (paired over the prompts they reached).
DiagnosisOutcome runDiagnosis(const DiagnosisSettings& settings, RecordSink& sink,
                              const std::function<void(const EvaluationProgress&)>& progress,
                              const CancellationToken& cancel, ModelRegistry* registry = nullptr);

}  // namespace dfi::engine
