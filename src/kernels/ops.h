// Kernel contracts. Kernels know pointers and shapes, nothing about requests or models.
// Every entry point dispatches at run time (AVX-512 VNNI/BF16 → AVX2 → scalar); each optimized
// path has a scalar reference in kernels/ref/ and a test comparing the two.
//
// Batch invariance: every output element is computed with a reduction order that depends only on
// the shapes of W and x's row, never on the number of rows m, the thread count or the tiling.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "common/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/kv_cache_dtype.h"

namespace vllm::kernels {

// A linear layer's weight W: [rows = out_features, cols = in_features], row-major, each row
// stored in `type` (GGUF layout, see common/ggml_type.h). Created once at load: it copies the
// source bytes onto huge pages (common/huge_page_allocator.h), as stored or repacked into a layout
// its kernels prefer, and releases the source's file pages.
class LinearWeight {
 public:
  // `data` is read during the call only. Errors: unsupported type, cols not a multiple of the
  // type's block size.
  static Expected<std::unique_ptr<LinearWeight>> Create(GgmlType type, const void* data,
                                                        int64_t rows, int64_t cols);
  // The same from bytes the caller hands over (weights converted at load).
  static Expected<std::unique_ptr<LinearWeight>> CreateOwned(GgmlType type,
                                                             std::vector<uint8_t> bytes,
                                                             int64_t rows, int64_t cols);
  // Several weights of one type over the same input fused into one, [Σ rows, cols]: its output row
  // is the parts' outputs side by side, so one call prepares the activations once and runs one
  // GEMM (Q/K/V, gate/up). The parts' bytes are copied (and their source pages released).
  struct Part {
    const void* data;
    int64_t rows;
  };
  static Expected<std::unique_ptr<LinearWeight>> CreateFused(GgmlType type,
                                                             const std::vector<Part>& parts,
                                                             int64_t cols);
  // A gated feed-forward's gate and up, [rows, cols] each, fused into one weight [2 rows, cols]
  // for GatedLinear: their rows take turns, kGatedRowsPerTurn at a time (gate rows [64 k,
  // 64 k + 64), then up rows [64 k, 64 k + 64), ...), or all `rows` in one turn when
  // kGatedRowsPerTurn does not divide them. The bytes are copied as CreateFused copies them.
  static Expected<std::unique_ptr<LinearWeight>> CreateGatedPair(GgmlType type, const Part& gate,
                                                                 const Part& up, int64_t cols);
  // `weight` over its input columns in `input_order` ([cols], a permutation of 0 .. cols − 1):
  // every product then computes y = W · x' with x'[j] = x[input_order[j]] (GPTQ desc_act,
  // compressed-tensors actorder: the columns sorted by quantization group). x's columns are
  // gathered once per call; the identity order is dropped, so such a weight pays nothing. Any order
  // `weight` had is replaced. Errors
  // (an order of the wrong length, a column out of range or repeated) say which.
  static Expected<std::unique_ptr<LinearWeight>> WithInputOrder(
      std::unique_ptr<LinearWeight> weight, std::vector<int32_t> input_order);
  virtual ~LinearWeight() = default;
  virtual GgmlType type() const = 0;
  virtual int64_t rows() const = 0;
  virtual int64_t cols() const = 0;
  // The bytes this weight holds and one product reads whole: its packed form for this CPU, or its
  // rows as stored.
  virtual int64_t resident_bytes() const = 0;
  // The input order WithInputOrder gave; empty: the identity.
  virtual const std::vector<int32_t>& input_order() const = 0;
};

// y: [m, w.rows()] = x: [m, w.cols()] · Wᵀ, all f32 row-major. Parallel over `pool`.
void Linear(const LinearWeight& w, const float* x, int64_t m, float* y, ThreadPool& pool);

// Rows of gate, then as many of up, per turn of a LinearWeight::CreateGatedPair weight.
inline constexpr int64_t kGatedRowsPerTurn = 64;

// The activation of a gated feed-forward: SiluMul (SwiGLU) or GeluTanhMul (GeGLU).
enum class GateActivation { kSilu, kGeluTanh };

// out: [m, w.rows() / 2] = act(x · Gateᵀ) · (x · Upᵀ), x: [m, w.cols()], for w from
// LinearWeight::CreateGatedPair (or CreateFused of {gate, up}: one turn). Each thread runs the
// activation over the turns it has just computed, while their gate and up values are still in its
// cache. Every element is bit for bit what Linear over gate and over up, then SiluMul /
// GeluTanhMul, give.
void GatedLinear(const LinearWeight& w, const float* x, int64_t m, GateActivation act, float* out,
                 ThreadPool& pool);

// Several independent products y = W x (the experts a step routes tokens to) in one parallel
// region: each job's activations are prepared, then the rows of every job are dealt to the
// threads together, so small GEMMs do not each pay a hand-off. Each y is exactly what Linear
// gives. x: [m, W.cols()], y: [m, W.rows()] per job.
struct LinearJob {
  const LinearWeight* weight;
  const float* x;
  int64_t m;
  float* y;
};
void LinearBatch(std::span<const LinearJob> jobs, ThreadPool& pool);

// Converts one row of `n` values in any supported `type` to f32 (n a multiple of the block
// size), bit-identical to ggml's dequantizers. Used for embedding lookups and conversions.
void DequantizeRow(GgmlType type, const void* row, int64_t n, float* out);

// Writes `n` f32 values as one row of any supported `type` (n a multiple of the block size);
// `out` receives RowBytes(type, n) bytes. The quantizers follow ggml's reference algorithms
// (kernels/types/); float types round to nearest.
void QuantizeRow(GgmlType type, const float* x, int64_t n, void* out);

// Whether this CPU computes weights of `type` on a packed form (whole groups of its rows): a type
// whose only other kernel is the scalar reference (F8_E4M3_B32) is worth loading only where true.
bool HasPackedKernels(GgmlType type);

// out[i] = x[i] / sqrt(mean(x²) + eps) * weight[i], over `n` values per row, `m` rows.
void RmsNorm(const float* x, const float* weight, int64_t m, int64_t n, float eps, float* out);

// out[i] = silu(gate[i]) * up[i] = gate[i] / (1 + exp(-gate[i])) * up[i] for i < n.
void SiluMul(const float* gate, const float* up, int64_t n, float* out);

// out[i] = gelu(gate[i]) * up[i] for i < n, GELU in its tanh approximation:
// gelu(x) = x / 2 · (1 + tanh(sqrt(2 / π) · (x + 0.044715 x³))).
void GeluTanhMul(const float* gate, const float* up, int64_t n, float* out);

// A gated feed-forward's activation times up: SiluMul or GeluTanhMul, as `act` says.
void GateTimesUp(GateActivation act, const float* gate, const float* up, int64_t n, float* out);

// out[i] = gelu(x[i]) for i < n, GELU in its exact form: gelu(x) = x / 2 · (1 + erf(x / sqrt(2))).
// The vector paths take erf from Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
// out may alias x.
void GeluErf(const float* x, int64_t n, float* out);

// Dot product of two f32 vectors of length n (fixed reduction order for a given n).
float DotF32(const float* a, const float* b, int64_t n);

// y[i] += alpha * x[i] for i < n.
void AxpyF32(float alpha, const float* x, int64_t n, float* y);

// Several rows against one vector (attention: the query heads sharing a KV head against one key
// or value row). Each row's result equals DotF32 / AxpyF32 on that row alone.
// out[r] = DotF32(a + r * n, b, n) for r < num_rows; a: [num_rows, n]
void DotF32Rows(const float* a, int64_t num_rows, const float* b, int64_t n, float* out);
// y[r * n + i] += alphas[r] * x[i] for r < num_rows, i < n; y: [num_rows, n]
void AxpyF32Rows(const float* alphas, int64_t num_rows, const float* x, int64_t n, float* y);
// DotF32Rows with bf16 rows (a LoRA adapter stored in bf16), each widened to f32 as it is read:
// bit for bit DotF32Rows on the widened rows. a: [num_rows, n] bf16
void DotBf16Rows(const uint16_t* a, int64_t num_rows, const float* b, int64_t n, float* out);
// AxpyF32 with a bf16 x widened to f32 as it is read: bit for bit AxpyF32 on the widened x.
void AxpyBf16(float alpha, const uint16_t* x, int64_t n, float* y);

// --- Paged attention over a KV cache stored as KvCacheDtype (kernels/attention.cc) ---

// Stores one row of n values as `dtype` at `out` (n * KvValueBytes(dtype) bytes): f32 as is,
// bf16 rounded to nearest even, fp8 / int8 as round-to-nearest(x / scale) with *scale set to
// max|x| / 448 (fp8 e4m3fn) or max|x| / 127 (int8), 0 for a row of zeros; `scale` is untouched
// (and may be null) for f32 and bf16. The result depends only on x.
void QuantizeKvRow(KvCacheDtype dtype, const float* x, int64_t n, void* out, float* scale);
// out[i] = stored value i, times `scale` for fp8 / int8.
void DequantizeKvRow(KvCacheDtype dtype, const void* row, float scale, int64_t n, float* out);

// Consecutive stored rows of one KV head: row j's head_dim values at data + j * row_stride_bytes
// and, for fp8 / int8, its scale at scales[j * scale_stride].
struct KvRows {
  KvCacheDtype dtype = KvCacheDtype::kFloat32;
  const uint8_t* data = nullptr;
  int64_t row_stride_bytes = 0;
  const float* scales = nullptr;
  int64_t scale_stride = 0;
};

// The most keys one AttendTile call takes: one SIMD register of scores per query row.
constexpr int kAttentionTileKeys = 16;

// Accumulator rows are padded to whole SIMD registers: [num_rows, AttentionAccStride(head_dim)].
constexpr int64_t AttentionAccStride(int64_t head_dim) {
  return (head_dim + kAttentionTileKeys - 1) / kAttentionTileKeys * kAttentionTileKeys;
}
// Floats of scratch AttendTile needs (the tile's keys and values converted to f32).
constexpr int64_t AttentionTileScratchFloats(int64_t head_dim) {
  return 2 * kAttentionTileKeys * AttentionAccStride(head_dim);
}

// Whether AttendSpan runs transposed on bf16 products (AMX tiles, or vdpbf16ps where it outpaces
// f32 FMAs) for keys and values of this dtype and head_dim. Then it multiplies bf16 queries (a
// caller that streams many spans past the same rows may round them once, QueriesToBf16, and pass
// them as AttentionSpan::q_bf16) and keeps acc in the tile layout (AttentionAccOffset).
bool AttentionTakesBf16Queries(KvCacheDtype dtype, int64_t head_dim);
// q: [num_rows, head_dim] rounded to bf16 (nearest even) as the bf16 paths read them: by groups of
// 16 rows (the last padded with zeros), each [head_dim / 32][16 dim pairs][16 rows] pairs of bf16;
// out holds num_rows rounded up to 16 times head_dim values. Only where AttentionTakesBf16Queries.
VLLM_X86_KERNEL void QueriesToBf16(const float* q, int64_t num_rows, int64_t head_dim,
                                   uint16_t* out);

// Where AttentionState::acc keeps row r's dimension d. Row by row ([num_rows, stride]) unless
// tile_layout (AttendSpan where AttentionTakesBf16Queries): by groups of 16 rows, each transposed
// ([stride][16 rows]), so acc then needs num_rows rounded up to 16 rows.
constexpr int64_t AttentionAccOffset(bool tile_layout, int64_t stride, int64_t r, int64_t d) {
  return tile_layout ? (r / 16 * stride + d) * 16 + r % 16 : r * stride + d;
}
// Row r's result, its acc row times factors[r] (head_dim values), into out_rows[r]: acc in the
// layout AttentionAccOffset describes (the tile layout transposed back 16 x 16 in registers).
void ScaleAccRows(const float* acc, bool tile_layout, int64_t num_rows, int64_t head_dim,
                  const float* factors, float* const* out_rows);
// Floats of acc for num_rows rows in either layout.
constexpr int64_t AttentionAccFloats(int64_t num_rows, int64_t head_dim) {
  return (num_rows + 15) / 16 * 16 * AttentionAccStride(head_dim);
}

// Query rows against one tile of up to kAttentionTileKeys consecutive key positions.
struct AttentionTile {
  const float* q = nullptr;  // [num_rows, head_dim]
  int64_t num_rows = 0;
  int64_t head_dim = 0;
  KvRows keys;    // the tile's rows
  KvRows values;  // the tile's rows
  // Row r sees keys [first_key[r], last_key[r]] of the tile, within [0, kAttentionTileKeys);
  // first_key[r] > last_key[r]: none, and its state is left as is. Keys no row sees are never
  // read.
  const int32_t* first_key = nullptr;  // [num_rows]
  const int32_t* last_key = nullptr;   // [num_rows]
  float scale = 1.0f;                  // multiplies q·k
  float logit_softcap = 0.0f;          // C > 0: a logit s becomes C·tanh(s / C)
};

// Each row's online-softmax state over the keys seen so far: start with row_max = -inf,
// row_sum = 0, acc = 0; then softmax(logits) · values = acc / row_sum.
struct AttentionState {
  float* row_max = nullptr;  // [num_rows]: the largest logit seen
  float* row_sum = nullptr;  // [num_rows]: Σ exp(logit - row_max)
  float* acc = nullptr;      // [num_rows, AttentionAccStride(head_dim)]: Σ exp(logit - row_max) v
};

// Folds one tile into the state of each row that sees some of its keys: logits
// s_j = q·k_j · scale (soft-capped), m' = max(row_max, max_j s_j),
// acc = acc · exp(row_max - m') + Σ_j exp(s_j - m') v_j (j ascending), row_sum likewise, with K/V
// converted to f32 once per tile into `scratch` (AttentionTileScratchFloats(head_dim) floats).
// A row's arithmetic depends only on its own query, keys and range, never on the other rows.
void AttendTile(const AttentionTile& tile, const AttentionState& state, float* scratch);

// The most tiles one AttendSpan call takes, and the floats of scratch it needs.
constexpr int kAttentionSpanTiles = 4;
constexpr int64_t AttentionSpanScratchFloats(int64_t head_dim) {
  return kAttentionSpanTiles * kAttentionTileKeys * AttentionAccStride(head_dim);
}

// Stored rows an AttendSpan call asks the cache hierarchy for while it computes (those of the span
// its caller passes next): a slot's num_keys rows of keys and values, as in AttentionSpan.
struct KvPrefetch {
  KvRows keys[kAttentionSpanTiles];
  KvRows values[kAttentionSpanTiles];
  int32_t num_keys[kAttentionSpanTiles] = {};  // 0: nothing of the slot
};
// Asks for all of `rows` at once (head_dim values a row), as a caller does before its first span.
void PrefetchKvRows(const KvPrefetch& rows, int64_t head_dim);

// Query rows against up to kAttentionSpanTiles tiles of consecutive key positions, one per slot.
// A caller streaming a sequence's tiles t = 0, 1, ... (position order) puts tile t into span
// t / kAttentionSpanTiles at slot t % kAttentionSpanTiles, so a key's slot depends only on its
// position; slots of tiles no row needs stay empty.
struct AttentionSpan {
  const float* q = nullptr;  // [num_rows, head_dim]
  // Optional where AttentionTakesBf16Queries: q as QueriesToBf16 lays it out.
  const uint16_t* q_bf16 = nullptr;
  int64_t num_rows = 0;
  int64_t head_dim = 0;
  KvRows keys[kAttentionSpanTiles];    // each slot's rows
  KvRows values[kAttentionSpanTiles];  // each slot's rows
  // Keys of each slot (at most kAttentionTileKeys; 0: empty), and the position of its first key
  // counted from the span's first: slot i's keys follow slot i - 1's.
  int32_t tile_keys[kAttentionSpanTiles] = {};
  int32_t key_offset[kAttentionSpanTiles] = {};
  // Row r sees the span's key positions [first_key[r], last_key[r]]; first_key[r] > last_key[r]:
  // none, and its state is left as is. Keys no row sees never change a result; their rows are read
  // only in a slot of kAttentionTileKeys keys that some row sees.
  const int32_t* first_key = nullptr;  // [num_rows]
  const int32_t* last_key = nullptr;   // [num_rows]
  float scale = 1.0f;                  // multiplies q·k
  float logit_softcap = 0.0f;          // C > 0: a logit s becomes C·tanh(s / C)
  // Rows to ask for ahead of their use (the next span's), spread over this span's work; they
  // never change a result.
  KvPrefetch next;
};

// Folds a span into the state of each row that sees some of its keys. Where
// AttentionTakesBf16Queries, in one online-softmax step over all the span's keys a row sees, on
// AMX tiles or vdpbf16ps: q and exp(s_j - m') rounded to bf16, the products summed in the path's
// order, acc in the tile layout (AttentionAccOffset); elsewhere as AttendTile over each slot in
// turn, bit for bit. `scratch`: AttentionSpanScratchFloats(head_dim) floats. A row's arithmetic
// depends only on its own query, range and keys (and their slots), never on the other rows.
void AttendSpan(const AttentionSpan& span, const AttentionState& state, float* scratch);

// --- Dense bidirectional attention (encoders: no KV cache, every key of the sequence) ---

// The query rows of one sequence and one head against all of the sequence's keys: for each row r,
// out_r = Σ_j softmax_j(q_r·k_j · scale) v_j over j < num_keys, with a two-pass softmax (the max,
// then Σ exp) in f32. A row's arithmetic depends only on its own query and the keys, never on
// num_rows or the other rows.
struct DenseAttention {
  const float* q = nullptr;  // row r's head_dim values at q + r * q_row_stride
  int64_t q_row_stride = 0;
  int64_t num_rows = 0;
  const float* k = nullptr;  // key j's head_dim values at k + j * kv_row_stride
  const float* v = nullptr;  // value j's at v + j * kv_row_stride
  int64_t kv_row_stride = 0;
  int64_t num_keys = 0;
  int64_t head_dim = 0;
  float scale = 1.0f;    // multiplies q·k
  float* out = nullptr;  // row r's head_dim results at out + r * out_row_stride
  int64_t out_row_stride = 0;
};
// Whether AttendAllKeys has a vector path for this head_dim on this CPU (else it runs the scalar
// reference, and a caller may prefer AttendTile).
bool HasVectorDenseAttention(int64_t head_dim);
// Floats of scratch AttendAllKeys needs.
constexpr int64_t DenseAttentionScratchFloats(int64_t num_keys, int64_t head_dim) {
  return (2 * head_dim + 4) * ((num_keys + 31) / 32 * 32);
}
void AttendAllKeys(const DenseAttention& attention, float* scratch);

}  // namespace vllm::kernels
