#pragma once
// The subcommand registry of dflash-eval. A command adds its options to a CLI::App
// subcommand and stores the action to run when that subcommand is chosen.

#include <functional>

namespace CLI {
class App;
}

namespace dfi::eval {

using Action = std::function<int()>;

// Called by each command file: declares `sub` as runnable with `action`.
void setAction(CLI::App& sub, Action action);

void registerCommands(CLI::App& app);
// One per command file (cmd_<name>.cpp).
void registerInfoCommand(CLI::App& app);
void registerTokenizeCommand(CLI::App& app);
void registerMergeCommand(CLI::App& app);
void registerExportCommand(CLI::App& app);
void registerRunCommand(CLI::App& app);
void registerServeCommand(CLI::App& app);
void registerDemoCommand(CLI::App& app);
void registerRenderCommand(CLI::App& app);
void registerForwardCommand(CLI::App& app);
void registerDraftCommand(CLI::App& app);
void registerDiffDumpCommand(CLI::App& app);
void registerSummaryCommand(CLI::App& app);
void registerDiagnoseCommand(CLI::App& app);
void registerImportCommand(CLI::App& app);
void registerGateCommand(CLI::App& app);
void registerWatchCommand(CLI::App& app);
// Runs the action of the chosen subcommand and returns its exit code.
int runSelected(CLI::App& app);

}  // namespace dfi::eval
