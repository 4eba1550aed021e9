#pragma once
// What a checkpoint's safetensors headers say in aggregate (dtype mix, parameter count) and
// the facts about tensors that the drafter-vs-target check needs. Headers only: no tensor
// data is read.

#include <cstdint>
#include <filesystem>
#include <vector>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/compatibility.h"
#include "dfi/tensorfile/dtype.h"

namespace dfi::modelspec {

struct DTypeTally {
  tensorfile::DType dtype = tensorfile::DType::U8;
  std::size_t tensors = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

struct WeightsSummary {
  std::size_t shards = 0;
  std::size_t tensors = 0;
  std::uint64_t parameters = 0;  // of every stored tensor (storedParameters: MXFP4-aware)
  std::uint64_t bytes = 0;
  // Parameters a text-only engine leaves out (vision tower, MTP head; tensorfile::NameMapping::qwenText).
  std::uint64_t skippedParameters = 0;
  std::vector<DTypeTally> dtypes;  // one entry per dtype present, in tensorfile::DType order
  std::string headerSha256;
};

// `checkpoint` should be opened with tensorfile::NameMapping::identity() so every stored tensor counts.
WeightsSummary summarizeWeights(const tensorfile::Checkpoint& checkpoint);

// A directory holds weights when it has model.safetensors or its index.
bool hasWeights(const std::filesystem::path& modelDir);

// fc.weight's shape from the drafter and the token-embedding row count from the target
// (stored as model.embed_tokens.weight or model.language_model.embed_tokens.weight); either
// checkpoint may be null.
CheckpointFacts checkpointFacts(const tensorfile::Checkpoint* drafter, const tensorfile::Checkpoint* target);

}  // namespace dfi::modelspec
