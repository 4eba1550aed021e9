#include "dfi/engine/inspect.h"

#include <cstring>
#include <string>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "dfi/base/error.h"
#include "dfi/session/hidden_statistics.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/teacher_forced/hidden_stats.h"
#include "models/model_registry_impl.h"

namespace dfi::engine {
namespace {

namespace hs = session::hidden_statistics;

session::TensorRecord tensorRecord(const InspectRequest& request, std::string name, int layer,
                                   session::TensorDType dtype, std::vector<std::int64_t> shape, std::string layout,
                                   const void* bytes, std::size_t size) {
  session::TensorRecord record;
  record.info.runId = request.runId;
  record.info.stepId = request.stepId;
  record.info.name = std::move(name);
  record.info.layer = layer;
  record.info.dtype = dtype;
  record.info.shape = std::move(shape);
  record.info.layout = std::move(layout);
  record.data.resize(size);
  std::memcpy(record.data.data(), bytes, size);
  return record;
}

void checkAnchor(const InspectRequest& request) {
  const auto length = static_cast<std::int64_t>(request.ids.size());
  if (request.anchor < 0 || request.anchor >= length)
    throw UsageError("anchor " + std::to_string(request.anchor) + " is outside the sequence (0.." +
                         std::to_string(length - 1) + ")",
                     {.item = "anchor"});
}

void addStatistics(std::vector<session::StatisticRecord>& out, std::vector<session::StatisticRecord> records,
                   const InspectRequest& request) {
  for (session::StatisticRecord& r : records) {
    r.runId = request.runId;
    r.stepId = request.stepId;
    out.push_back(std::move(r));
  }
}

}  // namespace

InspectResult inspectBlock(ModelRegistry& models, const InspectRequest& request) {
  c10::InferenceMode inference;
  const TargetModel& target = models.impl().target(request.target, request.model);
  const DFlashDrafter& drafter = models.impl().drafter(request.drafter, request.blockSize);
  checkAnchor(request);
  target.checkTokenIds(request.ids);

  const SequenceFeatures sequence = sequenceFeatures(target, drafter, request.ids);
  const std::int64_t anchors[] = {request.anchor};
  InspectResult result;
  result.step = teacherForcedSteps(sequence, drafter, anchors, request.variant, request.topK).front();
  result.step.runId = request.runId;
  result.step.stepId = request.stepId;

  const std::int64_t context = analysis::inferenceContextLength(request.variant, request.anchor);
  DrafterKvCache cache = drafter.newCache();
  DrafterProbes probes{.wantAttention = request.attention, .wantLayerOutputs = request.statistics,
                       .wantContext = request.statistics};
  drafter.draft(cache, sequence.features.narrow(0, 0, context), request.ids[static_cast<std::size_t>(request.anchor)],
                request.anchor, request.variant, &probes);

  const int b = drafter.blockSize();
  for (std::size_t l = 0; l < probes.attention.size(); ++l) {
    const at::Tensor probs = probes.attention[l].to(at::kCPU, at::kFloat).contiguous();
    result.tensors.push_back(tensorRecord(request, "drafter.layers." + std::to_string(l) + ".attn.probs",
                                          static_cast<int>(l), session::TensorDType::F32, probs.sizes().vec(),
                                          "head,query,key", probs.data_ptr(), probs.nbytes()));
  }
  for (const auto kind : {analysis::LayerAttention::Full, analysis::LayerAttention::Sliding}) {
    if (!drafter.hasLayersOf(kind)) continue;
    const analysis::MaskSpec spec = drafter.maskSpec(request.variant, kind);
    const std::vector<std::uint8_t> mask = analysis::inferenceMask(spec, request.anchor);
    result.tensors.push_back(tensorRecord(request,
                                          kind == analysis::LayerAttention::Full ? "drafter.mask.full" : "drafter.mask.sliding",
                                          -1, session::TensorDType::U8, {b, context + b}, "query,key", mask.data(),
                                          mask.size()));
  }

  if (request.statistics) {
    const auto& taps = drafter.config().targetLayerIds;
    for (std::size_t i = 0; i < taps.size(); ++i)
      addStatistics(result.statistics,
                    hiddenStatisticRecords(sequence.taps[i].narrow(0, 0, context), hs::kTargetTap, taps[i]), request);
    addStatistics(result.statistics, hiddenStatisticRecords(probes.fcOutput, hs::kDrafterFc), request);
    addStatistics(result.statistics, hiddenStatisticRecords(probes.hiddenNormOutput, hs::kDrafterHiddenNorm), request);
    for (std::size_t l = 0; l < probes.layerOutputs.size(); ++l)
      addStatistics(result.statistics,
                    hiddenStatisticRecords(probes.layerOutputs[l], hs::kDrafterLayer, static_cast<int>(l)), request);
  }
  return result;
}

}  // namespace dfi::engine
