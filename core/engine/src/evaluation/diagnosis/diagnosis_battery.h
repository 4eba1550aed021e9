#pragma once
// The hypotheses of `diagnose` as the engine runs them: each names the one thing its
// teacher-forced variant changes against the baseline. Planning needs only the configs, the
// tokenizer and the prompts (no weights), so the battery and the lint are known before compute.

#include <optional>
#include <string>
#include <vector>

#include "dfi/analysis/attention_mask.h"
#include "dfi/analysis/diagnosis.h"
#include "dfi/engine/diagnosis.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/modelspec/target_config.h"
#include "dfi/tokenizer/tokenizer.h"

namespace dfi::engine {

struct Hypothesis {
  enum class Kind {
    Mask,             // mask:<variant>, and positions:+1 (the PositionsPlusOne variant)
    SlotZeroMask,     // slot0:mask
    BlockSize,        // block-size:<n>
    TapShift,         // tap-shift:<i>:<+1|-1> and taps-shift:<+1|-1> (tap < 0: every tap)
    TapAblate,        // tap-ablate:<i>
    TapNoise,         // tap-noise:<sigma>
    Formatting,       // thinking:<on|off>, chat-template:off
    TargetDtype,      // target-dtype:<bf16|fp32>
    DeltaRuleForm,    // gdn:<chunked|recurrent>
    WindowFull,       // window:full
    VocabIdentity,    // vocab-map:identity (a reduced draft vocabulary's d2t ignored)
    TargetLmHead,     // lm-head:target (a reduced draft vocabulary's LM head replaced by the target's)
    RopeTheta,        // rope:theta=<x> (the drafter's RoPE base replaced by the target's)
    RopePartial,      // rope:partial=<f> (another fraction of each head rotated)
    SampleFromAnchor, // sample-from-anchor:<on|off> (speculators' field read the other way)
    WindowFrom,       // window-from:anchor (the sliding window as speculators trains it)
  };
  Kind kind = Kind::Mask;
  analysis::PlannedHypothesis planned;
  analysis::MaskVariant variant = analysis::MaskVariant::Reference;  // Mask
  int tap = -1;        // TapShift (-1: all), TapAblate: index into target_layer_ids
  int shift = 0;       // TapShift
  double sigma = 0;    // TapNoise
  int blockSize = 0;   // BlockSize
  bool chatTemplate = true, thinking = false;  // Formatting: how the prompt is rendered
  std::string dtype;   // TargetDtype
  bool recurrent = false;  // DeltaRuleForm
  double rope = 0;         // RopeTheta: the base; RopePartial: the rotated fraction
  bool fromAnchor = false;  // SampleFromAnchor: every slot drafts (on) or slots 1..B-1 (off);
                            // WindowFrom: the window counted from the anchor

  // Changes only the taps the drafter reads: the drafter, mask and tokens stay the baseline's.
  bool tapsOnly() const { return kind == Kind::TapShift || kind == Kind::TapAblate || kind == Kind::TapNoise; }
  // Runs the target again (its features differ); the others reuse the baseline's target pass.
  bool targetSide() const {
    return kind == Kind::Formatting || kind == Kind::TargetDtype || kind == Kind::DeltaRuleForm;
  }
};

// What the plan reads: no weights, nothing on a device.
struct BatteryInputs {
  const DiagnosisSettings& settings;
  const modelspec::DrafterConfig& drafter;
  const modelspec::TargetConfig& target;
  const std::optional<tokenizer::Tokenizer>& tokenizer;
  const std::vector<PromptSpec>& prompts;
};

// Every hypothesis, in the battery's order, applicable or not.
std::vector<Hypothesis> planHypotheses(const BatteryInputs& in);

// The lint findings, most severe first.
std::vector<analysis::LintFinding> lintFindings(const BatteryInputs& in, const std::filesystem::path& drafterDir);

// Whether the baseline's Gated DeltaNet layers take the recurrent form (the CPU's kernels).
bool baselineDeltaRuleIsRecurrent(const ModelOptions& model);

}  // namespace dfi::engine
