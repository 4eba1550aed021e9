#include "evaluation/teacher_forced/anchors.h"

#include <algorithm>
#include <random>

namespace dfi::engine {

std::vector<std::int64_t> chooseAnchors(const settings::AnchorSelection& selection, const SpeculativeResult& live) {
  using Kind = settings::AnchorSelection::Kind;
  std::vector<std::int64_t> anchors;
  const auto end = static_cast<std::int64_t>(live.tokens.size()) - 1;  // the last bonus: nothing to verify
  switch (selection.kind) {
    case Kind::LiveAnchors:
      for (const auto& step : live.steps) anchors.push_back(step.anchorPosition);
      break;
    case Kind::Every:
      for (std::int64_t p = live.promptLength; p < end; p += selection.stride) anchors.push_back(p);
      break;
    case Kind::Random: {
      std::vector<std::int64_t> all;
      for (std::int64_t p = live.promptLength; p < end; ++p) all.push_back(p);
      std::mt19937_64 rng(selection.seed);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(std::min<std::size_t>(all.size(), static_cast<std::size_t>(selection.count)));
      std::sort(all.begin(), all.end());
      anchors = std::move(all);
      break;
    }
  }
  return anchors;
}

}  // namespace dfi::engine
