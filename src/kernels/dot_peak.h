// The machine's dot-product compute limits on the SIMD path the kernels use, measured, so that
// GEMM figures can be reported as a ratio to a peak taken in the same run (the ISA's nominal
// figures overstate what a shared, clock-throttled core sustains).
#pragma once

#include "common/thread_pool.h"

namespace vllm::kernels {

// Operations per second on all of the pool's threads together; one multiply-add counts as two
// operations. 0 where the path has no such instruction.
struct DotPeak {
  const char* isa = "scalar";
  double int8_ops_per_second = 0.0;      // avx512: vpdpbusd; avx2: vpmaddubsw + vpmaddwd + vpaddd
  double bf16_ops_per_second = 0.0;      // avx512: vdpbf16ps
  double f32_ops_per_second = 0.0;       // vfmadd231ps
  double amx_bf16_ops_per_second = 0.0;  // avx512 where AMX is usable: TDPBF16PS
  // How BF16 weights multiply here (AMX tiles, bf16 dots or f32 FMAs; isa.h) and that path's peak.
  const char* bf16_weight_path = "";
  double bf16_weight_ops_per_second = 0.0;
};

// Runs chains of independent dot instructions (no memory traffic) on every thread for about
// `seconds` per kind and keeps the best of three passes.
DotPeak MeasureDotPeak(ThreadPool& pool, double seconds = 0.1);

}  // namespace vllm::kernels
