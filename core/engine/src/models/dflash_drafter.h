#pragma once
// The DFlash block-diffusion drafter (docs/dflash.md 2): target features of the committed
// context enter every layer as extra keys and values (KV injection); a block of
// [anchor, MASK x (B-1)] embeddings is denoised in one forward; the target's LM head turns
// slots 1..B-1 into draft logits for positions anchor+1 .. anchor+B-1 (the drafted rows). A
// drafter that samples from the anchor (speculators' sample_from_anchor, DSpark's default)
// drafts from every slot, the anchor's included: slot i for position anchor+i+1, B drafts.
//
// Two layouts, one decoder (so they cannot drift apart):
//  - draft(): one block against the context cache (the live speculative-decoding step);
//  - teacherForced(): every anchor of a fixed sequence in one forward with the training
//    anchor-block mask (docs/dflash.md 4.4), equal to draft() at each anchor by construction.
// Masks and block positions come from dfi::analysis so the GUI shows exactly what ran.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/analysis/attention_mask.h"
#include "dfi/modelspec/drafter_config.h"
#include "kernels/rotary.h"
#include "models/candidate_selector.h"
#include "models/dspark_heads.h"
#include "models/dflash_kv_cache.h"
#include "models/dflash_weights.h"

namespace dfi::engine {

// Intermediate tensors of a drafter forward, for inspection (attention view, statistics,
// `dflash-eval draft`). Each is filled only when asked for, so the plain forward pays nothing.
struct DrafterProbes {
  bool wantAttention = false;     // draft() only: scores of teacher-forced forwards are huge
  bool wantLayerOutputs = false;
  bool wantContext = false;

  // Per layer: the block's attention probabilities [heads, Q, context + Q] in fp32 (columns:
  // context positions 0.., then the block rows).
  std::vector<at::Tensor> attention;
  // Per layer: the residual stream of the block rows after the layer [Q, H] (Q = B for
  // draft(), N*B for teacherForced(), anchor-major).
  std::vector<at::Tensor> layerOutputs;
  // The context rows this forward added: fc(features) and hidden_norm(fc(features)), [S, H].
  at::Tensor fcOutput, hiddenNormOutput;
};

// Layer outputs of several forwards (each [rows, H] per layer) joined per layer along the rows,
// in the order given: how chunked or per-block forwards report one probe set.
std::vector<at::Tensor> concatenatePerLayer(const std::vector<std::vector<at::Tensor>>& parts);

// The target's token embedding and LM head. at::Tensor is a shared handle, so the target
// model hands over its own tensors and nothing is copied (tied models pass one tensor twice).
struct TargetHead {
  at::Tensor embedTokens;  // [V, Ht]
  at::Tensor lmHead;       // [V, Ht]
};

class DFlashDrafter {
 public:
  // Throws dfi::ValidationError when the target head does not fit the drafter (hidden width,
  // vocabulary, mask token id), naming the field and both values.
  DFlashDrafter(modelspec::DrafterConfig config, DrafterWeights weights, TargetHead target);

  const modelspec::DrafterConfig& config() const { return config_; }
  // The checkpoint its weights were read from; null for a drafter built from tensors alone.
  const tensorfile::Checkpoint* checkpoint() const { return weights_.source.get(); }
  // The mask its layers of `kind` use under `variant` (the one the GUI draws), and whether it
  // has layers of that kind at all.
  analysis::MaskSpec maskSpec(analysis::MaskVariant variant, analysis::LayerAttention kind) const;
  bool hasLayersOf(analysis::LayerAttention kind) const;
  int blockSize() const { return config_.blockSize; }
  // Drafts per block: B - 1, or B when sampling from the anchor.
  int draftsPerBlock() const { return config_.draftsPerBlock(); }
  // The rows of a block of `blockLength` slots that draft (the last draftsPerBlock() of them).
  int firstDraftRow() const { return config_.sampleFromAnchor ? 0 : 1; }
  DrafterKvCache newCache() const { return DrafterKvCache(config_.numHiddenLayers); }

  // ctx = hidden_norm(fc(features)): [S, F*Ht] -> [S, H]; `probes` may keep both stages.
  at::Tensor contextStates(const at::Tensor& targetFeatures, DrafterProbes* probes = nullptr) const;

  // Drafts the block anchored at position `anchor` (slot 0 holds `anchorToken`).
  // `newContextFeatures` [S, F*Ht] are the target features of positions cache.length() ..
  // cache.length()+S-1; they are appended to `cache`, which must then reach the context the
  // variant lets the block see (analysis::inferenceContextLength). Returns [g, V] logits of the
  // drafted rows (g = draftsPerBlock()) in the LM head's dtype. `blockLength` in [2, B] ([1, B]
  // from the anchor) drafts a shorter block of that many slots, anchor included (dflash 0.1.0's
  // last block of a token budget); 0: B. `blockStates`, when given, receives the final-normed
  // states of every row [b, H] (the candidate selector's and DSpark's heads' input).
  at::Tensor draft(DrafterKvCache& cache, const at::Tensor& newContextFeatures,
                   std::int64_t anchorToken, std::int64_t anchor,
                   analysis::MaskVariant variant = analysis::MaskVariant::Reference,
                   DrafterProbes* probes = nullptr, int blockLength = 0, at::Tensor* blockStates = nullptr) const;

  // DFlash2's candidate selector over this drafter's weights; nullopt for a DFlash drafter,
  // whose drafts are the argmax of the logits.
  std::optional<CandidateSelector> selector() const;
  // DSpark's Markov and confidence heads; nullopt for other drafters.
  std::optional<DsparkHeads> dsparkHeads() const;
  // A reduced draft vocabulary (speculators' d2t); null when the drafter drafts target ids.
  const DraftVocabulary* draftVocabulary() const { return weights_.vocabulary ? &*weights_.vocabulary : nullptr; }

  // Teacher-forced drafting of a whole sequence: `features` [T, F*Ht] and `tokens` [T] (int64)
  // of positions 0..T-1, `anchors` in [0, T). Returns [N, g, V] logits. All anchors go
  // through one forward, or `anchorsPerForward` at a time (the scores of one forward take
  // heads * N*B * (T + N*B) floats); the result is the same either way. `probes` gets the
  // layer outputs of every chunk concatenated and the context of all T positions.
  at::Tensor teacherForced(const at::Tensor& features, const at::Tensor& tokens,
                           std::span<const std::int64_t> anchors,
                           analysis::MaskVariant variant = analysis::MaskVariant::Reference,
                           std::int64_t anchorsPerForward = 0, DrafterProbes* probes = nullptr) const;

  // Receives one forward's logits of the drafted rows [n, g, V] for anchors[first .. first+n),
  // and the final-normed states of every row [n, B, H]. The tensors are overwritten by the next
  // forward: copy what must outlive the call.
  using ChunkLogitsSink =
      std::function<void(std::size_t first, const at::Tensor& logits, const at::Tensor& slotStates)>;

  // teacherForced() without the [N, g, V] result: each forward's logits go to `sink` and are
  // dropped. For every anchor of a long sequence over a real vocabulary the whole result is
  // tens of GB (2048 x 15 x 151936 floats); this keeps one forward's worth.
  void teacherForcedChunks(const at::Tensor& features, const at::Tensor& tokens,
                           std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                           std::int64_t anchorsPerForward, const ChunkLogitsSink& sink,
                           DrafterProbes* probes = nullptr) const;

  // Teacher forcing for acceptance alone (the diagnosis's hypotheses): each anchor's drafts up
  // to and including the first slot that differs from `expected` [N, B-1] (int64, host: the
  // target's token for every slot, -1 past the sequence), and -1 after it. Every layer but
  // the last runs as in teacherForced(); the last layer's queries and MLP, the final norm and
  // the LM head run in rounds over slots 1, 2-3, 4-7, 8.. only for the blocks whose drafts all
  // matched so far, so a block rejected at slot s pays for about s slots of the LM head, not
  // B-1. Several feature sets of the same tokens (G, each [T, F*Ht]) go through one forward,
  // as G times the blocks: the tap hypotheses of a diagnosis. Returns [G, N, B-1] int64 on the
  // host; each slot it fills is teacherForced()'s argmax on that set (up to rounding: fewer
  // rows may take another product kernel). Only for drafters whose drafts are the argmax of
  // slots 1..B-1 (draftsStopAtRejection()): not DFlash2, whose block mixing and selector read
  // every slot, nor DSpark or a drafter sampling from the anchor.
  bool draftsStopAtRejection() const;
  at::Tensor draftsUntilRejected(std::span<const at::Tensor> features, const at::Tensor& tokens,
                                 std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                                 const at::Tensor& expected, std::int64_t anchorsPerForward = 0) const;

 private:
  struct QueryLayout {
    std::vector<std::int64_t> positions;  // RoPE position of every block row (host: no sync)
    // Training layout: the rows are `blocks` blocks of B, each attending to [context | its own
    // block] ([blocks, 1, B, T + B] masks); 0 when drafting one block ([Q, Kv] masks).
    std::int64_t blocks = 0;
    // Feature sets side by side (draftsUntilRejected): the cache holds each set's context after
    // the other, and the blocks are set-major (blocks / groups per set).
    std::int64_t groups = 1;
    at::Tensor fullMask;      // bool; undefined when no layer of that kind exists
    at::Tensor slidingMask;
    DrafterProbes* probes = nullptr;
    bool collectAttention = false;  // draft() only
  };

  // The teacher-forced forwards' common part: checks the sequence, then calls `forward` for
  // each chunk of anchors with the cache (the whole context after the first chunk), the
  // context rows this chunk adds, and the anchors' tokens [n].
  using ChunkForward = std::function<void(std::size_t first, std::span<const std::int64_t> part,
                                          DrafterKvCache& cache, const at::Tensor& ctx,
                                          const at::Tensor& anchorTokens, std::int64_t length)>;
  // `features` may hold `groups` feature sets of the sequence one after the other.
  void forEachChunk(const at::Tensor& features, const at::Tensor& tokens, std::span<const std::int64_t> anchors,
                    std::int64_t anchorsPerForward, DrafterProbes* probes, const ChunkForward& forward,
                    std::int64_t groups = 1) const;
  // The training layout of blocks at `anchors` in a sequence of `length`: positions and masks.
  QueryLayout trainingLayout(std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                             std::int64_t length, DrafterProbes* probes, std::int64_t groups = 1) const;
  // [N*b, H]: target embeddings of [anchorToken_j, MASK x (b-1)] for each j (b = B unless given).
  at::Tensor blockEmbeddings(const at::Tensor& anchorTokens, int blockLength = 0) const;
  // RoPE angles of a forward's block rows and of the context rows it adds.
  struct LayerInputs {
    RotaryAngles blockAngles, contextAngles;
  };
  LayerInputs layerInputs(const QueryLayout& layout, const DrafterKvCache& cache, const at::Tensor& ctx) const;
  // Runs every layer: appends the context rows `ctx` (positions cache.length() ..) to `cache`,
  // then lets the block rows `h` attend over [cache | block]. Returns final-normed states.
  at::Tensor decode(at::Tensor h, const at::Tensor& ctx, const QueryLayout& layout,
                    DrafterKvCache& cache) const;
  // decode()'s first `layers` layers, without the final norm.
  at::Tensor runLayers(at::Tensor h, const at::Tensor& ctx, const QueryLayout& layout, DrafterKvCache& cache,
                       const LayerInputs& in, int layers) const;
  at::Tensor mlp(const DrafterLayerWeights& w, const at::Tensor& x) const;
  // `layer`'s keys and values for the block rows `x` (input-normed) after appending the
  // context rows `ctx` to `cache`: [1, kvHeads, context + Q, d] when drafting (blocks == 0),
  // [blocks, kvHeads, context + B, d] in the training layout.
  std::pair<at::Tensor, at::Tensor> blockKeysValues(int layer, const at::Tensor& x, const at::Tensor& ctx,
                                                    const LayerInputs& in, const QueryLayout& layout,
                                                    DrafterKvCache& cache) const;
  // `layer`'s attention output for the query rows `x` (at RoPE `angles`; `blocks` equal groups
  // in the training layout) over `keys` and `values` under `mask`.
  at::Tensor attend(int layer, const at::Tensor& x, const RotaryAngles& angles, const at::Tensor& keys,
                    const at::Tensor& values, const at::Tensor& mask, std::int64_t blocks,
                    std::vector<at::Tensor>* probabilities) const;
  // Keys (RoPE'd) and values [kvHeads, n, headDim] of `layer` for rows `x` [n, H].
  std::pair<at::Tensor, at::Tensor> keysValues(int layer, const at::Tensor& x,
                                               const RotaryAngles& angles) const;
  RotaryAngles anglesAt(const std::vector<std::int64_t>& positions) const;
  bool isSliding(int layer) const;
  // The LM head over `states` [..., H]: [..., V] in the LM head's dtype and on its device. V is
  // the target's vocabulary; a reduced draft vocabulary's scores are scattered into it
  // (models/draft_vocabulary.h).
  at::Tensor logits(const at::Tensor& states) const;
  // The same product written into `out` (contiguous, shape states' with the last dimension V),
  // so that teacherForced's chunks fill one result: no temporary per chunk, no concatenation.
  void logitsInto(const at::Tensor& states, at::Tensor out) const;
  // output_multiplier and final_logit_softcapping, in place.
  void scaleLogits(at::Tensor& logits) const;

  modelspec::DrafterConfig config_;
  DrafterWeights weights_;
  TargetHead target_;
  Rotary rotary_;
  at::ScalarType dtype_;
  at::Device device_;
};

}  // namespace dfi::engine
