#include "dfi/modelspec/weight_layout.h"

#include <set>

namespace dfi::modelspec {
namespace {

using Shape = std::vector<std::int64_t>;

class LayoutBuilder {
 public:
  void add(std::string name, Shape shape) { tensors_.push_back({std::move(name), std::move(shape)}); }
  // A linear layer stored [out, in], with its bias when the config asks for one.
  void linear(const std::string& prefix, std::int64_t out, std::int64_t in, bool bias = false) {
    add(prefix + ".weight", {out, in});
    if (bias) add(prefix + ".bias", {out});
  }
  std::vector<ExpectedTensor> take() { return std::move(tensors_); }

 private:
  std::vector<ExpectedTensor> tensors_;
};

// Qwen3-style attention; Qwen3.5's gated attention doubles q_proj (query and gate per head);
// q/k norms where the family has them (FamilyTraits::qkNorm).
void attention(LayoutBuilder& b, const std::string& p, std::int64_t hidden, int heads, int kvHeads, int headDim,
               bool bias, bool outputGate, bool qkNorm = true) {
  const std::int64_t q = std::int64_t{heads} * headDim, kv = std::int64_t{kvHeads} * headDim;
  b.linear(p + "self_attn.q_proj", outputGate ? 2 * q : q, hidden, bias);
  b.linear(p + "self_attn.k_proj", kv, hidden, bias);
  b.linear(p + "self_attn.v_proj", kv, hidden, bias);
  b.linear(p + "self_attn.o_proj", hidden, q, bias);
  if (!qkNorm) return;
  b.add(p + "self_attn.q_norm.weight", {headDim});
  b.add(p + "self_attn.k_norm.weight", {headDim});
}

void gatedDeltaNet(LayoutBuilder& b, const std::string& p, const TargetConfig& c) {
  const std::int64_t keyDim = std::int64_t{c.linearNumKeyHeads} * c.linearKeyHeadDim;
  const std::int64_t valueDim = std::int64_t{c.linearNumValueHeads} * c.linearValueHeadDim;
  const std::int64_t convDim = 2 * keyDim + valueDim;
  b.linear(p + "linear_attn.in_proj_qkv", convDim, c.hiddenSize);
  b.linear(p + "linear_attn.in_proj_z", valueDim, c.hiddenSize);
  b.linear(p + "linear_attn.in_proj_b", c.linearNumValueHeads, c.hiddenSize);
  b.linear(p + "linear_attn.in_proj_a", c.linearNumValueHeads, c.hiddenSize);
  b.add(p + "linear_attn.conv1d.weight", {convDim, 1, c.linearConvKernelDim});
  b.add(p + "linear_attn.dt_bias", {c.linearNumValueHeads});
  b.add(p + "linear_attn.A_log", {c.linearNumValueHeads});
  b.add(p + "linear_attn.norm.weight", {c.linearValueHeadDim});
  b.linear(p + "linear_attn.out_proj", c.hiddenSize, valueDim);
}

void denseBlockTail(LayoutBuilder& b, const std::string& p, std::int64_t hidden, std::int64_t intermediate,
                    bool bias = false) {
  b.add(p + "input_layernorm.weight", {hidden});
  b.add(p + "post_attention_layernorm.weight", {hidden});
  b.linear(p + "mlp.gate_proj", intermediate, hidden, bias);
  b.linear(p + "mlp.up_proj", intermediate, hidden, bias);
  b.linear(p + "mlp.down_proj", hidden, intermediate, bias);
}

}  // namespace

std::optional<std::vector<ExpectedTensor>> expectedTargetTensors(const TargetConfig& c) {
  // Expert layouts (stacked or per expert, MXFP4 blocks), the families without a fixed layout
  // and quantised weights (each format's parts) are checked at load.
  if (!c.traits.fixedTensorLayout || c.moe || c.quantization) return std::nullopt;
  LayoutBuilder b;
  b.add("model.embed_tokens.weight", {c.vocabSize, c.hiddenSize});
  for (int i = 0; i < c.numHiddenLayers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    if (c.layerTypes.at(i) == LayerType::LinearAttention)
      gatedDeltaNet(b, p, c);
    else
      attention(b, p, c.hiddenSize, c.numAttentionHeads, c.numKeyValueHeads, c.headDim, c.attentionBias,
                c.attnOutputGate, c.traits.qkNorm);
    denseBlockTail(b, p, c.hiddenSize, c.intermediateSize, c.mlpBias);
  }
  b.add("model.norm.weight", {c.hiddenSize});
  if (!c.tieWordEmbeddings) b.add("lm_head.weight", {c.vocabSize, c.hiddenSize});
  return b.take();
}

std::vector<ExpectedTensor> expectedDrafterTensors(const DrafterConfig& c, std::optional<int> targetHiddenSize) {
  LayoutBuilder b;
  const std::int64_t taps = static_cast<std::int64_t>(c.targetLayerIds.size());
  b.linear("fc", c.hiddenSize, taps * targetHiddenSize.value_or(c.targetHiddenSize.value_or(c.hiddenSize)));
  b.add("hidden_norm.weight", {c.hiddenSize});
  for (int i = 0; i < c.numHiddenLayers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    attention(b, p, c.hiddenSize, c.numAttentionHeads, c.numKeyValueHeads, c.headDim, c.attentionBias, false);
    denseBlockTail(b, p, c.hiddenSize, c.intermediateSize);
    if (c.dflash2) {  // static kernels [2, K, H] and the dynamic kernels' projection [2*K*G, H]
      const std::int64_t k = c.dflash2->convKernelSize, groups = c.hiddenSize / c.dflash2->convGroupSize;
      for (const char* conv : {"attention_conv.", "mlp_conv."}) {
        b.add(p + conv + "base_kernel", {2, k, c.hiddenSize});
        b.linear(p + conv + "kernel_projection", 2 * k * groups, c.hiddenSize);
      }
    }
  }
  b.add("norm.weight", {c.hiddenSize});
  if (c.dflash2) {  // the candidate selector: codebooks [V, r] (no ".weight", as z-lab stores them)
    b.add("candidate_selector.predecessor_codebook", {c.vocabSize, c.dflash2->selectorRank});
    b.add("candidate_selector.successor_codebook", {c.vocabSize, c.dflash2->selectorRank});
    b.linear("candidate_selector.hidden_projection", c.dflash2->selectorRank, c.hiddenSize);
  }
  if (c.dspark && c.dspark->markovRank > 0) {  // W1 over the verifier's ids, W2 onto the draft's
    const std::int64_t r = c.dspark->markovRank, h = c.hiddenSize;
    b.add("markov_head.markov_w1.weight", {c.vocabSize, r});
    b.linear("markov_head.markov_w2", c.draftVocabSize.value_or(c.vocabSize), r);
    if (c.dspark->markovHeadType == MarkovHeadType::Gated) b.linear("markov_head.gate_proj", r, h + r, true);
    if (c.dspark->markovHeadType == MarkovHeadType::Rnn) b.linear("markov_head.joint_proj", 3 * r, 2 * r + h, true);
  }
  if (c.dspark && c.dspark->confidenceHead)
    b.linear("confidence_head.proj", 1,
             c.hiddenSize + (c.dspark->confidenceWithMarkov ? c.dspark->markovRank : 0), true);
  if (c.draftVocabSize) {  // speculators' reduced vocabulary: its LM head, d2t offsets, t2d membership
    b.linear("lm_head", *c.draftVocabSize, c.hiddenSize);
    b.add("d2t", {*c.draftVocabSize});
    b.add("t2d", {c.vocabSize});
  }
  return b.take();
}

std::vector<LayoutIssue> checkWeightLayout(const std::vector<ExpectedTensor>& expected, const tensorfile::Checkpoint& checkpoint) {
  std::vector<LayoutIssue> issues;
  std::set<std::string, std::less<>> explained;
  for (const ExpectedTensor& e : expected) {
    explained.insert(e.name);
    if (!checkpoint.contains(e.name)) {
      issues.push_back({e.name, tensorfile::shapeToString(e.shape), "absent"});
      continue;
    }
    const Shape& found = checkpoint.info(e.name).shape;
    if (found != e.shape) issues.push_back({e.name, tensorfile::shapeToString(e.shape), tensorfile::shapeToString(found)});
  }
  for (const std::string& name : checkpoint.names())
    if (!explained.contains(name)) issues.push_back({name, "absent", tensorfile::shapeToString(checkpoint.info(name).shape)});
  return issues;
}

}  // namespace dfi::modelspec
