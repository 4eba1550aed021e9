#pragma once
// One forward pass of a target model over given token ids, written to a .safetensors file:
// what `dflash-eval forward` does, as a torch-free API.
//
// File contents (names and conventions; dtype = the compute dtype unless stated):
//   input_ids        [T] I64
//   logits           [T, V]
//   hidden.<i>       [T, H]  output of decoder layer i (transformers' hidden_states[i + 1],
//                             DFlash's target_layer_ids convention), for each requested tap
//   stats.<i>        [T, 4] F32  mean, std (population), rms, abs-max over H (with statistics)
//   router.<i>.experts [T, k] I64  for a tapped layer with a mixture-of-experts MLP: the experts
//                             its router chose per position, highest probability first
//   router.<i>.weights [T, k] F32  their mixing weights as applied (renormalised where the
//                             family does, rounded to the compute dtype)
//   final_hidden     [T, H]  after the final norm (transformers' hidden_states[L])
// Metadata: model directory, dtype, device(s).

#include <cstdint>
#include <filesystem>
#include <vector>

#include "dfi/engine/model_options.h"

namespace dfi::engine {

struct ForwardPassRequest {
  std::filesystem::path modelDir;
  std::vector<std::int64_t> ids;
  std::vector<int> taps;
  bool statistics = false;
  ModelOptions model;
  std::filesystem::path out;
};

struct ForwardPassSummary {
  std::int64_t tokens = 0;
  int layers = 0;
  double loadSeconds = 0;
  double forwardSeconds = 0;
};

// Throws dfi::Error subclasses (bad model directory, tensor, device, tap id, out-of-range id).
ForwardPassSummary runForwardPass(const ForwardPassRequest& request);

}  // namespace dfi::engine
