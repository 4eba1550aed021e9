#include "dfi/tensorfile/name_mapping.h"

namespace dfi::tensorfile {

NameMapping NameMapping::identity() { return {}; }

NameMapping NameMapping::qwenText() {
  // Gemma 4's vision and audio towers and their embedders sit beside model.language_model; Kimi
  // K2.5's vision tower and projector too, and its published files (the remote code's layout)
  // keep the text model as language_model.model and language_model.lm_head, as transformers'
  // conversion mapping for kimi_k25 reads them; its blocks -> layers rename makes
  // save_pretrained write the layers as language_model.model.blocks.
  return {.skippedPrefixes = {"model.visual.", "mtp.", "model.vision_tower.", "model.embed_vision.",
                              "model.audio_tower.", "model.embed_audio.", "model.mm_projector.", "vision_tower.",
                              "mm_projector."},
          .renames = {{.from = "model.language_model.", .to = "model."},
                      {.from = "language_model.model.blocks.", .to = "model.layers."},
                      {.from = "language_model.model.", .to = "model."},
                      {.from = "language_model.lm_head.", .to = "lm_head."}}};
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
