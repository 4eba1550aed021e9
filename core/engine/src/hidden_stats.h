#pragma once
// Per-position statistics of a hidden state, for the inspector's statistics view.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

// Channels of the last dimension of hiddenStatistics().
enum HiddenStat : int { kStatMean = 0, kStatStd = 1, kStatRms = 2, kStatAbsMax = 3, kNumHiddenStats = 4 };

// h: [..., H] -> [..., 4] fp32: mean, standard deviation (population, divides by H), root
// mean square and maximum absolute value over the hidden dimension, computed in fp32.
at::Tensor hiddenStatistics(const at::Tensor& h);

}  // namespace dfi::engine
