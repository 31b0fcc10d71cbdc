// WeightLoader and the source's input orders (GPTQ desc_act, compressed-tensors actorder): a
// linear weight computes its product over x's columns in its order, and parts are fused only when
// they share one.
#include "model/weight_loader.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernels/random_values_for_test.h"
#include "model/layers/gated_mlp.h"
#include "model/layers/qkv_projection.h"
#include "model/memory_tensor_source_for_test.h"

namespace vllm {
namespace {

constexpr int64_t kCols = 64;  // in_features of every weight here

// A source of F32 weights [rows, kCols] with random values, by name, and their values.
struct Weights {
  MemoryTensorSource source;
  std::map<std::string, std::vector<float>> values;
  void Add(const std::string& name, int64_t rows, uint32_t seed) {
    values[name] = kernels::RandomNormalValues(rows * kCols, seed);
    source.Add(name, GgmlType::kF32, {kCols, rows}, FloatBytes(values[name]));
  }
  // Stacked experts: one 3-D tensor [num_experts, rows, kCols].
  void AddExperts(const std::string& name, int64_t num_experts, int64_t rows, uint32_t seed) {
    values[name] = kernels::RandomNormalValues(num_experts * rows * kCols, seed);
    source.Add(name, GgmlType::kF32, {kCols, rows, num_experts}, FloatBytes(values[name]));
  }
};

// y: [m, rows] = W x' for weight `values` ([rows, kCols] f32 from `first_row` on) over `x`'s
// columns in `order` (empty: as they are), through the kernels directly.
std::vector<float> Reference(const std::vector<float>& values, int64_t first_row, int64_t rows,
                             const std::vector<float>& x, int64_t m,
                             const std::vector<int32_t>& order, ThreadPool& pool) {
  auto weight =
      kernels::LinearWeight::Create(GgmlType::kF32, values.data() + first_row * kCols, rows, kCols);
  EXPECT_TRUE(weight.ok()) << weight.error();
  const std::vector<float> input = order.empty() ? x : kernels::PermutedColumns(x, m, order);
  std::vector<float> y(m * rows);
  kernels::Linear(**weight, input.data(), m, y.data(), pool);
  return y;
}

// Columns [first, first + width) of y: [m, row_length].
std::vector<float> Columns(const std::vector<float>& y, int64_t m, int64_t row_length,
                           int64_t first, int64_t width) {
  std::vector<float> columns;
  for (int64_t i = 0; i < m; ++i) {
    columns.insert(columns.end(), y.begin() + i * row_length + first,
                   y.begin() + i * row_length + first + width);
  }
  return columns;
}

void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected,
                 const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    // f32 products of kCols terms of O(1), summed in possibly another order.
    ASSERT_NEAR(actual[i], expected[i], 1e-4f) << what << " value " << i;
  }
}

TEST(WeightLoaderTest, LinearComputesOverTheSourcesInputOrder) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t rows = 32, m = 3;
  Weights w;
  w.Add("ordered.weight", rows, 1);
  w.Add("plain.weight", rows, 2);
  const std::vector<int32_t> order = kernels::RandomPermutation(kCols, 3);
  w.source.SetInputOrder("ordered.weight", order);
  const std::vector<float> x = kernels::RandomNormalValues(m * kCols, 4);
  WeightLoader loader(w.source);
  for (const auto& [name, name_order] :
       {std::pair{"ordered.weight", order}, std::pair{"plain.weight", std::vector<int32_t>()}}) {
    auto weight = loader.Linear(name, rows, kCols);
    ASSERT_TRUE(weight.ok()) << weight.error();
    EXPECT_EQ((*weight)->input_order(), name_order) << name;
    std::vector<float> y(m * rows);
    kernels::Linear(**weight, x.data(), m, y.data(), pool);
    EXPECT_EQ(y, Reference(w.values[name], 0, rows, x, m, name_order, pool)) << name;  // bitwise
  }

  // Converted at load (linear_type), the weight keeps its order: the same product as the
  // converted weight without one over the permuted columns.
  WeightLoader converting(w.source, GgmlType::kQ8_0);
  auto converted = converting.Linear("ordered.weight", rows, kCols);
  ASSERT_TRUE(converted.ok()) << converted.error();
  EXPECT_EQ((*converted)->type(), GgmlType::kQ8_0);
  EXPECT_EQ((*converted)->input_order(), order);
  const int64_t q8_row_bytes = RowBytes(*GetSupportedTypeTraits(GgmlType::kQ8_0), kCols);
  std::vector<uint8_t> q8_bytes(rows * q8_row_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::QuantizeRow(GgmlType::kQ8_0, w.values["ordered.weight"].data() + r * kCols, kCols,
                         q8_bytes.data() + r * q8_row_bytes);
  }
  auto q8_plain = kernels::LinearWeight::Create(GgmlType::kQ8_0, q8_bytes.data(), rows, kCols);
  ASSERT_TRUE(q8_plain.ok()) << q8_plain.error();
  const std::vector<float> permuted = kernels::PermutedColumns(x, m, order);
  std::vector<float> y(m * rows), expected(m * rows);
  kernels::Linear(**converted, x.data(), m, y.data(), pool);
  kernels::Linear(**q8_plain, permuted.data(), m, expected.data(), pool);
  EXPECT_EQ(y, expected);
}

TEST(WeightLoaderTest, ABadInputOrderIsAnErrorNamingTheTensor) {
  Weights w;
  w.Add("blk.0.attn_q.weight", 8, 5);
  w.source.SetInputOrder("blk.0.attn_q.weight", std::vector<int32_t>(kCols, 0));
  WeightLoader loader(w.source);
  auto weight = loader.Linear("blk.0.attn_q.weight", 8, kCols);
  ASSERT_FALSE(weight.ok());
  EXPECT_EQ(weight.error(),
            "tensor 'blk.0.attn_q.weight': input order repeats column 0 (at entry 1)");
}

// Q/K/V of a GPTQ desc_act checkpoint: each projection has its own order, so they are not fused,
// and QkvProjection computes each over its own; parts that share an order fuse with it.
TEST(WeightLoaderTest, PartsFuseOnlyWhenTheyShareAnInputOrder) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t q_size = 32, kv_size = 16, m = 4;
  const std::string q = "blk.0.attn_q.weight", k = "blk.0.attn_k.weight", v = "blk.0.attn_v.weight";
  Weights w;
  w.Add(q, q_size, 10);
  w.Add(k, kv_size, 11);
  w.Add(v, kv_size, 12);
  const std::vector<float> x = kernels::RandomNormalValues(m * kCols, 13);
  const std::vector<WeightLoader::FusedPart> parts = {{q, q_size}, {k, kv_size}, {v, kv_size}};

  // One part with an order, the others without: not fused either.
  const std::vector<int32_t> shared = kernels::RandomPermutation(kCols, 14);
  w.source.SetInputOrder(q, shared);
  {
    WeightLoader loader(w.source);
    auto fused = loader.FusedLinear(parts, kCols);
    ASSERT_TRUE(fused.ok()) << fused.error();
    EXPECT_EQ(*fused, nullptr);
  }

  // All three with one order: fused, with that order.
  w.source.SetInputOrder(k, shared);
  w.source.SetInputOrder(v, shared);
  {
    WeightLoader loader(w.source);
    auto fused = loader.FusedLinear(parts, kCols);
    ASSERT_TRUE(fused.ok()) << fused.error();
    ASSERT_NE(*fused, nullptr);
    EXPECT_EQ((*fused)->input_order(), shared);
    const int64_t width = q_size + 2 * kv_size;
    std::vector<float> y(m * width);
    kernels::Linear(**fused, x.data(), m, y.data(), pool);
    ExpectClose(Columns(y, m, width, 0, q_size),
                Reference(w.values[q], 0, q_size, x, m, shared, pool), "fused q");
    ExpectClose(Columns(y, m, width, q_size, kv_size),
                Reference(w.values[k], 0, kv_size, x, m, shared, pool), "fused k");
    ExpectClose(Columns(y, m, width, q_size + kv_size, kv_size),
                Reference(w.values[v], 0, kv_size, x, m, shared, pool), "fused v");
  }

  // Three orders: not fused; QkvProjection loads them one by one, each with its own.
  const std::vector<int32_t> k_order = kernels::RandomPermutation(kCols, 15),
                             v_order = kernels::RandomPermutation(kCols, 16);
  w.source.SetInputOrder(k, k_order);
  w.source.SetInputOrder(v, v_order);
  WeightLoader loader(w.source);
  auto fused = loader.FusedLinear(parts, kCols);
  ASSERT_TRUE(fused.ok()) << fused.error();
  EXPECT_EQ(*fused, nullptr);
  QkvProjection qkv;
  ASSERT_TRUE(qkv.Load(loader, "blk.0.", kCols, q_size, kv_size).ok());
  std::vector<float> q_out(m * q_size), k_out(m * kv_size), v_out(m * kv_size);
  qkv.Forward(x.data(), m, pool, q_out.data(), k_out.data(), v_out.data());
  EXPECT_EQ(q_out, Reference(w.values[q], 0, q_size, x, m, shared, pool));
  EXPECT_EQ(k_out, Reference(w.values[k], 0, kv_size, x, m, k_order, pool));
  EXPECT_EQ(v_out, Reference(w.values[v], 0, kv_size, x, m, v_order, pool));
}

// Gate and up: one pair weight with their shared order, or, with different orders, none (and
// GatedMlp computes each over its own order).
TEST(WeightLoaderTest, GatedPairsFuseOnlyWhenGateAndUpShareAnInputOrder) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t ffn = 64, m = 3;
  const std::string gate = "blk.0.ffn_gate.weight", up = "blk.0.ffn_up.weight",
                    down = "blk.0.ffn_down.weight";
  Weights w;
  w.Add(gate, ffn, 20);
  w.Add(up, ffn, 21);
  // ffn_down: [kCols, ffn], in_features ffn = kCols here.
  w.Add(down, kCols, 22);
  const std::vector<float> x = kernels::RandomNormalValues(m * kCols, 23);
  const std::vector<int32_t> shared = kernels::RandomPermutation(kCols, 24);
  w.source.SetInputOrder(gate, shared);
  w.source.SetInputOrder(up, shared);
  auto gated_expected = [&](const std::vector<int32_t>& gate_order,
                            const std::vector<int32_t>& up_order) {
    const std::vector<float> gate_y = Reference(w.values[gate], 0, ffn, x, m, gate_order, pool);
    const std::vector<float> up_y = Reference(w.values[up], 0, ffn, x, m, up_order, pool);
    std::vector<float> out(m * ffn);
    kernels::SiluMul(gate_y.data(), up_y.data(), m * ffn, out.data());
    return out;
  };
  {
    WeightLoader loader(w.source);
    auto pair = loader.GatedPairLinear(gate, up, ffn, kCols);
    ASSERT_TRUE(pair.ok()) << pair.error();
    ASSERT_NE(*pair, nullptr);
    EXPECT_EQ((*pair)->input_order(), shared);
    std::vector<float> out(m * ffn);
    kernels::GatedLinear(**pair, x.data(), m, kernels::GateActivation::kSilu, out.data(), pool);
    ExpectClose(out, gated_expected(shared, shared), "gated pair");
  }
  const std::vector<int32_t> up_order = kernels::RandomPermutation(kCols, 25);
  w.source.SetInputOrder(up, up_order);
  WeightLoader loader(w.source);
  auto pair = loader.GatedPairLinear(gate, up, ffn, kCols);
  ASSERT_TRUE(pair.ok()) << pair.error();
  EXPECT_EQ(*pair, nullptr);
  GatedMlp mlp;
  ASSERT_TRUE(mlp.Load(loader, "blk.0.", kCols, ffn, GateActivation::kSilu).ok());
  std::vector<float> out(m * kCols);
  mlp.Forward(x.data(), m, pool, out.data());
  const std::vector<float> activations = gated_expected(shared, up_order);
  EXPECT_EQ(out, Reference(w.values[down], 0, kCols, activations, m, {}, pool));
}

// Experts: stacked gate / up fuse per expert only with one order (which each expert takes);
// one tensor per expert fuses only when every expert's gate and up share theirs.
TEST(WeightLoaderTest, ExpertsFuseOnlyWhenGateAndUpShareAnInputOrder) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const int64_t num_experts = 3, rows = 32, m = 2;
  const std::vector<float> x = kernels::RandomNormalValues(m * kCols, 30);
  const std::vector<int32_t> shared = kernels::RandomPermutation(kCols, 31),
                             other = kernels::RandomPermutation(kCols, 32);

  const std::string gate = "blk.0.ffn_gate_exps.weight", up = "blk.0.ffn_up_exps.weight";
  Weights stacked;
  stacked.AddExperts(gate, num_experts, rows, 33);
  stacked.AddExperts(up, num_experts, rows, 34);
  stacked.source.SetInputOrder(gate, shared);
  stacked.source.SetInputOrder(up, shared);
  {
    WeightLoader loader(stacked.source);
    auto experts = loader.FusedExpertLinears(gate, up, num_experts, rows, kCols);
    ASSERT_TRUE(experts.ok()) << experts.error();
    ASSERT_EQ(experts->size(), static_cast<size_t>(num_experts));
    for (int64_t e = 0; e < num_experts; ++e) {
      const auto& expert = (*experts)[e];
      EXPECT_EQ(expert->input_order(), shared);
      std::vector<float> y(m * 2 * rows);
      kernels::Linear(*expert, x.data(), m, y.data(), pool);
      ExpectClose(Columns(y, m, 2 * rows, 0, rows),
                  Reference(stacked.values[gate], e * rows, rows, x, m, shared, pool), "gate");
      ExpectClose(Columns(y, m, 2 * rows, rows, rows),
                  Reference(stacked.values[up], e * rows, rows, x, m, shared, pool), "up");
    }
  }
  stacked.source.SetInputOrder(up, other);
  {
    WeightLoader loader(stacked.source);
    auto experts = loader.FusedExpertLinears(gate, up, num_experts, rows, kCols);
    ASSERT_TRUE(experts.ok()) << experts.error();
    EXPECT_TRUE(experts->empty());
    auto ups = loader.ExpertLinears(up, num_experts, rows, kCols);
    ASSERT_TRUE(ups.ok()) << ups.error();
    for (int64_t e = 0; e < num_experts; ++e) {
      std::vector<float> y(m * rows);
      kernels::Linear(*(*ups)[e], x.data(), m, y.data(), pool);
      EXPECT_EQ(y, Reference(stacked.values[up], e * rows, rows, x, m, other, pool)) << e;
    }
  }

  // One tensor per expert (Hugging Face checkpoints), each expert's gate and up with its own
  // order: the last expert's differ.
  Weights per_expert;
  for (int64_t e = 0; e < num_experts; ++e) {
    const std::string suffix = "." + std::to_string(e) + ".weight";
    per_expert.Add("blk.0.ffn_gate" + suffix, rows, static_cast<uint32_t>(40 + e));
    per_expert.Add("blk.0.ffn_up" + suffix, rows, static_cast<uint32_t>(50 + e));
    const std::vector<int32_t> order =
        kernels::RandomPermutation(kCols, static_cast<uint32_t>(60 + e));
    per_expert.source.SetInputOrder("blk.0.ffn_gate" + suffix, order);
    per_expert.source.SetInputOrder("blk.0.ffn_up" + suffix, e + 1 < num_experts ? order : other);
  }
  WeightLoader loader(per_expert.source);
  auto experts = loader.FusedExpertLinears(gate, up, num_experts, rows, kCols);
  ASSERT_TRUE(experts.ok()) << experts.error();
  EXPECT_TRUE(experts->empty());
  auto gates = loader.ExpertLinears(gate, num_experts, rows, kCols);
  ASSERT_TRUE(gates.ok()) << gates.error();
  for (int64_t e = 0; e < num_experts; ++e) {
    const std::string name = "blk.0.ffn_gate." + std::to_string(e) + ".weight";
    EXPECT_EQ((*gates)[e]->input_order(), *per_expert.source.InputOrder(name));
    std::vector<float> y(m * rows);
    kernels::Linear(*(*gates)[e], x.data(), m, y.data(), pool);
    EXPECT_EQ(y, Reference(per_expert.values[name], 0, rows, x, m,
                           *per_expert.source.InputOrder(name), pool))
        << e;
  }
}

}  // namespace
}  // namespace vllm
