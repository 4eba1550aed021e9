#pragma once
// What one live step costs on the device the models are on (`run --calibrate-cost`): the
// target's forward over n verified tokens after a context, and the drafter's block, each the
// median of a few timed repeats after a warm-up. The what-ifs (dfi/analysis/budget_what_if.h)
// turn acceptance into speedup with these.

#include <cstdint>
#include <span>
#include <vector>

#include "dfi/analysis/budget_what_if.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

struct StepCostOptions {
  std::vector<int> verifiedTokens;  // the n to time the target at, ascending
  int repeats = 5;                  // timed calls of each, after one untimed
};

// `context`: a prompt's tokens, which the target prefills once. Each verify forward runs after
// it and is cropped away again, as a rejected block is; the drafter drafts the block after the
// context with one new context position, as a step that commits one token does.
analysis::CostModel measureStepCost(const TargetModel& target, const DFlashDrafter& drafter,
                                    std::span<const std::int64_t> context, const StepCostOptions& options);

// The n a drafter's what-ifs need: 1, powers of two, B, and the largest tree's budget + 1.
std::vector<int> costTokenCounts(int blockSize, int largestTreeBudget);

}  // namespace dfi::engine
