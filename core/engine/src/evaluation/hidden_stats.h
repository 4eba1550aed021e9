#pragma once
// Per-position statistics of a hidden state, for the inspector's statistics view.

#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/session/records.h"

namespace dfi::engine {

// Channels of the last dimension of hiddenStatistics().
enum HiddenStat : int { kStatMean = 0, kStatStd = 1, kStatRms = 2, kStatAbsMax = 3, kNumHiddenStats = 4 };

// h: [..., H] -> [..., 4] fp32: mean, standard deviation (population, divides by H), root
// mean square and maximum absolute value over the hidden dimension, computed in fp32.
at::Tensor hiddenStatistics(const at::Tensor& h);

// rows [N, H] as statistic records named as dfi/session/hidden_statistics.h says: the four
// statistics above and NaN/Inf counts per row, and a 64-bin histogram of the finite values.
// Run and step ids are left for the caller.
std::vector<session::StatisticRecord> hiddenStatisticRecords(const at::Tensor& rows, std::string_view tensor,
                                                             int layer = -1);

}  // namespace dfi::engine
