#include "row_decode.h"

#include <limits>

#include "blob_codec.h"
#include "record_checks.h"

namespace dfi::session::detail {
namespace {

ErrorContext at(const std::string& file, const std::string& table, const char* column) {
  return {.file = file, .item = table + "." + column};
}

// Integers a damaged file may have widened past 32 bits are rejected rather than truncated.
// The error context is only built on failure: this runs for several columns of every row.
std::int32_t int32Column(const Statement& row, int column, const std::string& file, const char* table,
                         const char* name) {
  const std::int64_t value = row.integer(column);
  if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max())
    throw FormatError("value " + std::to_string(value) + " does not fit 32 bits", at(file, table, name));
  return static_cast<std::int32_t>(value);
}

std::string bytesColumn(const Statement& row, int column) {
  const auto bytes = row.blob(column);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

RunRecord decodeRun(const Statement& row) {
  RunRecord run;
  run.runId = row.integer(0);
  run.name = row.text(1);
  int column = 2;
  for (ModelIdentity* model : {&run.target, &run.drafter}) {
    model->path = row.text(column++);
    model->configJson = row.text(column++);
    model->weightsSha256 = row.text(column++);
  }
  run.engineVersion = row.text(8);
  run.device = row.text(9);
  run.dtype = row.text(10);
  run.blockSize = static_cast<std::int32_t>(row.integer(11));
  run.topK = static_cast<std::int32_t>(row.integer(12));
  run.settingsJson = row.text(13);
  run.shard = row.text(14);
  run.startedAt = row.real(15);
  run.finishedAt = row.real(16);
  run.timingsJson = row.text(17);
  return run;
}

PromptRecord decodePrompt(const Statement& row, const std::string& file) {
  PromptRecord prompt;
  prompt.runId = row.integer(0);
  prompt.promptId = row.integer(1);
  prompt.dataset = row.text(2);
  prompt.turn = int32Column(row, 3, file, "prompts", "turn");
  prompt.text = row.text(4);
  prompt.promptTokens = decodeBlob<TokenId>(row.blob(5), at(file, "prompts", "prompt_tokens"));
  prompt.completionTokens = int32Column(row, 6, file, "prompts", "completion_tokens");
  return prompt;
}

namespace {

// The block's key and position, the first six columns of both step queries.
template <typename Step>
void decodeStepKey(const Statement& row, const std::string& file, Step& step) {
  step.stepId = row.integer(0);
  step.runId = row.integer(1);
  step.promptId = row.integer(2);
  step.stepIndex = int32Column(row, 3, file, "steps", "step_index");
  step.mode = static_cast<StepMode>(int32Column(row, 4, file, "steps", "mode"));
  step.anchorPosition = row.integer(5);
}

}  // namespace

StepRecord decodeStep(const Statement& row, const std::string& file) {
  StepRecord step;
  decodeStepKey(row, file, step);
  step.anchorToken = int32Column(row, 6, file, "steps", "anchor_token");
  step.draftTokens = decodeBlob<TokenId>(row.blob(7), at(file, "steps", "draft_tokens"));
  step.targetTokens = decodeBlob<TokenId>(row.blob(8), at(file, "steps", "target_tokens"));
  step.acceptedCount = int32Column(row, 9, file, "steps", "accepted_count");
  step.bonusToken = int32Column(row, 10, file, "steps", "bonus_token");
  step.topKIds = decodeBlob<TokenId>(row.blob(11), at(file, "steps", "topk_ids"));
  step.topKProbs = decodeBlob<float>(row.blob(12), at(file, "steps", "topk_probs"));
  step.garbleFlags = decodeBlob<std::uint8_t>(row.blob(13), at(file, "steps", "garble_flags"));
  step.maskVariant = row.text(14);
  if (auto problem = stepProblem(step, -1))
    throw FormatError(*problem + " (step " + std::to_string(step.stepId) + ")", {.file = file, .item = "steps"});
  return step;
}

StepSummary decodeStepSummary(const Statement& row, const std::string& file) {
  StepSummary step;
  decodeStepKey(row, file, step);
  const std::int64_t draftBytes = row.integer(6);
  step.acceptedCount = int32Column(row, 7, file, "steps", "accepted_count");
  const auto flags = row.blob(8);
  for (std::uint8_t f : flags) step.garbledSlots += f != 0;
  // The checks of decodeStep that these columns allow.
  std::optional<std::string> problem;
  constexpr std::int64_t tokenBytes = sizeof(TokenId);
  if (draftBytes % tokenBytes != 0 || draftBytes / tokenBytes > std::numeric_limits<std::int32_t>::max())
    problem = "draft_tokens of " + std::to_string(draftBytes) + " bytes";
  step.draftSlots = static_cast<std::int32_t>(draftBytes / tokenBytes);
  if (!problem && (step.acceptedCount < 0 || step.acceptedCount > step.draftSlots))
    problem = "accepted count " + std::to_string(step.acceptedCount) + " is outside 0.." + std::to_string(step.draftSlots);
  if (!problem && !flags.empty() && flags.size() != static_cast<std::size_t>(step.draftSlots))
    problem = "garble flags cover " + std::to_string(flags.size()) + " slots, the block has " +
              std::to_string(step.draftSlots);
  if (!problem && static_cast<std::uint32_t>(step.mode) > static_cast<std::uint32_t>(StepMode::DDTree))
    problem = "unknown step mode " + std::to_string(static_cast<std::int32_t>(step.mode));
  if (problem)
    throw FormatError(*problem + " (step " + std::to_string(step.stepId) + ")", {.file = file, .item = "steps"});
  return step;
}

TreeRecord decodeTree(const Statement& row, const std::string& file) {
  TreeRecord tree;
  tree.stepId = row.integer(0);
  tree.nodeTokens = decodeBlob<TokenId>(row.blob(1), at(file, "trees", "node_tokens"));
  tree.nodeLogProbs = decodeBlob<float>(row.blob(2), at(file, "trees", "node_log_probs"));
  tree.parents = decodeBlob<std::int32_t>(row.blob(3), at(file, "trees", "parents"));
  tree.acceptedPath = decodeBlob<std::int32_t>(row.blob(4), at(file, "trees", "accepted_path"));
  if (auto problem = treeProblem(tree))
    throw FormatError(*problem + " (step " + std::to_string(tree.stepId) + ")", {.file = file, .item = "trees"});
  return tree;
}

StatisticRecord decodeStatistic(const Statement& row, const std::string& file) {
  StatisticRecord statistic;
  statistic.runId = row.integer(0);
  statistic.stepId = row.integer(1);
  statistic.name = row.text(2);
  statistic.layer = int32Column(row, 3, file, "statistics", "layer");
  statistic.head = int32Column(row, 4, file, "statistics", "head");
  statistic.values = decodeBlob<float>(row.blob(5), at(file, "statistics", "values_f32"));
  return statistic;
}

TensorInfo decodeTensorInfo(const Statement& row, const std::string& file) {
  TensorInfo info;
  info.tensorId = row.integer(0);
  info.runId = row.integer(1);
  info.stepId = row.integer(2);
  info.name = row.text(3);
  info.layer = int32Column(row, 4, file, "tensors", "layer");
  info.head = int32Column(row, 5, file, "tensors", "head");
  info.dtype = static_cast<TensorDType>(int32Column(row, 6, file, "tensors", "dtype"));
  info.shape = decodeBlob<std::int64_t>(row.blob(7), at(file, "tensors", "shape"));
  info.layout = row.text(8);
  info.tileBytes = row.integer(9);
  TileLayout layout;
  if (auto problem = tileLayoutProblem(info, false, layout)) throw FormatError(*problem, {.file = file, .item = "tensors"});
  return info;
}

TokenString decodeToken(const Statement& row) {
  return {.tokenId = static_cast<TokenId>(row.integer(0)), .raw = bytesColumn(row, 1), .display = row.text(2)};
}

Annotation decodeAnnotation(const Statement& row, const std::string& file) {
  Annotation note;
  note.annotationId = row.integer(0);
  note.runId = row.integer(1);
  note.stepId = row.integer(2);
  const std::int32_t kind = int32Column(row, 3, file, "annotations", "kind");
  if (kind < 0 || kind > static_cast<std::int32_t>(AnnotationKind::Layout))
    throw FormatError("unknown annotation kind " + std::to_string(kind), at(file, "annotations", "kind"));
  note.kind = static_cast<AnnotationKind>(kind);
  note.body = row.text(4);
  note.createdAt = row.real(5);
  return note;
}

}  // namespace dfi::session::detail
