#include "dfi/engine/runtime.h"

#include <torch/cuda.h>
#include <torch/version.h>

#ifdef DFI_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "kernels/kernel_path.h"

namespace dfi::engine {

RuntimeInfo runtimeInfo() {
  RuntimeInfo info;
  info.torchVersion = TORCH_VERSION;
#ifdef DFI_WITH_CUDA
  info.cudaCompiled = true;
  info.cudaVersion = std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
#endif
  info.cudaAvailable = torch::cuda::is_available();
  info.cudaDeviceCount = info.cudaAvailable ? static_cast<int>(torch::cuda::device_count()) : 0;
  info.cpuKernels = cpuKernelsEnabled();
  return info;
}

}  // namespace dfi::engine
