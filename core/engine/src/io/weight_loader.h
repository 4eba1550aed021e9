#pragma once
// Moves checkpoint tensors from the memory map to their device in the compute dtype, one
// tensor at a time, checking each name and shape against what the model code expects.

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/tensorfile/checkpoint.h"

namespace dfi::engine {

class QuantizedWeights;

class WeightLoader {
 public:
  // `quantized`: the checkpoint's quantisation format (quantizedWeightsFor), whose weights load()
  // dequantises; nullptr for a checkpoint of plain float tensors.
  WeightLoader(const tensorfile::Checkpoint& checkpoint, at::ScalarType dtype,
               std::shared_ptr<const QuantizedWeights> quantized = nullptr)
      : checkpoint_(checkpoint), dtype_(dtype), quantized_(std::move(quantized)) {}

  bool contains(const std::string& name) const;

  // The tensor `name` on `device` in the compute dtype. Throws ValidationError naming the
  // checkpoint file, the tensor and both shapes when it is missing or shaped differently,
  // and FormatError for a stored dtype the engine cannot convert. On the CPU, a tensor whose
  // stored dtype already is the compute dtype aliases the memory map (no copy): the model
  // keeps the Checkpoint alive. Any other tensor is copied out and its pages released. A weight
  // the checkpoint stores quantised is dequantised by the loader's format (quantized_weights.h).
  at::Tensor load(const std::string& name, const std::vector<int64_t>& expectedShape,
                  at::Device device) const;
  // The tensor as stored (any dtype, integer ones included: MXFP4 blocks and scales) on the
  // CPU, aliasing the memory map; the same name and shape checks as load().
  at::Tensor loadStored(const std::string& name, const std::vector<int64_t>& expectedShape) const;

  // For the quantised formats: a stored tensor's header (nullptr when absent), the file that
  // holds it (the checkpoint's path when absent), and the tensor as stored in `shape` (its
  // header's), copied out by the caller, so its pages are released after the model is loaded.
  const tensorfile::TensorInfo* stored(const std::string& name) const;
  std::string fileOf(const std::string& name) const;
  at::Tensor loadPart(const std::string& name, const std::vector<int64_t>& shape) const;

  at::ScalarType dtype() const { return dtype_; }
  // A loader of the same checkpoint into another dtype (gpt-oss keeps its norms in fp32).
  WeightLoader withDtype(at::ScalarType dtype) const { return WeightLoader(checkpoint_, dtype, quantized_); }
  std::string checkpointPath() const { return checkpoint_.path().string(); }

  // Releases the pages of every copied tensor once more, after the whole model is loaded:
  // reading one tensor maps its cached neighbours too (the kernel's fault-around), including
  // tensors copied and released before.
  void releaseCopiedPages() const;

 private:
  const tensorfile::Checkpoint& checkpoint_;
  at::ScalarType dtype_;
  std::shared_ptr<const QuantizedWeights> quantized_;
  mutable std::vector<std::string> copied_;
};

std::string shapeText(const std::vector<int64_t>& shape);

// A zero-copy view of a mapped safetensors tensor (read-only: convert before writing to it).
// FP8 tensors map to torch's float8 types; the dtypes of safetensors all have a torch type.
at::Tensor mappedTensor(const tensorfile::TensorView& view);

}  // namespace dfi::engine
