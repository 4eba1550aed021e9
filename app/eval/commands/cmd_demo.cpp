// dflash-eval demo: every bundled demo drafter on the demo prompts (live, teacher-forced and
// DDTree-8; reference and anchor-visible masks) into a session, with the tau table; then the
// diagnosis of the good drafter and of each bugged one, appended to the same session. The demo
// (resources/demo, made by tools/demo) tells the story of an anchor-visible mask bug in numbers,
// and has a drafter trained on taps one layer earlier than its config names (drafter-tap-shifted).

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "session_diagnosis.h"
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

// The drafters the diagnosis must explain (a planted bug each) and the good one, which must show
// no candidate cause; the early checkpoint is only undertrained.
engine::DiagnosisSettings demoDiagnosis(const engine::EvaluationSettings& evaluation) {
  engine::DiagnosisSettings d;
  d.evaluation = evaluation;
  d.evaluation.hiddenStatistics = false;
  std::erase_if(d.evaluation.drafters, [](const fs::path& p) { return p.filename() == "drafter-early"; });
  return d;
}

int runDemo(const fs::path& dir, const std::string& session) {
  const engine::EvaluationSettings settings = demoSettings(dir);
  if (const int code = evaluateIntoSession(settings, session, session::OpenMode::Overwrite); code != 0) return code;
  std::printf("\nDiagnosing the demo drafters (dflash-eval diagnose, into the same session):\n");
  std::fflush(stdout);
  return diagnoseIntoSession(demoDiagnosis(settings), session, {.mode = session::OpenMode::Append, .rows = 5});
}

}  // namespace

void registerDemoCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Evaluate the bundled demo drafters into a session, print the tau table, then diagnose the drafters");
  auto dir = std::make_shared<std::string>(DFI_DEMO_DIR);
  auto session = std::make_shared<std::string>("demo.dfi");
  sub->add_option("--demo-dir", *dir, "The demo's directory")->capture_default_str();
  sub->add_option("-o,--session", *session, "Session file to write (replaced if it exists)")->capture_default_str();
  setAction(*sub, [dir, session] { return runDemo(*dir, *session); });
}

}  // namespace dfi::eval
