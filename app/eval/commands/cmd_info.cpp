// `dflash-eval info PATH` and `dflash-eval info --drafter DIR --target DIR`: what a checkpoint
// is (kind, geometry, dtype mix, parameter count, config validation, tensor layout against the
// config), for a target its total and active parameters and what each device of --devices /
// --dtype will hold against what it has free, and whether a drafter fits a target. Exit code 0
// when everything is valid, compatible and fits, 5 otherwise.

#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "command_inputs.h"
#include "commands.h"
#include "dfi/base/error.h"
#include "info_report.h"

namespace dfi::eval {
namespace {

struct InfoOptions {
  std::string path;
  std::string drafter;
  std::string target;
  bool json = false;
  PlacementOptions placement;  // what `memory` plans for
};

int runInfo(const InfoOptions& o) {
  const bool pair = !o.drafter.empty() || !o.target.empty();
  if (pair && (o.drafter.empty() || o.target.empty()))
    throw UsageError("--drafter and --target go together");
  if (!pair && o.path.empty()) throw UsageError("give a model PATH, or --drafter DIR --target DIR");

  nlohmann::json document = nlohmann::json::object();
  bool ok = true;
  if (!o.path.empty()) {
    document["model"] = describeModel(o.path, o.placement.modelOptions());
    ok = ok && modelIsClean(document["model"]);
  }
  if (pair) {
    const nlohmann::json p = describePair(o.drafter, o.target, o.placement.modelOptions());
    document["drafter"] = p["drafter"];
    document["target"] = p["target"];
    document["compatibility"] = p["compatibility"];
    ok = ok && p["compatibility"]["compatible"].get<bool>() && modelIsClean(p["drafter"]) && modelIsClean(p["target"]);
  }

  if (o.json) {
    std::cout << document.dump(2) << "\n";
  } else {
    for (const char* key : {"model", "target", "drafter"})
      if (document.contains(key)) std::cout << renderModel(document[key]) << "\n";
    if (document.contains("compatibility")) std::cout << renderCompatibility(document["compatibility"]);
  }
  return ok ? 0 : ValidationError("").exitCode();
}

}  // namespace

void registerInfoCommand(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Describe a target or drafter checkpoint, or check a drafter against its target");
  sub->add_option("path", options->path, "Model directory (or its config.json)");
  sub->add_option("--drafter", options->drafter, "DFlash drafter directory, checked against --target");
  sub->add_option("--target", options->target, "Target model directory");
  sub->add_flag("--json", options->json, "Print one JSON document instead of text");
  addPlacementOptions(*sub, options->placement);
  setAction(*sub, [options] { return runInfo(*options); });
}

}  // namespace dfi::eval
