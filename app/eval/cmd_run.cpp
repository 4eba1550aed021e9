// dflash-eval run: evaluate drafters against a target on a prompt set into a session file.

#include <CLI/CLI.hpp>

#include "commands.h"
#include "run_options.h"
#include "session_evaluation.h"

namespace dfi::eval {

void registerRunCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Evaluate drafters against a target on a prompt set into a .dfi session");
  auto options = std::make_shared<RunOptions>();
  auto session = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  addRunOptions(*sub, *options);
  sub->add_option("-o,--session", *session, "Session file to write (.dfi)")->required();
  sub->add_flag("--overwrite", *overwrite, "Replace an existing session file");
  setAction(*sub, [options, session, overwrite] {
    return evaluateIntoSession(options->toSettings(), *session, *overwrite);
  });
}

}  // namespace dfi::eval
