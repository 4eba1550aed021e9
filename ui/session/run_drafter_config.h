#pragma once
// A run's drafter as the engine read it: its config.json, kept in the run record, parsed by the
// engine's own reader, so a view draws what ran (the causality speculators states in another
// field than z-lab, a Markov head whose tree cannot be rebuilt from top-k).

#include <optional>

#include "dfi/modelspec/drafter_config.h"
#include "dfi/session/records.h"

namespace dfi::ui {

// nullopt for a run without a drafter config, or one this build cannot read (logged once per
// call as a warning naming the run).
std::optional<modelspec::DrafterConfig> runDrafterConfig(const session::RunRecord& run);

}  // namespace dfi::ui
