#include "models/dspark_heads.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <ATen/TensorOperators.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/addmv.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/mv.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros.h>

#include "evaluation/live/draft_distribution.h"
#include "evaluation/live/speculative_sampling.h"
#include "kernels/argmax.h"
#include "kernels/tensor_cast.h"
#include "models/draft_vocabulary.h"

namespace dfi::engine {

DsparkHeads::Chooser DsparkHeads::greedy() {
  return [](const at::Tensor& logits) { return argmaxLastDim(logits).item<std::int64_t>(); };
}

DsparkHeads::Chooser DsparkHeads::sampled(const SamplingOptions& sampling, SamplingStream& stream) {
  return [&sampling, &stream](const at::Tensor& logits) {
    const double u[] = {stream.tokenUniform()};
    return drawTokens(samplingProbs(logits.unsqueeze(0), sampling), u).front();
  };
}

DsparkHeads::Row DsparkHeads::row(const at::Tensor& h, std::int64_t previous, const at::Tensor& rnnState) const {
  Row out{.rnnState = rnnState};
  if (config_.markovRank == 0) {
    if (config_.confidenceHead) out.confidenceFeature = h;
    return out;
  }
  const at::Tensor prevEmb = w_.markovW1[previous];
  switch (config_.markovHeadType) {
    case modelspec::MarkovHeadType::Vanilla:
      out.bias = at::mv(w_.markovW2, prevEmb);
      break;
    case modelspec::MarkovHeadType::Gated:
      out.bias = at::mv(w_.markovW2, at::sigmoid(at::addmv(w_.gateBias, w_.gateWeight, at::cat({h, prevEmb}))) * prevEmb);
      break;
    case modelspec::MarkovHeadType::Rnn: {
      const at::Tensor z = at::addmv(w_.jointBias, w_.jointWeight, at::cat({rnnState, prevEmb, h}));
      const std::vector<at::Tensor> parts = z.chunk(3);
      const at::Tensor gate = at::sigmoid(parts[0]);
      out.rnnState = gate * rnnState + (1.0 - gate) * at::tanh(parts[1]);
      out.bias = at::mv(w_.markovW2, at::tanh(parts[2]));
      break;
    }
  }
  if (config_.confidenceHead) out.confidenceFeature = config_.confidenceWithMarkov ? at::cat({h, prevEmb}) : h;
  return out;
}

at::Tensor DsparkHeads::biased(const at::Tensor& logits, const Row& row) const {
  at::Tensor out = logits.clone();
  if (!row.bias.defined()) return out;
  const at::Tensor b = row.bias.to(out.device(), out.scalar_type());
  if (vocabulary_)
    out.index_add_(0, vocabulary_->targetIds.to(out.device()), b);
  else
    out += b;
  return out;
}

DsparkHeads::Block DsparkHeads::block(const at::Tensor& blockStates, const at::Tensor& logits) const {
  const at::Tensor& anyWeight = config_.markovRank > 0 ? w_.markovW2 : w_.confidenceWeight;
  Block out{.states = onDevice(blockStates, anyWeight.device(), anyWeight.scalar_type())};
  out.first = out.states.size(0) - logits.size(0);
  if (config_.markovRank > 0) out.rnnStart = at::zeros({config_.markovRank}, out.states.options());
  return out;
}

bool DsparkHeads::stepsOverAnchorRow() const {
  return config_.markovRank > 0 && config_.markovHeadType == modelspec::MarkovHeadType::Rnn &&
         config_.rnnStepsOverAnchorRow;
}

DsparkPath DsparkHeads::run(const at::Tensor& blockStates, const at::Tensor& logits, std::int64_t anchorToken,
                            const Chooser& choose, std::span<const std::int64_t> text) const {
  const Block b = block(blockStates, logits);
  DsparkPath path;
  std::vector<at::Tensor> biasedRows, confidenceFeatures;
  // The token at the position of draft i: the text's where given, else the draft.
  auto tokenOfDraft = [&](std::size_t i) {
    return i < text.size() && text[i] >= 0 ? text[i] : path.tokens[i];
  };
  at::Tensor rnnState = b.rnnStart;
  for (std::int64_t r = 0; r < b.states.size(0); ++r) {
    const std::int64_t index = r - b.first;  // the draft this row makes; < 0: the anchor's row
    if (index < 0 && !stepsOverAnchorRow()) continue;
    const std::int64_t previous = index <= 0 ? anchorToken : tokenOfDraft(static_cast<std::size_t>(index - 1));
    const Row out = row(b.states[r], previous, rnnState);
    rnnState = out.rnnState;
    if (index < 0) continue;
    at::Tensor rowLogits = biased(logits[index], out);
    if (out.confidenceFeature.defined()) confidenceFeatures.push_back(out.confidenceFeature);
    path.tokens.push_back(choose(rowLogits));
    biasedRows.push_back(std::move(rowLogits));
  }
  path.logits = at::stack(biasedRows);
  if (!confidenceFeatures.empty()) {  // one product and one copy to the host for the whole block
    const at::Tensor c = at::sigmoid(at::addmm(w_.confidenceBias, at::stack(confidenceFeatures), w_.confidenceWeight.t())
                                         .to(at::kFloat))
                             .to(at::kCPU)
                             .contiguous();
    path.confidence.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return path;
}

analysis::DDTree DsparkHeads::tree(const at::Tensor& blockStates, const at::Tensor& logits, std::int64_t anchorToken,
                                   int k, int budget) const {
  const Block b = block(blockStates, logits);
  // Per tree node, computed when the builder first asks for its children: their row steps the
  // rnn from the state the node's own row left, and their top-k is of the next slot's logits
  // biased after the node's token.
  std::map<std::int32_t, at::Tensor> childrenState;  // node -> the rnn state its children's row leaves
  std::map<std::int32_t, analysis::SlotTopK> candidates;
  at::Tensor anchorState = b.rnnStart;
  if (b.first == 1 && stepsOverAnchorRow()) anchorState = row(b.states[0], anchorToken, b.rnnStart).rnnState;
  auto children = [&](const analysis::DDTree& tree, std::int32_t parent) -> const analysis::SlotTopK& {
    if (const auto it = candidates.find(parent); it != candidates.end()) return it->second;
    const auto node = static_cast<std::size_t>(parent);
    const std::int64_t index = tree.depths[node];  // the drafted slot of the children
    const at::Tensor& before = parent == 0 ? anchorState : childrenState.at(tree.parents[node]);
    const Row out = row(b.states[b.first + index], tree.tokens[node], before);
    childrenState[parent] = out.rnnState;
    analysis::SlotTopK& top = candidates[parent];
    std::vector<float> probs;
    fillTopK(biased(logits[index], out).unsqueeze(0), k, top.tokens, probs);
    // As the factorised tree reads a step's stored top-k (analysis::stepTree): logs of the
    // float32 probabilities.
    for (float p : probs) top.logProbs.push_back(std::log(p));
    return top;
  };
  return analysis::buildDDTree(children, static_cast<int>(logits.size(0)), budget, static_cast<std::int32_t>(anchorToken));
}

void recordDsparkPath(const DsparkPath& path, session::StepRecord& step) {
  step.draftTokens.assign(path.tokens.begin(), path.tokens.end());
  step.draftConfidence = path.confidence;
}

}  // namespace dfi::engine
