// The kernel type table: for every weight type this project computes with, one entry that holds
// its facts (by reference: its row of common/ggml_type.h's kSupportedTypes, which the rooms below
// kernels read too) and says how its blocks convert to and from f32, what its dot products consume,
// how it is repacked at load and which functions compute with it on each ISA. Linear, the model
// loader, the embedding lookup and the model writer all go through this table.
//
// Adding a type touches three files plus its kernels' own files and its tests:
//   1. common/ggml_type.h: its GgmlType value and its kSupportedTypes row (name, block size and
//      bytes, llama.cpp file type, row fallback, not_in_gguf for a type of ours);
//   2. kernels/types/<type>.cc, new (built by a glob): its decoder, reference quantizer, packer
//      (PutLane for its packed record) and `TypeTraits <Type>Entry()` from type_entry.h's builders,
//      with the code its family shares in a family header (types/nibble_blocks.h, k_quants.h);
//   3. kernels/type_table.cc: <Type>Entry's declaration and its place in the list.
// Its kernels' own files: where it has SIMD kernels of its own, their cpu/ file(s), the CMake line
// that gives them their ISA flags, and their declarations and packed record (packed_nibble_layout.h
// or the kernels' own header). Its block struct goes in quant_blocks.h only where another room
// writes its blocks (a checkpoint converter); otherwise it stays in its types/ file.
#pragma once

#include <cstdint>

#include "common/ggml_type.h"
#include "kernels/isa.h"

namespace vllm::kernels {

struct WeightView;
struct PreparedActivations;
struct PackedWeightView;

// What a weight type's dot products take x as, prepared once per Linear call:
//   kF32:  x as is (F32, F16 weights);
//   kBf16: x rounded to bf16 (BF16 weights);
//   kQ8:   x quantized to Q8_0 blocks of 32 (int8 values with an fp16 scale each, ggml's
//          reference quantizer), with the integer sum of every 16 values (integer weight types);
//   kQ8K:  x quantized with one f32 scale per 256 values (ggml's Q8_K, which llama.cpp's K-quant
//          dot products take), held as kQ8's blocks, the 8 blocks of a super-block sharing it
//          (K-quant weights: their kernels sum a super-block's integer dots before scaling by x).
enum class ActivationFormat { kF32, kBf16, kQ8, kQ8K };

// One block of an integer type as its dot products see it: element i of sub-block s is
//   scale[s] * q[i] - min[s],   s = i / sub_block_size,
// computed in f32 exactly as ggml's dequantizer computes it (so DequantizeRow is bit-identical).
// Shapes: q [block_size], scale / min [block_size / sub_block_size].
struct DecodedBlock {
  int8_t q[kSuperBlockSize];
  float scale[kSuperBlockSize / 16];
  float min[kSuperBlockSize / 16];
};

// y: [m, rows] for W rows [row_begin, row_end) on one ISA (tiles of a Linear call); every in-place
// kernel is declared with this type (linear_internal.h).
using RowsKernelFunction = void(const WeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y);
using RowsKernel = RowsKernelFunction*;
// The same on a packed form (PackedKernels::rows), which every packed kernel is declared with.
using PackedRowsFunction = void(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y);

// The kernels that compute with a packed form on one ISA.
struct PackedKernels {
  // x's per-call terms that `rows` reads (PreparedActivations::packed_terms), built once per call
  // after the activations are prepared; nullptr where `rows` reads none.
  void (*prepare_terms)(PreparedActivations& x) = nullptr;
  // y: [m, w.rows] for rows [row_begin, row_end), multiples of rows_per_group; x prepared with
  // prepare_terms. nullptr: the form has no kernel on this ISA.
  PackedRowsFunction* rows = nullptr;
};

// A packed (repacked-at-load) form of a type: rows are interleaved in groups of `rows_per_group`,
// columns in blocks of `cols_per_block`. One packing, read by the kernels of every ISA that has
// them.
struct PackedForm {
  int64_t rows_per_group = 0;  // 0: the type is used in place on every ISA
  int64_t cols_per_block = 0;
  // Bytes of the packed form of a [rows, cols] weight (rows a multiple of rows_per_group, cols of
  // cols_per_block).
  int64_t (*packed_bytes)(int64_t rows, int64_t cols) = nullptr;
  void (*pack)(const WeightView& w, uint8_t* out) = nullptr;
  // The kernels per ISA, indexed by Isa.
  PackedKernels kernels[kNumIsas];
};

// The ISA whose kernels compute with `form` on this CPU: BestIsa() where the form has a kernel for
// it, else kScalar (the type is then used in place; no form has scalar kernels).
Isa PackedIsa(const PackedForm& form);

struct TypeTraits {
  // The type's row of kSupportedTypes: type, name, values and bytes per block, recipe facts.
  const GgmlTypeTraits& layout;
  int64_t sub_block_size = 0;  // values sharing a scale in DecodedBlock; 0 for float types
  ActivationFormat activation = ActivationFormat::kQ8;
  // Integer types: one block → DecodedBlock. Float types: nullptr.
  void (*decode)(const void* block, DecodedBlock* out) = nullptr;
  // One row of n values (a multiple of block_size) to f32 / from f32 (reference quantizer).
  void (*dequantize_row)(const void* row, int64_t n, float* out) = nullptr;
  void (*quantize_row)(const float* x, int64_t n, void* out) = nullptr;
  // The in-place kernels per ISA, indexed by Isa.
  RowsKernel rows[kNumIsas] = {};
  PackedForm packed;
};

// The entry of a supported type; nullptr for any other type.
const TypeTraits* FindTypeTraits(GgmlType type);

}  // namespace vllm::kernels
