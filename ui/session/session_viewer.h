#pragma once
// Every panel that shows session data implements this and registers with SessionContext,
// which calls it when the session or the selection changes (RenderDoc's ICaptureViewer).

#include <vector>

#include "dfi/session/records.h"

namespace dfi::ui {

class SessionContext;

// The current selection; 0 / -1 mean "nothing selected at this level".
struct Selection {
  session::RunId run = 0;
  session::PromptId prompt = -1;
  session::StepId step = 0;
  bool operator==(const Selection&) const = default;
};

class SessionViewer {
 public:
  virtual ~SessionViewer() = default;
  virtual void onSessionOpened() {}
  virtual void onSessionClosed() {}
  virtual void onSelectionChanged(const Selection&) {}
  // Steps a followed file gained since the last poll, in write order.
  virtual void onStepsAppended(const std::vector<session::StepRecord>&) {}
};

}  // namespace dfi::ui
