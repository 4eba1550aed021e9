#include "dfi/engine/evaluation.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <c10/core/InferenceMode.h>
#include <nlohmann/json.hpp>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/ddtree.h"
#include "dfi/analysis/garble.h"
#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/base/log_text.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/protocol/message_fields.h"
#include "dfi/session/record_fields.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/compatibility.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/tokenizer.h"
#include "evaluation/dflash_decode.h"
#include "evaluation/dflash_teacher_forced.h"
#include "evaluation/evaluation_common.h"
#include "evaluation/evaluation_models.h"
#include "evaluation/teacher_forced_pass.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;

std::vector<std::int64_t> chooseAnchors(const AnchorSelection& selection, const SpeculativeResult& live) {
  std::vector<std::int64_t> anchors;
  const auto end = static_cast<std::int64_t>(live.tokens.size()) - 1;  // the last bonus: nothing to verify
  switch (selection.kind) {
    case AnchorSelection::Kind::LiveAnchors:
      for (const auto& step : live.steps) anchors.push_back(step.anchorPosition);
      break;
    case AnchorSelection::Kind::Every:
      for (std::int64_t p = live.promptLength; p < end; p += selection.stride) anchors.push_back(p);
      break;
    case AnchorSelection::Kind::Random: {
      std::vector<std::int64_t> all;
      for (std::int64_t p = live.promptLength; p < end; ++p) all.push_back(p);
      std::mt19937_64 rng(selection.seed);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(std::min<std::size_t>(all.size(), static_cast<std::size_t>(selection.count)));
      std::sort(all.begin(), all.end());
      anchors = std::move(all);
      break;
    }
  }
  return anchors;
}

// Per-slot top-k of a step as DDTree input (log-probabilities, most probable first).
std::vector<analysis::SlotTopK> slotTopK(const session::StepRecord& step, int k) {
  std::vector<analysis::SlotTopK> slots(step.draftTokens.size());
  if (step.topKIds.size() != slots.size() * static_cast<std::size_t>(k) || step.topKProbs.size() != step.topKIds.size())
    throw Error("internal: a teacher-forced step carries " + std::to_string(step.topKIds.size()) +
                " top-k entries, DDTree needs " + std::to_string(slots.size()) + " slots x " + std::to_string(k));
  for (std::size_t s = 0; s < slots.size(); ++s)
    for (int r = 0; r < k; ++r) {
      const std::size_t i = s * static_cast<std::size_t>(k) + static_cast<std::size_t>(r);
      slots[s].tokens.push_back(step.topKIds[i]);
      slots[s].logProbs.push_back(std::log(step.topKProbs[i]));
    }
  return slots;
}

// DDTree-N at a teacher-forced step: the target's greedy tokens after the anchor decide the
// accepted path, exactly as tree verification with a greedy target would.
std::pair<session::StepRecord, session::TreeRecord> ddtreeStep(const session::StepRecord& tf, int k,
                                                               int budget) {
  const analysis::DDTree tree = analysis::buildDDTree(slotTopK(tf, k), budget, tf.anchorToken);
  const auto path = analysis::acceptedPath(tree, tf.targetTokens);
  session::StepRecord step = tf;
  step.mode = session::EvaluationMode::DDTree;
  step.acceptedCount = static_cast<std::int32_t>(path.size()) - 1;
  // The bonus is the target's token after the path. A path through non-top-1 candidates can
  // reach the last slot where the chain did not: the target's token after the block is not in
  // the record then (targetTokens stop at slot B-2), so the bonus is unknown.
  const auto accepted = static_cast<std::size_t>(step.acceptedCount);
  if (step.acceptedCount != tf.acceptedCount)
    step.bonusToken = accepted < tf.targetTokens.size() ? tf.targetTokens[accepted] : kUnknownToken;
  session::TreeRecord record;
  record.nodeTokens = tree.tokens;
  for (double w : tree.logWeights) record.nodeLogProbs.push_back(static_cast<float>(w));
  record.parents = tree.parents;
  record.acceptedPath = path;
  return {step, record};
}

// "<drafter>/<mode>/<variant>", and for a sampled evaluation "/T=1 #r" (the repeat).
std::string runName(const fs::path& drafter, EvaluationMode mode, analysis::MaskVariant variant,
                    const EvaluationSettings& settings, int repeat) {
  std::string name = drafter.filename().string() + "/" + std::string(enumName(mode)) + "/" + std::string(enumName(variant));
  if (!settings.sampling.greedy()) name += "/" + samplingLabel(settings.sampling) + " #" + std::to_string(repeat);
  return name;
}

void finishSummaries(std::vector<RunSummary>& runs) {
  for (auto& run : runs) {
    std::vector<analysis::ResponseAcceptance> responses;
    for (const auto& r : run.responses) responses.push_back(r.acceptance);
    run.tauReference = analysis::tauReference(responses);
    run.tauVllm = analysis::tauVllm(responses);
    if (run.mode == EvaluationMode::Live) run.tauSglang = analysis::tauSglang(responses);
  }
}


}  // namespace

AnchorSelection parseAnchorSelection(const std::string& text) {
  AnchorSelection s;
  auto number = [&](const std::string& part) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used == part.size() && v > 0) return v;
    } catch (const std::exception&) {
    }
    throw UsageError("anchors: '" + text + "' is not live, every[:k] or random:N[:seed]");
  };
  if (text == "live") return s;
  if (text == "every" || text.starts_with("every:")) {
    s.kind = AnchorSelection::Kind::Every;
    if (text != "every") s.stride = static_cast<int>(number(text.substr(6)));
    return s;
  }
  if (text.starts_with("random:")) {
    s.kind = AnchorSelection::Kind::Random;
    const std::string rest = text.substr(7);
    const auto colon = rest.find(':');
    s.count = static_cast<int>(number(rest.substr(0, colon)));
    if (colon != std::string::npos) s.seed = static_cast<std::uint64_t>(number(rest.substr(colon + 1)));
    return s;
  }
  return number(text), s;  // throws
}

std::string anchorSelectionText(const AnchorSelection& anchors) {
  switch (anchors.kind) {
    case AnchorSelection::Kind::LiveAnchors: return "live";
    case AnchorSelection::Kind::Every: return "every:" + std::to_string(anchors.stride);
    case AnchorSelection::Kind::Random:
      return "random:" + std::to_string(anchors.count) + ":" + std::to_string(anchors.seed);
  }
  return "live";
}

// The settings as the run request spells them (protocol::RunOptions), so a run's recorded
// settings, `run`'s options and the GUI's request share one vocabulary.
std::string EvaluationSettings::toJson() const {
  protocol::RunOptions o;
  o.target = target.string();
  o.drafters.clear();
  for (const auto& d : drafters) o.drafters.push_back(d.string());
  o.prompts = prompts.string();
  o.modes.clear();
  for (auto m : modes) o.modes.emplace_back(enumName(m));
  o.maskVariants.clear();
  for (auto v : maskVariants) o.maskVariants.emplace_back(enumName(v));
  o.anchors = anchorSelectionText(anchors);
  o.ddtreeBudget = ddtreeBudget;
  o.blockSize = blockSize;
  o.maxNewTokens = maxNewTokens;
  o.limit = limit;
  o.recordTopK = topK;
  o.temperature = sampling.temperature;
  o.topP = sampling.topP;
  o.topK = sampling.topK;
  o.seed = static_cast<std::int64_t>(sampling.seed);
  o.samples = samples;
  o.device.clear();
  for (const auto& d : model.devices) o.device += (o.device.empty() ? "" : ",") + d;
  o.dtype = model.dtype;
  o.noChat = !chatTemplate;
  o.thinking = enableThinking ? "on" : "off";
  o.shard = std::to_string(shardIndex) + "/" + std::to_string(shardCount);
  o.skipBadPrompts = skipBadPrompts;
  o.noParity = !parityCheck;
  o.hiddenStatistics = hiddenStatistics;
  o.stepCounting = std::string(stepCountingName(stepCounting));
  return dfi::toJson(o).dump();
}

namespace {



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

void validate(const EvaluationSettings& s) {
  if (s.modes.empty()) throw UsageError("no evaluation mode selected");
  if (s.maskVariants.empty()) throw UsageError("no mask variant selected");
  if (s.maxNewTokens < 1) throw UsageError("--max-new-tokens must be at least 1");
  if (s.topK < 1) throw UsageError("--record-top-k must be at least 1");
  if (s.ddtreeBudget < 1) throw UsageError("--ddtree-budget must be at least 1");
  validateSampling(s.sampling);
  if (s.samples < 1) throw UsageError("--samples must be at least 1");
  if (s.samples > 1 && s.sampling.greedy())
    throw UsageError("--samples " + std::to_string(s.samples) +
                     " repeats a greedy evaluation, whose repeats are identical: add --temperature");
  if (s.blockSize && *s.blockSize < 2)
    throw UsageError("--block-size must be at least 2 (an anchor and one draft slot), got " +
                     std::to_string(*s.blockSize));
}


}  // namespace

std::vector<RunSummary> runEvaluation(const EvaluationSettings& settings, RecordSink& sink,
                                      const std::function<void(const EvaluationProgress&)>& progress,
                                      const CancellationToken& cancel, ModelRegistry* registry) {
  validate(settings);
  const auto prompts = evaluatedPrompts(settings);
  const LoadedModels models = loadModels(settings, registry);
  c10::InferenceMode inference;
  const bool wantsTrees = std::ranges::count(settings.modes, EvaluationMode::DDTree) > 0;
  const int k = std::max(settings.topK, wantsTrees ? settings.ddtreeBudget : 0);
  const auto stops = stopTokens(models);
  const auto keys = runKeys(settings);
  const std::string settingsJson = settings.toJson();  // every run of the evaluation shares them
  TokenStringBook book(models.tokenizer, sink);
  const auto started = Clock::now();
  // Every drafter, and for a sampled evaluation every repeat of it: one set of runs each.
  std::vector<std::pair<const LoadedDrafter*, int>> passes;
  for (const LoadedDrafter& d : models.drafters)
    for (int repeat = 0; repeat < settings.samples; ++repeat) passes.emplace_back(&d, repeat);
  EvaluationProgress state{0, static_cast<std::int64_t>(passes.size() * prompts.size())};
  std::vector<RunSummary> summaries;

  for (const auto& [pass, repeat] : passes) {
    const LoadedDrafter& drafter = *pass;
    std::vector<RunSummary> runs;
    for (const RunKey& key : keys) {
      session::RunRecord run = runRecordOf(models, drafter, settings);
      run.name = runName(drafter.dir, key.mode, key.variant, settings, repeat);
      run.mode = key.mode;
      run.maskVariant = key.variant;
      run.topK = k;
      run.temperature = settings.sampling.temperature;
      run.sample = repeat;
      run.settingsJson = settingsJson;
      if (settings.shardCount > 1)
        run.shard = std::to_string(settings.shardIndex) + "/" + std::to_string(settings.shardCount);
      runs.push_back({sink.addRun(run), run.name, drafter.dir.string(), key.mode, key.variant, repeat});
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
      for (RunSummary& run : runs) {
        sink.addPrompt({run.runId, prompt.id, prompt.dataset, 0,
                        models.tokenizer ? models.tokenizer->decode(promptTokens) : std::string(), promptTokens,
                        static_cast<std::int32_t>(live.tokens.size() - ids.size())});
        std::vector<session::StepRecord> steps;
        const std::vector<std::vector<session::StatisticRecord>>* statistics = nullptr;
        if (run.mode == EvaluationMode::Live) {
          steps = live.steps;
        } else {
          auto [it, fresh] = teacherForced.try_emplace(run.variant);
          if (fresh) {
            t0 = Clock::now();
            if (!sequence) sequence = sequenceFeatures(*models.target, *drafter.model, live.tokens);
            it->second = runTeacherForcedPass(
                *sequence, *drafter.model, anchors, run.variant,
                {.topK = k, .parity = settings.parityCheck, .hiddenStatistics = settings.hiddenStatistics});
            teacherForcedSeconds += seconds(Clock::now() - t0);
            for (std::int64_t anchor : it->second.parityFlaggedAnchors)
              logText("engine", LogLevel::Warn,
                      drafter.dir.string() + ", prompt " + std::to_string(prompt.id) + ", anchor " +
                          std::to_string(anchor) + ": the training and inference paths draft differently under the " +
                          std::string(enumName(run.variant)) + " mask");
          }
          steps = it->second.steps;
          statistics = &it->second.statistics;
          // DDTree runs share the pass; count its flags once, on the teacher-forced run.
          if (run.mode == EvaluationMode::TeacherForced)
            run.parityFlagged += static_cast<std::int64_t>(it->second.parityFlaggedAnchors.size());
        }
        ResponseSummary response{prompt.id, prompt.dataset, {}};
        response.acceptance.completionTokens = static_cast<int>(live.tokens.size() - ids.size());
        for (std::size_t s = 0; s < steps.size(); ++s) {
          session::StepRecord step = steps[s];
          step.runId = run.runId;
          step.promptId = prompt.id;
          step.garbleFlags = analysis::detectGarble(step.draftTokens, garble, step.anchorToken);
          if (run.mode == EvaluationMode::DDTree) {
            auto [treeStep, tree] = ddtreeStep(step, k, settings.ddtreeBudget);
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
    for (const RunSummary& run : runs) sink.finishRun(run.runId, unixNow(), timings);
    finishSummaries(runs);
    summaries.insert(summaries.end(), runs.begin(), runs.end());
  }
  sink.flush();
  return summaries;
}

}  // namespace dfi::engine
