#pragma once
// The checkpoint series of a session: which of its recorded drafters are checkpoints of one
// training output folder, at which step (dfi/analysis/checkpoint_series.h), for `summary
// --series` and `watch`.

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "dfi/analysis/series_summary.h"

namespace dfi::eval {

// The session's drafters inside `seriesDir`, with the step discovery gives each (the number
// their folder name carries when discovery no longer lists them).
std::vector<analysis::SeriesMember> seriesMembers(const std::string& sessionPath, const std::filesystem::path& seriesDir);

// Canonical paths of the drafters a session has runs of (none when it does not exist yet).
std::set<std::filesystem::path> evaluatedDrafters(const std::string& sessionPath);

}  // namespace dfi::eval
