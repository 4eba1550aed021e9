#include "series_report.h"

#include <map>
#include <system_error>

#include "dfi/analysis/checkpoint_series.h"
#include "dfi/analysis/position_metrics.h"
#include "dfi/analysis/recorded_summary.h"
#include "dfi/session/reader.h"

namespace dfi::eval {
namespace fs = std::filesystem;

namespace {

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(path, ec);
  return ec ? path : c;
}

}  // namespace

std::vector<analysis::SeriesMember> seriesMembers(const std::string& sessionPath, const fs::path& seriesDir) {
  std::map<fs::path, std::int64_t> steps;
  for (const analysis::SeriesCheckpoint& c : analysis::discoverCheckpoints(seriesDir)) steps[resolved(c.dir)] = c.step;
  const fs::path root = resolved(seriesDir);
  session::Reader reader(sessionPath);
  const std::vector<session::RunRecord> runs = reader.runs();
  const auto labels = analysis::drafterLabelsByPath(runs);
  std::vector<analysis::SeriesMember> members;
  std::set<std::string> seen;
  for (const session::RunRecord& run : runs) {
    const fs::path dir = resolved(run.drafter.path);
    if (dir.parent_path() != root || !seen.insert(run.drafter.path).second) continue;
    const auto step = steps.contains(dir) ? std::optional(steps.at(dir)) : analysis::stepFromName(dir.filename().string());
    if (!step) continue;
    analysis::SeriesMember member{.drafter = labels.at(run.drafter.path), .step = *step, .blockSize = run.blockSize};
    // The analytic accept_len of its teacher-forced run, where that recorded slot_overlap.
    for (const session::RunRecord& other : runs)
      if (!member.analytic && other.drafter.path == run.drafter.path && other.hypothesis.empty() &&
          other.mode == session::EvaluationMode::TeacherForced && other.maskVariant == session::MaskVariant::Reference)
        for (const analysis::PositionMetrics& m : analysis::computePositionMetrics(reader, other))
          if (m.mode == session::EvaluationMode::TeacherForced) member.analytic = m.analyticAcceptLength;
    members.push_back(std::move(member));
  }
  return members;
}

std::set<fs::path> evaluatedDrafters(const std::string& sessionPath) {
  std::set<fs::path> out;
  std::error_code ec;
  if (!fs::exists(sessionPath, ec)) return out;
  session::Reader reader(sessionPath);
  for (const session::RunRecord& run : reader.runs()) out.insert(resolved(run.drafter.path));
  return out;
}

}  // namespace dfi::eval
