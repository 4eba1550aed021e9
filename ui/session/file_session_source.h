#pragma once
// SessionSource over a .dfi file, through the session library's lazy Reader.

#include <memory>

#include "session/session_source.h"

namespace dfi::session {
class Reader;
}

namespace dfi::ui {

class FileSessionSource : public SessionSource {
 public:
  // Throws dfi::Error (IoError, FormatError) when the file is missing or not a session.
  explicit FileSessionSource(const std::string& path);
  ~FileSessionSource() override;

  std::string path() const override;
  std::vector<session::RunRecord> runs() override;
  std::vector<session::PromptRecord> prompts(session::RunId run) override;
  std::vector<session::StepRecord> steps(session::RunId run, session::PromptId prompt) override;
  std::optional<session::StepRecord> step(session::StepId step) override;
  std::optional<session::TreeRecord> tree(session::StepId step) override;
  std::vector<session::TokenString> tokenStrings(std::span<const session::TokenId> tokens) override;
  std::vector<session::StatisticRecord> statistics(session::RunId run, session::StepId step) override;
  std::vector<session::TensorInfo> tensors(session::RunId run, session::StepId step) override;
  std::optional<session::TensorRecord> readTensor(session::TensorId tensor) override;
  void forEachStepSummary(session::RunId run, const std::function<void(const session::StepSummary&)>& visit) override;
  std::vector<session::StepRecord> refresh() override;

 private:
  std::unique_ptr<session::Reader> reader_;
  session::StepId lastSeen_ = 0;
};

}  // namespace dfi::ui
