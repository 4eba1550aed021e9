// dflash-eval gate: a session against pass bars, for a training pipeline's CI (exit code 6 when
// a bar is missed), from the bars recorded with `run --require` and those given here.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "gate_report.h"

namespace dfi::eval {

void registerGateCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("gate", "Check a session against pass bars; exit code 6 when one is missed");
  auto session = std::make_shared<std::string>();
  auto options = std::make_shared<GateOptions>();
  sub->add_option("session", *session, "Session file (.dfi)")->required()->check(CLI::ExistingFile);
  sub->add_option("--require", options->bars,
                  "A pass bar (repeat for several): tau(SELECTOR) OP V, tau_vllm(SELECTOR) OP V or "
                  "paired(SELECTOR - SELECTOR) OP V, OP one of >= > <= <; SELECTOR is a drafter's label as the "
                  "summary prints it, then optionally ', mode', ', mask variant', ', sampling' or ', prompt set' "
                  "(default live and reference). Bars recorded with `run --require` are checked too");
  sub->add_flag("--strict", options->strict,
                "Pass a bar only when its whole 95% interval meets it (default: the estimate)");
  sub->add_flag("--json", options->json, "One JSON object {\"passed\", \"strict\", \"bars\": [...]} instead of the lines");
  setAction(*sub, [session, options] { return gateSession(*session, *options); });
}

}  // namespace dfi::eval
