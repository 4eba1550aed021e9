#include "dfi/engine/record_sink.h"

#include "dfi/session/writer.h"

namespace dfi::engine {

session::RunId SessionSink::addRun(const session::RunRecord& run) { return writer_.addRun(run); }
void SessionSink::finishRun(session::RunId run, double finishedAt, const std::string& timingsJson) {
  writer_.finishRun(run, finishedAt, timingsJson);
}
void SessionSink::addPrompt(const session::PromptRecord& prompt) { writer_.addPrompt(prompt); }
session::StepId SessionSink::addStep(const session::StepRecord& step) { return writer_.addStep(step); }
void SessionSink::addTree(const session::TreeRecord& tree) { writer_.addTree(tree); }
void SessionSink::addStatistic(const session::StatisticRecord& statistic) { writer_.addStatistic(statistic); }
void SessionSink::addTokenStrings(std::span<const session::TokenString> strings) {
  writer_.addTokenStrings(strings);
}
void SessionSink::flush() { writer_.flush(); }

}  // namespace dfi::engine
