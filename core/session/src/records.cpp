#include "dfi/session/records.h"

namespace dfi::session {

StepSummary summarize(const StepRecord& step) {
  std::int32_t garbled = 0;
  for (std::uint8_t flags : step.garbleFlags) garbled += flags != 0;
  return {step.stepId, step.runId, step.promptId, step.stepIndex, step.mode, step.anchorPosition,
          static_cast<std::int32_t>(step.draftTokens.size()), step.acceptedCount, garbled, step.countedLength};
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
