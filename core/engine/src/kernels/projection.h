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
// fp32 products of 128 rows or more (prefill, teacher forcing) go to oneDNN's matmul, which
// ATen uses for bf16 but not for fp32 (MKL's sgemm there). On this project's AMD EPYC host, 2
// threads, it ran a 256-token prefill's products at 768 hidden 1.13-1.18x as fast as MKL's
// sgemm and its 32000-word LM head 1.34x; the demo drafter's 512-row products of width 128
// 0.9-1.1x; at 64 rows and below it was slower (0.6-0.9x), so those stay with MKL.
// Every other shape, device or dtype goes to at::linear.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// out = rows W^T for 2-D rows into a [rows, outputs] tensor that already exists (the
// teacher-forced pass reuses one logits buffer), by the same choice of GEMM as project() for
// more than 32 rows.
void projectInto(const at::Tensor& rows, const at::Tensor& weight, at::Tensor out);

}  // namespace dfi::engine
