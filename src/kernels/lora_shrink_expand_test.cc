#include "kernels/lora_shrink_expand.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"
#include "kernels/random_values_for_test.h"
#include "kernels/row_conversions.h"

namespace vllm::kernels {
namespace {

// The product in double precision, one row at a time: y[row] + (x[row] · Aᵀ) · Bᵀ.
std::vector<double> ReferenceRow(const std::vector<float>& x_row, const std::vector<float>& a,
                                 const std::vector<float>& b, int64_t rank, int64_t out,
                                 const float* y_row) {
  const auto in = static_cast<int64_t>(x_row.size());
  std::vector<double> shrunk(rank, 0.0);
  for (int64_t r = 0; r < rank; ++r) {
    for (int64_t j = 0; j < in; ++j) shrunk[r] += double{a[r * in + j]} * x_row[j];
  }
  std::vector<double> result(out);
  for (int64_t o = 0; o < out; ++o) {
    result[o] = y_row[o];
    for (int64_t r = 0; r < rank; ++r) result[o] += double{b[o * rank + r]} * shrunk[r];
  }
  return result;
}

TEST(LoraShrinkExpandTest, MatchesADoublePrecisionReferencePerSegment) {
  ThreadPool pool({.num_threads = 3});
  const int64_t in = 96, out = 1100, num_rows = 7;  // out spans several expand passes
  const std::vector<float> x = RandomNormalValues(num_rows * in, 1);
  const std::vector<float> y_before = RandomNormalValues(num_rows * out, 2);
  const std::vector<float> a8 = RandomNormalValues(8 * in, 3), b8 = RandomNormalValues(out * 8, 4);
  const std::vector<float> a16 = RandomNormalValues(16 * in, 5);
  const std::vector<float> b16 = RandomNormalValues(out * 16, 6);
  // Rows 0, 3, 5 run the rank-8 adapter, rows 1, 6 the rank-16 one; rows 2, 4 none.
  const std::vector<int32_t> rows8 = {0, 3, 5}, rows16 = {6, 1};
  const std::vector<LoraSegment> segments = {{a8.data(), b8.data(), 8, rows8},
                                             {a16.data(), b16.data(), 16, rows16}};
  std::vector<float> y = y_before;
  LoraShrinkExpand(segments,
                   {.in_features = in, .x_stride = in, .out_features = out, .y_stride = out},
                   x.data(), y.data(), pool);
  for (int64_t row = 0; row < num_rows; ++row) {
    const std::vector<float> x_row(x.begin() + row * in, x.begin() + (row + 1) * in);
    const float* y_row = y_before.data() + row * out;
    const bool runs8 = row == 0 || row == 3 || row == 5, runs16 = row == 1 || row == 6;
    for (int64_t o = 0; o < out; ++o) {
      if (!runs8 && !runs16) {
        ASSERT_EQ(y[row * out + o], y_row[o]) << "row " << row << " runs no adapter";
        continue;
      }
      const std::vector<double> want = runs8 ? ReferenceRow(x_row, a8, b8, 8, out, y_row)
                                             : ReferenceRow(x_row, a16, b16, 16, out, y_row);
      ASSERT_NEAR(y[row * out + o], want[o], 1e-3 * (1.0 + std::abs(want[o])))
          << "row " << row << " column " << o;
    }
  }
}

TEST(LoraShrinkExpandTest, AColumnSliceOfAWiderOutputLeavesTheOtherColumnsAlone) {
  ThreadPool pool({.num_threads = 2});
  const int64_t in = 32, out = 48, width = 100, offset = 20, num_rows = 3;
  const std::vector<float> x = RandomNormalValues(num_rows * in, 7);
  const std::vector<float> a = RandomNormalValues(4 * in, 8), b = RandomNormalValues(out * 4, 9);
  const std::vector<float> y_before = RandomNormalValues(num_rows * width, 10);
  const std::vector<int32_t> rows = {0, 1, 2};
  const std::vector<LoraSegment> segments = {{a.data(), b.data(), 4, rows}};
  std::vector<float> y = y_before;
  LoraShrinkExpand(segments,
                   {.in_features = in, .x_stride = in, .out_features = out, .y_stride = width},
                   x.data(), y.data() + offset, pool);
  for (int64_t row = 0; row < num_rows; ++row) {
    const std::vector<float> x_row(x.begin() + row * in, x.begin() + (row + 1) * in);
    const std::vector<double> want =
        ReferenceRow(x_row, a, b, 4, out, y_before.data() + row * width + offset);
    for (int64_t c = 0; c < width; ++c) {
      const float got = y[row * width + c];
      if (c < offset || c >= offset + out) {
        ASSERT_EQ(got, y_before[row * width + c]) << "column " << c;
      } else {
        ASSERT_NEAR(got, want[c - offset], 1e-4 * (1.0 + std::abs(want[c - offset])));
      }
    }
  }
}

std::vector<uint16_t> ToBf16(const std::vector<float>& values) {
  std::vector<uint16_t> rounded(values.size());
  QuantizeRowBf16(values.data(), static_cast<int64_t>(values.size()), rounded.data());
  return rounded;
}

std::vector<float> Widened(const std::vector<uint16_t>& values) {
  std::vector<float> widened(values.size());
  DequantizeRowBf16(values.data(), static_cast<int64_t>(values.size()), widened.data());
  return widened;
}

// Batch invariance: a row's result is bit for bit the same alone or among many rows, on any
// number of threads, for adapters stored in f32 and in bf16.
TEST(LoraShrinkExpandTest, ARowsResultDoesNotDependOnItsSegmentOrThreads) {
  const int64_t in = 200, out = 600, num_rows = 33, rank = 16;
  const std::vector<float> x = RandomNormalValues(num_rows * in, 11);
  const std::vector<float> a = RandomNormalValues(rank * in, 12);
  const std::vector<float> b = RandomNormalValues(out * rank, 13);
  const std::vector<uint16_t> a_bf16 = ToBf16(a), b_bf16 = ToBf16(b);  // b_bf16 read as Bᵀ
  const LoraProductShape shape{
      .in_features = in, .x_stride = in, .out_features = out, .y_stride = out};
  std::vector<int32_t> all_rows;
  for (int32_t row = 0; row < num_rows; ++row) all_rows.push_back(row);
  ThreadPool many({.num_threads = 4});
  ThreadPool one({.num_threads = 1});
  for (LoraWeightType type : {LoraWeightType::kF32, LoraWeightType::kBf16}) {
    const bool bf16 = type == LoraWeightType::kBf16;
    const void* a_data = bf16 ? static_cast<const void*>(a_bf16.data()) : a.data();
    const void* b_data = bf16 ? static_cast<const void*>(b_bf16.data()) : b.data();
    std::vector<float> batched(num_rows * out, 0.5f);
    const std::vector<LoraSegment> whole = {{a_data, b_data, rank, all_rows, type}};
    LoraShrinkExpand(whole, shape, x.data(), batched.data(), many);
    for (int32_t row : {0, 17, 32}) {
      std::vector<float> alone(num_rows * out, 0.5f);
      const std::vector<int32_t> just_row = {row};
      const std::vector<LoraSegment> single = {{a_data, b_data, rank, just_row, type}};
      LoraShrinkExpand(single, shape, x.data(), alone.data(), one);
      for (int64_t o = 0; o < out; ++o) {
        ASSERT_EQ(alone[row * out + o], batched[row * out + o])
            << (bf16 ? "bf16" : "f32") << " row " << row << " col " << o;
      }
    }
  }
}

// A bf16 adapter (A and Bᵀ rounded) computes the product of its widened values, over every
// expand pass and several runs of rows, and leaves the rows without it alone.
TEST(LoraShrinkExpandTest, ABf16AdapterComputesTheProductOfItsWidenedValues) {
  const int64_t in = 150, out = 1100, num_rows = 11, rank = 16;
  const std::vector<float> x = RandomNormalValues(num_rows * in, 21);
  const std::vector<uint16_t> a_bf16 = ToBf16(RandomNormalValues(rank * in, 22));
  const std::vector<uint16_t> b_transposed_bf16 = ToBf16(RandomNormalValues(rank * out, 23));
  const std::vector<float> a = Widened(a_bf16), b_transposed = Widened(b_transposed_bf16);
  std::vector<float> b(out * rank);  // [out, rank]
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t r = 0; r < rank; ++r) b[o * rank + r] = b_transposed[r * out + o];
  }
  const std::vector<int32_t> rows = {0, 2, 3, 4, 5, 7, 8, 9, 10};  // rows 1 and 6 run none
  ThreadPool pool({.num_threads = 2});
  const std::vector<float> y_before = RandomNormalValues(num_rows * out, 24);
  std::vector<float> y = y_before;
  const std::vector<LoraSegment> segments = {
      {a_bf16.data(), b_transposed_bf16.data(), rank, rows, LoraWeightType::kBf16}};
  LoraShrinkExpand(segments,
                   {.in_features = in, .x_stride = in, .out_features = out, .y_stride = out},
                   x.data(), y.data(), pool);
  for (int64_t row = 0; row < num_rows; ++row) {
    const float* y_row = y_before.data() + row * out;
    const bool runs = row != 1 && row != 6;
    const std::vector<float> x_row(x.begin() + row * in, x.begin() + (row + 1) * in);
    const std::vector<double> want = ReferenceRow(x_row, a, b, rank, out, y_row);
    for (int64_t o = 0; o < out; ++o) {
      if (!runs) {
        ASSERT_EQ(y[row * out + o], y_row[o]) << "row " << row << " runs no adapter";
      } else {
        ASSERT_NEAR(y[row * out + o], want[o], 1e-3 * (1.0 + std::abs(want[o])))
            << "row " << row << " column " << o;
      }
    }
  }
}

// AxpyBf16 is AxpyF32 on the widened x, bit for bit, with and without a partial chunk.
TEST(LoraShrinkExpandTest, AxpyBf16EqualsAxpyF32OnTheWidenedValues) {
  for (int64_t n : {1, 16, 37, 200}) {
    const std::vector<uint16_t> x_bf16 = ToBf16(RandomNormalValues(n, 41));
    const std::vector<float> x = Widened(x_bf16);
    std::vector<float> from_f32 = RandomNormalValues(n, 42), from_bf16 = from_f32;
    AxpyF32(-0.75f, x.data(), n, from_f32.data());
    AxpyBf16(-0.75f, x_bf16.data(), n, from_bf16.data());
    EXPECT_EQ(from_bf16, from_f32) << "n " << n;
  }
}

// DotBf16Rows is DotF32Rows on the widened rows, bit for bit, for widths that keep the vector
// in registers (<= 64), that do not, and that end in a partial chunk.
TEST(LoraShrinkExpandTest, DotBf16RowsEqualsDotF32RowsOnTheWidenedRows) {
  const int64_t num_rows = 5;
  for (int64_t n : {1, 16, 37, 64, 65, 200}) {
    const std::vector<uint16_t> a_bf16 = ToBf16(RandomNormalValues(num_rows * n, 31));
    const std::vector<float> a = Widened(a_bf16);
    const std::vector<float> v = RandomNormalValues(n, 32);
    std::vector<float> from_f32(num_rows), from_bf16(num_rows);
    DotF32Rows(a.data(), num_rows, v.data(), n, from_f32.data());
    DotBf16Rows(a_bf16.data(), num_rows, v.data(), n, from_bf16.data());
    for (int64_t r = 0; r < num_rows; ++r) {
      ASSERT_EQ(from_bf16[r], from_f32[r]) << "n " << n << " row " << r;
    }
  }
}

// The group form (q, k and v of one x in one call) gives every row of every output exactly its
// documented arithmetic: t = DotBf16Rows of A with the row, then the expand summed from 0 by
// AxpyBf16 over r in order and added to y; for ranks that are no multiple of the tiles' 4, widths
// that end in partial chunks and partial tiles, and segments of 1 to 6 rows.
TEST(LoraShrinkExpandTest, GroupRowsAreTheirDotsAndAxpysBitForBit) {
  const int64_t in = 37, num_rows = 12;
  const std::vector<float> x = RandomNormalValues(num_rows * in, 51);
  struct Adapter {
    int64_t rank, out;
    std::vector<uint16_t> a, b_transposed;
  };
  // Outputs 0 and 1, each with two adapters of ranks 6 and 16 (5 and 3 on output 1).
  const int64_t outs[2] = {150, 29};
  const int64_t ranks[2][2] = {{6, 16}, {5, 3}};
  std::vector<Adapter> adapters;
  for (int o = 0; o < 2; ++o) {
    for (int s = 0; s < 2; ++s) {
      const int64_t rank = ranks[o][s];
      adapters.push_back({rank, outs[o], ToBf16(RandomNormalValues(rank * in, 52 + 2 * o + s)),
                          ToBf16(RandomNormalValues(rank * outs[o], 62 + 2 * o + s))});
    }
  }
  const std::vector<int32_t> rows_first = {0, 2, 3, 5, 8, 11}, rows_second = {1, 6, 7};
  const std::vector<int32_t>* segment_rows[2] = {&rows_first, &rows_second};
  std::vector<std::vector<LoraSegment>> segments(2);
  for (int o = 0; o < 2; ++o) {
    for (int s = 0; s < 2; ++s) {
      const Adapter& adapter = adapters[2 * o + s];
      segments[o].push_back({adapter.a.data(), adapter.b_transposed.data(), adapter.rank,
                             *segment_rows[s], LoraWeightType::kBf16});
    }
  }
  const std::vector<float> y0_before = RandomNormalValues(num_rows * outs[0], 71);
  const std::vector<float> y1_before = RandomNormalValues(num_rows * outs[1], 72);
  std::vector<float> y0 = y0_before, y1 = y1_before;
  const std::vector<LoraOutput> outputs = {{segments[0], outs[0], y0.data(), outs[0]},
                                           {segments[1], outs[1], y1.data(), outs[1]}};
  ThreadPool pool({.num_threads = 3});
  LoraShrinkExpandGroup(outputs, x.data(), in, in, pool);
  for (int o = 0; o < 2; ++o) {
    const std::vector<float>& before = o == 0 ? y0_before : y1_before;
    const std::vector<float>& got = o == 0 ? y0 : y1;
    const int64_t out = outs[o];
    for (int64_t row = 0; row < num_rows; ++row) {
      std::vector<float> want(before.begin() + row * out, before.begin() + (row + 1) * out);
      for (int s = 0; s < 2; ++s) {
        const std::vector<int32_t>& rows = *segment_rows[s];
        if (std::find(rows.begin(), rows.end(), row) == rows.end()) continue;
        const Adapter& adapter = adapters[2 * o + s];
        std::vector<float> t(adapter.rank), delta(out, 0.0f);
        DotBf16Rows(adapter.a.data(), adapter.rank, x.data() + row * in, in, t.data());
        for (int64_t r = 0; r < adapter.rank; ++r) {
          AxpyBf16(t[r], adapter.b_transposed.data() + r * out, out, delta.data());
        }
        AxpyF32(1.0f, delta.data(), out, want.data());
      }
      for (int64_t c = 0; c < out; ++c) {
        ASSERT_EQ(got[row * out + c], want[c]) << "output " << o << " row " << row << " col " << c;
      }
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
