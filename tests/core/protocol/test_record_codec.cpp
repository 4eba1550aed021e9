#include <gtest/gtest.h>

#include <sstream>

#include "dfi/base/error.h"
#include "dfi/protocol/record_codec.h"

using namespace dfi::protocol;
namespace s = dfi::session;

namespace {

// Sends records through a real byte stream, as between the engine and the GUI.
std::vector<Record> roundTrip(const std::vector<Record>& records) {
  std::stringstream wire;
  for (const auto& r : records) writeFrame(wire, encodeRecord(r));
  FrameReader reader(wire, "engine");
  std::vector<Record> out;
  while (auto frame = reader.next()) {
    EXPECT_TRUE(isRecordFrame(*frame));
    out.push_back(decodeRecord(*frame, "engine"));
  }
  return out;
}

s::StepRecord sampleStep() {
  s::StepRecord step;
  step.stepId = 42;
  step.runId = 3;
  step.promptId = 7;
  step.stepIndex = 5;
  step.mode = s::EvaluationMode::TeacherForced;
  step.anchorPosition = 120;
  step.anchorToken = 1001;
  step.draftTokens = {5, 6, 7};
  step.targetTokens = {5, 6, 9};
  step.acceptedCount = 2;
  step.bonusToken = 9;
  step.topKIds = {5, 8, 6, 1, 7, 9};
  step.topKProbs = {0.7f, 0.1f, 0.55f, 1e-7f, 0.3333333f, 0.3f};
  step.garbleFlags = {0, 1, 8};
  step.maskVariant = "anchor-visible";
  return step;
}

}  // namespace

TEST(RecordCodec, EveryRecordTypeRoundTripsExactly) {
  s::RunRecord run;
  run.runId = 3;
  run.name = "good drafter";
  run.target = {"/models/target", "{\"a\":1}", "ab12"};
  run.drafter = {"/models/drafter", "{}", "cd34"};
  run.blockSize = 16;
  run.topK = 2;
  run.startedAt = 1764400000.25;
  const s::PromptRecord prompt{3, 7, "code", 0, "def fizzbuzz(n):", {1, 2, 3}, 40};
  const s::TreeRecord tree{42, {1001, 5, 8}, {0.f, -0.35f, -2.3f}, {-1, 0, 0}, {0, 1}};
  const s::StatisticRecord stat{3, 42, "hidden.rms", 2, -1, {1.5f, 2.25f}};
  s::TensorRecord tensor;
  tensor.info = {0, 3, 42, "drafter.mask", -1, -1, s::TensorDType::U8, {2, 3}, "q,k", 0};
  tensor.data = {1, 0, 1, 1, 1, 0};
  const TokenStrings tokens{{5, "\xe2\x96", "<0xE2><0x96>"}, {6, " the", "\xc2\xb7the"}};

  const std::vector<Record> sent{run, prompt, sampleStep(), tree, stat, tensor, tokens};
  const auto received = roundTrip(sent);
  ASSERT_EQ(received.size(), sent.size());
  EXPECT_EQ(std::get<s::StepRecord>(received[2]), sampleStep());
  EXPECT_EQ(std::get<s::TreeRecord>(received[3]), tree);
  EXPECT_EQ(std::get<s::StatisticRecord>(received[4]), stat);
  EXPECT_EQ(std::get<s::TensorRecord>(received[5]).info.shape, tensor.info.shape);
  EXPECT_EQ(std::get<s::TensorRecord>(received[5]).data, tensor.data);
  EXPECT_EQ(std::get<TokenStrings>(received[6]), tokens);  // partial UTF-8 survives
  const auto& r = std::get<s::RunRecord>(received[0]);
  EXPECT_EQ(r.target.configJson, run.target.configJson);
  EXPECT_EQ(r.startedAt, run.startedAt);
  EXPECT_EQ(std::get<s::PromptRecord>(received[1]).promptTokens, prompt.promptTokens);
}

TEST(RecordCodec, MistypedFieldNamesTheField) {
  Frame frame = encodeRecord(sampleStep());
  frame.header["draft_tokens"] = "not a list";
  try {
    decodeRecord(frame, "ssh gpu-host");
    FAIL() << "expected FormatError";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().file, "ssh gpu-host");
    EXPECT_EQ(e.context().item, "step.draft_tokens");
  }
  frame = encodeRecord(sampleStep());
  frame.header.erase("bonus_token");
  EXPECT_THROW(decodeRecord(frame, "engine"), dfi::FormatError);
  frame = encodeRecord(sampleStep());
  frame.header["mode"] = "sampling";
  EXPECT_THROW(decodeRecord(frame, "engine"), dfi::FormatError);
}

TEST(RecordCodec, TensorPayloadMustMatchShape) {
  s::TensorRecord tensor;
  tensor.info.dtype = s::TensorDType::F32;
  tensor.info.shape = {2, 2};
  tensor.data.assign(16, 0);
  Frame frame = encodeRecord(tensor);
  frame.payload.resize(12);
  EXPECT_THROW(decodeRecord(frame, "engine"), dfi::FormatError);
}

TEST(RecordCodec, ControlMessagesAreNotRecords) {
  EXPECT_FALSE(isRecordFrame({{{"type", "progress"}}, ""}));
  EXPECT_FALSE(isRecordFrame({{{"done", 3}}, ""}));
}
