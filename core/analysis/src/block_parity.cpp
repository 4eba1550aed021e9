#include "dfi/analysis/block_parity.h"

#include <cmath>
#include <cstdio>

namespace dfi::analysis {
namespace {

std::string general(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

}  // namespace

std::optional<RecordedParity> recordedParity(const std::vector<session::StatisticRecord>& statistics) {
  std::optional<double> diff, agreement, first;
  for (const session::StatisticRecord& r : statistics) {
    if (r.values.empty()) continue;
    const double value = r.values.front();
    if (r.name == kParityMaxAbsDiff) diff = value;
    else if (r.name == kParityArgmaxAgreement) agreement = value;
    else if (r.name == kParityFirstDifferingSlot) first = value;
  }
  if (!diff || !agreement || !first) return std::nullopt;
  return RecordedParity{*diff, *agreement, static_cast<int>(std::lround(*first))};
}

std::string parityInWords(const RecordedParity& parity, int draftSlots) {
  const std::string agreeing =
      draftSlots > 0 ? std::to_string(std::lround(parity.argmaxAgreement * draftSlots)) + " of " +
                           std::to_string(draftSlots) + " drafted tokens agree"
                     : general(parity.argmaxAgreement * 100, 3) + "% of the drafted tokens agree";
  const std::string paths =
      "the training path (one batched forward, as the drafter was trained) and the inference path (block by "
      "block, as it is evaluated)";
  if (!parity.flagged())
    return "Train/eval parity holds on this block: " + paths + " draft the same greedy tokens (" + agreeing +
           ") and their logits differ by at most " + general(parity.maxAbsDiff, 2) + ", which is rounding.";
  std::string words = "Train/eval parity is broken on this block: " + paths +
                      " are different computations here. Their logits differ by up to " +
                      general(parity.maxAbsDiff, 3) + " (rounding stays under " + general(kParityTolerance, 2) + ")";
  if (parity.firstDifferingSlot >= 0)
    words += "; the greedy draft first differs at block slot " + std::to_string(parity.firstDifferingSlot + 1) +
             " (" + agreeing + ")";
  else
    words += "; the greedy tokens still agree (" + agreeing + ")";
  return words + ". A mask or position-id difference between training and evaluation does this.";
}

}  // namespace dfi::analysis
