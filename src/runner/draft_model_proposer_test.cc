// DraftModelProposer on the real demo model (stories260K) as the draft: a request whose prompt
// the draft has not seen catches up in budget-sized pieces and drafts only once caught up, with
// the drafts it would have made in one go; drafts stop at max_num_drafts and before
// max_model_len; a removed request starts over.
#include "runner/draft_model_proposer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/model_loader.h"

namespace vllm {
namespace {

constexpr int kNumSpeculativeTokens = 3;

class DraftModelProposerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = LoadModelFromPath(std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf",
                                    {.pool = &pool_});
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    draft_ = std::move(*loaded);
    for (int i = 0; i < 30; ++i) prompt_.push_back(1 + (i * 37) % 500);
  }

  std::unique_ptr<DraftModelProposer> Proposer(int64_t max_num_batched_tokens,
                                               int64_t max_model_len = 2048) {
    const ModelConfig& config = draft_.model->config();
    auto proposer = DraftModelProposer::Create({.model = draft_.model.get(),
                                                .num_speculative_tokens = kNumSpeculativeTokens,
                                                .max_model_len = max_model_len,
                                                .max_num_batched_tokens = max_num_batched_tokens},
                                               {.num_layers = config.num_layers,
                                                .num_blocks = 8,
                                                .block_size = 16,
                                                .num_kv_heads = config.num_kv_heads,
                                                .head_dim = config.head_dim});
    EXPECT_TRUE(proposer.ok()) << proposer.error();
    return proposer.ok() ? std::move(*proposer) : nullptr;
  }

  // Request "a" after a step that computed tokens from num_computed_tokens on and sampled one
  // token after the prompt's first `num_prompt` tokens.
  DraftModelProposer::Sequence Step(int64_t num_prompt, int64_t num_computed_tokens,
                                    int64_t max_num_drafts = kNumSpeculativeTokens) const {
    return {.request_id = "a",
            .prompt_token_ids = std::span<const int32_t>(prompt_).first(num_prompt),
            .sampled_token_ids = sampled_,
            .num_tokens = num_prompt + 1,
            .num_computed_tokens = num_computed_tokens,
            .block_tables = tables_,
            .max_num_drafts = max_num_drafts};
  }

  static std::vector<int32_t> ProposeOne(DraftModelProposer& proposer,
                                         const DraftModelProposer::Sequence& sequence) {
    auto drafts = proposer.Propose(std::span(&sequence, 1));
    EXPECT_TRUE(drafts.ok()) << drafts.error();
    return drafts.ok() ? (*drafts)[0] : std::vector<int32_t>{99999};
  }

  ThreadPool pool_{ThreadPool::Options{.num_threads = 2}};
  LoadedModel draft_;
  std::vector<int32_t> prompt_;
  const std::vector<int32_t> sampled_ = {7};
  const std::vector<std::vector<int32_t>> tables_ = {{0, 1, 2, 3}};
};

TEST_F(DraftModelProposerTest, CatchesUpInBudgetSizedPiecesBeforeDrafting) {
  // The target served 24 prompt tokens from the prefix cache: the draft never computed them.
  auto whole = Proposer(/*max_num_batched_tokens=*/512);
  const std::vector<int32_t> expected = ProposeOne(*whole, Step(30, 24));
  ASSERT_EQ(expected.size(), static_cast<size_t>(kNumSpeculativeTokens));

  auto chunked = Proposer(/*max_num_batched_tokens=*/10);
  EXPECT_TRUE(ProposeOne(*chunked, Step(30, 24)).empty());  // positions 0..9
  EXPECT_TRUE(ProposeOne(*chunked, Step(30, 24)).empty());  // 10..19
  EXPECT_EQ(ProposeOne(*chunked, Step(30, 24)), expected);  // 20..30, backlog 4

  // Forgotten (finished or preempted): its KV is not trusted again.
  chunked->RemoveRequest("a");
  EXPECT_TRUE(ProposeOne(*chunked, Step(30, 24)).empty());
}

TEST_F(DraftModelProposerTest, DraftsStopAtMaxNumDraftsAndBeforeMaxModelLen) {
  auto proposer = Proposer(512);
  const std::vector<int32_t> all = ProposeOne(*proposer, Step(30, 0));
  ASSERT_EQ(all.size(), 3u);
  proposer->RemoveRequest("a");
  EXPECT_EQ(ProposeOne(*proposer, Step(30, 0, /*max_num_drafts=*/1)), std::vector<int32_t>{all[0]});
  // 31 tokens and max_model_len 33: one draft, at position 31 = max_model_len - 2.
  auto short_context = Proposer(512, /*max_model_len=*/33);
  EXPECT_EQ(ProposeOne(*short_context, Step(30, 0)), std::vector<int32_t>{all[0]});
  // max_num_drafts 0: the tokens are computed, nothing is drafted.
  auto catch_up_only = Proposer(512);
  EXPECT_TRUE(ProposeOne(*catch_up_only, Step(30, 0, 0)).empty());
}

}  // namespace
}  // namespace vllm
