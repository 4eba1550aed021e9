#include "evaluation/diagnosis/hypotheses.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/add.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros_like.h>

#include <algorithm>

#include "dfi/modelspec/drafter_config.h"
#include "evaluation/evaluation_common.h"
#include "kernels/argmax.h"
#include "kernels/gated_delta_rule.h"

namespace dfi::engine {

namespace fs = std::filesystem;
using K = Hypothesis::Kind;

LayerStates::LayerStates(const TargetModel& target, const at::Tensor& ids, const std::set<int>& layers) {
  std::vector<int> decoder;
  for (int l : layers)
    if (l >= 0) decoder.push_back(l);
  const ForwardOutput out = target.forward(ids.view({1, -1}), nullptr, {.tapLayers = decoder, .logits = true});
  for (std::size_t i = 0; i < decoder.size(); ++i) states_[decoder[i]] = out.taps[i][0];
  if (layers.contains(-1)) states_[-1] = target.embed(ids).to(out.taps.front().scalar_type());
  predictions_ = argmaxLastDim(out.logits[0]).to(at::kCPU).contiguous();
}

at::Tensor sideBySide(const std::vector<at::Tensor>& taps) {
  std::vector<at::Tensor> rows;
  for (const at::Tensor& t : taps) rows.push_back(t.to(taps.front().device()));
  return at::cat(rows, -1);
}

SequenceFeatures featuresOf(const at::Tensor& ids, const at::Tensor& predictions, std::vector<at::Tensor> taps) {
  SequenceFeatures s;
  s.ids = ids;
  s.predictions = predictions;
  s.features = sideBySide(taps);
  s.taps = std::move(taps);
  return s;
}

std::vector<at::Tensor> hypothesisTaps(const Hypothesis& h, const LayerStates& states, const std::vector<int>& tapIds,
                                       std::uint64_t seed) {
  std::vector<at::Tensor> taps;
  for (std::size_t i = 0; i < tapIds.size(); ++i) {
    const bool moved = h.kind == K::TapShift && (h.tap < 0 || h.tap == static_cast<int>(i));
    taps.push_back(states.layer(tapIds[i] + (moved ? h.shift : 0)));
  }
  if (h.kind == K::TapAblate) taps[static_cast<std::size_t>(h.tap)] = at::zeros_like(taps[static_cast<std::size_t>(h.tap)]);
  if (h.kind == K::TapNoise) {
    // Drawn on the CPU from a seeded generator: the same noise on every device.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    for (at::Tensor& tap : taps) {
      const at::Tensor x = tap.to(at::kFloat);
      const double rms = x.square().mean().sqrt().item<double>();
      const at::Tensor noise = at::mul(at::randn(tap.sizes(), generator, at::TensorOptions().dtype(at::kFloat)), h.sigma * rms);
      tap = at::add(x, noise.to(tap.device())).to(tap.scalar_type());
    }
  }
  return taps;
}

std::unique_ptr<DFlashDrafter> variantDrafter(const Hypothesis& h, const DrafterFiles& files, const TargetModel& target) {
  if (h.kind == K::BlockSize) return loadDrafter(files, target, h.blockSize);
  modelspec::DrafterConfig config = files.config;
  switch (h.kind) {
    case K::WindowFull:
      for (modelspec::LayerType& type : config.layerTypes)
        if (type == modelspec::LayerType::SlidingAttention) type = modelspec::LayerType::FullAttention;
      return loadDrafterAs(files.checkpoint, target, std::move(config));
    case K::RopeTheta:
      config.rope.theta = h.rope;
      return loadDrafterAs(files.checkpoint, target, std::move(config));
    case K::RopePartial:
      config.rope.partialRotaryFactor = h.rope;
      return loadDrafterAs(files.checkpoint, target, std::move(config));
    case K::SampleFromAnchor:
      config.sampleFromAnchor = h.fromAnchor;
      return loadDrafterAs(files.checkpoint, target, std::move(config));
    case K::WindowFrom:
      config.slidingWindowFromAnchor = h.fromAnchor;
      return loadDrafterAs(files.checkpoint, target, std::move(config));
    case K::TargetLmHead:  // without its vocabulary the drafter drafts through the target's head
      return loadDrafterAs(files.checkpoint, target, std::move(config), [](DrafterWeights& w) { w.vocabulary.reset(); });
    case K::VocabIdentity:
      return loadDrafterAs(files.checkpoint, target, std::move(config), [](DrafterWeights& w) {
        w.vocabulary->targetIds = at::arange(w.vocabulary->targetIds.size(0), w.vocabulary->targetIds.options());
      });
    default: return nullptr;
  }
}

std::vector<session::StepRecord> drafterSideSteps(const Hypothesis& h, const LayerStates& states, const at::Tensor& ids,
                                                  const DFlashDrafter& drafter, const DFlashDrafter* own,
                                                  const PromptPass& pass, std::uint64_t seed) {
  const std::vector<int>& tapIds = drafter.config().targetLayerIds;
  const SequenceFeatures sequence = featuresOf(ids, states.predictions(), hypothesisTaps(h, states, tapIds, seed));
  const DFlashDrafter& model = own ? *own : drafter;
  if (h.kind == K::Mask) return stepsUntilRejected(sequence, model, pass.anchors, h.variant);
  if (h.kind != K::SlotZeroMask) return stepsUntilRejected(sequence, model, pass.anchors, analysis::MaskVariant::Reference);
  // Every block's first slot reads the token at its anchor: all mask tokens here. The records
  // keep the real anchor tokens.
  SequenceFeatures masked = sequence;
  masked.ids = at::full_like(ids, static_cast<std::int64_t>(*drafter.config().maskTokenId));
  std::vector<session::StepRecord> steps =
      stepsUntilRejected(masked, model, pass.anchors, analysis::MaskVariant::Reference);
  const std::int64_t* real = ids.data_ptr<std::int64_t>();
  for (session::StepRecord& step : steps) step.anchorToken = static_cast<session::TokenId>(real[step.anchorPosition]);
  return steps;
}

std::vector<session::StepRecord> targetSideSteps(const Hypothesis& h, const TargetModel& target,
                                                 const DFlashDrafter& drafter, const PromptPass& pass,
                                                 const LoadedModels& models, const EvaluationSettings& base) {
  std::vector<std::int64_t> sequence = pass.tokens;
  std::vector<std::int64_t> anchors = pass.anchors;
  if (h.kind == K::Formatting) {
    EvaluationSettings formatted = base;
    formatted.chatTemplate = h.chatTemplate;
    formatted.enableThinking = h.thinking;
    const std::vector<std::int64_t> prompt = promptIds(*pass.prompt, models.tokenizer, formatted, base.prompts);
    sequence.assign(prompt.begin(), prompt.end());
    sequence.insert(sequence.end(), pass.tokens.begin() + pass.promptLength, pass.tokens.end());
    const std::int64_t moved = static_cast<std::int64_t>(prompt.size()) - pass.promptLength;
    for (std::int64_t& a : anchors) a += moved;
  }
  std::optional<ScopedDeltaRuleForm> form;
  if (h.kind == K::DeltaRuleForm) form.emplace(h.recurrent ? DeltaRuleForm::Recurrent : DeltaRuleForm::Chunked);
  // Only the taps change under another dtype or form: the served target, and so the tokens it
  // verifies, stay the baseline's. Another formatting changes the context the target verifies
  // in: its predictions from the first anchor on.
  const bool formatting = h.kind == K::Formatting;
  const auto length = static_cast<std::int64_t>(sequence.size());
  SequenceFeatures features = sequenceFeatures(
      target, drafter, sequence, formatting && !anchors.empty() ? std::ranges::min(anchors) : length);
  features.features = features.features.to(models.target->embeddingWeight().scalar_type());
  if (!formatting) features.predictions = pass.predictions;
  return stepsUntilRejected(features, drafter, anchors, analysis::MaskVariant::Reference);
}

PlannedDrafter planDrafter(const DiagnosisSettings& settings, const modelspec::TargetConfig& target,
                           const std::optional<tokenizer::Tokenizer>& tokenizer, const std::vector<PromptSpec>& prompts,
                           const fs::path& dir) {
  const auto config = modelspec::parseDrafterConfig(dir / "config.json", target.numHiddenLayers);
  const BatteryInputs in{settings, config, target, tokenizer, prompts};
  PlannedDrafter p{{lintFindings(in, dir), {}}, planHypotheses(in)};
  for (const Hypothesis& h : p.hypotheses) p.plan.battery.push_back(h.planned);
  return p;
}

std::vector<analysis::LintFinding> lintDrafter(const DiagnosisSettings& settings, const fs::path& drafter) {
  const auto target = modelspec::parseTargetConfig(settings.evaluation.target / "config.json");
  return planDrafter(settings, target, tokenizer::Tokenizer::inDirectory(settings.evaluation.target),
                     evaluatedPrompts(settings.evaluation), drafter)
      .plan.lint;
}

}  // namespace dfi::engine
