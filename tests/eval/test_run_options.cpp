// The `run` command line as parsed into the settings vocabulary: mode spellings, DDTree, block
// size, limit, thinking and shard, each refused with the option named.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <CLI/CLI.hpp>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/protocol/message_fields.h"
#include "dfi/settings/settings_fields.h"
#include "run_options.h"

namespace fs = std::filesystem;
using namespace dfi;
using namespace dfi::eval;
using settings::EvaluationMode;

namespace {

const EnvLookup kNoEnv = [](const char*) -> std::optional<std::string> { return std::nullopt; };

// Parses `run` options as the command line would (the paths exist: CLI11 checks them).
settings::RunSettings parse(std::vector<std::string> args, const EnvLookup& env = kNoEnv) {
  static const fs::path dir = [] {
    const fs::path d = fs::path(::testing::TempDir()) / "dfi_run_options";
    fs::create_directories(d / "target");
    fs::create_directories(d / "drafter");
    std::ofstream(d / "prompts.jsonl") << R"({"prompt": "hi"})" << "\n";
    return d;
  }();
  CLI::App app;
  RunCommandLine options;
  addRunOptions(app, options);
  std::vector<std::string> argv{"--target", (dir / "target").string(), "--drafter", (dir / "drafter").string(),
                                "--prompts", (dir / "prompts.jsonl").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last-first
  app.parse(argv);
  return options.resolve(env);
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
  EXPECT_EQ(parse({}).stepCounting, settings::StepCounting::Dflash);
  EXPECT_EQ(parse({"--step-counting", "full-blocks"}).stepCounting, settings::StepCounting::FullBlocks);
  EXPECT_NE(usageMessage({"--step-counting", "full"}).find("--step-counting"), std::string::npos);
}

TEST(RunOptions, ShardFromLauncher) {
  const EnvLookup env = [](const char* name) -> std::optional<std::string> {
    const std::map<std::string, std::string> vars{{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}};
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const auto s = parse({"--shard", "auto"}, env);
  EXPECT_EQ(s.shard, (settings::Shard{2, 4}));
  EXPECT_EQ(parse({"--shard", "1/3"}).shard.index, 1);
  EXPECT_NE(usageMessage({"--shard", "3/3"}).find("--shard"), std::string::npos);
}

// What a run records as its settings is the settings' JSON: it reads back as the same settings,
// the "run" request's payload, with the command line's spellings resolved.
TEST(RunOptions, RecordedSettingsReadBackAsTheSettings) {
  const settings::RunSettings settings =
      parse({"--mode", "teacher,ddtree", "--mask-variant", "anchor-visible", "--anchors", "random:12:7",
             "--limit", "3", "--thinking", "on", "--block-size", "8", "--no-parity", "--seed", "5"});
  const nlohmann::json recorded = nlohmann::json::parse(settings::settingsJson(settings));
  EXPECT_EQ(recorded.at("anchors"), "random:12:7");
  EXPECT_EQ(recorded.at("limit"), 3);
  EXPECT_EQ(recorded.at("no_parity"), true);
  EXPECT_EQ(recorded.at("modes"), (nlohmann::json{"teacher-forced", "ddtree"}));
  const settings::RunSettings again = settings::recordedRunSettings(settings::settingsJson(settings));
  EXPECT_EQ(again, settings);
  EXPECT_EQ(again.anchors.count, 12);
  EXPECT_EQ(again.anchors.seed, 7u);
  EXPECT_EQ(again.sampling.seed, 5u);
  // The "run" request carries the same fields next to its id.
  protocol::RunRequest request{settings};
  request.requestId = 3;
  const auto decoded = std::get<protocol::RunRequest>(protocol::decodeRequest(protocol::encodeMessage(request), "test"));
  EXPECT_EQ(static_cast<const settings::RunSettings&>(decoded), settings);
}
