#include "models/dflash_drafter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"
#include "kernels/argmax.h"
#include "kernels/norms.h"
#include "kernels/projection.h"
#include "kernels/tensor_cast.h"
#include "models/grouped_conv.h"
#include "dfi/session/record_fields.h"

namespace dfi::engine {
namespace {

using analysis::LayerAttention;
using analysis::MaskVariant;

// A dense analysis mask (1 = allowed) as a bool tensor on `device`.
at::Tensor maskTensor(const std::vector<std::uint8_t>& mask, std::int64_t rows, std::int64_t columns,
                      at::Device device) {
  return at::tensor(mask, at::kByte).view({rows, columns}).to(device, at::kBool);
}

// Anchors per forward of a teacher-forced pass over n anchors (0: all in one).
std::int64_t chunkLength(std::int64_t anchorsPerForward, std::int64_t n) {
  return anchorsPerForward > 0 ? std::min(anchorsPerForward, n) : n;
}

void require(bool ok, const std::string& item, const std::string& message) {
  if (!ok) throw ValidationError(message, ErrorContext{.file = "", .item = item});
}

}  // namespace

DFlashDrafter::DFlashDrafter(modelspec::DrafterConfig config, DrafterWeights weights,
                             TargetHead target)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      target_(std::move(target)),
      rotary_(config_.rope, config_.headDim, config_.maxPositionEmbeddings),
      dtype_(weights_.fc.scalar_type()),
      device_(weights_.fc.device()) {
  const int h = config_.hiddenSize;
  require(config_.maskTokenId.has_value(), "dflash_config.mask_token_id",
          "the drafter config has no mask token id");
  require(static_cast<int>(weights_.layers.size()) == config_.numHiddenLayers, "num_hidden_layers",
          "config has " + std::to_string(config_.numHiddenLayers) + " layers, weights have " +
              std::to_string(weights_.layers.size()));
  for (const auto& [name, tensor] : {std::pair{"embed_tokens", &target_.embedTokens},
                                     std::pair{"lm_head", &target_.lmHead}}) {
    require(tensor->dim() == 2 && tensor->size(1) == h, std::string("target ") + name,
            std::string("the target's ") + name + " has " +
                (tensor->dim() == 2 ? std::to_string(tensor->size(1)) : "no") +
                " columns, the drafter's hidden_size is " + std::to_string(h));
  }
  const std::int64_t vocab = target_.embedTokens.size(0);
  require(*config_.maskTokenId >= 0 && *config_.maskTokenId < vocab, "dflash_config.mask_token_id",
          "mask token id " + std::to_string(*config_.maskTokenId) +
              " is outside the target's embedding (" + std::to_string(vocab) + " rows)");
  if (weights_.vocabulary)  // its d2t and t2d were checked against the config's vocab_size
    require(config_.vocabSize == target_.lmHead.size(0), "t2d",
            "the draft vocabulary maps into " + std::to_string(config_.vocabSize) +
                " target ids, the target's LM head has " + std::to_string(target_.lmHead.size(0)) + " rows");
}

std::vector<at::Tensor> concatenatePerLayer(const std::vector<std::vector<at::Tensor>>& parts) {
  std::vector<at::Tensor> joined;
  if (parts.empty()) return joined;
  for (std::size_t layer = 0; layer < parts.front().size(); ++layer) {
    std::vector<at::Tensor> rows;
    for (const auto& part : parts) rows.push_back(part[layer]);
    joined.push_back(at::cat(rows, 0));
  }
  return joined;
}

at::Tensor DFlashDrafter::contextStates(const at::Tensor& targetFeatures, DrafterProbes* probes) const {
  const at::Tensor projected = project(onDevice(targetFeatures, device_, dtype_), weights_.fc);
  at::Tensor normed = rmsNormQwen3(projected, weights_.hiddenNorm, config_.rmsNormEps);
  if (probes && probes->wantContext) {
    probes->fcOutput = projected;
    probes->hiddenNormOutput = normed;
  }
  return normed;
}

at::Tensor DFlashDrafter::draft(DrafterKvCache& cache, const at::Tensor& newContextFeatures,
                                std::int64_t anchorToken, std::int64_t anchor,
                                MaskVariant variant, DrafterProbes* probes, int blockLength,
                                at::Tensor* blockStates) const {
  c10::InferenceMode inference;
  const int shortest = firstDraftRow() + 1;
  if (blockLength != 0 && (blockLength < shortest || blockLength > blockSize()))
    throw UsageError("a drafted block has " + std::to_string(shortest) + " .. " + std::to_string(blockSize()) +
                     " slots, not " + std::to_string(blockLength));
  const int b = blockLength != 0 ? blockLength : blockSize();
  const std::int64_t contextLength = analysis::inferenceContextLength(variant, anchor);
  if (cache.length() + newContextFeatures.size(0) != contextLength)
    throw UsageError("a block anchored at position " + std::to_string(anchor) + " sees " +
                     std::to_string(contextLength) + " context positions under the " +
                     std::string(enumName(variant)) + " mask, but the cache holds " +
                     std::to_string(cache.length()) + " and " +
                     std::to_string(newContextFeatures.size(0)) + " new rows were given");
  QueryLayout layout;
  std::vector<std::int64_t> positions;
  for (int slot = 0; slot < b; ++slot) positions.push_back(analysis::blockSlotPosition(variant, anchor, slot));
  layout.positions = std::move(positions);
  layout.probes = probes;
  layout.collectAttention = probes && probes->wantAttention;
  if (probes) {
    probes->attention.clear();
    probes->layerOutputs.clear();
  }
  for (LayerAttention kind : {LayerAttention::Full, LayerAttention::Sliding}) {
    if (!hasLayersOf(kind)) continue;
    analysis::MaskSpec spec = maskSpec(variant, kind);
    spec.blockSize = b;
    at::Tensor mask = maskTensor(analysis::inferenceMask(spec, anchor), b, contextLength + b, device_);
    (kind == LayerAttention::Full ? layout.fullMask : layout.slidingMask) = std::move(mask);
  }
  const at::Tensor anchorTokens = at::full({1}, anchorToken, at::TensorOptions().dtype(at::kLong));
  const at::Tensor states =
      decode(blockEmbeddings(anchorTokens, b), contextStates(newContextFeatures, probes), layout, cache);
  if (blockStates) *blockStates = states;
  return logits(states.narrow(0, firstDraftRow(), b - firstDraftRow()));
}

std::optional<CandidateSelector> DFlashDrafter::selector() const {
  if (!weights_.selector) return std::nullopt;
  return CandidateSelector(*weights_.selector, config_.dflash2->selectorTopK);
}

std::optional<DsparkHeads> DFlashDrafter::dsparkHeads() const {
  if (!weights_.dspark) return std::nullopt;
  return DsparkHeads(*weights_.dspark, *config_.dspark, draftVocabulary());
}

at::Tensor DFlashDrafter::teacherForced(const at::Tensor& features, const at::Tensor& tokens,
                                        std::span<const std::int64_t> anchors, MaskVariant variant,
                                        std::int64_t anchorsPerForward, DrafterProbes* probes) const {
  c10::InferenceMode inference;
  at::Tensor out = at::empty({static_cast<std::int64_t>(anchors.size()), draftsPerBlock(), target_.lmHead.size(0)},
                             target_.lmHead.options());
  teacherForcedChunks(
      features, tokens, anchors, variant, anchorsPerForward,
      [&](std::size_t first, const at::Tensor& logits, const at::Tensor&) {
        out.narrow(0, static_cast<std::int64_t>(first), logits.size(0)).copy_(logits);
      },
      probes);
  return out;
}

void DFlashDrafter::forEachChunk(const at::Tensor& features, const at::Tensor& tokens,
                                 std::span<const std::int64_t> anchors, std::int64_t anchorsPerForward,
                                 DrafterProbes* probes, const ChunkForward& forward, std::int64_t groups) const {
  const std::int64_t length = features.size(0) / groups;
  if (tokens.dim() != 1 || tokens.size(0) != length || features.size(0) != groups * length)
    throw UsageError("teacher forcing needs one token per feature row: " + std::to_string(features.size(0)) +
                     " feature rows in " + std::to_string(groups) + " sets, tokens of shape " +
                     shapeText(tokens.sizes().vec()));
  for (std::int64_t anchor : anchors)
    if (anchor < 0 || anchor >= length)
      throw UsageError("anchor " + std::to_string(anchor) + " is outside the sequence of " +
                       std::to_string(length) + " positions");
  const auto n = static_cast<std::int64_t>(anchors.size());
  const std::int64_t chunk = chunkLength(anchorsPerForward, n);
  const at::Tensor tokensCpu = tokens.to(at::kCPU, at::kLong);
  // The first forward stores the whole sequence's context keys and values in the cache (every
  // feature set's, one after the other); later chunks only add their blocks (blocks never see
  // each other, so chunks are exact).
  DrafterKvCache cache = newCache();
  for (std::int64_t first = 0; first < n; first += chunk) {
    const auto part = anchors.subspan(static_cast<std::size_t>(first),
                                      static_cast<std::size_t>(std::min(chunk, n - first)));
    const at::Tensor ctx = first == 0 ? contextStates(features, probes) : contextStates(features.narrow(0, 0, 0));
    const at::Tensor anchorTokens =
        tokensCpu.index_select(0, at::tensor(std::vector<std::int64_t>(part.begin(), part.end()), at::kLong));
    forward(static_cast<std::size_t>(first), part, cache, ctx, anchorTokens, length);
  }
}

void DFlashDrafter::teacherForcedChunks(const at::Tensor& features, const at::Tensor& tokens,
                                        std::span<const std::int64_t> anchors, MaskVariant variant,
                                        std::int64_t anchorsPerForward, const ChunkLogitsSink& sink,
                                        DrafterProbes* probes) const {
  c10::InferenceMode inference;
  const std::int64_t chunk = chunkLength(anchorsPerForward, std::ssize(anchors));
  // One buffer for every forward's logits: fresh pages per forward cost as much as the
  // LM head's product itself on the CPU.
  const at::Tensor logits = at::empty({chunk, draftsPerBlock(), target_.lmHead.size(0)}, target_.lmHead.options());
  std::vector<std::vector<at::Tensor>> layerOutputs;  // per chunk, per layer
  if (probes) {
    probes->attention.clear();
    probes->layerOutputs.clear();
  }
  forEachChunk(features, tokens, anchors, anchorsPerForward, probes,
               [&](std::size_t first, std::span<const std::int64_t> part, DrafterKvCache& cache, const at::Tensor& ctx,
                   const at::Tensor& anchorTokens, std::int64_t length) {
                 const int b = blockSize();
                 const auto n = static_cast<std::int64_t>(part.size());
                 const QueryLayout layout = trainingLayout(part, variant, length, probes);
                 const at::Tensor states = decode(blockEmbeddings(anchorTokens), ctx, layout, cache);
                 const at::Tensor blockStates = states.view({n, b, config_.hiddenSize});
                 const at::Tensor partLogits = logits.narrow(0, 0, n);
                 logitsInto(blockStates.narrow(1, firstDraftRow(), draftsPerBlock()), partLogits);
                 sink(first, partLogits, blockStates);
                 if (probes && probes->wantLayerOutputs) layerOutputs.push_back(std::exchange(probes->layerOutputs, {}));
               });
  if (probes && probes->wantLayerOutputs) probes->layerOutputs = concatenatePerLayer(layerOutputs);
}

bool DFlashDrafter::draftsStopAtRejection() const {
  return !config_.dflash2 && !config_.dspark && !config_.sampleFromAnchor;
}

at::Tensor DFlashDrafter::draftsUntilRejected(std::span<const at::Tensor> features, const at::Tensor& tokens,
                                              std::span<const std::int64_t> anchors, MaskVariant variant,
                                              const at::Tensor& expected, std::int64_t anchorsPerForward) const {
  c10::InferenceMode inference;
  if (!draftsStopAtRejection())
    throw UsageError("a DFlash2 or DSpark drafter, or one sampling from the anchor, chooses its drafts past the "
                     "backbone's argmax of slots 1..B-1: its drafts cannot stop at a rejection");
  const int b = blockSize();
  const auto n = static_cast<std::int64_t>(anchors.size());
  if (expected.dim() != 2 || expected.size(0) != n || expected.size(1) != b - 1)
    throw UsageError("expected tokens of shape " + shapeText(expected.sizes().vec()) + " for " + std::to_string(n) +
                     " anchors of " + std::to_string(b - 1) + " slots");
  const auto groups = static_cast<std::int64_t>(features.size());
  if (groups == 0) throw UsageError("no feature set to draft from");
  for (const at::Tensor& set : features)
    if (!set.sizes().equals(features.front().sizes()))
      throw UsageError("feature sets of shapes " + shapeText(features.front().sizes().vec()) + " and " +
                       shapeText(set.sizes().vec()));
  const at::Tensor want = expected.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor drafts = at::full({groups, n, b - 1}, std::int64_t{-1}, at::TensorOptions().dtype(at::kLong));
  const std::int64_t* wanted = want.data_ptr<std::int64_t>();
  std::int64_t* drafted = drafts.data_ptr<std::int64_t>();
  const int last = config_.numHiddenLayers - 1;
  const DrafterLayerWeights& w = weights_.layers[static_cast<std::size_t>(last)];
  const double eps = config_.rmsNormEps;
  // One forward for every feature set: set g's blocks are blocks g*n .. g*n+n-1 of the layout.
  const at::Tensor sets = groups == 1 ? features.front() : at::cat(std::vector<at::Tensor>(features.begin(), features.end()), 0);
  forEachChunk(sets, tokens, anchors, anchorsPerForward, nullptr,
               [&](std::size_t first, std::span<const std::int64_t> part, DrafterKvCache& cache, const at::Tensor& ctx,
                   const at::Tensor& anchorTokens, std::int64_t length) {
                 const auto n = static_cast<std::int64_t>(part.size());
                 const QueryLayout layout = trainingLayout(part, variant, length, nullptr, groups);
                 const LayerInputs in = layerInputs(layout, cache, ctx);
                 // Every layer but the last over every row, and the last one's keys and values.
                 const at::Tensor h = runLayers(blockEmbeddings(anchorTokens.repeat({groups})), ctx, layout, cache, in, last);
                 const at::Tensor x = rmsNormQwen3(h, w.inputLayernorm, eps);
                 const auto [keys, values] = blockKeysValues(last, x, ctx, in, layout, cache);
                 const at::Tensor& mask = isSliding(last) ? layout.slidingMask : layout.fullMask;
                 // Rounds over slots 1, 2-3, 4-7, ...: the rest of the last layer, the final norm
                 // and the LM head for the blocks whose drafts all matched so far.
                 std::vector<std::int64_t> accepting(static_cast<std::size_t>(layout.blocks));
                 std::iota(accepting.begin(), accepting.end(), 0);
                 for (int start = 0, count = 1; start < b - 1 && !accepting.empty(); start += count, count *= 2) {
                   const int slots = std::min(count, b - 1 - start);
                   std::vector<std::int64_t> rows;  // block-major, slot row = slot + 1
                   for (std::int64_t j : accepting)
                     for (int s = start; s < start + slots; ++s) rows.push_back(j * b + 1 + s);
                   const at::Tensor rowIndex = onDevice(at::tensor(rows, at::kLong), device_);
                   // The blocks still accepting: every block in the first round, no copy needed.
                   const bool all = std::ssize(accepting) == layout.blocks;
                   const at::Tensor blockIndex = onDevice(at::tensor(accepting, at::kLong), device_);
                   auto ofAccepting = [&](const at::Tensor& t) { return all ? t : t.index_select(0, blockIndex); };
                   const RotaryAngles angles{in.blockAngles.cos.index_select(0, rowIndex),
                                             in.blockAngles.sin.index_select(0, rowIndex)};
                   const at::Tensor attended =
                       h.index_select(0, rowIndex) + attend(last, x.index_select(0, rowIndex), angles, ofAccepting(keys),
                                                            ofAccepting(values),
                                                            ofAccepting(mask).narrow(2, 1 + start, slots),
                                                            std::ssize(accepting), nullptr);
                   const at::Tensor out = attended + mlp(w, rmsNormQwen3(attended, w.postAttentionLayernorm, eps));
                   const at::Tensor argmax =
                       argmaxLastDim(logits(rmsNormQwen3(out, weights_.norm, eps))).to(at::kCPU, at::kLong).contiguous();
                   std::vector<std::int64_t> still;
                   for (std::size_t a = 0; a < accepting.size(); ++a) {
                     const std::int64_t* tokens = argmax.data_ptr<std::int64_t>() + static_cast<std::int64_t>(a) * slots;
                     const std::int64_t set = accepting[a] / n, anchor = static_cast<std::int64_t>(first) + accepting[a] % n;
                     const std::int64_t expectedAt = anchor * (b - 1) + start;
                     const std::int64_t draftAt = (set * std::ssize(anchors) + anchor) * (b - 1) + start;
                     bool matched = true;
                     for (int s = 0; s < slots && matched; ++s) {
                       drafted[draftAt + s] = tokens[s];
                       matched = tokens[s] == wanted[expectedAt + s];
                     }
                     if (matched) still.push_back(accepting[a]);
                   }
                   accepting = std::move(still);
                 }
               },
               groups);
  return drafts;
}

DFlashDrafter::QueryLayout DFlashDrafter::trainingLayout(std::span<const std::int64_t> anchors, MaskVariant variant,
                                                         std::int64_t length, DrafterProbes* probes,
                                                         std::int64_t groups) const {
  const int b = blockSize();
  const auto n = static_cast<std::int64_t>(anchors.size());
  QueryLayout layout;
  for (std::int64_t set = 0; set < groups; ++set)
    for (std::int64_t anchor : anchors)
      for (int slot = 0; slot < b; ++slot) layout.positions.push_back(analysis::blockSlotPosition(variant, anchor, slot));
  layout.probes = probes;
  layout.blocks = groups * n;
  layout.groups = groups;
  for (LayerAttention kind : {LayerAttention::Full, LayerAttention::Sliding}) {
    if (!hasLayersOf(kind)) continue;
    at::Tensor mask = maskTensor(analysis::trainingMaskPerBlock(maskSpec(variant, kind), anchors, length), n * b,
                                 length + b, device_)
                          .view({n, 1, b, length + b});
    (kind == LayerAttention::Full ? layout.fullMask : layout.slidingMask) = groups == 1 ? mask : mask.repeat({groups, 1, 1, 1});
  }
  return layout;
}

at::Tensor DFlashDrafter::blockEmbeddings(const at::Tensor& anchorTokens, int blockLength) const {
  const std::int64_t n = anchorTokens.size(0);
  at::Tensor ids = at::full({n, blockLength != 0 ? blockLength : blockSize()}, static_cast<std::int64_t>(*config_.maskTokenId),
                            at::TensorOptions().dtype(at::kLong));
  ids.select(1, 0).copy_(anchorTokens);
  at::Tensor embedded = at::embedding(target_.embedTokens, onDevice(ids.view({-1}), target_.embedTokens.device()));
  // dflash 0.1.0 scales the target's rows in their dtype, before the drafter sees them.
  if (config_.inputEmbeddingScale != 1.0) embedded = embedded * config_.inputEmbeddingScale;
  return onDevice(embedded, device_, dtype_);
}

DFlashDrafter::LayerInputs DFlashDrafter::layerInputs(const QueryLayout& layout, const DrafterKvCache& cache,
                                                      const at::Tensor& ctx) const {
  // With several feature sets the cache holds each set's context after the other, all at
  // positions 0 ..: every set's rows take the same angles.
  const std::int64_t groups = layout.groups;
  RotaryAngles context = rotary_.angles(cache.length() / groups, ctx.size(0) / groups, dtype_, device_);
  if (groups > 1) context = {context.cos.repeat({groups, 1}), context.sin.repeat({groups, 1})};
  return {anglesAt(layout.positions), std::move(context)};
}

at::Tensor DFlashDrafter::decode(at::Tensor h, const at::Tensor& ctx, const QueryLayout& layout,
                                 DrafterKvCache& cache) const {
  const LayerInputs in = layerInputs(layout, cache, ctx);
  return rmsNormQwen3(runLayers(std::move(h), ctx, layout, cache, in, config_.numHiddenLayers), weights_.norm,
                      config_.rmsNormEps);
}

at::Tensor DFlashDrafter::runLayers(at::Tensor h, const at::Tensor& ctx, const QueryLayout& layout,
                                    DrafterKvCache& cache, const LayerInputs& in, int layers) const {
  const double eps = config_.rmsNormEps;
  for (int i = 0; i < layers; ++i) {
    const DrafterLayerWeights& w = weights_.layers[static_cast<std::size_t>(i)];
    const at::Tensor& mask = isSliding(i) ? layout.slidingMask : layout.fullMask;
    DrafterProbes* probes = layout.probes;
    // DFlash2: each sublayer's input and output mixed along its block (one block when drafting).
    const std::int64_t blocks = std::max<std::int64_t>(1, layout.blocks);
    auto around = [&](const std::optional<ConvWeights>& conv, const at::Tensor& x, auto&& sublayer) {
      if (!conv) return sublayer(x);
      const GroupedDynamicConv mix(*conv, config_.dflash2->convGroupSize);
      const auto [mixed, dynamic] = mix.prepare(x.view({blocks, -1, x.size(-1)}));
      return mix.finish(sublayer(mixed.view_as(x)).view_as(mixed), dynamic).view_as(x);
    };
    h = h + around(w.attentionConv, rmsNormQwen3(h, w.inputLayernorm, eps), [&](const at::Tensor& x) {
          const auto [keys, values] = blockKeysValues(i, x, ctx, in, layout, cache);
          return attend(i, x, in.blockAngles, keys, values, mask, layout.blocks,
                        layout.collectAttention ? &probes->attention : nullptr);
        });
    h = h + around(w.mlpConv, rmsNormQwen3(h, w.postAttentionLayernorm, eps),
                   [&](const at::Tensor& x) { return mlp(w, x); });
    if (probes && probes->wantLayerOutputs) probes->layerOutputs.push_back(h);
  }
  return h;
}

at::Tensor DFlashDrafter::mlp(const DrafterLayerWeights& w, const at::Tensor& x) const {
  return project(at::silu(project(x, w.gateProj)) * project(x, w.upProj), w.downProj);
}

std::pair<at::Tensor, at::Tensor> DFlashDrafter::keysValues(int layer, const at::Tensor& x,
                                                            const RotaryAngles& angles) const {
  const DrafterLayerWeights& w = weights_.layers[static_cast<std::size_t>(layer)];
  const std::int64_t rows = x.size(0);
  const int kvHeads = config_.numKeyValueHeads;
  const int d = config_.headDim;
  // Context and block rows share Wk, k_norm and Wv (docs/dflash.md 2.2); V is not normed.
  const at::Tensor k = rmsNormQwen3(project(x, w.kProj, w.kBias).view({rows, kvHeads, d}), w.kNorm,
                                    config_.rmsNormEps);
  const at::Tensor v = project(x, w.vProj, w.vBias).view({rows, kvHeads, d});
  return {Rotary::apply(k.transpose(0, 1), angles), v.transpose(0, 1)};
}

std::pair<at::Tensor, at::Tensor> DFlashDrafter::blockKeysValues(int layer, const at::Tensor& x, const at::Tensor& ctx,
                                                                 const LayerInputs& in, const QueryLayout& layout,
                                                                 DrafterKvCache& cache) const {
  const int kvHeads = config_.numKeyValueHeads;
  const int d = config_.headDim;
  // Context rows contribute keys and values only, and persist; block rows are transient.
  const auto [contextKeys, contextValues] = keysValues(layer, ctx, in.contextAngles);
  cache.append(layer, contextKeys, contextValues);
  const auto [blockKeys, blockValues] = keysValues(layer, x, in.blockAngles);
  if (layout.blocks == 0) {  // drafting: the block goes after the cached context, in place
    const auto [keys, values] = cache.withBlock(layer, blockKeys, blockValues);
    return {keys.unsqueeze(0), values.unsqueeze(0)};
  }
  // The training layout: one batch per block over [its feature set's context | own block]
  // (see analysis::trainingMaskPerBlock), [blocks, kvHeads, context + B, d].
  const std::int64_t groups = layout.groups, perSet = layout.blocks / groups, perBatch = x.size(0) / layout.blocks;
  auto withOwnBlock = [&](const at::Tensor& context, const at::Tensor& block) {  // [kvHeads, *, d] each
    const at::Tensor contexts = context.view({kvHeads, groups, -1, d}).transpose(0, 1);  // [sets, kvHeads, T, d]
    const at::Tensor blocks = block.view({kvHeads, groups, perSet, perBatch, d}).permute({1, 2, 0, 3, 4});
    return at::cat({contexts.unsqueeze(1).expand({groups, perSet, kvHeads, contexts.size(2), d}), blocks}, 3)
        .view({layout.blocks, kvHeads, -1, d});
  };
  return {withOwnBlock(cache.keys(layer), blockKeys), withOwnBlock(cache.values(layer), blockValues)};
}

at::Tensor DFlashDrafter::attend(int layer, const at::Tensor& x, const RotaryAngles& angles, const at::Tensor& keys,
                                 const at::Tensor& values, const at::Tensor& mask, std::int64_t blocks,
                                 std::vector<at::Tensor>* probabilities) const {
  const DrafterLayerWeights& w = weights_.layers[static_cast<std::size_t>(layer)];
  const std::int64_t rows = x.size(0);
  const int heads = config_.numAttentionHeads;
  const int kvHeads = config_.numKeyValueHeads;
  const int d = config_.headDim;
  const at::Tensor q = Rotary::apply(
      rmsNormQwen3(project(x, w.qProj, w.qBias).view({rows, heads, d}), w.qNorm, config_.rmsNormEps)
          .transpose(0, 1),
      angles);  // [heads, Q, d]
  // [batch, heads, rows per batch, d] against [batch, kvHeads, keys, d]: one batch of all rows
  // when drafting, one per block in the training layout.
  const std::int64_t batch = std::max<std::int64_t>(1, blocks), perBatch = rows / batch;
  const at::Tensor queries = q.view({heads, batch, perBatch, d}).transpose(0, 1);  // [batch, heads, rows, d]
  auto merged = [&](const at::Tensor& out) {  // [batch, heads, rows, d] -> [rows, heads * d]
    return out.permute({0, 2, 1, 3}).reshape({rows, heads * d});
  };

  if (!probabilities && q.scalar_type() == at::kFloat) {
    // The fused kernel: no score tensor in memory. Query head i reads kv head
    // i / (heads / kvHeads) (GQA). fp32 only: in bf16/fp16 it rounds at other points than the
    // written-out path below, by as much as bf16 differs from fp32 (the oracle's bf16 reference,
    // the dflash package's model, is within bf16 noise of the written-out path).
    const at::Tensor out =
        at::scaled_dot_product_attention(queries, keys, values, mask, 0.0, false, std::nullopt, /*enable_gqa=*/true);
    return project(merged(out), w.oProj, w.oBias);
  }
  // With probabilities asked for (the attention view), the same computation written out.
  // GQA without copies: query head i uses kv head i / (heads / kvHeads), as repeat_kv does.
  const at::Tensor grouped = queries.reshape({batch, kvHeads, heads / kvHeads, perBatch, d});
  at::Tensor scores = at::matmul(grouped, keys.unsqueeze(2).transpose(-1, -2)) *
                      (1.0 / std::sqrt(static_cast<double>(d)));  // [batch, kvHeads, g, rows, keys]
  const at::Tensor allowed = mask.dim() == 4 ? mask.unsqueeze(2) : mask;
  scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  const at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(scores.scalar_type());
  if (probabilities) {
    if (batch != 1) throw UsageError("attention probabilities are collected for one block at a time (draft)");
    probabilities->push_back(probs.reshape({heads, rows, keys.size(2)}).to(at::kFloat));
  }
  const at::Tensor out = at::matmul(probs, values.unsqueeze(2)).reshape({batch, heads, perBatch, d});
  return project(merged(out), w.oProj, w.oBias);
}

RotaryAngles DFlashDrafter::anglesAt(const std::vector<std::int64_t>& positions) const {
  if (positions.empty()) return rotary_.angles(0, 0, dtype_, device_);
  const auto [lowest, highest] = std::minmax_element(positions.begin(), positions.end());
  const RotaryAngles table = rotary_.angles(*lowest, *highest - *lowest + 1, dtype_, device_);
  std::vector<std::int64_t> rows;
  for (std::int64_t p : positions) rows.push_back(p - *lowest);
  const at::Tensor index = onDevice(at::tensor(rows, at::kLong), device_);
  return {table.cos.index_select(0, index), table.sin.index_select(0, index)};
}

bool DFlashDrafter::isSliding(int layer) const {
  return !config_.layerTypes.empty() &&
         config_.layerTypes[static_cast<std::size_t>(layer)] == modelspec::LayerType::SlidingAttention;
}

bool DFlashDrafter::hasLayersOf(LayerAttention kind) const {
  for (int i = 0; i < config_.numHiddenLayers; ++i)
    if (isSliding(i) == (kind == LayerAttention::Sliding)) return true;
  return false;
}

analysis::MaskSpec DFlashDrafter::maskSpec(MaskVariant variant, LayerAttention kind) const {
  return {.variant = variant,
          .layer = kind,
          .blockSize = blockSize(),
          .slidingWindow = kind == LayerAttention::Sliding ? config_.slidingWindow.value_or(0) : 0,
          .windowFromAnchor = config_.slidingWindowFromAnchor,
          .causal = config_.isCausal};
}

at::Tensor DFlashDrafter::logits(const at::Tensor& states) const {
  if (weights_.vocabulary) {  // logitsInto scatters the draft ids' scores into the target's vocabulary
    std::vector<std::int64_t> shape = states.sizes().vec();
    shape.back() = target_.lmHead.size(0);
    at::Tensor out = at::empty(shape, target_.lmHead.options());
    logitsInto(states, out);
    return out;
  }
  // A drafted block's few rows: project() has a CPU kernel for them (projection.h).
  at::Tensor out = project(onDevice(states, target_.lmHead.device(), target_.lmHead.scalar_type()), target_.lmHead);
  scaleLogits(out);
  return out;
}

void DFlashDrafter::scaleLogits(at::Tensor& logits) const {
  // dflash 0.1.0's compute_logits: times output_multiplier, then c * tanh(logits / c).
  if (config_.outputMultiplier != 1.0) logits.mul_(config_.outputMultiplier);
  if (config_.finalLogitSoftcapping) logits.div_(*config_.finalLogitSoftcapping).tanh_().mul_(*config_.finalLogitSoftcapping);
}

void DFlashDrafter::logitsInto(const at::Tensor& states, at::Tensor out) const {
  // The LM head may live on another device than the drafter (layers split across GPUs).
  // Rows flattened into one contiguous matrix: a strided [N, B-1, H] input makes matmul
  // fall back to a batched product over N, ~10x slower than one GEMM.
  const at::Tensor rows = states.reshape({-1, states.size(-1)}).contiguous();
  at::Tensor into = out.view({rows.size(0), target_.lmHead.size(0)});
  if (weights_.vocabulary) {
    // Scaled and capped over the draft ids before the scatter: capping -inf would give -c.
    const at::Tensor& head = weights_.vocabulary->lmHead;
    at::Tensor draftLogits = project(onDevice(rows, head.device(), head.scalar_type()), head);
    scaleLogits(draftLogits);
    scatterToTargetVocabulary(draftLogits, *weights_.vocabulary, into);
    return;
  }
  at::mm_out(into, onDevice(rows, target_.lmHead.device(), target_.lmHead.scalar_type()), target_.lmHead.t());
  scaleLogits(into);
}

}  // namespace dfi::engine
