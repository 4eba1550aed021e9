#pragma once
// Progress of `run` and `demo`: a bar with ETA on a terminal, a plain line every few seconds in
// a log file, or JSON lines for scripts and cluster dashboards (`--progress json`, on stdout:
// stdout then carries nothing but JSON, warnings and errors stay on stderr). Torch-free.

#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dfi/engine/evaluation.h"

namespace dfi::eval {

enum class ProgressStyle { Auto, Bar, Plain, Json, None };

// "auto" (a bar when stderr is a terminal, else plain lines), "bar", "plain", "json", "none";
// throws dfi::UsageError naming --progress otherwise.
ProgressStyle parseProgressStyle(std::string_view text);

// "1h02m", "3m05s", "12s": short enough for a bar.
std::string formatDuration(double seconds);
// [=========>          ] 12/40 30%  elapsed 1m02s  eta 2m24s  drafter: prompt 12/40
std::string progressBarLine(const engine::EvaluationProgress& p, int width);
// One JSON object, no newline: {"event":"progress","done":..,"total":..,...} plus `context`.
std::string progressJsonLine(const engine::EvaluationProgress& p, const nlohmann::json& context);

class ProgressReporter {
 public:
  // `context` (e.g. the shard) is added to every JSON event.
  ProgressReporter(ProgressStyle style, nlohmann::json context = nlohmann::json::object());

  ProgressStyle style() const { return style_; }
  void report(const engine::EvaluationProgress& p);
  void finish();  // ends the bar's line
  // JSON style only: {"event": name, ...fields, ...context} on stdout.
  void event(const std::string& name, nlohmann::json fields);

 private:
  ProgressStyle style_;
  nlohmann::json context_;
  double lastPlainSeconds_ = -1e9;
  bool barOpen_ = false;
};

}  // namespace dfi::eval
