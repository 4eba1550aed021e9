#pragma once
// Train/eval parity of a drafter (docs/dflash.md 4.4): the same anchors drafted through the
// training path (one batched forward, anchor-block mask over the whole sequence) and through
// the inference path (incremental, one block at a time against a growing context cache, as
// the live loop calls it). With a correct mask the two agree to rounding; a mask or position
// bug shows as a large difference at the anchors it touches.

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/analysis/attention_mask.h"
#include "dfi/analysis/block_parity.h"
#include "models/dflash_drafter.h"

namespace dfi::engine {

struct BlockParity {
  double maxAbsDiff = 0;          // over the block's slots and the vocabulary, in fp32
  double argmaxAgreement = 1;     // fraction of slots whose greedy token agrees
  int firstDifferingSlot = -1;    // first slot (0 = the first draft) whose argmax differs; -1 none
  bool flagged = false;           // maxAbsDiff above the tolerance, or any argmax differs
};

// The inference path for many anchors: one context cache grown in anchor order, each block
// drafted against exactly the context the variant lets it see. `features` [T, F*Ht], `tokens`
// [T] int64. Returns [N, B-1, V] in the order of `anchors`; `probes`, if given, collects the
// layer outputs of every block concatenated in that order ([N*B, H] per layer). `carried`, if
// given, is the cache to grow instead of a fresh one, so that calls over successive groups of
// anchors in ascending order add each context position once; it restarts when an anchor needs
// less context than it holds.
at::Tensor inferencePathLogits(const DFlashDrafter& drafter, const at::Tensor& features, const at::Tensor& tokens,
                               std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                               DrafterProbes* probes = nullptr, DrafterKvCache* carried = nullptr);

// Per anchor: the two paths' logits [N, B-1, V] compared.
std::vector<BlockParity> compareDraftPaths(const at::Tensor& inference, const at::Tensor& training,
                                           double tolerance = analysis::kParityTolerance);

}  // namespace dfi::engine
