#include "run_options.h"

#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::eval {
namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

engine::EvaluationMode parseMode(const std::string& name) {
  for (auto m : {engine::EvaluationMode::Live, engine::EvaluationMode::TeacherForced, engine::EvaluationMode::DDTree})
    if (engine::evaluationModeName(m) == name) return m;
  throw UsageError("--mode: unknown mode '" + name + "' (live, teacher-forced, ddtree)");
}

}  // namespace

engine::EvaluationSettings RunOptions::toSettings() const {
  engine::EvaluationSettings s;
  s.target = target;
  for (const auto& d : drafters) s.drafters.emplace_back(d);
  s.prompts = prompts;
  s.modes.clear();
  for (const auto& m : modes) s.modes.push_back(parseMode(m));
  s.maskVariants.clear();
  for (const auto& v : maskVariants) {
    auto variant = analysis::parseMaskVariant(v);
    if (!variant)
      throw UsageError("--mask-variants: unknown variant '" + v +
                       "' (reference, anchor-visible, block-causal, positions+1, no-context)");
    s.maskVariants.push_back(*variant);
  }
  s.anchors = engine::parseAnchorSelection(anchors);
  s.ddtreeBudget = ddtreeBudget;
  s.maxNewTokens = maxNewTokens;
  s.topK = topK;
  s.model.devices = splitList(device);
  if (dtype != "fp32" && dtype != "bf16" && dtype != "fp16")
    throw UsageError("--dtype: '" + dtype + "' is not fp32, bf16 or fp16");
  s.model.dtype = dtype;
  s.chatTemplate = !noChat;
  s.enableThinking = enableThinking;
  const auto slash = shard.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument(shard);
    s.shardIndex = std::stoi(shard.substr(0, slash));
    s.shardCount = std::stoi(shard.substr(slash + 1));
  } catch (const std::exception&) {
    throw UsageError("--shard: '" + shard + "' is not i/N");
  }
  return s;
}

void addRunOptions(CLI::App& c, RunOptions& o) {
  c.add_option("--target", o.target, "Target model directory (Hugging Face layout)")->required()->check(CLI::ExistingDirectory);
  c.add_option("--drafter", o.drafters, "DFlash drafter directory (repeat for several)")->required()->check(CLI::ExistingDirectory);
  c.add_option("--prompts", o.prompts, "Prompts JSONL ({\"prompt\":..} | {\"messages\":[..]} | {\"ids\":[..]})")->required()->check(CLI::ExistingFile);
  c.add_option("--mode", o.modes, "live, teacher-forced, ddtree (comma list)")->delimiter(',')->capture_default_str();
  c.add_option("--mask-variants", o.maskVariants, "reference, anchor-visible, block-causal, positions+1, no-context")->delimiter(',')->capture_default_str();
  c.add_option("--anchors", o.anchors, "Teacher-forced anchors: live | every[:k] | random:N[:seed]")->capture_default_str();
  c.add_option("--ddtree-budget", o.ddtreeBudget, "DDTree node budget N (root excluded)")->capture_default_str();
  c.add_option("--max-new-tokens", o.maxNewTokens, "Tokens to generate per prompt")->capture_default_str();
  c.add_option("--top-k", o.topK, "Per-slot top-k stored with each step")->capture_default_str();
  c.add_option("--device,--devices", o.device, "cpu | cuda:N | cuda:0,cuda:1 (layers split across GPUs)")->capture_default_str();
  c.add_option("--dtype", o.dtype, "fp32 | bf16 | fp16")->capture_default_str();
  c.add_flag("--no-chat", o.noChat, "Tokenize prompts as plain text (no chat template)");
  c.add_flag("--enable-thinking", o.enableThinking, "Chat template with thinking on");
  c.add_option("--shard", o.shard, "Run shard i of N of the prompts (i/N)")->capture_default_str();
}

RunOptions runOptionsFromJson(const nlohmann::json& r) {
  RunOptions o;
  auto get = [&](const char* key, auto& field) {
    if (!r.contains(key)) return;
    try {
      r.at(key).get_to(field);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(std::string("run request: field '") + key + "': " + e.what());
    }
  };
  get("target", o.target);
  get("drafters", o.drafters);
  get("prompts", o.prompts);
  get("modes", o.modes);
  get("mask_variants", o.maskVariants);
  get("anchors", o.anchors);
  get("ddtree_budget", o.ddtreeBudget);
  get("max_new_tokens", o.maxNewTokens);
  get("top_k", o.topK);
  get("device", o.device);
  get("dtype", o.dtype);
  get("no_chat", o.noChat);
  get("enable_thinking", o.enableThinking);
  get("shard", o.shard);
  if (o.target.empty() || o.drafters.empty() || o.prompts.empty())
    throw UsageError("run request needs \"target\", \"drafters\" and \"prompts\"");
  return o;
}

}  // namespace dfi::eval
