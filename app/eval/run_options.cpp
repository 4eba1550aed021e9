#include "run_options.h"

#include <algorithm>

#include <CLI/CLI.hpp>

#include "dfi/analysis/checkpoint_series.h"
#include "dfi/analysis/pass_bars.h"
#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::eval {
namespace {

using settings::EvaluationMode;

// "teacher" and "both" are the short spellings; the others are the modes' names.
std::vector<EvaluationMode> parseMode(const std::string& name) {
  if (name == "teacher") return {EvaluationMode::TeacherForced};
  if (name == "both") return {EvaluationMode::Live, EvaluationMode::TeacherForced};
  if (const auto mode = parseEnum<EvaluationMode>(name)) return {*mode};
  throw UsageError("--mode: unknown mode '" + name + "' (" + enumNameList<EvaluationMode>() + ", teacher or both)");
}

void addMode(std::vector<EvaluationMode>& modes, EvaluationMode mode) {
  if (std::ranges::find(modes, mode) == modes.end()) modes.push_back(mode);
}

}  // namespace

settings::RunSettings RunCommandLine::resolve(const EnvLookup& env) const {
  settings::RunSettings s = settings;
  s.modes.clear();
  for (const auto& m : modes)
    for (EvaluationMode mode : parseMode(m)) addMode(s.modes, mode);
  if (ddtreeBudget < 0) throw UsageError("--ddtree: the node budget must be 0 (no DDTree) or more");
  if (ddtreeBudget == 0) {
    std::erase(s.modes, EvaluationMode::DDTree);  // the settings' default budget stays, unused
  } else {
    addMode(s.modes, EvaluationMode::DDTree);
    s.ddtreeBudget = ddtreeBudget;
  }
  s.maskVariants.clear();
  for (const auto& v : maskVariants) {
    const auto variant = parseEnum<settings::MaskVariant>(v);
    if (!variant)
      throw UsageError("--mask-variant: unknown variant '" + v + "' (" + enumNameList<settings::MaskVariant>() + ")");
    s.maskVariants.push_back(*variant);
  }
  const auto anchorSelection = settings::parseAnchorSelection(anchors);
  if (!anchorSelection)
    throw UsageError("--anchors: '" + anchors + "' is not " + std::string(settings::kAnchorSelectionSpellings));
  s.anchors = *anchorSelection;
  s.model.devices = settings::parseDeviceList(device);
  s.chatTemplate = !noChat;
  if (thinking != "on" && thinking != "off") throw UsageError("--thinking: '" + thinking + "' is not on or off");
  s.enableThinking = thinking == "on";
  s.parityCheck = !noParity;
  if (!drafterSeries.empty()) {
    for (const analysis::SeriesCheckpoint& checkpoint : analysis::discoverCheckpoints(drafterSeries)) {
      if (const std::string problem = analysis::checkpointProblem(checkpoint.dir); problem.empty())
        s.drafters.push_back(checkpoint.dir);
      else
        logText("eval", LogLevel::Warn, "--drafter-series: skipping " + checkpoint.dir.string() + ": " + problem);
    }
  }
  if (s.drafters.empty()) throw UsageError("no drafter: give --drafter (repeat for several) or --drafter-series DIR");
  for (const std::string& bar : s.passBars) analysis::parsePassBar(bar);  // malformed: refused before the run
  const ShardSpec sh = resolveShard(shard, env);
  s.shard = {sh.index, sh.count};
  const auto counting = parseEnum<settings::StepCounting>(stepCounting);
  if (!counting)
    throw UsageError("--step-counting: '" + stepCounting + "' is not " + enumNameList<settings::StepCounting>());
  s.stepCounting = *counting;
  s.sampling.seed = static_cast<std::uint64_t>(seed);
  settings::validate(s);
  return s;
}

void addRunOptions(CLI::App& c, RunCommandLine& o) {
  settings::RunSettings& s = o.settings;
  c.add_option_function<std::string>("--target", [&s](const std::string& p) { s.target = p; },
                                     "Target model directory (Hugging Face layout)")
      ->required()->check(CLI::ExistingDirectory);
  c.add_option_function<std::vector<std::string>>(
       "--drafter", [&s](const std::vector<std::string>& d) { s.drafters.assign(d.begin(), d.end()); },
       "DFlash drafter directory (repeat for several)")
      ->check(CLI::ExistingDirectory);
  c.add_option("--drafter-series", o.drafterSeries,
               "A training run's output folder: every checkpoint in it, in step order (SpecForge's <run>-step<N>, "
               "speculators' epoch folders with their epoch<E>_step<N> links, checkpoint-<N>, step<N>; "
               "trainer_state.json's global_step where present), after any --drafter")
      ->check(CLI::ExistingDirectory);
  c.add_option_function<std::string>(
       "--prompts", [&s](const std::string& p) { s.prompts = p; },
       "Prompts JSONL: one object a line with \"prompt\", \"question\", \"turns\" (first turn "
       "evaluated), \"messages\" or \"ids\"; optional \"id\", \"dataset\"")
      ->required()->check(CLI::ExistingFile);
  c.add_flag("--skip-bad-prompts", s.skipBadPrompts,
             "Warn about a malformed prompt line (file and line number) and skip it; default: refuse the file");
  c.add_flag("--no-parity", o.noParity,
             "Skip the train/eval parity check (each teacher-forced block also drafted as live, and compared)");
  c.add_flag("--hidden-stats", s.hiddenStatistics,
             "Record per teacher-forced step the statistics of the target taps, fc, hidden_norm and drafter layers");
  c.add_flag("--calibrate-cost", s.calibrateCost,
             "Time the target's verify forward (1..n tokens) and each drafter's block on this device first, and record "
             "them with the runs: summary --what-if then shows the expected speedup of each verify length and tree budget");
  c.add_option("--require", s.passBars,
               "A pass bar, e.g. \"tau(step40k) >= 4.0\" or \"paired(step40k - step20k) > -0.1\" (repeat for several): "
               "recorded with the runs and checked at the end like `dflash-eval gate` (exit code 6 when one fails)");
  c.add_option("--mode", o.modes,
               "live | teacher | both (live + teacher-forced) | ddtree; a comma list (teacher-forced = teacher)")
      ->delimiter(',')->capture_default_str();
  c.add_option("--ddtree,--ddtree-budget", o.ddtreeBudget,
               "DDTree-N runs from the teacher-forced top-k: node budget N, root excluded; 0 for none")
      ->capture_default_str();
  c.add_option("--mask-variant,--mask-variants", o.maskVariants,
               enumNameList<settings::MaskVariant>() + " (repeat or comma list)")
      ->delimiter(',')->capture_default_str();
  c.add_option("--anchors", o.anchors, "Teacher-forced anchors: live | every[:k] | random:N[:seed]")->capture_default_str();
  c.add_option_function<int>("--block-size", [&s](const int& n) { s.blockSize = n; },
                             "Draft blocks of N (2 .. the drafter's trained block_size); default: the checkpoint's");
  c.add_option("--max-new-tokens", s.maxNewTokens, "Tokens to generate per prompt")->capture_default_str();
  c.add_option("--step-counting", o.stepCounting,
               "Live steps: dflash (as z-lab's dflash 0.1.0: the last block shortened to the token budget, a "
               "step's tokens counted up to the budget and the first stop token) | full-blocks (every block of "
               "B slots, counted in full)")
      ->capture_default_str();
  c.add_option_function<std::int64_t>("--limit", [&s](const std::int64_t& n) { s.limit = n; },
                                      "Evaluate the first N prompts of the file (malformed lines skipped do not count; applied before --shard)");
  c.add_option("--record-top-k", s.topK, "Per-slot top-k of the draft distribution stored with each step")
      ->capture_default_str();
  c.add_option("--temperature", s.sampling.temperature,
               "Live loop: 0 greedy; above 0, tokens sampled and drafts accepted by lossless rejection sampling "
               "(z-lab's dflash 0.1.0 rule); teacher-forced and DDTree stay greedy measures")
      ->capture_default_str();
  c.add_option("--top-p", s.sampling.topP, "Sampling: keep the most probable tokens whose preceding mass is below P")
      ->capture_default_str();
  c.add_option("--top-k", s.sampling.topK, "Sampling: keep the K most probable tokens; 0: the whole vocabulary")
      ->capture_default_str();
  c.add_option("--seed", o.seed, "Sampling: seed of every draw (mixed with the repeat and the prompt id)")
      ->capture_default_str();
  c.add_option("--samples", s.samples,
               "Sampling: repeat the evaluation N times (seeds paired across drafters, so comparisons are paired)")
      ->capture_default_str();
  c.add_option("--device,--devices", o.device, "cpu | cuda:N | cuda:0,cuda:1 (layers split across GPUs) | cuda:local (the launcher's local rank)")->capture_default_str();
  c.add_option("--dtype", s.model.dtype, "fp32 | bf16 | fp16")->capture_default_str();
  c.add_flag("--no-chat", o.noChat, "Tokenize prompts as plain text (no chat template)");
  c.add_option("--thinking", o.thinking, "on | off: the chat template's enable_thinking")->capture_default_str();
  c.add_flag_callback("--enable-thinking", [&o] { o.thinking = "on"; }, "Same as --thinking on");
  c.add_option("--chat-template-kwargs", s.chatTemplateKwargs,
               "JSON object of further chat template variables, as vLLM's chat_template_kwargs: {\"reasoning_effort\": \"high\"}");
  c.add_option("--shard", o.shard,
               "Evaluate shard i of N (prompt k goes to shard k % N), or auto: torchrun's RANK/WORLD_SIZE, "
               "else Slurm's SLURM_PROCID/SLURM_NTASKS")
      ->capture_default_str();
}

}  // namespace dfi::eval
