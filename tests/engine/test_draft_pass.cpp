// dflash-eval draft's engine side (dfi/engine/draft_pass.h) on the drafter oracle's "live"
// fixture (a transformers-written Qwen3 target and a DFlash drafter): the file holds the
// documented tensors, the two paths agree under one mask, the parity check flags a training
// mask that differs from the inference one, and bad anchors or ids are refused by name.
// Read back through dfi_tensorfile only: this test needs no torch.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "dfi/base/error.h"
#include "dfi/engine/draft_pass.h"
#include "dfi/tensorfile/safetensors_file.h"

namespace {

namespace fs = std::filesystem;
using namespace dfi;
using dfi::analysis::MaskVariant;

const fs::path kLiveDir = fs::path(DFI_BINARY_DIR) / "tests/oracle/drafter/live";
const std::vector<std::int64_t> kIds{1, 4, 2, 7, 3, 9, 9, 0, 5, 6, 2, 8, 1, 1, 4, 12, 3, 5};
const std::vector<std::int64_t> kAnchors{11, 0, 5, 17};  // out of order on purpose

engine::DraftPassRequest request(const std::string& name, engine::DraftPath path) {
  engine::DraftPassRequest r;
  r.target = kLiveDir / "target";
  r.drafter = kLiveDir / "drafter";
  r.ids = kIds;
  r.anchors = kAnchors;
  r.path = path;
  r.out = fs::path(::testing::TempDir()) / ("dfi_draft_" + name + ".safetensors");
  return r;
}

std::vector<float> floats(const tensorfile::SafetensorsFile& file, const std::string& name) {
  const tensorfile::TensorView view = file.view(name);
  EXPECT_EQ(view.info().dtype, tensorfile::DType::F32) << name;
  std::vector<float> values(view.bytes().size() / sizeof(float));
  std::memcpy(values.data(), view.data(), view.bytes().size());
  return values;
}

std::vector<std::int64_t> shapeOf(const tensorfile::SafetensorsFile& file, const std::string& name) {
  return file.view(name).info().shape;
}

TEST(DraftPass, BothPathsWriteTheDocumentedTensorsAndAgree) {
  const auto req = request("both", engine::DraftPath::Both);
  const engine::DraftPassSummary summary = engine::runDraftPass(req);
  const auto file = tensorfile::SafetensorsFile::open(req.out);
  const auto n = static_cast<std::int64_t>(kAnchors.size()), t = static_cast<std::int64_t>(kIds.size());
  const std::int64_t b = summary.blockSize;
  const std::vector<std::int64_t> logitsShape = shapeOf(file, "inference.logits");
  ASSERT_EQ(logitsShape.size(), 3u);
  EXPECT_EQ(logitsShape[0], n);
  EXPECT_EQ(logitsShape[1], b - 1);
  EXPECT_EQ(shapeOf(file, "training.logits"), logitsShape);
  EXPECT_EQ(shapeOf(file, "input_ids"), (std::vector<std::int64_t>{t}));
  EXPECT_EQ(shapeOf(file, "anchors"), (std::vector<std::int64_t>{n}));
  const std::int64_t hidden = shapeOf(file, "context.fc").at(1);
  EXPECT_EQ(shapeOf(file, "context.hidden_norm"), (std::vector<std::int64_t>{t, hidden}));
  for (int l = 0; l < summary.layers; ++l)
    for (const std::string path : {"inference", "training"})
      EXPECT_EQ(shapeOf(file, path + ".layer." + std::to_string(l)), (std::vector<std::int64_t>{n, b, hidden}));

  // The parity figures, recomputed here from the two logits tensors in the file.
  const std::vector<float> inference = floats(file, "inference.logits"), training = floats(file, "training.logits");
  const std::vector<float> recorded = floats(file, "parity.max_abs_diff");
  const std::size_t perAnchor = inference.size() / static_cast<std::size_t>(n);
  ASSERT_EQ(summary.parity.size(), kAnchors.size());
  for (std::size_t j = 0; j < kAnchors.size(); ++j) {
    float worst = 0;
    for (std::size_t i = j * perAnchor; i < (j + 1) * perAnchor; ++i)
      worst = std::max(worst, std::abs(inference[i] - training[i]));
    EXPECT_FLOAT_EQ(recorded[j], worst) << "anchor " << kAnchors[j];
    EXPECT_LE(worst, 1e-4) << "anchor " << kAnchors[j];
    EXPECT_EQ(summary.parity[j].anchor, kAnchors[j]);
    EXPECT_FALSE(summary.parity[j].flagged) << "anchor " << kAnchors[j];
    EXPECT_EQ(summary.parity[j].firstDifferingSlot, -1);
  }
  EXPECT_EQ(file.metadata().at("mask_variant"), "reference");
}

TEST(DraftPass, ATrainingMaskOtherThanTheInferenceOneIsFlagged) {
  // The user story: a drafter evaluated with the reference mask against a training pipeline
  // whose mask let the block see the anchor's own context row.
  auto req = request("anchor_visible", engine::DraftPath::Both);
  req.trainingVariant = MaskVariant::AnchorVisible;
  const engine::DraftPassSummary summary = engine::runDraftPass(req);
  const auto flagged = std::count_if(summary.parity.begin(), summary.parity.end(),
                                     [](const engine::AnchorParity& p) { return p.flagged; });
  // Anchor 0 has no context row either way; every later anchor sees one more key in training.
  EXPECT_GE(flagged, static_cast<long>(kAnchors.size()) - 1);
  for (const auto& p : summary.parity) {
    if (p.anchor > 0) {
      EXPECT_GT(p.maxAbsDiff, 1e-3) << "anchor " << p.anchor;
    }
  }
  EXPECT_EQ(tensorfile::SafetensorsFile::open(req.out).metadata().at("training_mask_variant"), "anchor-visible");
}

TEST(DraftPass, OneForwardPerPathWhenOnlyOneIsAsked) {
  const auto req = request("training_only", engine::DraftPath::Training);
  engine::runDraftPass(req);
  const auto file = tensorfile::SafetensorsFile::open(req.out);
  EXPECT_NE(file.find("training.logits"), nullptr);
  EXPECT_EQ(file.find("inference.logits"), nullptr);
  EXPECT_EQ(file.find("parity.max_abs_diff"), nullptr);
}

TEST(DraftPass, BadAnchorsAndIdsAreRefusedByName) {
  auto req = request("bad_anchor", engine::DraftPath::Inference);
  req.anchors = {3, static_cast<std::int64_t>(kIds.size())};
  try {
    engine::runDraftPass(req);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.context().item, "anchors");
    EXPECT_NE(std::string(e.what()).find("outside the sequence"), std::string::npos) << e.what();
  }
  req = request("bad_id", engine::DraftPath::Inference);
  req.ids[2] = 100000;
  try {
    engine::runDraftPass(req);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.context().item, "ids");
    EXPECT_NE(std::string(e.what()).find("position 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(engine::parseDraftPath("train"), UsageError);
}

}  // namespace
