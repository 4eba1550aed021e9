// --progress: each JSON line is one JSON object with the counts and the shard; the bar and
// durations read as a person expects.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "progress_report.h"

using namespace dfi;
using namespace dfi::eval;

TEST(ProgressReport, JsonLineParses) {
  const engine::EvaluationProgress p{3, 12, 30.5, 91.5, "step20k: prompt 3/6 \"quoted\""};
  const std::string line = progressJsonLine(p, {{"shard", "1/4"}});
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line per event";
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["event"], "progress");
  EXPECT_EQ(j["done"], 3);
  EXPECT_EQ(j["total"], 12);
  EXPECT_DOUBLE_EQ(j["fraction"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["eta_s"].get<double>(), 91.5);
  EXPECT_EQ(j["current"], p.current);
  EXPECT_EQ(j["shard"], "1/4");
}

TEST(ProgressReport, NoEtaBeforeTheFirstPrompt) {
  const engine::EvaluationProgress loaded{0, 12, 40, 0, "models loaded"};
  EXPECT_TRUE(nlohmann::json::parse(progressJsonLine(loaded, nlohmann::json::object()))["eta_s"].is_null());
  EXPECT_NE(progressBarLine(loaded, 10).find("eta -"), std::string::npos);
}

TEST(ProgressReport, InvalidUtf8InANameStillGivesJson) {
  const engine::EvaluationProgress p{1, 2, 1, 1, "ckpt-\xff: prompt 1/2"};
  EXPECT_NO_THROW(nlohmann::json::parse(progressJsonLine(p, nlohmann::json::object())));
}

TEST(ProgressReport, BarAndDurations) {
  EXPECT_EQ(formatDuration(12.4), "12s");
  EXPECT_EQ(formatDuration(185), "3m05s");
  EXPECT_EQ(formatDuration(3725), "1h02m");
  EXPECT_EQ(formatDuration(-3), "0s");
  const std::string bar = progressBarLine({5, 10, 60, 60, "d: prompt 5/10"}, 10);
  EXPECT_EQ(bar.substr(0, 12), "[=====>    ]");
  EXPECT_NE(bar.find("5/10"), std::string::npos);
  EXPECT_NE(bar.find("50%"), std::string::npos);
  EXPECT_NE(bar.find("eta 1m00s"), std::string::npos);
  EXPECT_EQ(progressBarLine({10, 10, 1, 0, ""}, 10).substr(0, 12), "[==========]");
}

TEST(ProgressReport, StyleNames) {
  EXPECT_EQ(parseProgressStyle("json"), ProgressStyle::Json);
  EXPECT_EQ(parseProgressStyle("none"), ProgressStyle::None);
  EXPECT_THROW(parseProgressStyle("xml"), UsageError);
}
