#pragma once
// A diagnosis's top finding in plain words: what a candidate cause means for the drafter and
// what to do about it, for a newcomer who does not know the hypothesis names. One text for the
// CLI report and the GUI's Diagnosis panel.

#include <optional>
#include <string>

#include "dfi/analysis/diagnosis.h"

namespace dfi::analysis {

struct FindingWords {
  std::string meaning;  // "This drafter was probably trained with ..."
  std::string action;   // "Retrain with ..., or evaluate ..."
};

// The words for a hypothesis by its name ("mask:anchor-visible", "taps-shift:-1", ...); nullopt
// for a name this version has no words for (the report then shows the name and its change).
std::optional<FindingWords> findingWords(const PlannedHypothesis& hypothesis);

// The block where the hypothesis gained the most, in words ("prompt 3, anchor 57: accepts 2
// under the baseline, 9 under the hypothesis"); empty when none was kept.
std::string strongestBlock(const HypothesisResult& hypothesis);

}  // namespace dfi::analysis
