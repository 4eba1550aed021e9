// DFI_CPU_KERNELS decides which arithmetic CPU tensors take. This test runs twice (ATEN_PATH in
// CMake): with the kernels on, the delta rule on the CPU is the token-by-token recurrence; with
// DFI_CPU_KERNELS=off it is the chunked form a CUDA device runs. Bitwise comparisons, because
// the two forms agree only to rounding: a switch that changed nothing would fail one of the runs.

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/kernel_path.h"

namespace dfi::engine {
namespace {

bool switchedOffByEnvironment() {
  const char* value = std::getenv("DFI_CPU_KERNELS");
  return value != nullptr && std::string(value) == "off";
}

TEST(KernelPath, SwitchValues) {
  EXPECT_TRUE(parseCpuKernelsSwitch(nullptr));
  EXPECT_TRUE(parseCpuKernelsSwitch(""));
  EXPECT_TRUE(parseCpuKernelsSwitch("on"));
  EXPECT_TRUE(parseCpuKernelsSwitch("1"));
  EXPECT_FALSE(parseCpuKernelsSwitch("off"));
  EXPECT_FALSE(parseCpuKernelsSwitch("0"));
  try {
    parseCpuKernelsSwitch("gpu");
    FAIL() << "an unknown value must be refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("DFI_CPU_KERNELS"), std::string::npos) << e.what();
  }
}

TEST(KernelPath, DeltaRuleFollowsTheSwitch) {
  EXPECT_EQ(cpuKernelsEnabled(), !switchedOffByEnvironment());
  at::manual_seed(7);
  const int64_t batch = 1, steps = 96, heads = 2, dk = 8, dv = 8;
  const at::Tensor q = at::randn({batch, steps, heads, dk}), k = at::randn({batch, steps, heads, dk});
  const at::Tensor v = at::randn({batch, steps, heads, dv});
  const at::Tensor g = -at::rand({batch, steps, heads}) * 0.5, beta = at::rand({batch, steps, heads});
  const at::Tensor state = at::randn({batch, heads, dk, dv}) * 0.3;

  // The final states, kept in the fp64 accumulation type: the outputs are rounded to fp32,
  // where both forms land on the same values.
  const at::Tensor taken = gatedDeltaRule(q, k, v, g, beta, state).finalState;
  const at::Tensor chunked = chunkedGatedDeltaRule(q, k, v, g, beta, state).finalState;
  ASSERT_TRUE(at::allclose(taken, chunked, 1e-6, 1e-6));
  // On: the recurrence, which differs from the chunked form in rounding (so the "on" run fails
  // if the switch is stuck off); off: the chunked form itself (the "off" run fails if stuck on).
  EXPECT_EQ(at::equal(taken, chunked), switchedOffByEnvironment());
}

}  // namespace
}  // namespace dfi::engine
