#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/cpu_features.h"
#include "kernels/isa.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"
#include "kernels/quant_blocks.h"
#include "kernels/random_values_for_test.h"

namespace vllm::kernels {
namespace {

TEST(QuantizeTest, RoundTripsWithinEachFormatsError) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 4096;
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  struct Case {
    GgmlType type;
    double max_relative_rms_error;
  };
  // q8_0: step max/127 per block; q4_0: step max/8; f16 / bf16: 11 / 8 mantissa bits.
  for (const Case& c :
       {Case{GgmlType::kF32, 0.0}, Case{GgmlType::kF16, 1e-3}, Case{GgmlType::kBF16, 5e-3},
        Case{GgmlType::kQ8_0, 1e-2}, Case{GgmlType::kQ4_0, 1.5e-1}}) {
    std::vector<uint8_t> bytes(RowBytes(*GetSupportedTypeTraits(c.type), n));
    QuantizeRow(c.type, x.data(), n, bytes.data());
    std::vector<float> back(n);
    DequantizeRow(c.type, bytes.data(), n, back.data());
    double error = 0, norm = 0;
    for (int64_t i = 0; i < n; ++i) {
      error += (back[i] - x[i]) * (back[i] - x[i]);
      norm += x[i] * x[i];
    }
    EXPECT_LE(std::sqrt(error / norm), c.max_relative_rms_error)
        << GetSupportedTypeTraits(c.type)->name;
  }
}

// The x86 SIMD paths this CPU has (the explicit-ISA hooks reach them whatever VLLM_CPU_ISA says).
std::vector<Isa> SimdQ8Isas() {
  std::vector<Isa> isas;
  const CpuFeatures& features = GetCpuFeatures();
  if (features.HasAvx2Path()) isas.push_back(Isa::kAvx2);
  if (features.HasAvx512Path() && features.avx512vnni && features.avx512bf16) {
    isas.push_back(Isa::kAvx512);
  }
  return isas;
}

// Prepares x as Q8 (kQ8 and kQ8K) on the scalar path and on every SIMD path this CPU has, and
// expects the same blocks, scales and sums bit for bit.
void ExpectQ8ActivationsBitIdenticalToScalar(const std::vector<float>& x, int64_t m, int64_t cols,
                                             ThreadPool& pool) {
  for (ActivationFormat format : {ActivationFormat::kQ8, ActivationFormat::kQ8K}) {
    if (format == ActivationFormat::kQ8K && cols % kSuperBlockSize != 0) continue;
    const PreparedActivations scalar =
        PrepareActivations(Isa::kScalar, format, x.data(), m, cols, pool);
    for (Isa isa : SimdQ8Isas()) {
      const PreparedActivations simd = PrepareActivations(isa, format, x.data(), m, cols, pool);
      const std::string where = std::string(IsaName(isa)) +
                                (format == ActivationFormat::kQ8K ? " q8_k" : " q8") + " m " +
                                std::to_string(m) + " cols " + std::to_string(cols);
      ASSERT_EQ(scalar.q8.size(), simd.q8.size()) << where;
      for (size_t b = 0; b < scalar.q8.size(); ++b) {
        ASSERT_EQ(scalar.q8[b].d, simd.q8[b].d) << where << " block " << b;
        ASSERT_EQ(std::memcmp(scalar.q8[b].qs, simd.q8[b].qs, 32), 0) << where << " block " << b;
        ASSERT_EQ(std::bit_cast<uint32_t>(scalar.q8_scales[b]),
                  std::bit_cast<uint32_t>(simd.q8_scales[b]))
            << where << " block " << b;
      }
      ASSERT_EQ(scalar.q8_sums, simd.q8_sums) << where;
      ASSERT_EQ(scalar.q8_half_sums, simd.q8_half_sums) << where;
    }
  }
}

// The AVX2 and AVX-512 preparations of Q8_0 (and Q8_K-style) activations give the scalar path's
// blocks, scales and sums bit for bit: random rows over many magnitudes, a zero block, ties at half
// a step, tiny (subnormal fp16 scale) and huge (inf scale) blocks, NaN and infinities (and, as
// Q8_K, super-blocks of blocks 2^-20 ... 2^19 in size).
TEST(QuantizeTest, SimdQ8ActivationsAreBitIdenticalToScalar) {
  if (SimdQ8Isas().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  const int64_t m = 7, cols = 256;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(m * cols);
  for (int64_t i = 0; i < m * cols; ++i) x[i] = normal(rng) * std::ldexp(1.0f, i / 32 % 40 - 20);
  for (int64_t i = 32; i < 64; ++i) x[i] = 0.0f;
  for (int64_t i = 64; i < 96; ++i) x[i] = static_cast<float>(i - 64) - 15.5f;  // d = 1: ties
  x[96] = 127.0f;
  for (int64_t i = 128; i < 160; ++i) x[i] = 1e-40f * static_cast<float>(i - 140);
  x[200] = 3e38f;
  x[300] = std::nanf("");
  x[400] = INFINITY;
  x[500] = -INFINITY;
  ThreadPool pool({.num_threads = 2});
  ExpectQ8ActivationsBitIdenticalToScalar(x, m, cols, pool);
}

// The same over many random shapes and rows: 1 ... 40 rows of 32 ... 4096 columns (rows of one
// block, of blocks short of a super-block, of many; enough values to convert on the pool), each
// block of its own magnitude 2^-30 ... 2^30, some blocks all zero, some all one value of either
// sign, some of half-step ties, some with a lone huge, subnormal or -0 value.
TEST(QuantizeTest, SimdQ8ActivationsMatchTheScalarPathOnRandomRows) {
  if (SimdQ8Isas().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<int> kind(0, 9);
  ThreadPool pool({.num_threads = 2});
  const struct {
    int64_t m, cols;
  } shapes[] = {{1, 32}, {3, 96}, {5, 224}, {2, 256}, {9, 768}, {1, 4096}, {17, 512}, {40, 1024}};
  for (const auto& shape : shapes) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<float> x(shape.m * shape.cols);
      for (int64_t block = 0; block < shape.m * shape.cols / 32; ++block) {
        float* values = x.data() + block * 32;
        const float magnitude = std::ldexp(1.0f, exponent(rng));
        const int block_kind = kind(rng);
        for (int i = 0; i < 32; ++i) {
          switch (block_kind) {
            case 0:
              values[i] = 0.0f;
              break;
            case 1:
              values[i] = trial % 2 == 0 ? magnitude : -magnitude;
              break;
            case 2:  // max|x| = 127 · 2^e: every value a half-step tie
              values[i] = (static_cast<float>(i) - 15.5f) * magnitude;
              break;
            default:
              values[i] = normal(rng) * magnitude;
          }
        }
        if (block_kind == 3) values[block % 32] = 1e30f;
        if (block_kind == 4) values[block % 32] = 1e-42f;
        if (block_kind == 5) values[block % 32] = -0.0f;
        if (block_kind == 2) values[31] = 127.0f * magnitude;
      }
      ExpectQ8ActivationsBitIdenticalToScalar(x, shape.m, shape.cols, pool);
    }
  }
}

// Q8_K-style activations: the 8 blocks of each 256 values share one f32 scale, max|x| / 127 over
// all 256, and quantize against it (a block of small values gets small quants).
TEST(QuantizeTest, Q8KActivationsShareOneScalePerSuperBlock) {
  const int64_t cols = 512;
  std::vector<float> x(cols, 1.0f);
  x[10] = -254.0f;  // super-block 0: d = 2, 127 / max|x| = 0.5
  x[33] = 3.0f;
  for (int64_t i = 256; i < cols; ++i) x[i] = 0.01f * static_cast<float>(i - 300);
  x[400] = 1.27f;
  const float max_1 = 0.01f * 211.0f;  // super-block 1: max|x| at i = 511
  ThreadPool pool({.num_threads = 1});
  for (Isa isa : {Isa::kScalar, BestIsa()}) {
    const PreparedActivations prepared =
        PrepareActivations(isa, ActivationFormat::kQ8K, x.data(), 1, cols, pool);
    for (int64_t b = 0; b < 8; ++b) EXPECT_EQ(prepared.q8_scales[b], 254.0f / 127.0f) << b;
    for (int64_t b = 8; b < 16; ++b) EXPECT_EQ(prepared.q8_scales[b], max_1 / 127.0f) << b;
    EXPECT_EQ(prepared.q8[0].qs[10], -127);
    EXPECT_EQ(prepared.q8[1].qs[0], 0);  // 1 · 0.5: the tie rounds to even
    EXPECT_EQ(prepared.q8[1].qs[1], 2);  // 3 · 0.5
    EXPECT_EQ(prepared.q8[15].qs[31], 127);
    EXPECT_EQ(prepared.q8[8].qs[0], -26);  // -0.44 · 127 / 2.11 = -26.48...
  }
}

// Whether two prepared buffers hold the same bytes (NaN-safe, unlike ==).
template <typename T>
bool SameBytes(const UninitializedVector<T>& a, const UninitializedVector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// An input order taken while preparing (each row gathered as it is converted) gives, bit for bit,
// what preparing x with its columns already in that order gives: every activation format on the
// scalar path and each SIMD path this CPU has, on one thread and spread over the pool.
TEST(QuantizeTest, InputOrderPreparesAsThePermutedActivations) {
  ThreadPool pool({.num_threads = 2});
  std::vector<Isa> isas = SimdQ8Isas();
  isas.push_back(Isa::kScalar);
  for (const auto& [m, cols] : {std::pair<int64_t, int64_t>{3, 512}, {70, 1024}}) {
    const std::vector<float> x = RandomNormalValues(m * cols, static_cast<uint32_t>(m));
    const std::vector<int32_t> order = RandomPermutation(cols, static_cast<uint32_t>(cols));
    const std::vector<float> permuted = PermutedColumns(x, m, order);
    for (Isa isa : isas) {
      for (ActivationFormat format : {ActivationFormat::kF32, ActivationFormat::kBf16,
                                      ActivationFormat::kQ8, ActivationFormat::kQ8K}) {
        const std::string where = std::string(IsaName(isa)) + " format " +
                                  std::to_string(static_cast<int>(format)) + " m " +
                                  std::to_string(m);
        const PreparedActivations expected =
            PrepareActivations(isa, format, permuted.data(), m, cols, pool);
        const PreparedActivations ordered =
            PrepareActivations(isa, format, x.data(), m, cols, pool, order.data());
        if (format == ActivationFormat::kF32) {
          ASSERT_EQ(std::memcmp(ordered.f32, permuted.data(), m * cols * sizeof(float)), 0)
              << where;
        }
        EXPECT_TRUE(SameBytes(ordered.bf16, expected.bf16)) << where;
        EXPECT_TRUE(SameBytes(ordered.bf16_as_f32, expected.bf16_as_f32)) << where;
        EXPECT_TRUE(SameBytes(ordered.bf16_tiles, expected.bf16_tiles)) << where;
        EXPECT_TRUE(SameBytes(ordered.q8, expected.q8)) << where;
        EXPECT_TRUE(SameBytes(ordered.q8_scales, expected.q8_scales)) << where;
        EXPECT_TRUE(SameBytes(ordered.q8_sums, expected.q8_sums)) << where;
        EXPECT_TRUE(SameBytes(ordered.q8_half_sums, expected.q8_half_sums)) << where;
        // Only F32 / F16 weights, which read x itself, need the whole ordered copy.
        EXPECT_EQ(ordered.ordered_x.empty(), format != ActivationFormat::kF32) << where;
      }
    }
  }
}

TEST(QuantizeTest, Q4_0KeepsTheExtremeValueExactlyRepresentable) {
  std::vector<float> x(32, 0.0f);
  x[3] = -4.0f;
  x[20] = 2.0f;
  BlockQ4_0 block;
  QuantizeRow(GgmlType::kQ4_0, x.data(), 32, &block);
  std::vector<float> back(32);
  DequantizeRow(GgmlType::kQ4_0, &block, 32, back.data());
  EXPECT_FLOAT_EQ(back[3], -4.0f);
  EXPECT_FLOAT_EQ(back[20], 2.0f);
  EXPECT_FLOAT_EQ(back[0], 0.0f);
}

TEST(QuantizeTest, Q8_0ZeroBlockStaysZero) {
  std::vector<float> x(32, 0.0f);
  BlockQ8_0 block;
  QuantizeRow(GgmlType::kQ8_0, x.data(), 32, &block);
  std::vector<float> back(32, 1.0f);
  DequantizeRow(GgmlType::kQ8_0, &block, 32, back.data());
  for (float v : back) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace vllm::kernels
