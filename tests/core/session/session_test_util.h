#pragma once
// Helpers shared by the session tests (and the analysis tests that read sessions): fresh
// temporary paths, a small recorded session and one with known acceptance.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "dfi/session/writer.h"
#include "synthetic_session.h"

namespace dfi::session::testutil {

inline std::string freshPath(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(::testing::TempDir()) / ("dfi_session_" + std::to_string(::getpid()) + "_" + name);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path.string() + suffix);
  return path.string();
}

struct SmallSession {
  RunId run = 0;
  std::int32_t prompts = 3;
  std::int32_t stepsPerPrompt = 20;
};

// One run, `prompts` prompts of `stepsPerPrompt` steps, each step with a tree and a statistic,
// one attention tensor per prompt, token strings and two annotations.
inline SmallSession writeSmallSession(const std::string& path, const std::string& runName = "run") {
  SmallSession s;
  Writer writer(path, {.mode = OpenMode::Overwrite, .batchRecords = 50});
  s.run = writer.addRun(synthetic::run(runName));
  writer.addTokenStrings(synthetic::tokenStrings(64));
  for (PromptId p = 0; p < s.prompts; ++p) {
    writer.addPrompt(synthetic::prompt(s.run, p));
    for (std::int32_t i = 0; i < s.stepsPerPrompt; ++i) {
      const StepId id = writer.addStep(synthetic::step(s.run, p, i));
      writer.addTree(synthetic::tree(id, 4));
      writer.addStatistic(synthetic::statistic(s.run, id, 3, 15));
      if (i == 0) writer.addTensor(synthetic::attention(s.run, id, 3, 1, 64));
    }
  }
  writer.addAnnotation({.runId = s.run, .stepId = 1, .kind = AnnotationKind::Bookmark, .body = "first"});
  writer.addAnnotation({.kind = AnnotationKind::Layout, .body = R"({"panels":["tokens"]})"});
  writer.close();
  return s;
}

// Three steps with known acceptance: prompt 0 accepts 3 then 1 drafts, prompt 1 accepts none.
// The export tests (session) and the metrics tests (analysis) both check against it.
inline std::string writeKnownAcceptance() {
  const std::string path = freshPath("metrics.dfi");
  Writer writer(path, {.mode = OpenMode::Overwrite});
  const RunId run = writer.addRun(synthetic::run("metrics", 16, 8));
  const std::pair<PromptId, std::int32_t> accepted[] = {{0, 3}, {0, 1}, {1, 0}};
  std::int32_t index = 0;
  for (const auto& [prompt, count] : accepted) {
    StepRecord step = synthetic::step(run, prompt, index++);
    step.acceptedCount = count;
    step.maskVariant = "causal, \"block\"";  // needs CSV quoting
    writer.addStep(step);
  }
  return path;
}

}  // namespace dfi::session::testutil
