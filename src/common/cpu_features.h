// Runtime CPU feature detection; kernels dispatch on this, never on compile-time flags alone.
#pragma once

#include <string>

namespace vllm {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512vbmi = false;  // vpermb
  bool avx512bf16 = false;
  bool amx_tile = false;  // AMX tile registers, with the OS saving their state (XCR0)
  bool amx_bf16 = false;  // TDPBF16PS
  // 64-bit ARM (getauxval's AT_HWCAP / AT_HWCAP2): NEON (every aarch64 CPU has it), the int8 dot
  // products SDOT / UDOT (dotprod), the int8 matrix multiply-accumulate SMMLA (i8mm), SVE.
  bool neon = false;
  bool dotprod = false;
  bool i8mm = false;
  bool sve = false;

  bool HasAvx2Path() const { return avx2 && fma && f16c; }
  bool HasAvx512Path() const { return HasAvx2Path() && avx512f && avx512bw && avx512vl; }
  std::string ToString() const;
};

// Detected once; the environment variable VLLM_CPU_ISA caps what is used: scalar|avx2|avx512 on
// x86 (avx512: everything up to AVX-512, no AMX), scalar|neon|dotprod|i8mm on 64-bit ARM (each
// with the ones before it, i8mm also dotprod; SVE is left out by every cap).
const CpuFeatures& GetCpuFeatures();

}  // namespace vllm
