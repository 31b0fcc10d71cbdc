// Internal: the packed layouts of Q2_K / Q3_K / Q4_K / Q5_K / Q6_K and Q4_0 / Q4_1 / Q4_Z / Q5_0 /
// Q5_1 / IQ4_NL / IQ4_XS / MXFP4 (each packed by its file in types/) for their AVX-512 VNNI kernels
// (cpu/linear_packed_kquants_avx512.cc, cpu/linear_packed_iq4_avx512.cc) and their AVX2 kernels
// (cpu/linear_packed_kquants_avx2.cc, cpu/linear_packed_iq4_avx2.cc: a group as two halves of 8
// rows), shared by the packers, the kernels and the type table's entries (NibbleForm).
//
// Rows are interleaved in groups of 16, one row per 32-bit lane of a 512-bit register. A group's
// blocks of the type are one record each, in column order; groups follow one another:
//
//   packed = [rows / 16 groups][cols / block size records]
//
// Every record holds, per 32-column chunk, the 16 rows' 4-bit codes in Q4_0's order ("nibbles",
// 256 bytes): 4 steps of 64 bytes; in step s, lane l holds row l's bytes [4s, 4s + 4) of its 16
// bytes, byte j of which carries value j in its low nibble and value j + 16 in its high one:
//
//              lane 0                lane 1                      lane 15
//   step 0   v0..v3  | v16..v19    v0..v3  | v16..v19    ...   v0..v3  | v16..v19
//   step 1   v4..v7  | v20..v23    ...
//   step 2   v8..v11 | v24..v27
//   step 3   v12..v15| v28..v31                              (low nibbles | high nibbles)
//
// So "weight vector" k of a chunk (k < 4: the low nibbles of step k; k >= 4: the high nibbles of
// step k - 4) holds values [4k, 4k + 4) of every row, and one vpdpbusd multiplies them by the
// same 4 x values broadcast to all lanes. Bit planes (Q5_K's 5th bit, Q6_K's 2 high bits) use the
// same byte positions: byte 4l + i of a plane belongs to value 4k + i of row l. Q5_0's 5th bits
// form a plane as Q5_K's do. Q2_K and Q3_K have no nibbles: their low 2 bits are two crumb planes
// as Q6_K's high bits are, and Q3_K's third bit a plane as Q5_K's 5th.
//
// Sub-block scales and mins stay bytes and super-block scales fp16, [chunk or sub-block][16 rows],
// so a packed form takes about its type's bits per weight. The records (field[n]: n values per
// row, stored [n][16 rows]; Q4_K / Q5_K's mins in pairs, [n / 2][16 rows][2], so that lane l of
// pair j widened to 16-bit words holds row l's mins 2j and 2j + 1 for vpdpwssd):
//
//   Q4_K    | d[1] dmin[1] fp16 | sc[8] u8 | mn[8] u8 pairs | chunk 0: nibbles | ... | (2368 B)
//   Q5_K    as Q4_K, each chunk: | nibbles | 5th-bit plane (64 B) |                  (2880 B)
//   Q6_K    | d[1] fp16 | sc[16] i8 | chunk 0: nibbles, 2 crumb planes (128 B) | ... | (3360 B)
//   Q3_K    | d[1] fp16 | sc − 32 [16] i8 | chunk 0: 2 crumb planes, 3rd-bit plane | ... (1824 B)
//   Q2_K    | d[1] dmin[1] fp16 | sc | mn << 4 [16] u8 pairs | chunk 0: 2 crumb planes | ...
//                                                                                    (1344 B)
//   IQ4_XS  | d[1] fp16 | ls − 32 [8] i8 | nibbles of chunks 0..7 |                  (2208 B)
//   IQ4_NL  | d[1] fp16 | nibbles |   (Q4_0 too: its blocks are laid out alike)       (288 B)
//   Q4_1    | d[1] m[1] fp16 | nibbles |                                             (320 B)
//   Q4_Z    | d[1] fp16 | 32 − z [1] u8 | nibbles |                                   (304 B)
//   Q5_0    | d[1] fp16 | nibbles | 5th-bit plane (64 B) |                           (352 B)
//   Q5_1    | d[1] m[1] fp16 | nibbles | 5th-bit plane (64 B) |                      (384 B)
//   MXFP4   | e[1] E8M0 | nibbles |                                                  (272 B)
#pragma once

#include <cstdint>
#include <initializer_list>

#include "common/cpu_features.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {

constexpr int64_t kNibbleRowsPerGroup = 16;
constexpr int kChunksPerSuperBlock = kSuperBlockSize / kQuantBlockSize;  // 8
constexpr int kNibbleChunkBytes = 256;

// One chunk's codes in a K-quant record: its nibbles, then for Q5_K / Q6_K its bit planes (a
// record reads front to back). Q5_K: bit k of byte 4l + i of the plane is the 5th bit of weight
// vector k's byte 4l + i (value 4k + i of row l). Q6_K: bits [2j, 2j + 2) of byte 4l + i of
// plane h are the 2 high bits of weight vector 4h + j's byte 4l + i.
struct PackedQ4_KChunk {
  uint8_t nibbles[kNibbleChunkBytes];
};
struct PackedQ5_KChunk {
  uint8_t nibbles[kNibbleChunkBytes];
  uint8_t fifth_bits[64];
};
struct PackedQ6_KChunk {
  uint8_t nibbles[kNibbleChunkBytes];
  uint8_t high_crumbs[2][64];
};

// Q2_K / Q3_K: a chunk's low 2 bits, plane h holding its half h (values [16 h, 16 h + 16) of each
// row): bits [2j, 2j + 2) of byte 4l + i of plane h are weight vector 4h + j's byte 4l + i. Q3_K:
// bit k of byte 4l + i of the third-bit plane is weight vector k's third bit (hmask's bit).
struct PackedQ2_KChunk {
  uint8_t low_crumbs[2][64];
};
struct PackedQ3_KChunk {
  uint8_t low_crumbs[2][64];
  uint8_t third_bits[64];
};

// Q4_K / Q5_K (d · sc · q − dmin · mn): 4.625 / 5.625 bits per weight (the types: 4.5 / 5.5).
template <typename Chunk>
struct PackedScaleMinRecord {
  // Columns one record spans (every record says, for NibbleForm).
  static constexpr int64_t kCols = kSuperBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  uint16_t dmin[kNibbleRowsPerGroup];
  uint8_t scales[kChunksPerSuperBlock][kNibbleRowsPerGroup];  // 6-bit sc per chunk
  // 6-bit mn per chunk: min_pairs[j][2 l + i] is row l's mn of chunk 2j + i.
  uint8_t min_pairs[kChunksPerSuperBlock / 2][2 * kNibbleRowsPerGroup];
  Chunk chunks[kChunksPerSuperBlock];
};
using PackedQ4_KRecord = PackedScaleMinRecord<PackedQ4_KChunk>;
using PackedQ5_KRecord = PackedScaleMinRecord<PackedQ5_KChunk>;

// Q6_K (d · sc · (q − 32), q = low nibble + 16 · high crumb, sc per 16 values): 6.5625 bits per
// weight (as the type).
struct PackedQ6_KRecord {
  static constexpr int64_t kCols = kSuperBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  int8_t scales[2 * kChunksPerSuperBlock][kNibbleRowsPerGroup];
  PackedQ6_KChunk chunks[kChunksPerSuperBlock];
};

// Q3_K (d · (sc − 32) · (q − 4), q = low crumb + 4 · third bit, sc per 16 values): 3.5625 bits
// per weight (the type: 3.4375).
struct PackedQ3_KRecord {
  static constexpr int64_t kCols = kSuperBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  int8_t scales[2 * kChunksPerSuperBlock][kNibbleRowsPerGroup];  // sc − 32
  PackedQ3_KChunk chunks[kChunksPerSuperBlock];
};

// Q2_K (d · sc · q − dmin · mn, sc and mn 4-bit per 16 values): 2.625 bits per weight (as the
// type). scale_min_pairs[c][2 l + h] is row l's byte sc | mn << 4 of chunk c's half h (its
// sub-block 2c + h), so that widened to 16-bit words and shifted right by 4 lane l of pair c holds
// the mins of both halves for vpdpwssd.
struct PackedQ2_KRecord {
  static constexpr int64_t kCols = kSuperBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  uint16_t dmin[kNibbleRowsPerGroup];
  uint8_t scale_min_pairs[kChunksPerSuperBlock][2 * kNibbleRowsPerGroup];
  PackedQ2_KChunk chunks[kChunksPerSuperBlock];
};

// IQ4_XS (d · (ls − 32) · grid[q]): 4.3125 bits per weight (4.25).
struct PackedIq4XsRecord {
  static constexpr int64_t kCols = kSuperBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  int8_t scales[kChunksPerSuperBlock][kNibbleRowsPerGroup];  // ls − 32
  uint8_t nibbles[kChunksPerSuperBlock][kNibbleChunkBytes];  // grid indices
};

// IQ4_NL (d · grid[q]): 4.5 bits per weight (as the type).
struct PackedIq4NlRecord {
  static constexpr int64_t kCols = kQuantBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  uint8_t nibbles[kNibbleChunkBytes];
};

// Q4_1 (d · q + m): 5 bits per weight (as the type).
struct PackedQ4_1Record {
  static constexpr int64_t kCols = kQuantBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  uint16_t m[kNibbleRowsPerGroup];
  uint8_t nibbles[kNibbleChunkBytes];
};

// Q4_Z (d · (q − z)): 4.75 bits per weight (the type: 5). The kernel adds each row's byte 32 − z to
// its codes (unsigned, 1 ... 47) and starts the dot at −32 · Σ x_q.
struct PackedQ4_ZRecord {
  static constexpr int64_t kCols = kQuantBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  uint8_t biases[kNibbleRowsPerGroup];  // 32 − z
  uint8_t nibbles[kNibbleChunkBytes];
};

// Q5_0 (d · (q − 16), q = low nibble + 16 · 5th bit): 5.5 bits per weight (as the type).
struct PackedQ5_0Record {
  static constexpr int64_t kCols = kQuantBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  PackedQ5_KChunk codes;
};

// Q5_1 (d · q + m, q = low nibble + 16 · 5th bit): 6 bits per weight (as the type).
struct PackedQ5_1Record {
  static constexpr int64_t kCols = kQuantBlockSize;
  uint16_t d[kNibbleRowsPerGroup];
  uint16_t m[kNibbleRowsPerGroup];
  PackedQ5_KChunk codes;
};

// MXFP4 (2^(e − 128) · doubled E2M1 grid[q]): 4.25 bits per weight (as the type).
struct PackedMxfp4Record {
  static constexpr int64_t kCols = kQuantBlockSize;
  uint8_t e[kNibbleRowsPerGroup];
  uint8_t nibbles[kNibbleChunkBytes];
};

// Fills the records of a packed weight: PutLane(block, lane, record), one overload per record
// defined by the type's file in types/ before it names NibbleForm<Record> (found by
// argument-dependent lookup), stores W row 16 g + lane's block b into lane `lane` of record (g, b).
template <typename Record>
void PackRecords(const WeightView& w, uint8_t* out) {
  auto* records = reinterpret_cast<Record*>(out);
  const int64_t num_blocks = w.cols / w.traits->layout.block_size;
  const int64_t block_bytes = w.traits->layout.block_bytes;
  for (int64_t group = 0; group < w.rows / kNibbleRowsPerGroup; ++group) {
    for (int64_t lane = 0; lane < kNibbleRowsPerGroup; ++lane) {
      const uint8_t* blocks = w.data + (group * kNibbleRowsPerGroup + lane) * w.row_bytes;
      for (int64_t b = 0; b < num_blocks; ++b) {
        PutLane(blocks + b * block_bytes, lane, records[group * num_blocks + b]);
      }
    }
  }
}

template <typename Record>
int64_t PackedRecordsBytes(int64_t rows, int64_t cols) {
  return rows / kNibbleRowsPerGroup * (cols / Record::kCols) * static_cast<int64_t>(sizeof(Record));
}

// Stores one row's chunk, 16 bytes in Q4_0's order (byte j: value j low, value j + 16 high), as
// lane `lane` of a chunk's nibbles.
inline void PutChunkNibbles(const uint8_t* q4_0_order, int64_t lane, uint8_t* nibbles) {
  for (int step = 0; step < 4; ++step) {
    for (int i = 0; i < 4; ++i) nibbles[step * 64 + lane * 4 + i] = q4_0_order[step * 4 + i];
  }
}

// Stores one bit of each of one row's 32 chunk values (bit(v) ∈ {0, 1} for value v: Q5's 5th,
// Q3_K's third) as lane `lane` of a chunk's bit plane: bit k of byte 4 lane + i is value 4k + i's.
template <typename Bit>
void PutChunkBitPlane(const Bit& bit, int64_t lane, uint8_t* plane) {
  for (int i = 0; i < 4; ++i) {
    uint8_t bits = 0;
    for (int k = 0; k < 8; ++k) bits |= static_cast<uint8_t>(bit(4 * k + i) << k);
    plane[4 * lane + i] = bits;
  }
}

// Stores 2 bits of each of one row's 32 chunk values (crumb(v) ∈ 0..3 for value v) as lane `lane`
// of a chunk's two crumb planes: bits [2j, 2j + 2) of byte 4 lane + i of plane h are value
// 4 (4h + j) + i's.
template <typename Crumb>
void PutChunkCrumbs(const Crumb& crumb, int64_t lane, uint8_t (&planes)[2][64]) {
  for (int plane = 0; plane < 2; ++plane) {
    for (int i = 0; i < 4; ++i) {
      uint8_t crumbs = 0;
      for (int j = 0; j < 4; ++j) {
        crumbs |= static_cast<uint8_t>(crumb(4 * (4 * plane + j) + i) << (2 * j));
      }
      planes[plane][4 * lane + i] = crumbs;
    }
  }
}

// The nibble-packed types' kernels on x86, one table per translation unit (each kernel reads the
// x terms its own prepare_terms builds: their types are local to the unit), by type; {} for a type
// the unit has no kernel for. y: [m, rows] for W rows [row_begin, row_end) (multiples of 16). Per
// element: chunks in column order, each one's integer dots scaled and accumulated as in
// linear_internal.h (the K-quants: per super-block, then scaled by its d_x), the same for every m,
// thread count and row range. The AVX2 kernels (a group as two halves of 8 rows) read the same
// packing and give the same bits as the AVX-512 ones.
using PackedKernelTable = PackedKernels (*)(GgmlType type);
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (cpu/linear_packed_kquants_avx512.cc, *_avx2.cc).
VLLM_X86_KERNEL PackedKernels KQuantKernelsAvx512(GgmlType type);
VLLM_X86_KERNEL PackedKernels KQuantKernelsAvx2(GgmlType type);
// Q4_0, Q4_1, Q4_Z, Q5_0, Q5_1, IQ4_NL, IQ4_XS, MXFP4 (cpu/linear_packed_iq4_avx512.cc, *_avx2.cc;
// on AVX-512 the grid lookups by vpshufb).
VLLM_X86_KERNEL PackedKernels NibbleKernelsAvx512(GgmlType type);
VLLM_X86_KERNEL PackedKernels NibbleKernelsAvx2(GgmlType type);
// The grid types (Q4_0, IQ4_NL, IQ4_XS, MXFP4) again, for CPUs with AVX512_VBMI (vpermb; the same
// bits: cpu/linear_packed_grid_vbmi_avx512.cc).
VLLM_X86_KERNEL PackedKernels GridKernelsVbmi(GgmlType type);

// The first kernels of `type` in `tables` ({} where none has them; a table of another
// architecture is nullptr there, VLLM_X86_KERNEL being weak).
inline PackedKernels FindKernels(GgmlType type, std::initializer_list<PackedKernelTable> tables) {
  for (PackedKernelTable table : tables) {
    const PackedKernels kernels = table != nullptr ? table(type) : PackedKernels{};
    if (kernels.rows != nullptr) return kernels;
  }
  return {};
}

// The packed form of `type`, packed as `Record`s (the one path the type table's entries take):
// PackRecords packs, the kernels of `type` in each ISA's tables compute on it; the grid types
// with AVX512_VBMI's where the CPU has it.
template <typename Record>
PackedForm NibbleForm(GgmlType type) {
  const PackedKernelTable vbmi = GetCpuFeatures().avx512vbmi ? GridKernelsVbmi : nullptr;
  return PackedForm{
      .rows_per_group = kNibbleRowsPerGroup,
      .cols_per_block = Record::kCols,
      .packed_bytes = PackedRecordsBytes<Record>,
      .pack = PackRecords<Record>,
      .kernels = {{},
                  FindKernels(type, {KQuantKernelsAvx2, NibbleKernelsAvx2}),
                  FindKernels(type, {KQuantKernelsAvx512, vbmi, NibbleKernelsAvx512})}};
}

}  // namespace vllm::kernels
