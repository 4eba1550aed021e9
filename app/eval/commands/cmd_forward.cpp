// dflash-eval forward: one forward pass of a target model, logits and tapped hidden states (and,
// for a tapped mixture-of-experts layer, its router's choices) written to a .safetensors file
// (layout in dfi/engine/forward_pass.h). For checking the
// engine against other implementations and for looking at hidden states directly.
//   --model DIR (--text S | --ids 1,2,3) [--chat [--no-thinking]] [--taps 3,7,11] [--stats]
//   [--device cpu|cuda:N | --devices cuda:0,cuda:1] [--dtype fp32|bf16|fp16] --out F.safetensors

#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/engine/forward_pass.h"
#include "command_inputs.h"

namespace dfi::eval {
namespace {

struct ForwardOptions {
  std::string model;
  TokenInput input;
  std::vector<int> taps;
  bool stats = false;
  PlacementOptions placement;
  std::string out;
};

int runForward(const ForwardOptions& opt) {
  engine::ForwardPassRequest request;
  request.modelDir = opt.model;
  request.ids = opt.input.tokenIds(opt.model, "forward");
  request.taps = opt.taps;
  request.statistics = opt.stats;
  request.model = opt.placement.modelOptions();
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
  addTokenInputOptions(*sub, opt->input, "the model's");
  sub->add_option("--taps", opt->taps, "Decoder layers whose outputs to write (0-based); a layer with experts also writes "
                 "router.<i>.experts and router.<i>.weights")->delimiter(',');
  sub->add_flag("--stats", opt->stats, "Also write per-position mean, std, rms, abs-max of each tap");
  addPlacementOptions(*sub, opt->placement);
  sub->add_option("--out", opt->out, "Output .safetensors file")->required();
  setAction(*sub, [opt] { return runForward(*opt); });
}

}  // namespace dfi::eval
