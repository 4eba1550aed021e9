// DFlash engine benchmark (CPU) on the bundled demo (resources/demo: Qwen3.5-style hybrid
// target, drafter-good): live speculative decoding tokens/s and teacher-forced anchors/s,
// against a Python loop doing the same work on the same models, prompts (the same token ids),
// max new tokens, stop tokens and thread count, measured in the same run by
// bench_dflash_ref.py (transformers target with caches and a Gated DeltaNet state rollback, a
// PyTorch drafter with a context K/V cache; teacher forcing with one batched drafter forward
// per 32 anchors, as the engine; the reference attends over every block of the forward under
// the dense training mask, the engine block by block over [context | own block], which is the
// same attention with less work). Both are greedy and fp32 (bf16 weights upcast).
//
// The figures are comparable only if the work is identical, so the run also compares what
// both produced: committed tokens and per-step acceptance lengths of the live loop, and the
// per-anchor acceptance of the teacher-forced pass; mismatches are printed as counts.
// Prints one JSON line per figure (live, teacher-forced and its two stages, both together, and
// where a live step's time goes); speedup > 1 means the engine is faster.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <nlohmann/json.hpp>

#include "bench_size.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/evaluation_models.h"
#include "kernels/argmax.h"
#include "models/target_model.h"
#include "reference_script.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using namespace dfi::engine;

// Best of 4 passes on both sides, 2 at a time, alternating: one pass of the demo takes seconds,
// and the host's noise is +-25%. A smoke run: one pass of a sixth of the tokens, each side once.
const int kMaxNewTokens = dfi::bench::sized(96, 16), kRepeat = dfi::bench::sized(4, 2),
          kReferenceRepeat = dfi::bench::sized(2, 1);

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

nlohmann::json runReference(const fs::path& demo, int threads, int limit) {
  const std::string command = std::string("'") + DFI_PYTHON + "' '" + DFI_SOURCE_DIR +
                              "/bench/bench_dflash_ref.py' --target '" + (demo / "target").string() +
                              "' --drafter '" + (demo / "drafter-good").string() + "' --prompts '" +
                              (demo / "prompts.jsonl").string() + "' --threads " + std::to_string(threads) +
                              " --max-new-tokens " + std::to_string(kMaxNewTokens) + " --repeat " +
                              std::to_string(kReferenceRepeat) + " --limit " + std::to_string(limit) + " 2>/dev/null";
  return dfi::bench::referenceOutput(command);
}

// Where a live step's time goes in the engine: speculativeDecode's loop on one prompt with a
// clock around each phase (same calls, same order; records and stop checks left out).
struct Breakdown {
  double prefill = 0, draft = 0, verify = 0, crop = 0;
  int steps = 0;
};

Breakdown liveBreakdown(const TargetModel& target, const DFlashDrafter& drafter,
                        const std::vector<std::int64_t>& prompt, int maxNewTokens) {
  c10::InferenceMode inference;
  const std::vector<int>& taps = drafter.config().targetLayerIds;
  auto ids = [](const std::vector<std::int64_t>& v) { return at::tensor(v, at::kLong).view({1, -1}); };
  Breakdown t;
  auto clock = Clock::now();
  ModelCache cache = target.newCache();
  const ForwardOutput prefill =
      target.forward(ids(prompt), &cache, {.tapLayers = taps, .logits = true, .logitsToKeep = 1});
  std::vector<std::int64_t> tokens = prompt;
  tokens.push_back(argmaxLastDim(prefill.logits[0][-1]).item<std::int64_t>());
  at::Tensor context = concatenatedTaps(prefill.taps);
  t.prefill = secondsSince(clock);
  DrafterKvCache draftCache = drafter.newCache();
  auto start = static_cast<std::int64_t>(prompt.size());
  while (start < static_cast<std::int64_t>(prompt.size()) + maxNewTokens) {
    clock = Clock::now();
    const at::Tensor logits = drafter.draft(draftCache, context, tokens[static_cast<std::size_t>(start)], start);
    const at::Tensor best = argmaxLastDim(logits).contiguous();
    std::vector<std::int64_t> block{tokens[static_cast<std::size_t>(start)]};
    block.insert(block.end(), best.data_ptr<std::int64_t>(), best.data_ptr<std::int64_t>() + best.numel());
    t.draft += secondsSince(clock);
    clock = Clock::now();
    const ForwardOutput verify = target.forward(ids(block), &cache, {.tapLayers = taps, .logits = true, .rewindable = true});
    const at::Tensor post = argmaxLastDim(verify.logits[0]).contiguous();
    const std::int64_t* posterior = post.data_ptr<std::int64_t>();
    int accepted = 0;
    while (accepted < drafter.blockSize() - 1 && block[static_cast<std::size_t>(accepted) + 1] == posterior[accepted]) ++accepted;
    t.verify += secondsSince(clock);
    clock = Clock::now();
    tokens.insert(tokens.end(), block.begin() + 1, block.begin() + 1 + accepted);
    tokens.push_back(posterior[accepted]);
    start += accepted + 1;
    cache.crop(start);
    context = concatenatedTaps(verify.taps).narrow(0, 0, accepted + 1);
    t.crop += secondsSince(clock);
    ++t.steps;
  }
  return t;
}

}  // namespace

// Usage: bench_dflash [N] (the first N demo prompts; default all, 1 in a smoke run); DFI_BENCH_THREADS=T.
int main(int argc, char** argv) {
  const int limit = argc > 1 ? std::stoi(argv[1]) : dfi::bench::sized(0, 1);
  // One thread for both by default: the demo models are tiny (hidden 128), and on a shared
  // host more threads than free cores leave both sides spinning in OpenMP barriers (2 threads
  // on a loaded 2-core machine made the Python loop 25x slower). DFI_BENCH_THREADS overrides.
  const char* threadsEnv = std::getenv("DFI_BENCH_THREADS");
  const int threads = threadsEnv ? std::max(1, std::atoi(threadsEnv)) : 1;
  at::set_num_threads(threads);
  const fs::path demo = fs::path(DFI_SOURCE_DIR) / "resources/demo";
  // Each side keeps its best time over passes in two stretches of the run, so that a machine
  // whose load changes during the run (a shared host's is +-25%) favours neither side.
  const nlohmann::json reference = runReference(demo, threads, limit);

  const auto target = TargetModel::load(demo / "target", ModelOptions{.devices = {"cpu"}, .dtype = "fp32"});
  const auto drafter = loadDrafter(demo / "drafter-good", *target);
  // bench_dflash_ref.py runs every block in full: the same counting here.
  const SpeculativeOptions options{.maxNewTokens = kMaxNewTokens,
                                   .stopTokens = reference["stop_tokens"].get<std::vector<std::int64_t>>(),
                                   .counting = dfi::engine::StepCounting::FullBlocks};
  std::vector<std::vector<std::int64_t>> prompts;
  for (const auto& p : reference["prompts"]) prompts.push_back(p["ids"].get<std::vector<std::int64_t>>());

  // Live loop and teacher forcing, best of all passes (over all prompts each), as the reference.
  std::vector<SpeculativeResult> live;
  std::vector<std::vector<dfi::session::StepRecord>> forced;
  double liveSeconds = 1e9, forcedSeconds = 1e9;
  double forcedTargetSeconds = 0, forcedDrafterSeconds = 0;  // the best pass's two stages
  std::int64_t anchorCount = 0;
  auto measureEngine = [&](int passes) {
    for (int r = 0; r < passes; ++r) {
      std::vector<SpeculativeResult> results;
      const auto start = Clock::now();
      for (const auto& prompt : prompts) results.push_back(speculativeDecode(*target, *drafter, prompt, options));
      liveSeconds = std::min(liveSeconds, secondsSince(start));
      live = std::move(results);
    }
    // Teacher-forced on the reference's sequences, anchors at every generated position.
    for (int r = 0; r < passes; ++r) {
      std::vector<std::vector<dfi::session::StepRecord>> results;
      anchorCount = 0;
      double targetSeconds = 0, drafterSeconds = 0;
      const auto start = Clock::now();
      for (const auto& p : reference["prompts"]) {
        const auto sequence = p["tokens"].get<std::vector<std::int64_t>>();
        const auto anchors = p["tf_anchors"].get<std::vector<std::int64_t>>();
        anchorCount += static_cast<std::int64_t>(anchors.size());
        auto stage = Clock::now();
        const SequenceFeatures features = sequenceFeatures(*target, *drafter, sequence);
        targetSeconds += secondsSince(stage);
        stage = Clock::now();
        results.push_back(teacherForcedSteps(features, *drafter, anchors, dfi::analysis::MaskVariant::Reference, 0));
        drafterSeconds += secondsSince(stage);
      }
      if (const double elapsed = secondsSince(start); elapsed < forcedSeconds) {
        forcedSeconds = elapsed;
        forcedTargetSeconds = targetSeconds, forcedDrafterSeconds = drafterSeconds;
      }
      forced = std::move(results);
    }
  };
  // The two sides alternate (reference, engine, reference, engine), so that each samples two
  // stretches of the run; a smoke run starts Python once (its start is most of the run).
  measureEngine(kRepeat / 2);
  const nlohmann::json after = dfi::bench::smoke() ? reference : runReference(demo, threads, limit);
  measureEngine(kRepeat - kRepeat / 2);

  // Same work? Tokens and acceptance lengths of every step, acceptance at every anchor.
  int tokenMismatches = 0, stepMismatches = 0, anchorMismatches = 0;
  std::int64_t newTokens = 0, refNewTokens = 0, steps = 0;
  double tauSum = 0;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const auto& p = reference["prompts"][i];
    const auto refTokens = p["tokens"].get<std::vector<std::int64_t>>();
    const auto refLengths = p["accept_lengths"].get<std::vector<int>>();
    if (live[i].tokens != refTokens) ++tokenMismatches;
    std::vector<int> lengths;
    for (const auto& s : live[i].steps) lengths.push_back(s.acceptLength());
    for (std::size_t s = 0; s < std::max(lengths.size(), refLengths.size()); ++s)
      if (s >= lengths.size() || s >= refLengths.size() || lengths[s] != refLengths[s]) ++stepMismatches;
    newTokens += static_cast<std::int64_t>(live[i].tokens.size() - prompts[i].size());
    refNewTokens += static_cast<std::int64_t>(refTokens.size() - prompts[i].size());
    steps += static_cast<std::int64_t>(live[i].steps.size());
    tauSum += live[i].meanAcceptLength();
    const auto refAccepted = p["tf_accepted"].get<std::vector<int>>();
    for (std::size_t j = 0; j < forced[i].size(); ++j)
      if (j >= refAccepted.size() || forced[i][j].acceptedCount != refAccepted[j]) ++anchorMismatches;
  }
  const double pySeconds = std::min(reference["live_s"].get<double>(), after["live_s"].get<double>()),
               pyForced = std::min(reference["tf_s"].get<double>(), after["tf_s"].get<double>());
  const auto n = static_cast<double>(prompts.size());
  std::cout << nlohmann::json{{"bench", "dflash_live_demo"},
                              {"dfi_tokens_per_s", static_cast<double>(newTokens) / liveSeconds},
                              {"py_tokens_per_s", static_cast<double>(refNewTokens) / pySeconds},
                              {"speedup_vs_py", pySeconds / liveSeconds},
                              {"prompts", prompts.size()},
                              {"new_tokens", newTokens},
                              {"steps", steps},
                              {"tau", tauSum / n},
                              {"mismatched_responses", tokenMismatches},
                              {"mismatched_steps", stepMismatches},
                              {"threads", threads}}
                   .dump()
            << std::endl;
  std::cout << nlohmann::json{{"bench", "dflash_teacher_forced_demo"},
                              {"dfi_anchors_per_s", static_cast<double>(anchorCount) / forcedSeconds},
                              {"py_anchors_per_s", static_cast<double>(anchorCount) / pyForced},
                              {"speedup_vs_py", pyForced / forcedSeconds},
                              {"anchors", anchorCount},
                              {"mismatched_anchors", anchorMismatches},
                              {"threads", threads}}
                   .dump()
            << std::endl;
  // Where the teacher-forced time goes on each side: the target's forward over each sequence
  // (taps and greedy predictions), and the drafter's forwards with their records.
  const nlohmann::json& pyForcedPass = reference["tf_s"].get<double>() <= after["tf_s"].get<double>() ? reference : after;
  std::cout << nlohmann::json{{"bench", "dflash_teacher_forced_stages_demo"},
                              {"dfi_target_s", forcedTargetSeconds},
                              {"py_target_s", pyForcedPass["tf_target_s"]},
                              {"target_speedup_vs_py", pyForcedPass["tf_target_s"].get<double>() / forcedTargetSeconds},
                              {"dfi_drafter_s", forcedDrafterSeconds},
                              {"py_drafter_s", pyForcedPass["tf_drafter_s"]},
                              {"drafter_speedup_vs_py", pyForcedPass["tf_drafter_s"].get<double>() / forcedDrafterSeconds},
                              {"threads", threads}}
                   .dump()
            << std::endl;
  // Both passes on the same prompts, as `dflash-eval run --mode both` does them.
  std::cout << nlohmann::json{{"bench", "dflash_live_and_teacher_forced_demo"},
                              {"dfi_s", liveSeconds + forcedSeconds},
                              {"py_s", pySeconds + pyForced},
                              {"speedup_vs_py", (pySeconds + pyForced) / (liveSeconds + forcedSeconds)},
                              {"threads", threads}}
                   .dump()
            << std::endl;
  // Per-phase cost of the engine's live step (all prompts, best of kRepeat per prompt).
  Breakdown total;
  for (const auto& prompt : prompts) {
    Breakdown best;
    for (int r = 0; r < kRepeat; ++r) {
      const Breakdown b = liveBreakdown(*target, *drafter, prompt, kMaxNewTokens);
      if (r == 0 || b.prefill + b.draft + b.verify + b.crop < best.prefill + best.draft + best.verify + best.crop) best = b;
    }
    total.prefill += best.prefill, total.draft += best.draft, total.verify += best.verify, total.crop += best.crop;
    total.steps += best.steps;
  }
  const double perStep = 1e3 / std::max(1, total.steps);
  // Per step, as the clocked loop runs to the token budget where the live loop stops at a stop token.
  const double phasesPerStep = (total.prefill + total.draft + total.verify + total.crop) / std::max(1, total.steps);
  std::cout << nlohmann::json{{"bench", "dflash_live_phases_demo"},
                              {"prefill_ms_per_prompt", total.prefill * 1e3 / n},
                              {"draft_ms_per_step", total.draft * perStep},
                              {"verify_ms_per_step", total.verify * perStep},
                              {"crop_ms_per_step", total.crop * perStep},
                              {"steps", total.steps},
                              // The phases against the live loop, per step: near 1 when they are where its time goes.
                              {"ratio_to_live_loop", phasesPerStep / (liveSeconds / static_cast<double>(steps))},
                              {"threads", threads}}
                   .dump()
            << std::endl;
  return 0;
}
