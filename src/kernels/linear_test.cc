#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "common/cpu_features.h"
#include "common/half.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"
#include "kernels/packed_nibble_layout.h"
#include "kernels/packed_q8_layout.h"
#include "kernels/random_values_for_test.h"

namespace vllm::kernels {
namespace {

// Every supported type: F32, F16, BF16, F8_E4M3_B32 and the integer types.
const GgmlType kTypes[] = {
    GgmlType::kF32,    GgmlType::kF16,   GgmlType::kBF16, GgmlType::kF8_E4M3_B32, GgmlType::kQ4_0,
    GgmlType::kQ4_1,   GgmlType::kQ5_0,  GgmlType::kQ5_1, GgmlType::kQ8_0,        GgmlType::kQ2_K,
    GgmlType::kQ3_K,   GgmlType::kQ4_K,  GgmlType::kQ5_K, GgmlType::kQ6_K,        GgmlType::kIQ4_NL,
    GgmlType::kIQ4_XS, GgmlType::kMXFP4, GgmlType::kQ4_Z};

// Whether this build has the x86 kernels: elsewhere their weak declarations (isa.h) are null.
#if defined(__x86_64__)
constexpr bool kX86Build = true;
#else
constexpr bool kX86Build = false;
#endif

std::vector<Isa> AvailableIsas() {
  std::vector<Isa> isas = {Isa::kScalar};
  const CpuFeatures& features = GetCpuFeatures();
  if (features.HasAvx2Path()) isas.push_back(Isa::kAvx2);
  if (BestIsa() == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  if (features.neon) isas.push_back(Isa::kNeon);
  if (features.dotprod) isas.push_back(Isa::kNeonDotprod);
  if (features.i8mm) isas.push_back(Isa::kNeonI8mm);
  return isas;
}

// Byte offsets of the fp16 scale fields in one block of each integer type (E8M0 for MXFP4).
std::vector<int> ScaleOffsets(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
      return {0, 2};
    case GgmlType::kQ2_K:
      return {80, 82};
    case GgmlType::kQ3_K:
      return {108};
    case GgmlType::kQ6_K:
      return {208};
    default:
      return {0};
  }
}

// Random blocks: random bytes everywhere, then scales drawn so that some are zero, some tiny
// (fp16 subnormal) and some large, the rest around 1/64.
void RandomizeBlocks(GgmlType type, int64_t num_blocks, uint8_t* bytes, std::mt19937& rng) {
  const GgmlTypeTraits layout = *GetSupportedTypeTraits(type);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> kind(0, 15);
  std::uniform_real_distribution<float> magnitude(0.002f, 0.03f);
  for (int64_t b = 0; b < num_blocks; ++b) {
    uint8_t* block = bytes + b * layout.block_bytes;
    for (int64_t i = 0; i < layout.block_bytes; ++i) block[i] = static_cast<uint8_t>(byte(rng));
    for (int offset : ScaleOffsets(type)) {
      if (type == GgmlType::kMXFP4) {
        block[offset] = static_cast<uint8_t>(kind(rng) == 0 ? byte(rng) % 4 : 115 + kind(rng));
        continue;
      }
      const int k = kind(rng);
      float scale = k == 0 ? 0.0f : k == 1 ? 3e-7f : k == 2 ? 4.0f : magnitude(rng);
      if (byte(rng) & 1) scale = -scale;
      const uint16_t half = Fp32ToFp16(scale);
      std::memcpy(block + offset, &half, sizeof(half));
    }
  }
}

// A random weight of the given type: [rows, cols]. Float types hold random normals; integer
// types random blocks.
struct TestWeight {
  std::vector<uint8_t> bytes;
  WeightView view;
};
TestWeight MakeWeight(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  TestWeight weight;
  const TypeTraits* traits = FindTypeTraits(type);
  const int64_t row_bytes = RowBytes(traits->layout, cols);
  weight.bytes.resize(rows * row_bytes);
  if (traits->decode == nullptr) {
    std::vector<float> values = RandomNormalValues(rows * cols, seed);
    for (int64_t r = 0; r < rows; ++r) {
      QuantizeRow(type, values.data() + r * cols, cols, weight.bytes.data() + r * row_bytes);
    }
  } else {
    std::mt19937 rng(seed);
    RandomizeBlocks(type, rows * cols / traits->layout.block_size, weight.bytes.data(), rng);
  }
  weight.view = {traits, weight.bytes.data(), rows, cols, row_bytes};
  return weight;
}

// Per output element, the sum of the magnitudes of its terms (the weights split into scale · q
// and min, against x): the scale of the rounding error any summation order makes.
std::vector<float> TermMagnitudes(const TestWeight& weight, const std::vector<float>& x,
                                  int64_t m) {
  const WeightView& w = weight.view;
  const TypeTraits& traits = *w.traits;
  std::vector<float> row(w.cols), magnitudes(m * w.rows);
  for (int64_t j = 0; j < w.rows; ++j) {
    const uint8_t* bytes = w.data + j * w.row_bytes;
    if (traits.decode == nullptr) {
      DequantizeRow(traits.layout.type, bytes, w.cols, row.data());
      for (float& v : row) v = std::fabs(v);
    } else {
      DecodedBlock decoded;
      const int64_t block_size = traits.layout.block_size;
      for (int64_t b = 0; b < w.cols / block_size; ++b) {
        traits.decode(bytes + b * traits.layout.block_bytes, &decoded);
        for (int64_t k = 0; k < block_size; ++k) {
          const int64_t s = k / traits.sub_block_size;
          row[b * block_size + k] =
              std::fabs(decoded.scale[s] * decoded.q[k]) + std::fabs(decoded.min[s]);
        }
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0;
      for (int64_t c = 0; c < w.cols; ++c) sum += row[c] * std::fabs(x[i * w.cols + c]);
      magnitudes[i * w.rows + j] = static_cast<float>(sum);
    }
  }
  return magnitudes;
}

struct Shape {
  int64_t rows, cols, m;
};

TEST(LinearTest, EveryPathMatchesTheScalarReference) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const Shape shapes[] = {{1, 256, 1}, {7, 512, 3}, {33, 768, 5}, {17, 2304, 17}, {50, 2048, 1}};
  for (GgmlType type : kTypes) {
    for (const Shape& shape : shapes) {
      TestWeight weight = MakeWeight(type, shape.rows, shape.cols, 1);
      std::vector<float> x = RandomNormalValues(shape.m * shape.cols, 2);
      std::vector<float> expected(shape.m * shape.rows);
      LinearWithIsa(Isa::kScalar, weight.view, x.data(), shape.m, expected.data(), pool);
      const std::vector<float> magnitudes = TermMagnitudes(weight, x, shape.m);
      for (Isa isa : AvailableIsas()) {
        std::vector<float> y(shape.m * shape.rows);
        LinearWithIsa(isa, weight.view, x.data(), shape.m, y.data(), pool);
        for (size_t i = 0; i < y.size(); ++i) {
          // Only the summation order differs: relative to the size of the terms.
          const float tolerance = 2e-6f * magnitudes[i] + 1e-30f;
          ASSERT_NEAR(y[i], expected[i], tolerance)
              << GetSupportedTypeTraits(type)->name << " " << IsaName(isa) << " rows " << shape.rows
              << " cols " << shape.cols << " m " << shape.m << " at " << i;
        }
      }
    }
  }
}

// ARM's in-place integer kernels compute only the integer dots with vectors and the rest as the
// scalar reference does: its bits, for every integer type (16- and 32-value sub-blocks).
TEST(LinearTest, ArmIntegerKernelsGiveTheScalarReferenceBits) {
  const CpuFeatures& features = GetCpuFeatures();
  if (!features.neon) GTEST_SKIP() << "no NEON on this CPU";
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const Shape shape = {5, 256, 70};  // a second block of 64 x rows; small enough for qemu
  std::vector<Isa> arm_isas = {Isa::kNeon};
  if (features.dotprod) arm_isas.push_back(Isa::kNeonDotprod);
  for (GgmlType type : kTypes) {
    if (FindTypeTraits(type)->decode == nullptr) continue;  // float types
    TestWeight weight = MakeWeight(type, shape.rows, shape.cols, 5);
    std::vector<float> x = RandomNormalValues(shape.m * shape.cols, 6);
    std::vector<float> expected(shape.m * shape.rows);
    LinearWithIsa(Isa::kScalar, weight.view, x.data(), shape.m, expected.data(), pool);
    for (Isa isa : arm_isas) {
      std::vector<float> y(shape.m * shape.rows);
      LinearWithIsa(isa, weight.view, x.data(), shape.m, y.data(), pool);
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_EQ(std::memcmp(&y[i], &expected[i], sizeof(float)), 0)
            << GetSupportedTypeTraits(type)->name << " " << IsaName(isa) << " at " << i << ": "
            << y[i] << " vs " << expected[i];
      }
    }
  }
}

TEST(LinearTest, ResultsDoNotDependOnBatchOrThreads) {
  ThreadPool one_thread(ThreadPool::Options{.num_threads = 1});
  ThreadPool two_threads(ThreadPool::Options{.num_threads = 2});
  const int64_t rows = 45, cols = 512, m = 37;
  for (GgmlType type : kTypes) {
    TestWeight weight = MakeWeight(type, rows, cols, 3);
    std::vector<float> x = RandomNormalValues(m * cols, 4);
    for (Isa isa : AvailableIsas()) {
      std::vector<float> batched(m * rows);
      LinearWithIsa(isa, weight.view, x.data(), m, batched.data(), two_threads);
      for (int64_t i = 0; i < m; ++i) {
        std::vector<float> alone(rows);
        LinearWithIsa(isa, weight.view, x.data() + i * cols, 1, alone.data(), one_thread);
        for (int64_t j = 0; j < rows; ++j) {
          ASSERT_EQ(alone[j], batched[i * rows + j])  // bitwise
              << GetSupportedTypeTraits(type)->name << " " << IsaName(isa) << " row " << i;
        }
      }
    }
  }
}

// Weights of a type with a packed form for this CPU (rows in its groups) are packed by Create;
// the public Linear must then agree with the reference and stay batch and thread invariant.
TEST(LinearTest, PackedWeightsMatchTheReferenceAndAreBatchInvariant) {
  if (BestIsa() == Isa::kScalar) GTEST_SKIP() << "no packed kernels on the scalar path";
  ThreadPool one_thread(ThreadPool::Options{.num_threads = 1});
  ThreadPool two_threads(ThreadPool::Options{.num_threads = 2});
  // m covers passes of 8 or 6, 4, 2 and 1 x rows, a second block of 64 x rows, and several
  // blocks whose last ends in a shorter tile (Q8_0: 5 and 2 x rows); rows cover tiles of two
  // groups of 16 and a group left over; 96 columns at m = 17 a span of AVX2's unpacked records
  // shorter than 8 (and tiles of 3, then 2 x rows).
  const Shape shapes[] = {{16, 32, 1},    {48, 96, 13},   {16, 256, 3},  {32, 512, 8},
                          {48, 256, 64},  {16, 512, 70},  {32, 2304, 1}, {64, 2304, 21},
                          {48, 256, 131}, {32, 512, 200}, {16, 96, 17}};
  for (GgmlType type : kTypes) {
    const PackedForm& form = FindTypeTraits(type)->packed;
    if (form.rows_per_group == 0 || PackedIsa(form) == Isa::kScalar) continue;
    for (const Shape& shape : shapes) {
      if (shape.cols % form.cols_per_block != 0) continue;
      const char* name = GetSupportedTypeTraits(type)->name;
      TestWeight weight = MakeWeight(type, shape.rows, shape.cols, 5);
      auto packed = LinearWeight::Create(type, weight.bytes.data(), shape.rows, shape.cols);
      ASSERT_TRUE(packed.ok()) << packed.error();
      std::vector<float> x = RandomNormalValues(shape.m * shape.cols, 6);
      std::vector<float> expected(shape.m * shape.rows);
      LinearWithIsa(Isa::kScalar, weight.view, x.data(), shape.m, expected.data(), two_threads);
      std::vector<float> batched(shape.m * shape.rows);
      Linear(**packed, x.data(), shape.m, batched.data(), two_threads);
      const std::vector<float> magnitudes = TermMagnitudes(weight, x, shape.m);
      for (size_t i = 0; i < batched.size(); ++i) {
        const float tolerance = 2e-6f * magnitudes[i] + 1e-30f;
        ASSERT_NEAR(batched[i], expected[i], tolerance)
            << name << " cols " << shape.cols << " at " << i;
      }
      for (int64_t i = 0; i < shape.m; ++i) {
        std::vector<float> alone(shape.rows);
        Linear(**packed, x.data() + i * shape.cols, 1, alone.data(), one_thread);
        for (int64_t j = 0; j < shape.rows; ++j) {
          ASSERT_EQ(alone[j], batched[i * shape.rows + j]) << name << " x row " << i;  // bitwise
        }
      }
    }
  }
}

// Two kernels of `type`'s packed form, each on x prepared for its own ISA with its own x terms,
// give the same bits over x of every height in `heights`, for a pair of W groups and a group left
// over.
void ExpectPackedKernelsAgreeBitwise(GgmlType type, Isa isa_a, const PackedKernels& a, Isa isa_b,
                                     const PackedKernels& b, std::initializer_list<int64_t> heights,
                                     uint32_t seed) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  constexpr int64_t kRows = 48;
  constexpr int64_t kCols = 512;
  const TypeTraits* traits = FindTypeTraits(type);
  TestWeight weight = MakeWeight(type, kRows, kCols, seed);
  std::vector<uint8_t> packed(traits->packed.packed_bytes(kRows, kCols));
  traits->packed.pack(weight.view, packed.data());
  const PackedWeightView packed_view{traits, kRows, kCols, packed.data()};
  for (int64_t m : heights) {
    const std::vector<float> x = RandomNormalValues(m * kCols, seed + 1);
    auto run = [&](Isa isa, const PackedKernels& kernels) {
      PreparedActivations prepared =
          PrepareActivations(isa, traits->activation, x.data(), m, kCols, pool);
      if (kernels.prepare_terms != nullptr) kernels.prepare_terms(prepared);
      std::vector<float> y(m * kRows);
      kernels.rows(packed_view, prepared, 0, kRows, y.data());
      return y;
    };
    const std::vector<float> on_a = run(isa_a, a);
    const std::vector<float> on_b = run(isa_b, b);
    for (int64_t i = 0; i < m * kRows; ++i) {
      ASSERT_EQ(std::memcmp(&on_a[i], &on_b[i], sizeof(float)), 0)
          << traits->layout.name << " m " << m << " at " << i << ": " << on_a[i] << " vs "
          << on_b[i];
    }
  }
}

// The grid types' kernels with AVX512_VBMI (vpermb on unmasked nibbles) and without (vpshufb on
// masked ones) give the same bits, over tiles of every height (m 1 ... 13, 70) and both tile
// widths.
TEST(LinearTest, GridKernelsWithAndWithoutVbmiAgreeBitwise) {
  if (BestIsa() != Isa::kAvx512 || !GetCpuFeatures().avx512vbmi) {
    GTEST_SKIP() << "no AVX-512 VNNI and VBMI on this CPU";
  }
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS, GgmlType::kMXFP4}) {
    ExpectPackedKernelsAgreeBitwise(type, Isa::kAvx512, GridKernelsVbmi(type), Isa::kAvx512,
                                    NibbleKernelsAvx512(type), {1, 2, 3, 4, 5, 6, 7, 13, 70}, 11);
  }
}

// A form's AVX2 kernels read the packing of its AVX-512 ones with their arithmetic in their order:
// the same bits, over tiles of every height (m 1 ... 9, 70: passes of 4, 2 and 1 x rows, a second
// block of 64).
TEST(LinearTest, PackedAvx2KernelsMatchTheAvx512OnesBitwise) {
  if (BestIsa() != Isa::kAvx512) GTEST_SKIP() << "no AVX-512 VNNI / BF16 on this CPU";
  int types_checked = 0;
  for (GgmlType type : kTypes) {
    const PackedForm& form = FindTypeTraits(type)->packed;
    const PackedKernels& avx2 = form.kernels[static_cast<int>(Isa::kAvx2)];
    if (avx2.rows == nullptr) continue;
    ++types_checked;
    // BF16's AVX-512 kernel may be AMX tiles (bits of their own): its vdpbf16ps one is the peer.
    const PackedKernels avx512 = type == GgmlType::kBF16
                                     ? PackedKernels{nullptr, LinearRowsPackedBf16DotAvx512}
                                     : form.kernels[static_cast<int>(Isa::kAvx512)];
    ExpectPackedKernelsAgreeBitwise(type, Isa::kAvx2, avx2, Isa::kAvx512, avx512,
                                    {1, 2, 3, 4, 5, 6, 7, 9, 17, 70}, 13);
  }
  EXPECT_EQ(types_checked, 17);  // every nibble-packed type, Q8_0, BF16, F16 and F8_E4M3_B32
}

// On every SIMD path the nibble-packed types compute on their packed forms (the tests above then
// cover that path under VLLM_CPU_ISA=avx2 too); on the scalar path every type is used in place.
TEST(TypeTableTest, NibblePackedTypesArePackedOnEverySimdPath) {
  if (GetCpuFeatures().neon) GTEST_SKIP() << "no packed forms on ARM yet: every type in place";
  for (GgmlType type :
       {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ2_K,
        GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kIQ4_NL,
        GgmlType::kIQ4_XS, GgmlType::kMXFP4, GgmlType::kQ4_Z}) {
    EXPECT_EQ(PackedIsa(FindTypeTraits(type)->packed), BestIsa())
        << GetSupportedTypeTraits(type)->name;
  }
}

// BF16's two AVX-512 kernels, vdpbf16ps and f32 FMAs, and its AVX2 kernel (the FMAs on halves of
// 8 rows) give the same bits, also where weights, activations, products or partial sums are
// denormal (vdpbf16ps flushes them to zero; the FMA kernels run under FTZ and DAZ). Rows 3, 7, ...
// are scaled down by 2^-66 and x row 2 by 2^-60, so their products fall below f32's normal range.
TEST(LinearTest, Bf16KernelsOnDotsAndOnFmasAgreeBitwise) {
  if (BestIsa() != Isa::kAvx512) GTEST_SKIP() << "no AVX-512 BF16 on this CPU";
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  constexpr int64_t kRows = 48;
  constexpr int64_t kCols = 256;
  const std::vector<float> w_values = RandomNormalValues(kRows * kCols, 8);
  std::vector<uint16_t> w(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    const float scale = (i / kCols) % 4 == 3 ? std::ldexp(1.0f, -66) : 1.0f;
    w[i] = Fp32ToBf16(w_values[i] * scale);
    if (i % 7 == 0) w[i] = static_cast<uint16_t>((i % 2) << 15 | (1 + i % 127));  // denormal
    if (i % 11 == 0) w[i] = 0;
  }
  const TypeTraits* traits = FindTypeTraits(GgmlType::kBF16);
  const WeightView view{traits, reinterpret_cast<const uint8_t*>(w.data()), kRows, kCols,
                        kCols * 2};
  std::vector<uint8_t> packed(traits->packed.packed_bytes(kRows, kCols));
  traits->packed.pack(view, packed.data());
  const PackedWeightView packed_view{traits, kRows, kCols, packed.data()};
  for (int64_t m : {1, 5, 13}) {
    std::vector<float> x = RandomNormalValues(m * kCols, 9);
    for (int64_t i = 0; i < m * kCols; ++i) {
      if (i / kCols == 2) x[i] = std::ldexp(x[i], -60);
      if (i % 13 == 0) x[i] = std::ldexp(x[i], -130);  // denormal once rounded to bf16
    }
    PreparedActivations prepared =
        PrepareActivations(Isa::kAvx512, ActivationFormat::kBf16, x.data(), m, kCols, pool);
    prepared.bf16_as_f32.resize(m * kCols);
    for (int64_t i = 0; i < m * kCols; ++i) prepared.bf16_as_f32[i] = Bf16ToFp32(prepared.bf16[i]);
    std::vector<float> on_dots(m * kRows);
    std::vector<float> on_fmas(m * kRows);
    std::vector<float> on_avx2(m * kRows);
    LinearRowsPackedBf16DotAvx512(packed_view, prepared, 0, kRows, on_dots.data());
    LinearRowsPackedBf16FmaAvx512(packed_view, prepared, 0, kRows, on_fmas.data());
    LinearRowsPackedBf16Avx2(packed_view, prepared, 0, kRows, on_avx2.data());
    for (int64_t i = 0; i < m * kRows; ++i) {
      ASSERT_EQ(std::memcmp(&on_dots[i], &on_fmas[i], sizeof(float)), 0)
          << "m " << m << " at " << i << ": " << on_dots[i] << " vs " << on_fmas[i];
      ASSERT_EQ(std::memcmp(&on_dots[i], &on_avx2[i], sizeof(float)), 0)
          << "m " << m << " at " << i << ": " << on_dots[i] << " vs AVX2 " << on_avx2[i];
    }
  }
}

// BF16's AMX kernel: within rounding of the vdpbf16ps kernel, and each x row's sums the same bits
// wherever the row sits (in a pair of x tiles, a lone whole tile, a short last tile of any height,
// past the first block of x rows: 32 rows at this many columns), for a pair of W groups and a group
// left over.
TEST(LinearTest, Bf16TileKernelMatchesTheDotKernelAndIsBatchInvariant) {
  if (!AmxBf16Usable()) GTEST_SKIP() << "no AMX BF16 on this CPU";
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  constexpr int64_t kRows = 48;
  constexpr int64_t kCols = 4160;
  constexpr int64_t kM = 150;  // 4 blocks of 32 + 16 + a tile of 6
  TestWeight weight = MakeWeight(GgmlType::kBF16, kRows, kCols, 10);
  const TypeTraits* traits = FindTypeTraits(GgmlType::kBF16);
  std::vector<uint8_t> packed(traits->packed.packed_bytes(kRows, kCols));
  traits->packed.pack(weight.view, packed.data());
  const PackedWeightView packed_view{traits, kRows, kCols, packed.data()};
  const std::vector<float> x = RandomNormalValues(kM * kCols, 11);
  auto on_tiles = [&](const float* rows, int64_t m) {
    const PreparedActivations prepared =
        PrepareActivations(Isa::kAvx512, ActivationFormat::kBf16, rows, m, kCols, pool);
    std::vector<float> y(m * kRows);
    LinearRowsPackedBf16Amx(packed_view, prepared, 0, kRows, y.data());
    return y;
  };
  const std::vector<float> batched = on_tiles(x.data(), kM);
  const PreparedActivations prepared =
      PrepareActivations(Isa::kAvx512, ActivationFormat::kBf16, x.data(), kM, kCols, pool);
  std::vector<float> on_dots(kM * kRows);
  LinearRowsPackedBf16DotAvx512(packed_view, prepared, 0, kRows, on_dots.data());
  const std::vector<float> magnitudes = TermMagnitudes(weight, x, kM);
  for (int64_t i = 0; i < kM * kRows; ++i) {
    ASSERT_NEAR(batched[i], on_dots[i], 2e-6f * magnitudes[i] + 1e-30f) << "at " << i;
  }
  for (int64_t first : {0, 5, 31, 130, 144}) {
    for (int64_t m : {1, 6, 16, 17, 37}) {
      if (first + m > kM) continue;
      const std::vector<float> part = on_tiles(x.data() + first * kCols, m);
      for (int64_t i = 0; i < m * kRows; ++i) {
        ASSERT_EQ(std::memcmp(&part[i], &batched[first * kRows + i], sizeof(float)), 0)
            << "x rows from " << first << ", m " << m << " at " << i;
      }
    }
  }
}

// The float weights have packed forms on AVX-512 (in an x86 build), so the test above covers them:
// BF16 (vdpbf16ps) and F16 (converted to f32), in groups of 16 rows and blocks of 32 columns.
TEST(LinearTest, FloatWeightsHavePackedFormsOnAvx512) {
  for (GgmlType type : {GgmlType::kBF16, GgmlType::kF16}) {
    const PackedForm& form = FindTypeTraits(type)->packed;
    EXPECT_EQ(form.kernels[static_cast<int>(Isa::kAvx512)].rows != nullptr, kX86Build)
        << GetSupportedTypeTraits(type)->name;
    EXPECT_EQ(form.rows_per_group, 16) << GetSupportedTypeTraits(type)->name;
    EXPECT_EQ(form.cols_per_block, 32) << GetSupportedTypeTraits(type)->name;
    EXPECT_EQ(form.packed_bytes(32, 64), 32 * 64 * 2) << GetSupportedTypeTraits(type)->name;
  }
}

// The kernel table extends common's: one entry per row of kSupportedTypes that holds the row
// itself (not a copy of its facts), and none for a type common does not list.
TEST(TypeTableTest, EveryRowOfTheCommonTableHasOneEntryThatEmbedsIt) {
  for (const GgmlTypeTraits& row : kSupportedTypes) {
    const TypeTraits* traits = FindTypeTraits(row.type);
    ASSERT_NE(traits, nullptr) << row.name;
    EXPECT_EQ(&traits->layout, &row) << row.name;
  }
  EXPECT_EQ(FindTypeTraits(GgmlType::kQ8_1), nullptr);
}

// Every packed form comes from one generic path per layout (NibbleForm over the record,
// Q8LayoutForm): a [16, 256] weight takes its records' bytes (packed_nibble_layout.h's sizes) or
// Q8_0's quants and scales, and each record spans its columns.
TEST(TypeTableTest, PackedFormsTakeTheirRecordsBytesAndColumns) {
  struct Expected {
    GgmlType type;
    int64_t cols_per_block;
    int64_t bytes;  // of a [16, 256] weight
  };
  const Expected expected[] = {
      {GgmlType::kF16, 32, 8 * 1024},     {GgmlType::kBF16, 32, 8 * 1024},
      {GgmlType::kQ8_0, 32, 8 * 544},     {GgmlType::kQ4_0, 32, 8 * 288},
      {GgmlType::kQ4_1, 32, 8 * 320},     {GgmlType::kQ5_0, 32, 8 * 352},
      {GgmlType::kQ5_1, 32, 8 * 384},     {GgmlType::kIQ4_NL, 32, 8 * 288},
      {GgmlType::kQ4_Z, 32, 8 * 304},     {GgmlType::kMXFP4, 32, 8 * 272},
      {GgmlType::kQ2_K, 256, 1344},       {GgmlType::kQ3_K, 256, 1824},
      {GgmlType::kQ4_K, 256, 2368},       {GgmlType::kQ5_K, 256, 2880},
      {GgmlType::kQ6_K, 256, 3360},       {GgmlType::kIQ4_XS, 256, 2208},
      {GgmlType::kF8_E4M3_B32, 32, 4612},
  };
  for (const Expected& e : expected) {
    const PackedForm& form = FindTypeTraits(e.type)->packed;
    const char* name = GetSupportedTypeTraits(e.type)->name;
    EXPECT_EQ(form.rows_per_group, 16) << name;
    EXPECT_EQ(form.cols_per_block, e.cols_per_block) << name;
    EXPECT_EQ(form.packed_bytes(16, 256), e.bytes) << name;
    EXPECT_NE(form.pack, nullptr) << name;
    EXPECT_EQ(form.kernels[static_cast<int>(Isa::kAvx512)].rows != nullptr, kX86Build) << name;
  }
  EXPECT_EQ(FindTypeTraits(GgmlType::kF32)->packed.rows_per_group, 0);  // used in place
}

// A fused weight's output rows are its parts' outputs side by side.
TEST(LinearTest, FusedWeightsEqualTheirPartsSideBySide) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t cols = 512, m = 5;
  const int64_t part_rows[] = {32, 16, 16};
  const std::vector<float> x = RandomNormalValues(m * cols, 11);
  for (GgmlType type : kTypes) {
    std::vector<TestWeight> parts;
    std::vector<LinearWeight::Part> fused_parts;
    int64_t total_rows = 0;
    for (int64_t rows : part_rows) {
      parts.push_back(MakeWeight(type, rows, cols, static_cast<uint32_t>(20 + total_rows)));
      total_rows += rows;
    }
    for (const TestWeight& part : parts) fused_parts.push_back({part.bytes.data(), part.view.rows});
    auto fused = LinearWeight::CreateFused(type, fused_parts, cols);
    ASSERT_TRUE(fused.ok()) << fused.error();
    ASSERT_EQ((*fused)->rows(), total_rows);
    std::vector<float> y(m * total_rows);
    Linear(**fused, x.data(), m, y.data(), pool);
    int64_t first_row = 0;
    for (const TestWeight& part : parts) {
      const int64_t rows = part.view.rows;
      std::vector<float> expected(m * rows);
      LinearWithIsa(Isa::kScalar, part.view, x.data(), m, expected.data(), pool);
      const std::vector<float> magnitudes = TermMagnitudes(part, x, m);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < rows; ++j) {
          ASSERT_NEAR(y[i * total_rows + first_row + j], expected[i * rows + j],
                      2e-6f * magnitudes[i * rows + j] + 1e-30f)
              << GetSupportedTypeTraits(type)->name << " row " << first_row + j;
        }
      }
      first_row += rows;
    }
  }
}

// GatedLinear over a gate / up pair equals Linear over each, then the activation, bit for bit:
// every type (packed and in place), turns of kGatedRowsPerTurn rows (ffn 192) and one turn (ffn
// 48, and CreateFused's {gate, up}), batch sizes for each tile kind.
TEST(LinearTest, GatedPairEqualsTheTwoProductsThenTheActivationBitwise) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t cols = 256;
  for (GgmlType type : kTypes) {
    for (int64_t ffn : {3 * kGatedRowsPerTurn, int64_t{48}}) {
      const TestWeight gate = MakeWeight(type, ffn, cols, 60);
      const TestWeight up = MakeWeight(type, ffn, cols, 61);
      auto gate_weight = LinearWeight::Create(type, gate.bytes.data(), ffn, cols);
      auto up_weight = LinearWeight::Create(type, up.bytes.data(), ffn, cols);
      auto pair = LinearWeight::CreateGatedPair(type, {gate.bytes.data(), ffn},
                                                {up.bytes.data(), ffn}, cols);
      auto fused =
          LinearWeight::CreateFused(type, {{gate.bytes.data(), ffn}, {up.bytes.data(), ffn}}, cols);
      ASSERT_TRUE(gate_weight.ok() && up_weight.ok() && pair.ok() && fused.ok());
      ASSERT_EQ((*pair)->rows(), 2 * ffn);
      for (int64_t m : {1, 9, 70}) {
        const std::vector<float> x = RandomNormalValues(m * cols, static_cast<uint32_t>(m));
        std::vector<float> gate_y(m * ffn), up_y(m * ffn);
        Linear(**gate_weight, x.data(), m, gate_y.data(), pool);
        Linear(**up_weight, x.data(), m, up_y.data(), pool);
        for (GateActivation act : {GateActivation::kSilu, GateActivation::kGeluTanh}) {
          std::vector<float> expected(m * ffn);
          for (int64_t t = 0; t < m; ++t) {
            (act == GateActivation::kSilu ? SiluMul : GeluTanhMul)(
                gate_y.data() + t * ffn, up_y.data() + t * ffn, ffn, expected.data() + t * ffn);
          }
          for (const auto* weight : {&*pair, &*fused}) {
            std::vector<float> out(m * ffn, -1.0f);
            GatedLinear(**weight, x.data(), m, act, out.data(), pool);
            EXPECT_EQ(out, expected) << GetSupportedTypeTraits(type)->name << " ffn " << ffn
                                     << " m " << m << (weight == &*pair ? " pair" : " fused");
          }
        }
      }
    }
  }
  const TestWeight gate = MakeWeight(GgmlType::kQ8_0, 64, cols, 62);
  auto mismatched = LinearWeight::CreateGatedPair(GgmlType::kQ8_0, {gate.bytes.data(), 64},
                                                  {gate.bytes.data(), 32}, cols);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.error(), "gate and up weights have different numbers of rows");
}

// LinearBatch computes each job exactly as Linear does: jobs of every type (packed and in place),
// different shapes and batch sizes (an empty one included), one parallel region.
TEST(LinearTest, BatchedJobsEqualLinearBitwise) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t cols = 256;
  std::vector<TestWeight> parts;
  std::vector<std::unique_ptr<LinearWeight>> weights;
  std::vector<int64_t> batch_sizes;
  std::vector<std::vector<float>> inputs, outputs, expected;
  for (GgmlType type : kTypes) {
    for (int64_t rows : {16, 48}) {
      const auto seed = static_cast<uint32_t>(40 + weights.size());
      const int64_t m = static_cast<int64_t>(weights.size() % 5);  // 0 (an empty job) to 4
      parts.push_back(MakeWeight(type, rows, cols, seed));
      auto weight = LinearWeight::Create(type, parts.back().bytes.data(), rows, cols);
      ASSERT_TRUE(weight.ok()) << weight.error();
      weights.push_back(std::move(*weight));
      batch_sizes.push_back(m);
      inputs.push_back(RandomNormalValues((m + 1) * cols, seed + 1000));
      outputs.emplace_back((m + 1) * rows, -1.0f);
      expected.emplace_back((m + 1) * rows, -1.0f);
      Linear(*weights.back(), inputs.back().data(), m, expected.back().data(), pool);
    }
  }
  std::vector<LinearJob> jobs;
  for (size_t j = 0; j < weights.size(); ++j) {
    jobs.push_back({weights[j].get(), inputs[j].data(), batch_sizes[j], outputs[j].data()});
  }
  LinearBatch(jobs, pool);
  for (size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_EQ(outputs[j], expected[j]) << GetSupportedTypeTraits(weights[j]->type())->name;
  }
}

// A weight with an input order computes, bit for bit, what the same weight without one computes
// over x's columns in that order: Linear, GatedLinear (turns of kGatedRowsPerTurn and one turn)
// and LinearBatch, float and integer types (packed and in place; Q4_Z: GPTQ's asymmetric act-order
// layers), batch sizes for each tile kind.
TEST(LinearTest, InputOrderEqualsTheProductOverPermutedColumnsBitwise) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t cols = 512;
  const std::vector<int32_t> order = RandomPermutation(cols, 90);
  for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ4_0,
                        GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ4_Z}) {
    const char* name = GetSupportedTypeTraits(type)->name;
    const int64_t rows = 64;
    const TestWeight weight = MakeWeight(type, rows, cols, 91);
    auto plain = LinearWeight::Create(type, weight.bytes.data(), rows, cols);
    ASSERT_TRUE(plain.ok()) << plain.error();
    auto ordered = LinearWeight::WithInputOrder(
        LinearWeight::Create(type, weight.bytes.data(), rows, cols).value(), order);
    ASSERT_TRUE(ordered.ok()) << ordered.error();
    EXPECT_EQ((*ordered)->input_order(), order);
    for (int64_t m : {1, 9, 70}) {
      const std::vector<float> x = RandomNormalValues(m * cols, static_cast<uint32_t>(m));
      const std::vector<float> permuted = PermutedColumns(x, m, order);
      std::vector<float> expected(m * rows), y(m * rows, -1.0f), batched(m * rows, -1.0f);
      Linear(**plain, permuted.data(), m, expected.data(), pool);
      Linear(**ordered, x.data(), m, y.data(), pool);
      EXPECT_EQ(y, expected) << name << " m " << m;
      // One job with the order and one without, in one batch.
      std::vector<float> plain_batched(m * rows, -1.0f);
      const LinearJob jobs[] = {{ordered->get(), x.data(), m, batched.data()},
                                {plain->get(), permuted.data(), m, plain_batched.data()}};
      LinearBatch(jobs, pool);
      EXPECT_EQ(batched, expected) << name << " batch, m " << m;
      EXPECT_EQ(plain_batched, expected) << name << " batch, m " << m;
    }
    for (int64_t ffn : {2 * kGatedRowsPerTurn, int64_t{48}}) {
      const TestWeight gate = MakeWeight(type, ffn, cols, 92);
      const TestWeight up = MakeWeight(type, ffn, cols, 93);
      auto make_pair = [&] {
        return LinearWeight::CreateGatedPair(type, {gate.bytes.data(), ffn}, {up.bytes.data(), ffn},
                                             cols);
      };
      auto plain_pair = make_pair();
      ASSERT_TRUE(plain_pair.ok()) << plain_pair.error();
      auto ordered_pair = LinearWeight::WithInputOrder(make_pair().value(), order);
      ASSERT_TRUE(ordered_pair.ok()) << ordered_pair.error();
      for (int64_t m : {1, 70}) {
        const std::vector<float> x = RandomNormalValues(m * cols, static_cast<uint32_t>(m + 5));
        const std::vector<float> permuted = PermutedColumns(x, m, order);
        std::vector<float> expected(m * ffn), out(m * ffn, -1.0f);
        GatedLinear(**plain_pair, permuted.data(), m, GateActivation::kSilu, expected.data(), pool);
        GatedLinear(**ordered_pair, x.data(), m, GateActivation::kSilu, out.data(), pool);
        EXPECT_EQ(out, expected) << name << " gated, ffn " << ffn << " m " << m;
      }
    }
  }
}

TEST(LinearTest, InputOrderMustBeAPermutationOfTheColumns) {
  const int64_t rows = 4, cols = 64;
  const TestWeight weight = MakeWeight(GgmlType::kQ8_0, rows, cols, 94);
  auto with_order = [&](std::vector<int32_t> order) {
    return LinearWeight::WithInputOrder(
        LinearWeight::Create(GgmlType::kQ8_0, weight.bytes.data(), rows, cols).value(),
        std::move(order));
  };
  const std::vector<int32_t> order = RandomPermutation(cols, 95);
  std::vector<int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  auto identity = with_order(sorted);
  ASSERT_TRUE(identity.ok()) << identity.error();
  EXPECT_TRUE((*identity)->input_order().empty());  // the identity costs nothing

  auto too_short = with_order(std::vector<int32_t>(order.begin(), order.end() - 1));
  ASSERT_FALSE(too_short.ok());
  EXPECT_EQ(too_short.error(), "input order has 63 columns, the weight 64");

  std::vector<int32_t> repeated = sorted;
  repeated[10] = 3;
  auto duplicate = with_order(repeated);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error(), "input order repeats column 3 (at entry 10)");

  for (int32_t column : {-1, 64}) {
    std::vector<int32_t> outside = sorted;
    outside[5] = column;
    auto out_of_range = with_order(outside);
    ASSERT_FALSE(out_of_range.ok());
    EXPECT_EQ(out_of_range.error(),
              "input order entry 5 is column " + std::to_string(column) + ", outside [0, 64)");
  }
}

TEST(LinearTest, DotAndAxpyMatchScalar) {
  for (int64_t n : {1, 7, 16, 64, 100}) {
    std::vector<float> a = RandomNormalValues(n, 5), b = RandomNormalValues(n, 6);
    const float expected = DotF32Scalar(a.data(), b.data(), n);
    EXPECT_NEAR(DotF32(a.data(), b.data(), n), expected, 1e-4f * n);
    std::vector<float> y1 = b, y2 = b;
    AxpyF32Scalar(0.5f, a.data(), n, y1.data());
    AxpyF32(0.5f, a.data(), n, y2.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y1[i], y2[i], 1e-6f);
  }
}

TEST(LinearTest, RowsVariantsEqualTheSingleRowKernels) {
  for (int64_t n : {8, 64, 100}) {
    const int64_t rows = 5;
    std::vector<float> a = RandomNormalValues(rows * n, 7), b = RandomNormalValues(n, 8);
    std::vector<float> dots(rows);
    DotF32Rows(a.data(), rows, b.data(), n, dots.data());
    std::vector<float> alphas = RandomNormalValues(rows, 9);
    std::vector<float> y1 = RandomNormalValues(rows * n, 10), y2 = y1;
    AxpyF32Rows(alphas.data(), rows, b.data(), n, y1.data());
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(dots[r], DotF32(a.data() + r * n, b.data(), n));  // bitwise
      AxpyF32(alphas[r], b.data(), n, y2.data() + r * n);
    }
    EXPECT_EQ(y1, y2);
  }
}

// A weight keeps its own copy of the bytes, packed or as stored (on every path, including types
// without a packed form): overwriting the source after Create changes no output.
TEST(LinearTest, AWeightNeedsItsSourceBytesOnlyDuringCreate) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  constexpr int64_t kRows = 32, kCols = 256, kM = 3;
  const std::vector<float> x = RandomNormalValues(kM * kCols, 8);
  for (GgmlType type : kTypes) {
    TestWeight weight = MakeWeight(type, kRows, kCols, 7);
    auto created = LinearWeight::Create(type, weight.bytes.data(), kRows, kCols);
    ASSERT_TRUE(created.ok()) << created.error();
    std::vector<float> before(kM * kRows), after(kM * kRows);
    Linear(**created, x.data(), kM, before.data(), pool);
    std::fill(weight.bytes.begin(), weight.bytes.end(), uint8_t{0x5a});
    Linear(**created, x.data(), kM, after.data(), pool);
    EXPECT_EQ(before, after) << GetSupportedTypeTraits(type)->name;
  }
}

TEST(LinearTest, CreateRejectsBadShapes) {
  std::vector<uint8_t> bytes(1024);
  EXPECT_FALSE(LinearWeight::Create(GgmlType::kQ8_0, bytes.data(), 2, 33).ok());
  EXPECT_FALSE(LinearWeight::Create(GgmlType::kQ4_K, bytes.data(), 2, 96).ok());
  EXPECT_FALSE(LinearWeight::Create(GgmlType::kQ8_K, bytes.data(), 2, 256).ok());
  EXPECT_TRUE(LinearWeight::Create(GgmlType::kF32, bytes.data(), 2, 33).ok());
}

}  // namespace
}  // namespace vllm::kernels
