// Batch invariance of the architectures in arch/ other than Llama, on the tiny oracle GGUFs of
// ../shared/oracles: a sequence's logits are bit-identical whether it runs alone, batched with
// others (MoE experts then see other tokens in their groups) or in chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "model/model.h"

namespace vllm {
namespace {

constexpr int kBlockSize = 16;

class ArchOracleModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto file =
        GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/oracles/models/" + GetParam() + ".gguf");
    ASSERT_TRUE(file.ok()) << file.error();
    file_ = std::move(*file);
    auto model = LoadModelFromGguf(*file_, {.pool = &pool_});
    ASSERT_TRUE(model.ok()) << model.error();
    model_ = std::move(*model);
    const ModelConfig& config = model_->config();
    auto kv = KvStorage::Create({.num_layers = config.num_layers,
                                 .num_blocks = 64,
                                 .block_size = kBlockSize,
                                 .num_kv_heads = config.num_kv_heads,
                                 .head_dim = config.head_dim});
    ASSERT_TRUE(kv.ok());
    kv_ = std::move(*kv);
  }

  struct Seq {
    std::vector<int32_t> tokens;  // all tokens of the sequence
    std::vector<int32_t> blocks;  // its block table
  };

  Seq MakeSeq(int length, int first_block, uint32_t seed) const {
    std::mt19937 rng(seed);
    Seq seq;
    for (int i = 0; i < length; ++i) {
      seq.tokens.push_back(static_cast<int32_t>(rng() % model_->config().vocab_size));
    }
    for (int b = 0; b < (length + kBlockSize - 1) / kBlockSize; ++b) {
      seq.blocks.push_back(first_block + b);
    }
    return seq;
  }

  // Runs the chunks [begin, end) of each sequence as one batch; returns the logits of each chunk's
  // last token: [num_seqs, vocab_size].
  std::vector<float> Run(const std::vector<Seq>& seqs,
                         const std::vector<std::pair<int, int>>& spans) {
    ForwardBatch batch;
    for (size_t s = 0; s < seqs.size(); ++s) {
      auto [begin, end] = spans[s];
      const auto new_tokens = std::span<const int32_t>(seqs[s].tokens).subspan(begin, end - begin);
      EXPECT_TRUE(AppendSequence(new_tokens, begin, {&seqs[s].blocks, 1}, kBlockSize, batch).ok());
      batch.logits_indices.push_back(static_cast<int32_t>(batch.token_ids.size()) - 1);
    }
    std::vector<float> logits(seqs.size() * model_->config().vocab_size);
    Status status = model_->Forward(batch, *kv_, logits.data());
    EXPECT_TRUE(status.ok()) << status.message();
    return logits;
  }

  ThreadPool pool_{ThreadPool::Options{.num_threads = 2}};
  std::unique_ptr<GgufFile> file_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvStorage> kv_;
};

TEST_P(ArchOracleModelTest, BatchedEqualsAloneBitwise) {
  const int64_t vocab = model_->config().vocab_size;
  const std::vector<Seq> seqs = {MakeSeq(37, 0, 1), MakeSeq(5, 10, 2), MakeSeq(70, 20, 3)};
  std::vector<std::vector<float>> alone;
  for (const Seq& seq : seqs) {
    alone.push_back(Run({seq}, {{0, static_cast<int>(seq.tokens.size())}}));
  }
  const std::vector<float> batched = Run(seqs, {{0, 37}, {0, 5}, {0, 70}});
  for (size_t s = 0; s < seqs.size(); ++s) {
    EXPECT_TRUE(std::equal(alone[s].begin(), alone[s].end(), batched.begin() + s * vocab))
        << "sequence " << s;
  }
}

TEST_P(ArchOracleModelTest, ChunkedPrefillAndDecodeMatchOneShotBitwise) {
  const Seq seq = MakeSeq(50, 3, 4);
  const std::vector<float> one_shot = Run({seq}, {{0, 50}});
  Run({seq}, {{0, 20}});
  Run({seq}, {{20, 49}});
  const std::vector<float> chunked = Run({seq}, {{49, 50}});  // one decode token at position 49
  EXPECT_EQ(one_shot, chunked);
}

INSTANTIATE_TEST_SUITE_P(Oracles, ArchOracleModelTest,
                         ::testing::Values("tiny-qwen3moe", "tiny-phi3"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace vllm
