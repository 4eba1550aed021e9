// The live speculative-decoding loop on a tiny random Qwen3 target and a random drafter
// (tests/oracle/gen_drafter.py, OUT/live): lossless (it commits exactly the target's greedy
// continuation), and at every anchor the live loop visited, the teacher-forced path (one
// target forward, one batched drafter forward) drafts the same tokens and accepts exactly as
// many. Its equality with the reference's own loop is test_dflash_package's. These tests run
// full blocks (StepCounting::FullBlocks): the teacher-forced path drafts every block in full.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/drafter_config.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/teacher_forced/dflash_parity.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/live/draft_distribution.h"
#include "evaluation/teacher_forced/teacher_forced_pass.h"

namespace dfi::engine {
namespace {

// One executable, run by ctest once per family (dfi_add_live_loop_runs): DFI_LIVE_DIR names the
// family's live fixture under the build tree (every generator writes this layout and these
// prompts); unset, the Qwen3 fixture of gen_drafter.py.
std::filesystem::path liveDir() {
  const char* dir = std::getenv("DFI_LIVE_DIR");
  return std::filesystem::path(DFI_BINARY_DIR) / (dir ? dir : "tests/oracle/drafter/live");
}
const std::filesystem::path kLiveDir = liveDir();

class LiveLoop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    target = TargetModel::load(kLiveDir / "target", ModelOptions{}).release();
    const modelspec::DrafterConfig config = modelspec::parseDrafterConfig(
        kLiveDir / "drafter/config.json", target->config().numHiddenLayers);
    // The drafter shares the target's embedding and LM head tensors (no copies).
    drafter = new DFlashDrafter(config,
                                loadDrafterWeights(kLiveDir / "drafter", config, target->config().hiddenSize,
                                                   at::kFloat, at::kCPU),
                                {target->embeddingWeight(), target->lmHeadWeight()});
  }
  static void TearDownTestSuite() {
    delete drafter;
    delete target;
  }

  // The target's greedy token after each position of `sequence`.
  static std::vector<std::int64_t> greedyPredictions(const std::vector<std::int64_t>& sequence) {
    const at::Tensor ids = at::tensor(sequence, at::kLong).view({1, -1});
    const at::Tensor best = target->forward(ids, nullptr).logits[0].argmax(-1).contiguous();
    return {best.data_ptr<std::int64_t>(), best.data_ptr<std::int64_t>() + best.numel()};
  }

  static inline TargetModel* target = nullptr;
  static inline DFlashDrafter* drafter = nullptr;
};

const SpeculativeOptions kFullBlocks{.maxNewTokens = 40, .counting = StepCounting::FullBlocks};

const std::vector<std::vector<std::int64_t>> kPrompts{
    {3, 7, 1, 12, 5}, {9, 9, 2, 4, 0, 11, 6, 8}, {14, 2, 5}, {1, 13, 10, 3, 7, 7}};

// Every family's live fixture but Qwen3's carries the cache-free Python loop's steps
// (reference.safetensors); the Qwen3 fixture's loop oracle is the dflash package itself, and its
// run leaves this test out.
std::vector<std::int64_t> readIds(const tensorfile::Checkpoint& file, const std::string& name) {
  const tensorfile::TensorView view = file.tensor(name);
  const auto* data = static_cast<const std::int64_t*>(view.data());
  return {data, data + view.info().numel()};
}

TEST_F(LiveLoop, MatchesThePythonReferenceLoopStepForStep) {
  const tensorfile::Checkpoint reference =
      tensorfile::Checkpoint::open(kLiveDir / "reference.safetensors", tensorfile::NameMapping::identity());
  const int b = drafter->blockSize();
  for (std::size_t i = 0; i < kPrompts.size(); ++i) {
    const std::string n = std::to_string(i);
    ASSERT_EQ(readIds(reference, "prompt." + n), kPrompts[i]);
    const SpeculativeResult live = speculativeDecode(*target, *drafter, kPrompts[i], kFullBlocks);
    EXPECT_EQ(live.tokens, readIds(reference, "tokens." + n));
    const std::vector<std::int64_t> rows = readIds(reference, "steps." + n);  // anchor, acc, bonus, drafts
    const auto width = static_cast<std::size_t>(3 + b - 1);
    ASSERT_EQ(live.steps.size() * width, rows.size());
    for (std::size_t s = 0; s < live.steps.size(); ++s) {
      const session::StepRecord& step = live.steps[s];
      const auto* row = rows.data() + s * width;
      SCOPED_TRACE("prompt " + n + " step " + std::to_string(s));
      EXPECT_EQ(step.anchorPosition, row[0]);
      EXPECT_EQ(step.acceptedCount, row[1]);
      EXPECT_EQ(step.bonusToken, row[2]);
      EXPECT_EQ(step.draftTokens, std::vector<session::TokenId>(row + 3, row + width));
    }
  }
}

TEST_F(LiveLoop, CommitsExactlyTheTargetsGreedyContinuation) {
  for (const auto& prompt : kPrompts) {
    const SpeculativeResult live = speculativeDecode(*target, *drafter, prompt, kFullBlocks);
    ASSERT_GE(live.tokens.size(), prompt.size() + 40);
    const std::vector<std::int64_t> predictions = greedyPredictions(live.tokens);
    for (std::size_t p = prompt.size(); p < live.tokens.size(); ++p)
      ASSERT_EQ(live.tokens[p], predictions[p - 1]) << "position " << p;
    // Each step commits its accepted drafts and its bonus, from its anchor on.
    std::int64_t position = live.promptLength;
    double total = 0;
    for (const session::StepRecord& step : live.steps) {
      ASSERT_EQ(step.anchorPosition, position);
      for (int i = 0; i < step.acceptedCount; ++i)
        EXPECT_EQ(live.tokens[static_cast<std::size_t>(position + 1 + i)], step.draftTokens[static_cast<std::size_t>(i)]);
      EXPECT_EQ(live.tokens[static_cast<std::size_t>(position + step.acceptedCount + 1)], step.bonusToken);
      position += step.acceptLength();
      total += step.acceptLength();
    }
    EXPECT_EQ(position + 1, static_cast<std::int64_t>(live.tokens.size()));
    EXPECT_DOUBLE_EQ(live.meanAcceptLength(), total / static_cast<double>(live.steps.size()));
  }
}

TEST_F(LiveLoop, TeacherForcedAcceptanceEqualsLiveAcceptance) {
  std::set<int> acceptedCounts;
  int steps = 0;
  for (const auto& prompt : kPrompts) {
    const SpeculativeResult live = speculativeDecode(*target, *drafter, prompt, kFullBlocks);
    std::vector<std::int64_t> anchors;
    for (const session::StepRecord& step : live.steps) anchors.push_back(step.anchorPosition);
    const std::vector<session::StepRecord> forced = teacherForcedSteps(*target, *drafter, live.tokens, anchors);
    ASSERT_EQ(forced.size(), live.steps.size());
    for (std::size_t j = 0; j < forced.size(); ++j) {
      const session::StepRecord& l = live.steps[j];
      const session::StepRecord& f = forced[j];
      SCOPED_TRACE("anchor " + std::to_string(l.anchorPosition));
      EXPECT_EQ(f.anchorToken, l.anchorToken);
      EXPECT_EQ(f.draftTokens, l.draftTokens);
      EXPECT_EQ(f.acceptedCount, l.acceptedCount);
      EXPECT_EQ(f.bonusToken, l.bonusToken);
      // Past the accepted run the live target saw rejected drafts, so only the run compares.
      for (int i = 0; i < l.acceptedCount; ++i)
        EXPECT_EQ(f.targetTokens[static_cast<std::size_t>(i)], l.targetTokens[static_cast<std::size_t>(i)]);
      acceptedCounts.insert(l.acceptedCount);
      ++steps;
    }
  }
  // Not vacuous: the random pair both accepts and rejects drafts.
  std::cout << steps << " steps, accepted counts seen:";
  for (int a : acceptedCounts) std::cout << " " << a;
  std::cout << "\n";
  EXPECT_GE(acceptedCounts.size(), 2u);
  EXPECT_TRUE(acceptedCounts.contains(0));
}

// The teacher-forced pass works forward by forward (32 anchors each) and keeps no logits past
// a forward: its records, top-k and parity (the inference path grown across forwards in one
// cache) must equal what the whole [N, B-1, V] logits give at once, in ascending anchor
// order and shuffled (the carried cache restarts when an anchor needs less context).
TEST_F(LiveLoop, TeacherForcedPassForwardByForwardEqualsTheWholeLogits) {
  const SpeculativeResult live = speculativeDecode(*target, *drafter, kPrompts[1], kFullBlocks);
  const SequenceFeatures sequence = sequenceFeatures(*target, *drafter, live.tokens);
  std::vector<std::int64_t> ascending(live.tokens.size());
  std::iota(ascending.begin(), ascending.end(), 0);
  ASSERT_GT(ascending.size(), 32u) << "needs more anchors than one forward takes";
  std::vector<std::int64_t> shuffled = ascending;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(7));
  const analysis::MaskVariant variant = analysis::MaskVariant::Reference;
  for (const auto& anchors : {ascending, shuffled}) {
    const TeacherForcedPass pass = runTeacherForcedPass(sequence, *drafter, anchors, variant, {.topK = 4});
    // Grouped as the pass groups them, so that the logits are the same bits.
    const at::Tensor whole = drafter->teacherForced(sequence.features, sequence.ids, anchors, variant, 32);
    const at::Tensor drafts = whole.argmax(-1).contiguous();
    const std::vector<BlockParity> parity =
        compareDraftPaths(inferencePathLogits(*drafter, sequence.features, sequence.ids, anchors, variant), whole);
    ASSERT_EQ(pass.steps.size(), anchors.size());
    EXPECT_TRUE(pass.parityFlaggedAnchors.empty());
    for (std::size_t j = 0; j < anchors.size(); ++j) {
      const session::StepRecord& step = pass.steps[j];
      SCOPED_TRACE("anchor " + std::to_string(anchors[j]));
      EXPECT_EQ(step.anchorPosition, anchors[j]);
      for (int i = 0; i < drafter->blockSize() - 1; ++i)
        EXPECT_EQ(step.draftTokens[static_cast<std::size_t>(i)], drafts[static_cast<std::int64_t>(j)][i].item<std::int64_t>());
      std::vector<session::TokenId> topIds;
      std::vector<float> topProbs;
      fillTopK(whole[static_cast<std::int64_t>(j)], 4, topIds, topProbs);
      EXPECT_EQ(step.topKIds, topIds);
      EXPECT_EQ(step.topKProbs, topProbs);
      std::map<std::string, float> recorded;
      for (const session::StatisticRecord& st : pass.statistics[j]) recorded[st.name] = st.values.at(0);
      // The carried cache projects the context in other row groups: last-bit differences only.
      EXPECT_NEAR(recorded.at("parity.max_abs_diff"), parity[j].maxAbsDiff, 1e-5);
      EXPECT_LE(recorded.at("parity.max_abs_diff"), 1e-4);
      EXPECT_EQ(recorded.at("parity.first_differing_slot"), -1.0f);
    }
  }
}

}  // namespace
}  // namespace dfi::engine
