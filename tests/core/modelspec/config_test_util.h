#pragma once
// Helpers for the config tests: fixture paths, and catching a ConfigValidationError to look
// at the problems it lists.

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dfi/modelspec/config_error.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec::testing {

inline std::filesystem::path configFixture(const std::string& name) {
  return std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/configs" / name;
}

inline nlohmann::json fixtureJson(const std::string& name) {
  std::ifstream in(configFixture(name));
  return nlohmann::json::parse(in);
}

// Runs `parse`, which must throw ConfigValidationError, and returns its problems.
inline std::vector<ConfigProblem> problemsOf(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const ConfigValidationError& e) {
    return e.problems();
  }
  ADD_FAILURE() << "expected a ConfigValidationError";
  return {};
}

// The one problem reported for `field`; fails the test when there is not exactly one.
inline ConfigProblem problemAt(const std::vector<ConfigProblem>& problems, const std::string& field) {
  std::vector<ConfigProblem> hits;
  for (const ConfigProblem& p : problems)
    if (p.field == field) hits.push_back(p);
  if (hits.size() != 1) {
    std::string all;
    for (const ConfigProblem& p : problems) all += "\n  " + p.field + ": " + p.message;
    ADD_FAILURE() << hits.size() << " problems at " << field << "; all problems:" << all;
    return {};
  }
  return hits.front();
}

// A target config written as `j`, parsed as config.json; and the problems it is refused with.
inline TargetConfig parseTarget(const nlohmann::json& j) { return parseTargetConfigText(j.dump(), "config.json"); }
inline std::vector<ConfigProblem> targetProblems(const nlohmann::json& j) {
  return problemsOf([&] { parseTarget(j); });
}

}  // namespace dfi::modelspec::testing
