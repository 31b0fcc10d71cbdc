// Model-level tests: batch invariance, chunked prefill and paging on one model of each family;
// loading errors.
#include "model/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "model/layers/paged_attention.h"
#include "model/model_loader.h"
#include "model/random_model.h"

namespace vllm {
namespace {

std::string VocabPath() {
  return std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf";
}

// Batch invariance and paging on one model file per family: a random llama-tiny / gpt-oss-tiny
// (written per test) or an architecture oracle of ../shared/oracles (Qwen3-MoE: experts see other
// tokens in their groups; Gemma 3: sliding windows; Phi-3: fused projections). A sequence's
// logits are bit-identical whether it runs alone, batched with others or in chunks.
class ModelInvarianceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string path = std::string(VLLM_SHARED_DIR) + "/oracles/models/" + GetParam() + ".gguf";
    if (FindModelShape(GetParam()) != nullptr) {
      path = ::testing::TempDir() + "/model_invariance_" + GetParam() + "_" +
             std::to_string(::getpid()) + ".gguf";
      Status status = WriteRandomModel(
          {.shape = GetParam(), .vocab_path = VocabPath(), .output_path = path, .seed = 9});
      ASSERT_TRUE(status.ok()) << status.message();
      random_path_ = path;
    }
    auto loaded = LoadModelFromPath(path, {.pool = &pool_});
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    loaded_ = std::move(*loaded);
    const ModelConfig& config = loaded_.model->config();
    auto kv = KvStorage::Create({.num_layers = config.num_layers,
                                 .num_blocks = 64,
                                 .block_size = 16,
                                 .num_kv_heads = config.num_kv_heads,
                                 .head_dim = config.head_dim});
    ASSERT_TRUE(kv.ok());
    kv_ = std::move(*kv);
  }
  void TearDown() override {
    if (!random_path_.empty()) std::remove(random_path_.c_str());
  }

  struct Seq {
    std::vector<int32_t> tokens;  // all tokens of the sequence
    std::vector<int32_t> blocks;  // its block table
  };

  // Runs the chunks [begin, end) of each sequence as one batch; returns the logits of each chunk's
  // last token: [num_seqs, vocab_size].
  std::vector<float> Run(const std::vector<Seq>& seqs,
                         const std::vector<std::pair<int, int>>& spans) {
    ForwardBatch batch;
    for (size_t s = 0; s < seqs.size(); ++s) {
      auto [begin, end] = spans[s];
      const auto new_tokens = std::span<const int32_t>(seqs[s].tokens).subspan(begin, end - begin);
      EXPECT_TRUE(AppendSequence(new_tokens, begin, {&seqs[s].blocks, 1}, 16, batch).ok());
      batch.logits_indices.push_back(static_cast<int32_t>(batch.token_ids.size()) - 1);
    }
    std::vector<float> logits(seqs.size() * loaded_.model->config().vocab_size);
    Status status = loaded_.model->Forward(batch, *kv_, logits.data());
    EXPECT_TRUE(status.ok()) << status.message();
    return logits;
  }

  // `length` random tokens of the vocabulary in blocks first_block, first_block + 1, ...
  Seq MakeSeq(int length, int first_block, uint32_t seed) const {
    std::mt19937 rng(seed);
    Seq seq;
    for (int i = 0; i < length; ++i) {
      seq.tokens.push_back(static_cast<int32_t>(rng() % loaded_.model->config().vocab_size));
    }
    for (int b = 0; b < (length + 15) / 16; ++b) seq.blocks.push_back(first_block + b);
    return seq;
  }

  std::string random_path_;  // the random model this test wrote; empty for an oracle
  ThreadPool pool_{ThreadPool::Options{.num_threads = 2}};
  LoadedModel loaded_;
  std::unique_ptr<KvStorage> kv_;
};

// 312 tokens in all: more than one of the dense MLP's chunks of tokens (GatedMlp), whose bounds
// fall inside the last sequence.
TEST_P(ModelInvarianceTest, BatchedEqualsAloneBitwise) {
  const int64_t vocab = loaded_.model->config().vocab_size;
  std::vector<Seq> seqs = {MakeSeq(37, 0, 1), MakeSeq(5, 10, 2), MakeSeq(70, 20, 3),
                           MakeSeq(200, 30, 10)};
  std::vector<std::vector<float>> alone;
  for (const Seq& seq : seqs) {
    alone.push_back(Run({seq}, {{0, static_cast<int>(seq.tokens.size())}}));
  }
  auto batched = Run(seqs, {{0, 37}, {0, 5}, {0, 70}, {0, 200}});
  for (size_t s = 0; s < seqs.size(); ++s) {
    EXPECT_TRUE(std::equal(alone[s].begin(), alone[s].end(), batched.begin() + s * vocab))
        << "sequence " << s;
  }
}

TEST_P(ModelInvarianceTest, ChunkedPrefillAndDecodeMatchOneShotBitwise) {
  Seq seq = MakeSeq(50, 3, 4);
  auto one_shot = Run({seq}, {{0, 50}});
  Run({seq}, {{0, 20}});
  Run({seq}, {{20, 49}});
  auto chunked = Run({seq}, {{49, 50}});  // a single decode token at position 49
  EXPECT_EQ(one_shot, chunked);
}

TEST_P(ModelInvarianceTest, MixedPrefillAndDecodeBatch) {
  Seq a = MakeSeq(33, 0, 5);
  Seq b = MakeSeq(18, 8, 6);
  auto a_alone = Run({a}, {{0, 33}});
  auto b_alone = Run({b}, {{0, 18}});
  Run({a}, {{0, 32}});
  Run({b}, {{0, 10}});
  // a decodes its last token while b prefills its second chunk.
  auto mixed = Run({a, b}, {{32, 33}, {10, 18}});
  const int64_t vocab = loaded_.model->config().vocab_size;
  EXPECT_TRUE(std::equal(a_alone.begin(), a_alone.end(), mixed.begin()));
  EXPECT_TRUE(std::equal(b_alone.begin(), b_alone.end(), mixed.begin() + vocab));
}

TEST_P(ModelInvarianceTest, BlockPlacementDoesNotMatter) {
  Seq contiguous = MakeSeq(40, 0, 7);
  Seq scattered = contiguous;
  scattered.blocks = {41, 7, 30};
  EXPECT_EQ(Run({contiguous}, {{0, 40}}), Run({scattered}, {{0, 40}}));
}

TEST_P(ModelInvarianceTest, RejectsInconsistentBatches) {
  Seq seq = MakeSeq(4, 0, 8);
  ForwardBatch batch;
  batch.token_ids = {1, 2};
  batch.positions = {0, 1};
  batch.query_start_loc = {0, 2};
  batch.seq_lens = {2};
  batch.kv_groups = {{.slot_mapping = {0, 999999}, .block_tables = {{0}}}};  // slot disagrees
  batch.logits_indices = {1};
  std::vector<float> logits(loaded_.model->config().vocab_size);
  EXPECT_FALSE(loaded_.model->Forward(batch, *kv_, logits.data()).ok());
  batch.kv_groups[0].slot_mapping = {0, 1};
  ASSERT_TRUE(loaded_.model->Forward(batch, *kv_, logits.data()).ok());
  batch.token_ids = {1, 1 << 30};  // outside the vocabulary
  EXPECT_FALSE(loaded_.model->Forward(batch, *kv_, logits.data()).ok());
  batch.token_ids = {1, 2};
  batch.kv_groups[0].block_tables = {{64}};  // past the storage
  EXPECT_FALSE(loaded_.model->Forward(batch, *kv_, logits.data()).ok());
  batch.kv_groups[0].block_tables = {{0}};
  batch.kv_groups.push_back(batch.kv_groups[0]);  // a group the storage does not have
  EXPECT_FALSE(loaded_.model->Forward(batch, *kv_, logits.data()).ok());
}

INSTANTIATE_TEST_SUITE_P(Families, ModelInvarianceTest,
                         ::testing::Values("llama-tiny", "gpt-oss-tiny", "tiny-qwen3moe",
                                           "tiny-gemma3", "tiny-phi3"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ModelShapeTest, ResolvedHeadDimIsHiddenOverHeadsUnlessSet) {
  EXPECT_EQ(FindModelShape("tinyllama-1.1b")->resolved_head_dim(), 2048 / 32);
  EXPECT_EQ(FindModelShape("qwen3-0.6b")->resolved_head_dim(), 128);  // not 1024 / 16
}

TEST(ModelLoadTest, TiedEmbeddingsServeAsTheOutputHead) {
  // The SmolLM2 shape has no output.weight: logits come from token_embd.weight.
  std::string path = ::testing::TempDir() + "/tied_" + std::to_string(::getpid()) + ".gguf";
  ASSERT_TRUE(WriteRandomModel({.shape = "smollm2-135m",
                                .dtype = "q8_0",
                                .vocab_path = VocabPath(),
                                .output_path = path,
                                .num_layers_override = 1})
                  .ok());
  auto file = GgufFile::Open(path);
  std::remove(path.c_str());
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_EQ((*file)->FindTensor("output.weight"), nullptr);
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto model = LoadModelFromGguf(**file, {.pool = &pool});
  ASSERT_TRUE(model.ok()) << model.error();
  const ModelConfig& config = (*model)->config();
  EXPECT_EQ(config.num_kv_heads, 3);
  auto kv = KvStorage::Create({.num_layers = 1,
                               .num_blocks = 1,
                               .block_size = 16,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  ForwardBatch batch;
  const std::vector<int32_t> block_table = {0};
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{1, 2, 3}, 0, {&block_table, 1}, 16, batch).ok());
  batch.logits_indices = {2};
  std::vector<float> logits(config.vocab_size);
  ASSERT_TRUE((*model)->Forward(batch, **kv, logits.data()).ok());
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
}

// --residual-scale multiplies the matrices writing into the residual stream and nothing else, so
// a cut of the model to its first layers stays the same model's first layers.
TEST(ModelLoadTest, ResidualScaleMultipliesOnlyTheResidualWriters) {
  const std::string base = ::testing::TempDir() + "/residual_" + std::to_string(::getpid());
  for (const float scale : {1.0f, 0.25f}) {
    ASSERT_TRUE(WriteRandomModel({.shape = "llama-tiny",
                                  .vocab_path = VocabPath(),
                                  .output_path = base + std::to_string(scale) + ".gguf",
                                  .num_layers_override = 1,
                                  .residual_scale = scale})
                    .ok());
  }
  auto plain = GgufFile::Open(base + std::to_string(1.0f) + ".gguf");
  auto scaled = GgufFile::Open(base + std::to_string(0.25f) + ".gguf");
  std::remove((base + std::to_string(1.0f) + ".gguf").c_str());
  std::remove((base + std::to_string(0.25f) + ".gguf").c_str());
  ASSERT_TRUE(plain.ok() && scaled.ok());
  for (const GgufTensor& tensor : (*plain)->tensors()) {
    const GgufTensor* other = (*scaled)->FindTensor(tensor.name);
    ASSERT_NE(other, nullptr) << tensor.name;
    ASSERT_EQ(tensor.type, GgmlType::kF32);
    ASSERT_EQ(other->num_bytes, tensor.num_bytes);
    const bool residual =
        tensor.name == "blk.0.attn_output.weight" || tensor.name == "blk.0.ffn_down.weight";
    const auto* values = reinterpret_cast<const float*>(tensor.data);
    const auto* other_values = reinterpret_cast<const float*>(other->data);
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      ASSERT_FLOAT_EQ(other_values[i], residual ? 0.25f * values[i] : values[i])
          << tensor.name << " [" << i << "]";
    }
  }
}

TEST(ModelLoadTest, ReportsUnsupportedArchitectureAndMissingTensors) {
  // The vocabulary file is a GGUF with no model tensors.
  auto file = GgufFile::Open(VocabPath());
  ASSERT_TRUE(file.ok());
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  auto model = LoadModelFromGguf(**file, {.pool = &pool});
  EXPECT_FALSE(model.ok());
}

}  // namespace
}  // namespace vllm
