#include "kernels/argmax.h"

#include <cstdint>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/empty.h>
#include <c10/util/BFloat16.h>

#include "kernels/cpu_clones.h"
#include "kernels/float_casts.h"
#include "kernels/kernel_path.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {
namespace {

// The first index of `row` [n] holding `value`, or of a NaN when `value` is NaN. Blocks of
// 32 are tested at once (a branch-free reduction the compiler vectorises), then the block
// that holds it is scanned.
template <typename T>
DFI_CPU_CLONES std::int64_t firstIndexOf(const T* row, std::int64_t n, float value) {
  constexpr std::int64_t kBlock = 32;
  const bool nan = value != value;
  auto matches = [&](T element) {
    const float v = toFloat(element);
    return nan ? v != v : v == value;
  };
  std::int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    bool hit = false;
    for (std::int64_t k = 0; k < kBlock; ++k) hit |= matches(row[i + k]);
    if (hit) break;
  }
  for (; i < n; ++i)
    if (matches(row[i])) return i;
  return n - 1;  // not reached: `value` is the row's maximum
}

template <typename T>
void argmaxRows(const at::Tensor& rows, const at::Tensor& maxima, at::Tensor& out) {
  const std::int64_t n = rows.size(1);
  const T* data = rows.data_ptr<T>();
  const float* max = maxima.data_ptr<float>();
  std::int64_t* index = out.data_ptr<std::int64_t>();
  at::parallel_for(0, rows.size(0), 8, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) index[r] = firstIndexOf(data + r * n, n, max[r]);
  });
}

}  // namespace

at::Tensor argmaxLastDim(const at::Tensor& x) {
  const bool kernel = takesCpuKernel(x) && x.dim() > 0 && x.size(-1) > 0 &&
                      (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16);
  if (!kernel) return at::argmax(x, -1);
  const at::Tensor rows = x.contiguous().view({-1, x.size(-1)});
  // amax keeps NaN (it propagates), so a row with a NaN looks for its first NaN.
  const at::Tensor maxima = asType(at::amax(rows, -1), at::kFloat).contiguous();
  at::Tensor out = at::empty({rows.size(0)}, x.options().dtype(at::kLong));
  if (x.scalar_type() == at::kFloat)
    argmaxRows<float>(rows, maxima, out);
  else
    argmaxRows<c10::BFloat16>(rows, maxima, out);
  std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
  return out.view(shape);
}

}  // namespace dfi::engine
