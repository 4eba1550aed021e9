#pragma once
// Test helpers: reference tensors from a .safetensors file (written by the Python oracles)
// as owned at::Tensors, and the comparison figure the oracle tests use.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/tensorfile/safetensors_file.h"

namespace dfi::engine::test {

inline at::Tensor referenceTensor(const tensorfile::SafetensorsFile& file, const std::string& name) {
  const tensorfile::TensorView view = file.view(name);
  const auto dtype = view.info().dtype == tensorfile::DType::I64 ? at::kLong : at::kFloat;
  return at::from_blob(const_cast<void*>(view.data()), view.info().shape, at::TensorOptions().dtype(dtype)).clone();
}

// A tensor's values as int64 (token ids, anchors, positions), for comparisons with engine records.
inline std::vector<std::int64_t> toVector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

inline double maxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kCPU, at::kDouble) - b.to(at::kCPU, at::kDouble)).abs().max().item<double>();
}

// The largest |engine - reference| over a drafter's layer outputs: the engine's (DrafterProbes::
// layerOutputs, [N*B, H] each) against the reference's "layer.<i>"; every layer must be there.
inline double layerOutputsDiff(const std::vector<at::Tensor>& engine, const tensorfile::SafetensorsFile& reference) {
  double worst = 0;
  std::size_t layers = 0;
  for (; reference.find("layer." + std::to_string(layers)); ++layers) {
    if (layers >= engine.size()) return INFINITY;
    const at::Tensor expected = referenceTensor(reference, "layer." + std::to_string(layers));
    worst = std::max(worst, maxAbsDiff(engine[layers].reshape(expected.sizes()), expected));
  }
  return layers == engine.size() && layers > 0 ? worst : INFINITY;
}

inline std::filesystem::path oracleRoot() { return std::filesystem::path(DFI_BINARY_DIR) / "oracle"; }
inline std::filesystem::path oracleDir() { return oracleRoot() / "target_models"; }

}  // namespace dfi::engine::test
