#include "run_options.h"

#include <algorithm>
#include <sstream>

#include <CLI/CLI.hpp>

#include "dfi/base/error.h"
#include "dfi/session/record_fields.h"

namespace dfi::eval {
namespace {

using engine::EvaluationMode;

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// "teacher" and "both" are the short spellings; "teacher-forced" is what runs are named.
std::vector<EvaluationMode> parseMode(const std::string& name) {
  if (name == "live") return {EvaluationMode::Live};
  if (name == "teacher" || name == "teacher-forced") return {EvaluationMode::TeacherForced};
  if (name == "both") return {EvaluationMode::Live, EvaluationMode::TeacherForced};
  if (name == "ddtree") return {EvaluationMode::DDTree};
  throw UsageError("--mode: unknown mode '" + name + "' (live, teacher, both, ddtree)");
}

void addMode(std::vector<EvaluationMode>& modes, EvaluationMode mode) {
  if (std::ranges::find(modes, mode) == modes.end()) modes.push_back(mode);
}

}  // namespace

engine::EvaluationSettings RunOptions::toSettings(const EnvLookup& env) const {
  engine::EvaluationSettings s;
  s.target = target;
  for (const auto& d : drafters) s.drafters.emplace_back(d);
  s.prompts = prompts;
  s.modes.clear();
  for (const auto& m : modes)
    for (EvaluationMode mode : parseMode(m)) addMode(s.modes, mode);
  if (!ddtreeByBudget) {
    s.ddtreeBudget = ddtreeBudget;
  } else if (ddtreeBudget < 0) {
    throw UsageError("--ddtree: the node budget must be 0 (no DDTree) or more");
  } else if (ddtreeBudget == 0) {
    std::erase(s.modes, EvaluationMode::DDTree);  // the settings' default budget stays, unused
  } else {
    addMode(s.modes, EvaluationMode::DDTree);
    s.ddtreeBudget = ddtreeBudget;
  }
  s.maskVariants.clear();
  for (const auto& v : maskVariants) {
    auto variant = parseEnum<session::MaskVariant>(v);
    if (!variant)
      throw UsageError("--mask-variant: unknown variant '" + v +
                       "' (reference, anchor-visible, block-causal, positions+1, no-context)");
    s.maskVariants.push_back(*variant);
  }
  s.anchors = engine::parseAnchorSelection(anchors);
  if (blockSize && *blockSize < 2)
    throw UsageError("--block-size: " + std::to_string(*blockSize) +
                     " is below 2 (a block is an anchor and at least one draft slot)");
  s.blockSize = blockSize;
  s.maxNewTokens = maxNewTokens;
  if (limit && *limit < 1) throw UsageError("--limit: " + std::to_string(*limit) + " is below 1");
  s.limit = limit;
  s.topK = recordTopK;
  s.sampling = {temperature, topP, topK, static_cast<std::uint64_t>(seed)};
  s.samples = samples;
  s.model.devices = splitList(device);
  if (dtype != "fp32" && dtype != "bf16" && dtype != "fp16")
    throw UsageError("--dtype: '" + dtype + "' is not fp32, bf16 or fp16");
  s.model.dtype = dtype;
  s.chatTemplate = !noChat;
  if (thinking != "on" && thinking != "off") throw UsageError("--thinking: '" + thinking + "' is not on or off");
  s.enableThinking = thinking == "on" || enableThinking;
  if (s.enableThinking && noChat)
    throw UsageError("--thinking on needs the chat template, which --no-chat turns off");
  const ShardSpec sh = resolveShard(shard, env);
  s.shardIndex = sh.index;
  s.shardCount = sh.count;
  s.skipBadPrompts = skipBadPrompts;
  s.parityCheck = !noParity;
  s.hiddenStatistics = hiddenStatistics;
  const auto counting = engine::parseStepCounting(stepCounting);
  if (!counting) throw UsageError("--step-counting: '" + stepCounting + "' is not dflash or full-blocks");
  s.stepCounting = *counting;
  return s;
}

void addRunOptions(CLI::App& c, RunOptions& o) {
  o.modes = {"both"};
  o.ddtreeByBudget = true;
  c.add_option("--target", o.target, "Target model directory (Hugging Face layout)")->required()->check(CLI::ExistingDirectory);
  c.add_option("--drafter", o.drafters, "DFlash drafter directory (repeat for several)")->required()->check(CLI::ExistingDirectory);
  c.add_option("--prompts", o.prompts,
               "Prompts JSONL: one object a line with \"prompt\", \"question\", \"turns\" (first turn "
               "evaluated), \"messages\" or \"ids\"; optional \"id\", \"dataset\"")
      ->required()->check(CLI::ExistingFile);
  c.add_flag("--skip-bad-prompts", o.skipBadPrompts,
             "Warn about a malformed prompt line (file and line number) and skip it; default: refuse the file");
  c.add_flag("--no-parity", o.noParity,
             "Skip the train/eval parity check (each teacher-forced block also drafted as live, and compared)");
  c.add_flag("--hidden-stats", o.hiddenStatistics,
             "Record per teacher-forced step the statistics of the target taps, fc, hidden_norm and drafter layers");
  c.add_option("--mode", o.modes,
               "live | teacher | both (live + teacher-forced) | ddtree; a comma list (teacher-forced = teacher)")
      ->delimiter(',')->capture_default_str();
  c.add_option("--ddtree,--ddtree-budget", o.ddtreeBudget,
               "DDTree-N runs from the teacher-forced top-k: node budget N, root excluded; 0 for none")
      ->capture_default_str();
  c.add_option("--mask-variant,--mask-variants", o.maskVariants,
               "reference, anchor-visible, block-causal, positions+1, no-context (repeat or comma list)")
      ->delimiter(',')->capture_default_str();
  c.add_option("--anchors", o.anchors, "Teacher-forced anchors: live | every[:k] | random:N[:seed]")->capture_default_str();
  c.add_option_function<int>("--block-size", [&o](const int& n) { o.blockSize = n; },
                             "Draft blocks of N (2 .. the drafter's trained block_size); default: the checkpoint's");
  c.add_option("--max-new-tokens", o.maxNewTokens, "Tokens to generate per prompt")->capture_default_str();
  c.add_option("--step-counting", o.stepCounting,
               "Live steps: dflash (as z-lab's dflash 0.1.0: the last block shortened to the token budget, a "
               "step's tokens counted up to the budget and the first stop token) | full-blocks (every block of "
               "B slots, counted in full)")
      ->capture_default_str();
  c.add_option_function<std::int64_t>("--limit", [&o](const std::int64_t& n) { o.limit = n; },
                                      "Evaluate the first N prompts of the file (malformed lines skipped do not count; applied before --shard)");
  c.add_option("--record-top-k", o.recordTopK, "Per-slot top-k of the draft distribution stored with each step")
      ->capture_default_str();
  c.add_option("--temperature", o.temperature,
               "Live loop: 0 greedy; above 0, tokens sampled and drafts accepted by lossless rejection sampling "
               "(z-lab's dflash 0.1.0 rule); teacher-forced and DDTree stay greedy measures")
      ->capture_default_str();
  c.add_option("--top-p", o.topP, "Sampling: keep the most probable tokens whose preceding mass is below P")
      ->capture_default_str();
  c.add_option("--top-k", o.topK, "Sampling: keep the K most probable tokens; 0: the whole vocabulary")
      ->capture_default_str();
  c.add_option("--seed", o.seed, "Sampling: seed of every draw (mixed with the repeat and the prompt id)")
      ->capture_default_str();
  c.add_option("--samples", o.samples,
               "Sampling: repeat the evaluation N times (seeds paired across drafters, so comparisons are paired)")
      ->capture_default_str();
  c.add_option("--device,--devices", o.device, "cpu | cuda:N | cuda:0,cuda:1 (layers split across GPUs) | cuda:local (the launcher's local rank)")->capture_default_str();
  c.add_option("--dtype", o.dtype, "fp32 | bf16 | fp16")->capture_default_str();
  c.add_flag("--no-chat", o.noChat, "Tokenize prompts as plain text (no chat template)");
  c.add_option("--thinking", o.thinking, "on | off: the chat template's enable_thinking")->capture_default_str();
  c.add_flag_callback("--enable-thinking", [&o] { o.thinking = "on"; }, "Same as --thinking on");
  c.add_option("--shard", o.shard,
               "Evaluate shard i of N (prompt k goes to shard k % N), or auto: torchrun's RANK/WORLD_SIZE, "
               "else Slurm's SLURM_PROCID/SLURM_NTASKS")
      ->capture_default_str();
}

}  // namespace dfi::eval
