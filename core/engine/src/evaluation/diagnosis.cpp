#include "dfi/engine/diagnosis.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/add.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "dfi/analysis/garble.h"
#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/session/record_fields.h"
#include "dfi/tensorfile/drafter_config.h"
#include "dfi/tensorfile/target_config.h"
#include "evaluation/dflash_decode.h"
#include "evaluation/dflash_teacher_forced.h"
#include "evaluation/diagnosis_battery.h"
#include "evaluation/diagnosis_dump.h"
#include "evaluation/evaluation_common.h"
#include "evaluation/evaluation_models.h"
#include "kernels/argmax.h"
#include "kernels/gated_delta_rule.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;
using K = Hypothesis::Kind;

// The baseline's settings: greedy, live anchors, teacher-forced under the reference mask.
EvaluationSettings baselineSettings(const DiagnosisSettings& s) {
  EvaluationSettings e = s.evaluation;
  e.modes = {EvaluationMode::Live, EvaluationMode::TeacherForced};
  e.maskVariants = {analysis::MaskVariant::Reference};
  e.anchors = {};
  e.sampling = {};
  e.samples = 1;
  e.parityCheck = false;
  e.hiddenStatistics = false;
  return e;
}

std::optional<tokenizer::Tokenizer> plannedTokenizer(const fs::path& target) {
  if (!fs::exists(target / "tokenizer.json")) return std::nullopt;
  return tokenizer::Tokenizer::fromDirectory(target);
}

// One prompt's baseline: where the live loop placed its anchors on its greedy continuation.
struct PromptPass {
  const PromptSpec* prompt = nullptr;
  std::int64_t promptLength = 0;
  std::vector<std::int64_t> tokens;  // prompt + continuation
  std::vector<std::int64_t> anchors;
  at::Tensor predictions;  // [T] the target's greedy token after each position, CPU
};

// Every target layer a drafter-side hypothesis reads, one forward's worth: the taps and their
// neighbours (layer -1 is the embedding), not all layers, so that a deep target's states fit.
class LayerStates {
 public:
  LayerStates(const TargetModel& target, const at::Tensor& ids, const std::set<int>& layers) {
    std::vector<int> decoder;
    for (int l : layers)
      if (l >= 0) decoder.push_back(l);
    const ForwardOutput out = target.forward(ids.view({1, -1}), nullptr, {.tapLayers = decoder, .logits = true});
    for (std::size_t i = 0; i < decoder.size(); ++i) states_[decoder[i]] = out.taps[i][0];
    if (layers.contains(-1)) states_[-1] = target.embed(ids).to(out.taps.front().scalar_type());
    predictions_ = argmaxLastDim(out.logits[0]).to(at::kCPU).contiguous();
  }

  const at::Tensor& layer(int id) const { return states_.at(id); }
  const at::Tensor& predictions() const { return predictions_; }

 private:
  std::map<int, at::Tensor> states_;
  at::Tensor predictions_;
};

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

// The baseline's taps with one drafter-side hypothesis applied.
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

std::string hypothesisRunName(const fs::path& drafter, const std::string& hypothesis) {
  return drafter.filename().string() + "/diagnose/" + hypothesis;
}

// Writes a run's steps of one prompt, as the evaluation does (garble flags, token strings).
void writeSteps(RecordSink& sink, TokenStringBook& book, session::RunId run, session::PromptId prompt,
                std::vector<session::StepRecord> steps, const analysis::GarbleContext& garble) {
  for (session::StepRecord& step : steps) {
    step.runId = run;
    step.promptId = prompt;
    step.garbleFlags = analysis::detectGarble(step.draftTokens, garble, step.anchorToken);
    sink.addStep(step);
    noteStep(book, step);
  }
}

// A drafter-side hypothesis's own drafter where it needs one: another block size, or its
// sliding layers made full.
std::unique_ptr<DFlashDrafter> variantDrafter(const Hypothesis& h, const fs::path& dir, const TargetModel& target) {
  if (h.kind == K::BlockSize) return loadDrafter(dir, target, h.blockSize);
  if (h.kind != K::WindowFull) return nullptr;
  auto config = tensorfile::parseDrafterConfig(dir / "config.json", target.config().numHiddenLayers);
  for (tensorfile::LayerType& type : config.layerTypes)
    if (type == tensorfile::LayerType::SlidingAttention) type = tensorfile::LayerType::FullAttention;
  return loadDrafterAs(dir, target, std::move(config));
}

// The drafts of one drafter-side hypothesis at the baseline's anchors, through each block's
// first rejected slot: a hypothesis is measured by its acceptance alone.
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

// The drafts of one target-side hypothesis: the target runs again (other formatting of the
// prompt, other dtype, other Gated DeltaNet form) and the drafter reads its taps.
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

// One drafter's lint and battery, from the configs, tokenizer and prompts alone.
struct Planned {
  analysis::DiagnosisPlan plan;
  std::vector<Hypothesis> hypotheses;
};

Planned planDrafter(const DiagnosisSettings& settings, const tensorfile::TargetConfig& target,
                    const std::optional<tokenizer::Tokenizer>& tokenizer, const std::vector<PromptSpec>& prompts,
                    const fs::path& dir) {
  const auto config = tensorfile::parseDrafterConfig(dir / "config.json", target.numHiddenLayers);
  const BatteryInputs in{settings, config, target, tokenizer, prompts};
  Planned p{{lintFindings(in, dir), {}}, planHypotheses(in)};
  for (const Hypothesis& h : p.hypotheses) p.plan.battery.push_back(h.planned);
  return p;
}

}  // namespace

std::vector<analysis::LintFinding> lintDrafter(const DiagnosisSettings& settings, const fs::path& drafter) {
  const auto target = tensorfile::parseTargetConfig(settings.evaluation.target / "config.json");
  return planDrafter(settings, target, plannedTokenizer(settings.evaluation.target),
                     evaluatedPrompts(settings.evaluation), drafter)
      .plan.lint;
}

DiagnosisOutcome runDiagnosis(const DiagnosisSettings& settings, RecordSink& sink,
                              const std::function<void(const EvaluationProgress&)>& progress,
                              const CancellationToken& cancel, ModelRegistry* registry) {
  const EvaluationSettings base = baselineSettings(settings);
  if (base.maxNewTokens < 1) throw UsageError("--max-new-tokens must be at least 1");
  if (settings.budgetMinutes && *settings.budgetMinutes <= 0) throw UsageError("--budget-minutes must be positive");
  const auto targetConfig = tensorfile::parseTargetConfig(base.target / "config.json");
  const auto planTokenizer = plannedTokenizer(base.target);
  const std::vector<PromptSpec> prompts = evaluatedPrompts(base);
  if (prompts.empty()) throw UsageError("no prompts to diagnose on", {.file = base.prompts.string()});

  // Lint and battery of every drafter before any weight is read.
  std::vector<Planned> planned;
  for (const fs::path& dir : base.drafters) {
    Planned p = planDrafter(settings, targetConfig, planTokenizer, prompts, dir);
    for (const analysis::LintFinding& f : p.plan.lint)
      logText("engine", f.severity == analysis::LintSeverity::Info ? LogLevel::Info : LogLevel::Warn,
              "lint " + std::string(analysis::lintSeverityName(f.severity)) + " " + f.code + ": " + f.subject + ": " +
                  f.message);
    planned.push_back(std::move(p));
  }

  const LoadedModels models = loadModels(base, registry);
  c10::InferenceMode inference;
  // The training features against this target's layers: lint too, though it needs the target.
  if (settings.trainingDump)
    for (std::size_t d = 0; d < planned.size(); ++d) {
      auto& lint = planned[d].plan.lint;
      const auto found = trainingDumpFindings(*settings.trainingDump, *models.target, models.drafters[d].model->config());
      lint.insert(lint.end(), found.begin(), found.end());
      std::ranges::stable_sort(lint, {}, [](const analysis::LintFinding& f) { return static_cast<int>(f.severity); });
    }
  const auto stops = stopTokens(models);
  const int topK = base.topK;
  const std::string settingsJson = base.toJson();
  // A hypothesis is measured by its acceptance: its runs keep each block's drafts through the
  // first rejected slot (stepsUntilRejected), and no top-k.
  nlohmann::json withDrafts = nlohmann::json::parse(settingsJson);
  withDrafts["drafts"] = "through each block's first rejected slot";
  const std::string hypothesisSettings = withDrafts.dump();
  TokenStringBook book(models.tokenizer, sink);
  DiagnosisOutcome outcome;
  const double budgetSeconds = settings.budgetMinutes ? *settings.budgetMinutes * 60 / static_cast<double>(base.drafters.size()) : 0;

  for (std::size_t d = 0; d < models.drafters.size(); ++d) {
    const LoadedDrafter& drafter = models.drafters[d];
    const Planned& plan = planned[d];
    const auto drafterStarted = Clock::now();
    auto newRun = [&](const std::string& name, EvaluationMode mode, const std::string& hypothesis,
                      const Hypothesis* h) {
      session::RunRecord run = runRecordOf(models, drafter, base);
      run.name = name;
      run.mode = mode;
      if (h && h->kind == K::TargetDtype) run.dtype = h->dtype;
      if (h && h->kind == K::Mask) run.maskVariant = h->variant;
      if (h && h->kind == K::BlockSize) run.blockSize = h->blockSize;
      if (h && h->kind == K::WindowFull) run.slidingWindow = 0;
      run.hypothesis = hypothesis;
      run.topK = h ? 0 : topK;
      run.settingsJson = hypothesis == "baseline" ? analysis::withDiagnosisPlan(settingsJson, plan.plan)
                         : h                      ? hypothesisSettings
                                                  : settingsJson;
      return sink.addRun(run);
    };
    const session::RunId liveRun = newRun(hypothesisRunName(drafter.dir, "live"), EvaluationMode::Live, "", nullptr);
    const session::RunId baselineRun =
        newRun(hypothesisRunName(drafter.dir, "baseline"), EvaluationMode::TeacherForced, "baseline", nullptr);
    outcome.baselines.push_back(baselineRun);
    std::vector<std::pair<const Hypothesis*, session::RunId>> drafterSide, targetSide;
    std::map<const Hypothesis*, std::unique_ptr<DFlashDrafter>> ownDrafters;
    for (const Hypothesis& h : plan.hypotheses) {
      if (!h.planned.applicable) continue;
      const session::RunId id = newRun(hypothesisRunName(drafter.dir, h.planned.name), EvaluationMode::TeacherForced,
                                       h.planned.name, &h);
      (h.targetSide() ? targetSide : drafterSide).emplace_back(&h, id);
      if (auto own = variantDrafter(h, drafter.dir, *models.target)) ownDrafters[&h] = std::move(own);
    }
    std::vector<session::RunId> allRuns{liveRun, baselineRun};
    for (const auto& [h, id] : drafterSide) allRuns.push_back(id);
    for (const auto& [h, id] : targetSide) allRuns.push_back(id);

    const auto& config = drafter.model->config();
    const analysis::GarbleContext garble = garbleContextOf(models, *drafter.model);
    std::set<int> layers;
    for (int id : config.targetLayerIds)
      for (int shift : {-1, 0, 1})
        if (id + shift >= -1 && id + shift < targetConfig.numHiddenLayers) layers.insert(id + shift);

    EvaluationProgress state{0, static_cast<std::int64_t>(prompts.size() * (1 + targetSide.size()))};
    auto report = [&](const std::string& what) {
      ++state.done;
      state.elapsedSeconds = seconds(Clock::now() - drafterStarted);
      state.etaSeconds = state.elapsedSeconds / static_cast<double>(state.done) * static_cast<double>(state.total - state.done);
      state.current = drafter.dir.filename().string() + ": " + what;
      if (progress) progress(state);
    };
    auto stopIfCancelled = [&] {
      if (!cancel.cancelled()) return;
      book.flush();
      sink.flush();
      throw CancelledError("diagnosis cancelled; the hypotheses measured so far are kept, paired over the prompts they reached");
    };

    // Phase 1, prompt by prompt: the live loop places the anchors; one target pass serves the
    // baseline and every drafter-side hypothesis.
    std::vector<PromptPass> passes;
    double baselineSeconds = 0, drafterSideSeconds = 0, targetPassSeconds = 0;
    for (const PromptSpec& prompt : prompts) {
      stopIfCancelled();
      const auto t0 = Clock::now();
      const std::vector<std::int64_t> ids = promptIds(prompt, models.tokenizer, base, base.prompts);
      const SpeculativeResult live = speculativeDecode(
          *models.target, *drafter.model, ids,
          {.maxNewTokens = base.maxNewTokens, .stopTokens = stops, .topK = topK, .counting = base.stepCounting});
      PromptPass pass{&prompt, live.promptLength, live.tokens, {}, {}};
      for (const session::StepRecord& step : live.steps) pass.anchors.push_back(step.anchorPosition);
      const std::vector<session::TokenId> promptTokens(ids.begin(), ids.end());
      book.note(promptTokens);
      for (session::RunId run : allRuns)
        sink.addPrompt({run, prompt.id, prompt.dataset, 0,
                        models.tokenizer ? models.tokenizer->decode(promptTokens) : std::string(), promptTokens,
                        static_cast<std::int32_t>(live.tokens.size() - ids.size())});
      writeSteps(sink, book, liveRun, prompt.id, live.steps, garble);

      const auto t1 = Clock::now();
      const at::Tensor sequence = at::tensor(pass.tokens, at::kLong);
      const LayerStates states(*models.target, sequence, layers);
      pass.predictions = states.predictions();
      const auto t2 = Clock::now();
      // The baseline records every draft and its top-k, as `run` does.
      const Hypothesis none{.kind = K::Mask};
      const std::vector<int>& taps = config.targetLayerIds;
      const SequenceFeatures baseline = featuresOf(sequence, pass.predictions, hypothesisTaps(none, states, taps, 0));
      writeSteps(sink, book, baselineRun, prompt.id,
                 teacherForcedSteps(baseline, *drafter.model, pass.anchors, analysis::MaskVariant::Reference, topK),
                 garble);
      const auto t3 = Clock::now();
      const std::uint64_t seed = settings.seed ^ (static_cast<std::uint64_t>(prompt.id) * 0x9E3779B97F4A7C15ULL);
      // The hypotheses that change only the taps share one drafter forward.
      std::vector<at::Tensor> tapSets;
      std::vector<session::RunId> tapRuns;
      for (const auto& [h, run] : drafterSide) {
        if (!h->tapsOnly()) continue;
        tapSets.push_back(sideBySide(hypothesisTaps(*h, states, taps, seed)));
        tapRuns.push_back(run);
      }
      if (!tapSets.empty()) {
        stopIfCancelled();
        auto perSet =
            stepsUntilRejected(baseline, tapSets, *drafter.model, pass.anchors, analysis::MaskVariant::Reference);
        for (std::size_t i = 0; i < tapRuns.size(); ++i)
          writeSteps(sink, book, tapRuns[i], prompt.id, std::move(perSet[i]), garble);
      }
      for (const auto& [h, run] : drafterSide) {
        if (h->tapsOnly()) continue;
        stopIfCancelled();  // a cancel waits for one drafter forward, not the whole prompt
        const auto own = ownDrafters.find(h);
        writeSteps(sink, book, run, prompt.id,
                   drafterSideSteps(*h, states, sequence, *drafter.model,
                                    own == ownDrafters.end() ? nullptr : own->second.get(), pass, seed),
                   garble);
      }
      const auto t4 = Clock::now();
      baselineSeconds += seconds(t3 - t0);
      targetPassSeconds += seconds(t2 - t1) + seconds(t3 - t2);
      drafterSideSeconds += seconds(t4 - t3);
      book.flush();
      passes.push_back(std::move(pass));
      report("prompt " + std::to_string(passes.size()) + "/" + std::to_string(prompts.size()));

      // The budget: would the next prompt, and the target-side hypotheses on every prompt so
      // far, still fit? A target-side hypothesis costs about one teacher-forced pass per prompt.
      if (budgetSeconds > 0 && passes.size() < prompts.size()) {
        const double n = static_cast<double>(passes.size());
        const double perPrompt = seconds(Clock::now() - drafterStarted) / n;
        const double targetSidePerPrompt = targetPassSeconds / n * static_cast<double>(targetSide.size());
        if ((n + 1) * (perPrompt + targetSidePerPrompt) > budgetSeconds) {
          outcome.budgetReached = true;
          logText("engine", LogLevel::Warn,
                  drafter.dir.string() + ": the budget allows " + std::to_string(passes.size()) + " of " +
                      std::to_string(prompts.size()) + " prompts; every hypothesis is measured on those");
          break;
        }
      }
    }

    // Phase 2, hypothesis by hypothesis: the target runs again for each.
    double targetSideSeconds = 0;
    for (const auto& [h, run] : targetSide) {
      const auto t0 = Clock::now();
      std::unique_ptr<TargetModel> other;
      if (h->kind == K::TargetDtype) {
        ModelOptions options = base.model;
        options.dtype = h->dtype;
        other = TargetModel::load(base.target, options);
      }
      const TargetModel& target = other ? *other : *models.target;
      for (std::size_t p = 0; p < passes.size(); ++p) {
        stopIfCancelled();
        writeSteps(sink, book, run, passes[p].prompt->id,
                   targetSideSteps(*h, target, *drafter.model, passes[p], models, base), garble);
        book.flush();
        report(h->planned.name + ", prompt " + std::to_string(p + 1) + "/" + std::to_string(passes.size()));
      }
      targetSideSeconds += seconds(Clock::now() - t0);
    }

    const std::string timings = nlohmann::json{{"baseline_seconds", baselineSeconds},
                                               {"teacher_forced_seconds", targetPassSeconds},
                                               {"drafter_side_seconds", drafterSideSeconds},
                                               {"target_side_seconds", targetSideSeconds},
                                               {"prompts", passes.size()}}
                                    .dump();
    for (session::RunId run : allRuns) sink.finishRun(run, unixNow(), timings);
    outcome.prompts = static_cast<std::int64_t>(passes.size());
  }
  sink.flush();
  return outcome;
}

}  // namespace dfi::engine
