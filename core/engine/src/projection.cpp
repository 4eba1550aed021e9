#include "projection.h"

#include <algorithm>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "cpu_clones.h"

namespace dfi::engine {
namespace {

// out[r] = sum_i x[i] * w[r][i] for rows [begin, end), in fp32 with 32 running sums (two
// AVX-512 registers), so the loads, not a chain of dependent adds, set the pace.
template <typename W>
[[gnu::always_inline]] inline void matrixVectorRows(const float* x, const W* w, float* out,
                                                    int64_t n, int64_t begin, int64_t end) {
  constexpr int64_t kLanes = 32;
  for (int64_t r = begin; r < end; ++r) {
    const W* row = w + r * n;
    float lanes[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += x[i + l] * static_cast<float>(row[i + l]);
    float sum = 0;
    for (; i < n; ++i) sum += x[i] * static_cast<float>(row[i]);
    for (const float lane : lanes) sum += lane;
    out[r] = sum;
  }
}

DFI_CPU_CLONES void matrixVectorCloned(const float* x, const float* w, float* out, int64_t n,
                                       int64_t begin, int64_t end) {
  matrixVectorRows(x, w, out, n, begin, end);
}

DFI_CPU_CLONES void matrixVectorCloned(const float* x, const c10::BFloat16* w, float* out,
                                       int64_t n, int64_t begin, int64_t end) {
  matrixVectorRows(x, w, out, n, begin, end);
}

bool isMatrixVectorOnCpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const at::ScalarType type = weight.scalar_type();
  return x.is_cpu() && weight.is_cpu() && !bias.defined() && weight.dim() == 2 &&
         weight.is_contiguous() && x.scalar_type() == type &&
         (type == at::kFloat || type == at::kBFloat16) && x.dim() >= 1 &&
         x.size(-1) == weight.size(1) && x.numel() == x.size(-1);
}

}  // namespace

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!isMatrixVectorOnCpu(x, weight, bias))
    return at::linear(x, weight, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt);
  const int64_t rows = weight.size(0), n = weight.size(1);
  const at::Tensor x32 = x.reshape({n}).to(at::kFloat).contiguous();
  at::Tensor out32 = at::empty({rows}, x32.options());
  const float* xs = x32.data_ptr<float>();
  float* os = out32.data_ptr<float>();
  // Enough rows per task that a thread streams a few hundred KB of weights.
  const int64_t rowsPerTask = std::max<int64_t>(16, 65536 / std::max<int64_t>(1, n));
  at::parallel_for(0, rows, rowsPerTask, [&](int64_t begin, int64_t end) {
    if (weight.scalar_type() == at::kFloat)
      matrixVectorCloned(xs, weight.data_ptr<float>(), os, n, begin, end);
    else
      matrixVectorCloned(xs, weight.data_ptr<c10::BFloat16>(), os, n, begin, end);
  });
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = rows;
  return out32.to(x.scalar_type()).view(shape);
}

}  // namespace dfi::engine
