#pragma once
// Per-position statistics of a hidden state: the one definition behind the statistics the
// engine records (`--hidden-stats`, inspect requests) and those the GUI computes for an imported
// dump, so that an overlay of the two compares like with like. Named and laid out as
// dfi/session/hidden_statistics.h says.
//
// NaN/Inf policy (one for every caller):
// - mean, std (population), rms and absmax of a row are over its finite values only, so that one
//   bad channel does not hide what the other channels look like; "nan" and "inf" count the
//   non-finite values of the row (+Inf and -Inf alike).
// - a row with no finite value has 0 for the four statistics; its counts say why.
// - the histogram counts the finite values of every row, 64 bins over [lo, hi], their min and
//   max; a value v falls in bin floor((v - lo) / ((hi - lo) / 64)), hi in the last bin. When
//   lo == hi every value is in bin 0; without any finite value the counts are 0 and the
//   range [0, 0].
// Sums run in double over the values as given and are rounded to float once, at the end.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

// `values`: a row-major [rows, hidden] matrix (rows = values.size() / hidden). The records are
// "<tensor>.<stat>" at `layer`, every per-position statistic then the histogram and its range;
// run and step ids are left for the caller.
std::vector<session::StatisticRecord> hiddenStatisticRecords(std::span<const double> values, std::int64_t hidden,
                                                             std::string_view tensor, int layer = -1);

}  // namespace dfi::analysis
