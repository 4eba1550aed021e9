#include "dfi/tensorfile/name_mapping.h"

namespace dfi::tensorfile {

NameMapping NameMapping::identity() { return {}; }

NameMapping NameMapping::qwenText() {
  // Gemma 4's vision and audio towers and their embedders sit beside model.language_model.
  return {.skippedPrefixes = {"model.visual.", "mtp.", "model.vision_tower.", "model.embed_vision.",
                              "model.audio_tower.", "model.embed_audio."},
          .renames = {{.from = "model.language_model.", .to = "model."}}};
}

NameMapping NameMapping::dflashDrafter() {
  return {.skippedPrefixes = {},
          .renames = {{.from = "candidate_selector.predecessor_codebook.weight",
                       .to = "candidate_selector.predecessor_codebook"},
                      {.from = "candidate_selector.successor_codebook.weight", .to = "candidate_selector.successor_codebook"},
                      {.from = "model.", .to = ""}}};
}

std::optional<std::string> NameMapping::map(std::string_view stored) const {
  for (const auto& prefix : skippedPrefixes)
    if (stored.starts_with(prefix)) return std::nullopt;
  for (const auto& rename : renames)
    if (stored.starts_with(rename.from)) return rename.to + std::string(stored.substr(rename.from.size()));
  return std::string(stored);
}

}  // namespace dfi::tensorfile
