#pragma once
// What the GUI reads a session through. The file reader implements it today; a remote engine
// (dflash-eval serve) can implement it later without any panel noticing (RenderDoc's
// ICaptureAccess seam). Implementations may throw dfi::Error; SessionContext catches.

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::ui {

class SessionSource {
 public:
  virtual ~SessionSource() = default;

  virtual std::string path() const = 0;
  virtual std::vector<session::RunRecord> runs() = 0;
  virtual std::vector<session::PromptRecord> prompts(session::RunId run) = 0;
  // The steps of one response, in step order.
  virtual std::vector<session::StepRecord> steps(session::RunId run, session::PromptId prompt) = 0;
  virtual std::optional<session::StepRecord> step(session::StepId step) = 0;
  // The DDTree verified at a step, when the run recorded one.
  virtual std::optional<session::TreeRecord> tree(session::StepId step) = 0;
  // Those of `tokens` the session has, in one read.
  virtual std::vector<session::TokenString> tokenStrings(std::span<const session::TokenId> tokens) = 0;
  // Statistics and tensors recorded for a step (step 0: the run's own), and a tensor's bytes.
  virtual std::vector<session::StatisticRecord> statistics(session::RunId, session::StepId) { return {}; }
  virtual std::vector<session::TensorInfo> tensors(session::RunId, session::StepId) { return {}; }
  virtual std::optional<session::TensorRecord> readTensor(session::TensorId) { return std::nullopt; }
  // Every step of a run in write order, one summary at a time (without holding them all, and
  // without decoding token arrays that whole-run figures never look at).
  virtual void forEachStepSummary(session::RunId run,
                                  const std::function<void(const session::StepSummary&)>& visit) = 0;
  // Re-reads a file that is still being written and returns the steps that appeared since the
  // previous call (or since opening); empty when nothing changed.
  virtual std::vector<session::StepRecord> refresh() = 0;
};

}  // namespace dfi::ui
