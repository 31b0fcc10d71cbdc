#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/cpu_features.h"
#include "common/half.h"
#include "kernels/attention_internal.h"
#include "kernels/isa.h"
#include "kernels/random_values_for_test.h"

namespace vllm::kernels {
namespace {

constexpr KvCacheDtype kAllDtypes[] = {KvCacheDtype::kFloat32, KvCacheDtype::kBFloat16,
                                       KvCacheDtype::kFp8E4m3, KvCacheDtype::kInt8};

using AttendTileFn = void (*)(const AttentionTile&, const AttentionState&, float*);

// The AttendTile paths this CPU can run.
std::vector<std::pair<const char*, AttendTileFn>> AvailablePaths() {
  std::vector<std::pair<const char*, AttendTileFn>> paths = {{"scalar", AttendTileScalar}};
  if (GetCpuFeatures().HasAvx2Path()) paths.emplace_back("avx2", AttendTileAvx2);
  if (BestIsa() == Isa::kAvx512) paths.emplace_back("avx512", AttendTileAvx512);
  return paths;
}

// Rows of n values stored as `dtype`, with their scales, as KvStorage lays out one KV head.
struct StoredRows {
  std::vector<uint8_t> bytes;      // [num_rows, n * KvValueBytes(dtype)]
  std::vector<float> scales;       // [num_rows]
  std::vector<float> dequantized;  // [num_rows, n]: what the stored rows decode to
  KvRows view(KvCacheDtype dtype, int64_t n, int64_t first_row) const {
    const int64_t row_bytes = n * KvValueBytes(dtype);
    return {.dtype = dtype,
            .data = bytes.data() + first_row * row_bytes,
            .row_stride_bytes = row_bytes,
            .scales = KvHasRowScales(dtype) ? scales.data() + first_row : nullptr,
            .scale_stride = 1};
  }
};

StoredRows Store(KvCacheDtype dtype, const std::vector<float>& values, int64_t n) {
  const int64_t num_rows = static_cast<int64_t>(values.size()) / n;
  StoredRows stored;
  stored.bytes.resize(values.size() * KvValueBytes(dtype));
  stored.scales.resize(num_rows);
  stored.dequantized.resize(values.size());
  for (int64_t r = 0; r < num_rows; ++r) {
    uint8_t* bytes = stored.bytes.data() + r * n * KvValueBytes(dtype);
    QuantizeKvRow(dtype, values.data() + r * n, n, bytes, &stored.scales[r]);
    DequantizeKvRow(dtype, bytes, stored.scales[r], n, stored.dequantized.data() + r * n);
  }
  return stored;
}

TEST(KvRowTest, Fp8E4m3EncodesExactValuesExactly) {
  // 448 (the largest finite), 1, 2^-6 (the smallest normal), 2^-9 (the smallest subnormal),
  // -0.5 and 0: all exact in e4m3fn; the row's scale is 448 / 448 = 1.
  const std::vector<float> x = {448.0f, 1.0f, 0.015625f, 0.001953125f, -0.5f, 0.0f, 1.125f, 3.5f};
  std::vector<uint8_t> bytes(x.size());
  float scale = 0;
  QuantizeKvRow(KvCacheDtype::kFp8E4m3, x.data(), 8, bytes.data(), &scale);
  EXPECT_EQ(scale, 1.0f);
  EXPECT_EQ(bytes[0], 0x7e);
  EXPECT_EQ(bytes[1], 0x38);
  EXPECT_EQ(bytes[2], 0x08);
  EXPECT_EQ(bytes[3], 0x01);
  EXPECT_EQ(bytes[4], 0xb0);
  std::vector<float> back(x.size());
  DequantizeKvRow(KvCacheDtype::kFp8E4m3, bytes.data(), scale, 8, back.data());
  EXPECT_EQ(back, x);
}

TEST(KvRowTest, RoundTripErrorIsWithinEachTypesPrecision) {
  const int64_t n = 64;
  const std::vector<float> x = RandomNormalValues(n, 3);
  float max_magnitude = 0;
  for (float v : x) max_magnitude = std::max(max_magnitude, std::abs(v));
  for (KvCacheDtype dtype : kAllDtypes) {
    SCOPED_TRACE(KvCacheDtypeName(dtype));
    StoredRows stored = Store(dtype, x, n);
    for (int64_t i = 0; i < n; ++i) {
      const float error = std::abs(stored.dequantized[i] - x[i]);
      switch (dtype) {
        case KvCacheDtype::kFloat32:
          EXPECT_EQ(error, 0.0f);
          break;
        case KvCacheDtype::kBFloat16:  // 8 significant bits, rounded
          EXPECT_LE(error, std::abs(x[i]) * 0x1p-8f);
          break;
        case KvCacheDtype::kFp8E4m3:  // 4 significant bits, or the subnormal step 2^-9 · scale
          EXPECT_LE(error, std::max(std::abs(x[i]) * 0x1p-4f, max_magnitude / 448 * 0x1p-10f));
          break;
        case KvCacheDtype::kInt8:  // half a step of max|x| / 127
          EXPECT_LE(error, max_magnitude / 127 / 2 * 1.0001f);
          break;
      }
    }
  }
}

TEST(KvRowTest, AZeroRowStoresZerosWithAZeroScale) {
  const std::vector<float> zeros(32, 0.0f);
  for (KvCacheDtype dtype : {KvCacheDtype::kFp8E4m3, KvCacheDtype::kInt8}) {
    StoredRows stored = Store(dtype, zeros, 32);
    EXPECT_EQ(stored.scales[0], 0.0f);
    EXPECT_EQ(stored.dequantized, zeros);
  }
}

// An online-softmax state of num_rows rows (acc in the tile layout where tile_layout), and its
// normalized result, [num_rows, head_dim].
struct RowStates {
  int64_t head_dim, stride;
  bool tile_layout;
  std::vector<float> row_max, row_sum, acc;
  RowStates(int64_t num_rows, int64_t dims, bool tiles = false)
      : head_dim(dims),
        stride(AttentionAccStride(dims)),
        tile_layout(tiles),
        row_max(num_rows, -std::numeric_limits<float>::infinity()),
        row_sum(num_rows, 0.0f),
        acc(AttentionAccFloats(num_rows, dims), 0.0f) {}
  AttentionState state() {
    return {.row_max = row_max.data(), .row_sum = row_sum.data(), .acc = acc.data()};
  }
  std::vector<float> Result() const {
    const int64_t num_rows = static_cast<int64_t>(row_sum.size());
    std::vector<float> out(num_rows * head_dim);
    for (int64_t r = 0; r < num_rows; ++r) {
      for (int64_t d = 0; d < head_dim; ++d) {
        out[r * head_dim + d] = acc[AttentionAccOffset(tile_layout, stride, r, d)] / row_sum[r];
      }
    }
    return out;
  }
};

// Query rows streamed through AttendTile over num_keys keys in tiles of tile_keys (the last one
// partial), row r seeing keys [first[r], last[r]]; the normalized result, [num_rows, head_dim].
std::vector<float> AttendInTiles(AttendTileFn attend, const std::vector<float>& q, int64_t num_rows,
                                 int64_t head_dim, const StoredRows& keys, const StoredRows& values,
                                 KvCacheDtype dtype, int num_keys, const std::vector<int>& first,
                                 const std::vector<int>& last, float scale, float softcap,
                                 int tile_keys = kAttentionTileKeys) {
  RowStates rows(num_rows, head_dim);
  std::vector<float> scratch(AttentionTileScratchFloats(head_dim), std::nanf(""));
  for (int begin = 0; begin < num_keys; begin += tile_keys) {
    const int keys_here = std::min(tile_keys, num_keys - begin);
    std::vector<int32_t> first_key(num_rows), last_key(num_rows);
    for (int64_t r = 0; r < num_rows; ++r) {
      first_key[r] = std::max(first[r] - begin, 0);
      last_key[r] = std::min(last[r] - begin, keys_here - 1);
    }
    attend({.q = q.data(),
            .num_rows = num_rows,
            .head_dim = head_dim,
            .keys = keys.view(dtype, head_dim, begin),
            .values = values.view(dtype, head_dim, begin),
            .first_key = first_key.data(),
            .last_key = last_key.data(),
            .scale = scale,
            .logit_softcap = softcap},
           rows.state(), scratch.data());
  }
  return rows.Result();
}

using AttendSpanFn = void (*)(const AttentionSpan&, const AttentionState&, float*);

// The same through AttendSpan: tile t in span t / kAttentionSpanTiles, slot t %
// kAttentionSpanTiles, slots of tiles no row sees left empty.
std::vector<float> AttendInSpans(AttendSpanFn attend, const std::vector<float>& q, int64_t num_rows,
                                 int64_t head_dim, const StoredRows& keys, const StoredRows& values,
                                 KvCacheDtype dtype, int num_keys, const std::vector<int>& first,
                                 const std::vector<int>& last, float scale, float softcap,
                                 const uint16_t* q_bf16 = nullptr,
                                 int tile_keys = kAttentionTileKeys, bool ask_for_next = true) {
  RowStates rows(num_rows, head_dim, attend == AttendSpanAmx || attend == AttendSpanBf16Dots);
  std::vector<float> scratch(AttentionSpanScratchFloats(head_dim), std::nanf(""));
  const int lowest = *std::min_element(first.begin(), first.end());
  const int highest = *std::max_element(last.begin(), last.end());
  const int span_keys = kAttentionSpanTiles * tile_keys;
  // The rows of the span from `begin` on, by slot.
  auto span_rows = [&](int begin) {
    KvPrefetch rows_of_span;
    for (int slot = 0; slot < kAttentionSpanTiles; ++slot) {
      const int tile_begin = begin + slot * tile_keys;
      if (tile_begin >= num_keys || tile_begin + tile_keys <= lowest || tile_begin > highest) {
        continue;
      }
      rows_of_span.num_keys[slot] = std::min(tile_keys, num_keys - tile_begin);
      rows_of_span.keys[slot] = keys.view(dtype, head_dim, tile_begin);
      rows_of_span.values[slot] = values.view(dtype, head_dim, tile_begin);
    }
    return rows_of_span;
  };
  for (int begin = 0; begin < num_keys; begin += span_keys) {
    AttentionSpan span = {.q = q.data(),
                          .q_bf16 = q_bf16,
                          .num_rows = num_rows,
                          .head_dim = head_dim,
                          .scale = scale,
                          .logit_softcap = softcap};
    const KvPrefetch here = span_rows(begin);
    for (int slot = 0; slot < kAttentionSpanTiles; ++slot) {
      span.key_offset[slot] = slot * tile_keys;
      span.tile_keys[slot] = here.num_keys[slot];
      span.keys[slot] = here.keys[slot];
      span.values[slot] = here.values[slot];
    }
    if (ask_for_next) span.next = span_rows(begin + span_keys);
    std::vector<int32_t> first_key(num_rows), last_key(num_rows);
    for (int64_t r = 0; r < num_rows; ++r) {
      first_key[r] = std::clamp(first[r] - begin, 0, span_keys);
      last_key[r] = std::clamp(last[r] - begin, -1, span_keys - 1);
    }
    span.first_key = first_key.data();
    span.last_key = last_key.data();
    attend(span, rows.state(), scratch.data());
  }
  return rows.Result();
}

TEST(AttendTileTest, EveryPathMatchesTheReferenceOnTheStoredValuesForEveryDtype) {
  const int num_keys = 41;  // tiles of 16, 16 and 9
  const int64_t num_rows = 5;
  // Ranges inside one tile, across tiles, a single key, every key.
  const std::vector<int> first = {0, 3, 17, 40, 0};
  const std::vector<int> last = {40, 20, 17, 40, 30};
  for (int64_t head_dim : {64, 8, 80, 6}) {
    const std::vector<float> q = RandomNormalValues(num_rows * head_dim, 1);
    // Keys and values of varied magnitudes per row, so per-row scales matter.
    std::vector<float> k = RandomNormalValues(num_keys * head_dim, 2);
    std::vector<float> v = RandomNormalValues(num_keys * head_dim, 4);
    for (int j = 0; j < num_keys; ++j) {
      for (int64_t d = 0; d < head_dim; ++d) k[j * head_dim + d] *= 1.0f + j % 5;
    }
    for (KvCacheDtype dtype : kAllDtypes) {
      StoredRows keys = Store(dtype, k, head_dim);
      StoredRows values = Store(dtype, v, head_dim);
      for (float softcap : {0.0f, 5.0f}) {
        std::vector<float> expected(num_rows * head_dim);
        for (int64_t r = 0; r < num_rows; ++r) {
          AttentionRef(q.data() + r * head_dim, keys.dequantized.data() + first[r] * head_dim,
                       values.dequantized.data() + first[r] * head_dim, last[r] - first[r] + 1,
                       head_dim, 0.3f, softcap, nullptr, expected.data() + r * head_dim);
        }
        for (auto [name, attend] : AvailablePaths()) {
          SCOPED_TRACE(testing::Message() << name << " " << KvCacheDtypeName(dtype) << " head_dim "
                                          << head_dim << " softcap " << softcap);
          std::vector<float> out = AttendInTiles(attend, q, num_rows, head_dim, keys, values, dtype,
                                                 num_keys, first, last, 0.3f, softcap);
          for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-5) << i;
        }
      }
    }
  }
}

TEST(AttendTileTest, ARowsResultDoesNotDependOnTheOtherRowsOfTheTile) {
  const int64_t head_dim = 32;
  const int num_keys = 40;
  const std::vector<float> q = RandomNormalValues(4 * head_dim, 5);
  const StoredRows keys =
      Store(KvCacheDtype::kInt8, RandomNormalValues(num_keys * head_dim, 6), head_dim);
  const StoredRows values =
      Store(KvCacheDtype::kInt8, RandomNormalValues(num_keys * head_dim, 7), head_dim);
  for (auto [name, attend] : AvailablePaths()) {
    SCOPED_TRACE(name);
    // Row 1 (keys [5, 33]) among rows that widen the tiles' key ranges, then alone.
    const std::vector<float> together =
        AttendInTiles(attend, q, 4, head_dim, keys, values, KvCacheDtype::kInt8, num_keys,
                      {0, 5, 2, 30}, {39, 33, 12, 31}, 0.2f, 0.0f);
    const std::vector<float> alone(q.begin() + head_dim, q.begin() + 2 * head_dim);
    const std::vector<float> by_itself =
        AttendInTiles(attend, alone, 1, head_dim, keys, values, KvCacheDtype::kInt8, num_keys, {5},
                      {33}, 0.2f, 0.0f);
    for (int64_t d = 0; d < head_dim; ++d) EXPECT_EQ(together[head_dim + d], by_itself[d]) << d;
  }
}

TEST(AttendTileTest, RowsThatSeeTheSameKeysEachGiveTheirResultAlone) {
  const int num_keys = 40;
  const int num_rows = 6;  // a block of rows seeing the same keys, and rows after it
  for (int64_t head_dim : {64, 80, 128}) {
    const std::vector<float> q = RandomNormalValues(num_rows * head_dim, 8);
    for (KvCacheDtype dtype : {KvCacheDtype::kBFloat16, KvCacheDtype::kFloat32}) {
      const StoredRows keys = Store(dtype, RandomNormalValues(num_keys * head_dim, 9), head_dim);
      const StoredRows values = Store(dtype, RandomNormalValues(num_keys * head_dim, 10), head_dim);
      for (auto [name, attend] : AvailablePaths()) {
        SCOPED_TRACE(testing::Message()
                     << name << " " << KvCacheDtypeName(dtype) << " head_dim " << head_dim);
        const std::vector<int> first(num_rows, 3);
        const std::vector<int> last(num_rows, 37);
        const std::vector<float> together = AttendInTiles(
            attend, q, num_rows, head_dim, keys, values, dtype, num_keys, first, last, 0.2f, 0.0f);
        for (int r = 0; r < num_rows; ++r) {
          const std::vector<float> alone(q.begin() + r * head_dim, q.begin() + (r + 1) * head_dim);
          const std::vector<float> by_itself = AttendInTiles(
              attend, alone, 1, head_dim, keys, values, dtype, num_keys, {3}, {37}, 0.2f, 0.0f);
          const std::vector<float> row(together.begin() + r * head_dim,
                                       together.begin() + (r + 1) * head_dim);
          EXPECT_EQ(row, by_itself) << "row " << r;
        }
      }
    }
  }
}

// Away from AMX, AttendSpan is AttendTile slot by slot, bit for bit: whole tiles of 16 keys and
// tiles of 8 (a block size of 8), spans whose first slots are empty, ranges across spans.
TEST(AttendSpanTest, ByTilesGivesAttendTilesBits) {
  const int num_keys = 150;
  const int64_t num_rows = 5;
  const std::vector<int> first = {70, 3, 100, 149, 80};
  const std::vector<int> last = {149, 90, 100, 149, 130};
  const int64_t head_dim = 32;
  const std::vector<float> q = RandomNormalValues(num_rows * head_dim, 21);
  for (KvCacheDtype dtype : kAllDtypes) {
    const StoredRows keys = Store(dtype, RandomNormalValues(num_keys * head_dim, 22), head_dim);
    const StoredRows values = Store(dtype, RandomNormalValues(num_keys * head_dim, 23), head_dim);
    for (int tile_keys : {16, 8}) {
      SCOPED_TRACE(testing::Message() << KvCacheDtypeName(dtype) << " tiles of " << tile_keys);
      EXPECT_EQ(AttendInSpans(AttendSpanByTiles, q, num_rows, head_dim, keys, values, dtype,
                              num_keys, first, last, 0.3f, 0.0f, nullptr, tile_keys),
                AttendInTiles(AttendTile, q, num_rows, head_dim, keys, values, dtype, num_keys,
                              first, last, 0.3f, 0.0f, tile_keys));
    }
  }
}

// Key ranges of varied starts and lengths: row r sees [first[r], last[r]] with
// first[r] = (r · first_step) % first_period and a length of 1 + (r · length_step) % max_extra keys
// (cut at the last key).
struct KeyRanges {
  std::vector<int> first, last;
};
KeyRanges VariedKeyRanges(int64_t num_rows, int num_keys, int first_step, int first_period,
                          int length_step, int max_extra) {
  KeyRanges ranges{std::vector<int>(num_rows), std::vector<int>(num_rows)};
  for (int r = 0; r < num_rows; ++r) {
    ranges.first[r] = (r * first_step) % first_period;
    ranges.last[r] = std::min(num_keys - 1, ranges.first[r] + (r * length_step) % max_extra);
  }
  return ranges;
}

// The transposed bf16 paths this CPU can run: AMX tiles, and vdpbf16ps (whether or not
// AttendSpan picks it here).
std::vector<std::pair<const char*, AttendSpanFn>> Bf16SpanPaths() {
  std::vector<std::pair<const char*, AttendSpanFn>> paths;
  if (AmxBf16Usable()) paths.emplace_back("amx", AttendSpanAmx);
  if (CanAttendOnBf16Dots()) paths.emplace_back("bf16 dots", AttendSpanBf16Dots);
  return paths;
}

// The transposed bf16 paths (bf16 keys and values): q and the softmax weights are rounded to bf16
// for the products, so each meets the reference taken on bf16 q within the weights' rounding (2^-9
// of each, so of the result's scale, max |v|); 37 rows make two whole groups of 16 and a short one,
// the ranges run inside one tile, across tiles and spans, over one key and over all; tiles of 16
// and of 8 keys (a block size of 8: every slot's keys at their own offset).
TEST(AttendSpanTest, Bf16PathsMatchTheReferenceWithinBf16Rounding) {
  if (Bf16SpanPaths().empty()) GTEST_SKIP() << "no AMX BF16 or AVX-512 BF16 path";
  const int num_keys = 141;
  const int64_t num_rows = 37;
  const auto [first, last] = VariedKeyRanges(num_rows, num_keys, 29, 97, 37, 90);
  for (auto [name, attend] : Bf16SpanPaths())
    for (int tile_keys : {16, 8})
      for (int64_t head_dim : {32, 64, 96, 128}) {
        std::vector<float> q = RandomNormalValues(num_rows * head_dim, 11);
        const StoredRows keys =
            Store(KvCacheDtype::kBFloat16, RandomNormalValues(num_keys * head_dim, 12), head_dim);
        const StoredRows values =
            Store(KvCacheDtype::kBFloat16, RandomNormalValues(num_keys * head_dim, 13), head_dim);
        std::vector<float> q_rounded(q.size());
        for (size_t i = 0; i < q.size(); ++i) q_rounded[i] = Bf16ToFp32(Fp32ToBf16(q[i]));
        float max_value = 0.0f;
        for (float v : values.dequantized) max_value = std::max(max_value, std::fabs(v));
        for (float softcap : {0.0f, 5.0f}) {
          SCOPED_TRACE(testing::Message() << name << " head_dim " << head_dim << " softcap "
                                          << softcap << " tiles of " << tile_keys);
          const std::vector<float> out =
              AttendInSpans(attend, q, num_rows, head_dim, keys, values, KvCacheDtype::kBFloat16,
                            num_keys, first, last, 0.3f, softcap, nullptr, tile_keys);
          for (int64_t r = 0; r < num_rows; ++r) {
            std::vector<float> expected(head_dim);
            AttentionRef(q_rounded.data() + r * head_dim,
                         keys.dequantized.data() + first[r] * head_dim,
                         values.dequantized.data() + first[r] * head_dim, last[r] - first[r] + 1,
                         head_dim, 0.3f, softcap, nullptr, expected.data());
            for (int64_t d = 0; d < head_dim; ++d) {
              ASSERT_NEAR(out[r * head_dim + d], expected[d], 4e-3f * max_value) << r << " " << d;
            }
          }
        }
      }
}

// A span's next rows are only asked for: every path gives the same bits with and without them.
TEST(AttendSpanTest, AskingForTheNextSpanChangesNoResult) {
  const int num_keys = 150;
  const int64_t num_rows = 19;
  const auto [first, last] = VariedKeyRanges(num_rows, num_keys, 31, 101, 17, 70);
  const int64_t head_dim = 64;
  const std::vector<float> q = RandomNormalValues(num_rows * head_dim, 31);
  for (KvCacheDtype dtype : kAllDtypes) {
    const StoredRows keys = Store(dtype, RandomNormalValues(num_keys * head_dim, 32), head_dim);
    const StoredRows values = Store(dtype, RandomNormalValues(num_keys * head_dim, 33), head_dim);
    std::vector<std::pair<const char*, AttendSpanFn>> paths = {{"by tiles", AttendSpanByTiles}};
    if (dtype == KvCacheDtype::kBFloat16) {
      for (const auto& path : Bf16SpanPaths()) paths.push_back(path);
    }
    for (auto [name, attend] : paths) {
      SCOPED_TRACE(testing::Message() << KvCacheDtypeName(dtype) << " " << name);
      auto attend_asking = [&](bool ask_for_next) {
        return AttendInSpans(attend, q, num_rows, head_dim, keys, values, dtype, num_keys, first,
                             last, 0.3f, 0.0f, nullptr, kAttentionTileKeys, ask_for_next);
      };
      EXPECT_EQ(attend_asking(true), attend_asking(false));
    }
  }
}

// On the transposed bf16 paths each row's bits are its own: alone (decode: one row in a padded
// group, the span's other slots empty) as among rows that widen the spans' key ranges, with q
// rounded by the kernel or given as q_bf16.
TEST(AttendSpanTest, Bf16PathRowsGiveTheirResultAlone) {
  if (Bf16SpanPaths().empty()) GTEST_SKIP() << "no AMX BF16 or AVX-512 BF16 path";
  const int64_t head_dim = 64;
  const int num_keys = 140;
  const int64_t num_rows = 21;
  const auto [first, last] = VariedKeyRanges(num_rows, num_keys, 23, 89, 13, 50);
  const std::vector<float> q = RandomNormalValues(num_rows * head_dim, 14);
  const StoredRows keys =
      Store(KvCacheDtype::kBFloat16, RandomNormalValues(num_keys * head_dim, 15), head_dim);
  const StoredRows values =
      Store(KvCacheDtype::kBFloat16, RandomNormalValues(num_keys * head_dim, 16), head_dim);
  std::vector<uint16_t> q_bf16(32 * head_dim);
  QueriesToBf16(q.data(), num_rows, head_dim, q_bf16.data());
  for (auto [name, attend] : Bf16SpanPaths()) {
    for (float softcap : {0.0f, 5.0f}) {
      SCOPED_TRACE(testing::Message() << name << " softcap " << softcap);
      const std::vector<float> together =
          AttendInSpans(attend, q, num_rows, head_dim, keys, values, KvCacheDtype::kBFloat16,
                        num_keys, first, last, 0.2f, softcap);
      const std::vector<float> given_bf16 =
          AttendInSpans(attend, q, num_rows, head_dim, keys, values, KvCacheDtype::kBFloat16,
                        num_keys, first, last, 0.2f, softcap, q_bf16.data());
      EXPECT_EQ(together, given_bf16);
      for (int64_t r = 0; r < num_rows; ++r) {
        const std::vector<float> alone(q.begin() + r * head_dim, q.begin() + (r + 1) * head_dim);
        const std::vector<float> by_itself =
            AttendInSpans(attend, alone, 1, head_dim, keys, values, KvCacheDtype::kBFloat16,
                          num_keys, {first[r]}, {last[r]}, 0.2f, softcap);
        const std::vector<float> row(together.begin() + r * head_dim,
                                     together.begin() + (r + 1) * head_dim);
        EXPECT_EQ(row, by_itself) << "row " << r;
      }
    }
  }
}

TEST(ScaleAccRowsTest, EachLayoutGivesEveryRowItsAccTimesItsFactor) {
  std::vector<bool> layouts = {false};
  if (CanAttendOnBf16Dots()) layouts.push_back(true);  // the tile layout's AVX-512 path
  for (const bool tile_layout : layouts) {
    for (const int64_t num_rows : {1, 8, 16, 21, 40}) {
      const int64_t head_dim = 64;
      const int64_t stride = AttentionAccStride(head_dim);
      const std::vector<float> acc = RandomNormalValues(AttentionAccFloats(num_rows, head_dim), 7);
      const std::vector<float> factors = RandomNormalValues(num_rows, 8);
      // Rows go to every other row of out, in reverse order.
      std::vector<float> out(2 * num_rows * head_dim, -1.0f);
      std::vector<float*> out_rows(num_rows);
      for (int64_t r = 0; r < num_rows; ++r) {
        out_rows[r] = out.data() + 2 * (num_rows - 1 - r) * head_dim;
      }
      ScaleAccRows(acc.data(), tile_layout, num_rows, head_dim, factors.data(), out_rows.data());
      for (int64_t r = 0; r < num_rows; ++r) {
        for (int64_t d = 0; d < head_dim; ++d) {
          ASSERT_EQ(out_rows[r][d], acc[AttentionAccOffset(tile_layout, stride, r, d)] * factors[r])
              << "tile layout " << tile_layout << ", row " << r << ", dim " << d;
          ASSERT_EQ(out_rows[r][head_dim + d], -1.0f);  // the row between is left alone
        }
      }
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
