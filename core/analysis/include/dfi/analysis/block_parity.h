#pragma once
// Train/eval parity of one teacher-forced block as the session records it (docs/dflash.md 4.4):
// the statistics "parity.max_abs_diff", "parity.argmax_agreement" and
// "parity.first_differing_slot" the engine writes per step, read back and put in plain words.
// The engine's check (evaluation/teacher_forced/dflash_parity.h) and the GUI's words share the
// tolerance and the names here, so a block the log calls flagged is the block the panel does.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

// Logits differ by more than this (fp32) only when the two paths are different computations;
// rounding alone stays near 1e-5 (test_dflash_drafter, test_dflash_oracle).
inline constexpr double kParityTolerance = 1e-3;

inline constexpr std::string_view kParityMaxAbsDiff = "parity.max_abs_diff";
inline constexpr std::string_view kParityArgmaxAgreement = "parity.argmax_agreement";
inline constexpr std::string_view kParityFirstDifferingSlot = "parity.first_differing_slot";

struct RecordedParity {
  double maxAbsDiff = 0;        // over the block's draft slots and the vocabulary, fp32 logits
  double argmaxAgreement = 1;   // fraction of draft slots whose greedy token agrees
  int firstDifferingSlot = -1;  // first draft slot (0 = the token after the anchor); -1 none
  bool flagged() const { return maxAbsDiff > kParityTolerance || firstDifferingSlot >= 0; }
};

// The step's parity, when all three statistics are among `statistics` (a step recorded with
// --no-parity, or a live step, has none).
std::optional<RecordedParity> recordedParity(const std::vector<session::StatisticRecord>& statistics);

// "The training path and the inference path agree on this block: ..." or what differs, with
// the block slots numbered as the token table numbers them (slot 0 = the anchor). `draftSlots`
// (block size - 1) turns the agreement into a count; 0 when unknown.
std::string parityInWords(const RecordedParity& parity, int draftSlots);

}  // namespace dfi::analysis
