// Q4_0: d (q − 8), q 4-bit, 32 values per block (ggml's block_q4_0). Packed as IQ4_NL's records
// (nibble_blocks.h); its kernels subtract the 8 where the grid types look their values up.
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeQ4_0(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_0*>(block);
  SplitNibbles(b.qs, out->q);
  for (int j = 0; j < 32; ++j) out->q[j] = static_cast<int8_t>(out->q[j] - 8);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

// ggml's quantize_row_q4_0_ref: d = (value of max |x|) / -8, q = min(15, (int)(x / d + 8.5)).
void QuantizeBlockQ4_0(const float* x, BlockQ4_0* block) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int i = 0; i < kQuantBlockSize; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  block->d = Fp32ToFp16(d);
  for (int j = 0; j < kQuantBlockSize / 2; ++j) {
    auto quantize = [id](float v) {
      return static_cast<uint8_t>(
          std::min(15, static_cast<int>(static_cast<int8_t>(v * id + 8.5f))));
    };
    block->qs[j] = quantize(x[j]) | static_cast<uint8_t>(quantize(x[j + 16]) << 4);
  }
}

void QuantizeRowQ4_0(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ4_0*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    QuantizeBlockQ4_0(x + b * kQuantBlockSize, &blocks[b]);
  }
}

}  // namespace

// In place (only weights whose rows do not fill groups of 16 on AVX-512 CPUs) the AVX2 kernel
// serves both SIMD paths.
TypeTraits Q4_0Entry() {
  return IntegerType<GgmlType::kQ4_0>(32, DecodeQ4_0, QuantizeRowQ4_0,
                                      NibbleForm<PackedIq4NlRecord>(GgmlType::kQ4_0),
                                      LinearRowsQ8_0Q4_0Avx2, LinearRowsQ8_0Q4_0Avx2);
}

}  // namespace vllm::kernels
