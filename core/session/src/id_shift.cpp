#include "dfi/session/id_shift.h"

namespace dfi::session {

void IdShift::apply(RunRecord& r) const { r.runId = run(r.runId); }
void IdShift::apply(PromptRecord& p) const { p.runId = run(p.runId); }

void IdShift::apply(StepRecord& s) const {
  s.stepId = step(s.stepId);
  s.runId = run(s.runId);
}

void IdShift::apply(TreeRecord& t) const { t.stepId = step(t.stepId); }

void IdShift::apply(StatisticRecord& s) const {
  s.runId = run(s.runId);
  s.stepId = step(s.stepId);
}

void IdShift::apply(TensorRecord& t) const {
  t.info.tensorId = tensor(t.info.tensorId);
  t.info.runId = run(t.info.runId);
  t.info.stepId = step(t.info.stepId);
}

}  // namespace dfi::session
