// dflash-eval diff-dump OURS THEIRS: the engine's own taps (`forward`, `draft`) against an
// external dump of the same tensors (a training pipeline's, transformers'
// output_hidden_states), per tensor and per position. Pairing rules: dfi/analysis/tap_names.h;
// the differences: dfi/analysis/tap_diff.h. Torch-free: only the files' mappings are read.
//   OURS.safetensors THEIRS.safetensors [--map THEIR=OUR ...] [--tolerance X] [--json]
//   [--out REPORT.safetensors]
// Exit code: 0 when every paired tensor is within the tolerance (max abs diff <= X at every
// position), 1 when any is beyond it; unmatched tensors are listed but do not fail the run.
// Usage and file errors exit with their dfi::Error codes (2 usage, 3 I/O, 4 format, 5 shapes).

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/analysis/tap_diff.h"
#include "dfi/analysis/tap_diff_report.h"

namespace dfi::eval {
namespace {

struct DiffDumpOptions {
  std::string ours;
  std::string theirs;
  std::vector<std::string> mappings;
  double tolerance = 1e-4;
  bool json = false;
  std::string out;
};

int runDiffDump(const DiffDumpOptions& opt) {
  analysis::TapDiffOptions options{.tolerance = opt.tolerance};
  for (const std::string& text : opt.mappings) options.mappings.push_back(analysis::parseTapMapping(text));
  const analysis::TapDiffReport report = analysis::diffTapFiles(opt.ours, opt.theirs, options);
  if (!opt.out.empty()) analysis::writeTapDiffTensors(report, opt.out);
  std::cout << (opt.json ? analysis::tapDiffJson(report) : analysis::renderTapDiffTable(report));
  if (!opt.out.empty() && !opt.json) std::cout << "per-position arrays: " << opt.out << "\n";
  return report.withinTolerance() ? 0 : 1;
}

}  // namespace

void registerDiffDumpCommand(CLI::App& app) {
  auto opt = std::make_shared<DiffDumpOptions>();
  CLI::App* sub = app.add_subcommand(
      "diff-dump",
      "Per-layer, per-position differences between our taps (forward/draft) and an external dump of the same "
      "tensors. Exit code 0: all within tolerance; 1: some tensor beyond it");
  sub->add_option("ours", opt->ours, "Our dump (.safetensors from `forward` or `draft`)")->required();
  sub->add_option("theirs", opt->theirs,
                  "Their dump (.safetensors; transformers' hidden_states.<k> pairs with our hidden.<k-1>, a leading "
                  "batch dimension of 1 is set aside)")
      ->required();
  sub->add_option("--map", opt->mappings, "THEIR=OUR: pair two tensors whose names the rules do not pair (repeatable)");
  sub->add_option("--tolerance", opt->tolerance, "Largest max abs difference per position that still matches")
      ->capture_default_str();
  sub->add_flag("--json", opt->json, "Print one JSON document (with per-position arrays) instead of the table");
  sub->add_option("--out", opt->out,
                  "Also write <name>.max_abs_diff, .rms_diff, .relative_diff, .cosine per position to this "
                  ".safetensors file");
  setAction(*sub, [opt] { return runDiffDump(*opt); });
}

}  // namespace dfi::eval
