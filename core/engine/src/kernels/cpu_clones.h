#pragma once
// DFI_CPU_CLONES marks a hot loop function to be compiled once per x86-64 level (v4: AVX-512,
// v3: AVX2 + FMA, and the baseline) and picked when the library loads, by the CPU it runs on.
// The build targets baseline x86-64, where the loops would be 2-wide SSE2; the engine's
// bandwidth- and FMA-bound CPU kernels (the delta rule, the few-row projections, the argmax
// scan) use it.
// Callees must be inlined into the marked function to get its instruction set.

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define DFI_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DFI_CPU_CLONES
#endif
