// `diagnose`'s run: for every drafter, the baseline (the live loop's anchors, then the
// teacher-forced drafts at them) and every applicable hypothesis over the prompts, recorded as
// runs of one session, within the budget and until cancelled. What each hypothesis changes and
// how it drafts is hypotheses.cpp.

#include "dfi/engine/diagnosis.h"

#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "dfi/analysis/garble.h"
#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/session/record_fields.h"
#include "dfi/modelspec/target_config.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/diagnosis/diagnosis_battery.h"
#include "evaluation/diagnosis/diagnosis_dump.h"
#include "evaluation/diagnosis/hypotheses.h"
#include "evaluation/evaluation_common.h"
#include "evaluation/evaluation_models.h"

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

std::string hypothesisRunName(const fs::path& drafter, const std::string& hypothesis) {
  return drafter.filename().string() + "/diagnose/" + hypothesis;
}

// Writes a run's steps of one prompt, as the evaluation does (garble flags, token strings, the
// drafts' ids in `vocabulary`: the live and baseline runs', whose drafter is the checkpoint's).
void writeSteps(RecordSink& sink, TokenStringBook& book, session::RunId run, session::PromptId prompt,
                std::vector<session::StepRecord> steps, const analysis::GarbleContext& garble,
                const DraftVocabulary* vocabulary = nullptr) {
  for (session::StepRecord& step : steps) {
    stampStep(step, run, prompt, garble, vocabulary);
    sink.addStep(step);
    noteStep(book, step);
  }
}

}  // namespace

DiagnosisOutcome runDiagnosis(const DiagnosisSettings& settings, RecordSink& sink,
                              const std::function<void(const EvaluationProgress&)>& progress,
                              const CancellationToken& cancel, ModelRegistry* registry) {
  const EvaluationSettings base = baselineSettings(settings);
  if (base.maxNewTokens < 1) throw UsageError("--max-new-tokens must be at least 1");
  if (settings.budgetMinutes && *settings.budgetMinutes <= 0) throw UsageError("--budget-minutes must be positive");
  const auto targetConfig = modelspec::parseTargetConfig(base.target / "config.json");
  const auto planTokenizer = tokenizer::Tokenizer::inDirectory(base.target);
  const std::vector<PromptSpec> prompts = evaluatedPrompts(base);
  if (prompts.empty()) throw UsageError("no prompts to diagnose on", {.file = base.prompts.string()});

  // Lint and battery of every drafter before any weight is read.
  std::vector<PlannedDrafter> planned;
  for (const fs::path& dir : base.drafters) {
    PlannedDrafter p = planDrafter(settings, targetConfig, planTokenizer, prompts, dir);
    for (const analysis::LintFinding& f : p.plan.lint)
      logText("engine", f.severity == analysis::LintSeverity::Info ? LogLevel::Info : LogLevel::Warn,
              "lint " + std::string(analysis::lintSeverityName(f.severity)) + " " + f.code + ": " + f.subject + ": " +
                  f.message);
    planned.push_back(std::move(p));
  }

  // The loading's stages as progress before any hypothesis (the totals are per drafter, later).
  const LoadedModels models = loadModels(base, registry, [&](const std::string& stage) {
    if (progress) progress({.current = stage});
  });
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
  const std::string settingsJson = settings::settingsJson(base);
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
    const PlannedDrafter& plan = planned[d];
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
      if (auto own = variantDrafter(h, drafter, *models.target)) ownDrafters[&h] = std::move(own);
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
      writeSteps(sink, book, liveRun, prompt.id, live.steps, garble, drafter.model->draftVocabulary());

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
                 garble, drafter.model->draftVocabulary());
      const auto t3 = Clock::now();
      const std::uint64_t seed = settings.noiseSeed() ^ (static_cast<std::uint64_t>(prompt.id) * 0x9E3779B97F4A7C15ULL);
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
        other = TargetModel::load(models.targetFiles.checkpoint, models.targetFiles.config, options);
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
