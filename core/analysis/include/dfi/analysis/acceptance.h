#pragma once
// Acceptance length (tau) as the three public code bases compute it. They differ in how they
// average, so the same steps can give three different numbers; the tool always labels which.
// Each step's acceptance length is acc + 1 (accepted drafts plus the bonus token), in [1, B].

#include <optional>
#include <span>
#include <vector>

namespace dfi::analysis {

struct ResponseAcceptance {
  std::vector<int> stepAcceptLengths;  // acc + 1 of every verify step, in order
  int completionTokens = 0;            // generated tokens, the token sampled at prefill included
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

}  // namespace dfi::analysis
