#include "dfi/engine/draft_pass.h"

#include <algorithm>
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "evaluation/teacher_forced/dflash_parity.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/evaluation_models.h"
#include "io/tensor_export.h"
#include "dfi/session/record_fields.h"

namespace dfi::engine {
namespace {

void checkAnchors(const std::vector<std::int64_t>& anchors, std::int64_t length) {
  if (anchors.empty()) throw UsageError("give at least one anchor", {.item = "anchors"});
  for (std::int64_t anchor : anchors)
    if (anchor < 0 || anchor >= length)
      throw UsageError("anchor " + std::to_string(anchor) + " is outside the sequence (0.." +
                           std::to_string(length - 1) + ")",
                       {.item = "anchors"});
}

// [N*B, H] rows of every block -> [N, B, H].
at::Tensor perBlock(const at::Tensor& rows, std::int64_t blocks) { return rows.view({blocks, -1, rows.size(-1)}); }

void writeLayers(tensorfile::SafetensorsWriter& writer, const std::string& path, const DrafterProbes& probes,
                 std::int64_t blocks) {
  for (std::size_t l = 0; l < probes.layerOutputs.size(); ++l)
    addTensor(writer, path + ".layer." + std::to_string(l), perBlock(probes.layerOutputs[l], blocks));
}

// DFlash2: the candidate selector's greedy path at every anchor (training path, as the
// teacher-forced run records it): drafts [N, B-1], candidates and scores [N, B-1, k], the
// chosen index [N, B-1].
void writeSelection(tensorfile::SafetensorsWriter& writer, const std::vector<session::StepRecord>& steps) {
  std::vector<std::int64_t> drafts, candidates, chosen;
  std::vector<float> scores;
  for (const session::StepRecord& step : steps) {
    drafts.insert(drafts.end(), step.draftTokens.begin(), step.draftTokens.end());
    candidates.insert(candidates.end(), step.candidateIds.begin(), step.candidateIds.end());
    scores.insert(scores.end(), step.candidateScores.begin(), step.candidateScores.end());
    chosen.insert(chosen.end(), step.chosenCandidates.begin(), step.chosenCandidates.end());
  }
  const auto n = static_cast<std::int64_t>(steps.size());
  const auto slots = static_cast<std::int64_t>(steps.front().draftTokens.size());
  addTensor(writer, "selector.draft_tokens", at::tensor(drafts, at::kLong).view({n, slots}));
  addTensor(writer, "selector.candidates", at::tensor(candidates, at::kLong).view({n, slots, -1}));
  addTensor(writer, "selector.scores", at::tensor(scores, at::kFloat).view({n, slots, -1}));
  addTensor(writer, "selector.chosen", at::tensor(chosen, at::kLong).view({n, slots}));
}

// DSpark: the drafts of the heads' greedy chain at every anchor (training path, as the
// teacher-forced run records it) [N, g], and the confidence head's output [N, g] when present.
void writeDsparkPath(tensorfile::SafetensorsWriter& writer, const std::vector<session::StepRecord>& steps) {
  std::vector<std::int64_t> drafts;
  std::vector<float> confidence;
  for (const session::StepRecord& step : steps) {
    drafts.insert(drafts.end(), step.draftTokens.begin(), step.draftTokens.end());
    confidence.insert(confidence.end(), step.draftConfidence.begin(), step.draftConfidence.end());
  }
  const auto n = static_cast<std::int64_t>(steps.size());
  addTensor(writer, "dspark.draft_tokens", at::tensor(drafts, at::kLong).view({n, -1}));
  if (!confidence.empty()) addTensor(writer, "dspark.confidence", at::tensor(confidence, at::kFloat).view({n, -1}));
}

// Every anchor's slots against the target's distribution (training path, StepRecord::slotOverlap)
// [N, g]: speculators' accept_rate of the same rows; NaN where the sequence has no target token.
void writeOverlap(tensorfile::SafetensorsWriter& writer, const std::vector<session::StepRecord>& steps, int drafts) {
  const auto n = static_cast<std::int64_t>(steps.size());
  at::Tensor overlap = at::full({n, drafts}, std::numeric_limits<float>::quiet_NaN(), at::kFloat);
  float* row = overlap.data_ptr<float>();
  for (const session::StepRecord& step : steps) {
    std::ranges::copy(step.slotOverlap, row);
    row += drafts;
  }
  addTensor(writer, "training.slot_overlap", overlap);
}

}  // namespace

DraftPath parseDraftPath(const std::string& text) {
  if (text == "inference") return DraftPath::Inference;
  if (text == "training") return DraftPath::Training;
  if (text == "both") return DraftPath::Both;
  throw UsageError("unknown draft path '" + text + "' (inference, training, both)", {.item = "--path"});
}

DraftPassSummary runDraftPass(const DraftPassRequest& request) {
  c10::InferenceMode inference;
  EvaluationSettings settings;
  settings.target = request.target;
  settings.drafters = {request.drafter};
  settings.model = request.model;
  settings.blockSize = request.blockSize;
  const LoadedModels models = loadModels(settings);
  const DFlashDrafter& drafter = *models.drafters.front().model;
  if (request.ids.empty()) throw UsageError("no token ids to draft over", {.item = "ids"});
  models.target->checkTokenIds(request.ids);
  const auto length = static_cast<std::int64_t>(request.ids.size());
  checkAnchors(request.anchors, length);

  const SequenceFeatures sequence = sequenceFeatures(*models.target, drafter, request.ids);
  const at::Tensor& ids = sequence.ids;
  const at::Tensor& features = sequence.features;
  const auto blocks = static_cast<std::int64_t>(request.anchors.size());

  tensorfile::SafetensorsWriter writer(request.out);
  addTensor(writer, "input_ids", ids);
  addTensor(writer, "anchors", at::tensor(request.anchors, at::kLong));
  DrafterProbes context{.wantContext = true};
  drafter.contextStates(features, &context);
  addTensor(writer, "context.fc", context.fcOutput);
  addTensor(writer, "context.hidden_norm", context.hiddenNormOutput);

  at::Tensor inferenceLogits, trainingLogits;
  if (request.path != DraftPath::Training) {
    DrafterProbes probes{.wantLayerOutputs = true};
    inferenceLogits = inferencePathLogits(drafter, features, ids, request.anchors, request.variant, &probes);
    addTensor(writer, "inference.logits", inferenceLogits);
    writeLayers(writer, "inference", probes, blocks);
  }
  if (request.path != DraftPath::Inference) {
    DrafterProbes probes{.wantLayerOutputs = true};
    trainingLogits = drafter.teacherForced(features, ids, request.anchors,
                                           request.trainingVariant.value_or(request.variant), 0, &probes);
    addTensor(writer, "training.logits", trainingLogits);
    writeLayers(writer, "training", probes, blocks);
  }

  const bool training = request.path != DraftPath::Inference;
  if (training || drafter.selector() || drafter.dsparkHeads()) {
    const std::vector<session::StepRecord> steps =
        teacherForcedSteps(sequence, drafter, request.anchors, request.trainingVariant.value_or(request.variant), 0);
    if (training) writeOverlap(writer, steps, drafter.draftsPerBlock());
    if (drafter.selector()) writeSelection(writer, steps);
    if (drafter.dsparkHeads()) writeDsparkPath(writer, steps);
  }

  DraftPassSummary summary{.blockSize = drafter.blockSize(), .layers = drafter.config().numHiddenLayers, .parity = {}};
  if (request.path == DraftPath::Both) {
    const std::vector<BlockParity> parity = compareDraftPaths(inferenceLogits, trainingLogits);
    std::vector<float> maxDiff, agreement;
    std::vector<std::int64_t> firstSlot;
    for (std::size_t j = 0; j < parity.size(); ++j) {
      summary.parity.push_back({request.anchors[j], parity[j].maxAbsDiff, parity[j].argmaxAgreement,
                                parity[j].firstDifferingSlot, parity[j].flagged});
      maxDiff.push_back(static_cast<float>(parity[j].maxAbsDiff));
      agreement.push_back(static_cast<float>(parity[j].argmaxAgreement));
      firstSlot.push_back(parity[j].firstDifferingSlot);
    }
    addTensor(writer, "parity.max_abs_diff", at::tensor(maxDiff, at::kFloat));
    addTensor(writer, "parity.argmax_agreement", at::tensor(agreement, at::kFloat));
    addTensor(writer, "parity.first_differing_slot", at::tensor(firstSlot, at::kLong));
  }
  writer.setMetadata("target", request.target.string());
  writer.setMetadata("drafter", request.drafter.string());
  writer.setMetadata("mask_variant", std::string(enumName(request.variant)));
  writer.setMetadata("training_mask_variant",
                     std::string(enumName(request.trainingVariant.value_or(request.variant))));
  writer.setMetadata("dtype", request.model.dtype);
  writer.setMetadata("block_convention", "slot 0 is the anchor; logits of slot i+1 draft position anchor+i+1");
  writer.finish();
  return summary;
}

}  // namespace dfi::engine
