// The training layout against SpecForge (specforge 0.2.0, tests/oracle/gen_specforge.py): on
// the anchors SpecForge's own sampler chose, the engine's training-path drafter forward (the
// teacher-forced pass) has SpecForge's masks (create_dflash_sdpa_mask, full and sliding),
// position ids (_create_position_ids) and block tokens (_create_noise_embed), its logits are
// SpecForge's DFlash training forward's (fp32, within 1e-4), and the teacher-forced acceptance
// per block is the accept_len SpecForge's compute_accept_len gives for the same logits, so a
// training run's logged number can be reproduced by the engine.
//
// Where SpecForge's sliding mask departs from the serving reference (dflash 0.1.0, which the
// engine follows: test_dflash_package), the case `sliding_short_window` pins the departure down
// cell by cell instead.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/analysis/attention_mask.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/teacher_forced/teacher_forced_pass.h"
#include "models/dflash_drafter.h"
#include "models/dflash_weights.h"
#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

using analysis::LayerAttention;
using analysis::MaskVariant;
using test::maxAbsDiff;
using test::referenceTensor;
using test::toVector;

constexpr double kTolerance = 1e-4;

const std::filesystem::path kSpecForgeDir = std::filesystem::path(DFI_BINARY_DIR) / "tests/oracle/specforge";

struct SpecForgeCase {
  explicit SpecForgeCase(const std::string& name)
      : dir(kSpecForgeDir / name),
        reference(tensorfile::SafetensorsFile::open(dir / "reference.safetensors")),
        target(TargetModel::load(dir / "target", ModelOptions{})),
        config(modelspec::parseDrafterConfig(dir / "drafter/config.json", target->config().numHiddenLayers)),
        drafter(config, loadDrafterWeights(dir / "drafter", config, target->config().hiddenSize, at::kFloat, at::kCPU),
                {target->embeddingWeight(), target->lmHeadWeight()}),
        ids(toVector(referenceTensor(reference, "input_ids"))),
        anchors(toVector(referenceTensor(reference, "anchors"))) {}

  std::int64_t length() const { return static_cast<std::int64_t>(ids.size()); }
  std::int64_t rows() const { return static_cast<std::int64_t>(anchors.size()) * drafter.blockSize(); }
  bool hasMask(LayerAttention kind) const { return reference.find(maskName(kind)) != nullptr; }
  static std::string maskName(LayerAttention kind) {
    return kind == LayerAttention::Full ? "mask.full_attention" : "mask.sliding_attention";
  }
  at::Tensor specForgeMask(LayerAttention kind) const { return referenceTensor(reference, maskName(kind)); }

  // The engine's training mask over the whole grid [N*B, T + N*B] (what the GUI draws).
  at::Tensor engineMask(const analysis::MaskSpec& spec, std::span<const std::int64_t> on) const {
    const std::int64_t rowCount = static_cast<std::int64_t>(on.size()) * spec.blockSize;
    const std::int64_t columns = length() + rowCount;
    at::Tensor mask = at::zeros({rowCount, columns}, at::kLong);
    auto cells = mask.accessor<std::int64_t, 2>();
    for (std::int64_t r = 0; r < rowCount; ++r)
      for (std::int64_t k = 0; k < columns; ++k)
        cells[r][k] = analysis::trainingCell(spec, on, length(), r, k).allowed;
    return mask;
  }
  at::Tensor engineMask(LayerAttention kind) const {
    return engineMask(drafter.maskSpec(MaskVariant::Reference, kind), anchors);
  }

  // What the drafter's forward attends with (analysis::trainingMaskPerBlock: each row over the
  // T context keys and its own block's B keys), and SpecForge's mask cut to the same columns.
  std::pair<at::Tensor, at::Tensor> perBlockMasks(LayerAttention kind) const {
    const int b = drafter.blockSize();
    const std::vector<std::uint8_t> ran =
        analysis::trainingMaskPerBlock(drafter.maskSpec(MaskVariant::Reference, kind), anchors, length());
    const at::Tensor engine = at::tensor(std::vector<std::int64_t>(ran.begin(), ran.end()), at::kLong)
                                  .view({rows(), length() + b});
    const at::Tensor full = specForgeMask(kind);
    std::vector<at::Tensor> own;
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(anchors.size()); ++j)
      own.push_back(full.narrow(0, j * b, b).narrow(1, length() + j * b, b));
    return {engine, at::cat({full.narrow(1, 0, length()), at::cat(own, 0)}, 1)};
  }

  const std::filesystem::path dir;
  const tensorfile::SafetensorsFile reference;
  const std::unique_ptr<TargetModel> target;
  const modelspec::DrafterConfig config;
  const DFlashDrafter drafter;
  const std::vector<std::int64_t> ids;
  const std::vector<std::int64_t> anchors;
};

// Context positions 0..T-1 (the engine's context rotary starts at 0 for a fresh cache), then
// each block's rows at the positions the engine's training forward gives them.
std::vector<std::int64_t> enginePositions(std::int64_t length, std::span<const std::int64_t> anchors, int b) {
  std::vector<std::int64_t> positions;
  for (std::int64_t p = 0; p < length; ++p) positions.push_back(p);
  for (std::int64_t anchor : anchors)
    for (int slot = 0; slot < b; ++slot) positions.push_back(analysis::blockSlotPosition(MaskVariant::Reference, anchor, slot));
  return positions;
}

class SpecForgeLayout : public ::testing::TestWithParam<std::string> {};

TEST_P(SpecForgeLayout, MasksPositionsAndBlockTokensAreSpecForges) {
  const SpecForgeCase c(GetParam());
  const int b = c.drafter.blockSize();
  ASSERT_EQ(referenceTensor(c.reference, "block_keep").sum().item<std::int64_t>(),
            static_cast<std::int64_t>(c.anchors.size()));
  int kinds = 0;
  for (LayerAttention kind : {LayerAttention::Full, LayerAttention::Sliding}) {
    SCOPED_TRACE(SpecForgeCase::maskName(kind));
    ASSERT_EQ(c.hasMask(kind), c.drafter.hasLayersOf(kind));
    if (!c.hasMask(kind)) continue;
    ++kinds;
    EXPECT_TRUE(at::equal(c.engineMask(kind), c.specForgeMask(kind)));
    const auto [ran, specForge] = c.perBlockMasks(kind);
    EXPECT_TRUE(at::equal(ran, specForge));
    // Nothing outside [context | own block] is allowed in SpecForge's mask either.
    EXPECT_EQ(c.specForgeMask(kind).sum().item<std::int64_t>(), specForge.sum().item<std::int64_t>());
  }
  EXPECT_GT(kinds, 0);

  EXPECT_EQ(enginePositions(c.length(), c.anchors, b), toVector(referenceTensor(c.reference, "position_ids")));

  // The block rows: the anchor's token, then the mask token.
  std::vector<std::int64_t> blockTokens;
  for (std::int64_t anchor : c.anchors) {
    blockTokens.push_back(c.ids[static_cast<std::size_t>(anchor)]);
    blockTokens.insert(blockTokens.end(), b - 1, *c.config.maskTokenId);
  }
  EXPECT_EQ(blockTokens, toVector(referenceTensor(c.reference, "noise_ids")));
}

TEST_P(SpecForgeLayout, LogitsAndAcceptancePerBlockAreSpecForges) {
  const SpecForgeCase c(GetParam());
  const int b = c.drafter.blockSize();
  const SequenceFeatures sequence = sequenceFeatures(*c.target, c.drafter, c.ids);
  const at::Tensor logits = c.drafter.teacherForced(sequence.features, sequence.ids, c.anchors);
  const at::Tensor specForge = referenceTensor(c.reference, "logits").narrow(1, 1, b - 1);  // slot 0 is not drafted
  const double diff = maxAbsDiff(logits, specForge);
  EXPECT_LE(diff, kTolerance);

  // The teacher-forced pass a run records, against compute_accept_len. SpecForge's labels are
  // the sequence's tokens, known up to position T-1; the engine's are the target's greedy
  // tokens, which equal them on a greedy continuation and also reach position T (the target's
  // prediction after the last token). A block running past T-1 is compared on the slots
  // SpecForge has labels for.
  const TeacherForcedPass pass =
      runTeacherForcedPass(sequence, c.drafter, c.anchors, MaskVariant::Reference, {.parity = false});
  const std::vector<std::int64_t> acceptLen = toVector(referenceTensor(c.reference, "accept_len"));
  ASSERT_EQ(pass.steps.size(), c.anchors.size());
  int equal = 0, tail = 0, longerAtT = 0;
  double engineLogged = 0, specForgeLogged = 0;
  for (std::size_t j = 0; j < c.anchors.size(); ++j) {
    const std::int64_t anchor = c.anchors[j];
    const std::int64_t labelled = std::min<std::int64_t>(b - 1, c.length() - 1 - anchor);
    const std::int64_t accepted = pass.steps[j].acceptedCount;
    SCOPED_TRACE("anchor " + std::to_string(anchor));
    EXPECT_EQ(std::min(accepted, labelled), acceptLen[j]);
    equal += std::min(accepted, labelled) == acceptLen[j];
    tail += labelled < b - 1;
    longerAtT += accepted > labelled;
    engineLogged += static_cast<double>(std::min(accepted, labelled) + 1);
    specForgeLogged += static_cast<double>(acceptLen[j] + 1);
  }
  const auto n = static_cast<double>(c.anchors.size());
  std::cout << GetParam() << ": " << c.anchors.size() << " blocks (" << tail << " past the sequence), logits max abs diff "
            << diff << ", accept_len equal in " << equal << "/" << c.anchors.size() << " blocks (" << longerAtT
            << " where the engine also accepts the slot at position T), logged accept_len " << specForgeLogged / n
            << " (SpecForge) vs " << engineLogged / n << " (engine)\n";
}

// speculators 0.9.0 (vLLM's DFlash training) on the anchors its select_anchors picked: the
// same block positions and full-attention mask, and its accepted-length metric per block
// (targets: the verifier's greedy tokens, as the engine's) is the engine's accepted run plus
// the bonus token. Its sliding masks (causal, and the non-causal one DFlash2 trains with) give
// every slot of a block the context keys [anchor - W, anchor), where the serving rule (dflash
// 0.1.0, the engine) lets slot s see keys after anchor + s - W only: a superset, pinned down
// cell by cell here.
TEST_P(SpecForgeLayout, SpeculatorsLayoutAndAcceptedLength) {
  const SpecForgeCase c(GetParam());
  const int b = c.drafter.blockSize();
  const std::vector<std::int64_t> anchors = toVector(referenceTensor(c.reference, "speculators.anchors"));
  EXPECT_EQ(enginePositions(c.length(), anchors, b), toVector(referenceTensor(c.reference, "speculators.position_ids")));
  analysis::MaskSpec full = c.drafter.maskSpec(MaskVariant::Reference, LayerAttention::Full);
  full.causal.reset();  // speculators' full layers are non-causal, whatever the drafter says
  EXPECT_TRUE(at::equal(c.engineMask(full, anchors), referenceTensor(c.reference, "speculators.mask.full_attention")));

  const int window = static_cast<int>(referenceTensor(c.reference, "speculators.window").item<std::int64_t>());
  int wider = 0;
  for (const bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal sliding" : "non-causal sliding");
    const analysis::MaskSpec spec{.variant = MaskVariant::Reference, .layer = LayerAttention::Sliding, .blockSize = b,
                                  .slidingWindow = window, .causal = causal};
    const at::Tensor engine = c.engineMask(spec, anchors);
    const at::Tensor speculators = referenceTensor(
        c.reference, causal ? "speculators.mask.sliding_attention" : "speculators.mask.sliding_attention_non_causal");
    ASSERT_GE(window, b);  // in-block cells are then all within the window for both rules
    at::Tensor expected = speculators.clone();
    auto cells = expected.accessor<std::int64_t, 2>();
    for (std::int64_t r = 0; r < engine.size(0); ++r) {
      const std::int64_t anchor = anchors[static_cast<std::size_t>(r / b)], slot = r % b;
      for (std::int64_t key = std::max<std::int64_t>(0, anchor - window); key <= anchor + slot - window; ++key) {
        EXPECT_EQ(cells[r][key], 1);
        cells[r][key] = 0;
        ++wider;
      }
    }
    EXPECT_TRUE(at::equal(engine, expected));
  }
  EXPECT_GT(wider, 0);

  const SequenceFeatures sequence = sequenceFeatures(*c.target, c.drafter, c.ids);
  const TeacherForcedPass pass =
      runTeacherForcedPass(sequence, c.drafter, anchors, MaskVariant::Reference, {.parity = false});
  const std::vector<std::int64_t> acceptedLength = toVector(referenceTensor(c.reference, "speculators.accepted_length"));
  ASSERT_EQ(pass.steps.size(), anchors.size());
  int equal = 0;
  for (std::size_t j = 0; j < anchors.size(); ++j) {
    SCOPED_TRACE("anchor " + std::to_string(anchors[j]));
    EXPECT_EQ(pass.steps[j].acceptedCount + 1, acceptedLength[j]);
    equal += pass.steps[j].acceptedCount + 1 == acceptedLength[j];
  }
  std::cout << GetParam() << ": speculators, " << anchors.size() << " blocks, accepted length equal in " << equal << "/"
            << anchors.size() << "; its sliding masks (window " << window << ") allow " << wider
            << " context cells the serving rule does not\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, SpecForgeLayout, ::testing::Values("full", "sliding"));

// A sliding window shorter than the block: SpecForge's create_dflash_sdpa_mask windows only the
// context keys and lets a slot see every earlier slot of its block, while the serving reference
// (dflash 0.1.0's _attention_mask, vLLM and SGLang: a key at distance >= W from the query is
// masked, in the block too) and the engine window the block as well. A drafter trained this
// way is served under another mask. The masks differ exactly in those in-block cells.
TEST(SpecForgeShortWindow, SlidingMaskDiffersOnlyInsideTheBlockBeyondTheWindow) {
  const SpecForgeCase c("sliding_short_window");
  const int b = c.drafter.blockSize();
  const int window = c.config.slidingWindow.value();
  ASSERT_LT(window, b);
  const at::Tensor engine = c.engineMask(LayerAttention::Sliding);
  const at::Tensor specForge = c.specForgeMask(LayerAttention::Sliding);
  at::Tensor expected = specForge.clone();
  auto cells = expected.accessor<std::int64_t, 2>();
  int cut = 0;
  for (std::int64_t r = 0; r < c.rows(); ++r)
    for (int keySlot = 0; keySlot < b; ++keySlot)
      if ((r % b) - keySlot >= window) {
        EXPECT_EQ(cells[r][c.length() + (r / b) * b + keySlot], 1);  // SpecForge lets the slot see it
        cells[r][c.length() + (r / b) * b + keySlot] = 0;
        ++cut;
      }
  EXPECT_TRUE(at::equal(engine, expected));
  EXPECT_FALSE(at::equal(engine, specForge));
  // The context part is SpecForge's, and so is the full-attention rule for the same anchors.
  EXPECT_TRUE(at::equal(engine.narrow(1, 0, c.length()), specForge.narrow(1, 0, c.length())));
  EXPECT_TRUE(at::equal(c.engineMask(LayerAttention::Full), c.specForgeMask(LayerAttention::Full)));

  const SequenceFeatures sequence = sequenceFeatures(*c.target, c.drafter, c.ids);
  const double diff =
      maxAbsDiff(c.drafter.teacherForced(sequence.features, sequence.ids, c.anchors),
                 referenceTensor(c.reference, "logits").narrow(1, 1, b - 1));
  EXPECT_GT(diff, 1e-3);  // the cells matter
  std::cout << "sliding window " << window << " < block " << b << ": " << cut
            << " in-block cells SpecForge allows and the serving mask does not; logits differ by up to " << diff
            << "\n";
}

}  // namespace
}  // namespace dfi::engine
