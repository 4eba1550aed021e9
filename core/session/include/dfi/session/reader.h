#pragma once
// Reads a session file lazily: opening checks the header and schema only; every query reads
// just the rows asked for, through the indexes on (run, prompt, step). A reader can follow a
// file that a Writer is still recording: poll refresh() and stepsSince().
// Damaged or foreign files raise a dfi::Error (FormatError, IoError) naming file and table.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::session {

// Everything recorded about one block (verify step), what a view of that block needs.
struct BlockRecords {
  StepRecord step;
  std::optional<TreeRecord> tree;
  std::vector<StatisticRecord> statistics;
  std::vector<TensorInfo> tensors;  // descriptions only; fetch data with readTensor
};

class Reader {
 public:
  explicit Reader(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const;

  // True when another connection committed since the last call (a writer is recording).
  bool refresh();

  std::vector<RunRecord> runs();
  std::optional<RunRecord> run(RunId id);
  std::int64_t stepCount(RunId run);
  std::vector<PromptRecord> prompts(RunId run);

  std::optional<StepRecord> step(StepId id);
  // Steps of one response, in step order: [firstIndex, firstIndex + count).
  std::vector<StepRecord> steps(RunId run, PromptId prompt, std::int32_t firstIndex = 0,
                                std::int32_t count = INT32_MAX);
  // Steps written after `lastSeen`, oldest first, at most `limit` (for following a writer).
  std::vector<StepRecord> stepsSince(StepId lastSeen, std::int32_t limit = 1000);
  StepId lastStepId();
  // Visits every step of a run in step-id order without holding them all in memory.
  void forEachStep(RunId run, const std::function<void(const StepRecord&)>& visit);
  // Every step of a run as a summary (no token arrays), in block order (prompt, then step
  // index): several times faster than forEachStep on big files.
  void forEachStepSummary(RunId run, const std::function<void(const StepSummary&)>& visit);

  std::optional<TreeRecord> tree(StepId step);
  // stepId 0 gives the run-level statistics.
  std::vector<StatisticRecord> statistics(RunId run, StepId step);
  std::vector<TensorInfo> tensors(RunId run, StepId step);
  BlockRecords block(StepId step);  // throws FormatError if the step does not exist

  TensorRecord readTensor(TensorId id);
  // Bytes of leading-dimension rows [firstRow, lastRow) only, fetching just their tiles.
  std::vector<std::uint8_t> readTensorRows(TensorId id, std::int64_t firstRow, std::int64_t lastRow);

  std::optional<TokenString> tokenString(TokenId id);
  std::vector<TokenString> tokenStrings(std::span<const TokenId> ids);  // those present, by id, once each
  std::vector<Annotation> annotations(RunId run);  // run 0: session-wide ones

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfi::session
