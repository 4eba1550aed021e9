#pragma once
// One teacher-forced pass of a drafter over a prompt's greedy continuation under one mask
// variant, with what the run records beside each step: the train/eval parity of its block
// (training path vs inference path, docs/dflash.md 4.4) and, when asked, the hidden-state
// statistics of its context rows and block (dfi/session/hidden_statistics.h).

#include <cstdint>
#include <span>
#include <vector>

#include "dfi/analysis/attention_mask.h"
#include "dfi/analysis/ddtree.h"
#include "dfi/session/records.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"

namespace dfi::engine {

struct TeacherForcedPassOptions {
  int topK = 0;
  bool parity = true;
  bool hiddenStatistics = false;
  // DDTree-N trees built during the pass, for a drafter whose slots depend on the drafts before
  // them (DSpark's Markov head: DsparkHeads::tree over `topK` candidates a node); 0: none. Other
  // drafters' trees come from the steps' top-k afterwards (ddtreeStep).
  int treeBudget = 0;
};

struct TeacherForcedPass {
  std::vector<session::StepRecord> steps;
  std::vector<analysis::DDTree> trees;  // per step, when the options asked for them
  // Per step (same order): statistic records with run and step ids left for the caller.
  std::vector<std::vector<session::StatisticRecord>> statistics;
  std::vector<std::int64_t> parityFlaggedAnchors;
};

TeacherForcedPass runTeacherForcedPass(const SequenceFeatures& sequence, const DFlashDrafter& drafter,
                                       std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                                       const TeacherForcedPassOptions& options);

}  // namespace dfi::engine
