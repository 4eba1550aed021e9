#pragma once
// Another writer's records appended to a session: their run, step and tensor ids moved past
// the ids the session already holds, every reference with its record, as `merge` moves a
// shard's. Id 0 means "none" (a run-level statistic, a tensor tied to no step) and stays 0.
// The GUI appends an engine's stream this way (Writer::pastExistingIds), so a session can take
// a second evaluation without losing or clashing with the first.

#include "dfi/session/records.h"

namespace dfi::session {

struct IdShift {
  RunId runs = 0;
  StepId steps = 0;
  TensorId tensors = 0;

  void apply(RunRecord& run) const;
  void apply(PromptRecord& prompt) const;
  void apply(StepRecord& step) const;
  void apply(TreeRecord& tree) const;
  void apply(StatisticRecord& statistic) const;
  void apply(TensorRecord& tensor) const;
  RunId run(RunId id) const { return id > 0 ? id + runs : id; }
  StepId step(StepId id) const { return id > 0 ? id + steps : id; }
  TensorId tensor(TensorId id) const { return id > 0 ? id + tensors : id; }
};

}  // namespace dfi::session
