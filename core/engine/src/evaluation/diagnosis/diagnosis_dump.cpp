#include "evaluation/diagnosis/diagnosis_dump.h"

#include <ATen/ops/sqrt.h>
#include <ATen/ops/sub.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <cstdio>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

using analysis::LintFinding;
using analysis::LintSeverity;

std::string ratio(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

std::string layerName(int layer) { return layer < 0 ? "the embedding" : "layer " + std::to_string(layer); }

double relativeDifference(const at::Tensor& ours, const at::Tensor& theirs) {
  const double scale = ours.square().mean().item<double>();
  const double diff = at::sub(ours, theirs).square().mean().item<double>();
  return scale > 0 ? std::sqrt(diff / scale) : (diff > 0 ? INFINITY : 0.0);
}

// [T, ...] from [T, ...] or [1, T, ...].
at::Tensor withoutBatch(const at::Tensor& t) { return t.dim() >= 2 && t.size(0) == 1 ? t[0] : t; }

}  // namespace

std::vector<LintFinding> trainingDumpFindings(const std::filesystem::path& dump, const TargetModel& target,
                                              const modelspec::DrafterConfig& drafter) {
  const std::string file = dump.string();
  auto error = [&](const std::string& tensor, const std::string& message) {
    return std::vector<LintFinding>{{LintSeverity::Error, "training-dump", file + ": " + tensor, message}};
  };
  const auto st = tensorfile::SafetensorsFile::open(dump);
  for (const char* name : {"input_ids", "aux_hidden_state"})
    if (!st.find(name))
      return error(name, "missing: a training dump holds input_ids and aux_hidden_state (SpecForge's offline features)");
  c10::InferenceMode inference;
  const at::Tensor ids = withoutBatch(mappedTensor(st.view("input_ids")));
  const at::Tensor features = withoutBatch(mappedTensor(st.view("aux_hidden_state")));
  if (ids.dim() != 1 || at::isFloatingType(ids.scalar_type()))
    return error("input_ids", "has shape " + shapeText(ids.sizes().vec()) + ": expected integer ids [T] or [1, T]");
  const int hidden = target.config().hiddenSize;
  const auto& taps = drafter.targetLayerIds;
  const std::int64_t width = static_cast<std::int64_t>(taps.size()) * hidden;
  if (features.dim() != 2 || features.size(0) != ids.size(0) || features.size(1) != width)
    return error("aux_hidden_state", "has shape " + shapeText(features.sizes().vec()) + ": the " +
                                         std::to_string(ids.size(0)) + " ids and the config's " +
                                         std::to_string(taps.size()) + " taps of width " + std::to_string(hidden) +
                                         " need [" + std::to_string(ids.size(0)) + ", " + std::to_string(width) + "]");
  const std::int64_t vocab = target.config().vocabSize;
  if (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= vocab)
    return error("input_ids", "holds ids outside the target's vocabulary of " + std::to_string(vocab));

  // Every layer's output on the dump's ids, and the embedding (transformers' hidden_states[0]).
  const int layers = target.config().numHiddenLayers;
  std::vector<int> all(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) all[static_cast<std::size_t>(l)] = l;
  const at::Tensor input = ids.to(at::kLong).view({1, -1});
  const ForwardOutput out = target.forward(input, nullptr, {.tapLayers = all, .logits = false});
  std::vector<at::Tensor> states{target.embed(input[0])};
  for (const at::Tensor& tap : out.taps) states.push_back(tap[0]);

  std::vector<LintFinding> findings;
  for (std::size_t i = 0; i < taps.size(); ++i) {
    const at::Tensor theirs = features.narrow(1, static_cast<std::int64_t>(i) * hidden, hidden).to(at::kDouble);
    int best = -1;
    std::vector<double> diffs;
    for (std::size_t l = 0; l < states.size(); ++l) {
      diffs.push_back(relativeDifference(states[l].to(at::kCPU, at::kDouble), theirs));
      if (diffs[l] < diffs[static_cast<std::size_t>(best + 1)]) best = static_cast<int>(l) - 1;
    }
    const int configured = taps[i];
    const double bestDiff = diffs[static_cast<std::size_t>(best + 1)], configuredDiff = diffs[static_cast<std::size_t>(configured + 1)];
    const std::string subject = file + ": aux_hidden_state[:, " + std::to_string(i * static_cast<std::size_t>(hidden)) + ":" +
                                std::to_string((i + 1) * static_cast<std::size_t>(hidden)) + "] (tap " + std::to_string(i) + ")";
    if (bestDiff > kTapMatchTolerance)
      findings.push_back({LintSeverity::Warning, "training-dump-tap-unmatched", subject,
                          "tap " + std::to_string(i) + " matches no layer of this target (closest: " + layerName(best) +
                              ", relative difference " + ratio(bestDiff) +
                              "): another target, another dtype or other kernels produced the training features."});
    else if (best != configured)
      findings.push_back({LintSeverity::Error, "training-dump-tap-mismatch", subject,
                          "tap " + std::to_string(i) + " of the training features is " + layerName(best) +
                              " (relative difference " + ratio(bestDiff) + "), but the config names layer " +
                              std::to_string(configured) + " (relative difference " + ratio(configuredDiff) +
                              "): the drafter was trained on other taps than it is served with; see tap-shift:" +
                              std::to_string(i) + ":" + (best > configured ? "+" : "") + std::to_string(best - configured) +
                              "."});
    else
      findings.push_back({LintSeverity::Info, "training-dump-tap", subject,
                          "tap " + std::to_string(i) + " is layer " + std::to_string(configured) +
                              " as the config says (relative difference " + ratio(bestDiff) + ")."});
  }
  return findings;
}

}  // namespace dfi::engine
