// `dflash-eval merge a.dfi b.dfi ... -o all.dfi`: joins sessions recorded separately (shards
// from `run --shard i/N` on several machines) into one file, re-keying runs so ids do not
// collide. Token-string tables must agree; a disagreement names both files and the token id.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/session/merge.h"

namespace dfi::eval {
namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false;
};

int runMerge(const MergeOptions& o) {
  const session::MergeSummary summary = session::mergeSessions(o.inputs, o.output, o.force);
  std::cout << "merged " << o.inputs.size() << " sessions into " << o.output << ": " << summary.runs << " runs, "
            << summary.steps << " steps, " << summary.tokenStrings << " token strings\n";
  return 0;
}

}  // namespace

void registerMergeCommand(CLI::App& app) {
  auto options = std::make_shared<MergeOptions>();
  CLI::App* sub = app.add_subcommand("merge", "Merge session files (e.g. shards of one evaluation) into one");
  sub->add_option("inputs", options->inputs, "Session files to merge, in order")->required();
  sub->add_option("-o,--output", options->output, "The merged session file")->required();
  sub->add_flag("-f,--force", options->force, "Replace the output file if it exists");
  setAction(*sub, [options] { return runMerge(*options); });
}

}  // namespace dfi::eval
