#pragma once
// A diagnosis (`dflash-eval diagnose`) read back from its runs. Its baseline run (hypothesis
// "baseline": teacher-forced at the live anchors, reference mask) records in its settings the
// lint findings and the battery as planned before any compute; every hypothesis that applies is
// a teacher-forced run at the same anchors under one variant, named by the hypothesis. What the
// diagnosis says is computed here from those runs: for each hypothesis the paired difference of
// its tau against the baseline's over the same prompts, with a 95% bootstrap interval, ranked.
// One implementation for the CLI's report and JSON, the export and the GUI's Diagnosis panel.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dfi/analysis/run_comparison.h"
#include "dfi/session/records.h"

namespace dfi::analysis {

enum class LintSeverity { Error, Warning, Info };
std::string_view lintSeverityName(LintSeverity severity);  // "error", "warning", "info"

// Something wrong or worth knowing about the checkpoints, found before any compute.
struct LintFinding {
  LintSeverity severity = LintSeverity::Warning;
  std::string code;     // stable: "mask-token-in-text", "tap-is-last-layer", ...
  std::string subject;  // the file and field: "drafter/config.json: dflash_config.mask_token_id"
  std::string message;  // a sentence a person can act on
  bool operator==(const LintFinding&) const = default;
};

// A hypothesis of the battery as planned: what its variant changes and whether it applies to
// this drafter and target at all (no sliding layers: no `window:*`; no DeltaNet layers: no `gdn:*`).
struct PlannedHypothesis {
  std::string name;    // stable: "taps-shift:-1", "mask:anchor-visible", "tap-noise:0.1"
  std::string change;  // one line: what the variant evaluates differently
  bool applicable = true;
  std::string reason;  // why it does not apply
  bool operator==(const PlannedHypothesis&) const = default;
};

struct DiagnosisPlan {
  std::vector<LintFinding> lint;
  std::vector<PlannedHypothesis> battery;
  bool operator==(const DiagnosisPlan&) const = default;
};

// The baseline run's settings JSON with the plan added under "diagnosis", and the plan read
// back from it (nullopt when the settings hold none; dfi::FormatError when malformed).
std::string withDiagnosisPlan(const std::string& settingsJson, const DiagnosisPlan& plan);
std::optional<DiagnosisPlan> diagnosisPlan(const std::string& settingsJson);

struct HypothesisResult {
  PlannedHypothesis planned;
  session::RunId run = 0;  // 0: not applicable, or not measured (no prompt of it finished)
  std::int64_t pairedPrompts = 0;
  Interval tau;       // the hypothesis run's tau (z-lab convention) over the paired prompts
  Interval deltaTau;  // paired mean over prompts of tau(hypothesis) - tau(baseline), 95% bootstrap
  // Blocks of the same response and step in both runs whose acceptance length changed the most,
  // largest change first (A = baseline, B = hypothesis).
  std::vector<BlockRegression> gains, losses;

  bool measured() const { return run != 0; }
  // The drafter does better under the variant beyond noise: it was probably trained that way.
  // Never over fewer prompts than a verdict needs (kMinPromptsForVerdict).
  bool candidateCause() const { return measured() && verdictPossible(pairedPrompts) && deltaTau.low > 0; }
};

struct Diagnosis {
  session::RunId baseline = 0;
  std::string drafter;  // the drafter's directory name
  Interval baselineTau;
  std::vector<LintFinding> lint;
  // Measured hypotheses by deltaTau, largest first; then the unmeasured, then those not applicable.
  std::vector<HypothesisResult> hypotheses;
};

// Reads every step of a run with its token arrays (what a step summary leaves out).
using StepScan =
    std::function<void(session::RunId run, const std::function<void(const session::StepRecord&)>& visit)>;

// Findings the baseline's own steps show, beside the lint (which is found before any compute):
// a DFlash2 candidate selector that never overrules the drafter's argmax, or never helps it
// ("selector-not-effective", with the accepted lengths of both chains and of the best path).
std::vector<LintFinding> measuredFindings(const session::RunRecord& baseline, const StepScan& steps);

// How many changed blocks each hypothesis keeps per direction.
inline constexpr int kDiagnosisBlocksKept = 20;

// Every diagnosis among `runs` (one per baseline run, in run order). A hypothesis run belongs to
// the nearest baseline before it with the same drafter. The baseline's acceptance lengths are
// capped at a `block-size:<n>` hypothesis's block size, so that it is compared on the slots both
// draft. With `steps`, the baseline's measuredFindings join its lint. Passes on the scans'
// dfi::Error.
std::vector<Diagnosis> readDiagnoses(const std::vector<session::RunRecord>& runs, const StepSummaryScan& scan,
                                     const StepScan& steps = {}, int resamples = kBootstrapResamples);

// The report as `diagnose --json` prints it: {"lint": [...], "hypotheses": [{"name", "delta_tau",
// "ci": [low, high], "applicable", ...}, ...]} for one diagnosis.
std::string diagnosisJson(const Diagnosis& diagnosis);

}  // namespace dfi::analysis
