#include "session/file_session_source.h"

#include "dfi/session/reader.h"

namespace dfi::ui {

FileSessionSource::FileSessionSource(const std::string& path)
    : reader_(std::make_unique<session::Reader>(path)), lastSeen_(reader_->lastStepId()) {}

FileSessionSource::~FileSessionSource() = default;

std::string FileSessionSource::path() const { return reader_->path(); }

std::vector<session::RunRecord> FileSessionSource::runs() { return reader_->runs(); }

std::vector<session::PromptRecord> FileSessionSource::prompts(session::RunId run) { return reader_->prompts(run); }

std::vector<session::StepRecord> FileSessionSource::steps(session::RunId run, session::PromptId prompt) {
  return reader_->steps(run, prompt);
}

std::optional<session::StepRecord> FileSessionSource::step(session::StepId step) { return reader_->step(step); }

std::optional<session::TreeRecord> FileSessionSource::tree(session::StepId step) { return reader_->tree(step); }

std::vector<session::TokenString> FileSessionSource::tokenStrings(std::span<const session::TokenId> tokens) {
  return reader_->tokenStrings(tokens);
}

std::vector<session::StatisticRecord> FileSessionSource::statistics(session::RunId run, session::StepId step) {
  return reader_->statistics(run, step);
}

std::vector<session::TensorInfo> FileSessionSource::tensors(session::RunId run, session::StepId step) {
  return reader_->tensors(run, step);
}

std::optional<session::TensorRecord> FileSessionSource::readTensor(session::TensorId tensor) {
  return reader_->readTensor(tensor);
}

void FileSessionSource::forEachStepSummary(session::RunId run,
                                           const std::function<void(const session::StepSummary&)>& visit) {
  reader_->forEachStepSummary(run, visit);
}

std::vector<session::StepRecord> FileSessionSource::refresh() {
  reader_->refresh();
  std::vector<session::StepRecord> added;
  // Pages of 1000, so a file that grew a lot while we slept arrives complete.
  for (;;) {
    std::vector<session::StepRecord> page = reader_->stepsSince(lastSeen_);
    if (page.empty()) break;
    lastSeen_ = page.back().stepId;
    const bool full = page.size() >= 1000;
    added.insert(added.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
    if (!full) break;
  }
  return added;
}

}  // namespace dfi::ui
