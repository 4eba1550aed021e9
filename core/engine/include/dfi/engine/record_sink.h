#pragma once
// Where an evaluation puts its records. `dflash-eval run` writes them into a session file;
// `dflash-eval serve` also streams them to the GUI. Torch-free.

#include <span>
#include <string>

#include "dfi/session/records.h"

namespace dfi::session {
class Writer;
}

namespace dfi::engine {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual session::RunId addRun(const session::RunRecord& run) = 0;
  virtual void finishRun(session::RunId run, double finishedAt, const std::string& timingsJson) = 0;
  virtual void addPrompt(const session::PromptRecord& prompt) = 0;
  virtual session::StepId addStep(const session::StepRecord& step) = 0;
  virtual void addTree(const session::TreeRecord& tree) = 0;
  virtual void addStatistic(const session::StatisticRecord& statistic) = 0;
  virtual void addTokenStrings(std::span<const session::TokenString> strings) = 0;
  virtual void flush() = 0;
};

// Writes every record into a session (the writer assigns run and step ids).
class SessionSink : public RecordSink {
 public:
  explicit SessionSink(session::Writer& writer) : writer_(writer) {}
  session::RunId addRun(const session::RunRecord& run) override;
  void finishRun(session::RunId run, double finishedAt, const std::string& timingsJson) override;
  void addPrompt(const session::PromptRecord& prompt) override;
  session::StepId addStep(const session::StepRecord& step) override;
  void addTree(const session::TreeRecord& tree) override;
  void addStatistic(const session::StatisticRecord& statistic) override;
  void addTokenStrings(std::span<const session::TokenString> strings) override;
  void flush() override;

 private:
  session::Writer& writer_;
};

}  // namespace dfi::engine
