// FTZ and DAZ for the life of a scope, as vdpbf16ps computes (subnormal inputs and results are
// zero), the caller's MXCSR restored at its end: the FMA kernels that give vdpbf16ps's bits run
// under it. _mm_getcsr / _mm_setcsr are SSE, so any x86 kernel file may include this.
#pragma once

#include <immintrin.h>

namespace vllm::kernels {

class FlushedSubnormals {
 public:
  FlushedSubnormals() : saved_(_mm_getcsr()) {
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
  }
  ~FlushedSubnormals() { _mm_setcsr(saved_); }
  FlushedSubnormals(const FlushedSubnormals&) = delete;
  FlushedSubnormals& operator=(const FlushedSubnormals&) = delete;

 private:
  static constexpr unsigned kFlushToZero = 0x8000;
  static constexpr unsigned kDenormalsAreZero = 0x0040;
  unsigned saved_;
};

}  // namespace vllm::kernels
