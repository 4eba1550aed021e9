// Drafters in vLLM speculators' format (speculators 0.9.0, tests/oracle/gen_speculators.py):
// checkpoints its own DFlashDraftModel built and saved load through the engine's one drafter
// path, and the engine's teacher-forced logits at the package's anchors are the package's
// training forward's (fp32, within 1e-4). With a reduced draft vocabulary the engine's logits are
// over target ids: each draft id's score at the target id its d2t names, -inf at every id the
// draft vocabulary lacks, so its drafts are the package's draft ids mapped as vLLM maps them.
// DFlash2 drafters (speculators' dflash2) add the package's convolutions and candidate selector.
// The live loop on such a drafter is test_dflash_live_speculators (same fixture).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/analysis/position_metrics.h"
#include "dfi/base/error.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "evaluation/diagnosis/hypotheses.h"
#include "evaluation/diagnosis/vocabulary_lint.h"
#include "evaluation/evaluation_models.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "models/candidate_selector.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

using test::layerOutputsDiff;
using test::maxAbsDiff;
using test::referenceTensor;
using test::toVector;

constexpr double kTolerance = 1e-4;
const std::filesystem::path kDir = std::filesystem::path(DFI_BINARY_DIR) / "tests/oracle/speculators";

struct SpeculatorsCase {
  explicit SpeculatorsCase(const std::string& name)
      : dir(kDir / name),
        reference(tensorfile::SafetensorsFile::open(dir / "reference.safetensors")),
        target(TargetModel::load(dir / "target", ModelOptions{})),
        drafter(loadDrafter(dir / "drafter", *target)),
        ids(toVector(referenceTensor(reference, "input_ids"))),
        anchors(toVector(referenceTensor(reference, "anchors"))) {}

  // The package's logits of slots 1..B-1 (slot 0 is the anchor), [N, B-1, Vd].
  at::Tensor packageLogits() const {
    const int b = drafter->blockSize();
    const at::Tensor all = referenceTensor(reference, "logits");
    return all.view({static_cast<std::int64_t>(anchors.size()), b, all.size(-1)}).narrow(1, 1, b - 1);
  }
  at::Tensor engineLogits() const {
    const SequenceFeatures sequence = sequenceFeatures(*target, *drafter, ids);
    return drafter->teacherForced(sequence.features, sequence.ids, anchors);
  }

  const std::filesystem::path dir;
  const tensorfile::SafetensorsFile reference;
  const std::unique_ptr<TargetModel> target;
  const std::unique_ptr<DFlashDrafter> drafter;
  const std::vector<std::int64_t> ids;
  const std::vector<std::int64_t> anchors;
};

TEST(SpeculatorsDrafter, ConfigReadsTheFormatsConventions) {
  const SpeculatorsCase c("reduced_vocab");
  const modelspec::DrafterConfig& config = c.drafter->config();
  EXPECT_EQ(config.format, modelspec::DrafterFormat::Speculators);
  ASSERT_TRUE(config.speculators.has_value());
  EXPECT_EQ(config.speculators->auxHiddenStateLayerIds, (std::vector<int>{1, 3}));
  EXPECT_EQ(config.targetLayerIds, (std::vector<int>{0, 2}));  // hidden_states[i] is layer i-1's output
  EXPECT_EQ(config.draftVocabSize, 40);
  EXPECT_EQ(config.vocabSize, 64);
  EXPECT_EQ(config.blockSize, 6);
  EXPECT_EQ(config.maskTokenId, 63);
  EXPECT_EQ(config.speculators->speculativeTokens, 5);
  EXPECT_EQ(config.speculators->verifierAcceptK, 1);
  EXPECT_EQ(config.speculators->verifierArchitectures, (std::vector<std::string>{"Qwen3ForCausalLM"}));
  EXPECT_FALSE(config.isCausal.has_value());  // every layer full, non-causal
  EXPECT_TRUE(config.warnings.empty()) << config.warnings.front().field;

  const SpeculatorsCase full("full_vocab");
  EXPECT_FALSE(full.drafter->config().draftVocabSize.has_value());
  EXPECT_EQ(full.drafter->config().targetLayerIds, (std::vector<int>{1, 2}));
}

TEST(SpeculatorsDrafter, ReducedVocabularyLogitsAreThePackagesAtTheirTargetIds) {
  const SpeculatorsCase c("reduced_vocab");
  const at::Tensor engine = c.engineLogits();
  const at::Tensor package = c.packageLogits();
  const at::Tensor targetIds = referenceTensor(c.reference, "draft_to_target").to(at::kLong);
  ASSERT_EQ(engine.size(-1), 64);
  ASSERT_EQ(package.size(-1), 40);
  const double diff = maxAbsDiff(engine.index_select(-1, targetIds), package);
  EXPECT_LE(diff, kTolerance);

  // Every other target id is impossible to draft.
  at::Tensor outside = at::ones({64}, at::kBool);
  outside.index_fill_(0, targetIds, false);
  const at::Tensor rest = engine.index_select(-1, outside.nonzero().view(-1));
  EXPECT_TRUE(at::isinf(rest).all().item<bool>() && (rest < 0).all().item<bool>());

  // The drafts: the package's argmax draft id, mapped through d2t.
  const at::Tensor mapped = targetIds.index_select(0, package.argmax(-1).view(-1)).view(package.sizes().slice(0, 2));
  EXPECT_TRUE(at::equal(engine.argmax(-1), mapped));
  std::cout << "reduced_vocab: " << c.anchors.size() << " anchors, logits max abs diff " << diff << "\n";
}

// Every layer's output and the logits, for each DFlash case. "sliding_causal" has a causal
// sliding layer of window 5, which speculators trains counting from the anchor (the 5 positions
// before it, every slot) and servers run counting back from each slot: the package's forward is
// the engine's under diagnose's window-from:anchor, and the serving rule parts from it.
TEST(SpeculatorsDrafter, LayersAndLogitsAreThePackages) {
  for (const char* name : {"full_vocab", "reduced_vocab", "sliding_causal"}) {
    SCOPED_TRACE(name);
    const SpeculatorsCase c(name);
    const bool sliding = std::string(name) == "sliding_causal";
    const DrafterFiles files = openDrafter(c.dir / "drafter", c.target->config().numHiddenLayers);
    const std::unique_ptr<DFlashDrafter> asTrained =
        sliding ? variantDrafter({.kind = Hypothesis::Kind::WindowFrom, .fromAnchor = true}, files, *c.target) : nullptr;
    const DFlashDrafter& drafter = asTrained ? *asTrained : *c.drafter;
    const SequenceFeatures sequence = sequenceFeatures(*c.target, drafter, c.ids);
    DrafterProbes probes{.wantLayerOutputs = true};
    const at::Tensor logits =
        drafter.teacherForced(sequence.features, sequence.ids, c.anchors, analysis::MaskVariant::Reference, 0, &probes);
    const double layersDiff = layerOutputsDiff(probes.layerOutputs, c.reference);
    EXPECT_LE(layersDiff, kTolerance);
    double logitsDiff = 0, servedDiff = 0;
    if (!c.reference.find("draft_to_target")) {  // the reduced vocabulary's logits: the test above
      logitsDiff = maxAbsDiff(logits, c.packageLogits());
      EXPECT_LE(logitsDiff, kTolerance);
    }
    if (sliding) {
      EXPECT_FALSE(c.drafter->config().slidingWindowFromAnchor);  // served by the serving rule
      servedDiff = maxAbsDiff(c.engineLogits(), c.packageLogits());
      EXPECT_GT(servedDiff, 1e-2);
    }
    std::cout << name << ": " << c.anchors.size() << " anchors, layers max abs diff " << layersDiff << ", logits "
              << logitsDiff << (sliding ? ", served by the serving rule " + std::to_string(servedDiff) : "") << "\n";
  }
}

// speculators' DFlash2 (its convolutions around attention and MLP, z-lab's under the same names):
// the unary logits are the package's, and the selector rescoring each slot's top-k after a given
// predecessor is its score_candidates (the engine's selector run one slot at a time, from the
// sequence's previous token as the package's _predecessor_ids gives it).
TEST(SpeculatorsDrafter, Dflash2LogitsAndSelectorScoresAreThePackages) {
  const SpeculatorsCase c("dflash2");
  const modelspec::DrafterConfig& config = c.drafter->config();
  ASSERT_TRUE(config.dflash2.has_value());
  EXPECT_EQ(config.dflash2->convKernelSize, 3);
  EXPECT_EQ(config.dflash2->selectorTopK, 5);
  EXPECT_EQ(config.isCausal, false);  // DFlash2SpeculatorConfig: sliding_window_non_causal true

  const int b = c.drafter->blockSize();
  const SequenceFeatures sequence = sequenceFeatures(*c.target, *c.drafter, c.ids);
  std::vector<at::Tensor> logitParts, stateParts;  // in anchor order, one part per forward
  DrafterProbes probes{.wantLayerOutputs = true};
  c.drafter->teacherForcedChunks(sequence.features, sequence.ids, c.anchors, analysis::MaskVariant::Reference, 0,
                                 [&](std::size_t, const at::Tensor& l, const at::Tensor& s) {
                                   logitParts.push_back(l.clone());
                                   stateParts.push_back(s.clone());
                                 },
                                 &probes);
  const at::Tensor logits = at::cat(logitParts, 0), states = at::cat(stateParts, 0);
  const double layersDiff = layerOutputsDiff(probes.layerOutputs, c.reference);
  EXPECT_LE(layersDiff, kTolerance);
  const double logitsDiff = maxAbsDiff(logits, c.packageLogits());
  EXPECT_LE(logitsDiff, kTolerance);

  const std::optional<CandidateSelector> selector = c.drafter->selector();
  ASSERT_TRUE(selector.has_value());
  const at::Tensor candidates = referenceTensor(c.reference, "selector.candidates").to(at::kLong);
  const at::Tensor scores = referenceTensor(c.reference, "selector.scores");
  const std::vector<std::int64_t> predecessors = toVector(referenceTensor(c.reference, "selector.predecessors"));
  double scoresDiff = 0;
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(c.anchors.size()); ++j) {
    for (int slot = 1; slot < b; ++slot) {
      const std::int64_t row = j * b + slot;
      const SelectorPath path = selector->select(states[j].narrow(0, slot, 1), logits[j].narrow(0, slot - 1, 1),
                                                 predecessors[static_cast<std::size_t>(row)]);
      EXPECT_TRUE(at::equal(path.candidates[0], candidates[row])) << "anchor " << c.anchors[j] << " slot " << slot;
      scoresDiff = std::max(scoresDiff, maxAbsDiff(path.scores[0], scores[row]));
    }
  }
  EXPECT_LE(scoresDiff, kTolerance);
  std::cout << "dflash2: " << c.anchors.size() << " anchors, layers max abs diff " << layersDiff
            << ", logits " << logitsDiff
            << ", selector scores max abs diff " << scoresDiff << "\n";
}

// DFlash2's training metrics (speculators' dflash2/metrics.py) from the engine's teacher-forced
// records of the same blocks: the analytic accept_len of its unary logits block for block, the
// selector's accepted run (its eal), the candidate recall and the top-k oracle path, each equal
// to the package's metrics dict.
TEST(SpeculatorsDrafter, Dflash2TrainingMetricsAreThePackages) {
  const SpeculatorsCase c("dflash2");
  const SequenceFeatures sequence = sequenceFeatures(*c.target, *c.drafter, c.ids);
  const std::vector<session::StepRecord> steps =
      teacherForcedSteps(sequence, *c.drafter, c.anchors, analysis::MaskVariant::Reference, 0);
  const at::Tensor perBlock = referenceTensor(c.reference, "accept_len_per_block");
  ASSERT_EQ(perBlock.numel(), static_cast<std::int64_t>(steps.size()));
  session::RunRecord run;
  run.blockSize = c.drafter->blockSize();
  analysis::PositionTally tally(run);
  double worst = 0;
  for (std::size_t j = 0; j < steps.size(); ++j) {
    worst = std::max(worst, std::abs(*analysis::analyticAcceptLength(steps[j]) -
                                     perBlock[static_cast<std::int64_t>(j)].item<double>()));
    tally.add(steps[j]);
  }
  EXPECT_LE(worst, kTolerance);
  auto packageMean = [&](const std::string& name) {
    return referenceTensor(c.reference, "metrics." + name + "_sum").item<double>() /
           referenceTensor(c.reference, "metrics." + name + "_total").item<double>();
  };
  const analysis::PositionMetrics m = tally.finish().at(0);
  EXPECT_NEAR(m.analyticAcceptLength->estimate, packageMean("accept_len"), kTolerance);
  ASSERT_TRUE(m.selector.has_value());
  double recalled = 0, scored = 0;
  for (std::size_t i = 0; i < m.selector->candidateRecall.size(); ++i) {
    recalled += m.selector->candidateRecall[i] * static_cast<double>(m.selector->recallSlots[i]);
    scored += static_cast<double>(m.selector->recallSlots[i]);
  }
  EXPECT_NEAR(recalled / scored, packageMean("unary_candidate_recall"), 1e-9);
  EXPECT_NEAR(m.selector->oracleAcceptLength, packageMean("unary_oracle_accepted_length"), 1e-9);
  EXPECT_NEAR(m.selector->selectorAcceptLength, packageMean("eal"), 1e-9);
  std::cout << "dflash2: analytic accept_len " << m.analyticAcceptLength->estimate << " (largest block difference "
            << worst << "), candidate recall " << recalled / scored << ", oracle " << m.selector->oracleAcceptLength
            << ", selector " << m.selector->selectorAcceptLength << "\n";
}

// diagnose's two hypotheses of a reduced vocabulary build drafters that draft as a server that
// misreads it would: vocab-map:identity scores draft id i as target id i (the package's logits at
// columns 0..Vd-1), lm-head:target drafts through the target's whole LM head (the package's
// final-normed rows times it).
TEST(SpeculatorsDrafter, DiagnoseVariantsOfAReducedVocabulary) {
  const SpeculatorsCase c("reduced_vocab");
  const DrafterFiles files = openDrafter(c.dir / "drafter", c.target->config().numHiddenLayers);
  auto logitsOf = [&](const DFlashDrafter& variant) {
    const SequenceFeatures sequence = sequenceFeatures(*c.target, variant, c.ids);
    return variant.teacherForced(sequence.features, sequence.ids, c.anchors);
  };
  const at::Tensor package = c.packageLogits();
  const auto identity = variantDrafter({.kind = Hypothesis::Kind::VocabIdentity}, files, *c.target);
  ASSERT_NE(identity, nullptr);
  const at::Tensor identityLogits = logitsOf(*identity);
  EXPECT_LE(maxAbsDiff(identityLogits.narrow(-1, 0, package.size(-1)), package), kTolerance);
  EXPECT_TRUE(at::equal(identityLogits.argmax(-1), package.argmax(-1)));

  const auto targetHead = variantDrafter({.kind = Hypothesis::Kind::TargetLmHead}, files, *c.target);
  ASSERT_NE(targetHead, nullptr);
  const int b = c.drafter->blockSize();
  const at::Tensor expected = referenceTensor(c.reference, "target_head_logits")
                                  .view({static_cast<std::int64_t>(c.anchors.size()), b, -1})
                                  .narrow(1, 1, b - 1);
  EXPECT_LE(maxAbsDiff(logitsOf(*targetHead), expected), kTolerance);

  // The battery plans both for a reduced vocabulary and lists them as not applicable otherwise.
  const DiagnosisSettings settings;
  const std::optional<tokenizer::Tokenizer> noTokenizer;
  const std::vector<PromptSpec> noPrompts;
  for (const std::string name : {"reduced_vocab", "full_vocab"}) {
    const DrafterFiles drafter = openDrafter(kDir / name / "drafter", c.target->config().numHiddenLayers);
    for (const Hypothesis& h : planHypotheses({settings, drafter.config, c.target->config(), noTokenizer, noPrompts}))
      if (h.kind == Hypothesis::Kind::VocabIdentity || h.kind == Hypothesis::Kind::TargetLmHead) {
        EXPECT_EQ(h.planned.applicable, name == "reduced_vocab") << name << " " << h.planned.name;
      }
  }
}

// diagnose's lint reads the drafter's lm_head rows against the target's at the ids d2t maps them
// to: the package's copy says nothing; the target's first Vd rows are named as a mapping that is not
// the head's; rows of neither (the fixture's random head) as a trained head or another mapping.
TEST(SpeculatorsDrafter, LintComparesTheHeadsRowsWithTheTargetsAtTheMappedIds) {
  const std::filesystem::path target = kDir / "reduced_vocab/target";
  auto lint = [&](const std::filesystem::path& dir) {
    return draftVocabularyLint(modelspec::parseDrafterConfig(dir / "config.json", 4), dir, target);
  };
  EXPECT_FALSE(lint(kDir / "bad/rows_of_the_mapping").has_value());
  const auto firstIds = lint(kDir / "bad/rows_of_the_first_ids");
  ASSERT_TRUE(firstIds.has_value());
  EXPECT_EQ(firstIds->code, "draft-vocabulary-rows");
  EXPECT_NE(firstIds->message.find("equal the target's rows at ids 0..39"), std::string::npos) << firstIds->message;
  const auto random = lint(kDir / "reduced_vocab/drafter");
  ASSERT_TRUE(random.has_value());
  EXPECT_NE(random->message.find("40 of 40 rows checked"), std::string::npos) << random->message;
  EXPECT_NE(random->subject.find("lm_head.weight"), std::string::npos);
  EXPECT_FALSE(lint(kDir / "full_vocab/drafter").has_value());
}

// diagnose's rope:theta=<x>: the variant drafter equals the package's drafter with that base.
TEST(SpeculatorsDrafter, RopeThetaVariantIsThePackagesDrafterWithThatBase) {
  const SpeculatorsCase c("full_vocab");
  const DrafterFiles files = openDrafter(c.dir / "drafter", c.target->config().numHiddenLayers);
  const auto variant = variantDrafter({.kind = Hypothesis::Kind::RopeTheta, .rope = 500000.0}, files, *c.target);
  ASSERT_NE(variant, nullptr);
  const SequenceFeatures sequence = sequenceFeatures(*c.target, *variant, c.ids);
  const int b = variant->blockSize();
  const at::Tensor expected = referenceTensor(c.reference, "logits.rope_theta")
                                  .view({static_cast<std::int64_t>(c.anchors.size()), b, -1})
                                  .narrow(1, 1, b - 1);
  const at::Tensor logits = variant->teacherForced(sequence.features, sequence.ids, c.anchors);
  EXPECT_LE(maxAbsDiff(logits, expected), kTolerance);
  EXPECT_GT(maxAbsDiff(logits, c.packageLogits()), 1e-3);  // the base matters at these positions
}

// A broken mapping is refused at load, naming the file, the tensor and the values.
void expectRefused(const std::string& name, const std::vector<std::string>& fragments) {
  SCOPED_TRACE(name);
  const std::unique_ptr<TargetModel> target = TargetModel::load(kDir / "reduced_vocab/target", ModelOptions{});
  try {
    loadDrafter(kDir / "bad" / name, *target);
    ADD_FAILURE() << "loaded";
  } catch (const ValidationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((kDir / "bad" / name).string()), std::string::npos) << what;
    for (const std::string& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << what;
  }
}

TEST(SpeculatorsDrafter, BrokenMappingsAreRefusedByName) {
  expectRefused("d2t_length", {"d2t", "[39]", "[40]"});
  expectRefused("d2t_outside_vocabulary", {"d2t[39]", "target id 64", "[0, 64)"});
  expectRefused("t2d_disagrees", {"t2d", "marks 41 target ids", "40 draft ids"});
}

}  // namespace
}  // namespace dfi::engine
