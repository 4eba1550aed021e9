#include "evaluation/diagnosis/diagnosis_battery.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "dfi/session/record_fields.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/compatibility.h"
#include "dfi/tokenizer/chat_template.h"
#include "evaluation/diagnosis/template_lint.h"
#include "evaluation/diagnosis/vocabulary_lint.h"
#include "kernels/kernel_path.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;
using analysis::LintFinding;
using analysis::LintSeverity;
using analysis::PlannedHypothesis;

std::string signedShift(int shift) { return shift > 0 ? "+" + std::to_string(shift) : std::to_string(shift); }

std::string listText(const std::vector<int>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

// Shortest exact-looking decimal: 0.05, 0.25, 1000000 (names stay stable and readable).
std::string numberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

Hypothesis notApplicable(Hypothesis h, std::string reason) {
  h.planned.applicable = false;
  h.planned.reason = std::move(reason);
  return h;
}

bool textPrompts(const std::vector<PromptSpec>& prompts) {
  return std::ranges::all_of(prompts, [](const PromptSpec& p) { return p.ids.empty(); });
}

// The prompt text under the chat template, for telling whether a formatting choice changes it.
std::optional<std::string> rendered(const BatteryInputs& in, bool thinking) {
  if (!in.tokenizer || in.prompts.empty() || !textPrompts(in.prompts)) return std::nullopt;
  const auto& chat = in.tokenizer->chatTemplate();
  if (!chat) return std::nullopt;
  std::vector<tokenizer::ChatMessage> messages;
  for (const auto& m : in.prompts.front().messages) messages.push_back({m.role, m.content});
  return chat->render(messages, {.enableThinking = thinking, .keywords = in.settings.evaluation.chatTemplateKwargs});
}

void addFormatting(const BatteryInputs& in, std::vector<Hypothesis>& out) {
  const EvaluationSettings& e = in.settings.evaluation;
  Hypothesis thinking{.kind = Hypothesis::Kind::Formatting};
  thinking.thinking = !e.enableThinking;
  thinking.planned = {"thinking:" + std::string(thinking.thinking ? "on" : "off"),
                      std::string("prompts rendered with thinking ") + (thinking.thinking ? "on" : "off") +
                          " (the baseline has it " + (e.enableThinking ? "on" : "off") + ")"};
  Hypothesis plain{.kind = Hypothesis::Kind::Formatting, .chatTemplate = false, .thinking = e.enableThinking};
  plain.planned = {"chat-template:off", "prompts as plain text, without the chat template"};
  if (!textPrompts(in.prompts)) {
    out.push_back(notApplicable(thinking, "the prompts are token ids: their formatting is fixed"));
    out.push_back(notApplicable(plain, "the prompts are token ids: their formatting is fixed"));
    return;
  }
  if (!e.chatTemplate) {
    out.push_back(notApplicable(thinking, "the baseline renders prompts without the chat template (--no-chat)"));
    out.push_back(notApplicable(plain, "the baseline already renders prompts without the chat template"));
    return;
  }
  const auto with = rendered(in, thinking.thinking), without = rendered(in, e.enableThinking);
  if (!with || *with == *without)
    out.push_back(notApplicable(thinking, "the target's chat template renders the same prompt with thinking on and off"));
  else
    out.push_back(thinking);
  out.push_back(plain);
}

}  // namespace

bool baselineDeltaRuleIsRecurrent(const ModelOptions& model) {
  return std::ranges::all_of(model.devices, [](const std::string& d) { return d == "cpu"; }) && cpuKernelsEnabled();
}

std::vector<Hypothesis> planHypotheses(const BatteryInputs& in) {
  using K = Hypothesis::Kind;
  const modelspec::DrafterConfig& d = in.drafter;
  const int layers = in.target.numHiddenLayers;
  const int taps = static_cast<int>(d.targetLayerIds.size());
  std::vector<Hypothesis> out;

  for (analysis::MaskVariant v : session::kAllMaskVariants) {
    if (v == analysis::MaskVariant::Reference) continue;
    Hypothesis h{.kind = K::Mask, .variant = v};
    if (v == analysis::MaskVariant::PositionsPlusOne)
      h.planned = {"positions:+1", "block slot k placed at position anchor + k + 1 (position ids shifted by one)"};
    else
      h.planned = {"mask:" + std::string(enumName(v)), "the drafter's attention mask is " + std::string(enumName(v))};
    out.push_back(h);
  }
  Hypothesis slot0{.kind = K::SlotZeroMask};
  slot0.planned = {"slot0:mask", "the first block slot holds the mask embedding instead of the anchor's"};
  out.push_back(slot0);

  const int trained = in.settings.evaluation.blockSize.value_or(d.blockSize);
  Hypothesis block{.kind = K::BlockSize, .blockSize = trained / 2};
  block.planned = {"block-size:" + std::to_string(trained / 2),
                   "blocks of " + std::to_string(trained / 2) + " (the baseline's capped alike, for the slots both draft)"};
  out.push_back(trained / 2 >= 2 ? block : notApplicable(block, "a block of " + std::to_string(trained) + " has no smaller one"));

  // Layer -1 is the embedding (transformers' hidden_states[0]); beyond the last layer there is none.
  auto shifted = [&](int tap, int shift) { return d.targetLayerIds[static_cast<std::size_t>(tap)] + shift; };
  for (int shift : {+1, -1}) {
    Hypothesis all{.kind = K::TapShift, .tap = -1, .shift = shift};
    std::vector<int> moved;
    for (int i = 0; i < taps; ++i) moved.push_back(shifted(i, shift));
    all.planned = {"taps-shift:" + signedShift(shift), "every tap one layer " + std::string(shift > 0 ? "later" : "earlier") +
                                                           ": layers " + listText(moved)};
    const bool fits = std::ranges::all_of(moved, [&](int l) { return l >= -1 && l < layers; });
    out.push_back(fits ? all : notApplicable(all, "layer " + std::to_string(moved.back()) + " does not exist (the target has " +
                                                      std::to_string(layers) + ")"));
  }
  for (int i = 0; i < taps; ++i)
    for (int shift : {+1, -1}) {
      Hypothesis one{.kind = K::TapShift, .tap = i, .shift = shift};
      const int layer = shifted(i, shift);
      one.planned = {"tap-shift:" + std::to_string(i) + ":" + signedShift(shift),
                     "tap " + std::to_string(i) + " from layer " + std::to_string(layer) + " instead of " +
                         std::to_string(d.targetLayerIds[static_cast<std::size_t>(i)]) +
                         (layer == -1 ? " (the embedding)" : "")};
      out.push_back(layer >= -1 && layer < layers
                        ? one
                        : notApplicable(one, "layer " + std::to_string(layer) + " does not exist (the target has " +
                                                 std::to_string(layers) + ")"));
    }
  for (int i = 0; i < taps; ++i) {
    Hypothesis ablate{.kind = K::TapAblate, .tap = i};
    ablate.planned = {"tap-ablate:" + std::to_string(i),
                      "tap " + std::to_string(i) + " (layer " + std::to_string(d.targetLayerIds[static_cast<std::size_t>(i)]) +
                          ") replaced by zeros"};
    out.push_back(ablate);
  }
  for (double sigma : in.settings.tapNoiseScales) {
    Hypothesis noise{.kind = K::TapNoise, .sigma = sigma};
    noise.planned = {"tap-noise:" + numberText(sigma),
                     "Gaussian noise of " + numberText(sigma) + " x each tap's RMS added to the taps"};
    out.push_back(noise);
  }

  addFormatting(in, out);

  const std::string dtype = in.settings.evaluation.model.dtype;
  Hypothesis precision{.kind = K::TargetDtype, .dtype = dtype == "fp32" ? "bf16" : "fp32"};
  precision.planned = {"target-dtype:" + precision.dtype,
                       "the target computes its taps in " + precision.dtype + " (the baseline in " + dtype + ")"};
  out.push_back(precision);

  const bool recurrent = !baselineDeltaRuleIsRecurrent(in.settings.evaluation.model);
  Hypothesis gdn{.kind = K::DeltaRuleForm, .recurrent = recurrent};
  gdn.planned = {std::string("gdn:") + (recurrent ? "recurrent" : "chunked"),
                 std::string("the target's Gated DeltaNet layers take the ") + (recurrent ? "recurrent" : "chunked") +
                     " form (the baseline the " + (recurrent ? "chunked" : "recurrent") + " one)"};
  const bool hasDeltaNet = std::ranges::count(in.target.layerTypes, modelspec::LayerType::LinearAttention) > 0;
  out.push_back(hasDeltaNet ? gdn : notApplicable(gdn, "the target has no Gated DeltaNet (linear-attention) layers"));

  Hypothesis window{.kind = K::WindowFull};
  window.planned = {"window:full", "the drafter's sliding-window layers attend to the whole context"};
  const bool sliding = std::ranges::count(d.layerTypes, modelspec::LayerType::SlidingAttention) > 0;
  out.push_back(sliding ? window : notApplicable(window, "the drafter has no sliding-window layers"));
  // The window as speculators trains it, counted from the anchor (the W positions before it,
  // every slot alike), where servers, dflash 0.1.0 and SpecForge count back from each slot.
  Hypothesis windowFrom{.kind = K::WindowFrom, .fromAnchor = true};
  windowFrom.planned = {"window-from:anchor",
                        "every slot's sliding window holds the W positions before the anchor, as speculators trains "
                        "(served: counted back from each slot, i + 1 positions fewer for slot i)"};
  out.push_back(sliding ? windowFrom : notApplicable(windowFrom, "the drafter has no sliding-window layers"));

  // The drafter's RoPE as a training that took the target's, or ignored partial_rotary_factor,
  // would have had it (its own RoPE is what the engine runs).
  Hypothesis theta{.kind = K::RopeTheta, .rope = in.target.rope.theta};
  theta.planned = {"rope:theta=" + numberText(in.target.rope.theta),
                   "the drafter's RoPE base is the target's " + numberText(in.target.rope.theta) + " (its own " +
                       numberText(d.rope.theta) + ")"};
  out.push_back(d.rope.theta != in.target.rope.theta
                    ? theta
                    : notApplicable(theta, "the drafter's RoPE base is the target's (" + numberText(d.rope.theta) + ")"));
  const double ownPartial = d.rope.partialRotaryFactor, targetPartial = in.target.rope.partialRotaryFactor;
  Hypothesis partial{.kind = K::RopePartial, .rope = ownPartial < 1 ? 1.0 : targetPartial};
  partial.planned = {"rope:partial=" + numberText(partial.rope),
                     "the drafter rotates " + numberText(partial.rope) + " of each head (its config " +
                         numberText(ownPartial) + ")"};
  out.push_back(partial.rope != ownPartial
                    ? partial
                    : notApplicable(partial, "the drafter and the target both rotate every channel of a head"));

  // What a server that does not read a reduced draft vocabulary as speculators saved it would run.
  const std::string noMapping = "the drafter drafts over the target's whole vocabulary (no d2t mapping)";
  Hypothesis identity{.kind = K::VocabIdentity};
  identity.planned = {"vocab-map:identity", "draft id i taken as target id i (the checkpoint's d2t mapping ignored)"};
  out.push_back(d.draftVocabSize ? identity : notApplicable(identity, noMapping));
  Hypothesis targetHead{.kind = K::TargetLmHead};
  targetHead.planned = {"lm-head:target",
                        "the target's LM head over its whole vocabulary instead of the drafter's own " +
                            (d.draftVocabSize ? std::to_string(*d.draftVocabSize) + "-row" : std::string()) + " one"};
  out.push_back(d.draftVocabSize ? targetHead : notApplicable(targetHead, noMapping));

  // speculators' sample_from_anchor read the other way round (DFlash's default is off, DSpark's
  // on): the anchor's slot drafting the next token, or not drafting at all.
  Hypothesis anchor{.kind = K::SampleFromAnchor, .fromAnchor = !d.sampleFromAnchor};
  anchor.planned = {std::string("sample-from-anchor:") + (anchor.fromAnchor ? "on" : "off"),
                    anchor.fromAnchor ? "every slot drafts, the anchor's included (B drafts a block; the config says "
                                        "slots 1..B-1)"
                                      : "slots 1..B-1 draft, the anchor's slot does not (the config samples from the "
                                        "anchor)"};
  out.push_back(d.speculators ? anchor
                              : notApplicable(anchor, "z-lab's format has no sample_from_anchor: its drafts are slots "
                                                      "1..B-1"));
  return out;
}

std::vector<LintFinding> lintFindings(const BatteryInputs& in, const fs::path& drafterDir) {
  const modelspec::DrafterConfig& d = in.drafter;
  const std::string config = (drafterDir / "config.json").string() + ": ";
  std::vector<LintFinding> out;
  auto add = [&](LintSeverity severity, std::string code, std::string field, std::string message) {
    out.push_back({severity, std::move(code), config + std::move(field), std::move(message)});
  };

  if (d.maskTokenId && in.tokenizer && static_cast<std::size_t>(*d.maskTokenId) < in.tokenizer->vocabSize() &&
      !in.tokenizer->isAdded(*d.maskTokenId))
    add(LintSeverity::Warning, "mask-token-in-text", "dflash_config.mask_token_id",
        "mask_token_id " + std::to_string(*d.maskTokenId) + " is the ordinary token '" +
            in.tokenizer->displayToken(*d.maskTokenId) +
            "', which real text produces: the drafter cannot tell a masked slot from it. Use a reserved or "
            "padded row of the embedding.");

  const int last = in.target.numHiddenLayers - 1;
  if (std::ranges::count(d.targetLayerIds, last) > 0)
    add(LintSeverity::Warning, "tap-is-last-layer", "dflash_config.target_layer_ids",
        "target_layer_ids " + listText(d.targetLayerIds) + " include layer " + std::to_string(last) +
            ", the last one, whose output the target predicts the next token from: the drafter can learn to copy "
            "the answer from it instead of drafting. Tap earlier layers.");
  std::vector<int> sorted = d.targetLayerIds;
  std::ranges::sort(sorted);
  if (std::ranges::adjacent_find(sorted) != sorted.end())
    add(LintSeverity::Warning, "duplicate-tap", "dflash_config.target_layer_ids",
        "target_layer_ids " + listText(d.targetLayerIds) + " name a layer twice.");
  if (!d.targetLayerIdsFromConfig)
    add(LintSeverity::Info, "taps-derived", "dflash_config.target_layer_ids",
        "target_layer_ids is absent: the default rule gives " + listText(d.targetLayerIds) +
            "; name the taps the drafter was trained with.");

  // The drafter rotates its own queries and keys (over the target's projected features too)
  // with its own RoPE: the target's never enters its attention, so a different one is no
  // mismatch by itself, only a fact worth knowing (z-lab's drafters keep the target's).
  if (d.rope.theta != in.target.rope.theta || d.rope.type != in.target.rope.type)
    add(LintSeverity::Info, "rope-differs", "rope_theta",
        "the drafter's RoPE (" + d.rope.type + ", theta " + std::to_string(static_cast<long long>(d.rope.theta)) +
            ") is not the target's (" + in.target.rope.type + ", theta " +
            std::to_string(static_cast<long long>(in.target.rope.theta)) +
            "). The drafter applies its own to its block and context, so this is right when it was trained with "
            "this config; if training used the target's RoPE instead, the rope:theta hypothesis measures it.");

  modelspec::CheckpointFacts facts;
  for (const modelspec::CompatibilityIssue& issue : modelspec::checkCompatibility(d, in.target, facts).issues)
    add(issue.severity == modelspec::Severity::Error ? LintSeverity::Error : LintSeverity::Warning, "mismatch",
        issue.field, issue.message + " (drafter " + issue.drafterValue + ", target " + issue.targetValue + ")");
  for (const modelspec::DrafterConfigWarning& w : d.warnings) add(LintSeverity::Warning, "config-field", w.field, w.message);

  const fs::path ownTokenizer = drafterDir / "tokenizer.json", targetTokenizer = in.settings.evaluation.target / "tokenizer.json";
  if (fs::exists(ownTokenizer) && fs::exists(targetTokenizer)) {
    auto bytes = [](const fs::path& p) {
      std::ifstream f(p, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(f), {});
    };
    if (bytes(ownTokenizer) != bytes(targetTokenizer))
      out.push_back({LintSeverity::Warning, "tokenizer-differs", ownTokenizer.string(),
                     "the drafter ships a tokenizer.json that differs from the target's: drafts are target token ids, so "
                     "the two vocabularies must be the same."});
  }

  const EvaluationSettings& e = in.settings.evaluation;
  if (e.blockSize && *e.blockSize != d.blockSize)
    add(LintSeverity::Info, "block-size-requested", "block_size",
        "blocks of " + std::to_string(*e.blockSize) + " are requested; the drafter was trained with " +
            std::to_string(d.blockSize) + ".");
  std::string format = !textPrompts(in.prompts) ? "the prompts are token ids, formatted by whoever wrote them"
                       : !e.chatTemplate       ? "prompts are plain text, without the chat template"
                                               : std::string("prompts are rendered with the target's chat template, thinking ") +
                                               (e.enableThinking ? "on" : "off");
  out.push_back({LintSeverity::Info, "prompt-format", e.prompts.string(),
                 format + ". The drafter should be evaluated as it was trained; thinking:* and chat-template:off "
                          "test the other choices."});
  const std::vector<LintFinding> templates = templateLint(in, drafterDir);
  out.insert(out.end(), templates.begin(), templates.end());
  if (auto rows = draftVocabularyLint(d, drafterDir, e.target)) out.push_back(std::move(*rows));

  std::ranges::stable_sort(out, {}, [](const LintFinding& f) { return static_cast<int>(f.severity); });
  return out;
}

}  // namespace dfi::engine
