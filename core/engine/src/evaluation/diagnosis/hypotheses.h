#pragma once
// The hypotheses of `diagnose` as one drafter's battery applies them: what each variant changes
// against the baseline (the taps the drafter reads, a drafter of its own, the mask, the first
// slot's input, the target's pass) and the drafts it makes at the baseline's anchors; and one
// drafter's plan (lint and battery) from the configs, tokenizer and prompts alone. The battery's
// run, which records the baseline and every variant over the prompts, is diagnosis.cpp.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/analysis/diagnosis.h"
#include "dfi/engine/diagnosis.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/modelspec/target_config.h"
#include "dfi/session/records.h"
#include "dfi/tokenizer/tokenizer.h"
#include "evaluation/diagnosis/diagnosis_battery.h"
#include "evaluation/evaluation_models.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

// One prompt's baseline: where the live loop placed its anchors on its greedy continuation.
struct PromptPass {
  const PromptSpec* prompt = nullptr;
  std::int64_t promptLength = 0;
  std::vector<std::int64_t> tokens;  // prompt + continuation
  std::vector<std::int64_t> anchors;
  at::Tensor predictions;  // [T] the target's greedy token after each position, CPU
};

// Every target layer a drafter-side hypothesis reads, one forward's worth: the taps and their
// neighbours (layer -1 is the embedding), not all layers, so that a deep target's states fit.
class LayerStates {
 public:
  LayerStates(const TargetModel& target, const at::Tensor& ids, const std::set<int>& layers);

  const at::Tensor& layer(int id) const { return states_.at(id); }
  const at::Tensor& predictions() const { return predictions_; }

 private:
  std::map<int, at::Tensor> states_;
  at::Tensor predictions_;
};

// The taps as the drafter reads them: side by side on the first tap's device.
at::Tensor sideBySide(const std::vector<at::Tensor>& taps);
SequenceFeatures featuresOf(const at::Tensor& ids, const at::Tensor& predictions, std::vector<at::Tensor> taps);

// The baseline's taps with one drafter-side hypothesis applied.
std::vector<at::Tensor> hypothesisTaps(const Hypothesis& h, const LayerStates& states, const std::vector<int>& tapIds,
                                       std::uint64_t seed);

// A drafter-side hypothesis's own drafter where it needs one: another block size, or its
// sliding layers made full; from the drafter's files the evaluation opened.
std::unique_ptr<DFlashDrafter> variantDrafter(const Hypothesis& h, const DrafterFiles& files, const TargetModel& target);

// The drafts of one drafter-side hypothesis at the baseline's anchors, through each block's
// first rejected slot: a hypothesis is measured by its acceptance alone. `own`: its
// variantDrafter, if any.
std::vector<session::StepRecord> drafterSideSteps(const Hypothesis& h, const LayerStates& states, const at::Tensor& ids,
                                                  const DFlashDrafter& drafter, const DFlashDrafter* own,
                                                  const PromptPass& pass, std::uint64_t seed);

// The drafts of one target-side hypothesis: the target runs again (other formatting of the
// prompt, other dtype, other Gated DeltaNet form) and the drafter reads its taps.
std::vector<session::StepRecord> targetSideSteps(const Hypothesis& h, const TargetModel& target,
                                                 const DFlashDrafter& drafter, const PromptPass& pass,
                                                 const LoadedModels& models, const EvaluationSettings& base);

// One drafter's lint and battery, from the configs, tokenizer and prompts alone.
struct PlannedDrafter {
  analysis::DiagnosisPlan plan;
  std::vector<Hypothesis> hypotheses;
};

PlannedDrafter planDrafter(const DiagnosisSettings& settings, const modelspec::TargetConfig& target,
                           const std::optional<tokenizer::Tokenizer>& tokenizer, const std::vector<PromptSpec>& prompts,
                           const std::filesystem::path& dir);

}  // namespace dfi::engine
