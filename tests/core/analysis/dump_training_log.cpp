// Prints a training log as dfi::analysis::readTrainingLog parses it: {"scalars": {tag: [[step,
// value, wall_time], ...]}, "files": [...], "acceptance": {"tag", "to_tau"} or null}; on a refusal,
// the error on stderr and its exit code. What tests/python/check_training_log.py compares with
// TensorBoard's own reader.
//
// Usage: dump_training_log FILE_OR_FOLDER

#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/analysis/training_log.h"
#include "dfi/base/error.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dump_training_log FILE_OR_FOLDER\n");
    return 2;
  }
  try {
    const dfi::analysis::TrainingLog log = dfi::analysis::readTrainingLog(argv[1]);
    nlohmann::json out{{"scalars", nlohmann::json::object()}, {"files", nlohmann::json::array()}};
    for (const auto& [tag, points] : log.scalars)
      for (const auto& p : points) out["scalars"][tag].push_back({p.step, p.value, p.wallTime});
    for (const auto& f : log.files) out["files"].push_back(f.string());
    const auto acceptance = dfi::analysis::loggedAcceptance(log);
    out["acceptance"] = acceptance ? nlohmann::json{{"tag", acceptance->tag}, {"to_tau", acceptance->toTau}}
                                   : nlohmann::json(nullptr);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const dfi::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.exitCode();
  }
}
