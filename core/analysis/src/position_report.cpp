#include "dfi/analysis/position_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "dfi/base/field_table.h"
#include "dfi/session/record_fields.h"
#include "fixed_text.h"

namespace dfi::analysis {
namespace {

using detail::fixed;

std::string binName(std::int64_t begin, std::int64_t end) {
  char text[48];
  std::snprintf(text, sizeof text, "[%lld,%lld)", static_cast<long long>(begin), static_cast<long long>(end));
  return text;
}

// Rows of cells, columns padded to their widest cell, the first column left-aligned, the others
// right-aligned; long rows are cut into chunks of `perLine` value columns, the row names repeated.
std::string transposedTable(const std::vector<std::vector<std::string>>& rows, std::size_t perLine) {
  std::string out;
  const std::size_t values = rows.empty() ? 0 : rows.front().size() - 1;
  std::size_t nameWidth = 0;
  for (const auto& row : rows) nameWidth = std::max(nameWidth, row.front().size());
  for (std::size_t from = 0; from < values; from += perLine) {
    const std::size_t to = std::min(values, from + perLine);
    std::vector<std::size_t> width(to - from, 0);
    for (const auto& row : rows)
      for (std::size_t c = from; c < to; ++c) width[c - from] = std::max(width[c - from], row[c + 1].size());
    for (const auto& row : rows) {
      std::string line = "    " + row.front() + std::string(nameWidth - row.front().size(), ' ');
      for (std::size_t c = from; c < to; ++c)
        line += "  " + std::string(width[c - from] - row[c + 1].size(), ' ') + row[c + 1];
      out += line + "\n";
    }
  }
  return out;
}

// A reliability diagram's non-empty bins and its ECE line.
std::string reliabilityTable(const Calibration& c, const std::string& predicted, const std::string& observed) {
  std::vector<std::vector<std::string>> rows{{predicted}, {"slots"}, {"mean P"}, {observed}};
  for (const ReliabilityBin& r : c.bins) {
    if (r.count == 0) continue;
    rows[0].push_back(fixed(r.begin, 1) + "-" + fixed(r.end, 1));
    rows[1].push_back(std::to_string(r.count));
    rows[2].push_back(fixed(r.meanProbability, 3));
    rows[3].push_back(fixed(r.acceptedFraction, 3));
  }
  return transposedTable(rows, 10) + "    ECE " + fixed(c.expectedCalibrationError, 3) + " over " +
         std::to_string(c.scoredSlots) + " slots (mean P " + fixed(c.meanProbability, 3) + ", " + observed + " " +
         fixed(c.acceptedFraction, 3) + ")\n";
}

// DSpark's confidence head: its predicted prefix survival's reliability, and the verify lengths
// thresholds on it would choose.
std::string confidenceSection(const PositionMetrics& m) {
  if (m.confidenceCalibration.scoredSlots == 0) return "";
  std::string out = "    confidence head: predicted survival of each draft prefix\n" +
                    reliabilityTable(m.confidenceCalibration, "P(prefix)", "survived");
  std::vector<std::vector<std::string>> rows{{"threshold"}, {"drafts"}, {"tau"}, {"saved"}, {"lost"}};
  for (const VerifyLengthWhatIf& v : m.verifyLengths) {
    rows[0].push_back(fixed(v.threshold, 1));
    rows[1].push_back(fixed(v.meanVerifiedDrafts, 2));
    rows[2].push_back(fixed(v.meanAcceptLength, 3));
    rows[3].push_back(fixed(v.savedDraftsPerStep, 2));
    rows[4].push_back(fixed(v.lostTokensPerStep, 3));
  }
  return out + "    verify length by confidence threshold, per step (the fixed block verifies " +
         fixed(m.fixedVerifiedDrafts, 2) + " drafts):\n" + transposedTable(rows, 10);
}

}  // namespace

std::string formatPositionSection(const PositionMetrics& m, const std::string& runName) {
  std::string out = "positions: " + runName + " (" + std::string(enumName(m.mode)) + ", " + std::to_string(m.steps) +
                    " steps, B = " + std::to_string(m.blockSize) + ")\n";
  if (m.steps == 0) return out;
  std::vector<std::vector<std::string>> slots{{"draft slot"}, {"accepted"}};
  for (std::size_t i = 0; i < m.slotAcceptance.size(); ++i) {
    slots[0].push_back(std::to_string(i + 1));
    slots[1].push_back(fixed(m.slotAcceptance[i], 3));
  }
  if (!m.slotOverlap.empty()) {
    slots.push_back({"sum min(p,q)"});
    slots.push_back({"reached T=1"});
    for (std::size_t i = 0; i < m.slotAcceptance.size(); ++i) {
      slots[slots.size() - 2].push_back(i < m.slotOverlap.size() ? fixed(m.slotOverlap[i], 3) : "-");
      slots.back().push_back(i < m.slotOverlapSurvival.size() ? fixed(m.slotOverlapSurvival[i], 3) : "-");
    }
  }
  out += transposedTable(slots, 16);
  if (m.analyticAcceptLength)
    out += "    accept_len at T=1 (speculators' analytic, from sum min(p,q)): " +
           fixed(m.analyticAcceptLength->estimate, 3) + " [" + fixed(m.analyticAcceptLength->low, 3) + ", " +
           fixed(m.analyticAcceptLength->high, 3) + "]\n";

  std::vector<std::vector<std::string>> bins{{"anchor at"}, {"steps"}, {"tau"}, {"95% CI"}};
  for (const AnchorBinTau& b : m.anchorBins) {
    bins[0].push_back(binName(b.begin, b.end));
    bins[1].push_back(std::to_string(b.steps));
    bins[2].push_back(fixed(b.meanLength.estimate, 3));
    bins[3].push_back(fixed(b.meanLength.low, 2) + "-" + fixed(b.meanLength.high, 2));
  }
  out += transposedTable(bins, 8);

  const Calibration& c = m.calibration;
  if (c.scoredSlots == 0)
    out += "    calibration: no top-k probabilities recorded (run --record-top-k K)\n";
  else
    out += reliabilityTable(c, "P(draft)", "accepted") +
           (c.unscoredSlots > 0 ? "    " + std::to_string(c.unscoredSlots) + " drafts outside the top-k\n" : "");
  out += confidenceSection(m);
  return m.selector ? out + formatSelectorMetrics(*m.selector) : out;
}

std::string positionSectionsLegend() {
  return "positions, per run and mode (dfi/analysis/position_metrics.h):\n"
         "  accepted: fraction of steps whose draft slot i was accepted (vLLM's per-position acceptance rate)\n"
         "  sum min(p,q) (teacher-forced): the mean overlap of the slot's draft and target distributions, the\n"
         "    chance sampling at T=1 accepts it after the true text (speculators' accept_rate); reached T=1: the\n"
         "    mean of their running products, the chance at T=1 the slot is reached and accepted (as accepted is,\n"
         "    greedy); accept_len at T=1: 1 + the sum of reached T=1 (speculators' accept_len), with its\n"
         "    95% bootstrap interval over prompts; a reduced draft vocabulary's training log reads it higher (its\n"
         "    target distribution renormalized over the draft ids)\n"
         "  anchor at: anchor positions in the context; tau: the bin's mean acceptance length, with its 95%\n"
         "    bootstrap interval over prompts\n"
         "  P(draft): the drafter's top-k probability of its draft; accepted: the fraction of those drafts equal\n"
         "    to the target's token (teacher-forced and DDTree: every slot; live: the slots the verifier reached);\n"
         "    ECE: sum over bins of slots / all slots * |accepted - mean P|\n"
         "  P(prefix) (DSpark): the confidence head's product of slot acceptance rates up to the slot; survived:\n"
         "    the fraction of those prefixes all accepted. threshold: verify only the drafts whose P(prefix) is at\n"
         "    least it; drafts: verified per step; tau: the acceptance length then; saved: drafts not verified;\n"
         "    lost: accepted tokens beyond the shorter length\n";
}

namespace {

nlohmann::json calibrationJson(const Calibration& c) {
  nlohmann::json reliability = nlohmann::json::array();
  for (const ReliabilityBin& r : c.bins)
    reliability.push_back({{"begin", r.begin},
                           {"end", r.end},
                           {"slots", r.count},
                           {"mean_probability", r.meanProbability},
                           {"accepted_fraction", r.acceptedFraction}});
  return {{"slots", c.scoredSlots},
          {"unscored_slots", c.unscoredSlots},
          {"ece", c.expectedCalibrationError},
          {"mean_probability", c.meanProbability},
          {"accepted_fraction", c.acceptedFraction},
          {"bins", reliability}};
}

}  // namespace

nlohmann::json positionMetricsJson(const PositionMetrics& m) {
  nlohmann::json bins = nlohmann::json::array();
  for (const AnchorBinTau& b : m.anchorBins)
    bins.push_back({{"begin", b.begin},
                    {"end", b.end},
                    {"steps", b.steps},
                    {"prompts", b.prompts},
                    {"tau", b.meanLength.estimate},
                    {"tau_ci95", {b.meanLength.low, b.meanLength.high}}});
  nlohmann::json verify = nlohmann::json::array();
  for (const VerifyLengthWhatIf& v : m.verifyLengths)
    verify.push_back({{"threshold", v.threshold},
                      {"verified_drafts", v.meanVerifiedDrafts},
                      {"tau", v.meanAcceptLength},
                      {"saved_drafts", v.savedDraftsPerStep},
                      {"lost_tokens", v.lostTokensPerStep}});
  return {{"run_id", m.runId},
          {"mode", std::string(enumName(m.mode))},
          {"block_size", m.blockSize},
          {"steps", m.steps},
          {"slot_acceptance", m.slotAcceptance},
          {"slot_overlap", m.slotOverlap},
          {"slot_overlap_survival", m.slotOverlapSurvival},
          {"analytic_accept_len",
           m.analyticAcceptLength ? nlohmann::json{{"estimate", m.analyticAcceptLength->estimate},
                                                   {"ci95", {m.analyticAcceptLength->low, m.analyticAcceptLength->high}}}
                                  : nlohmann::json(nullptr)},
          {"tau_by_anchor_position", bins},
          {"calibration", calibrationJson(m.calibration)},
          {"confidence_calibration", calibrationJson(m.confidenceCalibration)},
          {"fixed_verified_drafts", m.fixedVerifiedDrafts},
          {"verify_length_by_confidence", verify},
          {"selector", m.selector ? selectorMetricsJson(*m.selector) : nlohmann::json(nullptr)}};
}

void exportPositionMetrics(session::Reader& reader, session::ExportFormat format, std::ostream& out) {
  session::RowSink sink(out, format);
  for (const session::RunRecord& run : reader.runs())
    for (const PositionMetrics& m : computePositionMetrics(reader, run)) {
      if (format == session::ExportFormat::Json) {
        sink.write(session::RowSink::Row(positionMetricsJson(m)));
        continue;
      }
      // One schema for the three tables: `index` is the slot or the bin, begin/end the bin's
      // range (positions or probabilities), `value` the table's figure (slot rate, tau,
      // accepted fraction), low/high tau's interval, mean_probability the reliability bin's.
      auto line = [&](const char* table, std::size_t index, double begin, double end, std::int64_t count, double value,
                      double low, double high, double meanProbability) {
        session::RowSink::Row row = session::RowSink::Row::object();
        row["run_id"] = m.runId;
        row["mode"] = std::string(enumName(m.mode));
        row["table"] = table;
        row["index"] = index;
        row["begin"] = begin;
        row["end"] = end;
        row["count"] = count;
        row["value"] = value;
        row["low"] = low;
        row["high"] = high;
        row["mean_probability"] = meanProbability;
        sink.write(row);
      };
      for (std::size_t i = 0; i < m.slotAcceptance.size(); ++i)
        line("slot_acceptance", i, static_cast<double>(i), static_cast<double>(i + 1), m.steps, m.slotAcceptance[i],
             m.slotAcceptance[i], m.slotAcceptance[i], 0);
      for (std::size_t i = 0; i < m.slotOverlap.size(); ++i) {
        line("slot_overlap", i, static_cast<double>(i), static_cast<double>(i + 1), m.steps, m.slotOverlap[i],
             m.slotOverlap[i], m.slotOverlap[i], 0);
        line("slot_overlap_survival", i, static_cast<double>(i), static_cast<double>(i + 1), m.steps,
             m.slotOverlapSurvival[i], m.slotOverlapSurvival[i], m.slotOverlapSurvival[i], 0);
      }
      if (const auto& a = m.analyticAcceptLength)
        line("analytic_accept_len", 0, 0, 0, m.steps, a->estimate, a->low, a->high, 0);
      for (std::size_t i = 0; i < m.anchorBins.size(); ++i) {
        const AnchorBinTau& b = m.anchorBins[i];
        line("tau_by_anchor_position", i, static_cast<double>(b.begin), static_cast<double>(b.end), b.steps,
             b.meanLength.estimate, b.meanLength.low, b.meanLength.high, 0);
      }
      // The draft probability's reliability, and the confidence head's (DSpark; the verify
      // lengths its thresholds choose are in the JSON export).
      auto reliability = [&](const Calibration& c, const char* table, const char* ece) {
        for (std::size_t i = 0; i < c.bins.size(); ++i) {
          const ReliabilityBin& r = c.bins[i];
          line(table, i, r.begin, r.end, r.count, r.acceptedFraction, r.acceptedFraction, r.acceptedFraction,
               r.meanProbability);
        }
        line(ece, 0, 0, 1, c.scoredSlots, c.expectedCalibrationError, c.expectedCalibrationError,
             c.expectedCalibrationError, c.meanProbability);
      };
      reliability(m.calibration, "reliability", "calibration_ece");
      if (m.confidenceCalibration.scoredSlots > 0)
        reliability(m.confidenceCalibration, "confidence_reliability", "confidence_ece");
    }
}

}  // namespace dfi::analysis
