#pragma once
// How hidden-state statistics are named in the statistics table, so the engine that writes
// them and the GUI that plots them agree (SCHEMA.md, "statistics").
//
// A statistic's name is "<tensor>.<stat>":
//   tensor  "target.tap"          layer = the target layer id (hidden_states[id + 1])
//           "drafter.fc"          fc(concatenated taps), layer = -1
//           "drafter.hidden_norm" the drafter's context rows, layer = -1
//           "drafter.layer"       block rows after drafter layer `layer`
//   stat    "mean", "std", "rms", "absmax"  one value per position (rows of the tensor), over
//                                            the finite values of the hidden dimension (std:
//                                            population); dfi/analysis/hidden_statistics.h
//                                            computes them, with the NaN/Inf policy
//           "nan", "inf"                     per position: count of NaN / infinite values
//           "histogram"                      64 counts of the finite values...
//           "histogram_range"                ...over [lo, hi] = these two values
// Positions: for target.tap, drafter.fc and drafter.hidden_norm, the context rows the step
// added (a live step: the tokens it committed; a teacher-forced anchor: the positions since the
// previous anchor); for drafter.layer, the block's slots (slot 0 = the anchor).
//
// A tapped target layer with a mixture-of-experts MLP also records its router's choice over
// the same positions as target.tap, k values per position (row-major [positions, k]):
//   "target.router.experts"  the chosen expert ids (exact in fp32), highest probability first
//   "target.router.weights"  their mixing weights as applied

#include <array>
#include <string>
#include <string_view>

namespace dfi::session::hidden_statistics {

inline constexpr int kHistogramBins = 64;

inline constexpr std::string_view kTargetTap = "target.tap";
inline constexpr std::string_view kDrafterFc = "drafter.fc";
inline constexpr std::string_view kDrafterHiddenNorm = "drafter.hidden_norm";
inline constexpr std::string_view kDrafterLayer = "drafter.layer";
inline constexpr std::string_view kTargetRouterExperts = "target.router.experts";
inline constexpr std::string_view kTargetRouterWeights = "target.router.weights";

inline constexpr std::array<std::string_view, 6> kPerPositionStats{"mean", "std", "rms", "absmax", "nan", "inf"};
inline constexpr std::string_view kHistogram = "histogram";
inline constexpr std::string_view kHistogramRange = "histogram_range";

inline std::string statisticName(std::string_view tensor, std::string_view stat) {
  return std::string(tensor) + "." + std::string(stat);
}

}  // namespace dfi::session::hidden_statistics
