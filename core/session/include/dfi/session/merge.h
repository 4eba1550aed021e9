#pragma once
// Merges sessions recorded separately (shards of one evaluation, `run --shard i/N`, or runs
// from several machines) into one file. Runs, steps, tensors and annotations are re-keyed so
// their ids do not collide; token-string tables are unioned and must agree.

#include <span>
#include <string>

namespace dfi::session {

struct MergeSummary {
  std::int64_t runs = 0;
  std::int64_t steps = 0;
  std::int64_t tokenStrings = 0;
};

// Writes `output` atomically (a ".partial" file renamed at the end), so a failed merge never
// leaves a half-merged file. Throws ValidationError naming both files and the token id when
// two inputs map a token id to different strings; UsageError when output exists and
// !overwrite or is one of the inputs.
MergeSummary mergeSessions(std::span<const std::string> inputs, const std::string& output, bool overwrite = false);

}  // namespace dfi::session
