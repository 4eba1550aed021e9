#include "progress_report.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "dfi/base/error.h"

namespace dfi::eval {
namespace {

// A log file gets a line at most this often (and the last one), not one per prompt.
constexpr double kPlainIntervalSeconds = 5.0;
constexpr int kBarWidth = 30;
constexpr int kMinBarWidth = 10;

// A drafter directory's name may hold bytes that are not UTF-8; they must not abort a run.
std::string dumpLine(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

ProgressStyle parseProgressStyle(std::string_view text) {
  if (text == "auto") return ProgressStyle::Auto;
  if (text == "bar") return ProgressStyle::Bar;
  if (text == "plain") return ProgressStyle::Plain;
  if (text == "json") return ProgressStyle::Json;
  if (text == "none") return ProgressStyle::None;
  throw UsageError("--progress: '" + std::string(text) + "' is not auto, bar, plain, json or none");
}

std::string formatDuration(double seconds) {
  const long long s = std::llround(std::max(0.0, seconds));
  char text[32];
  if (s >= 3600) std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  else if (s >= 60) std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%llds", s);
  return text;
}

std::string progressBarLine(const engine::EvaluationProgress& p, int width) {
  const double fraction = p.total > 0 ? std::clamp(static_cast<double>(p.done) / static_cast<double>(p.total), 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(fraction * width);
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '=');
  if (filled < width) bar += ">" + std::string(static_cast<std::size_t>(width - filled - 1), ' ');
  bar += "]";
  char counts[64];
  std::snprintf(counts, sizeof counts, " %lld/%lld %3.0f%%", static_cast<long long>(p.done),
                static_cast<long long>(p.total), fraction * 100);
  // Nothing is done before the first prompt: no rate, so no ETA. The label goes last, where a
  // narrow terminal cuts it.
  return bar + counts + "  elapsed " + formatDuration(p.elapsedSeconds) + "  eta " +
         (p.done > 0 ? formatDuration(p.etaSeconds) : "-") + "  " + p.current;
}

std::string progressJsonLine(const engine::EvaluationProgress& p, const nlohmann::json& context) {
  nlohmann::json j = {{"event", "progress"},
                      {"done", p.done},
                      {"total", p.total},
                      {"fraction", p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 0.0},
                      {"elapsed_s", p.elapsedSeconds},
                      {"eta_s", p.done > 0 ? nlohmann::json(p.etaSeconds) : nlohmann::json(nullptr)},
                      {"current", p.current}};
  j.update(context);
  return dumpLine(j);
}

ProgressReporter::ProgressReporter(ProgressStyle style, nlohmann::json context)
    : style_(style), context_(std::move(context)) {
  if (style_ == ProgressStyle::Auto) style_ = isatty(fileno(stderr)) ? ProgressStyle::Bar : ProgressStyle::Plain;
}

void ProgressReporter::report(const engine::EvaluationProgress& p) {
  switch (style_) {
    case ProgressStyle::Bar: {
      // \r and clear-to-end: the bar redraws in place and a shorter line leaves no tail. A line
      // wider than the terminal would wrap, and \r would then redraw only its last row.
      // A narrow terminal first gets a shorter bar, then loses the end of the label.
      std::string line = progressBarLine(p, kBarWidth);
      winsize size{};
      if (ioctl(fileno(stderr), TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && line.size() >= size.ws_col) {
        const int spare = static_cast<int>(size.ws_col) - 1 - static_cast<int>(line.size() - kBarWidth);
        line = progressBarLine(p, std::clamp(spare, kMinBarWidth, kBarWidth));
        if (line.size() >= size.ws_col) line.resize(size.ws_col - 1u);
      }
      std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
      std::fflush(stderr);
      barOpen_ = true;
      break;
    }
    case ProgressStyle::Plain:
      if (p.done == p.total || p.elapsedSeconds - lastPlainSeconds_ >= kPlainIntervalSeconds) {
        std::fprintf(stderr, "[%lld/%lld] %s  elapsed %s  eta %s\n", static_cast<long long>(p.done),
                     static_cast<long long>(p.total), p.current.c_str(), formatDuration(p.elapsedSeconds).c_str(),
                     p.done > 0 ? formatDuration(p.etaSeconds).c_str() : "-");
        lastPlainSeconds_ = p.elapsedSeconds;
      }
      break;
    case ProgressStyle::Json:
      std::printf("%s\n", progressJsonLine(p, context_).c_str());
      std::fflush(stdout);
      break;
    case ProgressStyle::Auto:
    case ProgressStyle::None:
      break;
  }
}

void ProgressReporter::finish() {
  if (barOpen_) std::fprintf(stderr, "\n");
  barOpen_ = false;
}

void ProgressReporter::event(const std::string& name, nlohmann::json fields) {
  if (style_ != ProgressStyle::Json) return;
  nlohmann::json j = {{"event", name}};
  j.update(fields);
  j.update(context_);
  std::printf("%s\n", dumpLine(j).c_str());
  std::fflush(stdout);
}

}  // namespace dfi::eval
