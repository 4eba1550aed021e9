#include "diagnosis_report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/analysis/finding_words.h"
#include "dfi/session/reader.h"

namespace dfi::eval {
namespace {

std::string printf3(const char* format, double a, double b = 0, double c = 0) {
  char text[96];
  std::snprintf(text, sizeof text, format, a, b, c);
  return text;
}

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text += std::string(width - text.size(), ' ');
  return text;
}

}  // namespace

std::string formatDiagnosis(const analysis::Diagnosis& d, int rows) {
  std::string out = "diagnosis of " + d.drafter + ": baseline tau " +
                    printf3("%.3f [%.3f, %.3f]", d.baselineTau.estimate, d.baselineTau.low, d.baselineTau.high) +
                    " (teacher-forced at the live anchors)\n";
  if (!d.lint.empty()) out += "lint:\n";
  for (const analysis::LintFinding& f : d.lint)
    out += "  " + padded(std::string(analysis::lintSeverityName(f.severity)), 8) + f.code + "  " + f.subject + "\n    " +
           f.message + "\n";
  std::size_t width = 10;
  for (const analysis::HypothesisResult& h : d.hypotheses) width = std::max(width, h.planned.name.size());
  out += "hypotheses, by what each would be worth (paired tau difference vs the baseline, 95% bootstrap):\n";
  out += "  " + padded("hypothesis", width) + "  delta tau  interval            tau\n";
  const std::size_t shown = rows > 0 ? std::min<std::size_t>(static_cast<std::size_t>(rows), d.hypotheses.size())
                                     : d.hypotheses.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const analysis::HypothesisResult& h = d.hypotheses[i];
    out += "  " + padded(h.planned.name, width) + "  ";
    if (h.measured())
      out += printf3("%+9.3f  [%+.3f, %+.3f]", h.deltaTau.estimate, h.deltaTau.low, h.deltaTau.high) +
             printf3("  %.3f", h.tau.estimate) + (h.candidateCause() ? "  <- candidate cause: " + h.planned.change : "") +
             "\n";
    else
      out += (h.planned.applicable ? "not measured: the diagnosis stopped before it" : "not applicable: " + h.planned.reason) +
             "\n";
  }
  if (shown < d.hypotheses.size())
    out += "  (" + std::to_string(d.hypotheses.size() - shown) + " more in the session: dflash-eval diagnose lists them all)\n";
  const auto top = d.hypotheses.empty() ? nullptr : &d.hypotheses.front();
  if (top && top->measured() && !analysis::verdictPossible(top->pairedPrompts))
    out += "only " + std::to_string(top->pairedPrompts) + " prompts measured: a verdict needs at least " +
           std::to_string(analysis::kMinPromptsForVerdict) + ", so no candidate cause is named (--limit)\n";
  else if (top && top->candidateCause()) {
    out += "top hypothesis: " + top->planned.name + " (" + top->planned.change + "): the drafter does better this way, "
           "so it was probably trained (or is served) so\n";
    if (const auto words = analysis::findingWords(top->planned)) out += "  " + words->meaning + "\n  What to do: " + words->action + "\n";
    if (const std::string block = analysis::strongestBlock(*top); !block.empty()) out += "  See " + block + "\n";
  }
  else
    out += "no hypothesis raises tau beyond noise: no candidate cause among these\n";
  return out;
}

std::vector<analysis::Diagnosis> readSessionDiagnoses(const std::string& sessionPath) {
  session::Reader reader(sessionPath);
  return analysis::readDiagnoses(
      reader.runs(), [&](session::RunId run, const auto& visit) { reader.forEachStepSummary(run, visit); },
      [&](session::RunId run, const auto& visit) { reader.forEachStep(run, visit); });
}

std::string diagnosesJson(const std::vector<analysis::Diagnosis>& diagnoses) {
  if (diagnoses.size() == 1) return analysis::diagnosisJson(diagnoses.front());
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const analysis::Diagnosis& d : diagnoses) all.push_back(nlohmann::ordered_json::parse(analysis::diagnosisJson(d)));
  return all.dump(2);
}

std::string diagnosesCsv(const std::vector<analysis::Diagnosis>& diagnoses) {
  auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string out = "drafter,baseline_run_id,name,applicable,delta_tau,ci_low,ci_high,tau,candidate_cause,reason\n";
  for (const analysis::Diagnosis& d : diagnoses)
    for (const analysis::HypothesisResult& h : d.hypotheses) {
      out += quoted(d.drafter) + "," + std::to_string(d.baseline) + "," + quoted(h.planned.name) + "," +
             (h.planned.applicable ? "true" : "false") + ",";
      if (h.measured())
        out += printf3("%.6f,%.6f,%.6f", h.deltaTau.estimate, h.deltaTau.low, h.deltaTau.high) +
               printf3(",%.6f", h.tau.estimate) + (h.candidateCause() ? ",true," : ",false,");
      else
        out += ",,,,false," + quoted(h.planned.applicable ? "not measured" : h.planned.reason);
      out += "\n";
    }
  return out;
}

}  // namespace dfi::eval
