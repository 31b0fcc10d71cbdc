#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/cpu_features.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

const GgmlType kTypes[] = {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                           GgmlType::kQ4_0};

std::vector<Isa> AvailableIsas() {
  std::vector<Isa> isas = {Isa::kScalar};
  const CpuFeatures& features = GetCpuFeatures();
  if (features.HasAvx2Path()) isas.push_back(Isa::kAvx2);
  if (BestIsa() == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  return isas;
}

std::vector<float> RandomValues(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (auto& v : values) v = normal(rng);
  return values;
}

// A random weight of the given type: [rows, cols].
struct TestWeight {
  std::vector<uint8_t> bytes;
  WeightView view;
};
TestWeight MakeWeight(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  TestWeight weight;
  const int64_t row_bytes = RowBytes(*GetSupportedTypeTraits(type), cols);
  weight.bytes.resize(rows * row_bytes);
  std::vector<float> values = RandomValues(rows * cols, seed);
  for (int64_t r = 0; r < rows; ++r) {
    QuantizeRow(type, values.data() + r * cols, cols, weight.bytes.data() + r * row_bytes);
  }
  weight.view = {type, weight.bytes.data(), rows, cols, row_bytes};
  return weight;
}

struct Shape {
  int64_t rows, cols, m;
};

TEST(LinearTest, EveryPathMatchesTheScalarReference) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const Shape shapes[] = {{1, 32, 1}, {7, 64, 3}, {33, 96, 5}, {17, 2080, 17}, {50, 2048, 1}};
  for (GgmlType type : kTypes) {
    for (const Shape& shape : shapes) {
      TestWeight weight = MakeWeight(type, shape.rows, shape.cols, 1);
      std::vector<float> x = RandomValues(shape.m * shape.cols, 2);
      std::vector<float> expected(shape.m * shape.rows);
      LinearWithIsa(Isa::kScalar, weight.view, x.data(), shape.m, expected.data(), pool);
      for (Isa isa : AvailableIsas()) {
        std::vector<float> y(shape.m * shape.rows);
        LinearWithIsa(isa, weight.view, x.data(), shape.m, y.data(), pool);
        for (size_t i = 0; i < y.size(); ++i) {
          // Only the summation order differs: relative to the size of the terms.
          const float tolerance = 2e-5f * std::sqrt(static_cast<float>(shape.cols)) *
                                  std::max(1.0f, std::fabs(expected[i]));
          ASSERT_NEAR(y[i], expected[i], tolerance)
              << GetSupportedTypeTraits(type)->name << " " << IsaName(isa) << " rows " << shape.rows
              << " cols " << shape.cols << " m " << shape.m << " at " << i;
        }
      }
    }
  }
}

TEST(LinearTest, ResultsDoNotDependOnBatchOrThreads) {
  ThreadPool one_thread(ThreadPool::Options{.num_threads = 1});
  ThreadPool two_threads(ThreadPool::Options{.num_threads = 2});
  const int64_t rows = 45, cols = 160, m = 37;
  for (GgmlType type : kTypes) {
    TestWeight weight = MakeWeight(type, rows, cols, 3);
    std::vector<float> x = RandomValues(m * cols, 4);
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

// Q8_0 / Q4_0 / BF16 weights with rows in groups of 16 are packed for AVX-512 by Create;
// the public Linear must then agree with the reference and stay batch and thread invariant.
TEST(LinearTest, PackedWeightsMatchTheReferenceAndAreBatchInvariant) {
  if (BestIsa() != Isa::kAvx512) GTEST_SKIP() << "no AVX-512 VNNI / BF16 on this CPU";
  ThreadPool one_thread(ThreadPool::Options{.num_threads = 1});
  ThreadPool two_threads(ThreadPool::Options{.num_threads = 2});
  const Shape shapes[] = {{16, 32, 1}, {48, 96, 13}, {64, 2080, 21}};
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kBF16}) {
    for (const Shape& shape : shapes) {
      const char* name = GetSupportedTypeTraits(type)->name;
      TestWeight weight = MakeWeight(type, shape.rows, shape.cols, 5);
      auto packed = LinearWeight::Create(type, weight.bytes.data(), shape.rows, shape.cols);
      ASSERT_TRUE(packed.ok()) << packed.error();
      std::vector<float> x = RandomValues(shape.m * shape.cols, 6);
      std::vector<float> expected(shape.m * shape.rows);
      LinearWithIsa(Isa::kScalar, weight.view, x.data(), shape.m, expected.data(), two_threads);
      std::vector<float> batched(shape.m * shape.rows);
      Linear(**packed, x.data(), shape.m, batched.data(), two_threads);
      for (size_t i = 0; i < batched.size(); ++i) {
        const float tolerance = 2e-5f * std::sqrt(static_cast<float>(shape.cols)) *
                                std::max(1.0f, std::fabs(expected[i]));
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

TEST(LinearTest, DotAndAxpyMatchScalar) {
  for (int64_t n : {1, 7, 16, 64, 100}) {
    std::vector<float> a = RandomValues(n, 5), b = RandomValues(n, 6);
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
    std::vector<float> a = RandomValues(rows * n, 7), b = RandomValues(n, 8);
    std::vector<float> dots(rows);
    DotF32Rows(a.data(), rows, b.data(), n, dots.data());
    std::vector<float> alphas = RandomValues(rows, 9);
    std::vector<float> y1 = RandomValues(rows * n, 10), y2 = y1;
    AxpyF32Rows(alphas.data(), rows, b.data(), n, y1.data());
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(dots[r], DotF32(a.data() + r * n, b.data(), n));  // bitwise
      AxpyF32(alphas[r], b.data(), n, y2.data() + r * n);
    }
    EXPECT_EQ(y1, y2);
  }
}

TEST(LinearTest, CreateRejectsBadShapes) {
  std::vector<uint8_t> bytes(1024);
  EXPECT_FALSE(LinearWeight::Create(GgmlType::kQ8_0, bytes.data(), 2, 33).ok());
  EXPECT_FALSE(LinearWeight::Create(GgmlType::kQ4_K, bytes.data(), 2, 256).ok());
  EXPECT_TRUE(LinearWeight::Create(GgmlType::kF32, bytes.data(), 2, 33).ok());
}

}  // namespace
}  // namespace vllm::kernels
