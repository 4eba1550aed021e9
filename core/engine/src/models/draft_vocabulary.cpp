#include "models/draft_vocabulary.h"

#include <algorithm>
#include <limits>
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

// speculators stores d2t as int64 offsets (train/vocab_mapping.py: target = draft + d2t[draft]).
at::Tensor targetIdsOf(const WeightLoader& loader, std::int64_t draftVocab, std::int64_t targetVocab) {
  const at::Tensor offsets = loader.loadStored("d2t", {draftVocab});
  if (!c10::isIntegralType(offsets.scalar_type(), /*includeBool=*/false))
    throw ValidationError("d2t must hold integer offsets (target id = draft id + d2t[draft id]), found " +
                              std::string(c10::toString(offsets.scalar_type())),
                          {.file = loader.fileOf("d2t"), .item = "d2t"});
  const at::Tensor ids = offsets.to(at::kLong).add(at::arange(draftVocab, at::kLong));
  const std::int64_t* id = ids.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < draftVocab; ++i) {
    if (id[i] < 0 || id[i] >= targetVocab)
      throw ValidationError("d2t[" + std::to_string(i) + "] = " + std::to_string(id[i] - i) + " maps draft id " +
                                std::to_string(i) + " to target id " + std::to_string(id[i]) +
                                ", outside the target vocabulary [0, " + std::to_string(targetVocab) + ")",
                            {.file = loader.fileOf("d2t"), .item = "d2t"});
    // speculators writes the selected ids sorted; an unsorted mapping may repeat an id, which
    // would give one target token two draft scores.
    if (i > 0 && id[i] <= id[i - 1])
      throw ValidationError("d2t maps draft ids " + std::to_string(i - 1) + " and " + std::to_string(i) +
                                " to target ids " + std::to_string(id[i - 1]) + " and " + std::to_string(id[i]) +
                                ": the target ids must be strictly increasing, each listed once",
                            {.file = loader.fileOf("d2t"), .item = "d2t"});
  }
  return ids;
}

void checkMembership(const WeightLoader& loader, const at::Tensor& ids, std::int64_t targetVocab) {
  const at::Tensor member = loader.loadStored("t2d", {targetVocab}).to(at::kBool);
  const std::int64_t marked = member.sum().item<std::int64_t>();
  const at::Tensor missing = member.index_select(0, ids).logical_not().nonzero();
  if (marked == ids.size(0) && missing.numel() == 0) return;
  std::string message = "t2d marks " + std::to_string(marked) + " target ids, d2t maps " +
                        std::to_string(ids.size(0)) + " draft ids";
  if (missing.numel() > 0) {
    const std::int64_t draftId = missing[0][0].item<std::int64_t>();
    message += "; target id " + std::to_string(ids[draftId].item<std::int64_t>()) + " (draft id " +
               std::to_string(draftId) + ") is not marked in t2d";
  }
  throw ValidationError(message + ": the two mappings disagree", {.file = loader.fileOf("t2d"), .item = "t2d"});
}

}  // namespace

DraftVocabulary loadDraftVocabulary(const WeightLoader& loader, const modelspec::DrafterConfig& config,
                                    at::Device device) {
  const std::int64_t draftVocab = *config.draftVocabSize, targetVocab = config.vocabSize;
  const at::Tensor ids = targetIdsOf(loader, draftVocab, targetVocab);
  checkMembership(loader, ids, targetVocab);
  return {.lmHead = loader.load("lm_head.weight", {draftVocab, config.hiddenSize}, device),
          .targetIds = ids.to(device),
          .hostTargetIds = {ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + ids.numel()}};
}

std::vector<session::TokenId> DraftVocabulary::draftIdsOf(std::span<const session::TokenId> targetIds) const {
  std::vector<session::TokenId> out;
  out.reserve(targetIds.size());
  for (const session::TokenId id : targetIds) {
    const auto it = std::ranges::lower_bound(hostTargetIds, static_cast<std::int64_t>(id));
    const bool found = id >= 0 && it != hostTargetIds.end() && *it == id;
    out.push_back(found ? static_cast<session::TokenId>(it - hostTargetIds.begin()) : -1);
  }
  return out;
}

void scatterToTargetVocabulary(const at::Tensor& draftLogits, const DraftVocabulary& vocabulary, at::Tensor out) {
  out.fill_(-std::numeric_limits<double>::infinity());
  out.index_copy_(-1, vocabulary.targetIds.to(out.device()), draftLogits.to(out.device(), out.scalar_type()));
}

}  // namespace dfi::engine
