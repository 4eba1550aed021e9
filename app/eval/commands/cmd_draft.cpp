// dflash-eval draft: the drafter's blocks at chosen anchors of one sequence, written to a
// .safetensors file (layout in dfi/engine/draft_pass.h): block logits and every layer's
// output, through the inference path (incremental, as the live loop drafts), the training
// path (batched, anchor-block mask) or both, then with a train/eval parity table.
//   --target DIR --drafter DIR (--text S [--chat] | --ids 1,2,3) --anchors 12,40
//   [--mask-variant NAME] [--training-mask-variant NAME] [--path inference|training|both] [--block-size N]
//   [--device cpu|cuda:N | --devices ...] [--dtype fp32|bf16|fp16] --out F.safetensors

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/engine/draft_pass.h"
#include "command_inputs.h"
#include "dfi/session/record_fields.h"

namespace dfi::eval {
namespace {

struct DraftOptions {
  std::string target, drafter, variant = "reference", trainingVariant, path = "inference", out;
  TokenInput input;
  std::vector<std::int64_t> anchors;
  int blockSize = 0;
  PlacementOptions placement;
};

void printParity(const std::vector<engine::AnchorParity>& parity) {
  std::printf("%8s  %12s  %8s  %10s\n", "anchor", "max |diff|", "argmax", "first diff");
  int flagged = 0;
  for (const auto& p : parity) {
    flagged += p.flagged;
    const std::string first = p.firstDifferingSlot < 0 ? "-" : std::to_string(p.firstDifferingSlot);
    std::printf("%8lld  %12.3g  %7.1f%%  %10s  %s\n", static_cast<long long>(p.anchor), p.maxAbsDiff,
                100 * p.argmaxAgreement, first.c_str(), p.flagged ? "MISMATCH" : "");
  }
  std::printf("%d of %zu anchors differ between the training and inference paths\n", flagged, parity.size());
}

analysis::MaskVariant maskVariant(const std::string& name, const char* option) {
  const auto variant = parseEnum<session::MaskVariant>(name);
  if (!variant)
    throw UsageError("unknown mask variant '" + name + "' (" + enumNameList<session::MaskVariant>() + ")",
                     {.item = option});
  return *variant;
}

int runDraft(const DraftOptions& opt) {
  engine::DraftPassRequest request;
  request.target = opt.target;
  request.drafter = opt.drafter;
  request.ids = opt.input.tokenIds(opt.target, "draft");
  request.anchors = opt.anchors;
  request.variant = maskVariant(opt.variant, "--mask-variant");
  if (!opt.trainingVariant.empty()) request.trainingVariant = maskVariant(opt.trainingVariant, "--training-mask-variant");
  request.path = engine::parseDraftPath(opt.path);
  if (opt.blockSize > 0) request.blockSize = opt.blockSize;
  request.model = opt.placement.modelOptions();
  request.out = opt.out;
  const engine::DraftPassSummary summary = engine::runDraftPass(request);
  logger("engine")->info("draft: {} anchors, block {}, {} layers -> {}", opt.anchors.size(), summary.blockSize,
                         summary.layers, opt.out);
  if (!summary.parity.empty()) printParity(summary.parity);
  std::cout << opt.out << "\n";
  return 0;
}

}  // namespace

void registerDraftCommand(CLI::App& app) {
  auto opt = std::make_shared<DraftOptions>();
  CLI::App* sub = app.add_subcommand("draft", "Drafter blocks at given anchors (logits, layer outputs, parity) to .safetensors");
  sub->add_option("--target", opt->target, "Target model directory")->required();
  sub->add_option("--drafter", opt->drafter, "DFlash drafter directory")->required();
  addTokenInputOptions(*sub, opt->input, "the target's");
  sub->add_option("--anchors", opt->anchors, "Anchor positions (0-based), comma separated")->delimiter(',')->required();
  sub->add_option("--mask-variant", opt->variant,
                  "reference, anchor-visible, block-causal, positions+1 or no-context")
      ->capture_default_str();
  sub->add_option("--training-mask-variant", opt->trainingVariant,
                  "The training path's mask, when it differs (default: --mask-variant)");
  sub->add_option("--path", opt->path, "inference (incremental, as live), training (batched), or both + parity")
      ->capture_default_str();
  sub->add_option("--block-size", opt->blockSize, "Draft blocks of N (2 .. the trained size)");
  addPlacementOptions(*sub, opt->placement);
  sub->add_option("--out", opt->out, "Output .safetensors file")->required();
  setAction(*sub, [opt] { return runDraft(*opt); });
}

}  // namespace dfi::eval
