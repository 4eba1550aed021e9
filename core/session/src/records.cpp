#include "dfi/session/records.h"

namespace dfi::session {

std::string_view stepModeName(StepMode mode) {
  switch (mode) {
    case StepMode::Live: return "live";
    case StepMode::TeacherForced: return "teacher_forced";
    case StepMode::DDTree: return "ddtree";
  }
  return "unknown";
}

StepSummary summarize(const StepRecord& step) {
  std::int32_t garbled = 0;
  for (std::uint8_t flags : step.garbleFlags) garbled += flags != 0;
  return {step.stepId, step.runId, step.promptId, step.stepIndex, step.mode, step.anchorPosition,
          static_cast<std::int32_t>(step.draftTokens.size()), step.acceptedCount, garbled};
}

std::string_view tensorDTypeName(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::F32: return "float32";
    case TensorDType::F16: return "float16";
    case TensorDType::BF16: return "bfloat16";
    case TensorDType::U8: return "uint8";
    case TensorDType::I32: return "int32";
  }
  return "unknown";
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
