#include "streaming_sink.h"

#include "dfi/protocol/record_codec.h"

namespace dfi::eval {

StreamingSink::StreamingSink(FrameStream& out, session::Writer* writer) : out_(out) {
  if (writer) file_.emplace(*writer);
}

template <typename Record>
void StreamingSink::send(const Record& record) {
  out_.write(protocol::encodeRecord(record));
}

session::RunId StreamingSink::addRun(const session::RunRecord& run) {
  session::RunRecord copy = run;
  copy.runId = file_ ? file_->addRun(run) : nextRun_++;
  runs_[copy.runId] = copy;
  send(copy);
  return copy.runId;
}

void StreamingSink::finishRun(session::RunId run, double finishedAt, const std::string& timingsJson) {
  if (file_) file_->finishRun(run, finishedAt, timingsJson);
  session::RunRecord& record = runs_.at(run);
  record.finishedAt = finishedAt;
  record.timingsJson = timingsJson;
  send(record);  // the receiver updates the run it already has
}

void StreamingSink::addPrompt(const session::PromptRecord& prompt) {
  if (file_) file_->addPrompt(prompt);
  send(prompt);
}

session::StepId StreamingSink::addStep(const session::StepRecord& step) {
  session::StepRecord copy = step;
  copy.stepId = file_ ? file_->addStep(step) : nextStep_++;
  send(copy);
  return copy.stepId;
}

void StreamingSink::addTree(const session::TreeRecord& tree) {
  if (file_) file_->addTree(tree);
  send(tree);
}

void StreamingSink::addStatistic(const session::StatisticRecord& statistic) {
  if (file_) file_->addStatistic(statistic);
  send(statistic);
}

void StreamingSink::addTokenStrings(std::span<const session::TokenString> strings) {
  if (file_) file_->addTokenStrings(strings);
  send(protocol::TokenStrings(strings.begin(), strings.end()));
}

void StreamingSink::flush() {
  if (file_) file_->flush();
  out_.flush();
}

}  // namespace dfi::eval
