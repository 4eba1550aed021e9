// dflash-eval forward: one forward pass of a target model, logits and tapped hidden states
// written to a .safetensors file (layout in dfi/engine/forward_pass.h). For checking the
// engine against other implementations and for looking at hidden states directly.
//   --model DIR (--text S | --ids 1,2,3) [--chat [--no-thinking]] [--taps 3,7,11] [--stats]
//   [--device cpu|cuda:N | --devices cuda:0,cuda:1] [--dtype fp32|bf16|fp16] --out F.safetensors

#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/engine/forward_pass.h"
#include "text_input.h"

namespace dfi::eval {
namespace {

struct ForwardOptions {
  std::string model;
  std::string text;
  std::vector<std::int64_t> ids;
  std::vector<int> taps;
  bool chat = false;
  bool noThinking = false;
  bool stats = false;
  std::string device = "cpu";
  std::vector<std::string> devices;
  std::string dtype = "fp32";
  std::string out;
};

int runForward(const ForwardOptions& opt) {
  engine::ForwardPassRequest request;
  request.modelDir = opt.model;
  request.ids = opt.text.empty() ? opt.ids : tokenizeInput(opt.model, opt.text, opt.chat, !opt.noThinking);
  request.taps = opt.taps;
  request.statistics = opt.stats;
  request.model.devices = opt.devices.empty() ? std::vector<std::string>{opt.device} : opt.devices;
  request.model.dtype = opt.dtype;
  request.out = opt.out;
  const engine::ForwardPassSummary summary = engine::runForwardPass(request);
  logger("engine")->info("forward: {} tokens through {} layers, load {:.2f} s, forward {:.3f} s -> {}",
                         summary.tokens, summary.layers, summary.loadSeconds, summary.forwardSeconds, opt.out);
  std::cout << opt.out << "\n";
  return 0;
}

}  // namespace

void registerForwardCommand(CLI::App& app) {
  auto opt = std::make_shared<ForwardOptions>();
  CLI::App* sub = app.add_subcommand("forward", "One forward pass: logits and tapped hidden states to .safetensors");
  sub->add_option("--model", opt->model, "Target model directory (config.json, safetensors, tokenizer)")->required();
  auto* text = sub->add_option("--text", opt->text, "Input text (tokenized with the model's tokenizer)");
  auto* ids = sub->add_option("--ids", opt->ids, "Input token ids, comma separated")->delimiter(',');
  text->excludes(ids);
  sub->add_flag("--chat", opt->chat, "Wrap --text as one user turn in the model's chat template")->needs(text);
  sub->add_flag("--no-thinking", opt->noThinking, "With --chat: enable_thinking=false");
  sub->add_option("--taps", opt->taps, "Decoder layers whose outputs to write (0-based)")->delimiter(',');
  sub->add_flag("--stats", opt->stats, "Also write per-position mean, std, rms, abs-max of each tap");
  auto* device = sub->add_option("--device", opt->device, "cpu, cuda or cuda:N")->capture_default_str();
  sub->add_option("--devices", opt->devices, "Several devices, layers split across them in order")
      ->delimiter(',')
      ->excludes(device);
  sub->add_option("--dtype", opt->dtype, "fp32, bf16 or fp16")->capture_default_str();
  sub->add_option("--out", opt->out, "Output .safetensors file")->required();
  setAction(*sub, [opt, text, ids] {
    if (!*text && !*ids) throw UsageError("give --text or --ids", {.item = "forward"});
    return runForward(*opt);
  });
}

}  // namespace dfi::eval
