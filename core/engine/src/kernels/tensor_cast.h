#pragma once
// Dtype and device changes that return the tensor itself, without a dispatcher call, when there
// is nothing to change. A no-op Tensor::to() still goes through the dispatcher (2-3 us on the
// CPU), and one CPU verification step of a small model made ~120 of them.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

inline at::Tensor asType(const at::Tensor& x, at::ScalarType type) {
  return x.scalar_type() == type ? x : x.to(type);
}

inline at::Tensor onDevice(const at::Tensor& x, at::Device device) {
  return x.device() == device ? x : x.to(device);
}

inline at::Tensor onDevice(const at::Tensor& x, at::Device device, at::ScalarType type) {
  return asType(onDevice(x, device), type);
}

}  // namespace dfi::engine
