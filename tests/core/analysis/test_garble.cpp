#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <unistd.h>

#include "dfi/analysis/garble.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"

using namespace dfi::analysis;
using Tokens = std::vector<std::int32_t>;
using Flags = std::vector<std::uint8_t>;

TEST(Garble, CleanDraftHasNoFlags) {
  const Tokens clean{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_FALSE(isGarbled(detectGarble(clean)));
  EXPECT_TRUE(detectGarble(Tokens{}).empty());
  EXPECT_FALSE(isGarbled(detectGarble(Tokens{4, 4, 5, 4, 4})));  // two in a row is ordinary
}

TEST(Garble, ElifElifElifMarksTheRun) {
  constexpr std::uint8_t R = kGarbleRepeatedToken;
  EXPECT_EQ(detectGarble(Tokens{11, 30, 30, 30, 12}), (Flags{0, R, R, R, 0}));
  EXPECT_EQ(detectGarble(Tokens{30, 30, 30, 30}), (Flags{R, R, R, R}));
}

TEST(Garble, FizzFizzFizzMarksTheRepeatedSpan) {
  constexpr std::uint8_t S = kGarbleRepeatedSpan;
  // "F" "izz" three times, then "Buzz"
  EXPECT_EQ(detectGarble(Tokens{70, 71, 70, 71, 70, 71, 90}), (Flags{S, S, S, S, S, S, 0}));
  EXPECT_FALSE(isGarbled(detectGarble(Tokens{1, 2, 3, 1, 2, 3, 1, 2, 4})));  // third copy broken
  // A span of one token repeated is a token run, not also a span ("_" "_" x3 marked twice before).
  constexpr std::uint8_t R = kGarbleRepeatedToken;
  EXPECT_EQ(detectGarble(Tokens{5, 5, 5, 5, 5, 5, 7}), (Flags{R, R, R, R, R, R, 0}));
}

// The anchor is the block's token 0: a pattern that starts there fires, but the anchor (the
// target's token, not a draft) is never a flagged slot.
TEST(Garble, TheAnchorStartsARunOrASpan) {
  constexpr std::uint8_t R = kGarbleRepeatedToken, S = kGarbleRepeatedSpan, E = kGarbleAnchorEcho;
  // "elif" -> "elif" "elif": three with the anchor; slot 0 also echoes the anchor.
  EXPECT_EQ(detectGarble(Tokens{30, 30, 8, 9}, {}, 30), (Flags{R | E, R, 0, 0}));
  EXPECT_EQ(detectGarble(Tokens{30, 30, 8, 9}), (Flags{0, 0, 0, 0}));  // without it: two, ordinary
  // anchor "F", then "izz" "F" "izz" "F" "izz": three copies of "F" "izz".
  EXPECT_EQ(detectGarble(Tokens{71, 70, 71, 70, 71, 3}, {}, 70), (Flags{S, S, S, S, S, 0}));
  // Echo alone: slot 0 repeats the anchor, nothing else repeats.
  EXPECT_EQ(detectGarble(Tokens{4, 5, 6}, {}, 4), (Flags{E, 0, 0}));
  EXPECT_EQ(detectGarble(Tokens{5, 4, 6}, {}, 4), (Flags{0, 0, 0}));
}

TEST(Garble, MaskTokenAndPaddedRowsAreFlagged) {
  const GarbleContext ctx{.maskTokenId = 151669, .tokenizerVocabSize = 151669};
  const auto flags = detectGarble(Tokens{5, 151669, 151900, 6}, ctx);
  EXPECT_EQ(flags[0], kGarbleNone);
  EXPECT_EQ(flags[1], kGarbleMaskToken | kGarbleInvalidToken);
  EXPECT_EQ(flags[2], kGarbleInvalidToken);
  EXPECT_EQ(flags[3], kGarbleNone);
}

// A hypothesis's run keeps its drafts through the first rejection: the -1 after it are no
// drafts, not a run of one token.
TEST(Garble, SlotsWithoutADraftEndTheDrafts) {
  constexpr std::uint8_t R = kGarbleRepeatedToken;
  const GarbleContext ctx{.tokenizerVocabSize = 100};
  EXPECT_EQ(detectGarble(Tokens{30, 30, 30, -1, -1, -1}, ctx), (Flags{R, R, R, 0, 0, 0}));
  EXPECT_EQ(detectGarble(Tokens{5, -1, -1, -1, -1}, ctx), (Flags{0, 0, 0, 0, 0}));
  EXPECT_EQ(detectGarble(Tokens{-1, -1, -1}, ctx), (Flags{0, 0, 0}));
}

TEST(Garble, FlagNames) {
  EXPECT_EQ(garbleFlagNames(kGarbleRepeatedToken | kGarbleMaskToken), "repeated-token, mask-token");
  EXPECT_EQ(garbleFlagNames(kGarbleAnchorEcho | kGarbleRepeatedSpan), "repeated-span, anchor-echo");
  EXPECT_EQ(garbleFlagNames(kGarbleNone), "");
}

// The names are stable (filters, tooltips and exports use them) and every bit has one.
TEST(Garble, EveryDetectorHasOneStableName) {
  std::vector<std::string> names;
  std::uint8_t bits = 0;
  for (const GarbleDetector& d : garbleDetectors()) {
    names.emplace_back(d.name);
    EXPECT_EQ(bits & d.flag, 0);
    bits |= d.flag;
    EXPECT_FALSE(d.description.empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"repeated-token", "repeated-span", "anchor-echo", "mask-token", "invalid-token"}));
  EXPECT_EQ(bits, 0x1f);
}

// A step's flags split at the draft chain's first mismatch: the accepted slots and the first
// mismatch are what the drafter proposes, the rest nothing used. The summary scan of a file
// (which reads a DDTree step's tokens to find its chain's mismatch) agrees with summarize().
TEST(Garble, SummariesSplitFlagsAtTheChainsFirstMismatch) {
  using namespace dfi::session;
  StepRecord live;
  live.mode = EvaluationMode::Live;
  live.draftTokens = {1, 2, 9, 9, 9, 9};
  live.targetTokens = {1, 2, 3, 4, 5, 6};
  live.acceptedCount = 2;  // slot 2 is the first mismatch
  live.garbleFlags = {0, 0, kGarbleRepeatedToken, kGarbleRepeatedToken, kGarbleRepeatedToken, kGarbleRepeatedSpan};
  StepSummary summary = summarize(live);
  EXPECT_EQ(summary.proposedGarble, kGarbleRepeatedToken);
  EXPECT_EQ(summary.proposedGarbledSlots, 1);
  EXPECT_EQ(summary.tailGarble, kGarbleRepeatedToken | kGarbleRepeatedSpan);
  EXPECT_EQ(summary.garbledSlots, 4);

  StepRecord rejectedTail = live;
  rejectedTail.acceptedCount = 1;  // the first mismatch is slot 1, the run starts after it
  rejectedTail.draftTokens[1] = 7;
  EXPECT_EQ(summarize(rejectedTail).proposedGarble, 0);
  EXPECT_EQ(summarize(rejectedTail).tailGarble, kGarbleRepeatedToken | kGarbleRepeatedSpan);

  StepRecord tree = live;  // the tree accepted 5; the chain leaves the target at slot 0
  tree.mode = EvaluationMode::DDTree;
  tree.acceptedCount = 5;
  tree.draftTokens[0] = 8;
  tree.garbleFlags = {0, kGarbleAnchorEcho, kGarbleRepeatedToken, 0, 0, 0};
  EXPECT_EQ(chainAcceptedCount(tree), 0);
  EXPECT_EQ(summarize(tree).proposedGarble, 0);
  EXPECT_EQ(summarize(tree).tailGarble, kGarbleAnchorEcho | kGarbleRepeatedToken);

  const auto path = std::filesystem::temp_directory_path() / ("test_garble_" + std::to_string(::getpid()) + ".dfi");
  std::vector<StepRecord> written;
  {
    Writer writer(path.string(), {.mode = OpenMode::Overwrite});
    const RunId run = writer.addRun({.name = "r", .blockSize = 7, .topK = 0});
    writer.addPrompt({.runId = run, .promptId = 0});
    for (StepRecord step : {live, rejectedTail, tree}) {
      step.runId = run;
      step.stepIndex = static_cast<std::int32_t>(written.size());
      step.stepId = writer.addStep(step);
      written.push_back(step);
    }
    writer.close();
  }
  std::vector<StepSummary> scanned;
  Reader reader(path.string());
  reader.forEachStepSummary(written[0].runId, [&](const StepSummary& s) { scanned.push_back(s); });
  ASSERT_EQ(scanned.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(scanned[i], summarize(written[i])) << "step " << i;
  EXPECT_EQ(scanned[2].proposedGarble, 0);
  std::filesystem::remove(path);
}
