#include "models/dspark_heads.h"

#include <algorithm>

#include <ATen/TensorOperators.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/addmv.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/mv.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros.h>

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

DsparkPath DsparkHeads::run(const at::Tensor& blockStates, const at::Tensor& logits, std::int64_t anchorToken,
                            const Chooser& choose, std::span<const std::int64_t> text) const {
  const bool markov = config_.markovRank > 0;
  const at::Tensor& anyWeight = markov ? w_.markovW2 : w_.confidenceWeight;
  const at::Device device = anyWeight.device();
  const at::ScalarType dtype = anyWeight.scalar_type();
  const at::Tensor states = onDevice(blockStates, device, dtype);
  const std::int64_t rows = states.size(0), drafts = logits.size(0);
  const std::int64_t first = rows - drafts;  // the first drafting row: 0 from the anchor, else 1
  DsparkPath path;
  std::vector<at::Tensor> biased, confidenceFeatures;
  // The token at the position of draft i: the text's where given, else the draft.
  auto tokenOfDraft = [&](std::size_t i) {
    return i < text.size() && text[i] >= 0 ? text[i] : path.tokens[i];
  };
  at::Tensor rnnState = markov ? at::zeros({config_.markovRank}, states.options()) : at::Tensor();
  const bool rnn = markov && config_.markovHeadType == modelspec::MarkovHeadType::Rnn;
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t index = row - first;  // the draft this row makes; < 0: the anchor's row
    if (index < 0 && !(rnn && config_.rnnStepsOverAnchorRow)) continue;
    const std::int64_t previous = index <= 0 ? anchorToken : tokenOfDraft(static_cast<std::size_t>(index - 1));
    const at::Tensor h = states[row];
    const at::Tensor prevEmb = markov ? w_.markovW1[previous] : at::Tensor();
    at::Tensor bias;  // [Vd]
    if (markov) {
      switch (config_.markovHeadType) {
        case modelspec::MarkovHeadType::Vanilla:
          bias = at::mv(w_.markovW2, prevEmb);
          break;
        case modelspec::MarkovHeadType::Gated:
          bias = at::mv(w_.markovW2, at::sigmoid(at::addmv(w_.gateBias, w_.gateWeight, at::cat({h, prevEmb}))) * prevEmb);
          break;
        case modelspec::MarkovHeadType::Rnn: {
          const at::Tensor z = at::addmv(w_.jointBias, w_.jointWeight, at::cat({rnnState, prevEmb, h}));
          const std::vector<at::Tensor> parts = z.chunk(3);
          const at::Tensor gate = at::sigmoid(parts[0]);
          rnnState = gate * rnnState + (1.0 - gate) * at::tanh(parts[1]);
          bias = at::mv(w_.markovW2, at::tanh(parts[2]));
          break;
        }
      }
    }
    if (index < 0) continue;
    at::Tensor rowLogits = logits[index].clone();
    if (markov) {
      const at::Tensor b = bias.to(rowLogits.device(), rowLogits.scalar_type());
      if (vocabulary_)
        rowLogits.index_add_(0, vocabulary_->targetIds.to(rowLogits.device()), b);
      else
        rowLogits += b;
    }
    if (config_.confidenceHead) confidenceFeatures.push_back(config_.confidenceWithMarkov ? at::cat({h, prevEmb}) : h);
    path.tokens.push_back(choose(rowLogits));
    biased.push_back(std::move(rowLogits));
  }
  path.logits = at::stack(biased);
  if (!confidenceFeatures.empty()) {  // one product and one copy to the host for the whole block
    const at::Tensor logits = at::addmm(w_.confidenceBias, at::stack(confidenceFeatures), w_.confidenceWeight.t());
    const at::Tensor c = at::sigmoid(logits.to(at::kFloat)).to(at::kCPU).contiguous();
    path.confidence.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return path;
}

void recordDsparkPath(const DsparkPath& path, session::StepRecord& step) {
  step.draftTokens.assign(path.tokens.begin(), path.tokens.end());
  step.draftConfidence = path.confidence;
}

}  // namespace dfi::engine
