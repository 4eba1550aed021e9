// DSpark drafters (speculators 0.9.0's DSparkDraftModel, tests/oracle/gen_speculators.py's
// dspark_* cases: each Markov head type, the confidence head with and without the Markov input
// and off, sample_from_anchor both ways, reduced and full vocabularies), built and saved by the
// package itself. Held to the package's own forward at the same anchors (fp32, within 1e-4):
// the backbone's logits of the drafted rows, the logits after the Markov bias (each slot's
// previous token the sequence's, as the package trains), and the confidence head's output; the
// engine's teacher-forced acceptance per block equal to the package's compute_accepted_length_counts
// where the package's draft-id argmax can agree with the verifier's; a live loop lossless.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "dfi/analysis/ddtree.h"
#include "dfi/analysis/position_metrics.h"
#include "dfi/base/error.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "evaluation/diagnosis/diagnosis_battery.h"
#include "evaluation/diagnosis/hypotheses.h"
#include "evaluation/evaluation_models.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/live/draft_distribution.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "models/dflash_drafter.h"
#include "models/dflash_weights.h"
#include "models/dspark_heads.h"
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
const char* const kCases[] = {"dspark_vanilla", "dspark_gated", "dspark_rnn", "dspark_rnn_anchor", "dspark_sliding"};

// The drafter as the package trained it: a sliding window counted from the anchor (diagnose's
// window-from:anchor; served, it counts back from each slot, test_speculators_drafters shows the
// difference).
std::unique_ptr<DFlashDrafter> asTrained(const std::filesystem::path& dir, const TargetModel& target) {
  const DrafterFiles files = openDrafter(dir, target.config().numHiddenLayers);
  if (std::ranges::count(files.config.layerTypes, modelspec::LayerType::SlidingAttention) == 0)
    return loadDrafter(dir, target);
  return variantDrafter({.kind = Hypothesis::Kind::WindowFrom, .fromAnchor = true}, files, target);
}

struct DsparkCase {
  explicit DsparkCase(const std::string& name)
      : name(name),
        dir(kDir / name),
        reference(tensorfile::SafetensorsFile::open(dir / "reference.safetensors")),
        target(TargetModel::load(dir / "target", ModelOptions{})),
        drafter(asTrained(dir / "drafter", *target)),
        ids(toVector(referenceTensor(reference, "input_ids"))),
        anchors(toVector(referenceTensor(reference, "anchors"))),
        sequence(sequenceFeatures(*target, *drafter, ids)) {}

  std::int64_t n() const { return static_cast<std::int64_t>(anchors.size()); }
  // The package's rows [N*B, Vd] of `name`, as [N, g, Vt] over target ids (-inf where the
  // draft vocabulary has no id): the drafted rows only.
  at::Tensor packageDrafted(const char* tensor) const {
    const int b = drafter->blockSize(), g = drafter->draftsPerBlock();
    const at::Tensor rows = referenceTensor(reference, tensor);
    const at::Tensor drafted = rows.view({n(), b, rows.size(-1)}).narrow(1, b - g, g);
    if (!reference.find("draft_to_target")) return drafted;
    at::Tensor out = at::full({n(), g, drafter->config().vocabSize}, -INFINITY, at::kFloat);
    out.index_copy_(2, referenceTensor(reference, "draft_to_target").to(at::kLong), drafted);
    return out;
  }

  std::string name;
  std::filesystem::path dir;
  tensorfile::SafetensorsFile reference;
  std::unique_ptr<TargetModel> target;
  std::unique_ptr<DFlashDrafter> drafter;
  std::vector<std::int64_t> ids, anchors;
  SequenceFeatures sequence;
};

// Max |a - b| where both are finite, and whether they are -inf at the same ids.
double finiteDiff(const at::Tensor& a, const at::Tensor& b) {
  EXPECT_TRUE(at::equal(at::isinf(a), at::isinf(b)));
  const at::Tensor finite = at::isfinite(a) & at::isfinite(b);
  return maxAbsDiff(a.masked_select(finite), b.masked_select(finite));
}

TEST(DsparkDrafter, ConfigReadsTheHeads) {
  const DsparkCase rnn("dspark_rnn");
  const modelspec::DrafterConfig& c = rnn.drafter->config();
  ASSERT_TRUE(c.dspark.has_value());
  EXPECT_EQ(c.dspark->markovRank, 6);
  EXPECT_EQ(c.dspark->markovHeadType, modelspec::MarkovHeadType::Rnn);
  EXPECT_TRUE(c.dspark->confidenceHead && c.dspark->confidenceWithMarkov);
  EXPECT_FALSE(c.sampleFromAnchor);
  EXPECT_EQ(c.draftsPerBlock(), 5);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front().field << ": " << c.warnings.front().message;
  const DsparkCase anchor("dspark_rnn_anchor");
  EXPECT_TRUE(anchor.drafter->config().sampleFromAnchor);
  EXPECT_EQ(anchor.drafter->config().draftsPerBlock(), 6);  // speculative_tokens 6: no warning
  EXPECT_TRUE(anchor.drafter->config().warnings.empty());
  EXPECT_FALSE(anchor.drafter->config().dspark->confidenceHead);
}

TEST(DsparkDrafter, LogitsBiasAndConfidenceAreThePackages) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const DsparkCase c(name);
    const std::optional<DsparkHeads> heads = c.drafter->dsparkHeads();
    ASSERT_TRUE(heads.has_value());
    const int b = c.drafter->blockSize(), g = c.drafter->draftsPerBlock();
    std::vector<at::Tensor> backbone, biased;
    std::vector<float> confidence;
    DrafterProbes probes{.wantLayerOutputs = true};
    c.drafter->teacherForcedChunks(
        c.sequence.features, c.sequence.ids, c.anchors, analysis::MaskVariant::Reference, 0,
        [&](std::size_t, const at::Tensor& logits, const at::Tensor& blockStates) {
          for (std::int64_t j = 0; j < logits.size(0); ++j) {
            const std::int64_t anchor = c.anchors[static_cast<std::size_t>(j)];
            // The package's previous tokens: the sequence's.
            const std::vector<std::int64_t> text(c.ids.begin() + anchor + 1, c.ids.begin() + anchor + 1 + g);
            const DsparkPath path = heads->run(blockStates[j], logits[j], c.ids[static_cast<std::size_t>(anchor)],
                                               DsparkHeads::greedy(), text);
            backbone.push_back(logits[j].clone());
            biased.push_back(path.logits);
            confidence.insert(confidence.end(), path.confidence.begin(), path.confidence.end());
          }
        },
        &probes);
    const double layersDiff = layerOutputsDiff(probes.layerOutputs, c.reference);
    EXPECT_LE(layersDiff, kTolerance);
    const double backboneDiff = finiteDiff(at::stack(backbone), c.packageDrafted("logits").view({c.n(), g, -1}));
    const double biasedDiff = finiteDiff(at::stack(biased), c.packageDrafted("markov_logits"));
    EXPECT_LE(backboneDiff, kTolerance);
    EXPECT_LE(biasedDiff, kTolerance);
    double confidenceDiff = 0;
    if (c.reference.find("confidence")) {
      const at::Tensor package =
          at::sigmoid(referenceTensor(c.reference, "confidence").view({c.n(), b}).narrow(1, b - g, g)).reshape(-1);
      ASSERT_EQ(static_cast<std::int64_t>(confidence.size()), package.numel());
      confidenceDiff = maxAbsDiff(at::tensor(confidence), package);
      EXPECT_LE(confidenceDiff, kTolerance);
    } else {
      EXPECT_TRUE(confidence.empty());
    }
    std::cout << name << ": layers " << layersDiff << ", backbone " << backboneDiff << ", after the Markov bias " << biasedDiff
              << ", confidence " << confidenceDiff << "\n";
  }
}

TEST(DsparkDrafter, TeacherForcedAcceptanceIsThePackagesPerBlock) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const DsparkCase c(name);
    const std::vector<session::StepRecord> steps =
        teacherForcedSteps(c.sequence, *c.drafter, c.anchors, analysis::MaskVariant::Reference, 0);
    const at::Tensor perBlock = referenceTensor(c.reference, "eal_per_block");
    const std::vector<std::int64_t> comparable = toVector(referenceTensor(c.reference, "target_in_draft_vocab"));
    ASSERT_EQ(steps.size(), c.anchors.size());
    int compared = 0, longest = 0;
    for (std::size_t j = 0; j < steps.size(); ++j) {
      EXPECT_EQ(static_cast<int>(steps[j].draftTokens.size()), c.drafter->draftsPerBlock());
      EXPECT_EQ(steps[j].draftConfidence.size(),
                c.drafter->config().dspark->confidenceHead ? steps[j].draftTokens.size() : 0u);
      longest = std::max(longest, steps[j].acceptLength());
      if (!comparable[j]) continue;
      ++compared;
      EXPECT_EQ(steps[j].acceptLength(), static_cast<int>(perBlock[static_cast<std::int64_t>(j)].item<float>()))
          << "block " << j << " at anchor " << c.anchors[j];
    }
    if (!c.reference.find("draft_to_target")) {  // every block comparable: the package's eal too
      double sum = 0;
      for (const session::StepRecord& s : steps) sum += s.acceptLength();
      EXPECT_EQ(sum, referenceTensor(c.reference, "eal_sum").item<float>());
      EXPECT_EQ(static_cast<double>(steps.size()), referenceTensor(c.reference, "eal_total").item<float>());
    }
    std::cout << name << ": " << compared << " of " << steps.size() << " blocks compared, longest acceptance "
              << longest << "\n";
  }
}

// speculators' analytic accept_len (what its training log reports): per block 1 plus the running
// products of the slots' 1 - TV. Over the full vocabulary the engine's recorded slot_overlap
// gives the package's figure block for block, and the positions section's mean its metrics
// dict's. With a reduced draft vocabulary the package renormalizes the verifier's distribution
// over the draft ids, which can only raise a slot's overlap: the engine's, over the target's
// whole vocabulary (what sampling would accept), is below it.
TEST(DsparkDrafter, AnalyticAcceptLengthIsThePackagesAcceptLen) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const DsparkCase c(name);
    const bool reduced = c.reference.find("draft_to_target") != nullptr;
    const std::vector<session::StepRecord> steps =
        teacherForcedSteps(c.sequence, *c.drafter, c.anchors, analysis::MaskVariant::Reference, 0);
    const at::Tensor package = referenceTensor(c.reference, "accept_len_per_block");
    ASSERT_EQ(package.numel(), static_cast<std::int64_t>(steps.size()));
    session::RunRecord run;
    run.blockSize = c.drafter->blockSize();
    analysis::PositionTally tally(run);
    double worst = 0, engineSum = 0, packageSum = 0;
    for (std::size_t j = 0; j < steps.size(); ++j) {
      ASSERT_EQ(static_cast<int>(steps[j].slotOverlap.size()), c.drafter->draftsPerBlock());
      const double engine = *analysis::analyticAcceptLength(steps[j]);
      const double expected = package[static_cast<std::int64_t>(j)].item<float>();
      engineSum += engine;
      packageSum += expected;
      if (reduced)
        EXPECT_LE(engine, expected + 1e-5) << "block " << j;
      else
        worst = std::max(worst, std::abs(engine - expected));
      tally.add(steps[j]);
    }
    const std::vector<analysis::PositionMetrics> metrics = tally.finish();
    ASSERT_EQ(metrics.size(), 1u);
    ASSERT_TRUE(metrics[0].analyticAcceptLength.has_value());
    const double mean = metrics[0].analyticAcceptLength->estimate;
    const double packageMean = referenceTensor(c.reference, "accept_len_sum").item<float>() /
                               referenceTensor(c.reference, "accept_len_total").item<float>();
    if (reduced) {
      EXPECT_LT(engineSum, packageSum - 0.05 * static_cast<double>(steps.size()));  // the draft vocabulary's missing mass
    } else {
      EXPECT_LE(worst, kTolerance);
      EXPECT_NEAR(mean, packageMean, kTolerance);
    }
    std::cout << name << ": analytic accept_len " << mean << ", the package's " << packageMean
              << (reduced ? " (over the draft vocabulary)" : "") << ", largest block difference " << worst << "\n";
  }
}

TEST(DsparkDrafter, LiveLoopIsLosslessGreedyAndRecordsConfidence) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const DsparkCase c(name);
    const std::size_t promptLength = 6;
    const std::vector<std::int64_t> prompt(c.ids.begin(), c.ids.begin() + promptLength);
    SpeculativeOptions options;
    options.maxNewTokens = static_cast<int>(c.ids.size() - promptLength);
    options.counting = StepCounting::FullBlocks;
    const SpeculativeResult result = speculativeDecode(*c.target, *c.drafter, prompt, options);
    ASSERT_GE(result.tokens.size(), c.ids.size());
    EXPECT_EQ(std::vector<std::int64_t>(result.tokens.begin(), result.tokens.begin() + c.ids.size()), c.ids);
    for (const session::StepRecord& step : result.steps) {
      EXPECT_EQ(static_cast<int>(step.draftTokens.size()), c.drafter->draftsPerBlock());
      EXPECT_LE(step.acceptedCount, c.drafter->draftsPerBlock());
      for (float confidence : step.draftConfidence) EXPECT_TRUE(confidence > 0 && confidence < 1);
    }
    std::cout << name << ": live " << result.steps.size() << " steps, tau " << result.meanAcceptLength() << "\n";
  }
}

// DDTree through the heads (DsparkHeads::tree; no published code to hold it to): every node's
// weight is its parent's plus its log-probability among its parent's children, its first branch
// is the greedy chain the heads draft, each node of it weighted by the chain's own biased
// distribution (the rnn state carried down that path), and with the Markov bias zeroed it is the
// factorised DDTree over the backbone's top-k (analysis::buildDDTree, held to the authors' code
// elsewhere).
// The evaluation's DDTree run takes these trees.
TEST(DsparkDrafter, TreesThroughTheHeads) {
  constexpr int kBudget = 8;
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const DsparkCase c(name);
    const std::optional<DsparkHeads> heads = c.drafter->dsparkHeads();
    DrafterWeights zeroed = loadDrafterWeights(c.dir / "drafter", c.drafter->config(), c.target->config().hiddenSize,
                                               at::kFloat, at::kCPU);
    zeroed.dspark->markovW2 = at::zeros_like(zeroed.dspark->markovW2);  // the loaded one maps the file read-only
    const DsparkHeads unbiased(*zeroed.dspark, *c.drafter->config().dspark,
                               zeroed.vocabulary ? &*zeroed.vocabulary : nullptr);
    int branches = 0;
    c.drafter->teacherForcedChunks(
        c.sequence.features, c.sequence.ids, c.anchors, analysis::MaskVariant::Reference, 0,
        [&](std::size_t first, const at::Tensor& logits, const at::Tensor& blockStates) {
          for (std::int64_t j = 0; j < logits.size(0); ++j) {
            const std::int64_t anchor = c.ids[static_cast<std::size_t>(c.anchors[first + static_cast<std::size_t>(j)])];
            const analysis::DDTree tree = heads->tree(blockStates[j], logits[j], anchor, kBudget, kBudget);
            ASSERT_EQ(static_cast<int>(tree.size()), kBudget + 1);
            // The rank-0 children from the root: the greedy chain, as deep as the tree reaches.
            const DsparkPath chain = heads->run(blockStates[j], logits[j], anchor, DsparkHeads::greedy());
            std::int32_t node = 0;
            for (std::size_t depth = 0; depth < chain.tokens.size(); ++depth) {
              std::int32_t next = -1;
              for (std::size_t i = 1; i < tree.size(); ++i)
                if (tree.parents[i] == node && tree.ranks[i] == 0) next = static_cast<std::int32_t>(i);
              if (next < 0) break;
              EXPECT_EQ(tree.tokens[static_cast<std::size_t>(next)], chain.tokens[depth]) << "depth " << depth;
              // Its probability under the chain's own biased distribution (the rnn state of that path).
              const double logP = at::log_softmax(chain.logits[static_cast<std::int64_t>(depth)].to(at::kFloat), -1)
                                      [chain.tokens[depth]]
                                          .item<double>();
              EXPECT_NEAR(tree.logWeights[static_cast<std::size_t>(next)] - tree.logWeights[static_cast<std::size_t>(node)],
                          logP, 1e-5)
                  << "depth " << depth;
              node = next;
            }
            branches += node > 0;
            for (std::size_t i = 1; i < tree.size(); ++i)
              EXPECT_LE(tree.logWeights[i], tree.logWeights[static_cast<std::size_t>(tree.parents[i])]);
            // Zero bias: the factorised tree over the backbone's own top-k.
            std::vector<analysis::SlotTopK> slots(static_cast<std::size_t>(logits.size(1)));
            for (std::size_t slot = 0; slot < slots.size(); ++slot) {
              std::vector<float> probs;
              fillTopK(logits[j][static_cast<std::int64_t>(slot)].unsqueeze(0), kBudget, slots[slot].tokens, probs);
              for (float p : probs) slots[slot].logProbs.push_back(std::log(p));
            }
            const analysis::DDTree factorised = analysis::buildDDTree(slots, kBudget, static_cast<std::int32_t>(anchor));
            const analysis::DDTree plain = unbiased.tree(blockStates[j], logits[j], anchor, kBudget, kBudget);
            EXPECT_EQ(plain.tokens, factorised.tokens);
            EXPECT_EQ(plain.parents, factorised.parents);
          }
        });
    EXPECT_EQ(branches, static_cast<int>(c.anchors.size()));
  }
}

TEST(DsparkDrafter, SampledLiveLoopRecordsTheBiasedDistribution) {
  const DsparkCase c("dspark_vanilla");
  const std::vector<std::int64_t> prompt(c.ids.begin(), c.ids.begin() + 6);
  SpeculativeOptions options;
  options.maxNewTokens = 24;
  options.sampling.temperature = 1.0;
  options.sampling.seed = 7;
  const SpeculativeResult result = speculativeDecode(*c.target, *c.drafter, prompt, options);
  ASSERT_FALSE(result.steps.empty());
  for (const session::StepRecord& step : result.steps) {
    ASSERT_EQ(step.draftProbs.size(), step.draftTokens.size());
    // A draft outside the draft vocabulary has probability zero: never drawn.
    for (float q : step.draftProbs) EXPECT_GT(q, 0.0f);
  }
}

// A diagnosis's early-stopping teacher forcing takes the backbone's argmax; a DSpark drafter's
// drafts come from its heads, so it takes the full forward.
TEST(DsparkDrafter, DiagnosisDraftsThroughTheHeads) {
  const DsparkCase c("dspark_vanilla");
  EXPECT_FALSE(c.drafter->draftsStopAtRejection());
  const std::vector<session::StepRecord> full =
      teacherForcedSteps(c.sequence, *c.drafter, c.anchors, analysis::MaskVariant::Reference, 0);
  const std::vector<session::StepRecord> stopping =
      stepsUntilRejected(c.sequence, *c.drafter, c.anchors, analysis::MaskVariant::Reference);
  ASSERT_EQ(full.size(), stopping.size());
  for (std::size_t j = 0; j < full.size(); ++j) EXPECT_EQ(full[j].acceptLength(), stopping[j].acceptLength());
}

// diagnose's sample-from-anchor:<on|off>: the same checkpoint with the field read the other way.
// Off on a drafter that samples from the anchor drafts slots 1..B-1 only: the package's backbone
// rows 1..B-1. The battery plans it for speculators drafters, flipped from what the config says.
TEST(DsparkDrafter, SampleFromAnchorHypothesisReadsTheFieldTheOtherWay) {
  const DsparkCase c("dspark_vanilla");
  const DrafterFiles files = openDrafter(c.dir / "drafter", c.target->config().numHiddenLayers);
  const auto off = variantDrafter({.kind = Hypothesis::Kind::SampleFromAnchor, .fromAnchor = false}, files, *c.target);
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(off->draftsPerBlock(), 5);
  const int b = c.drafter->blockSize();
  const at::Tensor rows = referenceTensor(c.reference, "logits");
  const at::Tensor slotsOneOn = rows.view({c.n(), b, rows.size(-1)}).narrow(1, 1, b - 1);
  const at::Tensor engine = off->teacherForced(c.sequence.features, c.sequence.ids, c.anchors)
                                .index_select(-1, referenceTensor(c.reference, "draft_to_target").to(at::kLong));
  EXPECT_LE(maxAbsDiff(engine, slotsOneOn), kTolerance);

  const DiagnosisSettings settings;
  const std::optional<tokenizer::Tokenizer> noTokenizer;
  const std::vector<PromptSpec> noPrompts;
  bool planned = false;
  for (const Hypothesis& h : planHypotheses({settings, files.config, c.target->config(), noTokenizer, noPrompts}))
    if (h.kind == Hypothesis::Kind::SampleFromAnchor) {
      planned = true;
      EXPECT_TRUE(h.planned.applicable);
      EXPECT_EQ(h.planned.name, "sample-from-anchor:off");
    }
  EXPECT_TRUE(planned);
}

// A config whose markov_rank disagrees with the saved head: refused before a forward, naming the
// directory, the tensor and both shapes.
TEST(DsparkDrafter, MarkovHeadShapeAgainstMarkovRankIsRefusedByName) {
  const std::filesystem::path source = kDir / "dspark_gated" / "drafter";
  // One directory per process: the ATen-path run of this binary may run beside it.
  const std::filesystem::path bad =
      std::filesystem::temp_directory_path() / ("dfi_dspark_rank_mismatch_" + std::to_string(::getpid()));
  std::filesystem::create_directories(bad);
  std::filesystem::copy_file(source / "model.safetensors", bad / "model.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(source / "config.json"));
  config["markov_rank"] = 5;  // the head was saved with rank 8
  std::ofstream(bad / "config.json") << config.dump();
  const auto target = TargetModel::load(kDir / "dspark_gated" / "target", ModelOptions{});
  try {
    loadDrafter(bad, *target);
    ADD_FAILURE() << "loaded";
  } catch (const ValidationError& e) {
    const std::string what = e.what();
    for (const std::string& fragment : {bad.string(), std::string("markov_head.markov_w1.weight"), std::string("[64, 5]"),
                                       std::string("[64, 8]")})
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
  std::filesystem::remove_all(bad);
}

}  // namespace
}  // namespace dfi::engine
