#include "dfi/modelspec/weights_summary.h"

#include <map>

#include "dfi/tensorfile/name_mapping.h"
#include "dfi/modelspec/parameter_count.h"

namespace dfi::modelspec {

WeightsSummary summarizeWeights(const tensorfile::Checkpoint& checkpoint) {
  WeightsSummary s;
  s.shards = checkpoint.shards().size();
  s.headerSha256 = checkpoint.headerSha256();
  const tensorfile::NameMapping textOnly = tensorfile::NameMapping::qwenText();
  std::map<tensorfile::DType, DTypeTally> byType;
  for (const std::string& name : checkpoint.names()) {
    const tensorfile::TensorInfo& info = checkpoint.info(name);
    const auto elements = static_cast<std::uint64_t>(info.numel());
    DTypeTally& tally = byType[info.dtype];
    tally.dtype = info.dtype;
    tally.tensors += 1;
    tally.elements += elements;
    tally.bytes += info.byteSize;
    s.tensors += 1;
    s.parameters += storedParameters(info);
    s.bytes += info.byteSize;
    if (!textOnly.map(info.storedName)) s.skippedParameters += storedParameters(info);
  }
  for (const auto& [dtype, tally] : byType) s.dtypes.push_back(tally);
  return s;
}

bool hasWeights(const std::filesystem::path& modelDir) {
  return std::filesystem::is_regular_file(modelDir / "model.safetensors") ||
         std::filesystem::is_regular_file(modelDir / "model.safetensors.index.json");
}

CheckpointFacts checkpointFacts(const tensorfile::Checkpoint* drafter, const tensorfile::Checkpoint* target) {
  CheckpointFacts facts;
  if (drafter && drafter->contains("fc.weight")) facts.drafterFcWeightShape = drafter->info("fc.weight").shape;
  if (target) {
    // Look the embedding up by its text-engine name, whichever mapping the caller opened with.
    const tensorfile::NameMapping textOnly = tensorfile::NameMapping::qwenText();
    for (const std::string& name : target->names()) {
      const tensorfile::TensorInfo& info = target->info(name);
      if (textOnly.map(info.storedName) == "model.embed_tokens.weight" && !info.shape.empty()) {
        facts.targetEmbeddingRows = info.shape.front();
        break;
      }
    }
  }
  return facts;
}

}  // namespace dfi::modelspec
