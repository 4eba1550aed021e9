#pragma once
// Typed, validated config of a DFlash drafter: Qwen3 decoder-layer geometry plus the DFlash
// fields (block size, target layer taps, mask token id) and per-layer sliding attention
// (Qwen3.6 drafters). Two file formats read into it, one reader each: z-lab's DFlashDraftModel
// config (model_type "qwen3" with dflash_config) and vLLM speculators' (speculators_model_type
// with the decoder's config nested in transformer_layer_config).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/modelspec/decoder_geometry.h"
#include "dfi/modelspec/layer_type.h"
#include "dfi/modelspec/rope_config.h"

namespace dfi::modelspec {

// A field the engine reads but runs otherwise than some reader of the file would, or does not
// know at all: never silently ignored (dflash-eval info lists them, a run logs them).
struct DrafterConfigWarning {
  std::string field;  // JSON path: "dflash_config.foo", "use_sliding_window"
  std::string message;
};

// DFlash2 (dflash 0.1.0's DFlash2DraftModel): grouped dynamic causal convolutions around the
// attention and the MLP of every layer, and a candidate selector over the drafted slots.
struct Dflash2Config {
  int convKernelSize = 0;  // taps of each convolution along the block
  int convGroupSize = 0;   // channels per group (divides hidden_size)
  int selectorRank = 0;    // width of the predecessor/successor codebooks
  int selectorTopK = 0;    // candidates per slot
};

// DSpark (speculators' DSparkDraftModel, SpecForge's in z-lab's layout with
// dflash_config.projector_type "dspark"): after the block's logits, a low-rank Markov head
// biases each slot by the token drafted before it (B = W2(f(W1[prev]))), and a confidence head
// predicts each slot's acceptance rate from its final-normed state.
enum class MarkovHeadType { Vanilla, Gated, Rnn };
struct DsparkConfig {
  int markovRank = 256;  // 0: no Markov head (the backbone's logits alone)
  MarkovHeadType markovHeadType = MarkovHeadType::Vanilla;
  bool confidenceHead = true;
  bool confidenceWithMarkov = true;  // the head's input is [state, W1[prev]]; needs markovRank > 0
  // The rnn head's state over the block: speculators steps it over every row, the anchor's
  // included when that row does not draft (its training forward does, so its served drafts
  // must); SpecForge starts it at zero at the first drafted slot (its sample_block_tokens).
  bool rnnStepsOverAnchorRow = true;
};
std::string_view markovHeadTypeName(MarkovHeadType type);  // "vanilla", "gated", "rnn"

enum class DrafterFormat { ZLab, Speculators };

// speculators' fields with no z-lab counterpart, as the file states them (info shows them).
struct SpeculatorsFields {
  std::string modelType;  // speculators_model_type
  std::string version;    // speculators_version
  // As stored: an index into the target's hidden states, 0 being the embedding output, so
  // the z-lab tap of the same layer is one less (DrafterConfig::targetLayerIds).
  std::vector<int> auxHiddenStateLayerIds;
  bool slidingWindowNonCausal = false;
  // The default proposal method of speculators_config.
  std::string proposalType;
  std::optional<int> speculativeTokens;
  std::optional<int> verifierAcceptK;
  std::optional<double> acceptTolerance;
  std::string verifierNameOrPath;
  std::vector<std::string> verifierArchitectures;
};

// The geometry is the DecoderGeometry base, read as for targets.
struct DrafterConfig : DecoderGeometry {
  DrafterFormat format = DrafterFormat::ZLab;
  std::string modelType;
  std::vector<std::string> architectures;
  int blockSize = 16;
  std::vector<int> targetLayerIds;  // 0-based target decoder layers, in concat order
  bool targetLayerIdsFromConfig = false;  // false: derived by the default rule
  std::optional<int> maskTokenId;
  RopeConfig rope;
  std::vector<LayerType> layerTypes;  // one per drafter layer
  std::optional<int> slidingWindow;
  int numTargetLayers = 0;  // num_target_layers from the file, else the caller's value, else 0
  std::optional<int> targetHiddenSize;  // vLLM extra "target_hidden_size" when present
  // Top-level "is_causal" (dflash 0.1.0 reads it there): absent -> a layer is causal exactly
  // when it is a sliding one; present -> every layer causal (true) or non-causal (false).
  std::optional<bool> isCausal;
  // Evaluate the sliding window as speculators trains it: the W context positions before the
  // anchor, for every slot (analysis::MaskSpec::windowFromAnchor). Off, the serving rule, which
  // dflash 0.1.0 and SpecForge train with too: counted back from each slot's own position. No
  // config sets it: diagnose's window-from:anchor does, to measure the difference.
  bool slidingWindowFromAnchor = false;
  // dflash 0.1.0's fields, read from dflash_config, else the top level (its _draft_value):
  double inputEmbeddingScale = 1.0;  // the block's token embeddings are multiplied by it
  double outputMultiplier = 1.0;     // the drafter's logits are multiplied by it...
  // ...then, when present and > 0, capped: c * tanh(logits / c).
  std::optional<double> finalLogitSoftcapping;
  std::optional<Dflash2Config> dflash2;  // set for a DFlash2DraftModel
  std::optional<DsparkConfig> dspark;    // set for speculators' DSpark
  // speculators' sample_from_anchor: every slot drafts the token after its own position, the
  // anchor's slot included (B drafts per block); false: DFlash's slots 1..B-1 (B-1 drafts).
  bool sampleFromAnchor = false;
  int draftsPerBlock() const { return sampleFromAnchor ? blockSize : blockSize - 1; }
  // A reduced draft vocabulary (speculators' draft_vocab_size below vocab_size, the target's):
  // the checkpoint's own lm_head scores draft ids, which its d2t maps to target ids.
  std::optional<int> draftVocabSize;
  std::optional<SpeculatorsFields> speculators;  // set for DrafterFormat::Speculators
  std::vector<DrafterConfigWarning> warnings;
  std::string rawJson;
};

// targetNumLayers feeds the default layer-id rule when the file has neither
// dflash_config.target_layer_ids nor num_target_layers.
DrafterConfig parseDrafterConfig(const std::filesystem::path& configJson,
                                 std::optional<int> targetNumLayers = {});
DrafterConfig parseDrafterConfigText(std::string_view jsonText, const std::string& origin,
                                     std::optional<int> targetNumLayers = {});

std::string_view drafterFormatName(DrafterFormat format);  // "z-lab", "speculators"

// z-lab's build_target_layer_ids: one draft layer -> [L/2]; otherwise
// round(1 + i*(L-4)/(n-1)) for i < n, with Python's round-half-to-even.
std::vector<int> defaultTargetLayerIds(int numTargetLayers, int numDraftLayers);

}  // namespace dfi::modelspec
