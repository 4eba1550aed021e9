#pragma once
// `run`'s (and `diagnose`'s) command line, bound to the settings vocabulary
// (dfi/settings/settings.h). Most options write their settings field directly; the few the
// command line spells as text of its own (mode aliases "teacher" and "both", `--ddtree N`,
// `--shard auto`, the anchor, device, mask-variant and step-counting names) are kept as text and
// parsed by resolve(), which then runs settings::validate, as `serve` and the GUI do.

#include <string>
#include <vector>

#include "dfi/settings/settings.h"
#include "shard_spec.h"

namespace CLI {
class App;
}

namespace dfi::eval {

struct RunCommandLine {
  settings::RunSettings settings;  // the options that need no parsing are written here
  std::vector<std::string> modes{"both"};
  // `--ddtree N` both sets the budget and asks for DDTree-N runs (0: none).
  int ddtreeBudget = 8;
  std::vector<std::string> maskVariants{"reference"};
  std::string anchors = "live";
  std::string device = "cpu";
  std::string thinking = "off";
  bool noChat = false;
  bool noParity = false;
  std::string shard = "0/1";  // or auto: resolved from `env`
  std::string stepCounting = "dflash";
  std::int64_t seed = 0;
  std::string drafterSeries;  // a training output folder whose checkpoints join the drafters

  // The settings, parsed and validated; throws dfi::UsageError naming the option.
  settings::RunSettings resolve(const EnvLookup& env = processEnvironment()) const;
};

void addRunOptions(CLI::App& command, RunCommandLine& options);

}  // namespace dfi::eval
