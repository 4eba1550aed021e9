#pragma once
// Deterministic synthetic records for the session tests and benchmark: every field derives
// from the record's stable ids, so a reader can regenerate what a writer must have stored.

#include <cstdint>
#include <string>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::session::synthetic {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: cheap, well spread
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline RunRecord run(const std::string& name, std::int32_t blockSize = 16, std::int32_t topK = 8) {
  RunRecord r;
  r.name = name;
  r.target = {"/models/Qwen3-8B", R"({"model_type":"qwen3","hidden_size":4096})", std::string(64, 'a')};
  r.drafter = {"/models/dflash-b16", R"({"block_size":16})", std::string(64, 'b')};
  r.engineVersion = "0.1.0";
  r.device = "cpu";
  r.dtype = "bfloat16";
  r.blockSize = blockSize;
  r.topK = topK;
  r.settingsJson = R"({"temperature":0,"max_new_tokens":2048})";
  r.startedAt = 1.7e9;
  return r;
}

inline PromptRecord prompt(RunId runId, PromptId id) {
  return {.runId = runId, .promptId = id, .dataset = "gsm8k", .turn = 0,
          .text = "Question " + std::to_string(id), .promptTokens = {1, 2, 3, static_cast<TokenId>(id)},
          .completionTokens = 0};
}

inline StepRecord step(RunId runId, PromptId promptId, std::int32_t index, std::int32_t blockSize = 16,
                       std::int32_t topK = 8) {
  const std::uint64_t seed = mix((static_cast<std::uint64_t>(promptId) << 32) ^ static_cast<std::uint64_t>(index));
  const auto slots = static_cast<std::size_t>(blockSize - 1);
  StepRecord s;
  s.runId = runId;
  s.promptId = promptId;
  s.stepIndex = index;
  s.mode = EvaluationMode::Live;
  s.anchorPosition = 100 + index * 4;
  s.anchorToken = static_cast<TokenId>(seed % 150000);
  s.acceptedCount = static_cast<std::int32_t>(seed % slots);
  s.bonusToken = static_cast<TokenId>((seed >> 8) % 150000);
  for (std::size_t i = 0; i < slots; ++i) {
    const auto token = static_cast<TokenId>(mix(seed + i) % 150000);
    s.draftTokens.push_back(token);
    s.targetTokens.push_back(static_cast<std::int32_t>(i) < s.acceptedCount ? token : token + 1);
    float remaining = 1.0f;
    for (std::int32_t k = 0; k < topK; ++k) {
      s.topKIds.push_back(static_cast<TokenId>(mix(seed + i * 64 + k) % 150000));
      remaining *= 0.5f;
      s.topKProbs.push_back(remaining);
    }
    s.garbleFlags.push_back(static_cast<std::uint8_t>(mix(seed ^ i) % 3 == 0 ? 1 : 0));
  }
  s.maskVariant = "causal_block";
  return s;
}

// A chain-shaped tree with one sibling per depth: exercises parents and the accepted path.
inline TreeRecord tree(StepId stepId, std::int32_t depth) {
  TreeRecord t{.stepId = stepId};
  t.nodeTokens.push_back(0);
  t.nodeLogProbs.push_back(0.0f);
  t.parents.push_back(-1);
  t.acceptedPath.push_back(0);
  std::int32_t chainParent = 0;
  for (std::int32_t d = 1; d <= depth; ++d) {
    for (std::int32_t sibling = 0; sibling < 2; ++sibling) {
      t.nodeTokens.push_back(static_cast<TokenId>(stepId * 7 + d * 2 + sibling));
      t.nodeLogProbs.push_back(-0.1f * static_cast<float>(d + sibling));
      t.parents.push_back(chainParent);
    }
    chainParent = static_cast<std::int32_t>(t.nodeTokens.size()) - 2;
    if (d <= depth / 2) t.acceptedPath.push_back(chainParent);
  }
  return t;
}

inline StatisticRecord statistic(RunId runId, StepId stepId, std::int32_t layer, std::size_t positions) {
  StatisticRecord st{.runId = runId, .stepId = stepId, .name = "hidden_norm", .layer = layer};
  for (std::size_t p = 0; p < positions; ++p)
    st.values.push_back(static_cast<float>(stepId % 97) + 0.25f * static_cast<float>(p + layer));
  return st;
}

// A causal attention map [T, T] of float32 whose rows sum to one (compressible like real ones).
inline TensorRecord attention(RunId runId, StepId stepId, std::int32_t layer, std::int32_t head, std::int64_t t) {
  TensorRecord tensor;
  tensor.info = {.runId = runId, .stepId = stepId, .name = "target.layers." + std::to_string(layer) + ".attn.probs",
                 .layer = layer, .head = head, .dtype = TensorDType::F32, .shape = {t, t}, .layout = "query,key"};
  std::vector<float> values(static_cast<std::size_t>(t * t), 0.0f);
  for (std::int64_t q = 0; q < t; ++q)
    for (std::int64_t k = 0; k <= q; ++k)
      values[static_cast<std::size_t>(q * t + k)] = 1.0f / static_cast<float>(q + 1);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(values.data());
  tensor.data.assign(bytes, bytes + values.size() * sizeof(float));
  return tensor;
}

inline std::vector<TokenString> tokenStrings(TokenId count) {
  std::vector<TokenString> tokens;
  for (TokenId id = 0; id < count; ++id) {
    std::string raw = "tok" + std::to_string(id);
    if (id % 5 == 0) raw.push_back('\xe2');  // a partial UTF-8 sequence, as BPE pieces have
    tokens.push_back({.tokenId = id, .raw = raw, .display = "␣tok" + std::to_string(id)});
  }
  return tokens;
}

}  // namespace dfi::session::synthetic
