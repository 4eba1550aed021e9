#include "dfi/engine/forward_pass.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <string>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "io/tensor_export.h"
#include "models/target_model.h"

namespace dfi::engine {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ForwardPassSummary runForwardPass(const ForwardPassRequest& request) {
  if (request.ids.empty()) throw UsageError("no token ids to run", {.item = "ids"});
  const auto loadStart = std::chrono::steady_clock::now();
  const auto model = TargetModel::load(request.modelDir, request.model);
  ForwardPassSummary summary{.tokens = static_cast<int64_t>(request.ids.size()), .layers = model->numLayers()};
  summary.loadSeconds = secondsSince(loadStart);
  model->checkTokenIds(request.ids);

  const at::Tensor ids = at::tensor(request.ids, at::kLong).unsqueeze(0);
  const auto forwardStart = std::chrono::steady_clock::now();
  const ForwardOutput out =
      model->forward(ids, nullptr, {.tapLayers = request.taps, .statistics = request.statistics, .routing = true});
  out.logits.sum().item();  // wait for the device before stopping the clock
  summary.forwardSeconds = secondsSince(forwardStart);

  tensorfile::SafetensorsWriter writer(request.out);
  addTensor(writer, "input_ids", ids[0]);
  addTensor(writer, "logits", out.logits[0]);
  addTensor(writer, "final_hidden", out.finalHidden[0]);
  for (size_t i = 0; i < request.taps.size(); ++i) {
    const std::string id = std::to_string(request.taps[i]);
    if (i > 0 && std::find(request.taps.begin(), request.taps.begin() + i, request.taps[i]) != request.taps.begin() + i)
      continue;  // a repeated tap id is written once
    addTensor(writer, "hidden." + id, out.taps[i][0]);
    if (request.statistics) addTensor(writer, "stats." + id, out.statistics[i][0]);
    if (out.routing[i].experts.defined()) {
      addTensor(writer, "router." + id + ".experts", out.routing[i].experts[0]);
      addTensor(writer, "router." + id + ".weights", out.routing[i].weights[0]);
    }
  }
  writer.setMetadata("model", request.modelDir.string());
  writer.setMetadata("dtype", request.model.dtype);
  writer.setMetadata("devices", settings::deviceListText(request.model.devices));
  writer.setMetadata("hidden_convention", "hidden.<i> = output of decoder layer i = transformers hidden_states[i+1]");
  if (std::any_of(request.taps.begin(), request.taps.end(), [&](int layer) { return model->layerHasExperts(layer); }))
    writer.setMetadata("router_convention", "router.<i>.experts / .weights = the experts decoder layer i's router chose "
                                            "per position (highest first) and their weights as applied");
  writer.finish();
  return summary;
}

}  // namespace dfi::engine
