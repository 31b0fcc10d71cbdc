// Packing Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL / IQ4_XS / MXFP4 weights into the records of
// packed_nibble_layout.h (any CPU can pack; cpu/linear_packed_iq4_avx512.cc computes, or for the
// grid types cpu/linear_packed_grid_vbmi_avx512.cc where the CPU has AVX512_VBMI). Their blocks
// already hold 4-bit codes in Q4_0's order, so the nibbles are copied as they are; only the scales
// change form (and Q5_0's 5th bits become a plane). Q4_0's blocks are laid out as IQ4_NL's (fp16 d,
// 16 bytes of nibbles) and pack into the same record; only the kernel's grid differs.
#include "common/cpu_features.h"
#include "kernels/packed_nibble_layout.h"

namespace vllm::kernels {
namespace {

void PackIq4Nl(const WeightView& w, uint8_t* out) {
  PackRecords<BlockIq4Nl, PackedIq4NlRecord>(
      w, out, [](const BlockIq4Nl& block, int64_t lane, PackedIq4NlRecord& record) {
        record.d[lane] = block.d;
        PutChunkNibbles(block.qs, lane, record.nibbles);
      });
}

void PackQ4_1(const WeightView& w, uint8_t* out) {
  PackRecords<BlockQ4_1, PackedQ4_1Record>(
      w, out, [](const BlockQ4_1& block, int64_t lane, PackedQ4_1Record& record) {
        record.d[lane] = block.d;
        record.m[lane] = block.m;
        PutChunkNibbles(block.qs, lane, record.nibbles);
      });
}

// Q5_0 / Q5_1: nibbles and 5th bits, after the scale (and min) the caller stores.
template <typename Block>
void PutFifthBitCodes(const Block& block, int64_t lane, PackedQ5_KChunk& codes) {
  PutChunkNibbles(block.qs, lane, codes.nibbles);
  PutChunkBitPlane([&block](int v) { return (block.qh[v / 8] >> (v % 8)) & 1; }, lane,
                   codes.fifth_bits);
}

void PackQ5_0(const WeightView& w, uint8_t* out) {
  PackRecords<BlockQ5_0, PackedQ5_0Record>(
      w, out, [](const BlockQ5_0& block, int64_t lane, PackedQ5_0Record& record) {
        record.d[lane] = block.d;
        PutFifthBitCodes(block, lane, record.codes);
      });
}

void PackQ5_1(const WeightView& w, uint8_t* out) {
  PackRecords<BlockQ5_1, PackedQ5_1Record>(
      w, out, [](const BlockQ5_1& block, int64_t lane, PackedQ5_1Record& record) {
        record.d[lane] = block.d;
        record.m[lane] = block.m;
        PutFifthBitCodes(block, lane, record.codes);
      });
}

void PackIq4Xs(const WeightView& w, uint8_t* out) {
  PackRecords<BlockIq4Xs, PackedIq4XsRecord>(
      w, out, [](const BlockIq4Xs& block, int64_t lane, PackedIq4XsRecord& record) {
        record.d[lane] = block.d;
        for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
          const int low = (block.scales_l[chunk / 2] >> (4 * (chunk % 2))) & 0x0f;
          const int high = (block.scales_h >> (2 * chunk)) & 3;
          record.scales[chunk][lane] = static_cast<int8_t>((low | (high << 4)) - 32);
          PutChunkNibbles(block.qs + 16 * chunk, lane, record.nibbles[chunk]);
        }
      });
}

void PackMxfp4(const WeightView& w, uint8_t* out) {
  PackRecords<BlockMxfp4, PackedMxfp4Record>(
      w, out, [](const BlockMxfp4& block, int64_t lane, PackedMxfp4Record& record) {
        record.e[lane] = block.e;
        PutChunkNibbles(block.qs, lane, record.nibbles);
      });
}

// A grid type's form: its AVX512_VBMI kernel where the CPU has VBMI, else its vpshufb kernel,
// each with the x terms of its own translation unit (their types are local to it).
template <typename Record, int64_t kBlockCols>
PackedForm GridForm(void (*pack)(const WeightView&, uint8_t*), decltype(PackedForm::rows) vbmi,
                    decltype(PackedForm::rows) vpshufb) {
  if (GetCpuFeatures().avx512vbmi) {
    return MakeNibbleForm<Record, kBlockCols>(pack, PrepareGridTermsVbmi, vbmi);
  }
  return MakeNibbleForm<Record, kBlockCols>(pack, PrepareGridTermsAvx512, vpshufb);
}

}  // namespace

PackedForm PackedFormQ4_0Avx512() {
  static_assert(sizeof(BlockQ4_0) == sizeof(BlockIq4Nl));
  return GridForm<PackedIq4NlRecord, kQuantBlockSize>(PackIq4Nl, LinearRowsPackedQ4_0Vbmi,
                                                      LinearRowsPackedQ4_0Avx512);
}
PackedForm PackedFormQ4_1Avx512() {
  return MakeNibbleForm<PackedQ4_1Record, kQuantBlockSize>(PackQ4_1, PrepareMinTermsAvx512,
                                                           LinearRowsPackedQ4_1Avx512);
}
PackedForm PackedFormQ5_1Avx512() {
  return MakeNibbleForm<PackedQ5_1Record, kQuantBlockSize>(PackQ5_1, PrepareMinTermsAvx512,
                                                           LinearRowsPackedQ5_1Avx512);
}
PackedForm PackedFormQ5_0Avx512() {
  return MakeNibbleForm<PackedQ5_0Record, kQuantBlockSize>(PackQ5_0, PrepareQ5_0TermsAvx512,
                                                           LinearRowsPackedQ5_0Avx512);
}
PackedForm PackedFormIq4NlAvx512() {
  return GridForm<PackedIq4NlRecord, kQuantBlockSize>(PackIq4Nl, LinearRowsPackedIq4NlVbmi,
                                                      LinearRowsPackedIq4NlAvx512);
}
PackedForm PackedFormIq4XsAvx512() {
  return GridForm<PackedIq4XsRecord, kSuperBlockSize>(PackIq4Xs, LinearRowsPackedIq4XsVbmi,
                                                      LinearRowsPackedIq4XsAvx512);
}
PackedForm PackedFormMxfp4Avx512() {
  return GridForm<PackedMxfp4Record, kQuantBlockSize>(PackMxfp4, LinearRowsPackedMxfp4Vbmi,
                                                      LinearRowsPackedMxfp4Avx512);
}

}  // namespace vllm::kernels
