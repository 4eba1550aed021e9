#pragma once
// Per-position statistics of a hidden state, for the inspector's statistics view and
// `dflash-eval forward --stats`. Both go through the one definition of dfi::analysis
// (dfi/analysis/hidden_statistics.h, with its NaN/Inf policy) on a host fp64 copy of the
// tensor, so the GUI's statistics of the same values in a dump are the same numbers.

#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/session/records.h"
#include "models/expert_routing.h"

namespace dfi::engine {

// Channels of the last dimension of hiddenStatistics().
enum HiddenStat : int { kStatMean = 0, kStatStd = 1, kStatRms = 2, kStatAbsMax = 3, kNumHiddenStats = 4 };

// h: [..., H] -> [..., 4] fp32 on the host: mean, standard deviation (population), root mean
// square and maximum absolute value over the finite values of the hidden dimension.
at::Tensor hiddenStatistics(const at::Tensor& h);

// rows [..., H] as statistic records named as dfi/session/hidden_statistics.h says: the four
// statistics above and NaN/Inf counts per row, and a 64-bin histogram of the finite values.
// Run and step ids are left for the caller.
std::vector<session::StatisticRecord> hiddenStatisticRecords(const at::Tensor& rows, std::string_view tensor,
                                                             int layer = -1);

// Rows [from, from + count) of one layer's routing ([T, k] each) as the two records
// target.router.experts and target.router.weights of dfi/session/hidden_statistics.h.
std::vector<session::StatisticRecord> routingRecords(const ExpertRouting& routing, std::int64_t from,
                                                     std::int64_t count, int layer);

}  // namespace dfi::engine
