#include "dfi/analysis/acceptance.h"

#include <numeric>

namespace dfi::analysis {
namespace {

// Responses with no verify step carry no acceptance information; every convention skips them.
template <typename PerResponse>
double meanOverResponses(std::span<const ResponseAcceptance> responses, PerResponse perResponse) {
  double sum = 0;
  int counted = 0;
  for (const auto& r : responses) {
    if (r.stepAcceptLengths.empty()) continue;
    sum += perResponse(r);
    ++counted;
  }
  return counted ? sum / counted : 0.0;
}

double stepSum(const ResponseAcceptance& r) {
  return std::accumulate(r.stepAcceptLengths.begin(), r.stepAcceptLengths.end(), 0.0);
}

}  // namespace

std::optional<double> AcceptanceTally::tau() const {
  if (steps == 0) return std::nullopt;
  return lengthSum / static_cast<double>(steps);
}

std::optional<double> responseTau(const ResponseAcceptance& response) {
  AcceptanceTally tally;
  for (int length : response.stepAcceptLengths) tally.add(length);
  return tally.tau();
}

double tauReference(std::span<const ResponseAcceptance> responses) {
  return meanOverResponses(responses, [](const ResponseAcceptance& r) { return *responseTau(r); });
}

double tauSglang(std::span<const ResponseAcceptance> responses) {
  return meanOverResponses(responses, [](const ResponseAcceptance& r) {
    return r.completionTokens / static_cast<double>(r.stepAcceptLengths.size());
  });
}

double tauVllm(std::span<const ResponseAcceptance> responses) {
  double accepted = 0, drafts = 0;
  for (const auto& r : responses) {
    accepted += stepSum(r) - static_cast<double>(r.stepAcceptLengths.size());
    drafts += static_cast<double>(r.stepAcceptLengths.size());
  }
  return drafts > 0 ? 1.0 + accepted / drafts : 0.0;
}

std::string_view tauConventionLabel(TauConvention convention) {
  return convention == TauConvention::Reference ? "z-lab" : "vLLM";
}

std::string_view tauConventionFormula(TauConvention convention) {
  return convention == TauConvention::Reference
             ? "z-lab's reference benchmark: the mean over responses of each response's mean acceptance length "
               "(accepted drafts + 1)"
             : "vLLM's: the mean acceptance length pooled over every step of every response, so long responses "
               "weigh more";
}

double tauOf(std::span<const ResponseAcceptance> responses, TauConvention convention) {
  return convention == TauConvention::Reference ? tauReference(responses) : tauVllm(responses);
}

}  // namespace dfi::analysis
