#include "dfi/analysis/tap_diff_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include <nlohmann/json.hpp>

#include "dfi/tensorfile/safetensors_writer.h"
#include "dfi/tensorfile/shape_text.h"

namespace dfi::analysis {
namespace {

std::string number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string cosineText(double value) {
  if (!std::isfinite(value)) return number(value);
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", value);  // 1.000000 vs 0.999985: %.3g would say 1 for both
  return text;
}

std::string displayName(const TensorDiff& t) { return t.theirs == t.ours ? t.ours : t.ours + " <- " + t.theirs; }

std::string padded(const std::string& text, std::size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

nlohmann::ordered_json finiteOrNull(double value) { return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(); }

nlohmann::ordered_json array(const std::vector<double>& values) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (double v : values) out.push_back(finiteOrNull(v));
  return out;
}

}  // namespace

std::string renderTapDiffTable(const TapDiffReport& report) {
  std::vector<std::vector<std::string>> rows{{"tensor", "shape", "max abs diff", "worst pos", "first over tol", "min cosine"}};
  for (const TensorDiff& t : report.tensors)
    rows.push_back({displayName(t), tensorfile::shapeToString(t.shape), number(t.maxAbsDiff),
                    t.worstPosition < 0 || t.maxAbsDiff == 0 ? "-" : std::to_string(t.worstPosition),
                    t.firstOverTolerance < 0 ? "-" : std::to_string(t.firstOverTolerance), cosineText(t.minCosine)});
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());

  std::string out = "ours:   " + report.oursFile + "\ntheirs: " + report.theirsFile + "\n\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) line += padded(row[c], c + 1 < row.size() ? widths[c] + 2 : 0);
    out += line + "\n";
  }
  out += "\n";
  if (!report.unmatchedOurs.empty())
    out += "unmatched in ours (" + std::to_string(report.unmatchedOurs.size()) + "): " + joined(report.unmatchedOurs) + "\n";
  if (!report.unmatchedTheirs.empty())
    out += "unmatched in theirs (" + std::to_string(report.unmatchedTheirs.size()) +
           "): " + joined(report.unmatchedTheirs) + "\n";
  const auto beyond = report.beyondTolerance();
  out += std::to_string(report.tensors.size()) + (report.tensors.size() == 1 ? " tensor" : " tensors") +
         " compared, tolerance " + number(report.tolerance) + ": ";
  if (beyond.empty()) return out + "all within tolerance\n";
  std::vector<std::string> names;
  for (const TensorDiff* t : beyond) names.push_back(t->ours + " (from position " + std::to_string(t->firstOverTolerance) + ")");
  return out + std::to_string(beyond.size()) + " beyond tolerance: " + joined(names) + "\n";
}

std::string tapDiffJson(const TapDiffReport& report) {
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const TensorDiff& t : report.tensors) {
    tensors.push_back({
        {"name", t.ours},
        {"theirs", t.theirs},
        {"rule", t.rule},
        {"shape", t.shape},
        {"ours_shape", t.oursShape},
        {"theirs_shape", t.theirsShape},
        {"ours_dtype", t.oursDtype},
        {"theirs_dtype", t.theirsDtype},
        {"max_abs_diff", finiteOrNull(t.maxAbsDiff)},
        {"rms_diff", finiteOrNull(t.rmsDiff)},
        {"min_cosine", finiteOrNull(t.minCosine)},
        {"worst_position", t.worstPosition < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(t.worstPosition)},
        {"first_position_over_tolerance",
         t.firstOverTolerance < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(t.firstOverTolerance)},
        {"within_tolerance", t.withinTolerance()},
        {"positions",
         {{"max_abs_diff", array(t.positions.maxAbsDiff)},
          {"rms_diff", array(t.positions.rmsDiff)},
          {"relative_diff", array(t.positions.relativeDiff)},
          {"cosine", array(t.positions.cosine)}}},
    });
  }
  const nlohmann::ordered_json doc{
      {"ours", report.oursFile},
      {"theirs", report.theirsFile},
      {"tolerance", report.tolerance},
      {"within_tolerance", report.withinTolerance()},
      {"tensors", std::move(tensors)},
      {"unmatched_ours", report.unmatchedOurs},
      {"unmatched_theirs", report.unmatchedTheirs},
  };
  return doc.dump() + "\n";
}

void writeTapDiffTensors(const TapDiffReport& report, const std::filesystem::path& file) {
  tensorfile::SafetensorsWriter writer(file);
  auto add = [&](const std::string& name, const std::vector<double>& values) {
    std::vector<float> narrow(values.begin(), values.end());
    writer.add(name, tensorfile::DType::F32, {static_cast<std::int64_t>(narrow.size())},
               std::as_bytes(std::span(narrow)));
  };
  for (const TensorDiff& t : report.tensors) {
    add(t.ours + ".max_abs_diff", t.positions.maxAbsDiff);
    add(t.ours + ".rms_diff", t.positions.rmsDiff);
    add(t.ours + ".relative_diff", t.positions.relativeDiff);
    add(t.ours + ".cosine", t.positions.cosine);
    writer.setMetadata("theirs." + t.ours, t.theirs);
  }
  writer.setMetadata("ours", report.oursFile);
  writer.setMetadata("theirs", report.theirsFile);
  writer.setMetadata("tolerance", number(report.tolerance));
  writer.finish();
}

}  // namespace dfi::analysis
