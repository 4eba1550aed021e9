#pragma once
// Turns ModelOptions into torch devices and dtypes, and assigns decoder layers to devices.

#include <string_view>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "dfi/engine/model_options.h"

namespace dfi::engine {

// fp32 | bf16 | fp16 (also float32, bfloat16, float16); UsageError otherwise.
at::ScalarType parseComputeDtype(std::string_view text);

// cpu | cuda | cuda:N; UsageError when malformed or when the CUDA device does not exist here.
c10::Device parseDevice(std::string_view text);

struct Placement {
  std::vector<c10::Device> layerDevice;  // one per decoder layer
  c10::Device first{c10::kCPU};          // embeddings
  c10::Device last{c10::kCPU};           // final norm and lm head
  at::ScalarType dtype = at::kFloat;
};

// `layersPerDevice[d]` layers on options.devices[d], in order (the split of layersPerDevice,
// memory_plan.h).
Placement placeLayers(const ModelOptions& options, const std::vector<int>& layersPerDevice);

}  // namespace dfi::engine
