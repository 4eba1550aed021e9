// dflash-eval: the engine's command line. Each subcommand lives in its own file and registers
// itself through commands.h; main() only parses, dispatches and turns errors into exit codes.

#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/base/version.h"
#include "dfi/engine/runtime.h"

namespace {

void printVersion() {
  const auto rt = dfi::engine::runtimeInfo();
  std::cout << "dflash-eval " << dfi::version() << " (git " << dfi::gitHash() << ")\n"
            << "libtorch " << rt.torchVersion << "\n"
            << "CUDA compiled in: " << (rt.cudaCompiled ? "yes (CUDA " + rt.cudaVersion + ")" : "no")
            << "\n"
            << "CUDA available: "
            << (rt.cudaAvailable ? "yes, " + std::to_string(rt.cudaDeviceCount) + " device(s)" : "no")
            << "\n"
            << "CPU kernels: " << (rt.cpuKernels ? "on" : "off (DFI_CPU_KERNELS=off: the ATen path a GPU takes)")
            << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dflash-eval: evaluate DFlash drafters against their target models"};
  app.add_flag_callback("--version", [] { printVersion(); throw CLI::Success(); },
                        "Print version, git hash, libtorch and CUDA status");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Debug logging");
  app.require_subcommand(0, 1);
  dfi::eval::registerCommands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (verbose) dfi::setLogLevel(spdlog::level::debug);
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 0;
  }
  try {
    return dfi::eval::runSelected(app);
  } catch (const dfi::Error& e) {
    std::cerr << "dflash-eval: error: " << e.what() << "\n";
    return e.exitCode();
  } catch (const std::exception& e) {
    std::cerr << "dflash-eval: internal error: " << e.what() << "\n";
    return 70;
  }
}
