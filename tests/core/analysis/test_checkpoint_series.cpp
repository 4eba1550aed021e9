// Checkpoint discovery in the folder layouts the training packages write (checkpoint_series.h),
// on copies of the demo's good drafter: steps from names, descriptive links and trainer state,
// aliases dropped, SpecForge's training state and half-written checkpoints listed but not
// loadable, and the errors that name the folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "dfi/analysis/checkpoint_series.h"
#include "dfi/analysis/series_summary.h"
#include "dfi/analysis/training_log.h"
#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {
namespace fs = std::filesystem;

const fs::path kDrafter = fs::path(DFI_SOURCE_DIR) / "resources/demo/drafter-good";

class CheckpointSeries : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("dfi-series-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path drafter(const std::string& name) {
    fs::copy(kDrafter, root_ / name, fs::copy_options::recursive);
    return root_ / name;
  }
  void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

  fs::path root_;
};

TEST(StepFromName, ReadsEachPackagesNaming) {
  EXPECT_EQ(stepFromName("step40000"), 40000);
  EXPECT_EQ(stepFromName("run1-step40000"), 40000);         // SpecForge
  EXPECT_EQ(stepFromName("epoch0_step16626"), 16626);       // speculators' descriptive link
  EXPECT_EQ(stepFromName("checkpoint-500"), 500);           // Hugging Face Trainer
  EXPECT_EQ(stepFromName("step_40k"), 40000);
  EXPECT_EQ(stepFromName("ckpt-2.5m"), 2500000);
  EXPECT_EQ(stepFromName("STEP12"), 12);
  EXPECT_EQ(stepFromName("run-step3-step7"), 7);            // the last marker names the step
}

TEST(StepFromName, RefusesWhatIsNoStep) {
  EXPECT_EQ(stepFromName("final"), std::nullopt);
  EXPECT_EQ(stepFromName("step"), std::nullopt);
  EXPECT_EQ(stepFromName("stepping"), std::nullopt);
  EXPECT_EQ(stepFromName("step1.5"), std::nullopt);   // not a whole number of steps
  EXPECT_EQ(stepFromName("step40kb"), std::nullopt);
  EXPECT_EQ(stepFromName("0"), std::nullopt);         // an epoch number is not a step
  EXPECT_EQ(stepFromName("step99999999999999999999"), std::nullopt);
}

TEST_F(CheckpointSeries, SpecForgeLayoutInStepOrderWithItsTrainingStateExplained) {
  drafter("run1-step5000");
  drafter("run1-step1000");
  fs::create_directories(root_ / "run1-step3000");
  write(root_ / "run1-step3000/training_state.pt", "not a drafter");
  fs::create_directory_symlink(root_ / "run1-step5000", root_ / "run1-latest");  // an alias
  fs::create_directories(root_ / "runs/Dec01");                                  // the trainer's logs
  write(root_ / "runs/Dec01/events.out.tfevents.1.host", "");

  const auto series = discoverCheckpoints(root_);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].dir.filename(), "run1-step1000");
  EXPECT_EQ(series[0].step, 1000);
  EXPECT_EQ(series[0].stepSource, "name");
  EXPECT_EQ(checkpointProblem(series[0].dir), "");
  EXPECT_EQ(series[1].step, 3000);
  const std::string problem1 = checkpointProblem(series[1].dir);
  EXPECT_NE(problem1, "");
  EXPECT_NE(problem1.find("specforge.export.to_hf"), std::string::npos) << problem1;
  EXPECT_EQ(series[2].dir.filename(), "run1-step5000");
  EXPECT_EQ(checkpointProblem(series[2].dir), "");
}

TEST_F(CheckpointSeries, SpeculatorsEpochFoldersTakeTheirStepFromTheDescriptiveLinks) {
  drafter("0");
  drafter("1");
  fs::create_directory_symlink(root_ / "0", root_ / "epoch0_step16626");
  fs::create_directory_symlink(root_ / "1", root_ / "epoch1_step33252");
  fs::create_directory_symlink(root_ / "1", root_ / "checkpoint_best");

  const auto series = discoverCheckpoints(root_);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].dir.filename(), "0");
  EXPECT_EQ(series[0].step, 16626);
  EXPECT_EQ(series[0].stepSource, "link epoch0_step16626");
  EXPECT_EQ(series[1].dir.filename(), "1");
  EXPECT_EQ(series[1].step, 33252);
}

TEST_F(CheckpointSeries, EpochFoldersWithoutLinksAreOrderedByEpoch) {
  drafter("2");
  drafter("10");
  const auto series = discoverCheckpoints(root_);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].step, 2);
  EXPECT_EQ(series[1].step, 10);
  EXPECT_EQ(series[1].stepSource, "epoch number");
}

TEST_F(CheckpointSeries, TrainerStateGlobalStepWinsOverTheName) {
  const fs::path dir = drafter("checkpoint-500");
  write(dir / "trainer_state.json", R"({"global_step": 512, "log_history": []})");
  drafter("final");  // a drafter folder without a step is not part of the series
  const auto series = discoverCheckpoints(root_);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].step, 512);
  EXPECT_EQ(series[0].stepSource, "trainer_state.json");
}

TEST_F(CheckpointSeries, HalfWrittenCheckpointsAreListedNotLoadable) {
  const fs::path cut = drafter("step2000");
  const fs::path weights = cut / "model.safetensors";
  ASSERT_TRUE(fs::exists(weights));
  fs::resize_file(weights, fs::file_size(weights) / 2);
  const fs::path config = drafter("step3000");
  write(config / "config.json", R"({"architectures": ["DFlashDraftModel"], )");  // the trainer is mid-write

  const auto series = discoverCheckpoints(root_);
  ASSERT_EQ(series.size(), 2u);
  const std::string problem0 = checkpointProblem(series[0].dir);
  EXPECT_NE(problem0, "");
  EXPECT_NE(problem0.find("model.safetensors"), std::string::npos) << problem0;
  const std::string problem1 = checkpointProblem(series[1].dir);
  EXPECT_NE(problem1, "");
  EXPECT_NE(problem1.find("config.json"), std::string::npos) << problem1;
  EXPECT_TRUE(checkpointProblem(kDrafter).empty());
}

TEST_F(CheckpointSeries, AFolderWithoutCheckpointsIsRefusedByName) {
  fs::create_directories(root_ / "logs");
  try {
    discoverCheckpoints(root_);
    FAIL() << "no error";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find(root_.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(discoverCheckpoints(root_ / "missing"), IoError);
}

// speculators logs eal and, beside it, its analytic accept_len (at T=1, the bonus counted);
// SpecForge logs accept_len as greedy accepted drafts. The same name never reads as the other's.
TEST(TrainingLogTags, SpeculatorsAcceptLenIsTheAnalyticOneNeverSpecForges) {
  TrainingLog speculators;
  speculators.scalars["eal"] = {{100, 3.5, 0}};
  speculators.scalars["accept_len"] = {{100, 2.25, 0}};
  ASSERT_TRUE(loggedAcceptance(speculators).has_value());
  EXPECT_EQ(loggedAcceptance(speculators)->tag, "eal");  // not accept_len + 1
  ASSERT_TRUE(loggedAnalyticAcceptance(speculators).has_value());
  EXPECT_EQ(loggedAnalyticAcceptance(speculators)->tag, "accept_len");
  EXPECT_EQ(loggedAnalyticAcceptance(speculators)->toTau, 0);
  TrainingLog specforge;
  specforge.scalars["train/accept_len"] = {{100, 2.5, 0}};
  EXPECT_EQ(loggedAcceptance(specforge)->toTau, 1);
  EXPECT_FALSE(loggedAnalyticAcceptance(specforge).has_value());
}

// The series puts each checkpoint's analytic accept_len beside the one speculators logged at its
// step, and the gap between them.
TEST(SeriesSummary, AnalyticAcceptLengthBesideTheLoggedOne) {
  auto run = [](const std::string& drafter, std::vector<int> lengths) {
    SummaryRun r{.drafter = drafter, .mode = "teacher-forced", .variant = "reference"};
    r.responses.push_back({.promptId = 0, .dataset = "p", .acceptance = {.stepAcceptLengths = std::move(lengths)}});
    return r;
  };
  const std::vector<SummaryRun> runs{run("ckpt-1000", {2, 3}), run("ckpt-2000", {4, 4})};
  const std::vector<SeriesMember> members{
      {.drafter = "ckpt-2000", .step = 2000, .blockSize = 4, .analytic = Interval{1.75, 1.5, 2.0}},
      {.drafter = "ckpt-1000", .step = 1000, .blockSize = 4, .analytic = Interval{1.25, 1.0, 1.5}}};
  TrainingLog log;
  log.scalars["train/eal"] = {{1000, 2.5, 0}, {2000, 4.0, 0}};
  log.scalars["train/accept_len"] = {{1000, 1.5, 0}, {2000, 1.625, 0}};
  const SeriesSummary series = summarizeSeries(runs, members, &log);
  ASSERT_EQ(series.points.size(), 2u);
  EXPECT_EQ(series.logTag->tag, "train/eal");
  EXPECT_EQ(series.analyticLogTag->tag, "train/accept_len");
  EXPECT_DOUBLE_EQ(*series.points[0].logged, 2.5);
  EXPECT_DOUBLE_EQ(series.points[0].analytic->estimate, 1.25);
  EXPECT_DOUBLE_EQ(*series.points[0].loggedAnalytic, 1.5);
  EXPECT_DOUBLE_EQ(*series.points[0].analyticGap(), -0.25);
  EXPECT_DOUBLE_EQ(*series.points[1].analyticGap(), 0.125);
  const std::string text = formatSeries(series);
  EXPECT_NE(text.find("at T=1: the analytic accept_len measured here"), std::string::npos) << text;
  EXPECT_NE(text.find("-0.250"), std::string::npos) << text;
  EXPECT_EQ(seriesJson(series)["points"][1]["logged_analytic"], 1.625);
}

}  // namespace
}  // namespace dfi::analysis
