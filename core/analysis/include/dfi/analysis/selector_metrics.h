#pragma once
// DFlash2's candidate selector, judged from the steps it recorded (StepRecord::candidateIds,
// chosenCandidates: per slot its top-k candidates by the drafter's logit, the drafter's argmax
// first, and the one it chose). What its trainers ask:
// - candidate recall per slot: how often the target's token is among the slot's candidates (the
//   most the selector could fix there);
// - how often it overrules the drafter's argmax;
// - teacher-forced (and DDTree) steps, whose target tokens are the text's own at every slot: the
//   acceptance length of the selector's chain, of the drafter's argmax chain (candidate 0 at
//   every slot) and of the oracle path (the target's token at every slot while it is a
//   candidate), and the steps where the selector accepted more or fewer than the argmax;
// - a verdict in plain words, "not effective" when it never overrules or never helps.
// Live steps score recall on the slots the verifier reached only (past the first mismatch the
// target continues a rejected draft), and have no argmax or oracle chain (those drafts were never
// verified). Teacher-forced, the recall, the selector's chain and the oracle path are what
// speculators' DFlash2 training reports (dflash2/metrics.py: unary_candidate_recall_at_k, eal,
// unary_top_k_oracle_accepted_length; test_speculators_drafters holds them equal); the overrule
// rate, the argmax chain and the verdict are our own. Torch-free.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/session/records.h"

namespace dfi::analysis {

struct SelectorMetrics {
  std::int64_t steps = 0;  // steps with recorded candidates
  int candidates = 0;      // per slot (the selector's top_k)
  std::vector<double> candidateRecall;      // per slot
  std::vector<std::int64_t> recallSlots;    // scored slots per slot index
  double overruledFraction = 0;             // drafted slots whose choice is not the argmax
  bool chainsKnown = false;                 // teacher-forced or DDTree steps: the chains below exist
  double selectorAcceptLength = 0;          // mean accepted drafts + 1 of the selector's chain
  double argmaxAcceptLength = 0;            // ... of the drafter's argmax chain
  double oracleAcceptLength = 0;            // ... of the best path through the candidates
  std::int64_t helped = 0, hurt = 0;        // steps where the selector's chain accepted more / fewer
  bool effective() const;                   // overrules sometimes, and (where known) helps more than it hurts
  std::string verdict() const;              // one plain sentence
};

// Adds steps of one run and mode; steps without candidates are skipped.
class SelectorTally {
 public:
  void add(const session::StepRecord& step);
  std::optional<SelectorMetrics> finish() const;  // nullopt when no step had candidates

 private:
  std::int64_t steps_ = 0;
  int candidates_ = 0;
  std::vector<std::int64_t> recalled_, scored_;
  std::int64_t overruled_ = 0, drafted_ = 0;
  bool chainsKnown_ = true;
  double selector_ = 0, argmax_ = 0, oracle_ = 0;
  std::int64_t helped_ = 0, hurt_ = 0;
};

nlohmann::json selectorMetricsJson(const SelectorMetrics& metrics);
std::string formatSelectorMetrics(const SelectorMetrics& metrics);  // indented lines for the positions section

}  // namespace dfi::analysis
