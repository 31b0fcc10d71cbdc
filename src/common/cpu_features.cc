#include "common/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace vllm {
namespace {

#if defined(__x86_64__)

// XCR0 bits that tell the OS saves the wide registers: SSE|AVX (0x6), opmask|ZMM (0xe0) and the
// AMX tile configuration and data (0x60000).
uint64_t ReadXcr0() {
  uint32_t eax = 0;
  uint32_t edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures Detect() {
  CpuFeatures features;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return features;
  bool osxsave = (ecx & bit_OSXSAVE) != 0;
  if (!osxsave) return features;
  uint64_t xcr0 = ReadXcr0();
  bool os_avx = (xcr0 & 0x6) == 0x6;
  bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  bool os_amx = os_avx512 && (xcr0 & 0x60000) == 0x60000;
  features.fma = os_avx && (ecx & bit_FMA) != 0;
  features.f16c = os_avx && (ecx & bit_F16C) != 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    features.avx2 = os_avx && (ebx & bit_AVX2) != 0;
    features.avx512f = os_avx512 && (ebx & bit_AVX512F) != 0;
    features.avx512bw = os_avx512 && (ebx & bit_AVX512BW) != 0;
    features.avx512vl = os_avx512 && (ebx & bit_AVX512VL) != 0;
    features.avx512dq = os_avx512 && (ebx & bit_AVX512DQ) != 0;
    features.avx512vnni = os_avx512 && (ecx & bit_AVX512VNNI) != 0;
    features.avx512vbmi = os_avx512 && (ecx & bit_AVX512VBMI) != 0;
    features.amx_tile = os_amx && (edx & bit_AMX_TILE) != 0;
    features.amx_bf16 = features.amx_tile && (edx & bit_AMX_BF16) != 0;
  }
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) {
    features.avx512bf16 = os_avx512 && (eax & bit_AVX512BF16) != 0;
  }
  const char* cap = std::getenv("VLLM_CPU_ISA");
  if (cap != nullptr && std::strcmp(cap, "avx512") == 0) {
    features.amx_tile = features.amx_bf16 = false;
  } else if (cap != nullptr && std::strcmp(cap, "avx2") == 0) {
    features.avx512f = features.avx512bw = features.avx512vl = features.avx512dq = false;
    features.avx512vnni = features.avx512vbmi = features.avx512bf16 = false;
    features.amx_tile = features.amx_bf16 = false;
  } else if (cap != nullptr && std::strcmp(cap, "scalar") == 0) {
    features = CpuFeatures();
  }
  return features;
}

#elif defined(__aarch64__)

CpuFeatures Detect() {
  CpuFeatures features;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  features.neon = (hwcap & HWCAP_ASIMD) != 0;
  features.dotprod = features.neon && (hwcap & HWCAP_ASIMDDP) != 0;
  features.i8mm = features.neon && (hwcap2 & HWCAP2_I8MM) != 0;
  features.sve = (hwcap & HWCAP_SVE) != 0;
  const char* cap = std::getenv("VLLM_CPU_ISA");
  if (cap == nullptr) return features;
  // A cap names a tier; each keeps the ones below it (i8mm CPUs all have dotprod).
  features.sve = false;
  if (std::strcmp(cap, "dotprod") == 0) {
    features.i8mm = false;
  } else if (std::strcmp(cap, "neon") == 0) {
    features.i8mm = features.dotprod = false;
  } else if (std::strcmp(cap, "scalar") == 0) {
    features = CpuFeatures();
  }
  return features;
}

#else

CpuFeatures Detect() { return CpuFeatures(); }

#endif

}  // namespace

std::string CpuFeatures::ToString() const {
  std::string out;
  auto add = [&out](bool present, const char* name) {
    if (!present) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512dq, "avx512dq");
  add(avx512vnni, "avx512vnni");
  add(avx512vbmi, "avx512vbmi");
  add(avx512bf16, "avx512bf16");
  add(amx_tile, "amx_tile");
  add(amx_bf16, "amx_bf16");
  add(neon, "neon");
  add(dotprod, "dotprod");
  add(i8mm, "i8mm");
  add(sve, "sve");
  return out.empty() ? "scalar" : out;
}

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

}  // namespace vllm
