#include "kernels/projection.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "kernels/cpu_clones.h"
#include "kernels/float_casts.h"
#include "kernels/kernel_path.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {
namespace {

// The kernel takes up to this many rows of x with fp32 weights (one row with bf16 weights,
// where oneDNN's bf16 GEMM beats widening from two rows on); more go to a packed GEMM, which
// reaches the machine's peak there. Verification (16 rows) and drafting (15-16) fall below.
constexpr int64_t kMaxRows = 32;

// Eight fp32 lanes: one AVX2 register, half an AVX-512 one. A tile of four x rows by four
// weight rows keeps 16 accumulators, four weight vectors and one x vector in registers (AVX-512
// has 32; AVX2's 16 spill a few, which costs less than halving the reuse).
using Lanes = float __attribute__((vector_size(32)));
using LaneIndex = int __attribute__((vector_size(32)));
// Eight lanes read from any float address (no alignment; they alias the tensor's data).
using LanesAt = float __attribute__((vector_size(32), aligned(4), may_alias));
constexpr int64_t kLanes = 8;
#define DFI_LANES_AT(p) (*reinterpret_cast<const LanesAt*>(p))  // a macro: no vector-returning call

// The four lane sums of a, b, c, d, in two shuffle-and-add rounds and a scalar finish.
[[gnu::always_inline]] inline void sumLanes4(Lanes a, Lanes b, Lanes c, Lanes d, float* out) {
  const Lanes ab =
      __builtin_shuffle(a, b, LaneIndex{0, 1, 2, 3, 8, 9, 10, 11}) +
      __builtin_shuffle(a, b, LaneIndex{4, 5, 6, 7, 12, 13, 14, 15});  // a: 0-3, b: 4-7
  const Lanes cd = __builtin_shuffle(c, d, LaneIndex{0, 1, 2, 3, 8, 9, 10, 11}) +
                   __builtin_shuffle(c, d, LaneIndex{4, 5, 6, 7, 12, 13, 14, 15});
  const Lanes abcd = __builtin_shuffle(ab, cd, LaneIndex{0, 1, 4, 5, 8, 9, 12, 13}) +
                     __builtin_shuffle(ab, cd, LaneIndex{2, 3, 6, 7, 10, 11, 14, 15});  // pairs
  for (int j = 0; j < 4; ++j) out[j] = abcd[2 * j] + abcd[2 * j + 1];
}

// out[a * 4 + j] = <x row a, w row j> for kX rows of x and four rows of w, all of length n
// (rows n apart): each loaded weight vector serves kX rows of x, each x vector four weights.
template <int kX>
[[gnu::always_inline]] inline void dotTile(const float* x, const float* w, int64_t n, float* out) {
  Lanes acc[kX][4] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Lanes w0 = DFI_LANES_AT(w + i), w1 = DFI_LANES_AT(w + n + i),
                w2 = DFI_LANES_AT(w + 2 * n + i), w3 = DFI_LANES_AT(w + 3 * n + i);
    for (int a = 0; a < kX; ++a) {
      const Lanes xv = DFI_LANES_AT(x + a * n + i);
      acc[a][0] += xv * w0;
      acc[a][1] += xv * w1;
      acc[a][2] += xv * w2;
      acc[a][3] += xv * w3;
    }
  }
  for (int a = 0; a < kX; ++a) {
    float sums[4];
    sumLanes4(acc[a][0], acc[a][1], acc[a][2], acc[a][3], sums);
    for (int64_t t = i; t < n; ++t)
      for (int j = 0; j < 4; ++j) sums[j] += x[a * n + t] * w[j * n + t];
    for (int j = 0; j < 4; ++j) out[a * 4 + j] = sums[j];
  }
}

#undef DFI_LANES_AT

// out[m][r] = <x row m, w row r> for every m < rows (<= kMaxRows) and r in [begin, end), begin a
// multiple of 4. Weight rows go four at a time through L1 against every x row, so the weights
// stream from memory once; a last group of fewer than four is padded with zero rows in `scratch`.
// Everything it calls is inlined, so it all gets the clone's instruction set (cpu_clones.h).
DFI_CPU_CLONES void productRows(const float* x, int64_t rows, const float* w, int64_t n, float* out,
                                int64_t ldOut, int64_t begin, int64_t end, float* scratch) {
  float block[kMaxRows * 4];
  for (int64_t r = begin; r < end; r += 4) {
    const int64_t group = std::min<int64_t>(4, end - r);
    const float* tile = w + r * n;
    if (group < 4) {
      std::fill(scratch, scratch + 4 * n, 0.0f);
      std::copy(tile, tile + group * n, scratch);
      tile = scratch;
    }
    int64_t m = 0;
    for (; m + 4 <= rows; m += 4) dotTile<4>(x + m * n, tile, n, block + m * 4);
    for (; m < rows; ++m) dotTile<1>(x + m * n, tile, n, block + m * 4);
    for (int64_t a = 0; a < rows; ++a)
      for (int64_t j = 0; j < group; ++j) out[a * ldOut + r + j] = block[a * 4 + j];
  }
}

// One row against bf16 weights: out[r] = sum_i x[i] * w[r][i] for rows [begin, end), widened
// to fp32 as read, with 32 running sums (two AVX-512 registers) so that the loads, not a chain
// of dependent adds, set the pace. (The tile kernel above, widening bf16 weights the same way,
// was 1.1-1.8x slower here.)
DFI_CPU_CLONES void matrixVectorRows(const float* x, const c10::BFloat16* w, float* out, int64_t n,
                                     int64_t begin, int64_t end) {
  constexpr int64_t kSums = 32;
  for (int64_t r = begin; r < end; ++r) {
    const c10::BFloat16* row = w + r * n;
    float sums[kSums] = {};
    int64_t i = 0;
    for (; i + kSums <= n; i += kSums)
      for (int64_t l = 0; l < kSums; ++l) sums[l] += x[i + l] * toFloat(row[i + l]);
    float sum = 0;
    for (; i < n; ++i) sum += x[i] * toFloat(row[i]);
    for (const float s : sums) sum += s;
    out[r] = sum;
  }
}

int64_t rowsOf(const at::Tensor& x) { return x.numel() / x.size(-1); }

// x [..., n] (at least one row, at most the kernels' rows) against a contiguous [outputs, n]
// weight of x's dtype, fp32 or bf16, both on the CPU, without a bias.
bool isSmallProductOnCpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const at::ScalarType type = weight.scalar_type();
  return takesCpuKernel(x) && weight.is_cpu() && weight.dim() == 2 && weight.is_contiguous() &&
         x.scalar_type() == type && x.dim() >= 1 && x.size(-1) == weight.size(1) && x.numel() > 0 &&
         !bias.defined() && (type == at::kFloat || type == at::kBFloat16) &&
         rowsOf(x) <= (type == at::kFloat ? kMaxRows : 1);
}

}  // namespace

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!isSmallProductOnCpu(x, weight, bias))
    return at::linear(x, weight, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt);
  const int64_t outputs = weight.size(0), n = weight.size(1), rows = rowsOf(x);
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = outputs;
  const at::Tensor x32 = asType(x.reshape({rows, n}), at::kFloat).contiguous();
  at::Tensor out32 = at::empty({rows, outputs}, x32.options());
  const float* xs = x32.data_ptr<float>();
  float* os = out32.data_ptr<float>();
  // Enough weight rows per task that a thread streams a few hundred KB of weights; a multiple
  // of the four-row tile.
  const int64_t rowsPerTask = (std::max<int64_t>(16, 65536 / n) + 3) / 4 * 4;
  const int64_t tasks = (outputs + rowsPerTask - 1) / rowsPerTask;
  at::parallel_for(0, tasks, 1, [&](int64_t first, int64_t last) {
    for (int64_t task = first; task < last; ++task) {
      const int64_t begin = task * rowsPerTask, end = std::min(outputs, begin + rowsPerTask);
      if (weight.scalar_type() == at::kBFloat16) {
        matrixVectorRows(xs, weight.data_ptr<c10::BFloat16>(), os, n, begin, end);
        continue;
      }
      // Only the last task can end in a group of fewer than four rows.
      std::vector<float> scratch(static_cast<std::size_t>((end - begin) % 4 ? 4 * n : 0));
      productRows(xs, rows, weight.data_ptr<float>(), n, os, outputs, begin, end, scratch.data());
    }
  });
  return asType(out32, x.scalar_type()).view(shape);
}

}  // namespace dfi::engine
