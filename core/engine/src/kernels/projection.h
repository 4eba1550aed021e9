#pragma once
// project(x, W, b) = x W^T (+ b), as at::linear, with kernels of the engine's own on the CPU for
// the few-row products of decoding, verification and drafting (1-32 rows), each streaming the
// weights once with every row of x in L1:
//  - fp32 weights: a tile of four x rows by four weight rows in registers. At so few rows MKL's
//    sgemm depends on the weights being in cache: for the demo's 16-row verification its LM head
//    took up to 2.7x as long with them out of cache as in it (885 against 331 us), the tile
//    ~300 us either way; one row (sgemv) reached half the machine's bandwidth.
//  - bf16 weights, one row: a matrix-vector product widening as it reads (oneDNN's bf16 GEMM
//    is faster from two rows on).
// Products of more rows (prefill, teacher forcing) go to at::linear: MKL's sgemm for fp32.
// oneDNN's matmul ran them faster on this project's AMD EPYC host (2 threads), but ATen reaches it
// for fp32 only through at::native::mkldnn_matmul, which torch's installed headers do not
// declare, so the engine keeps to at::linear and pays for it: bench_target's 256-token fp32
// prefill takes 1.15x as long for qwen3 (296 -> 340 ms) and 1.28x for qwen35 (390 -> 500 ms).
// Every other shape, device or dtype goes to at::linear.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

}  // namespace dfi::engine
