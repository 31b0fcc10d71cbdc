// The layers with LoRA adapters in the batch: each adapter's rows compute what the base weight
// plus B·A computes densely, rows without an adapter exactly what they compute without LoRA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random_values_for_test.h"
#include "model/forward_batch.h"
#include "model/layers/gated_mlp.h"
#include "model/layers/lora_segments.h"
#include "model/layers/qkv_projection.h"
#include "model/memory_tensor_source_for_test.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

using lora::LoraMatrices;
using lora::LoraTarget;
using lora::LoraWeights;
using ::testing::HasSubstr;

constexpr int64_t kHidden = 64;

// Values of size 1 / sqrt(cols) per entry, so that products of O(1) inputs stay O(1).
std::vector<float> RandomMatrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::vector<float> values = kernels::RandomNormalValues(rows * cols, seed);
  for (float& v : values) v /= std::sqrt(static_cast<float>(cols));
  return values;
}

LoraMatrices RandomLora(int64_t rank, int64_t in, int64_t out, uint32_t seed) {
  return {.rank = rank,
          .in_features = in,
          .out_features = out,
          .a = RandomMatrix(rank, in, seed),
          .b = RandomMatrix(out, rank, seed + 1)};
}

// W + B·A: [out, in].
std::vector<float> Merged(const std::vector<float>& w, const std::optional<LoraMatrices>& m) {
  std::vector<float> merged = w;
  if (!m) return merged;
  for (int64_t o = 0; o < m->out_features; ++o) {
    for (int64_t i = 0; i < m->in_features; ++i) {
      double sum = 0.0;
      for (int64_t r = 0; r < m->rank; ++r) {
        sum += double{m->b[o * m->rank + r]} * m->a[r * m->in_features + i];
      }
      merged[o * m->in_features + i] += static_cast<float>(sum);
    }
  }
  return merged;
}

// One layer's adapter.
LoraWeights OneLayerAdapter(const std::string& name, int64_t id) {
  LoraWeights adapter;
  adapter.name = name;
  adapter.id = id;
  adapter.layers.resize(1);
  return adapter;
}

// Sequences of 3, 2, 1 and 2 tokens: rows [0, 3), [3, 5), [5, 6), [6, 8).
ForwardBatch BatchOf(std::vector<const LoraWeights*> seq_loras) {
  ForwardBatch batch;
  batch.query_start_loc = {0, 3, 5, 6, 8};
  batch.seq_loras = std::move(seq_loras);
  return batch;
}
constexpr int64_t kNumTokens = 8;

// Rows [begin, end) of `got` against `want` within 1e-4, or bit for bit.
void ExpectRows(const std::vector<float>& got, const std::vector<float>& want, int64_t width,
                int64_t begin, int64_t end, bool exact, const std::string& what) {
  for (int64_t i = begin * width; i < end * width; ++i) {
    if (exact) {
      ASSERT_EQ(got[i], want[i]) << what << " element " << i;
    } else {
      ASSERT_NEAR(got[i], want[i], 1e-4) << what << " element " << i;
    }
  }
}

struct MlpWeights {
  std::vector<float> gate, up, down;
};

std::unique_ptr<GatedMlp> LoadMlp(const MlpWeights& w, int64_t ffn) {
  MemoryTensorSource source;
  source.Add("blk.0.ffn_gate.weight", GgmlType::kF32, {kHidden, ffn}, FloatBytes(w.gate));
  source.Add("blk.0.ffn_up.weight", GgmlType::kF32, {kHidden, ffn}, FloatBytes(w.up));
  source.Add("blk.0.ffn_down.weight", GgmlType::kF32, {ffn, kHidden}, FloatBytes(w.down));
  WeightLoader loader(source);
  auto mlp = std::make_unique<GatedMlp>();
  const Status loaded = mlp->Load(loader, "blk.0.", kHidden, ffn, GateActivation::kSilu);
  EXPECT_TRUE(loaded.ok()) << loaded.message();
  return mlp;
}

// ffn 128: gate and up take turns of 64 rows in the fused pair; ffn 96: one turn.
class GatedMlpLoraTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(GatedMlpLoraTest, AdapterRowsEqualMergedWeightsAndBaseRowsAreUntouched) {
  const int64_t ffn = GetParam();
  ThreadPool pool({.num_threads = 3});
  const MlpWeights base{RandomMatrix(ffn, kHidden, 1), RandomMatrix(ffn, kHidden, 2),
                        RandomMatrix(kHidden, ffn, 3)};
  // "all": gate, up and down, rank 8; "down": down only, rank 4.
  LoraWeights all = OneLayerAdapter("all", 1), down_only = OneLayerAdapter("down", 2);
  auto& all_targets = all.layers[0].targets;
  all_targets[static_cast<int>(LoraTarget::kGate)] = RandomLora(8, kHidden, ffn, 10);
  all_targets[static_cast<int>(LoraTarget::kUp)] = RandomLora(8, kHidden, ffn, 20);
  all_targets[static_cast<int>(LoraTarget::kDown)] = RandomLora(8, ffn, kHidden, 30);
  down_only.layers[0].targets[static_cast<int>(LoraTarget::kDown)] =
      RandomLora(4, ffn, kHidden, 40);
  auto merged = [&](const LoraWeights& adapter) {
    const auto& t = adapter.layers[0].targets;
    return MlpWeights{Merged(base.gate, t[static_cast<int>(LoraTarget::kGate)]),
                      Merged(base.up, t[static_cast<int>(LoraTarget::kUp)]),
                      Merged(base.down, t[static_cast<int>(LoraTarget::kDown)])};
  };

  const std::vector<float> x = kernels::RandomNormalValues(kNumTokens * kHidden, 50);
  auto run = [&](const GatedMlp& mlp, const LoraSegments* segments) {
    std::vector<float> out(kNumTokens * kHidden);
    mlp.Forward(x.data(), kNumTokens, pool, out.data(), {segments, 0});
    return out;
  };
  const std::unique_ptr<GatedMlp> mlp = LoadMlp(base, ffn);
  const ForwardBatch batch = BatchOf({&all, nullptr, &all, &down_only});
  const LoraSegments segments(batch);
  const std::vector<float> with_lora = run(*mlp, &segments);
  const std::vector<float> without = run(*mlp, nullptr);
  const std::vector<float> merged_all = run(*LoadMlp(merged(all), ffn), nullptr);
  const std::vector<float> merged_down = run(*LoadMlp(merged(down_only), ffn), nullptr);
  ExpectRows(with_lora, merged_all, kHidden, 0, 3, false, "sequence 0 (all)");
  ExpectRows(with_lora, without, kHidden, 3, 5, true, "sequence 1 (base)");
  ExpectRows(with_lora, merged_all, kHidden, 5, 6, false, "sequence 2 (all)");
  ExpectRows(with_lora, merged_down, kHidden, 6, 8, false, "sequence 3 (down)");
  // The adapters change their rows well beyond the tolerance.
  EXPECT_GT(
      std::abs(with_lora[0] - without[0]) + std::abs(with_lora[6 * kHidden] - without[6 * kHidden]),
      1e-2);
}

INSTANTIATE_TEST_SUITE_P(FfnWidths, GatedMlpLoraTest, ::testing::Values(128, 96));

// q: [64, 64], k / v: [32, 64]; as three tensors (fused at load) or stored fused (Phi-3).
class QkvProjectionLoraTest : public ::testing::TestWithParam<bool> {};

TEST_P(QkvProjectionLoraTest, AdapterRowsEqualMergedWeightsAndBaseRowsAreUntouched) {
  const bool stored_fused = GetParam();
  const int64_t q_size = 64, kv_size = 32;
  ThreadPool pool({.num_threads = 2});
  const std::vector<float> wq = RandomMatrix(q_size, kHidden, 1);
  const std::vector<float> wk = RandomMatrix(kv_size, kHidden, 2);
  const std::vector<float> wv = RandomMatrix(kv_size, kHidden, 3);
  LoraWeights adapter = OneLayerAdapter("qkv", 1);
  auto& targets = adapter.layers[0].targets;
  targets[static_cast<int>(LoraTarget::kQ)] = RandomLora(8, kHidden, q_size, 10);
  targets[static_cast<int>(LoraTarget::kK)] = RandomLora(8, kHidden, kv_size, 20);
  targets[static_cast<int>(LoraTarget::kV)] = RandomLora(8, kHidden, kv_size, 30);
  auto load = [&](const std::vector<float>& q, const std::vector<float>& k,
                  const std::vector<float>& v) {
    MemoryTensorSource source;
    if (stored_fused) {
      std::vector<float> qkv = q;
      qkv.insert(qkv.end(), k.begin(), k.end());
      qkv.insert(qkv.end(), v.begin(), v.end());
      source.Add("blk.0.attn_qkv.weight", GgmlType::kF32, {kHidden, q_size + 2 * kv_size},
                 FloatBytes(qkv));
    } else {
      source.Add("blk.0.attn_q.weight", GgmlType::kF32, {kHidden, q_size}, FloatBytes(q));
      source.Add("blk.0.attn_k.weight", GgmlType::kF32, {kHidden, kv_size}, FloatBytes(k));
      source.Add("blk.0.attn_v.weight", GgmlType::kF32, {kHidden, kv_size}, FloatBytes(v));
    }
    WeightLoader loader(source);
    auto projection = std::make_unique<QkvProjection>();
    const Status loaded = projection->Load(loader, "blk.0.", kHidden, q_size, kv_size);
    EXPECT_TRUE(loaded.ok()) << loaded.message();
    return projection;
  };
  const std::vector<float> x = kernels::RandomNormalValues(kNumTokens * kHidden, 50);
  struct Qkv {
    std::vector<float> q, k, v;
  };
  auto run = [&](const QkvProjection& projection, const LoraSegments* segments) {
    Qkv out{std::vector<float>(kNumTokens * q_size), std::vector<float>(kNumTokens * kv_size),
            std::vector<float>(kNumTokens * kv_size)};
    projection.Forward(x.data(), kNumTokens, pool, out.q.data(), out.k.data(), out.v.data(),
                       {segments, 0});
    return out;
  };
  const ForwardBatch batch = BatchOf({nullptr, &adapter, nullptr, &adapter});
  const LoraSegments segments(batch);
  const Qkv with_lora = run(*load(wq, wk, wv), &segments);
  const Qkv without = run(*load(wq, wk, wv), nullptr);
  const Qkv merged =
      run(*load(Merged(wq, targets[0]), Merged(wk, targets[1]), Merged(wv, targets[2])), nullptr);
  for (const auto& [got, base, want, width, name] :
       {std::tuple{&with_lora.q, &without.q, &merged.q, q_size, "q"},
        std::tuple{&with_lora.k, &without.k, &merged.k, kv_size, "k"},
        std::tuple{&with_lora.v, &without.v, &merged.v, kv_size, "v"}}) {
    ExpectRows(*got, *base, width, 0, 3, true, std::string(name) + " of sequence 0 (base)");
    ExpectRows(*got, *want, width, 3, 5, false, std::string(name) + " of sequence 1");
    ExpectRows(*got, *base, width, 5, 6, true, std::string(name) + " of sequence 2 (base)");
    ExpectRows(*got, *want, width, 6, 8, false, std::string(name) + " of sequence 3");
  }
}

INSTANTIATE_TEST_SUITE_P(StoredForms, QkvProjectionLoraTest, ::testing::Bool());

TEST(LoraSegmentsTest, GroupsTheRowsOfEachAdapterOnce) {
  LoraWeights a = OneLayerAdapter("a", 1), b = OneLayerAdapter("b", 2);
  a.layers[0].targets[static_cast<int>(LoraTarget::kO)] = RandomLora(2, 4, 4, 1);
  EXPECT_TRUE(LoraSegments(BatchOf({})).empty());
  EXPECT_TRUE(LoraSegments(BatchOf({nullptr, nullptr, nullptr, nullptr})).empty());
  const LoraSegments segments(BatchOf({&a, &b, nullptr, &a}));
  EXPECT_FALSE(segments.empty());
  EXPECT_TRUE(segments.Targets(0, LoraTarget::kO));
  EXPECT_FALSE(segments.Targets(0, LoraTarget::kQ));
}

ModelConfig SmallConfig() {
  ModelConfig config;
  config.num_layers = 2;
  config.hidden_size = 16;
  config.num_heads = 2;
  config.num_kv_heads = 1;
  config.head_dim = 8;
  config.intermediate_size = 24;
  config.vocab_size = 10;
  return config;
}

TEST(LoraFitsModelTest, RefusesAdaptersThatDoNotFitNamingLayerAndTarget) {
  const ModelConfig config = SmallConfig();
  LoraWeights adapter;
  adapter.name = "sql";
  adapter.layers.resize(2);
  adapter.layers[1].targets[static_cast<int>(LoraTarget::kK)] = RandomLora(4, 16, 8, 1);
  adapter.layers[1].targets[static_cast<int>(LoraTarget::kDown)] = RandomLora(4, 24, 16, 2);
  EXPECT_TRUE(LoraFitsModel(adapter, config).ok());

  LoraWeights wrong_rows = adapter;  // k's rows are kv_size = 8
  wrong_rows.layers[1].targets[static_cast<int>(LoraTarget::kK)] = RandomLora(4, 16, 16, 1);
  const Status refused = LoraFitsModel(wrong_rows, config);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("'sql' layer 1 k_proj"));

  LoraWeights short_b = adapter;
  short_b.layers[1].targets[static_cast<int>(LoraTarget::kDown)]->b.pop_back();
  EXPECT_FALSE(LoraFitsModel(short_b, config).ok());

  LoraWeights one_layer = adapter;
  one_layer.layers.resize(1);
  EXPECT_THAT(LoraFitsModel(one_layer, config).message(), HasSubstr("has 1 layers"));

  ModelConfig moe = config;
  moe.num_experts = 4;
  EXPECT_THAT(LoraFitsModel(adapter, moe).message(), HasSubstr("mixture-of-experts"));
}

TEST(LoraFitsModelTest, ValidateForwardBatchChecksEverySequencesAdapter) {
  const ModelConfig config = SmallConfig();
  auto kv = KvStorage::Create(
      {.num_layers = 2, .num_blocks = 4, .block_size = 4, .num_kv_heads = 1, .head_dim = 8});
  ASSERT_TRUE(kv.ok()) << kv.error();
  ForwardBatch batch;
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{1, 2}, 0, std::vector<std::vector<int32_t>>{{1}},
                             4, batch)
                  .ok());
  LoraWeights adapter;
  adapter.name = "poet";
  adapter.layers.resize(2);
  batch.seq_loras = {&adapter};
  EXPECT_TRUE(ValidateForwardBatch(batch, **kv, config).ok());
  adapter.layers.resize(3);
  EXPECT_FALSE(ValidateForwardBatch(batch, **kv, config).ok());
  batch.seq_loras = {nullptr, nullptr};  // two entries for one sequence
  EXPECT_THAT(ValidateForwardBatch(batch, **kv, config).message(), HasSubstr("seq_loras"));
}

}  // namespace
}  // namespace vllm
