// Internal to kernels (and their tests): AttendTile's per-ISA implementations, which
// attention.cc dispatches to, and the scalar reference they are tested against.
#pragma once

#include <cstdint>

#include "kernels/isa.h"
#include "kernels/ops.h"

namespace vllm::kernels {

// Each computes AttendTile (ops.h); they agree up to rounding (exp approximations and summation
// order differ), and each is batch-invariant on its own.
void AttendTileScalar(const AttentionTile& tile, const AttentionState& state, float* scratch);
VLLM_X86_KERNEL void AttendTileAvx2(const AttentionTile& tile, const AttentionState& state,
                                    float* scratch);
VLLM_X86_KERNEL void AttendTileAvx512(const AttentionTile& tile, const AttentionState& state,
                                      float* scratch);
// AttendSpan where AttentionTakesBf16Queries, transposed (cpu/attention_span_avx512.h) on AMX
// tiles where AmxBf16Usable (cpu/attention_amx.cc), else on vdpbf16ps
// (cpu/attention_bf16_dots_avx512.cc): q and the softmax weights rounded to bf16 for the
// products, sums and softmax in f32, acc in the tile layout; for every batch size alike. Keys and
// values share one dtype.
bool UsesBf16Attention(const AttentionSpan& span);
// Whether this CPU can run AttendSpanBf16Dots: the AVX-512 path with AVX512DQ (the softmax's
// vreduceps). AttendSpan takes it only where it is also faster than f32 FMAs.
bool CanAttendOnBf16Dots();
VLLM_X86_KERNEL void AttendSpanAmx(const AttentionSpan& span, const AttentionState& state,
                                   float* scratch);
VLLM_X86_KERNEL void AttendSpanBf16Dots(const AttentionSpan& span, const AttentionState& state,
                                        float* scratch);
// ScaleAccRows from the tile layout (which only the AVX-512 paths above leave).
VLLM_X86_KERNEL void ScaleAccRowsFromTilesAvx512(const float* acc, int64_t num_rows,
                                                 int64_t head_dim, const float* factors,
                                                 float* const* out_rows);
// AttendSpan elsewhere: AttendTile over each slot in turn.
void AttendSpanByTiles(const AttentionSpan& span, const AttentionState& state, float* scratch);

// AttendAllKeys (ops.h) per path: AVX-512 for head_dim a multiple of 16, and the scalar one (keys
// and values gathered, then AttentionRef per row), which is its reference.
VLLM_X86_KERNEL void AttendAllKeysAvx512(const DenseAttention& attention, float* scratch);
void AttendAllKeysScalar(const DenseAttention& attention, float* scratch);

// Scalar reference (ref/attention_ref.cc): one query row against num_keys f32 keys and values,
// two-pass softmax. out: [head_dim] = Σ_j exp(s_j - m) v_j / (Σ_j exp(s_j - m) + exp(sink - m)),
// s_j = q·k_j · scale, soft-capped to C·tanh(s_j / C) when logit_softcap C > 0,
// m = max(max_j s_j, sink); the sink terms are left out when `sink` is null.
// keys, values: [num_keys, head_dim]
void AttentionRef(const float* q, const float* keys, const float* values, int64_t num_keys,
                  int64_t head_dim, float scale, float logit_softcap, const float* sink,
                  float* out);

}  // namespace vllm::kernels
