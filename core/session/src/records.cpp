#include "dfi/session/records.h"

#include <algorithm>

namespace dfi::session {

StepSummary summarize(const StepRecord& step) {
  StepSummary summary{step.stepId, step.runId, step.promptId, step.stepIndex, step.mode, step.anchorPosition,
                      static_cast<std::int32_t>(step.draftTokens.size()), step.acceptedCount, 0, step.countedLength};
  summarizeGarble(summary, step.garbleFlags, chainAcceptedCount(step));
  return summary;
}

std::int32_t chainAcceptedCount(EvaluationMode mode, std::int32_t acceptedCount, std::span<const TokenId> draftTokens,
                                std::span<const TokenId> targetTokens) {
  if (mode != EvaluationMode::DDTree) return acceptedCount;
  const std::size_t n = std::min(draftTokens.size(), targetTokens.size());
  std::size_t accepted = 0;
  while (accepted < n && draftTokens[accepted] == targetTokens[accepted]) ++accepted;
  return static_cast<std::int32_t>(accepted);
}

void summarizeGarble(StepSummary& step, std::span<const std::uint8_t> slotFlags, std::int32_t chainAccepted) {
  step.garbledSlots = step.proposedGarbledSlots = 0;
  step.proposedGarble = step.tailGarble = 0;
  for (std::size_t slot = 0; slot < slotFlags.size(); ++slot) {
    const std::uint8_t flags = slotFlags[slot];
    step.garbledSlots += flags != 0;
    if (static_cast<std::int64_t>(slot) <= chainAccepted) {
      step.proposedGarble |= flags;
      step.proposedGarbledSlots += flags != 0;
    } else {
      step.tailGarble |= flags;
    }
  }
}

std::size_t tensorDTypeSize(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::F32:
    case TensorDType::I32: return 4;
    case TensorDType::F16:
    case TensorDType::BF16: return 2;
    case TensorDType::U8: return 1;
  }
  return 1;
}

}  // namespace dfi::session
