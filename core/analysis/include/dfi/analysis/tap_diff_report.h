#pragma once
// A TapDiffReport as people and programs read it: the text table `diff-dump` prints, the JSON
// document of --json, and the per-position arrays of --out.

#include <filesystem>
#include <string>

#include "dfi/analysis/tap_diff.h"

namespace dfi::analysis {

// One line per compared tensor (name, shape, max abs diff, worst position ("-" when nothing
// differs), first position over the tolerance, min cosine), then the unmatched tensors of each
// file and a verdict line.
std::string renderTapDiffTable(const TapDiffReport& report);

// {"ours", "theirs", "tolerance", "within_tolerance", "tensors": [{"name", "theirs", "rule",
//  "shape", "ours_shape", "theirs_shape", "ours_dtype", "theirs_dtype", "max_abs_diff",
//  "rms_diff", "min_cosine", "worst_position", "first_position_over_tolerance" (null: none),
//  "within_tolerance", "positions": {"max_abs_diff": [..], "rms_diff": [..],
//  "relative_diff": [..], "cosine": [..]}}], "unmatched_ours": [..], "unmatched_theirs": [..]}
// One line, keys in this order. NaN and infinite values are written as null (JSON has no such
// numbers).
std::string tapDiffJson(const TapDiffReport& report);

// A .safetensors file with, per compared tensor (our name), F32 [positions] arrays
// `<name>.max_abs_diff`, `<name>.rms_diff`, `<name>.relative_diff`, `<name>.cosine`;
// metadata: ours, theirs, tolerance, and `theirs.<name>` = the paired tensor's name in theirs.
void writeTapDiffTensors(const TapDiffReport& report, const std::filesystem::path& file);

}  // namespace dfi::analysis
