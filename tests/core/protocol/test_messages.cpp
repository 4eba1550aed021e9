// The GUI <-> engine messages: every type through a real byte stream and back unchanged, the
// keys the GUI has always sent, and a clear error (stream, type, field) for what does not decode.

#include <gtest/gtest.h>

#include <sstream>

#include "dfi/base/error.h"
#include "dfi/protocol/messages.h"

using namespace dfi::protocol;
using nlohmann::json;

namespace {

template <typename Message>
std::vector<Message> roundTrip(const std::vector<Message>& messages, Message (*decode)(const Frame&, std::string_view)) {
  std::stringstream wire;
  for (const auto& m : messages) writeFrame(wire, encodeMessage(m));
  FrameReader reader(wire, "wire");
  std::vector<Message> out;
  while (auto frame = reader.next()) out.push_back(decode(*frame, "wire"));
  return out;
}

RunRequest sampleRun() {
  RunRequest run;
  run.requestId = 4;
  run.target = "/models/target";
  run.drafters = {"/models/a", "/models/b"};
  run.prompts = "/data/p.jsonl";
  run.modes = {dfi::session::EvaluationMode::Live};
  run.maskVariants = {dfi::session::MaskVariant::Reference, dfi::session::MaskVariant::AnchorVisible};
  run.blockSize = 8;
  run.limit = 3;
  run.hiddenStatistics = true;
  run.session = "/tmp/engine.dfi";
  return run;
}

InspectRequest sampleInspect() {
  InspectRequest inspect;
  inspect.requestId = 9;
  inspect.target = "/models/target";
  inspect.drafter = "/models/a";
  inspect.ids = {1, 2, 3, 40000000000};
  inspect.anchor = 2;
  inspect.variant = dfi::session::MaskVariant::AnchorVisible;
  inspect.attention = false;
  inspect.blockSize = 16;
  inspect.runId = 3;
  inspect.stepId = 41;
  return inspect;
}

Frame frameOf(const std::string& line) {
  std::istringstream in(line + "\n");
  FrameReader reader(in, "wire");
  return *reader.next();
}

std::string requestError(const std::string& line) {
  try {
    decodeRequest(frameOf(line), "serve stdin");
  } catch (const dfi::FormatError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Messages, RequestsRoundTrip) {
  DiagnoseRequest diagnose;
  diagnose.requestId = 11;
  diagnose.evaluation.target = "t";
  diagnose.evaluation.drafters = {"d1", "d2"};
  diagnose.evaluation.prompts = "p.jsonl";
  diagnose.trainingDump = "features.safetensors";
  diagnose.budgetMinutes = 12.5;
  const std::vector<Request> requests{sampleRun(), sampleInspect(), diagnose, CancelRequest{4}, ShutdownRequest{}};
  EXPECT_EQ(roundTrip(requests, &decodeRequest), requests);
}

TEST(Messages, RepliesRoundTrip) {
  // Summary rows as `summary --json` writes them: a sampled live row with every optional key, and
  // a row with no answered prompt, which has no tau keys at all.
  dfi::analysis::SummaryRow live{.drafter = "a", .mode = "live", .variant = "reference", .dataset = "chat",
                                 .sampling = "T=1", .responses = 6, .steps = 12};
  live.tau = {3.5, 3.25, 3.75};
  live.repeats = 3;
  live.tauOverRepeats = dfi::analysis::Interval{3.5, 3, 4};
  live.tauSglang = 3.25;
  live.tauVllm = {4.5, 4, 5};
  live.stepCounting = "dflash";
  live.runIds = {1, 2, 3};
  const dfi::analysis::SummaryRow unanswered{.drafter = "a", .mode = "ddtree-8", .variant = "reference",
                                             .dataset = "all", .sampling = "greedy"};
  Done run{.requestId = 4, .runs = {live, unanswered}};
  EXPECT_FALSE(encodeMessage(Reply{run}).header.at("runs").at(1).contains("tau_reference"));
  Done inspect{.requestId = 9, .request = RequestKind::Inspect, .tensors = 3, .statistics = 24};
  Done diagnosed{.requestId = 11, .request = RequestKind::Diagnose};
  const std::vector<Reply> replies{
      Hello{.engineVersion = "1.0", .git = "abc", .torch = "2.11", .cudaAvailable = true, .cudaDevices = 2},
      Progress{4, 1, 2, 0.5, 0.5, "drafter 1/1, prompt 1/2"}, run, inspect, diagnosed,
      ErrorReply{.requestId = 4, .message = "no such file", .exitCode = 3}};
  EXPECT_EQ(roundTrip(replies, &decodeReply), replies);
}

// What RunDialog and BlockProbePanel sent before the messages were types: still understood.
TEST(Messages, ReadsTheKeysTheGuiSends) {
  const auto run = std::get<RunRequest>(decodeRequest(
      frameOf(R"({"type":"run","request_id":1,"target":"t","drafters":["d"],"prompts":"p",)"
              R"("modes":["live","ddtree"],"mask_variants":["reference"],"device":"cpu","dtype":"bf16",)"
              R"("ddtree_budget":16,"max_new_tokens":64,"limit":2,"enable_thinking":true,"session":"s.dfi"})"),
      "wire"));
  EXPECT_EQ(run.requestId, 1);
  EXPECT_EQ(run.drafters, std::vector<std::filesystem::path>{"d"});
  EXPECT_EQ(run.modes, (std::vector{dfi::session::EvaluationMode::Live, dfi::session::EvaluationMode::DDTree}));
  EXPECT_EQ(run.model.dtype, "bf16");
  EXPECT_EQ(run.ddtreeBudget, 16);
  EXPECT_EQ(run.maxNewTokens, 64);
  EXPECT_EQ(run.limit, 2);
  EXPECT_TRUE(run.enableThinking);
  EXPECT_EQ(run.session, "s.dfi");
  EXPECT_EQ(run.topK, 8) << "a missing option keeps its default";
  EXPECT_EQ(run.sampling.temperature, 0.0) << "greedy unless asked";
  EXPECT_EQ(run.blockSize, std::nullopt);

  const auto inspect = std::get<InspectRequest>(decodeRequest(
      frameOf(R"({"type":"inspect","request_id":7,"target":"t","drafter":"d","ids":[1,2],"anchor":1,)"
              R"("mask_variant":"reference","top_k":4,"attention":true,"statistics":false,"device":"cpu",)"
              R"("dtype":"fp32","block_size":16,"run_id":3,"step_id":41})"),
      "wire"));
  EXPECT_EQ(inspect.ids, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(inspect.topK, 4);
  EXPECT_FALSE(inspect.statistics);
  EXPECT_EQ(inspect.blockSize, 16);
  EXPECT_EQ(inspect.stepId, 41);
}

TEST(Messages, ErrorsNameTheStreamTypeAndField) {
  const std::string wrongId = requestError(R"({"type":"inspect","request_id":"x"})");
  EXPECT_NE(wrongId.find("serve stdin"), std::string::npos) << wrongId;
  EXPECT_NE(wrongId.find("inspect.request_id"), std::string::npos) << wrongId;
  const std::string missing = requestError(R"({"type":"run"})");
  EXPECT_NE(missing.find("run.target"), std::string::npos) << missing;
  const std::string wrongType = requestError(R"({"type":"run","target":"t","drafters":"d","prompts":"p"})");
  EXPECT_NE(wrongType.find("run.drafters"), std::string::npos) << wrongType;
  const std::string range = requestError(R"({"type":"run","target":"t","drafters":["d"],"prompts":"p","top_k":4294967296})");
  EXPECT_NE(range.find("run.top_k"), std::string::npos) << range;
  const std::string variant =
      requestError(R"({"type":"inspect","target":"t","drafter":"d","ids":[1],"anchor":0,"mask_variant":"causal"})");
  EXPECT_NE(variant.find("inspect.mask_variant"), std::string::npos) << variant;
  const std::string unknown = requestError(R"({"type":"rerun","request_id":2})");
  EXPECT_NE(unknown.find("unknown request type 'rerun' (run, inspect, diagnose, cancel or shutdown)"), std::string::npos)
      << unknown;
  EXPECT_NE(requestError(R"({"request_id":2})").find("message.type"), std::string::npos);
  EXPECT_NE(requestError(R"({"type":7})").find("message.type"), std::string::npos);
  EXPECT_NE(requestError(R"({"type":"cancel"})").find("cancel.request_id"), std::string::npos);
  // A reply's type is not a request, and the other way round.
  EXPECT_NE(requestError(R"({"type":"hello"})").find("unknown request type 'hello'"), std::string::npos);
  EXPECT_THROW(decodeReply(frameOf(R"({"type":"shutdown"})"), "engine"), dfi::FormatError);
}

TEST(Messages, ARequestCarriesNoPayload) {
  Frame frame = encodeMessage(Request{CancelRequest{3}});
  frame.payload = "xyz";
  EXPECT_THROW(decodeRequest(frame, "wire"), dfi::FormatError);
}

TEST(Messages, RequestIdOfWhatDoesNotDecode) {
  EXPECT_EQ(requestIdOf(frameOf(R"({"type":"run","request_id":12})")), 12);
  EXPECT_EQ(requestIdOf(frameOf(R"({"type":"inspect","request_id":"x"})")), kNoRequest);
  EXPECT_EQ(requestIdOf(frameOf(R"({"type":"inspect","request_id":1e300})")), kNoRequest);
  EXPECT_EQ(requestIdOf(frameOf(R"({"type":"inspect","request_id":18446744073709551615})")), kNoRequest);
  EXPECT_EQ(requestIdOf(frameOf(R"({"type":"inspect"})")), kNoRequest);
}
