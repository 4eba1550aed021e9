#include "dfi/analysis/alignment.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace dfi::analysis {

ResponseTrace traceOfSteps(const std::vector<session::StepRecord>& steps) {
  ResponseTrace trace;
  if (steps.empty()) return trace;
  trace.output.push_back(steps.front().anchorToken);
  for (const auto& step : steps) {
    const int length = step.acceptLength();
    trace.acceptLengths.push_back(length);
    // Accepted drafts then the bonus; a step cut by the budget or a stop token keeps `length`.
    std::vector<session::TokenId> committed(step.draftTokens.begin(),
                                            step.draftTokens.begin() + std::min<std::size_t>(
                                                static_cast<std::size_t>(step.acceptedCount), step.draftTokens.size()));
    committed.push_back(step.bonusToken);
    committed.resize(std::min(committed.size(), static_cast<std::size_t>(length)));
    trace.output.insert(trace.output.end(), committed.begin(), committed.end());
  }
  return trace;
}

const char* verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::Identical: return "identical";
    case Verdict::DrafterSide: return "drafter-side";
    case Verdict::TargetSide: return "target-side";
  }
  return "?";
}

namespace {

// The first step where the two ordered sequences of acceptance lengths differ, counting the
// end of the shorter one as a difference.
std::optional<int> firstDifferentStep(const std::vector<int>& a, const std::vector<int>& b) {
  const auto [ia, ib] = std::ranges::mismatch(a, b);
  if (ia == a.end() && ib == b.end()) return std::nullopt;
  return static_cast<int>(ia - a.begin());
}

bool sameMultiset(std::vector<int> a, std::vector<int> b) {
  std::ranges::sort(a);
  std::ranges::sort(b);
  return a == b;
}

}  // namespace

ResponseAlignment alignResponse(session::PromptId prompt, const ResponseTrace& reference,
                                const ResponseTrace& imported) {
  ResponseAlignment a;
  a.prompt = prompt;
  a.referenceTokens = static_cast<std::int64_t>(reference.output.size());
  a.importedTokens = static_cast<std::int64_t>(imported.output.size());
  a.referenceSteps = static_cast<std::int64_t>(reference.acceptLengths.size());
  a.importedSteps = static_cast<std::int64_t>(imported.acceptLengths.size());
  if (!imported.output.empty()) {
    // Over the common length only: a pipeline with another budget or stop token stops
    // elsewhere, which is no departure from the target's greedy.
    const std::size_t common = std::min(reference.output.size(), imported.output.size());
    const auto [ir, ii] = std::mismatch(reference.output.begin(), reference.output.begin() + common,
                                        imported.output.begin());
    if (ir != reference.output.begin() + common) a.firstToken = ir - reference.output.begin();
    a.lossless = !a.firstToken;
  }
  if (reference.stepOrderKnown && imported.stepOrderKnown) {
    a.firstStep = firstDifferentStep(reference.acceptLengths, imported.acceptLengths);
    a.acceptanceDiffers = a.firstStep.has_value();
  } else {
    a.acceptanceDiffers = !sameMultiset(reference.acceptLengths, imported.acceptLengths);
  }
  a.verdict = a.firstToken ? Verdict::TargetSide : a.acceptanceDiffers ? Verdict::DrafterSide : Verdict::Identical;
  return a;
}

std::string ResponseAlignment::text() const {
  const std::string step = firstStep ? "from step " + std::to_string(*firstStep) : "(step order not recorded)";
  switch (verdict) {
    case Verdict::TargetSide:
      return "output diverges from the target's greedy at token " + std::to_string(*firstToken) +
             " (not lossless: cache rollback, kernels, dtype)";
    case Verdict::DrafterSide:
      return std::string(lossless ? "outputs identical, " : "outputs not recorded, ") + "acceptance differs " + step;
    case Verdict::Identical:
      return lossless ? "identical" : "identical acceptance (outputs not recorded)";
  }
  return {};
}

AlignmentSummary summarizeAlignment(const std::vector<ResponseAlignment>& responses) {
  AlignmentSummary s;
  for (const auto& r : responses) {
    ++s.prompts;
    switch (r.verdict) {
      case Verdict::Identical: ++s.identical; break;
      case Verdict::DrafterSide: ++s.drafterSide; break;
      case Verdict::TargetSide: ++s.targetSide; break;
    }
    if (r.firstStep) ++s.firstStepHistogram[*r.firstStep];
    if (r.firstToken) ++s.firstTokenHistogram[*r.firstToken];
  }
  return s;
}

std::optional<ImportAlignment> importAlignment(const session::RunRecord& run) {
  if (run.origin.empty()) return std::nullopt;
  const auto settings = nlohmann::json::parse(run.settingsJson, nullptr, false);
  if (!settings.is_object()) return std::nullopt;
  const auto import = settings.find(kImportSettings);
  if (import == settings.end() || !import->is_object()) return std::nullopt;
  const auto id = import->find(kImportReferenceRun);
  if (id == import->end() || !id->is_number_integer()) return std::nullopt;
  const auto order = import->find(kImportStepOrder);
  return ImportAlignment{id->get<session::RunId>(),
                         order == import->end() || (order->is_string() && order->get<std::string>() == kStepOrderRecorded)};
}

}  // namespace dfi::analysis
