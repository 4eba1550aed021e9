#pragma once
// project(x, W, b) = x W^T (+ b), as at::linear, with a matrix-vector kernel of the engine's
// own for a single row on the CPU (a decode step): that product streams the whole weight
// matrix once and is bound by memory bandwidth, where MKL's sgemv reaches half of what the
// machine reads (13 GB/s against 20-30 GB/s on the development machine) and does not scale
// with threads. Every other shape, device or dtype goes to at::linear.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

}  // namespace dfi::engine
