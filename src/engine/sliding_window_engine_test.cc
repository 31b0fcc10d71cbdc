// The hybrid KV cache manager through the engine, on the tiny Gemma 3 oracle (layers 0-4 slide
// over a window of 12 positions, layer 5 is global): freeing the blocks that leave the window
// changes neither the tokens nor the logits, keeps the blocks a request holds bounded, and works
// with prefix caching and preemption.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_core.h"
#include "engine/kv_cache_sizing.h"
#include "model/kv_cache_layout.h"
#include "model/model_loader.h"
#include "model/random_model.h"

namespace vllm {
namespace {

constexpr int64_t kWindow = 12;
constexpr int kBlockSize = 4;
constexpr int kPromptLen = 40;
constexpr int kNumGenerated = 200;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The blocks a request holds over all groups after the step that computed tokens [n0, n): the
// whole table, ceil(n / block_size) entries, in a full group; in a sliding group the entries from
// FirstVisibleBlock(n0) = max(0, n0 - W + 1) / block_size on.
int64_t ExpectedHeldBlocks(const KvCacheLayout& layout, int64_t n0, int64_t n) {
  int64_t num_blocks = 0;
  for (const KvCacheLayout::Group& group : layout.groups) {
    const int64_t window = group.sliding_window;
    const int64_t first_visible =
        window > 0 ? std::max<int64_t>(0, n0 - window + 1) / kBlockSize : 0;
    num_blocks += CeilDiv(n, kBlockSize) - first_visible;
  }
  return num_blocks;
}

class SlidingWindowEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadModel(std::string(VLLM_SHARED_DIR) + "/oracles/models/tiny-gemma3.gguf");
    ASSERT_EQ(loaded_.model->config().sliding_window, kWindow);
  }

  void LoadModel(const std::string& path) {
    auto loaded = LoadModelFromPath(path, {.pool = &pool_});
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    loaded_ = std::move(*loaded);
  }

  EngineArgs Args(bool hybrid) const {
    EngineArgs args;
    args.block_size = kBlockSize;
    args.kv_cache_memory_bytes = int64_t{16} << 20;
    args.max_model_len = 512;
    args.max_num_seqs = 8;
    args.disable_hybrid_kv_cache_manager = !hybrid;
    args.max_logprobs = -1;  // the requests' logprobs cover the whole vocabulary
    return args;
  }

  std::unique_ptr<EngineCore> Core(const EngineArgs& args) {
    auto core = EngineCore::Create(*loaded_.model, args);
    EXPECT_TRUE(core.ok()) << core.error();
    return core.ok() ? std::move(*core) : nullptr;
  }

  // kPromptLen tokens spread over the vocabulary, different for each seed.
  std::vector<int32_t> Prompt(int seed) const {
    std::vector<int32_t> prompt(kPromptLen);
    for (int i = 0; i < kPromptLen; ++i) {
      prompt[i] = static_cast<int32_t>(3 + (i * 37 + seed * 101) %
                                               (loaded_.model->config().vocab_size - 3));
    }
    return prompt;
  }

  static EngineCoreRequest GreedyRequest(const std::string& id, std::vector<int32_t> prompt,
                                         int max_tokens) {
    EngineCoreRequest request{.request_id = id, .prompt_token_ids = std::move(prompt)};
    request.params.temperature = 0.0f;
    request.params.max_tokens = max_tokens;
    request.params.ignore_eos = true;
    request.params.logprobs = -1;  // the whole vocabulary: the logits up to a shift
    return request;
  }

  struct Generation {
    std::vector<int32_t> token_ids;
    std::vector<TokenLogprobs> logprobs;
    int64_t num_cached_tokens = 0;
  };

  // Steps `core` until every request finished; calls after_step() after each step.
  template <typename AfterStep>
  static std::map<std::string, Generation> RunToCompletion(EngineCore& core, AfterStep after_step) {
    std::map<std::string, Generation> generations;
    while (core.HasUnfinishedRequests()) {
      auto outputs = core.Step();
      EXPECT_TRUE(outputs.ok()) << outputs.error();
      if (!outputs.ok()) break;
      for (EngineCoreOutput& output : *outputs) {
        Generation& generation = generations[output.request_id];
        generation.token_ids.insert(generation.token_ids.end(), output.new_token_ids.begin(),
                                    output.new_token_ids.end());
        generation.logprobs.insert(generation.logprobs.end(), output.new_logprobs.begin(),
                                   output.new_logprobs.end());
        generation.num_cached_tokens = output.num_cached_tokens;
      }
      after_step();
    }
    return generations;
  }
  static std::map<std::string, Generation> RunToCompletion(EngineCore& core) {
    return RunToCompletion(core, [] {});
  }

  static void ExpectSameGeneration(const Generation& actual, const Generation& expected) {
    EXPECT_EQ(actual.token_ids, expected.token_ids);
    ASSERT_EQ(actual.logprobs.size(), expected.logprobs.size());
    for (size_t i = 0; i < actual.logprobs.size(); ++i) {
      ASSERT_EQ(actual.logprobs[i].top, expected.logprobs[i].top) << "token " << i;  // bitwise
    }
  }

  // Runs four greedy requests (prompts first_prompt.. first_prompt + 3) on both cores; `tested`
  // must generate what `reference` does.
  void ExpectSameGenerations(EngineCore& reference, EngineCore& tested, int first_prompt,
                             int max_tokens) const {
    for (int i = 0; i < 4; ++i) {
      const std::string id = "r" + std::to_string(i);
      ASSERT_TRUE(
          reference.AddRequest(GreedyRequest(id, Prompt(first_prompt + i), max_tokens)).ok());
      ASSERT_TRUE(tested.AddRequest(GreedyRequest(id, Prompt(first_prompt + i), max_tokens)).ok());
    }
    auto expected = RunToCompletion(reference);
    auto outputs = RunToCompletion(tested);
    for (int i = 0; i < 4; ++i) {
      const std::string id = "r" + std::to_string(i);
      SCOPED_TRACE(id);
      ExpectSameGeneration(outputs[id], expected[id]);
    }
  }

  ThreadPool pool_{ThreadPool::Options{.num_threads = 2}};
  LoadedModel loaded_;
};

TEST_F(SlidingWindowEngineTest, TheModelHasFiveSlidingGroupsAndOneFull) {
  const KvCacheLayout layout = KvCacheLayoutOf(loaded_.model->config());
  EXPECT_EQ(layout.group_size, 1);
  ASSERT_EQ(layout.num_groups(), 6);
  for (int g = 0; g < 5; ++g) EXPECT_EQ(layout.groups[g].sliding_window, kWindow);
  EXPECT_EQ(layout.groups[5].sliding_window, 0);
}

TEST_F(SlidingWindowEngineTest, TheCacheMustHoldOneRequestOfMaxModelLen) {
  EngineArgs args = Args(/*hybrid=*/true);
  args.max_model_len = 128;
  args.max_num_batched_tokens = 16;
  // 32 blocks of the global layer, 8 of each local one (a 16-token step sees 27 positions), and
  // the null block; a block holds 4 tokens of 1 layer.
  const int64_t bytes_per_block = 2 * kBlockSize * 64 * int64_t{sizeof(float)};
  args.kv_cache_memory_bytes = (32 + 5 * 8 + 1) * bytes_per_block;
  auto core = EngineCore::Create(*loaded_.model, args);
  ASSERT_TRUE(core.ok()) << core.error();
  EXPECT_EQ((*core)->num_kv_blocks(), 32 + 5 * 8 + 1);
  args.kv_cache_memory_bytes = (32 + 5 * 8) * bytes_per_block;
  core = EngineCore::Create(*loaded_.model, args);
  ASSERT_FALSE(core.ok());
  EXPECT_THAT(core.error(),
              ::testing::HasSubstr("the KV cache holds 71 blocks, fewer than the 72"));
}

// vLLM's --disable-sliding-window: the context becomes the window (a longer one is refused as
// past the model's).
TEST_F(SlidingWindowEngineTest, DisablingTheSlidingWindowCapsTheContextToIt) {
  EngineArgs args = Args(/*hybrid=*/true);
  args.disable_sliding_window = true;
  args.max_model_len = 0;  // the model's
  auto core = EngineCore::Create(*loaded_.model, args);
  ASSERT_TRUE(core.ok()) << core.error();
  EXPECT_EQ((*core)->max_model_len(), kWindow);
  args.max_model_len = kWindow + 1;
  core = EngineCore::Create(*loaded_.model, args);
  ASSERT_FALSE(core.ok());
  EXPECT_THAT(core.error(), ::testing::HasSubstr("User-specified max_model_len (13) is greater "
                                                 "than the derived max_model_len"));
}

TEST_F(SlidingWindowEngineTest, FreeingOutsideTheWindowChangesNoLogitAndBoundsTheBlocksHeld) {
  std::unique_ptr<EngineCore> full = Core(Args(/*hybrid=*/false));
  std::unique_ptr<EngineCore> hybrid = Core(Args(/*hybrid=*/true));
  ASSERT_TRUE(full && hybrid);
  ASSERT_TRUE(full->AddRequest(GreedyRequest("a", Prompt(0), kNumGenerated)).ok());
  ASSERT_TRUE(hybrid->AddRequest(GreedyRequest("a", Prompt(0), kNumGenerated)).ok());
  int64_t last_held_full = 0;  // blocks of all 6 layers
  const Generation expected = RunToCompletion(*full, [&] {
    if (full->HasUnfinishedRequests()) last_held_full = full->kv_cache().num_held_blocks("a");
  })["a"];
  ASSERT_EQ(expected.token_ids.size(), static_cast<size_t>(kNumGenerated));

  // The prompt is one step, each output token but the last one more.
  const KvCacheLayout layout = KvCacheLayoutOf(loaded_.model->config());
  int64_t num_computed = 0;  // before the step
  int64_t num_tokens = 0;    // after it
  int64_t last_held = 0;     // blocks of 1 layer
  const std::map<std::string, Generation> generations = RunToCompletion(*hybrid, [&] {
    num_computed = num_tokens;
    num_tokens = num_tokens == 0 ? kPromptLen : num_tokens + 1;
    if (!hybrid->HasUnfinishedRequests()) return;  // finished and freed
    last_held = hybrid->kv_cache().num_held_blocks("a");
    EXPECT_EQ(last_held, ExpectedHeldBlocks(layout, num_computed, num_tokens)) << num_tokens;
    if (num_computed > 0) {  // decode: the window's 12 positions span at most 4 blocks
      EXPECT_LE(last_held, CeilDiv(num_tokens, kBlockSize) + 5 * (CeilDiv(kWindow, kBlockSize) + 1))
          << num_tokens;
    }
  });
  ExpectSameGeneration(generations.at("a"), expected);
  EXPECT_EQ(num_tokens, kPromptLen + kNumGenerated - 1);
  EXPECT_EQ(hybrid->kv_cache().num_held_blocks("a"), 0);
  EXPECT_EQ(hybrid->stats().num_free_blocks, hybrid->num_kv_blocks() - 1);  // all but the null one
  // At the last step (239 tokens): 60 blocks of the global layer and 4 of each local layer, where
  // keeping every block holds 60 blocks of all 6 layers: 80 / 360 of the memory.
  EXPECT_EQ(last_held, 60 + 5 * 4);
  EXPECT_EQ(last_held_full, 60);
  // The peak is the last step's: 80 blocks of one layer against 60 blocks of all six.
  const EngineStats hybrid_stats = hybrid->stats();
  const EngineStats full_stats = full->stats();
  EXPECT_EQ(hybrid_stats.peak_kv_blocks_in_use, 60 + 5 * 4);
  EXPECT_EQ(full_stats.peak_kv_blocks_in_use, 60);
  EXPECT_EQ(full_stats.kv_bytes_per_block, 6 * hybrid_stats.kv_bytes_per_block);
  EXPECT_GT(hybrid_stats.kv_bytes_per_block, 0);
}

TEST_F(SlidingWindowEngineTest, ASecondRunOfTheSamePromptHitsThePrefixCache) {
  std::unique_ptr<EngineCore> core = Core(Args(/*hybrid=*/true));
  ASSERT_TRUE(core);
  ASSERT_TRUE(core->AddRequest(GreedyRequest("first", Prompt(1), 60)).ok());
  const Generation first = RunToCompletion(*core)["first"];
  EXPECT_EQ(first.num_cached_tokens, 0);
  ASSERT_TRUE(core->AddRequest(GreedyRequest("second", Prompt(1), 60)).ok());
  const Generation second = RunToCompletion(*core)["second"];
  ExpectSameGeneration(second, first);
  // 9 of the 10 prompt blocks (the hit stops short of the last token). The local layers' blocks
  // 0-5, which position 36 does not see, left their window during the first run: cached, free,
  // and not needed by the hit.
  EXPECT_EQ(second.num_cached_tokens, 36);
  EXPECT_EQ(core->stats().prefix_cache_hits, 36);
}

TEST_F(SlidingWindowEngineTest, PreemptionWithWindowsDoesNotChangeOutputs) {
  EngineArgs roomy_args = Args(/*hybrid=*/true);
  roomy_args.max_num_batched_tokens = 16;  // prompts in chunks: a sliding group holds 8 blocks
  roomy_args.enable_prefix_caching = false;
  EngineArgs tight_args = roomy_args;
  tight_args.max_model_len = 128;
  // Room for one request of 128 tokens (32 full blocks + 5 x 8 sliding ones, plus the null block)
  // and 20 blocks more: four requests of 40 + 60 tokens, each holding 45 blocks while decoding,
  // must take turns.
  const KvCacheLayout layout = KvCacheLayoutOf(loaded_.model->config());
  ASSERT_EQ(MaxBlocksPerRequest(layout, tight_args), 32 + 5 * 8);
  const int64_t blocks = 32 + 5 * 8 + 1 + 20;
  tight_args.kv_cache_memory_bytes =
      blocks * SizeKvCache(loaded_.model->config(), layout, tight_args)->bytes_per_block;
  std::unique_ptr<EngineCore> roomy = Core(roomy_args);
  std::unique_ptr<EngineCore> tight = Core(tight_args);
  ASSERT_TRUE(roomy && tight);
  ASSERT_EQ(tight->num_kv_blocks(), blocks);
  ExpectSameGenerations(*roomy, *tight, /*first_prompt=*/10, /*max_tokens=*/60);
  EXPECT_GT(tight->stats().num_preemptions, 0);
  EXPECT_EQ(tight->stats().num_free_blocks, blocks - 1);
}

// Speculative decoding over windows: drafts verified in chunks that cross block and window
// boundaries, rejected drafts' slots overwritten later, with preemption; every logit unchanged.
TEST_F(SlidingWindowEngineTest, SpeculativeDecodingChangesNoLogit) {
  EngineArgs plain_args = Args(/*hybrid=*/true);
  plain_args.max_num_batched_tokens = 16;  // prompts in chunks: a sliding group holds 8 blocks
  EngineArgs speculative_args = plain_args;
  speculative_args.speculative_config =
      SpeculativeConfig{.method = "ngram", .num_speculative_tokens = 5, .prompt_lookup_min = 1};
  speculative_args.max_model_len = 128;
  const KvCacheLayout layout = KvCacheLayoutOf(loaded_.model->config());
  const int64_t blocks = 32 + 5 * 8 + 1 + 20;  // as PreemptionWithWindowsDoesNotChangeOutputs
  speculative_args.kv_cache_memory_bytes =
      blocks * SizeKvCache(loaded_.model->config(), layout, speculative_args)->bytes_per_block;
  std::unique_ptr<EngineCore> plain = Core(plain_args);
  std::unique_ptr<EngineCore> speculative = Core(speculative_args);
  ASSERT_TRUE(plain && speculative);
  ExpectSameGenerations(*plain, *speculative, /*first_prompt=*/20, /*max_tokens=*/80);
  EXPECT_GT(speculative->stats().spec_decoding.num_accepted_tokens, 0);
  EXPECT_GT(speculative->stats().num_preemptions, 0);
}

// Random Gemma 2 and gpt-oss shapes: 4 layers alternating sliding (window 8) and global, two KV
// cache groups of 2 layers, so a block holds 2 layers at their places.
class TwoLayersPerBlockTest : public SlidingWindowEngineTest,
                              public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    const std::string path = ::testing::TempDir() + "/sliding_" + GetParam() + "_" +
                             std::to_string(::getpid()) + ".gguf";
    ASSERT_TRUE(
        WriteRandomModel({.shape = GetParam(),
                          .vocab_path = std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf",
                          .output_path = path,
                          .seed = 3})
            .ok());
    LoadModel(path);
    std::remove(path.c_str());
  }
};

TEST_P(TwoLayersPerBlockTest, FreeingOutsideTheWindowChangesNoLogit) {
  const KvCacheLayout layout = KvCacheLayoutOf(loaded_.model->config());
  ASSERT_EQ(layout.group_size, 2);
  ASSERT_EQ(layout.num_groups(), 2);
  std::unique_ptr<EngineCore> full = Core(Args(/*hybrid=*/false));
  std::unique_ptr<EngineCore> hybrid = Core(Args(/*hybrid=*/true));
  ASSERT_TRUE(full && hybrid);
  for (int i = 0; i < 3; ++i) {  // batched, in different phases
    const std::string id = "r" + std::to_string(i);
    ASSERT_TRUE(full->AddRequest(GreedyRequest(id, Prompt(20 + i), 80 + 10 * i)).ok());
    ASSERT_TRUE(hybrid->AddRequest(GreedyRequest(id, Prompt(20 + i), 80 + 10 * i)).ok());
  }
  auto expected = RunToCompletion(*full);
  int64_t most_held = 0;
  auto outputs = RunToCompletion(
      *hybrid, [&] { most_held = std::max(most_held, hybrid->kv_cache().num_held_blocks("r2")); });
  for (int i = 0; i < 3; ++i) {
    const std::string id = "r" + std::to_string(i);
    SCOPED_TRACE(id);
    ExpectSameGeneration(outputs[id], expected[id]);
  }
  // r2 holds the most at its last step, 139 tokens: 35 full blocks and 3 sliding ones (position
  // 138 sees [131, 138]) where keeping every block would hold 35 of both groups.
  EXPECT_EQ(most_held, 35 + 3);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TwoLayersPerBlockTest,
                         ::testing::Values("gemma2-tiny", "gpt-oss-tiny"));

}  // namespace
}  // namespace vllm
