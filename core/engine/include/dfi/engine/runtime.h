#pragma once
// What the engine was built with and what it can use right now. Torch-free header so the
// CLI's plain parts can include it cheaply.

#include <string>

namespace dfi::engine {

struct RuntimeInfo {
  std::string torchVersion;     // libtorch version the engine was compiled against
  bool cudaCompiled = false;    // CUDA code paths are compiled in
  bool cudaAvailable = false;   // a CUDA device can be used now
  int cudaDeviceCount = 0;
  std::string cudaVersion;      // CUDA version libtorch was built with ("" when none)
  bool cpuKernels = true;       // CPU tensors take the hand-written kernels (DFI_CPU_KERNELS)
};

RuntimeInfo runtimeInfo();

}  // namespace dfi::engine
