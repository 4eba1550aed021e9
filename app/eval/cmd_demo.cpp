// dflash-eval demo: every bundled demo drafter on the demo prompts (live, teacher-forced and
// DDTree-8; reference and anchor-visible masks) into a session, with the tau table. The demo
// (resources/demo, made by tools/demo) tells the story of an anchor-visible mask bug in numbers,
// and has a drafter trained on taps one layer earlier than its config names (drafter-tap-shifted).

#include <algorithm>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "session_evaluation.h"

namespace dfi::eval {
namespace {

namespace fs = std::filesystem;

engine::EvaluationSettings demoSettings(const fs::path& dir) {
  if (!fs::is_directory(dir / "target") || !fs::exists(dir / "prompts.jsonl"))
    throw IoError("not a demo directory (needs target/ and prompts.jsonl)", {.file = dir.string()});
  engine::EvaluationSettings s;
  s.target = dir / "target";
  s.prompts = dir / "prompts.jsonl";
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().starts_with("drafter"))
      s.drafters.push_back(entry.path());
  // The summary compares every drafter with the first: the good one, so the table reads as
  // "the early checkpoint / the bugged drafter against the good one".
  std::sort(s.drafters.begin(), s.drafters.end(), [](const fs::path& a, const fs::path& b) {
    const bool aGood = a.filename() == "drafter-good", bGood = b.filename() == "drafter-good";
    return aGood != bGood ? aGood : a < b;
  });
  if (s.drafters.empty()) throw IoError("no drafter-* directories", {.file = dir.string()});
  s.maskVariants = {analysis::MaskVariant::Reference, analysis::MaskVariant::AnchorVisible};
  s.ddtreeBudget = 8;
  s.topK = 8;
  s.maxNewTokens = 96;
  // So that the statistics panel has something to show for every teacher-forced block of the
  // demo without an engine (attention is fetched per block: it is large).
  s.hiddenStatistics = true;
  return s;
}

}  // namespace

void registerDemoCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Evaluate the bundled demo drafters into a session and print the tau table");
  auto dir = std::make_shared<std::string>(DFI_DEMO_DIR);
  auto session = std::make_shared<std::string>("demo.dfi");
  sub->add_option("--demo-dir", *dir, "The demo's directory")->capture_default_str();
  sub->add_option("-o,--session", *session, "Session file to write (replaced if it exists)")->capture_default_str();
  setAction(*sub, [dir, session] { return evaluateIntoSession(demoSettings(*dir), *session, true); });
}

}  // namespace dfi::eval
