// The `run` command line as parsed into evaluation settings: mode spellings, DDTree, block
// size, limit, thinking and shard, each refused with the option named.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <CLI/CLI.hpp>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/protocol/message_fields.h"
#include "run_options.h"

namespace fs = std::filesystem;
using namespace dfi;
using namespace dfi::eval;
using engine::EvaluationMode;

namespace {

const EnvLookup kNoEnv = [](const char*) -> std::optional<std::string> { return std::nullopt; };

// Parses `run` options as the command line would (the paths exist: CLI11 checks them).
engine::EvaluationSettings parse(std::vector<std::string> args, const EnvLookup& env = kNoEnv) {
  static const fs::path dir = [] {
    const fs::path d = fs::path(::testing::TempDir()) / "dfi_run_options";
    fs::create_directories(d / "target");
    fs::create_directories(d / "drafter");
    std::ofstream(d / "prompts.jsonl") << R"({"prompt": "hi"})" << "\n";
    return d;
  }();
  CLI::App app;
  RunOptions options;
  addRunOptions(app, options);
  std::vector<std::string> argv{"--target", (dir / "target").string(), "--drafter", (dir / "drafter").string(),
                                "--prompts", (dir / "prompts.jsonl").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last-first
  app.parse(argv);
  return options.toSettings(env);
}

std::string usageMessage(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

using Modes = std::vector<EvaluationMode>;

}  // namespace

TEST(RunOptions, ModeSpellings) {
  EXPECT_EQ(parse({}).modes, (Modes{EvaluationMode::Live, EvaluationMode::TeacherForced, EvaluationMode::DDTree}));
  EXPECT_EQ(parse({"--mode", "live"}).modes, (Modes{EvaluationMode::Live, EvaluationMode::DDTree}));
  EXPECT_EQ(parse({"--mode", "teacher", "--ddtree", "0"}).modes, (Modes{EvaluationMode::TeacherForced}));
  EXPECT_EQ(parse({"--mode", "teacher-forced,live", "--ddtree", "0"}).modes,
            (Modes{EvaluationMode::TeacherForced, EvaluationMode::Live}));
  EXPECT_EQ(parse({"--mode", "both", "--ddtree", "0"}).modes, (Modes{EvaluationMode::Live, EvaluationMode::TeacherForced}));
  const auto ddtree = parse({"--mode", "live", "--ddtree", "16"});
  EXPECT_EQ(ddtree.modes, (Modes{EvaluationMode::Live, EvaluationMode::DDTree}));
  EXPECT_EQ(ddtree.ddtreeBudget, 16);
  EXPECT_EQ(parse({"--ddtree-budget", "4"}).ddtreeBudget, 4);
  EXPECT_NE(usageMessage({"--mode", "greedy"}).find("--mode"), std::string::npos);
  EXPECT_NE(usageMessage({"--ddtree", "-1"}).find("--ddtree"), std::string::npos);
}

TEST(RunOptions, MaskVariantsRepeatOrComma) {
  EXPECT_EQ(parse({"--mask-variant", "reference", "--mask-variant", "anchor-visible"}).maskVariants.size(), 2u);
  EXPECT_EQ(parse({"--mask-variants", "reference,no-context,block-causal"}).maskVariants.size(), 3u);
  EXPECT_NE(usageMessage({"--mask-variant", "causal"}).find("--mask-variant"), std::string::npos);
}

TEST(RunOptions, BlockSizeBelowTwoIsRefused) {
  EXPECT_FALSE(parse({}).blockSize.has_value()) << "default: the checkpoint's";
  EXPECT_EQ(parse({"--block-size", "8"}).blockSize, 8);
  EXPECT_EQ(parse({"--block-size", "2"}).blockSize, 2);
  for (const char* n : {"1", "0", "-4"})
    EXPECT_NE(usageMessage({"--block-size", n}).find("--block-size"), std::string::npos) << n;
}

TEST(RunOptions, LimitAndThinking) {
  EXPECT_FALSE(parse({}).limit.has_value());
  EXPECT_EQ(parse({"--limit", "3"}).limit, 3);
  EXPECT_NE(usageMessage({"--limit", "0"}).find("--limit"), std::string::npos);
  EXPECT_FALSE(parse({}).enableThinking);
  EXPECT_TRUE(parse({"--thinking", "on"}).enableThinking);
  EXPECT_FALSE(parse({"--thinking", "off"}).enableThinking);
  EXPECT_TRUE(parse({"--enable-thinking"}).enableThinking) << "the older spelling";
  EXPECT_NE(usageMessage({"--thinking", "yes"}).find("--thinking"), std::string::npos);
  EXPECT_NE(usageMessage({"--thinking", "on", "--no-chat"}).find("--no-chat"), std::string::npos);
  EXPECT_TRUE(parse({"--skip-bad-prompts"}).skipBadPrompts);
}

TEST(RunOptions, StepCountingDefaultsToDflashAndNamesAWrongValue) {
  EXPECT_EQ(parse({}).stepCounting, engine::StepCounting::Dflash);
  EXPECT_EQ(parse({"--step-counting", "full-blocks"}).stepCounting, engine::StepCounting::FullBlocks);
  EXPECT_NE(usageMessage({"--step-counting", "full"}).find("--step-counting"), std::string::npos);
}

TEST(RunOptions, ShardFromLauncher) {
  const EnvLookup env = [](const char* name) -> std::optional<std::string> {
    const std::map<std::string, std::string> vars{{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}};
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const auto s = parse({"--shard", "auto"}, env);
  EXPECT_EQ(s.shardIndex, 2);
  EXPECT_EQ(s.shardCount, 4);
  EXPECT_EQ(parse({"--shard", "1/3"}).shardIndex, 1);
  EXPECT_NE(usageMessage({"--shard", "3/3"}).find("--shard"), std::string::npos);
}

// The GUI's request lists its modes: an unticked DDTree stays off whatever the budget.
TEST(RunOptions, RunRequestKeepsItsModes) {
  protocol::RunRequest request;
  request.target = "t";
  request.drafters = {"d"};
  request.prompts = "p";
  request.modes = {"live"};
  request.ddtreeBudget = 8;
  request.blockSize = 4;
  request.limit = 2;
  request.enableThinking = true;
  const auto s = RunOptions{request}.toSettings(kNoEnv);
  EXPECT_EQ(s.modes, (Modes{EvaluationMode::Live}));
  EXPECT_EQ(s.blockSize, 4);
  EXPECT_EQ(s.limit, 2);
  EXPECT_TRUE(s.enableThinking);
}

// What a run records as its settings is the run options' JSON: it reads back as the options
// (protocol::RunOptions, the GUI's request), and those give the same settings again.
TEST(RunOptions, RecordedSettingsAreTheRunOptions) {
  const engine::EvaluationSettings settings =
      parse({"--mode", "teacher,ddtree", "--mask-variant", "anchor-visible", "--anchors", "random:12:7",
             "--limit", "3", "--thinking", "on", "--block-size", "8", "--no-parity"});
  const auto recorded = fromJson<protocol::RunOptions>(nlohmann::json::parse(settings.toJson()), "settings_json");
  EXPECT_EQ(recorded.anchors, "random:12:7");
  EXPECT_EQ(recorded.limit, 3);
  EXPECT_TRUE(recorded.noParity);
  const engine::EvaluationSettings again = RunOptions{recorded}.toSettings(kNoEnv);
  EXPECT_EQ(again.toJson(), settings.toJson());
  EXPECT_EQ(again.modes, settings.modes);
  EXPECT_EQ(again.anchors.count, 12);
  EXPECT_EQ(again.anchors.seed, 7u);
  EXPECT_EQ(engine::anchorSelectionText(engine::parseAnchorSelection("every:4")), "every:4");
}
