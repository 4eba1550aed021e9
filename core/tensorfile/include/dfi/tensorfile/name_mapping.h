#pragma once
// How stored tensor names become the names the engine asks for. Qwen3.5 / 3.6 checkpoints are
// vision-language models: their text weights live under "model.language_model." and come with
// a vision tower ("model.visual.") and a multi-token-prediction head ("mtp.") that a text-only
// engine leaves out (docs/qwen.md 0.3). Gemma 4's multimodal checkpoints keep theirs the same
// way, with vision and audio towers and embedders beside model.language_model, and Kimi K2.5's
// files theirs under language_model.model beside vision_tower and mm_projector.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dfi::tensorfile {

struct NameMapping {
  struct Rename {
    std::string from;  // prefix of the stored name
    std::string to;    // what replaces it
  };
  std::vector<std::string> skippedPrefixes;  // checked first, on the stored name
  std::vector<Rename> renames;               // the first matching prefix is replaced

  static NameMapping identity();
  static NameMapping qwenText();
  // DFlash drafters: z-lab's files store names unprefixed, vLLM-style exports under "model.";
  // z-lab's DFlash2 files store the selector's codebooks without the ".weight" an nn.Embedding
  // saves (the dflash package maps them on load): both spellings read as the unsuffixed name.
  static NameMapping dflashDrafter();

  // The engine-side name, or nullopt if the tensor is skipped.
  std::optional<std::string> map(std::string_view stored) const;
};

}  // namespace dfi::tensorfile
