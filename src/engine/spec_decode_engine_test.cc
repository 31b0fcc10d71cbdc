// Speculative decoding with n-gram drafts through the engine on the real demo model
// (stories260K, whose stories repeat phrases): greedy outputs must be token-identical to plain
// decoding whatever the batch, stops, logprobs, structured outputs or preemption, drafts must be
// accepted, and seeded random sampling must be reproducible.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/expect_same_completions.h"
#include "engine/llm_engine.h"
#include "engine/output_processor.h"
#include "engine/speculative_config.h"
#include "engine/test_engine_args.h"
#include "vllm/async_llm.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

EngineArgs SpeculativeArgs(EngineArgs args = StoriesArgs()) {
  args.speculative_config = SpeculativeConfig{.method = "ngram",
                                              .num_speculative_tokens = 4,
                                              .prompt_lookup_max = 4,
                                              .prompt_lookup_min = 1};
  return args;
}

// Prompts of different lengths; the first ones repeat themselves so n-grams match at once.
const std::vector<std::string> kPrompts = {
    "Once upon a time, there was a little girl named Lily. Once upon a time, there was a little",
    "The dog",
    "Lily and Tom went to the park. Lily and Tom",
    "One day",
    "The sun was hot. The sun was",
    "A little bird sat on a tree. It sang and sang. The little bird",
};

TEST(SpecDecodeEngineTest, GreedyBatchIsTokenIdenticalAndDraftsAreAccepted) {
  LLM plain(StoriesArgs());
  LLM speculative(SpeculativeArgs());
  const auto expected = plain.Generate(kPrompts, Greedy(120), false);
  const auto actual = speculative.Generate(kPrompts, Greedy(120), false);
  ExpectSameCompletions(actual, expected);
  const SpecDecodingStats& stats = speculative.engine().stats().spec_decoding;
  EXPECT_GT(stats.num_drafts, 0);
  EXPECT_GT(stats.num_accepted_tokens, 0);
  EXPECT_LE(stats.num_accepted_tokens, stats.num_draft_tokens);
  ASSERT_EQ(stats.num_accepted_tokens_per_pos.size(), 4u);
  EXPECT_GE(stats.num_accepted_tokens_per_pos[0], stats.num_accepted_tokens_per_pos[3]);
  EXPECT_GT(stats.mean_acceptance_length(), 1.0);
}

TEST(SpecDecodeEngineTest, StopsInsideAnAcceptedRunMatchPlainDecoding) {
  LLM plain(StoriesArgs());
  LLM speculative(SpeculativeArgs());
  const auto reference = plain.Generate(kPrompts, Greedy(80), false);
  // max_tokens at every length up to 12, a stop token id taken from the middle of each
  // output, and stop strings. (Greedy stories never reach EOS here; the scheduler tests stop
  // on EOS inside an accepted run.)
  for (int max_tokens = 1; max_tokens <= 12; ++max_tokens) {
    ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(max_tokens), false),
                          plain.Generate(kPrompts, Greedy(max_tokens), false));
  }
  std::vector<SamplingParams> stop_ids;
  for (const RequestOutput& output : reference) {
    SamplingParams params = Greedy(80);
    params.stop_token_ids = {output.outputs[0].token_ids[30]};
    stop_ids.push_back(params);
  }
  ExpectSameCompletions(speculative.Generate(kPrompts, stop_ids, false),
                        plain.Generate(kPrompts, stop_ids, false));
  SamplingParams stop_strings = Greedy(80);
  stop_strings.stop = {"park", "was a"};
  ExpectSameCompletions(speculative.Generate(kPrompts, stop_strings, false),
                        plain.Generate(kPrompts, stop_strings, false));
}

TEST(SpecDecodeEngineTest, MaxModelLenInsideAnAcceptedRunMatchesPlainDecoding) {
  EngineArgs short_context = StoriesArgs();
  short_context.max_model_len = 90;
  LLM plain(short_context);
  LLM speculative(SpeculativeArgs(short_context));
  const auto expected = plain.Generate(kPrompts, Greedy(400), false);
  ExpectSameCompletions(speculative.Generate(kPrompts, Greedy(400), false), expected);
  for (const RequestOutput& output : expected) {
    EXPECT_EQ(output.prompt_token_ids.size() + output.outputs[0].token_ids.size(), 90u);
  }
}

TEST(SpecDecodeEngineTest, LogprobsPenaltiesAndMinTokensMatchPlainDecoding) {
  LLM plain(StoriesArgs());
  LLM speculative(SpeculativeArgs());
  SamplingParams params = Greedy(60);
  params.logprobs = 3;
  params.repetition_penalty = 1.1f;
  params.presence_penalty = 0.2f;
  params.min_tokens = 50;
  const auto expected = plain.Generate(kPrompts, params, false);
  const auto actual = speculative.Generate(kPrompts, params, false);
  ExpectSameCompletions(actual, expected);
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_TRUE(actual[i].outputs[0].logprobs.has_value());
    ASSERT_EQ(actual[i].outputs[0].logprobs->size(), expected[i].outputs[0].logprobs->size());
    for (size_t t = 0; t < actual[i].outputs[0].logprobs->size(); ++t) {
      const PositionLogprobs& a = (*actual[i].outputs[0].logprobs)[t];
      const PositionLogprobs& e = (*expected[i].outputs[0].logprobs)[t];
      ASSERT_EQ(a.size(), e.size());
      for (const auto& [id, logprob] : e) EXPECT_EQ(a.at(id).logprob, logprob.logprob);
    }
    EXPECT_DOUBLE_EQ(actual[i].outputs[0].cumulative_logprob,
                     expected[i].outputs[0].cumulative_logprob);
  }
  EXPECT_GT(speculative.engine().stats().spec_decoding.num_accepted_tokens, 0);
}

TEST(SpecDecodeEngineTest, StructuredOutputMatchesPlainDecoding) {
  LLM plain(StoriesArgs());
  LLM speculative(SpeculativeArgs());
  SamplingParams params = Greedy(60);
  params.structured_outputs = StructuredOutputsParams{.regex = "(Lily and Tom ){2,6}went home\\."};
  ExpectSameCompletions(speculative.Generate(kPrompts, params, false),
                        plain.Generate(kPrompts, params, false));
}

TEST(SpecDecodeEngineTest, PreemptionDoesNotChangeOutputs) {
  LLM plain(StoriesArgs());
  std::vector<std::string> prompts;
  for (int i = 0; i < 16; ++i) prompts.push_back(kPrompts[i % kPrompts.size()]);
  const auto expected = plain.Generate(prompts, Greedy(64), false);
  EngineArgs tight = SpeculativeArgs();
  tight.max_model_len = 160;
  tight.kv_cache_memory_bytes = 24 * 16 * 1280;  // 24 blocks for 16 sequences of ~90 tokens
  LLM small(tight);
  ExpectSameCompletions(small.Generate(prompts, Greedy(64), false), expected);
  EXPECT_GT(small.engine().stats().num_preemptions, 0);
  EXPECT_GT(small.engine().stats().spec_decoding.num_accepted_tokens, 0);
  EXPECT_EQ(small.engine().stats().num_free_blocks, 24);
}

TEST(SpecDecodeEngineTest, SeededRandomSamplingIsReproducible) {
  const SamplingParams params = SeededSampling(80);
  LLM first(SpeculativeArgs());
  LLM second(SpeculativeArgs());
  ExpectSeededSamplingIgnoresTheBatch(first, second, kPrompts, params);
  EXPECT_GT(first.engine().stats().spec_decoding.num_accepted_tokens, 0);
}

TEST(SpecDecodeEngineTest, StreamedDeltasAddUpToTheFinalText) {
  LLM plain(StoriesArgs());
  SamplingParams params = Greedy(100);
  params.stop = {"ball."};
  const auto expected = plain.Generate(kPrompts, params, false);
  AsyncLLM engine(SpeculativeArgs());
  params.output_kind = RequestOutputKind::kDelta;
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    auto stream = engine.Generate("request-" + std::to_string(i), kPrompts[i], params);
    std::string text;
    std::vector<int32_t> token_ids;
    while (auto output = stream->Next()) {
      text += output->outputs[0].text;
      token_ids.insert(token_ids.end(), output->outputs[0].token_ids.begin(),
                       output->outputs[0].token_ids.end());
    }
    EXPECT_EQ(text, expected[i].outputs[0].text) << i;
    EXPECT_EQ(token_ids, expected[i].outputs[0].token_ids) << i;
  }
  EXPECT_GT(engine.stats().spec_decoding.num_accepted_tokens, 0);
}

// OutputProcessor with several tokens per step: a stop string completed by a middle token ends
// the text there, and the tokens after it are not reported.
TEST(SpecDecodeEngineTest, OutputProcessorStopsInsideAMultiTokenStep) {
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok()) << engine.error();
  const Tokenizer& tokenizer = (*engine)->tokenizer();
  const std::vector<int32_t> ids = tokenizer.Encode(" the big red ball", false);
  ASSERT_GE(ids.size(), 4u);
  // "big" ends inside ids, before its last token.
  SamplingParams params = Greedy(50);
  params.stop = {"big"};
  OutputProcessor processor(tokenizer);
  processor.AddRequest("r", "p", {1}, params, {"r"});
  EngineCoreOutput step;
  step.request_id = "r";
  step.new_token_ids = ids;
  std::vector<std::string> stopped;
  auto outputs = processor.Process({step}, &stopped);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(stopped, std::vector<std::string>{"r"});
  EXPECT_EQ(outputs[0].outputs[0].text, " the ");
  EXPECT_EQ(outputs[0].outputs[0].finish_reason, "stop");
  EXPECT_LT(outputs[0].outputs[0].token_ids.size(), ids.size());
}

TEST(SpecDecodeEngineTest, ConfigErrorsNameWhatWorks) {
  SpeculativeConfig config{.method = "ngram", .num_speculative_tokens = 3};
  auto resolved = ResolveSpeculativeConfig(config);
  ASSERT_TRUE(resolved.ok() && resolved->ngram);
  EXPECT_EQ(resolved->ngram->prompt_lookup_min, 5);  // vLLM's defaults
  EXPECT_EQ(resolved->ngram->prompt_lookup_max, 5);
  config.prompt_lookup_max = 3;
  EXPECT_EQ(ResolveSpeculativeConfig(config)->ngram->prompt_lookup_min, 3);
  config.prompt_lookup_min = 4;
  EXPECT_THAT(ResolveSpeculativeConfig(config).error(),
              HasSubstr("prompt_lookup_min=4 must be <= prompt_lookup_max=3"));
  EXPECT_THAT(ResolveSpeculativeConfig({.method = "ngram"}).error(),
              HasSubstr("num_speculative_tokens must be > 0"));
  // A model without a method is a draft model, as vLLM infers it.
  auto draft =
      ResolveSpeculativeConfig({.model = "/models/draft.gguf", .num_speculative_tokens = 3});
  ASSERT_TRUE(draft.ok());
  EXPECT_FALSE(draft->ngram);
  EXPECT_EQ(draft->draft_model, "/models/draft.gguf");
  EXPECT_EQ(draft->num_speculative_tokens, 3);
  EXPECT_THAT(ResolveSpeculativeConfig({.method = "eagle", .num_speculative_tokens = 3}).error(),
              HasSubstr("not supported; supported: \"ngram\" (prompt lookup), \"draft_model\""));
  EXPECT_TRUE(ResolveSpeculativeConfig({.model = "[ngram]", .num_speculative_tokens = 2})->ngram);
  EngineArgs args = StoriesArgs();
  args.speculative_config = SpeculativeConfig{.method = "medusa", .num_speculative_tokens = 2};
  auto engine = LLMEngine::Create(args);
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(engine.error(), HasSubstr("medusa"));
}

// Drafts are bounded: at most kMaxNumSpeculativeTokens of them, fewer than max_model_len (no step
// could propose more), and n-grams of at most kMaxPromptLookup tokens.
TEST(SpecDecodeEngineTest, RefusesUnboundedDrafts) {
  for (const char* model : {"ngram", "/models/draft.gguf"}) {
    EXPECT_TRUE(ResolveSpeculativeConfig(
                    {.model = model, .num_speculative_tokens = kMaxNumSpeculativeTokens})
                    .ok());
    for (int num : {kMaxNumSpeculativeTokens + 1, 1000000}) {
      EXPECT_THAT(ResolveSpeculativeConfig({.model = model, .num_speculative_tokens = num}).error(),
                  HasSubstr("num_speculative_tokens must be at most 64 (longer drafts are almost "
                            "never accepted whole), got " +
                            std::to_string(num)));
    }
  }
  SpeculativeConfig ngram{.method = "ngram", .num_speculative_tokens = 3};
  ngram.prompt_lookup_max = kMaxPromptLookup;
  EXPECT_TRUE(ResolveSpeculativeConfig(ngram).ok());
  ngram.prompt_lookup_max = 1000000000;
  EXPECT_THAT(ResolveSpeculativeConfig(ngram).error(),
              HasSubstr("prompt_lookup_max=1000000000 must be <= 64"));
  ngram.prompt_lookup_max.reset();
  ngram.prompt_lookup_min = kMaxPromptLookup + 1;  // the max defaults to it
  EXPECT_THAT(ResolveSpeculativeConfig(ngram).error(), HasSubstr("prompt_lookup_max=65"));
  EngineArgs args = StoriesArgs();
  args.max_model_len = 32;
  args.speculative_config = SpeculativeConfig{.method = "ngram", .num_speculative_tokens = 32};
  auto engine = LLMEngine::Create(args);
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(engine.error(),
              HasSubstr("num_speculative_tokens=32 must be less than max_model_len (32)"));
  args.speculative_config->num_speculative_tokens = 31;
  EXPECT_TRUE(LLMEngine::Create(args).ok());
}

}  // namespace
}  // namespace vllm
