// The settings vocabulary: every field through its table and back (a field left out of a table
// fails here), the keys older sessions and GUIs wrote, the anchor, shard and device texts, and
// validate()'s refusals naming the option.

#include <gtest/gtest.h>

#include <set>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/settings/settings.h"
#include "dfi/settings/settings_fields.h"

using namespace dfi::settings;
using dfi::session::EvaluationMode;
using dfi::session::MaskVariant;

namespace {

// Every written field away from its default, so a field missing from the table reads back as
// the default and the comparison fails.
RunSettings everyFieldSet() {
  RunSettings s;
  s.target = "/models/target";
  s.drafters = {"/models/a", "/models/b"};
  s.prompts = "/data/p.jsonl";
  s.modes = {EvaluationMode::TeacherForced, EvaluationMode::DDTree};
  s.maskVariants = {MaskVariant::AnchorVisible, MaskVariant::PositionsPlusOne};
  s.anchors = {.kind = AnchorSelection::Kind::Random, .count = 64, .seed = 7};
  s.ddtreeBudget = 16;
  s.maxNewTokens = 64;
  s.topK = 4;
  s.model.devices = {"cuda:0", "cuda:1"};
  s.model.dtype = "bf16";
  s.chatTemplate = false;
  s.enableThinking = true;
  s.blockSize = 8;
  s.limit = 3;
  s.shard = {1, 4};
  s.skipBadPrompts = true;
  s.parityCheck = false;
  s.hiddenStatistics = true;
  s.calibrateCost = true;
  s.passBars = {"tau(step40k) >= 4.0", "paired(step40k - step20k) > -0.1"};
  s.stepCounting = StepCounting::FullBlocks;
  s.sampling = {.temperature = 0.7, .topP = 0.9, .topK = 20, .seed = 1234};
  s.samples = 3;
  return s;
}

template <typename T>
T roundTrip(const T& value) {
  return dfi::fromJson<T>(nlohmann::json::parse(dfi::toJson(value).dump()), "test");
}

std::set<std::string> keysOf(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  return keys;
}

std::string refusal(const RunSettings& s) {
  try {
    validate(s);
  } catch (const dfi::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

RunSettings runnable() {
  RunSettings s;
  s.target = "t";
  s.drafters = {"d"};
  s.prompts = "p.jsonl";
  return s;
}

}  // namespace

TEST(Settings, EveryFieldRoundTrips) {
  const RunSettings run = everyFieldSet();
  EXPECT_EQ(roundTrip(run), run);
  EXPECT_EQ(recordedRunSettings(settingsJson(run)), run);

  DiagnoseSettings diagnose{.evaluation = run, .trainingDump = "features.safetensors",
                            .trainingTemplate = "training.jinja", .budgetMinutes = 12.5};
  EXPECT_EQ(roundTrip(diagnose), diagnose);
  EXPECT_EQ(diagnose.noiseSeed(), 1234u) << "the run's seed seeds the tap noise";

  InspectSettings inspect;
  inspect.target = "/models/target";
  inspect.drafter = "/models/a";
  inspect.model = {.devices = {"cuda:1"}, .dtype = "fp16"};
  inspect.blockSize = 16;
  inspect.ids = {1, 2, 3, 40000000000};
  inspect.anchor = 2;
  inspect.variant = MaskVariant::NoContext;
  inspect.topK = 3;
  inspect.attention = false;
  inspect.statistics = false;
  inspect.runId = 5;
  inspect.stepId = 41;
  EXPECT_EQ(roundTrip(inspect), inspect);
}

// The keys RunRecord.settings_json and the "run" request have always had (core/session/SCHEMA.md),
// and those added since (chat_template_kwargs, calibrate_cost, require): a key may be added, never renamed or
// dropped.
TEST(Settings, KeysNeverChange) {
  EXPECT_EQ(keysOf(dfi::toJson(everyFieldSet())),
            (std::set<std::string>{"target", "drafters", "prompts", "modes", "mask_variants", "anchors",
                                   "ddtree_budget", "block_size", "max_new_tokens", "limit", "record_top_k",
                                   "temperature", "top_p", "top_k", "seed", "samples", "device", "dtype", "no_chat",
                                   "thinking", "shard", "skip_bad_prompts", "no_parity", "hidden_statistics",
                                   "step_counting", "chat_template_kwargs", "calibrate_cost", "require"}));
  const nlohmann::json j = dfi::toJson(everyFieldSet());
  EXPECT_EQ(j.at("anchors"), "random:64:7");
  EXPECT_EQ(j.at("device"), "cuda:0,cuda:1");
  EXPECT_EQ(j.at("shard"), "1/4");
  EXPECT_EQ(j.at("no_chat"), true);
  EXPECT_EQ(j.at("no_parity"), true);
  EXPECT_EQ(j.at("thinking"), "on");
  EXPECT_EQ(j.at("modes"), (nlohmann::json{"teacher-forced", "ddtree"}));
  EXPECT_EQ(j.at("step_counting"), "full-blocks");
}

// A run's settings as the engine recorded them before the vocabulary (protocol::RunOptions).
TEST(Settings, ReadsOlderRecordedSettings) {
  const RunSettings s = recordedRunSettings(
      R"({"anchors":"every:4","block_size":null,"ddtree_budget":8,"device":"cpu","drafters":["/m/a"],)"
      R"("dtype":"fp32","enable_thinking":false,"hidden_statistics":false,"limit":null,"mask_variants":["reference"],)"
      R"("max_new_tokens":32,"modes":["live","teacher-forced","ddtree"],"no_chat":false,"no_parity":true,)"
      R"("prompts":"/p.jsonl","record_top_k":8,"samples":1,"seed":0,"shard":"0/2","skip_bad_prompts":false,)"
      R"("step_counting":"dflash","target":"/m/t","temperature":0.0,"thinking":"on","top_k":0,"top_p":1.0})");
  EXPECT_EQ(s.anchors, (AnchorSelection{.kind = AnchorSelection::Kind::Every, .stride = 4}));
  EXPECT_EQ(s.shard, (Shard{0, 2}));
  EXPECT_TRUE(s.enableThinking) << "enable_thinking false beside thinking on";
  EXPECT_FALSE(s.parityCheck);
  EXPECT_EQ(s.maxNewTokens, 32);
  EXPECT_EQ(s.drafters, std::vector<std::filesystem::path>{"/m/a"});

  // An imported run records other keys: the defaults stand for the missing ones.
  EXPECT_EQ(recordedRunSettings(R"({"import":{"reference_run":1}})"), RunSettings{});
  EXPECT_EQ(recordedRunSettings(""), RunSettings{});
  EXPECT_THROW(recordedRunSettings(R"({"anchors":"sometimes"})"), dfi::FormatError);
  // A GUI of before sent enable_thinking alone.
  EXPECT_TRUE(recordedRunSettings(R"({"enable_thinking":true})").enableThinking);
}

TEST(Settings, TextCodecs) {
  for (const std::string text : {"live", "every:1", "every:4", "random:64:7", "random:3:0"})
    EXPECT_EQ(anchorSelectionText(*parseAnchorSelection(text)), text);
  EXPECT_EQ(parseAnchorSelection("every")->stride, 1);
  EXPECT_EQ(parseAnchorSelection("random:5")->seed, 0u);
  for (const char* bad : {"", "sometimes", "every:0", "every:x", "random:", "random:0", "random:4:x", "4"})
    EXPECT_FALSE(parseAnchorSelection(bad)) << bad;
  EXPECT_EQ(parseShard("2/3"), (Shard{2, 3}));
  for (const char* bad : {"3/3", "-1/2", "1/0", "1", "auto"}) EXPECT_FALSE(parseShard(bad)) << bad;
  EXPECT_EQ(parseDeviceList("cuda:0,,cuda:1"), (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_EQ(deviceListText({"cuda:0", "cuda:1"}), "cuda:0,cuda:1");
  EXPECT_EQ(samplingLabel({}), "greedy");
  EXPECT_EQ(samplingLabel({.temperature = 1, .topP = 0.95, .topK = 20}), "T=1 top-p=0.95 top-k=20");
}

TEST(Settings, ValidateNamesTheOption) {
  EXPECT_EQ(refusal(runnable()), "accepted");
  EXPECT_NE(refusal(everyFieldSet()).find("--thinking"), std::string::npos) << "thinking needs the chat template";
  const auto refused = [](auto change, const std::string& option) {
    RunSettings s = runnable();
    change(s);
    const std::string why = refusal(s);
    EXPECT_NE(why.find(option), std::string::npos) << option << ": " << why;
  };
  refused([](RunSettings& s) { s.target.clear(); }, "--target");
  refused([](RunSettings& s) { s.drafters.clear(); }, "--drafters");
  refused([](RunSettings& s) { s.modes.clear(); }, "--modes");
  refused([](RunSettings& s) { s.maskVariants.clear(); }, "--mask-variants");
  refused([](RunSettings& s) { s.blockSize = 1; }, "--block-size");
  refused([](RunSettings& s) { s.maxNewTokens = 0; }, "--max-new-tokens");
  refused([](RunSettings& s) { s.limit = 0; }, "--limit");
  refused([](RunSettings& s) { s.topK = 0; }, "--record-top-k");
  refused([](RunSettings& s) { s.ddtreeBudget = 0; }, "--ddtree-budget");
  refused([](RunSettings& s) { s.sampling.temperature = -1; }, "--temperature");
  refused([](RunSettings& s) { s.sampling.topP = 0; }, "--top-p");
  refused([](RunSettings& s) { s.sampling.topK = -1; }, "--top-k");
  refused([](RunSettings& s) { s.samples = 2; }, "--samples");
  refused([](RunSettings& s) { s.model.dtype = "fp8"; }, "--dtype");
  refused([](RunSettings& s) { s.model.devices.clear(); }, "--device");
  refused([](RunSettings& s) { s.enableThinking = true, s.chatTemplate = false; }, "--thinking");
  refused([](RunSettings& s) { s.shard = {2, 2}; }, "--shard");

  DiagnoseSettings diagnose{.evaluation = runnable()};
  EXPECT_NO_THROW(validate(diagnose));
  diagnose.budgetMinutes = 0;
  EXPECT_THROW(validate(diagnose), dfi::UsageError);

  InspectSettings inspect{.target = "t", .drafter = "d", .ids = {1, 2}, .anchor = 1};
  EXPECT_NO_THROW(validate(inspect));
  inspect.topK = -1;
  EXPECT_THROW(validate(inspect), dfi::UsageError);
  inspect.topK = 0;
  inspect.blockSize = 1;
  EXPECT_THROW(validate(inspect), dfi::UsageError) << "the one block-size check serves inspect too";
}
