#pragma once
// Streams every record of an evaluation as protocol frames (what `serve` sends to the GUI),
// after writing it into an engine-side session when one is given, so a dropped connection
// loses nothing. Ids are the engine's: the session writer's, or a counter without one.

#include <map>
#include <memory>
#include <optional>

#include "dfi/engine/record_sink.h"
#include "frame_stream.h"

namespace dfi::eval {

class StreamingSink : public engine::RecordSink {
 public:
  // `out` is the stream's one writer, shared with the server's own replies.
  StreamingSink(FrameStream& out, session::Writer* writer);

  session::RunId addRun(const session::RunRecord& run) override;
  void finishRun(session::RunId run, double finishedAt, const std::string& timingsJson) override;
  void addPrompt(const session::PromptRecord& prompt) override;
  session::StepId addStep(const session::StepRecord& step) override;
  void addTree(const session::TreeRecord& tree) override;
  void addStatistic(const session::StatisticRecord& statistic) override;
  void addTokenStrings(std::span<const session::TokenString> strings) override;
  void flush() override;

 private:
  template <typename Record>
  void send(const Record& record);

  FrameStream& out_;
  std::optional<engine::SessionSink> file_;
  session::RunId nextRun_ = 1;
  session::StepId nextStep_ = 1;
  std::map<session::RunId, session::RunRecord> runs_;  // to resend when a run finishes
};

}  // namespace dfi::eval
