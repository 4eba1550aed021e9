#include "models/candidate_selector.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/mv.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/topk.h>

#include "evaluation/live/speculative_sampling.h"
#include "kernels/projection.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {

void recordSelection(const SelectorPath& path, session::StepRecord& step) {
  step.draftTokens.assign(path.tokens.begin(), path.tokens.end());
  const at::Tensor ids = path.candidates.to(at::kInt).contiguous();
  const at::Tensor scores = path.scores.contiguous();
  step.candidateIds.assign(ids.data_ptr<std::int32_t>(), ids.data_ptr<std::int32_t>() + ids.numel());
  step.candidateScores.assign(scores.data_ptr<float>(), scores.data_ptr<float>() + scores.numel());
  step.chosenCandidates = path.chosen;
}

SelectorPath CandidateSelector::select(const at::Tensor& states, const at::Tensor& logits, std::int64_t anchorToken,
                                       const SamplingOptions* sampling, SamplingStream* stream) const {
  const at::Device device = w_.hiddenProjection.device();
  const std::int64_t slots = logits.size(0);
  // Sorted (the package takes them unsorted): index 0 is the drafter's own argmax, so a choice
  // other than 0 is where the selector overruled it. Argmax over the scores is unaffected.
  auto [unary, candidates] = at::topk(onDevice(logits, device), topK_, -1);
  const at::Tensor hidden = project(onDevice(states, device, w_.hiddenProjection.scalar_type()), w_.hiddenProjection);
  SelectorPath path;
  std::vector<at::Tensor> scoreRows, probRows;
  at::Tensor predecessor = at::tensor({anchorToken}, at::kLong).to(device);
  for (std::int64_t slot = 0; slot < slots; ++slot) {
    // unary + <predecessor_codebook[prev] * hidden[slot], successor_codebook[candidate]>
    const at::Tensor gate = at::embedding(w_.predecessorCodebook, predecessor)[0] * hidden[slot];  // [r]
    const at::Tensor successors = at::embedding(w_.successorCodebook, candidates[slot]);          // [k, r]
    const at::Tensor scores = unary[slot] + at::mv(successors, gate.to(successors.scalar_type()));
    std::int64_t index = 0;
    if (sampling && !sampling->greedy()) {
      const at::Tensor q = samplingProbs(scores.unsqueeze(0), {.temperature = sampling->temperature})[0];
      const double u[] = {stream->tokenUniform()};
      index = drawTokens(q, u).front();
      probRows.push_back(q);
    } else {
      index = scores.argmax().item<std::int64_t>();
    }
    scoreRows.push_back(scores.to(at::kFloat));
    predecessor = candidates[slot].narrow(0, index, 1);
    path.chosen.push_back(static_cast<std::int32_t>(index));
    path.tokens.push_back(predecessor.item<std::int64_t>());
  }
  path.candidates = candidates.cpu();
  path.scores = scoreRows.empty() ? at::empty({0, topK_}) : at::stack(scoreRows).cpu();
  if (!probRows.empty()) path.probs = at::stack(probRows);
  return path;
}

}  // namespace dfi::engine
