#include <gtest/gtest.h>

#include "dfi/engine/runtime.h"

TEST(Runtime, ReportsTheLibtorchItWasBuiltWith) {
  const auto info = dfi::engine::runtimeInfo();
  // Torch_VERSION comes from libtorch's CMake package, TORCH_VERSION from its headers.
  EXPECT_EQ(info.torchVersion, EXPECTED_TORCH_VERSION);
  EXPECT_EQ(info.cudaCompiled, static_cast<bool>(EXPECTED_CUDA_COMPILED));
  EXPECT_EQ(info.cudaCompiled, !info.cudaVersion.empty());
  if (!info.cudaAvailable) {
    EXPECT_EQ(info.cudaDeviceCount, 0);
  }
}
