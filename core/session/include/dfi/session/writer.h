#pragma once
// Writes a session file while a run is recorded. Records are batched into transactions
// (commit every N records or every T milliseconds, at the start of the next step, prompt or
// run so that a step and its tree, statistics and tensors commit together; and on flush());
// the file is in WAL mode
// while open, so a reader can follow it and a crash loses at most the uncommitted batch.
// close() checkpoints and returns the file to a single self-contained file (journal DELETE).

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "dfi/session/id_shift.h"
#include "dfi/session/records.h"

namespace dfi::session {

enum class OpenMode {
  CreateNew,  // fails if the file exists
  Overwrite,  // replaces an existing file
  Append,     // adds to an existing session (the engine appending answers, the GUI notes)
};

struct WriterOptions {
  OpenMode mode = OpenMode::CreateNew;
  int batchRecords = 2000;
  std::chrono::milliseconds batchInterval{250};
  // Keep the ids the records carry (run, step, tensor, annotation) instead of assigning new
  // ones: a copy of another writer's stream (the GUI following the engine) then has the same
  // ids as the engine's own file. An id must be above every id of its kind already written
  // (appending, shift the stream's ids by pastExistingIds()).
  bool keepIds = false;
  // Called after each commit with the highest step id now durable in the file.
  std::function<void(StepId lastCommittedStep)> onCommit;
};

// One thread at a time: the engine's recording thread owns its writer.
class Writer {
 public:
  Writer(const std::string& path, WriterOptions options = {});
  ~Writer();  // closes; errors are logged, not thrown (call close() to see them)
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Each add assigns the record's id where it has one (or keeps it, with keepIds) and returns it. Any failure (disk full,
  // I/O error) throws a dfi::Error, rolls back the open batch only, and ends the writer:
  // everything committed before stays in the file.
  RunId addRun(const RunRecord& run);
  void finishRun(RunId run, double finishedAt, const std::string& timingsJson);
  void addPrompt(const PromptRecord& prompt);
  StepId addStep(const StepRecord& step);
  void addTree(const TreeRecord& tree);
  void addStatistic(const StatisticRecord& statistic);
  TensorId addTensor(const TensorRecord& tensor);
  // Token ids already present must carry the same strings (ValidationError otherwise).
  void addTokenStrings(std::span<const TokenString> strings);
  AnnotationId addAnnotation(const Annotation& annotation);

  void flush();  // commits the open batch now
  void close();  // flush, checkpoint, back to a single file; idempotent

  StepId lastCommittedStep() const;
  // Moves another writer's ids past those the file held when this writer opened it (none in a
  // new file): what a stream appended with keepIds is shifted by.
  IdShift pastExistingIds() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfi::session
