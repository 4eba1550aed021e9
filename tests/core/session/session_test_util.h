#pragma once
// Helpers shared by the session tests: fresh temporary paths and a small recorded session.

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

}  // namespace dfi::session::testutil
