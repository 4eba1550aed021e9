#pragma once
// Acceptance length (tau) as the three public code bases compute it. They differ in how they
// average, so the same steps can give three different numbers; the tool always labels which.
// Each step's acceptance length is acc + 1 (accepted drafts plus the bonus token), in [1, B].

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace dfi::analysis {

struct ResponseAcceptance {
  std::vector<int> stepAcceptLengths;  // acc + 1 of every verify step, in order
  int completionTokens = 0;            // generated tokens, the token sampled at prefill included
};

// Acceptance lengths counted as they arrive, for a view that follows a growing file and keeps
// totals rather than every length (the navigator). Its tau is the mean step length: a response's
// tau (below) over one response's steps; over a run's steps, the pooled mean that vLLM's tau is.
struct AcceptanceTally {
  double lengthSum = 0;
  std::int64_t steps = 0;

  void add(int acceptLength) {
    lengthSum += acceptLength;
    ++steps;
  }
  std::optional<double> tau() const;  // nullopt before any step
};

// One response's tau: the mean of its step lengths; nullopt for a response with no verify step.
// tauReference averages these over responses; the bootstraps of the CLI summary and the GUI
// resample them.
std::optional<double> responseTau(const ResponseAcceptance& response);

// z-lab reference benchmark: mean over responses of each response's mean step length (macro).
double tauReference(std::span<const ResponseAcceptance> responses);
// SGLang server: mean over requests of completion_tokens / verify steps.
double tauSglang(std::span<const ResponseAcceptance> responses);
// vLLM: 1 + accepted drafts / drafts, pooled over every step of every response (micro).
double tauVllm(std::span<const ResponseAcceptance> responses);

// The conventions a view shows one at a time (the GUI's View > Tau Convention), beside their
// formulas so that every label names the formula it shows.
enum class TauConvention { Reference, Vllm };
std::string_view tauConventionLabel(TauConvention convention);  // "z-lab", "vLLM"
std::string_view tauConventionFormula(TauConvention convention);
double tauOf(std::span<const ResponseAcceptance> responses, TauConvention convention);

}  // namespace dfi::analysis
