#include "commands.h"

#include <map>

#include <CLI/CLI.hpp>

namespace dfi::eval {
namespace {

std::map<const CLI::App*, Action>& actions() {
  static std::map<const CLI::App*, Action> table;
  return table;
}

}  // namespace

void setAction(CLI::App& sub, Action action) { actions()[&sub] = std::move(action); }

void registerCommands(CLI::App& app) {
  // Subcommands are added here as they land (info, tokenize, forward, run, serve, ...).
  registerInfoCommand(app);
  registerTokenizeCommand(app);
  registerMergeCommand(app);
  registerExportCommand(app);
  registerRunCommand(app);
  registerServeCommand(app);
  registerDemoCommand(app);
  registerRenderCommand(app);
  registerForwardCommand(app);
  registerDraftCommand(app);
  registerDiffDumpCommand(app);
  registerSummaryCommand(app);
  registerDiagnoseCommand(app);
  registerImportCommand(app);
  registerGateCommand(app);
  registerWatchCommand(app);
}

int runSelected(CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (auto it = actions().find(sub); it != actions().end()) return it->second();
  return 0;
}

}  // namespace dfi::eval
