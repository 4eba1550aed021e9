// Metrics of a recorded run (`export --what metrics`): computeRunMetrics against hand-computed
// tau in the three conventions, and the export's JSON and CSV forms.

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "dfi/analysis/metrics_export.h"
#include "dfi/analysis/run_metrics.h"
#include "dfi/session/reader.h"
#include "session_test_util.h"

using namespace dfi::session;
using dfi::analysis::computeRunMetrics;
using dfi::analysis::exportRunMetrics;
using dfi::analysis::RunMetrics;

TEST(RunMetrics, MatchHandComputedTau) {
  Reader reader(testutil::writeKnownAcceptance());
  const auto metrics = computeRunMetrics(reader, reader.runs().at(0));
  ASSERT_EQ(metrics.size(), 1u);
  const RunMetrics& m = metrics[0];
  EXPECT_EQ(m.steps, 3);
  EXPECT_DOUBLE_EQ(m.tauReference, (3.0 + 1.0) / 2);  // per-response means (4+2)/2 and 1/1
  EXPECT_DOUBLE_EQ(m.tauVllm, 1.0 + 4.0 / 3.0);       // 1 + accepted drafts / steps
  ASSERT_TRUE(m.tauSglang.has_value());  // live steps
  EXPECT_DOUBLE_EQ(*m.tauSglang, (7.0 / 2 + 2.0 / 1) / 2);  // (1 + sum L) / steps per response
  ASSERT_EQ(m.perPrompt.size(), 2u);
  EXPECT_DOUBLE_EQ(m.perPrompt[0].tau, 3.0);
  ASSERT_EQ(m.acceptHistogram.size(), 17u);
  EXPECT_DOUBLE_EQ(m.acceptHistogram[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.acceptHistogram[2], 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.acceptHistogram[4], 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.acceptHistogram[3], 0.0);

  std::ostringstream json;
  exportRunMetrics(reader, ExportFormat::Json, json);
  const auto parsed = nlohmann::json::parse(json.str());
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_DOUBLE_EQ(parsed[0]["tau_reference"].get<double>(), 2.0);
  EXPECT_EQ(parsed[0]["mode"], "live");

  std::ostringstream csv;
  exportRunMetrics(reader, ExportFormat::Csv, csv);
  EXPECT_EQ(csv.str().substr(0, csv.str().find('\n')), "run_id,mode,metric,prompt_id,bucket,value");
  EXPECT_NE(csv.str().find("1,live,tau_reference,-1,-1,2.0\n"), std::string::npos) << csv.str();
}

// SGLang's tau needs a completion; teacher-forced and DDTree steps have none, so the figure
// is absent rather than borrowed from the live run.
TEST(RunMetrics, SglangTauIsOnlyForLiveSteps) {
  const std::string path = testutil::freshPath("teacher_forced_metrics.dfi");
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    RunRecord run;
    run.blockSize = 16;
    const RunId id = writer.addRun(run);
    writer.addPrompt({id, 0, "", 0, "", {1, 2}, 9});
    StepRecord step;
    step.runId = id;
    step.mode = EvaluationMode::TeacherForced;
    step.draftTokens = {5, 6, 7, 8};
    step.targetTokens = {5, 6, 7, 9};
    step.acceptedCount = 3;
    writer.addStep(step);
    writer.close();
  }
  Reader reader(path);
  const auto metrics = computeRunMetrics(reader, reader.runs().at(0));
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].mode, EvaluationMode::TeacherForced);
  EXPECT_FALSE(metrics[0].tauSglang.has_value());
  EXPECT_DOUBLE_EQ(metrics[0].tauReference, 4.0);
}
