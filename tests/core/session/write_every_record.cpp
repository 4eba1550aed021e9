// Writes a session holding every record kind, every field set to something other than its
// default (sampled steps, DFlash2 candidates, trees, statistics, a tensor, raw token bytes,
// annotations), and beside it the same records as the field tables encode them (dfi::toJson):
// what the Python session reader (python/dflash_inspector) must read back from the file, field
// by field (tests/python/check_session_reader.py).
//
// Usage: write_every_record OUT.dfi OUT.json

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "dfi/base/field_json.h"
#include "dfi/session/record_fields.h"
#include "dfi/session/writer.h"
#include "synthetic_session.h"

namespace {

using namespace dfi::session;

StepRecord sampledStep(RunId run, PromptId prompt, std::int32_t index) {
  StepRecord s = synthetic::step(run, prompt, index, /*blockSize=*/6, /*topK=*/3);
  s.mode = index % 2 ? EvaluationMode::TeacherForced : EvaluationMode::DDTree;
  s.maskVariant = "anchor-visible";
  s.countedLength = 2;
  for (std::size_t slot = 0; slot < s.draftTokens.size(); ++slot) {
    s.targetProbs.push_back(0.5f + 0.01f * static_cast<float>(slot));
    s.draftProbs.push_back(0.25f + 0.02f * static_cast<float>(slot));
    s.acceptUniforms.push_back(0.125f * static_cast<float>(slot));
    for (int k = 0; k < 2; ++k) {
      s.candidateIds.push_back(static_cast<TokenId>(1000 + 10 * slot + k));
      s.candidateScores.push_back(-0.5f * static_cast<float>(k + 1));
    }
    s.chosenCandidates.push_back(static_cast<std::int32_t>(slot % 2));
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_every_record OUT.dfi OUT.json\n");
    return 2;
  }
  std::filesystem::remove(argv[1]);
  nlohmann::json written = nlohmann::json::object();
  auto record = [&](const char* table, const auto& value) { written[table].push_back(dfi::toJson(value)); };

  Writer writer(argv[1]);
  RunRecord run = synthetic::run("drafter-a/ddtree/anchor-visible", /*blockSize=*/6, /*topK=*/3);
  run.mode = EvaluationMode::DDTree;
  run.maskVariant = MaskVariant::AnchorVisible;
  run.slidingWindow = 64;
  run.temperature = 1.0;
  run.sample = 2;
  run.hypothesis = "taps-shift:-1";
  run.origin = "vllm.jsonl (vllm)";
  run.shard = "1/2";
  run.settingsJson = R"({"require":["tau(drafter-a) >= 2"],"max_new_tokens":64})";
  run.runId = writer.addRun(run);
  run.finishedAt = run.startedAt + 12.5;
  run.timingsJson = R"({"draft_s":1.5,"verify_s":3.25})";
  writer.finishRun(run.runId, run.finishedAt, run.timingsJson);
  record("runs", run);

  for (PromptId p = 0; p < 2; ++p) {
    PromptRecord prompt = synthetic::prompt(run.runId, p);
    prompt.turn = static_cast<std::int32_t>(p);
    prompt.completionTokens = 17 + static_cast<std::int32_t>(p);
    writer.addPrompt(prompt);
    record("prompts", prompt);
    for (std::int32_t i = 0; i < 2; ++i) {
      StepRecord step = sampledStep(run.runId, p, i);
      step.stepId = writer.addStep(step);
      record("steps", step);
      TreeRecord tree = synthetic::tree(step.stepId, 3);
      writer.addTree(tree);
      record("trees", tree);
      StatisticRecord statistic = synthetic::statistic(run.runId, step.stepId, 2, 4);
      statistic.name = "hidden.target.3.rms";
      statistic.head = 1;
      writer.addStatistic(statistic);
      record("statistics", statistic);
    }
  }
  StatisticRecord runLevel{.runId = run.runId, .stepId = 0, .name = "cost:drafter-block-ms", .layer = -1, .head = -1,
                           .values = {3.125f}};
  writer.addStatistic(runLevel);
  record("statistics", runLevel);

  TensorRecord tensor = synthetic::attention(run.runId, 1, 3, 1, 5);
  tensor.info.tensorId = writer.addTensor(tensor);
  tensor.info.tileBytes = 128 * 1024;  // the writer's tiles: 128 KiB, whole elements
  record("tensors", tensor.info);

  const std::vector<TokenString> tokens = synthetic::tokenStrings(6);
  writer.addTokenStrings(tokens);
  for (const TokenString& token : tokens) record("token_strings", token);

  Annotation note{.runId = run.runId, .stepId = 2, .kind = AnnotationKind::Bookmark, .body = "first slot wrong",
                  .createdAt = 1.75e9};
  note.annotationId = writer.addAnnotation(note);
  record("annotations", note);
  writer.close();

  std::ofstream(argv[2]) << written.dump(1) << "\n";
  return 0;
}
