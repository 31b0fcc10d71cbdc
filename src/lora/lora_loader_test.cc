#include "lora/lora_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "common/temp_test_dir.h"
#include "formats/safetensors_file.h"
#include "formats/safetensors_writer.h"
#include "lora/lora_test_files.h"
#include "lora/oracle_base_shape.h"
#include "lora/qk_row_order.h"

namespace vllm::lora {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kOracleDir = std::string(VLLM_SHARED_DIR) + "/oracles/lora";

#define SKIP_WITHOUT_ORACLES() \
  if (!std::filesystem::exists(kOracleDir + "/sql.gguf")) GTEST_SKIP() << "no " << kOracleDir

LoraBaseShape HfTinyBase() {
  LoraBaseShape base = TinyBase();
  base.qk_rows_permuted_for_rope = false;
  return base;
}

Expected<std::shared_ptr<const LoraWeights>> Load(const std::string& path,
                                                  const LoraBaseShape& base,
                                                  int64_t max_lora_rank = 16) {
  return LoadLoraAdapter({"adapter", 1, path, ""}, base, {.max_lora_rank = max_lora_rank});
}

float MaxAbsDifference(const std::vector<float>& x, const std::vector<float>& y) {
  if (x.size() != y.size()) return INFINITY;
  float difference = 0;
  for (size_t i = 0; i < x.size(); ++i) difference = std::max(difference, std::abs(x[i] - y[i]));
  return difference;
}

std::vector<float> Scaled(std::vector<float> values, float scale) {
  for (float& value : values) value *= scale;
  return values;
}

const LoraMatrices& Matrices(const LoraWeights& weights, int layer, LoraTarget target) {
  return *weights.layers.at(layer).targets[int(target)];
}

// Both hold the same targets with the same shapes and values within f32 round-off.
void ExpectSameWeights(const LoraWeights& x, const LoraWeights& y) {
  ASSERT_EQ(x.layers.size(), y.layers.size());
  EXPECT_EQ(x.rank, y.rank);
  for (size_t layer = 0; layer < x.layers.size(); ++layer) {
    for (int target = 0; target < kNumLoraTargets; ++target) {
      const auto& mx = x.layers[layer].targets[target];
      const auto& my = y.layers[layer].targets[target];
      ASSERT_EQ(mx.has_value(), my.has_value()) << "layer " << layer << " target " << target;
      if (!mx) continue;
      EXPECT_EQ(mx->rank, my->rank);
      EXPECT_EQ(mx->in_features, my->in_features);
      EXPECT_EQ(mx->out_features, my->out_features);
      EXPECT_LE(MaxAbsDifference(mx->a, my->a), 1e-6f) << "layer " << layer << " target " << target;
      EXPECT_LE(MaxAbsDifference(mx->b, my->b), 1e-6f) << "layer " << layer << " target " << target;
    }
  }
}

TEST(LoraOracle, PeftAndGgufFormsMatchOnAGgufBaseAndAnHfBase) {
  SKIP_WITHOUT_ORACLES();
  for (bool gguf_base : {true, false}) {
    for (const std::string name : {"sql", "poet"}) {
      SCOPED_TRACE(name + (gguf_base ? " on a GGUF base" : " on an HF base"));
      auto peft = Load(kOracleDir + "/" + name + "-peft", OracleBase(gguf_base));
      auto gguf = Load(kOracleDir + "/" + name + ".gguf", OracleBase(gguf_base));
      ASSERT_TRUE(peft.ok()) << peft.error();
      ASSERT_TRUE(gguf.ok()) << gguf.error();
      ExpectSameWeights(**peft, **gguf);
    }
  }
}

// --lora-dtype bfloat16: every matrix is the f32 load rounded to bf16 (nearest even), and the
// f32 storage is freed.
TEST(LoraOracle, Bf16StorageIsTheF32LoadRounded) {
  SKIP_WITHOUT_ORACLES();
  for (const std::string name : {"sql-peft", "poet.gguf"}) {
    SCOPED_TRACE(name);
    const LoraRequest request{"adapter", 1, kOracleDir + "/" + name, ""};
    auto f32 = LoadLoraAdapter(request, OracleBase(true), {.dtype = LoraDtype::kFloat32});
    auto bf16 = LoadLoraAdapter(request, OracleBase(true), {.dtype = LoraDtype::kBfloat16});
    ASSERT_TRUE(f32.ok()) << f32.error();
    ASSERT_TRUE(bf16.ok()) << bf16.error();
    int num_matrices = 0;
    for (int layer = 0; layer < 3; ++layer) {
      for (int target = 0; target < kNumLoraTargets; ++target) {
        const auto& full = (*f32)->layers[layer].targets[target];
        const auto& half = (*bf16)->layers[layer].targets[target];
        ASSERT_EQ(full.has_value(), half.has_value());
        if (!full) continue;
        ++num_matrices;
        EXPECT_EQ(full->dtype, LoraDtype::kFloat32);
        ASSERT_EQ(half->dtype, LoraDtype::kBfloat16);
        EXPECT_TRUE(half->a.empty() && half->b.empty() && full->a_bf16.empty());
        EXPECT_EQ(half->num_a_values(), full->num_a_values());
        EXPECT_EQ(half->num_b_values(), full->num_b_values());
        LoraMatrices rounded = *full;
        StoreLoraMatricesAs(LoraDtype::kBfloat16, rounded);
        EXPECT_EQ(half->a_bf16, rounded.a_bf16);
        EXPECT_EQ(half->b_bf16, rounded.b_bf16);
        for (size_t i = 0; i < full->a.size(); ++i) {
          const float widened = std::bit_cast<float>(uint32_t{half->a_bf16[i]} << 16);
          ASSERT_LE(std::abs(widened - full->a[i]), std::abs(full->a[i]) / 256) << i;
        }
      }
    }
    EXPECT_GT(num_matrices, 0);
  }
}

// The same PEFT adapter on the two base orders: q and k's lora_B rows differ by llama.cpp's
// permutation (q over 8 heads, k over 4); everything else is the same.
TEST(LoraOracle, QkRowsFollowTheBasesOrder) {
  SKIP_WITHOUT_ORACLES();
  auto on_gguf = Load(kOracleDir + "/sql-peft", OracleBase(true));
  auto on_hf = Load(kOracleDir + "/sql-peft", OracleBase(false));
  ASSERT_TRUE(on_gguf.ok() && on_hf.ok());
  for (int layer = 0; layer < 3; ++layer) {
    const LoraMatrices& q_hf = Matrices(**on_hf, layer, LoraTarget::kQ);
    const LoraMatrices& q_gguf = Matrices(**on_gguf, layer, LoraTarget::kQ);
    EXPECT_GT(MaxAbsDifference(q_hf.b, q_gguf.b), 1e-3f);
    EXPECT_EQ(q_gguf.b, PermuteQkRowsForRope(q_hf.b, q_hf.rank, 8));
    EXPECT_EQ(Matrices(**on_gguf, layer, LoraTarget::kK).b,
              PermuteQkRowsForRope(Matrices(**on_hf, layer, LoraTarget::kK).b, 8, 4));
    EXPECT_EQ(q_gguf.a, q_hf.a);
    EXPECT_EQ(Matrices(**on_gguf, layer, LoraTarget::kV).b,
              Matrices(**on_hf, layer, LoraTarget::kV).b);
  }
}

// sql: rank 8, alpha 16, all seven targets; poet: rank 16, alpha 8, q, v, o, down. B carries
// alpha / r: the file's lora_B times 2 and 0.5.
TEST(LoraOracle, HoldsItsTargetsWithBScaledByAlphaOverRank) {
  SKIP_WITHOUT_ORACLES();
  struct Case {
    std::string name;
    int64_t rank;
    float scale;
    std::vector<bool> has_target;
  };
  for (const Case& c : {Case{"sql", 8, 2.0f, {true, true, true, true, true, true, true}},
                        Case{"poet", 16, 0.5f, {true, false, true, true, false, false, true}}}) {
    SCOPED_TRACE(c.name);
    auto weights = Load(kOracleDir + "/" + c.name + "-peft", OracleBase(false));
    ASSERT_TRUE(weights.ok()) << weights.error();
    EXPECT_EQ((*weights)->rank, c.rank);
    EXPECT_EQ((*weights)->name, "adapter");
    EXPECT_EQ((*weights)->id, 1);
    for (int layer = 0; layer < 3; ++layer) {
      for (int target = 0; target < kNumLoraTargets; ++target) {
        EXPECT_EQ((*weights)->layers[layer].targets[target].has_value(), c.has_target[target]);
      }
    }
    auto file =
        SafetensorsFile::Open(kOracleDir + "/" + c.name + "-peft/adapter_model.safetensors");
    ASSERT_TRUE(file.ok());
    const SafetensorsTensor* b = (*file)->FindTensor(PeftTensorName(1, "self_attn.v_proj", 'B'));
    ASSERT_NE(b, nullptr);
    std::vector<float> file_b(b->num_bytes / sizeof(float));
    std::memcpy(file_b.data(), b->data, b->num_bytes);
    EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kV).b, Scaled(file_b, c.scale));
  }
}

TEST(LoraOracle, RankAboveMaxLoraRankIsRefused) {
  SKIP_WITHOUT_ORACLES();
  for (const std::string path : {"/poet-peft", "/poet.gguf"}) {
    auto weights =
        LoadLoraAdapter({"poet", 2, kOracleDir + path, ""}, OracleBase(true), {.max_lora_rank = 8});
    ASSERT_FALSE(weights.ok());
    EXPECT_THAT(weights.error(), StartsWith("Loading lora poet failed: "));
    EXPECT_THAT(weights.error(), HasSubstr("LoRA rank 16 is greater than max_lora_rank 8"));
  }
}

TEST(LoraOracle, RefusesAnotherFamilyOrATargetTheBaseLacks) {
  SKIP_WITHOUT_ORACLES();
  LoraBaseShape qwen = OracleBase(false);
  qwen.architecture = "qwen2";
  auto weights = Load(kOracleDir + "/sql.gguf", qwen);
  ASSERT_FALSE(weights.ok());
  EXPECT_THAT(weights.error(), HasSubstr("general.architecture 'llama' does not match"));

  LoraBaseShape no_gate = OracleBase(true);
  no_gate.has_target[int(LoraTarget::kGate)] = false;
  for (const std::string path : {"/sql-peft", "/sql.gguf"}) {
    weights = Load(kOracleDir + path, no_gate);
    ASSERT_FALSE(weights.ok());
    EXPECT_THAT(weights.error(), HasSubstr("the base model has no gate_proj weight"));
  }
  EXPECT_TRUE(Load(kOracleDir + "/poet.gguf", no_gate).ok());
}

class LoraFiles : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.File(name); }

  // A PEFT directory of `config` and `tensors`, loaded on `base`.
  Expected<std::shared_ptr<const LoraWeights>> LoadPeft(const std::string& config,
                                                        const std::vector<TestTensor>& tensors,
                                                        const LoraBaseShape& base = HfTinyBase()) {
    const std::string directory = Path("peft" + std::to_string(next_++));
    Status written = WritePeftAdapter(directory, config, tensors);
    if (!written.ok()) return Error{"writing the test adapter: " + written.message()};
    return Load(directory, base);
  }

  Expected<std::shared_ptr<const LoraWeights>> LoadGguf(const GgufAdapterHeader& header,
                                                        const std::vector<TestTensor>& tensors,
                                                        const LoraBaseShape& base = TinyBase()) {
    const std::string path = Path("adapter" + std::to_string(next_++) + ".gguf");
    Status written = WriteGgufAdapter(path, header, tensors);
    if (!written.ok()) return Error{"writing the test adapter: " + written.message()};
    return Load(path, base);
  }

  TempTestDir dir_{"lora_loader_test"};
  int next_ = 0;
};

// A PEFT module's A [r, in] and B [out, r].
std::vector<TestTensor> PeftPair(int layer, const std::string& module, int64_t rank, int64_t in,
                                 int64_t out, int seed) {
  return {MakeTestTensor(PeftTensorName(layer, module, 'A'), {rank, in}, seed),
          MakeTestTensor(PeftTensorName(layer, module, 'B'), {out, rank}, seed + 1)};
}

std::vector<TestTensor> Join(std::vector<TestTensor> x, const std::vector<TestTensor>& y) {
  x.insert(x.end(), y.begin(), y.end());
  return x;
}

TEST_F(LoraFiles, PeftScaleIsAlphaOverRankOrOverItsRootWithRslora) {
  const std::vector<TestTensor> v = PeftPair(0, "self_attn.v_proj", 4, 32, 16, 1);
  auto plain = LoadPeft(PeftConfig(4, 8, "[\"v_proj\"]"), v);
  auto rslora = LoadPeft(PeftConfig(4, 8, "[\"v_proj\"]", "\"use_rslora\": true"), v);
  ASSERT_TRUE(plain.ok()) << plain.error();
  ASSERT_TRUE(rslora.ok()) << rslora.error();
  EXPECT_EQ(Matrices(**plain, 0, LoraTarget::kV).a, v[0].values);
  EXPECT_EQ(Matrices(**plain, 0, LoraTarget::kV).b, Scaled(v[1].values, 2.0f));
  EXPECT_EQ(Matrices(**rslora, 0, LoraTarget::kV).b, Scaled(v[1].values, 4.0f));
}

// PEFT's defaults written out load as if absent; fan_in_fan_out too, which PEFT resets to false
// on Linear layers (it describes GPT-2's Conv1D).
TEST_F(LoraFiles, PeftNeutralFieldsLoad) {
  const std::vector<TestTensor> v = PeftPair(1, "self_attn.v_proj", 4, 32, 16, 1);
  auto weights = LoadPeft(
      PeftConfig(4, 4, "[\"v_proj\"]",
                 "\"bias\": \"none\", \"modules_to_save\": null, \"use_dora\": false, "
                 "\"fan_in_fan_out\": true, \"lora_dropout\": 0.05, \"task_type\": \"CAUSAL_LM\", "
                 "\"rank_pattern\": {}, \"alpha_pattern\": {}, \"layers_to_transform\": null"),
      v);
  ASSERT_TRUE(weights.ok()) << weights.error();
  EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kV).b, v[1].values);
  EXPECT_FALSE((*weights)->layers[0].targets[int(LoraTarget::kV)].has_value());
}

TEST_F(LoraFiles, PeftRankAndAlphaPatternsOverrideByModule) {
  const std::vector<TestTensor> q0 = PeftPair(0, "self_attn.q_proj", 4, 32, 32, 1);
  const std::vector<TestTensor> v0 = PeftPair(0, "self_attn.v_proj", 2, 32, 16, 3);
  const std::vector<TestTensor> q1 = PeftPair(1, "self_attn.q_proj", 4, 32, 32, 5);
  auto weights = LoadPeft(PeftConfig(4, 8, "[\"q_proj\", \"v_proj\"]",
                                     "\"rank_pattern\": {\"v_proj\": 2}, "
                                     "\"alpha_pattern\": {\"layers.1.self_attn.q_proj\": 1}"),
                          Join(Join(q0, v0), q1));
  ASSERT_TRUE(weights.ok()) << weights.error();
  EXPECT_EQ((*weights)->rank, 4);
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kQ).b, Scaled(q0[1].values, 2.0f));
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kV).b, Scaled(v0[1].values, 4.0f));
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kV).rank, 2);
  EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kQ).b, Scaled(q1[1].values, 0.25f));
}

TEST_F(LoraFiles, PeftTargetModulesByShortOrFullNameOrRegex) {
  const auto tensors = Join(PeftPair(0, "self_attn.v_proj", 4, 32, 16, 1),
                            PeftPair(1, "self_attn.v_proj", 4, 32, 16, 3));
  for (const std::string targets :
       {"[\"v_proj\"]", "[\"self_attn.v_proj\"]", "\"all-linear\"", "\".*\\\\.v_proj\"",
        "[\"model.layers.0.self_attn.v_proj\", \"model.layers.1.self_attn.v_proj\"]"}) {
    auto weights = LoadPeft(PeftConfig(4, 4, targets), tensors);
    EXPECT_TRUE(weights.ok()) << targets << ": " << weights.error();
  }
  auto one_layer = LoadPeft(PeftConfig(4, 4, "[\"model.layers.0.self_attn.v_proj\"]"), tensors);
  ASSERT_FALSE(one_layer.ok());
  EXPECT_THAT(one_layer.error(), HasSubstr("targets 'model.layers.1.self_attn.v_proj', which "
                                           "target_modules does not name"));
  auto regex_q = LoadPeft(PeftConfig(4, 4, "\".*q_proj\""), tensors);
  ASSERT_FALSE(regex_q.ok());
  EXPECT_THAT(regex_q.error(), HasSubstr("target_modules does not name"));
}

TEST_F(LoraFiles, PeftNamesWithAnAdapterNameOrWithoutWeightSuffix) {
  std::vector<TestTensor> tensors = Join(PeftPair(0, "self_attn.o_proj", 4, 32, 32, 1),
                                         PeftPair(1, "mlp.down_proj", 4, 64, 32, 3));
  tensors[0].name = "base_model.model.model.layers.0.self_attn.o_proj.lora_A.default.weight";
  tensors[1].name = "base_model.model.model.layers.0.self_attn.o_proj.lora_B.default.weight";
  tensors[2].name = "base_model.model.model.layers.1.mlp.down_proj.lora_A";
  tensors[3].name = "base_model.model.model.layers.1.mlp.down_proj.lora_B";
  auto weights = LoadPeft(PeftConfig(4, 4, "[\"o_proj\", \"down_proj\"]"), tensors);
  ASSERT_TRUE(weights.ok()) << weights.error();
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kO).a, tensors[0].values);
  EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kDown).b, tensors[3].values);
  EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kDown).in_features, 64);
}

TEST_F(LoraFiles, PeftReadsF16AndBf16) {
  std::vector<TestTensor> tensors = PeftPair(0, "mlp.up_proj", 4, 32, 64, 1);
  tensors[0].type = GgmlType::kF16;
  tensors[1].type = GgmlType::kBF16;
  auto weights = LoadPeft(PeftConfig(4, 4, "[\"up_proj\"]"), tensors);
  ASSERT_TRUE(weights.ok()) << weights.error();
  EXPECT_LE(MaxAbsDifference(Matrices(**weights, 0, LoraTarget::kUp).a, tensors[0].values), 5e-4f);
  EXPECT_LE(MaxAbsDifference(Matrices(**weights, 0, LoraTarget::kUp).b, tensors[1].values), 4e-3f);
}

// Phi-3's fused modules: B's rows split into q (32), k (16), v (16) and gate (64), up (64).
TEST_F(LoraFiles, PeftFusedQkvAndGateUpSplitIntoTheirTargets) {
  const auto qkv = PeftPair(0, "self_attn.qkv_proj", 4, 32, 64, 1);
  const auto gate_up = PeftPair(1, "mlp.gate_up_proj", 4, 32, 128, 3);
  auto weights = LoadPeft(PeftConfig(4, 4, "[\"qkv_proj\", \"gate_up_proj\"]"), Join(qkv, gate_up));
  ASSERT_TRUE(weights.ok()) << weights.error();
  auto rows = [](const TestTensor& b, int64_t first, int64_t count) {
    return std::vector<float>(b.values.begin() + first * 4, b.values.begin() + (first + count) * 4);
  };
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kQ).b, rows(qkv[1], 0, 32));
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kK).b, rows(qkv[1], 32, 16));
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kV).b, rows(qkv[1], 48, 16));
  EXPECT_EQ(Matrices(**weights, 0, LoraTarget::kK).a, qkv[0].values);
  EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kGate).b, rows(gate_up[1], 0, 64));
  EXPECT_EQ(Matrices(**weights, 1, LoraTarget::kUp).b, rows(gate_up[1], 64, 64));
  auto wrong =
      LoadPeft(PeftConfig(4, 4, "[\"qkv_proj\"]"), PeftPair(0, "self_attn.qkv_proj", 4, 32, 48, 1));
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error(), HasSubstr("the fused lora_B has 48 rows, the base's fused weight 64"));
}

struct PeftRefusal {
  std::string what;
  std::string config;
  std::vector<TestTensor> tensors;
  std::string message;
};

TEST_F(LoraFiles, PeftRefusalsNameTheFieldOrTensor) {
  const auto v = PeftPair(0, "self_attn.v_proj", 4, 32, 16, 1);
  const std::string v_config = PeftConfig(4, 4, "[\"v_proj\"]");
  auto renamed = [&](int index, const std::string& name) {
    TestTensor tensor = v[index];
    tensor.name = name;
    return tensor;
  };
  const std::string stem = "base_model.model.model.layers.0.self_attn.v_proj.";
  const std::vector<PeftRefusal> refusals = {
      {"modules_to_save", PeftConfig(4, 4, "[\"v_proj\"]", "\"modules_to_save\": [\"lm_head\"]"), v,
       "modules_to_save [\"lm_head\"] is not supported"},
      {"bias", PeftConfig(4, 4, "[\"v_proj\"]", "\"bias\": \"all\""), v,
       "bias \"all\" is not supported"},
      {"DoRA", PeftConfig(4, 4, "[\"v_proj\"]", "\"use_dora\": true"), v, "use_dora is true"},
      {"lora_bias", PeftConfig(4, 4, "[\"v_proj\"]", "\"lora_bias\": true"), v, "lora_bias"},
      {"peft_type", "{\"peft_type\": \"LOHA\", \"r\": 4, \"lora_alpha\": 4}", v,
       "peft_type \"LOHA\" is not LORA"},
      {"no r", "{\"lora_alpha\": 4, \"target_modules\": [\"v_proj\"]}", v, "r must be"},
      {"no target_modules", "{\"r\": 4, \"lora_alpha\": 4}", v, "has no target_modules"},
      {"not JSON", "{\"r\": 4,", v, "adapter_config.json is not a JSON object"},
      {"unknown target", PeftConfig(4, 4, "[\"v_proj\", \"fc1\"]"), v,
       "unknown target module 'fc1'"},
      {"lm_head target", PeftConfig(4, 4, "[\"lm_head\"]"), v, "target module 'lm_head'"},
      {"bad regex", PeftConfig(4, 4, "\"(v_proj\""), v, "is not a valid regular expression"},
      {"rank over max", PeftConfig(32, 4, "[\"v_proj\"]"),
       PeftPair(0, "self_attn.v_proj", 32, 32, 16, 1),
       "LoRA rank 32 is greater than max_lora_rank 16"},
      {"rank not r", PeftConfig(8, 4, "[\"v_proj\"]"), v,
       "has rank 4, adapter_config.json gives r = 8"},
      {"A without B", v_config, {v[0]}, "v_proj.lora_A.weight' has no lora_B"},
      {"B without A", v_config, {v[1]}, "v_proj.lora_B.weight' has no lora_A"},
      {"layer past the base", v_config, PeftPair(2, "self_attn.v_proj", 4, 32, 16, 1),
       "layer 2 is past the base's 2 layers"},
      {"out features", v_config, PeftPair(0, "self_attn.v_proj", 4, 32, 17, 1),
       "layer 0 v_proj is [17, 32] (out, in), the base's weight is [16, 32]"},
      {"in features", v_config, PeftPair(0, "self_attn.v_proj", 4, 31, 16, 1),
       "the base's weight is [16, 32]"},
      {"A and B ranks",
       v_config,
       {v[0], MakeTestTensor(PeftTensorName(0, "self_attn.v_proj", 'B'), {16, 3}, 2)},
       "has 3 columns"},
      {"embedding LoRA", v_config, Join(v, {renamed(0, stem + "lora_embedding_A")}),
       "embedding LoRA (lora_embedding_A) is not supported"},
      {"extra vocabulary", v_config,
       Join(v, {renamed(0, "base_model.model.model.embed_tokens.new_embeddings.weight")}),
       "embedding and lm_head weights"},
      {"DoRA magnitude", v_config, Join(v, {renamed(0, stem + "lora_magnitude_vector")}),
       "DoRA (lora_magnitude_vector)"},
      {"LoRA bias tensor", v_config, Join(v, {renamed(1, stem + "lora_B.bias")}), "LoRA bias"},
      {"unknown module", PeftConfig(4, 4, "\"all-linear\""), PeftPair(0, "mlp.fc1", 4, 32, 16, 1),
       "targets unknown module 'fc1'"},
      {"no layer",
       v_config,
       {renamed(0, "base_model.model.v_proj.lora_A.weight"),
        renamed(1, "base_model.model.v_proj.lora_B.weight")},
       "has no layer index"},
      {"no tensors", v_config, {}, "the adapter holds no LoRA tensors"},
      {"long name", v_config, Join(v, {renamed(0, stem + std::string(2000, 'x'))}),
       "a tensor name is longer than 1024 characters"},
  };
  for (const PeftRefusal& refusal : refusals) {
    auto weights = LoadPeft(refusal.config, refusal.tensors);
    ASSERT_FALSE(weights.ok()) << refusal.what;
    EXPECT_THAT(weights.error(), StartsWith("Loading lora adapter failed: ")) << refusal.what;
    EXPECT_THAT(weights.error(), HasSubstr(refusal.message)) << refusal.what;
  }
}

TEST_F(LoraFiles, PeftRefusesMissingFilesAndOtherDtypes) {
  auto missing = Load(Path("nowhere"), HfTinyBase());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "Loading lora adapter failed: No adapter found for " + Path("nowhere"));

  const std::string pickle = Path("pickle");
  std::filesystem::create_directories(pickle);
  std::ofstream(pickle + "/adapter_config.json") << PeftConfig(4, 4, "[\"v_proj\"]");
  std::ofstream(pickle + "/adapter_model.bin") << "not read";
  auto from_bin = Load(pickle, HfTinyBase());
  ASSERT_FALSE(from_bin.ok());
  EXPECT_THAT(from_bin.error(), HasSubstr("convert the adapter to safetensors"));

  const std::string no_config = Path("no_config");
  ASSERT_TRUE(
      WritePeftAdapter(no_config, "{}", PeftPair(0, "self_attn.v_proj", 4, 32, 16, 1)).ok());
  std::filesystem::remove(no_config + "/adapter_config.json");
  auto without_config = Load(no_config, HfTinyBase());
  ASSERT_FALSE(without_config.ok());
  EXPECT_THAT(without_config.error(), HasSubstr("no adapter_config.json in " + no_config));

  // An I32 lora_B: safetensors holds it, a LoRA matrix may not be one.
  const std::string ints = Path("ints");
  ASSERT_TRUE(WritePeftAdapter(ints, PeftConfig(4, 4, "[\"v_proj\"]"),
                               {PeftPair(0, "self_attn.v_proj", 4, 32, 16, 1)[0]})
                  .ok());
  {
    auto file = SafetensorsFile::Open(ints + "/adapter_model.safetensors");
    ASSERT_TRUE(file.ok());
    std::vector<SafetensorsTensor> tensors = (*file)->tensors();
    std::vector<int32_t> b_values(16 * 4, 1);
    tensors.push_back({PeftTensorName(0, "self_attn.v_proj", 'B'),
                       GgmlType::kI32,
                       {16, 4},
                       b_values.data(),
                       static_cast<int64_t>(b_values.size() * 4)});
    ASSERT_TRUE(WriteSafetensors(Path("ints.safetensors"), tensors).ok());
  }
  std::filesystem::rename(Path("ints.safetensors"), ints + "/adapter_model.safetensors");
  auto from_ints = Load(ints, HfTinyBase());
  ASSERT_FALSE(from_ints.ok());
  EXPECT_THAT(from_ints.error(), HasSubstr("v_proj.lora_B.weight' has type i32"));
}

// llama.cpp's names: lora_a is [r, in], lora_b [out, r] (ggml ne reversed).
std::vector<TestTensor> GgufPair(int layer, const std::string& weight, int64_t rank, int64_t in,
                                 int64_t out, int seed) {
  const std::string stem = "blk." + std::to_string(layer) + "." + weight + ".weight";
  return {MakeTestTensor(stem + ".lora_a", {rank, in}, seed),
          MakeTestTensor(stem + ".lora_b", {out, rank}, seed + 1)};
}

// A GGUF adapter's q / k rows are in its family's GGUF order: as they are on a GGUF base, the
// inverse permutation on an HF base; alpha / r scales B, no alpha none.
TEST_F(LoraFiles, GgufRowsFollowTheBaseAndAlphaScales) {
  const auto tensors =
      Join(Join(GgufPair(0, "attn_q", 4, 32, 32, 1), GgufPair(0, "attn_k", 4, 32, 16, 3)),
           Join(GgufPair(1, "attn_output", 4, 32, 32, 5), GgufPair(1, "ffn_down", 4, 64, 32, 7)));
  auto on_gguf = LoadGguf({.alpha = 8.0f}, tensors, TinyBase());
  auto on_hf = LoadGguf({.alpha = 8.0f}, tensors, HfTinyBase());
  auto no_alpha = LoadGguf({.alpha = std::nullopt}, tensors, TinyBase());
  ASSERT_TRUE(on_gguf.ok()) << on_gguf.error();
  ASSERT_TRUE(on_hf.ok()) << on_hf.error();
  ASSERT_TRUE(no_alpha.ok()) << no_alpha.error();
  EXPECT_EQ(Matrices(**on_gguf, 0, LoraTarget::kQ).b, Scaled(tensors[1].values, 2.0f));
  EXPECT_EQ(Matrices(**on_hf, 0, LoraTarget::kQ).b,
            Scaled(UnpermuteQkRowsForRope(tensors[1].values, 4, 4), 2.0f));
  EXPECT_EQ(Matrices(**on_hf, 0, LoraTarget::kK).b,
            Scaled(UnpermuteQkRowsForRope(tensors[3].values, 4, 2), 2.0f));
  EXPECT_EQ(Matrices(**on_hf, 1, LoraTarget::kDown).b, Scaled(tensors[7].values, 2.0f));
  EXPECT_EQ(Matrices(**on_hf, 1, LoraTarget::kDown).a, tensors[6].values);
  EXPECT_EQ(Matrices(**no_alpha, 1, LoraTarget::kO).b, tensors[5].values);

  // A family whose GGUF keeps HF order (qwen2): nothing moves on either base.
  LoraBaseShape qwen = HfTinyBase();
  qwen.architecture = "qwen2";
  qwen.gguf_permutes_qk_rows = false;
  auto on_qwen = LoadGguf({.architecture = "qwen2", .alpha = 4.0f}, tensors, qwen);
  ASSERT_TRUE(on_qwen.ok()) << on_qwen.error();
  EXPECT_EQ(Matrices(**on_qwen, 0, LoraTarget::kQ).b, tensors[1].values);
}

TEST_F(LoraFiles, GgufFusedWeightsAndQuantizedPayloads) {
  LoraBaseShape phi3 = HfTinyBase();
  phi3.architecture = "phi3";
  phi3.gguf_permutes_qk_rows = false;
  const auto tensors =
      Join(GgufPair(0, "attn_qkv", 4, 32, 64, 1), GgufPair(1, "ffn_up", 4, 32, 128, 3));
  auto fused = LoadGguf({.architecture = "phi3", .alpha = 4.0f}, tensors, phi3);
  ASSERT_TRUE(fused.ok()) << fused.error();
  EXPECT_EQ(Matrices(**fused, 0, LoraTarget::kV).b,
            std::vector<float>(tensors[1].values.begin() + 48 * 4, tensors[1].values.end()));
  EXPECT_EQ(Matrices(**fused, 1, LoraTarget::kGate).b,
            std::vector<float>(tensors[3].values.begin(), tensors[3].values.begin() + 64 * 4));
  EXPECT_EQ(Matrices(**fused, 1, LoraTarget::kUp).a, tensors[2].values);

  std::vector<TestTensor> quantized = GgufPair(0, "ffn_gate", 4, 32, 64, 1);
  quantized[0].type = GgmlType::kQ8_0;
  quantized[1].type = GgmlType::kF16;
  auto weights = LoadGguf({.alpha = 4.0f}, quantized);
  ASSERT_TRUE(weights.ok()) << weights.error();
  EXPECT_LE(MaxAbsDifference(Matrices(**weights, 0, LoraTarget::kGate).a, quantized[0].values),
            0.9f / 127);
}

struct GgufRefusal {
  std::string what;
  GgufAdapterHeader header;
  std::vector<TestTensor> tensors;
  std::string message;
};

TEST_F(LoraFiles, GgufRefusalsNameTheKeyOrTensor) {
  const auto q = GgufPair(0, "attn_q", 4, 32, 32, 1);
  auto renamed = [&](int index, const std::string& name) {
    TestTensor tensor = q[index];
    tensor.name = name;
    return tensor;
  };
  const std::vector<GgufRefusal> refusals = {
      {"a model", {.type = "model"}, q, "general.type is 'model', not 'adapter'"},
      {"a control vector",
       {.adapter_type = "control_vector"},
       q,
       "adapter.type is 'control_vector', not 'lora'"},
      {"another family", {.architecture = "gemma"}, q, "general.architecture 'gemma'"},
      {"lora_a alone", {}, {q[0]}, "blk.0.attn_q.weight.lora_a' has no lora_b"},
      {"token embedding",
       {},
       Join(q, {renamed(0, "token_embd.weight.lora_a")}),
       "tensor 'token_embd.weight.lora_a': embedding and output (lm_head) LoRA"},
      {"output", {}, Join(q, {renamed(1, "output.weight.lora_b")}), "output (lm_head) LoRA"},
      {"unknown weight",
       {},
       Join(q, {renamed(0, "blk.0.attn_norm.weight.lora_a")}),
       "targets unknown weight 'attn_norm'"},
      {"base tensor", {}, Join(q, {renamed(0, "blk.0.attn_q.weight")}), "is not a LoRA matrix"},
      {"transposed",
       {},
       {q[0], MakeTestTensor("blk.0.attn_q.weight.lora_b", {4, 32}, 2)},
       "is lora_a transposed?"},
      {"layer past the base",
       {},
       GgufPair(7, "attn_q", 4, 32, 32, 1),
       "layer 7 is past the base's 2 layers"},
      {"rank over max",
       {},
       GgufPair(0, "attn_q", 32, 32, 32, 1),
       "LoRA rank 32 is greater than max_lora_rank 16"},
      {"shape",
       {},
       GgufPair(0, "attn_v", 4, 32, 32, 1),
       "layer 0 v_proj is [32, 32] (out, in), the base's weight is [16, 32]"},
      {"no tensors", {}, {}, "the adapter holds no LoRA tensors"},
  };
  for (const GgufRefusal& refusal : refusals) {
    auto weights = LoadGguf(refusal.header, refusal.tensors);
    ASSERT_FALSE(weights.ok()) << refusal.what;
    EXPECT_THAT(weights.error(), StartsWith("Loading lora adapter failed: ")) << refusal.what;
    EXPECT_THAT(weights.error(), HasSubstr(refusal.message)) << refusal.what;
  }
}

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void WriteBytes(const std::string& path, const std::vector<char>& bytes, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), size);
}

// Every truncation and many flipped bytes of a valid file of either form load or fail with a
// message; none crashes (run under ASan in the sanitizer build).
TEST_F(LoraFiles, DamagedFilesAreErrorsNotCrashes) {
  const auto tensors = Join(PeftPair(0, "self_attn.v_proj", 2, 32, 16, 1),
                            PeftPair(1, "mlp.down_proj", 2, 64, 32, 3));
  const std::string peft = Path("damaged_peft");
  ASSERT_TRUE(
      WritePeftAdapter(peft, PeftConfig(2, 4, "[\"v_proj\", \"down_proj\"]"), tensors).ok());
  const std::string gguf = Path("damaged.gguf");
  ASSERT_TRUE(WriteGgufAdapter(
                  gguf, {},
                  Join(GgufPair(0, "attn_v", 2, 32, 16, 1), GgufPair(1, "ffn_down", 2, 64, 32, 3)))
                  .ok());
  for (const std::string& path : {peft + "/adapter_model.safetensors", gguf}) {
    const std::vector<char> bytes = ReadBytes(path);
    ASSERT_TRUE(Load(path == gguf ? gguf : peft, TinyBase()).ok());
    int num_refused = 0;
    for (size_t size = 0; size < bytes.size(); size += 7) {
      WriteBytes(path, bytes, size);
      auto weights = Load(path == gguf ? gguf : peft, TinyBase());
      if (!weights.ok()) {
        ++num_refused;
        EXPECT_THAT(weights.error(), StartsWith("Loading lora adapter failed: "));
      }
    }
    EXPECT_GT(num_refused, 0);
    for (size_t at = 0; at < std::min<size_t>(bytes.size(), 600); at += 3) {
      std::vector<char> flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
      WriteBytes(path, flipped, flipped.size());
      auto weights = Load(path == gguf ? gguf : peft, TinyBase());
      if (!weights.ok()) {
        EXPECT_FALSE(weights.error().empty());
      }
    }
    WriteBytes(path, bytes, bytes.size());
  }
}

}  // namespace
}  // namespace vllm::lora
