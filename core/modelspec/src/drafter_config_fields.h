#pragma once
// Internal: what the two drafter config readers (z-lab's in drafter_config.cpp, speculators' in
// speculators_drafter_config.cpp) read alike: the decoder layer's Qwen3Config fields and its
// attention kinds.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

#include "config_json.h"
#include "dfi/modelspec/drafter_config.h"

namespace dfi::modelspec::detail {

// Whether `key` is one of a reader's field names.
template <std::size_t N>
bool contains(const std::string_view (&names)[N], std::string_view key) {
  return std::find(std::begin(names), std::end(names), key) != std::end(names);
}

// Qwen3Config's fields (transformers 5.24 writes them all) and the bookkeeping transformers
// adds: they change nothing the drafter computes beyond what the readers take from them.
bool isQwen3ConfigField(std::string_view key);

// Layer types, sliding window and their consistency, from `level` (the config's top level for
// z-lab, transformer_layer_config for speculators). `reference` names the package whose
// Qwen3Config drops the window when use_sliding_window is off (the warning says so).
void readDrafterAttentionKinds(const ConfigObject& level, std::string_view reference, DrafterConfig& c);

// DSpark's heads from `level` (speculators' top level, SpecForge's dflash_config) over the
// format's defaults `d`: markov_rank, markov_head_type, enable_confidence_head and
// confidence_head_with_markov, checked as both packages' constructors check them.
DsparkConfig readDsparkHeads(const ConfigObject& level, DsparkConfig d);

// A speculators-format config (speculators_model_type present) into the same DrafterConfig.
void readSpeculatorsDrafter(const ConfigObject& top, std::optional<int> targetNumLayers, DrafterConfig& c);

}  // namespace dfi::modelspec::detail
