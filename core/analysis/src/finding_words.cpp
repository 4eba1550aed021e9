#include "dfi/analysis/finding_words.h"

#include <string_view>

namespace dfi::analysis {
namespace {

// The argument after the family ("taps-shift:-1" -> "-1"); the name itself when it has none.
std::string_view argumentOf(std::string_view name) {
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? std::string_view{} : name.substr(colon + 1);
}

std::optional<FindingWords> maskWords(std::string_view variant) {
  if (variant == "anchor-visible")
    return FindingWords{"This drafter was probably trained with the anchor visible to its own block (k <= anchor, "
                        "the off-by-one mask): it drafts better when evaluated that way.",
                        "Retrain with the reference mask (k < anchor); until then its served acceptance is "
                        "what the reference row shows."};
  if (variant == "block-causal")
    return FindingWords{"This drafter was probably trained with a causal mask inside its block (each slot sees "
                        "only the slots before it) instead of the bidirectional block DFlash uses.",
                        "Retrain with the block bidirectional, as the published DFlash training does."};
  if (variant == "no-context")
    return FindingWords{"This drafter drafts better without the target's context: the context features it gets "
                        "at evaluation are probably not those it was trained on (taps, their order or scale).",
                        "Check the taps (target_layer_ids, hidden_states[id + 1]) and how the features are "
                        "concatenated against the training code."};
  return std::nullopt;
}

std::optional<FindingWords> tapShiftWords(std::string_view shift, std::string_view which) {
  const bool earlier = !shift.empty() && shift.front() == '-';
  const std::string where = which.empty() ? "every tap" : "tap " + std::string(which);
  return FindingWords{"This drafter was probably trained on hidden states one layer " +
                          std::string(earlier ? "earlier" : "later") + " than its config names for " + where +
                          (earlier ? " (hidden_states[id] instead of hidden_states[id + 1], the off-by-one of "
                                     "several training exports)."
                                   : "."),
                      "Make the training export and the config name the same layers: correct target_layer_ids "
                      "(each " + std::string(earlier ? "one lower" : "one higher") +
                          ") or retrain on the layers it names."};
}

}  // namespace

std::optional<FindingWords> findingWords(const PlannedHypothesis& hypothesis) {
  const std::string_view name = hypothesis.name;
  const std::string_view arg = argumentOf(name);
  const auto is = [&](std::string_view family) { return name.substr(0, name.find(':')) == family; };
  if (is("mask")) return maskWords(arg);
  if (is("positions"))
    return FindingWords{"This drafter was probably trained with its block's position ids shifted by one (slot k "
                        "at anchor + k + 1).",
                        "Fix the position ids in the training collator, or retrain."};
  if (is("taps-shift")) return tapShiftWords(arg, {});
  if (is("tap-shift")) {
    const auto colon = arg.find(':');
    return tapShiftWords(colon == std::string_view::npos ? arg : arg.substr(colon + 1), arg.substr(0, colon));
  }
  if (is("slot0"))
    return FindingWords{"This drafter drafts better with the mask embedding in its first block slot instead of the "
                        "anchor's token: it was probably trained that way (the anchor left out of the block).",
                        "Make the first block slot hold the anchor in training and evaluation alike, as DFlash "
                        "does, or retrain."};
  if (is("tap-ablate"))
    return FindingWords{"This drafter drafts better without tap " + std::string(arg) +
                            ": what that tap carries at evaluation is probably not what it was trained on.",
                        "Check that tap's layer and scaling against the training export."};
  if (is("tap-noise"))
    return FindingWords{"Noise on the taps helps: the features at evaluation differ from those the drafter was "
                        "trained on, in a way noise covers (numerics rather than the wrong layer).",
                        "Compare the target's features here with the training dump (diagnose --training-dump): "
                        "dtype, kernels, the linear-attention backend."};
  if (is("thinking"))
    return FindingWords{"This drafter was probably trained with thinking " + std::string(arg) +
                            " in the chat template.",
                        "Evaluate and serve with the same enable_thinking as training, or retrain on the "
                        "template as it is served."};
  if (is("chat-template"))
    return FindingWords{"This drafter was probably trained on plain text, without the chat template.",
                        "Evaluate on prompts formatted as in training, or retrain on the served template."};
  if (is("block-size"))
    return FindingWords{"This drafter was probably trained with block size " + std::string(arg) + ".",
                        "Serve it with the block size it was trained with, or retrain at the one in its config."};
  if (is("target-dtype"))
    return FindingWords{"This drafter drafts better on the target's features computed in " + std::string(arg) +
                            ": it was probably trained on features of that precision.",
                        "Serve the target in the precision the training features came from, or retrain on the "
                        "served precision."};
  if (is("gdn"))
    return FindingWords{"This drafter drafts better with the " + std::string(arg) +
                            " linear-attention kernel: the training features probably came from that backend.",
                        "Use the same Gated DeltaNet kernel for training features and serving."};
  if (is("window"))
    return FindingWords{"This drafter drafts better with full attention in its sliding-window layers: it was "
                        "probably trained without the window its config names.",
                        "Make sliding_window in the config match training."};
  if (is("rope")) {
    const bool theta = arg.starts_with("theta=");
    const std::string value(arg.substr(arg.find('=') + 1));
    return theta ? FindingWords{"This drafter drafts better with the target's RoPE base " + value +
                                    " than with its own: it was probably trained with the target's.",
                                "Set the drafter's rope_theta to " + value + ", the base it was trained with."}
                 : FindingWords{"This drafter drafts better rotating " + value +
                                    " of each head: it was probably trained with that partial_rotary_factor, not "
                                    "its config's.",
                                "Set partial_rotary_factor in the drafter's config to " + value + "."};
  }
  if (is("vocab-map"))
    return FindingWords{"This drafter drafts better with its draft ids read as target ids, ignoring its d2t mapping: "
                        "its LM head was probably trained over the first token ids rather than the ones d2t names.",
                        "Save the d2t and t2d the drafter was trained with, or retrain with the mapping it ships."};
  if (is("sample-from-anchor"))
    return FindingWords{"This drafter drafts better with sample_from_anchor read the other way: it was probably "
                        "trained with the anchor's slot " +
                            std::string(arg == "on" ? "drafting the next token" : "not drafting") +
                            ", which its config does not say.",
                        "Set sample_from_anchor in the drafter's config.json to what training used (speculators: "
                        "DFlash defaults to false, DSpark to true)."};
  if (is("window-from"))
    return FindingWords{"This drafter drafts better with its sliding window counted from the anchor, as speculators "
                        "trains, than counted back from each slot, as servers run it: slot i sees i + 1 context "
                        "positions fewer served than trained.",
                        "Retrain with the serving rule's window (SpecForge's or z-lab's mask), or serve with "
                        "full attention on the sliding layers if window:full costs nothing."};
  if (is("lm-head"))
    return FindingWords{"This drafter drafts better through the target's full LM head than through its own "
                        "reduced one: the reduced head or its mapping is probably not the one trained.",
                        "Check that the saved lm_head rows are the target's rows at t2d (speculators copies them), "
                        "or serve with the full vocabulary."};
  return std::nullopt;
}

std::string strongestBlock(const HypothesisResult& h) {
  if (h.gains.empty()) return {};
  const BlockRegression& b = h.gains.front();
  return "prompt " + std::to_string(b.prompt) + ", anchor " + std::to_string(b.anchor) + ": accepts " +
         std::to_string(b.acceptA) + " under the baseline, " + std::to_string(b.acceptB) + " under " +
         h.planned.name;
}

}  // namespace dfi::analysis
