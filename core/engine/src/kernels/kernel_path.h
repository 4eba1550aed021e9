#pragma once
// Which arithmetic a tensor takes: the hand-written CPU kernels (delta-rule recurrence, norms,
// RoPE, matrix-vector projection, argmax, causal convolution) or the generic ATen path that a
// CUDA device always takes. DFI_CPU_KERNELS=off sends CPU tensors down the ATen path too, so the
// GPU's arithmetic is checked against transformers on a machine without a GPU (make test runs
// the oracle and live-loop tests a second time with it).

#include <ATen/core/Tensor.h>

namespace dfi::engine {

// The switch's value: null, "", "on" or "1" -> true; "off" or "0" -> false; anything else
// throws dfi::UsageError naming DFI_CPU_KERNELS.
bool parseCpuKernelsSwitch(const char* value);
// DFI_CPU_KERNELS as read once per process.
bool cpuKernelsEnabled();

inline bool takesCpuKernel(const at::Tensor& t) { return t.is_cpu() && cpuKernelsEnabled(); }

}  // namespace dfi::engine
