// Speculative decoding with a draft model ("draft_model") through the engine on the real demo
// model (stories260K). With the target itself as the draft every draft must be accepted (its
// greedy drafts are the target's greedy tokens, computed the same way whatever the batch), which
// also checks the draft's KV bookkeeping across acceptance, chunked prefill, prefix-cache hits and
// preemption; with a random draft of the same vocabulary few are. Either way greedy outputs are
// token-identical to plain decoding, and seeded random sampling is reproducible.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "common/temp_test_dir.h"
#include "engine/engine_core.h"
#include "engine/expect_same_completions.h"
#include "engine/kv_cache_sizing.h"
#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"
#include "model/model_loader.h"
#include "model/random_model.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

constexpr int kNumSpeculativeTokens = 3;

std::string StoriesPath() { return std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf"; }

EngineArgs DraftArgs(const std::string& draft_path, EngineArgs args = StoriesArgs()) {
  args.speculative_config = SpeculativeConfig{.method = "draft_model",
                                              .model = draft_path,
                                              .num_speculative_tokens = kNumSpeculativeTokens};
  return args;
}

// A random model of `shape` cut to `num_layers` layers over the tokens of `vocab_path`'s
// tokenizer, its residual-writing matrices scaled by `residual_scale`.
std::string WriteRandomModelFile(const std::string& shape, const std::string& name,
                                 const std::string& vocab_path = StoriesPath(),
                                 int64_t num_layers = 2, float residual_scale = 1.0f) {
  static const TempTestDir files("draft_model_engine_test");  // removed when the program exits
  const std::string path = files.File(name + ".gguf");
  const Status written = WriteRandomModel({.shape = shape,
                                           .vocab_path = vocab_path,
                                           .output_path = path,
                                           .seed = 77,
                                           .num_layers_override = num_layers,
                                           .residual_scale = residual_scale});
  EXPECT_TRUE(written.ok()) << written.message();
  return path;
}

// stories260K's shape and vocabulary, written once per test process.
const std::string& RandomDraftPath() {
  static const std::string path = WriteRandomModelFile("stories260k", "random_draft");
  return path;
}

// Prompts of different lengths.
const std::vector<std::string> kPrompts = {
    "Once upon a time, there was a little girl named Lily. She loved to play outside",
    "The dog",
    "Lily and Tom went to the park.",
    "One day",
    "The sun was hot and the birds were singing in the tall green trees near the river",
    "A little bird",
};

void ExpectEveryDraftAccepted(const SpecDecodingStats& stats) {
  EXPECT_GT(stats.num_drafts, 0);
  EXPECT_GT(stats.num_draft_tokens, 0);
  EXPECT_EQ(stats.num_accepted_tokens, stats.num_draft_tokens);
}

TEST(DraftModelEngineTest, TargetAsItsOwnDraftAcceptsEveryDraft) {
  LLM plain(StoriesArgs());
  LLM speculative(DraftArgs(StoriesPath()));
  ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(60), false),
                        plain.Generate(kPrompts, Greedy(60), false));
  const SpecDecodingStats& stats = speculative.engine().stats().spec_decoding;
  ExpectEveryDraftAccepted(stats);
  ASSERT_EQ(stats.num_accepted_tokens_per_pos.size(), static_cast<size_t>(kNumSpeculativeTokens));
  EXPECT_GT(stats.mean_acceptance_length(), 3.0);  // most steps emit k + 1 = 4 tokens
}

TEST(DraftModelEngineTest, RandomDraftMatchesPlainDecodingWithFewAcceptances) {
  LLM plain(StoriesArgs());
  LLM speculative(DraftArgs(RandomDraftPath()));
  ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(60), false),
                        plain.Generate(kPrompts, Greedy(60), false));
  const SpecDecodingStats& stats = speculative.engine().stats().spec_decoding;
  EXPECT_GT(stats.num_drafts, 0);
  EXPECT_LT(stats.num_accepted_tokens * 2, stats.num_draft_tokens);
}

// A draft that agrees with the target only in part: the target's first layer, of a target whose
// residual-writing matrices are scaled by 0.3 (64 % of draft tokens accepted; about a quarter
// unscaled). Drafts are rejected at every position, the rest of each run is rolled back, and the
// output stays plain decoding's.
TEST(DraftModelEngineTest, PartlyAgreeingDraftMatchesPlainDecoding) {
  constexpr float kResidualScale = 0.3f;
  const std::string target =
      WriteRandomModelFile("llama-tiny", "target", StoriesPath(), 4, kResidualScale);
  const std::string draft =
      WriteRandomModelFile("llama-tiny", "cut", StoriesPath(), 1, kResidualScale);
  LLM plain(TestArgs(target));
  LLM speculative(DraftArgs(draft, TestArgs(target)));
  ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(60), false),
                        plain.Generate(kPrompts, Greedy(60), false));
  const SpecDecodingStats& stats = speculative.engine().stats().spec_decoding;
  EXPECT_GT(stats.num_accepted_tokens * 5, stats.num_draft_tokens * 2);  // over two fifths
  EXPECT_LT(stats.num_accepted_tokens * 5, stats.num_draft_tokens * 4);  // under four fifths
  ASSERT_EQ(stats.num_accepted_tokens_per_pos.size(), static_cast<size_t>(kNumSpeculativeTokens));
  EXPECT_GT(stats.num_accepted_tokens_per_pos.back(), 0);  // some drafts accepted whole
}

TEST(DraftModelEngineTest, StopsInsideAnAcceptedRunMatchPlainDecoding) {
  LLM plain(StoriesArgs());
  LLM speculative(DraftArgs(StoriesPath()));
  // max_tokens at every length up to 9 ends runs of k + 1 accepted tokens at each offset.
  for (int max_tokens = 1; max_tokens <= 9; ++max_tokens) {
    ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(max_tokens), false),
                          plain.Generate(kPrompts, Greedy(max_tokens), false));
  }
  // A stop token id from the middle of each output (the check EOS shares).
  const auto reference = plain.Generate(kPrompts, Greedy(40), false);
  std::vector<SamplingParams> stop_ids;
  for (const RequestOutput& output : reference) {
    SamplingParams params = Greedy(40);
    params.stop_token_ids = {output.outputs[0].token_ids[21]};
    stop_ids.push_back(params);
  }
  ExpectSameCompletions(speculative.Generate(kPrompts, stop_ids, false),
                        plain.Generate(kPrompts, stop_ids, false));
  ExpectEveryDraftAccepted(speculative.engine().stats().spec_decoding);
}

TEST(DraftModelEngineTest, MaxModelLenInsideAnAcceptedRunMatchesPlainDecoding) {
  EngineArgs short_context = StoriesArgs();
  short_context.max_model_len = 70;
  LLM plain(short_context);
  LLM speculative(DraftArgs(StoriesPath(), short_context));
  const auto expected = plain.Generate(kPrompts, Greedy(400), false);
  ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(400), false), expected);
  for (const RequestOutput& output : expected) {
    EXPECT_EQ(output.prompt_token_ids.size() + output.outputs[0].token_ids.size(), 70u);
  }
  ExpectEveryDraftAccepted(speculative.engine().stats().spec_decoding);
}

// Shared prefixes (prefix-cache hits), prompts chunked over several steps and preemptions: the
// draft recomputes the KV it did not write itself, so its drafts stay the target's.
TEST(DraftModelEngineTest, PrefixHitsChunkedPrefillAndPreemptionKeepTheDraftExact) {
  LLM plain(StoriesArgs());
  std::vector<std::string> prompts;
  for (int i = 0; i < 16; ++i) prompts.push_back(kPrompts[i % kPrompts.size()]);
  const auto expected = plain.Generate(prompts, Greedy(64), false);
  EngineArgs tight = DraftArgs(StoriesPath());
  tight.max_model_len = 160;
  tight.max_num_batched_tokens = 24;  // prompts take several steps
  // 24 blocks of 16 tokens, each holding the target's and the draft's K/V (2 x 20480 bytes), for
  // 16 sequences of ~90 tokens.
  tight.kv_cache_memory_bytes = 24 * 2 * 20480;
  LLM small(tight);
  ExpectSameCompletions(small.Generate(prompts, Greedy(64), false), expected);
  const EngineStats stats = small.engine().stats();
  EXPECT_GT(stats.num_preemptions, 0);
  EXPECT_GT(stats.prefix_cache_hits, 0);
  EXPECT_EQ(stats.num_free_blocks, 24);
  ExpectEveryDraftAccepted(stats.spec_decoding);
}

TEST(DraftModelEngineTest, SeededRandomSamplingIsReproducible) {
  const SamplingParams params = SeededSampling(60);
  for (const std::string& draft : {StoriesPath(), RandomDraftPath()}) {
    SCOPED_TRACE(draft);
    LLM first(DraftArgs(draft));
    LLM second(DraftArgs(draft));
    ExpectSeededSamplingIgnoresTheBatch(first, second, kPrompts, params);
    EXPECT_GT(first.engine().stats().spec_decoding.num_drafts, 0);
  }
}

// A target with sliding-window and full-attention KV cache groups (the tiny Gemma 3 oracle:
// layers 0-4 slide over 12 positions, layer 5 is global) as its own draft: the draft's KV follows
// the full group's block table, its sliding layers mask their window, and every draft is accepted
// over sequences far longer than the window.
TEST(DraftModelEngineTest, HybridKvCacheTargetAsItsOwnDraft) {
  const std::string path = std::string(VLLM_SHARED_DIR) + "/oracles/models/tiny-gemma3.gguf";
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  auto target = LoadModelFromPath(path, {.pool = &pool});
  ASSERT_TRUE(target.ok()) << target.error();
  const int64_t vocab_size = target->model->config().vocab_size;
  EngineArgs args;
  args.block_size = 4;
  args.kv_cache_memory_bytes = int64_t{16} << 20;
  args.max_model_len = 512;
  auto run = [&](const EngineArgs& core_args, SpecDecodingStats* stats) {
    std::map<std::string, std::vector<int32_t>> generated;
    auto core = EngineCore::Create(*target->model, core_args, &pool);
    EXPECT_TRUE(core.ok()) << core.error();
    if (!core.ok()) return generated;
    for (int r = 0; r < 3; ++r) {
      EngineCoreRequest request{.request_id = "r" + std::to_string(r)};
      for (int i = 0; i < 20 + 13 * r; ++i) {
        request.prompt_token_ids.push_back(
            static_cast<int32_t>(3 + (i * 37 + r * 101) % (vocab_size - 3)));
      }
      request.params.temperature = 0.0f;
      request.params.max_tokens = 100;
      request.params.ignore_eos = true;
      EXPECT_TRUE((*core)->AddRequest(std::move(request)).ok());
    }
    while ((*core)->HasUnfinishedRequests()) {
      auto outputs = (*core)->Step();
      EXPECT_TRUE(outputs.ok()) << outputs.error();
      if (!outputs.ok()) break;
      for (const EngineCoreOutput& output : *outputs) {
        std::vector<int32_t>& tokens = generated[output.request_id];
        tokens.insert(tokens.end(), output.new_token_ids.begin(), output.new_token_ids.end());
      }
    }
    *stats = (*core)->stats().spec_decoding;
    return generated;
  };
  SpecDecodingStats plain_stats;
  SpecDecodingStats draft_stats;
  const auto expected = run(args, &plain_stats);
  const auto actual = run(DraftArgs(path, args), &draft_stats);
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(actual, expected);
  ExpectEveryDraftAccepted(draft_stats);
}

// Every block holds the target's and the draft's K/V in the KV cache dtype, and a request's k
// lookahead slots count among the blocks a sliding group holds.
TEST(DraftModelEngineTest, KvCacheBlocksHoldTheDraftsKvAndLookaheadSlots) {
  ModelConfig target;  // f32 block of 16 tokens: 2 · 4 layers · 16 · 2 heads · 64 · 4 B = 64 KiB
  target.num_layers = 4;
  target.num_kv_heads = 2;
  target.head_dim = 64;
  ModelConfig draft;  // 2 · 1 layer · 16 · 2 heads · 32 · 4 B = 8 KiB
  draft.num_layers = 1;
  draft.num_kv_heads = 2;
  draft.head_dim = 32;
  EngineArgs args = {.block_size = 16,
                     .kv_cache_memory_bytes = int64_t{72} << 20,
                     .kv_cache_dtype = "float32",
                     .max_model_len = 256,
                     .max_num_seqs = 1000,
                     .max_num_batched_tokens = 40};
  args.speculative_config = SpeculativeConfig{.method = "draft_model", .num_speculative_tokens = 3};
  const KvCacheLayout one_group = SingleGroupKvCacheLayout(target.num_layers);
  auto size = SizeKvCache(target, one_group, args, &draft);
  ASSERT_TRUE(size.ok()) << size.error();
  EXPECT_EQ(size->draft_bytes_per_block, 8 << 10);
  EXPECT_EQ(size->bytes_per_block, 72 << 10);
  EXPECT_EQ(size->num_blocks, 1024);
  args.kv_cache_dtype = "bfloat16";
  EXPECT_EQ(SizeKvCache(target, one_group, args, &draft)->draft_bytes_per_block, 4 << 10);

  // Layers 0, 1 slide over 8 positions: a step's 40 tokens see 47, 3 blocks + 1; with 3
  // lookahead slots 50, 4 blocks + 1. Layers 2, 3 hold all 256 / 16 blocks.
  const std::vector<int64_t> windows = {8, 8, 0, 0};
  const KvCacheLayout sliding = KvCacheLayoutFromWindows(windows);
  EXPECT_EQ(MaxBlocksPerRequest(sliding, args), 16 + 4);
  EXPECT_EQ(MaxBlocksPerRequest(sliding, args, 3), 16 + 5);
  args.max_num_seqs = 2;  // the cap: 2 requests' blocks and the null block
  EXPECT_EQ(SizeKvCache(target, sliding, args)->num_blocks, 2 * 20 + 1);
  EXPECT_EQ(SizeKvCache(target, sliding, args, &draft)->num_blocks, 2 * 21 + 1);
}

TEST(DraftModelEngineTest, ConfigErrorsAreClear) {
  auto error_of = [](const EngineArgs& args) {
    auto engine = LLMEngine::Create(args);
    return engine.ok() ? std::string("(created)") : engine.error();
  };
  // A model without a method is a draft model, as vLLM infers it.
  EngineArgs inferred = StoriesArgs();
  inferred.speculative_config =
      SpeculativeConfig{.model = "/no/such/draft.gguf", .num_speculative_tokens = 2};
  EXPECT_THAT(error_of(inferred), HasSubstr("/no/such/draft.gguf"));
  EngineArgs no_tokens = DraftArgs(StoriesPath());
  no_tokens.speculative_config->num_speculative_tokens = 0;
  EXPECT_THAT(error_of(no_tokens), HasSubstr("num_speculative_tokens must be > 0, got 0"));
  EngineArgs no_model = DraftArgs("");
  EXPECT_THAT(error_of(no_model), HasSubstr("\"draft_model\" needs \"model\""));
  const std::string other_vocab =
      WriteRandomModelFile("stories260k", "llama_vocab_draft",
                           std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf");
  EXPECT_THAT(error_of(DraftArgs(other_vocab)),
              HasSubstr("the draft model's vocabulary size (32000) differs from the target "
                        "model's (512)"));
  // llama-tiny's context is 1024 positions; stories260K's 2048.
  const std::string short_draft = WriteRandomModelFile("llama-tiny", "short_draft");
  EXPECT_THAT(error_of(DraftArgs(short_draft)),
              HasSubstr("the draft model's max_model_len (1024) is less than the engine's (2048)"));
  EngineArgs fits = DraftArgs(short_draft);
  fits.max_model_len = 1024;
  EXPECT_EQ(error_of(fits), "(created)");
}

}  // namespace
}  // namespace vllm
