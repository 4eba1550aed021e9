#include "row_decode.h"

#include <limits>

#include "record_checks.h"
#include "sql_table.h"

namespace dfi::session::detail {

template <typename R>
R decodeRecord(const Statement& row, const std::string& file) {
  return decodeFields<R>(row, file);
}

template <>
StepRecord decodeRecord<StepRecord>(const Statement& row, const std::string& file) {
  StepRecord step = decodeFields<StepRecord>(row, file);
  if (auto problem = stepProblem(step, -1))
    throw FormatError(*problem + " (step " + std::to_string(step.stepId) + ")", {.file = file, .item = "steps"});
  return step;
}

template <>
TreeRecord decodeRecord<TreeRecord>(const Statement& row, const std::string& file) {
  TreeRecord tree = decodeFields<TreeRecord>(row, file);
  if (auto problem = treeProblem(tree))
    throw FormatError(*problem + " (step " + std::to_string(tree.stepId) + ")", {.file = file, .item = "trees"});
  return tree;
}

template <>
TensorInfo decodeRecord<TensorInfo>(const Statement& row, const std::string& file) {
  TensorInfo info = decodeFields<TensorInfo>(row, file);
  TileLayout layout;
  if (auto problem = tileLayoutProblem(info, false, layout)) throw FormatError(*problem, {.file = file, .item = "tensors"});
  return info;
}

template RunRecord decodeRecord<RunRecord>(const Statement&, const std::string&);
template PromptRecord decodeRecord<PromptRecord>(const Statement&, const std::string&);
template StatisticRecord decodeRecord<StatisticRecord>(const Statement&, const std::string&);
template TokenString decodeRecord<TokenString>(const Statement&, const std::string&);
template Annotation decodeRecord<Annotation>(const Statement&, const std::string&);

namespace {

using S = StepRecord;

std::string column(std::string_view name) { return std::string(name); }

// A DDTree step's token arrays give its draft chain's own accepted count (the row records the
// tree's); other steps' arrays are not read.
std::string ddtreeOnly(std::string_view name) {
  return "CASE WHEN " + column(fieldName(&S::mode)) + " = " +
         std::to_string(static_cast<std::int32_t>(EvaluationMode::DDTree)) + " THEN " + column(name) + " END";
}

}  // namespace

// length() of a BLOB reads its size from the row header, not its bytes.
std::string stepSummarySql(std::int32_t version, std::string_view rest) {
  const AddedColumn* counted = addedColumn<S>(fieldName(&S::countedLength));
  const std::string countedColumn = counted->sinceVersion > version ? std::string(counted->olderValue)
                                                                    : column(fieldName(&S::countedLength));
  return "SELECT " + column(fieldName(&S::stepId)) + ", " + column(fieldName(&S::runId)) + ", " +
         column(fieldName(&S::promptId)) + ", " + column(fieldName(&S::stepIndex)) + ", " +
         column(fieldName(&S::mode)) + ", " + column(fieldName(&S::anchorPosition)) + ", length(" +
         column(fieldName(&S::draftTokens)) + "), " + column(fieldName(&S::acceptedCount)) + ", " +
         column(fieldName(&S::garbleFlags)) + ", " + countedColumn + ", " + ddtreeOnly(fieldName(&S::draftTokens)) + ", " +
         ddtreeOnly(fieldName(&S::targetTokens)) + " FROM " + std::string(SqlTable<S>::name) + " " + std::string(rest);
}

StepSummary decodeStepSummary(const Statement& row, const std::string& file) {
  auto fail = [&](const std::string& problem, std::int64_t stepId) -> void {
    throw FormatError(problem + " (step " + std::to_string(stepId) + ")", {.file = file, .item = "steps"});
  };
  StepSummary step;
  step.stepId = row.integer(0);
  step.runId = row.integer(1);
  step.promptId = row.integer(2);
  auto int32 = [&](int column, std::string_view name) {
    return integerColumn<std::int32_t>(row, column, [&] {
      return ErrorContext{.file = file, .item = std::string(SqlTable<S>::name) + "." + std::string(name)};
    });
  };
  step.stepIndex = int32(3, fieldName(&S::stepIndex));
  const std::int32_t mode = int32(4, fieldName(&S::mode));
  if (!isKnownEnum(static_cast<EvaluationMode>(mode)))
    fail("unknown step mode " + std::to_string(mode), step.stepId);
  step.mode = static_cast<EvaluationMode>(mode);
  step.anchorPosition = row.integer(5);
  const std::int64_t draftBytes = row.integer(6);
  step.acceptedCount = int32(7, fieldName(&S::acceptedCount));
  const auto flags = row.blob(8);
  step.countedLength = int32(9, fieldName(&S::countedLength));
  // The checks of decodeRecord<StepRecord> that these columns allow.
  constexpr std::int64_t tokenBytes = sizeof(TokenId);
  if (draftBytes % tokenBytes != 0 || draftBytes / tokenBytes > std::numeric_limits<std::int32_t>::max())
    fail(std::string(fieldName(&S::draftTokens)) + " of " + std::to_string(draftBytes) + " bytes", step.stepId);
  step.draftSlots = static_cast<std::int32_t>(draftBytes / tokenBytes);
  if (step.acceptedCount < 0 || step.acceptedCount > step.draftSlots)
    fail("accepted count " + std::to_string(step.acceptedCount) + " is outside 0.." + std::to_string(step.draftSlots),
         step.stepId);
  if (step.countedLength < 0 || step.countedLength > step.acceptedCount + 1)
    fail("counted length " + std::to_string(step.countedLength) + " is outside 0.." +
             std::to_string(step.acceptedCount + 1),
         step.stepId);
  if (!flags.empty() && flags.size() != static_cast<std::size_t>(step.draftSlots))
    fail("garble flags cover " + std::to_string(flags.size()) + " slots, the block has " +
             std::to_string(step.draftSlots),
         step.stepId);
  std::int32_t chainAccepted = step.acceptedCount;
  if (step.mode == EvaluationMode::DDTree) {
    auto tokens = [&](int column, std::string_view name) {
      return decodeBlob<TokenId>(row.blob(column), ErrorContext{.file = file, .item = std::string(SqlTable<S>::name) + "." + std::string(name)});
    };
    chainAccepted = chainAcceptedCount(step.mode, step.acceptedCount, tokens(10, fieldName(&S::draftTokens)),
                                       tokens(11, fieldName(&S::targetTokens)));
  }
  summarizeGarble(step, flags, chainAccepted);
  return step;
}

}  // namespace dfi::session::detail
