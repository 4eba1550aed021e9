#include "dfi/analysis/selector_metrics.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "fixed_text.h"

namespace dfi::analysis {

using detail::fixed;

void SelectorTally::add(const session::StepRecord& step) {
  const std::size_t slots = step.draftTokens.size();
  if (slots == 0 || step.chosenCandidates.size() != slots || step.candidateIds.size() % slots != 0) return;
  const auto k = static_cast<int>(step.candidateIds.size() / slots);
  if (k == 0 || (candidates_ != 0 && k != candidates_)) return;
  candidates_ = k;
  ++steps_;
  if (recalled_.size() < slots) {
    recalled_.resize(slots, 0);
    scored_.resize(slots, 0);
  }
  auto candidate = [&](std::size_t s, int i) { return step.candidateIds[s * static_cast<std::size_t>(k) + static_cast<std::size_t>(i)]; };
  auto target = [&](std::size_t s) { return s < step.targetTokens.size() ? step.targetTokens[s] : -1; };
  auto isCandidate = [&](std::size_t s, session::TokenId token) {
    for (int i = 0; i < k; ++i)
      if (candidate(s, i) == token) return true;
    return false;
  };
  const bool live = step.mode == session::EvaluationMode::Live;
  const std::size_t reached = live ? std::min(slots, static_cast<std::size_t>(std::max(step.acceptedCount, 0)) + 1) : slots;
  for (std::size_t s = 0; s < slots; ++s) {
    ++drafted_;
    if (step.chosenCandidates[s] != 0) ++overruled_;
    if (s >= reached || target(s) < 0) continue;
    ++scored_[s];
    if (isCandidate(s, target(s))) ++recalled_[s];
  }
  if (live) {
    chainsKnown_ = false;
    return;
  }
  // The chains over the text's target tokens; each stops at an unknown target too.
  auto chain = [&](auto accepts) {
    std::size_t n = 0;
    while (n < slots && target(n) >= 0 && accepts(n)) ++n;
    return static_cast<double>(n);
  };
  const double selector = chain([&](std::size_t s) { return step.draftTokens[s] == target(s); });
  const double argmax = chain([&](std::size_t s) { return candidate(s, 0) == target(s); });
  selector_ += selector + 1;
  argmax_ += argmax + 1;
  oracle_ += chain([&](std::size_t s) { return isCandidate(s, target(s)); }) + 1;
  helped_ += selector > argmax ? 1 : 0;
  hurt_ += selector < argmax ? 1 : 0;
}

std::optional<SelectorMetrics> SelectorTally::finish() const {
  if (steps_ == 0) return std::nullopt;
  SelectorMetrics m{.steps = steps_, .candidates = candidates_};
  for (std::size_t s = 0; s < scored_.size(); ++s) {
    m.recallSlots.push_back(scored_[s]);
    m.candidateRecall.push_back(scored_[s] ? static_cast<double>(recalled_[s]) / static_cast<double>(scored_[s]) : 0.0);
  }
  m.overruledFraction = drafted_ ? static_cast<double>(overruled_) / static_cast<double>(drafted_) : 0.0;
  m.chainsKnown = chainsKnown_;
  if (chainsKnown_) {
    const auto n = static_cast<double>(steps_);
    m.selectorAcceptLength = selector_ / n;
    m.argmaxAcceptLength = argmax_ / n;
    m.oracleAcceptLength = oracle_ / n;
    m.helped = helped_;
    m.hurt = hurt_;
  }
  return m;
}

bool SelectorMetrics::effective() const {
  if (overruledFraction == 0) return false;
  return !chainsKnown || helped > hurt;
}

std::string SelectorMetrics::verdict() const {
  if (overruledFraction == 0)
    return "selector not effective: it never overruled the drafter's argmax, so its scores change no draft";
  if (!chainsKnown)
    return "it overrules the argmax at " + fixed(100 * overruledFraction, 1) +
           "% of slots; whether that helps needs teacher-forced steps (live steps never verify the argmax's chain)";
  const std::string lengths = "its chain accepts " + fixed(selectorAcceptLength, 3) + " a step, the argmax's " +
                              fixed(argmaxAcceptLength, 3) + " (the best path through its candidates: " +
                              fixed(oracleAcceptLength, 3) + ")";
  if (helped == 0) return "selector not effective: it never helped (" + lengths + ")";
  if (helped <= hurt)
    return "selector not effective: it helped " + std::to_string(helped) + " steps and hurt " + std::to_string(hurt) +
           " (" + lengths + ")";
  return "the selector helps: " + lengths + "; better at " + std::to_string(helped) + " steps, worse at " +
         std::to_string(hurt);
}

nlohmann::json selectorMetricsJson(const SelectorMetrics& m) {
  nlohmann::json j{{"steps", m.steps},
                   {"candidates", m.candidates},
                   {"candidate_recall", m.candidateRecall},
                   {"recall_slots", m.recallSlots},
                   {"overruled_fraction", m.overruledFraction},
                   {"effective", m.effective()},
                   {"verdict", m.verdict()}};
  if (m.chainsKnown)
    j.update({{"selector_accept_length", m.selectorAcceptLength},
              {"argmax_accept_length", m.argmaxAcceptLength},
              {"oracle_accept_length", m.oracleAcceptLength},
              {"helped_steps", m.helped},
              {"hurt_steps", m.hurt}});
  return j;
}

std::string formatSelectorMetrics(const SelectorMetrics& m) {
  std::string recall;
  for (std::size_t s = 0; s < m.candidateRecall.size(); ++s)
    recall += (s ? " " : "") + (m.recallSlots[s] ? fixed(m.candidateRecall[s], 2) : std::string("-"));
  return "    candidate selector (top " + std::to_string(m.candidates) + "): target among the candidates per slot " +
         recall + "; overrules the argmax at " + fixed(100 * m.overruledFraction, 1) + "% of slots\n    " +
         m.verdict() + "\n";
}

}  // namespace dfi::analysis
