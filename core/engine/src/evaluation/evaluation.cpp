#include "dfi/engine/evaluation.h"

#include <algorithm>
#include <map>
#include <optional>

#include <c10/core/InferenceMode.h>
#include <nlohmann/json.hpp>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/budget_what_if.h"
#include "dfi/analysis/garble.h"
#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/session/record_fields.h"
#include "dfi/settings/settings_fields.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/compatibility.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/tokenizer.h"
#include "evaluation/ddtree/ddtree_steps.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/live/step_cost.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/evaluation_common.h"
#include "evaluation/evaluation_models.h"
#include "evaluation/teacher_forced/anchors.h"
#include "evaluation/teacher_forced/teacher_forced_pass.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;

// "<drafter>/<mode>/<variant>", and for a sampled evaluation "/T=1 #r" (the repeat).
std::string runName(const fs::path& drafter, EvaluationMode mode, analysis::MaskVariant variant,
                    const EvaluationSettings& settings, int repeat) {
  std::string name = drafter.filename().string() + "/" + std::string(enumName(mode)) + "/" + std::string(enumName(variant));
  if (!settings.sampling.greedy()) name += "/" + samplingLabel(settings.sampling) + " #" + std::to_string(repeat);
  return name;
}

struct RunKey {
  EvaluationMode mode;
  analysis::MaskVariant variant;
};

// Live decoding runs with the reference mask only: other variants need features the live
// loop does not have (the anchor's own) or change positions; they are measured teacher-forced.
std::vector<RunKey> runKeys(const EvaluationSettings& settings) {
  std::vector<RunKey> keys;
  for (EvaluationMode mode : settings.modes) {
    if (mode == EvaluationMode::Live) {
      keys.push_back({mode, analysis::MaskVariant::Reference});
      continue;
    }
    for (analysis::MaskVariant v : settings.maskVariants) keys.push_back({mode, v});
  }
  return keys;
}

// The drafter's step costs on the evaluation's device, timed after the first prompt.
analysis::CostModel calibratedCost(const LoadedModels& models, const LoadedDrafter& drafter,
                                   const EvaluationSettings& settings, const PromptSpec& prompt, int topK) {
  const auto ids = promptIds(prompt, models.tokenizer, settings, settings.prompts);
  const int b = drafter.model->blockSize();
  const std::vector<int> budgets = analysis::defaultTreeBudgets(b, topK);
  analysis::CostModel cost = measureStepCost(
      *models.target, *drafter.model, ids,
      {.verifiedTokens = costTokenCounts(b, budgets.empty() ? settings.ddtreeBudget : budgets.back())});
  cost.source = "calibrated on " + settings::deviceListText(settings.model.devices) + " (" + settings.model.dtype + ") after a " +
                std::to_string(ids.size()) + "-token prompt";
  return cost;
}

}  // namespace

std::vector<EvaluatedRun> runEvaluation(const EvaluationSettings& settings, RecordSink& sink,
                                      const std::function<void(const EvaluationProgress&)>& progress,
                                      const CancellationToken& cancel, ModelRegistry* registry) {
  settings::validate(settings);
  const auto prompts = evaluatedPrompts(settings);
  const auto total = static_cast<std::int64_t>(settings.drafters.size() * static_cast<std::size_t>(settings.samples) *
                                               prompts.size());
  const auto started = Clock::now();
  // Loading a large target takes minutes: its stages are progress too (none of the work done yet).
  const LoadedModels models = loadModels(settings, registry, [&](const std::string& stage) {
    if (progress) progress({0, total, seconds(Clock::now() - started), 0, stage});
  });
  c10::InferenceMode inference;
  const bool wantsTrees = std::ranges::count(settings.modes, EvaluationMode::DDTree) > 0;
  const auto keys = runKeys(settings);
  const int k = std::max(settings.topK, wantsTrees ? settings.ddtreeBudget : 0);
  const auto stops = stopTokens(models);
  const std::string settingsJson = settings::settingsJson(settings);  // every run of the evaluation shares them
  TokenStringBook book(models.tokenizer, sink);
  // Every drafter, and for a sampled evaluation every repeat of it: one set of runs each.
  std::vector<std::pair<const LoadedDrafter*, int>> passes;
  for (const LoadedDrafter& d : models.drafters)
    for (int repeat = 0; repeat < settings.samples; ++repeat) passes.emplace_back(&d, repeat);
  EvaluationProgress state{0, total};
  std::vector<EvaluatedRun> summaries;
  std::map<const LoadedDrafter*, analysis::CostModel> costs;

  for (const auto& [pass, repeat] : passes) {
    const LoadedDrafter& drafter = *pass;
    std::vector<EvaluatedRun> runs;
    for (const RunKey& key : keys) {
      session::RunRecord run = runRecordOf(models, drafter, settings);
      run.name = runName(drafter.dir, key.mode, key.variant, settings, repeat);
      run.mode = key.mode;
      run.maskVariant = key.variant;
      run.topK = k;
      run.temperature = settings.sampling.temperature;
      run.sample = repeat;
      run.settingsJson = settingsJson;
      if (settings.shard.count > 1) run.shard = settings::shardText(settings.shard);
      runs.push_back({sink.addRun(run), run.name, drafter.dir.string(), key.mode, key.variant, repeat});
    }
    if (settings.calibrateCost && !prompts.empty()) {
      auto [cost, fresh] = costs.try_emplace(&drafter);  // a drafter's sampled repeats share its timing
      if (fresh) {
        if (progress)
          progress({state.done, total, seconds(Clock::now() - started), 0,
                    drafter.dir.filename().string() + ": timing the target's verify and the drafter's block"});
        cost->second = calibratedCost(models, drafter, settings, prompts.front(), k);
      }
      for (const EvaluatedRun& run : runs)
        for (const session::StatisticRecord& statistic : analysis::costStatistics(cost->second, run.runId))
          sink.addStatistic(statistic);
    }
    const analysis::GarbleContext garble = garbleContextOf(models, *drafter.model);
    double liveSeconds = 0, teacherForcedSeconds = 0;

    for (std::size_t p = 0; p < prompts.size(); ++p) {
      if (cancel.cancelled()) {
        sink.flush();
        throw CancelledError("evaluation cancelled after " + std::to_string(state.done) + " of " +
                             std::to_string(state.total) + " prompt runs; recorded steps are kept");
      }
      const PromptSpec& prompt = prompts[p];
      const auto ids = promptIds(prompt, models.tokenizer, settings, settings.prompts);
      SamplingOptions responseSampling = settings.sampling;
      responseSampling.seed = responseSeed(settings.sampling.seed, repeat, prompt.id);
      auto t0 = Clock::now();
      const SpeculativeResult live = speculativeDecode(
          *models.target, *drafter.model, ids,
          {.maxNewTokens = settings.maxNewTokens,
           .stopTokens = stops,
           .topK = k,
           .counting = settings.stepCounting,
           .sampling = responseSampling});
      liveSeconds += seconds(Clock::now() - t0);
      const std::vector<session::TokenId> promptTokens(ids.begin(), ids.end());
      book.note(promptTokens);
      const std::vector<std::int64_t> anchors = chooseAnchors(settings.anchors, live);

      // One target forward serves every variant; one teacher-forced pass per variant serves
      // both its teacher-forced and its DDTree run.
      std::optional<SequenceFeatures> sequence;
      std::map<analysis::MaskVariant, TeacherForcedPass> teacherForced;
      for (EvaluatedRun& run : runs) {
        sink.addPrompt({run.runId, prompt.id, prompt.dataset, 0,
                        models.tokenizer ? models.tokenizer->decode(promptTokens) : std::string(), promptTokens,
                        static_cast<std::int32_t>(live.tokens.size() - ids.size())});
        std::vector<session::StepRecord> steps;
        const std::vector<std::vector<session::StatisticRecord>>* statistics = nullptr;
        const std::vector<analysis::DDTree>* trees = nullptr;  // built in the pass (a Markov drafter's)
        if (run.mode == EvaluationMode::Live) {
          steps = live.steps;
        } else {
          auto [it, fresh] = teacherForced.try_emplace(run.variant);
          if (fresh) {
            t0 = Clock::now();
            if (!sequence) sequence = sequenceFeatures(*models.target, *drafter.model, live.tokens);
            it->second = runTeacherForcedPass(*sequence, *drafter.model, anchors, run.variant,
                                              {.topK = k,
                                               .parity = settings.parityCheck,
                                               .hiddenStatistics = settings.hiddenStatistics,
                                               .treeBudget = wantsTrees ? settings.ddtreeBudget : 0});
            teacherForcedSeconds += seconds(Clock::now() - t0);
            for (std::int64_t anchor : it->second.parityFlaggedAnchors)
              logText("engine", LogLevel::Warn,
                      drafter.dir.string() + ", prompt " + std::to_string(prompt.id) + ", anchor " +
                          std::to_string(anchor) + ": the training and inference paths draft differently under the " +
                          std::string(enumName(run.variant)) + " mask");
          }
          steps = it->second.steps;
          statistics = &it->second.statistics;
          if (!it->second.trees.empty()) trees = &it->second.trees;
          // DDTree runs share the pass; count its flags once, on the teacher-forced run.
          if (run.mode == EvaluationMode::TeacherForced)
            run.parityFlagged += static_cast<std::int64_t>(it->second.parityFlaggedAnchors.size());
        }
        ResponseSummary response{prompt.id, prompt.dataset, {}};
        response.acceptance.completionTokens = static_cast<int>(live.tokens.size() - ids.size());
        for (std::size_t s = 0; s < steps.size(); ++s) {
          session::StepRecord step = steps[s];
          stampStep(step, run.runId, prompt.id, garble, drafter.model->draftVocabulary());
          if (run.mode == EvaluationMode::DDTree) {
            auto [treeStep, tree] = trees ? ddtreeStep(step, (*trees)[s]) : ddtreeStep(step, k, settings.ddtreeBudget);
            tree.stepId = sink.addStep(treeStep);
            sink.addTree(tree);
            book.note(tree.nodeTokens);
            step = treeStep;
          } else {
            const session::StepId stepId = sink.addStep(step);
            if (statistics) {
              for (session::StatisticRecord statistic : (*statistics)[s]) {
                statistic.runId = run.runId;
                statistic.stepId = stepId;
                sink.addStatistic(statistic);
              }
            }
          }
          noteStep(book, step);
          response.acceptance.stepAcceptLengths.push_back(step.acceptLength());
        }
        run.steps += static_cast<std::int64_t>(steps.size());
        run.responses.push_back(std::move(response));
      }
      book.flush();
      ++state.done;
      state.elapsedSeconds = seconds(Clock::now() - started);
      state.etaSeconds = state.elapsedSeconds / static_cast<double>(state.done) *
                         static_cast<double>(state.total - state.done);
      state.current = drafter.dir.filename().string() + ": prompt " + std::to_string(p + 1) + "/" +
                      std::to_string(prompts.size());
      if (settings.samples > 1)
        state.current += ", repeat " + std::to_string(repeat + 1) + "/" + std::to_string(settings.samples);
      if (progress) progress(state);
    }

    const std::string timings = nlohmann::json{{"live_seconds", liveSeconds},
                                               {"teacher_forced_seconds", teacherForcedSeconds}}
                                    .dump();
    for (const EvaluatedRun& run : runs) sink.finishRun(run.runId, unixNow(), timings);
    summaries.insert(summaries.end(), runs.begin(), runs.end());
  }
  sink.flush();
  return summaries;
}

}  // namespace dfi::engine
