// Engine tests on the real demo model (stories260K): continuous batching must not change what a
// request produces, preemption and prefix caching must be invisible in outputs, and every
// SamplingParams feature here must behave as vLLM's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/thread_pool.h"
#include "engine/engine_core.h"
#include "engine/llm_engine.h"
#include "engine/output_processor.h"
#include "engine/test_engine_args.h"
#include "model/hf_export.h"
#include "model/model_loader.h"
#include "model/random_model.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

const char* const kReference =
    ", there was a little girl named Lily. She loved to play outside in the park. One day, she "
    "saw a big, red ball.";

std::vector<std::string> ThirtyTwoPrompts() {
  const std::vector<std::string> starts = {"Once upon a time", "The dog",     "Lily and Tom",
                                           "One day",          "The sun was", "A little bird",
                                           "Mom said",         "In the park"};
  std::vector<std::string> prompts;
  for (int i = 0; i < 32; ++i) prompts.push_back(starts[i % 8] + std::string(i / 8, '!'));
  return prompts;
}

TEST(EngineTest, GreedyMatchesTheReference) {
  LLM llm(StoriesArgs());
  auto outputs = llm.Generate({"Once upon a time"}, Greedy(40), false);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].outputs[0].text, kReference);
  EXPECT_EQ(outputs[0].outputs[0].token_ids.size(), 40u);
  EXPECT_EQ(outputs[0].outputs[0].finish_reason, "length");
  ASSERT_TRUE(outputs[0].queue_seconds.has_value());
  EXPECT_GE(*outputs[0].queue_seconds, 0.0);
}

TEST(EngineTest, BatchedEqualsAlone) {
  LLM llm(StoriesArgs());
  const auto prompts = ThirtyTwoPrompts();
  auto together = llm.Generate(prompts, Greedy(48), false);
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto alone = llm.Generate({prompts[i]}, Greedy(48), false);
    EXPECT_EQ(alone[0].outputs[0].token_ids, together[i].outputs[0].token_ids) << prompts[i];
  }
}

TEST(EngineTest, BatchedEqualsAloneOnARandomBf16Model) {
  const std::string path =
      ::testing::TempDir() + "/engine_bf16_" + std::to_string(::getpid()) + ".gguf";
  ASSERT_TRUE(WriteRandomModel(
                  {.shape = "llama-tiny",
                   .dtype = "bf16",
                   .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
                   .output_path = path,
                   .seed = 5})
                  .ok());
  LLM llm(TestArgs(path));
  std::remove(path.c_str());  // the mapping stays valid
  const auto prompts = ThirtyTwoPrompts();
  SamplingParams params = Greedy(24);
  params.ignore_eos = true;
  auto together = llm.Generate(prompts, params, false);
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto alone = llm.Generate({prompts[i]}, params, false);
    EXPECT_EQ(alone[0].outputs[0].token_ids, together[i].outputs[0].token_ids) << prompts[i];
  }
}

// The same random weights as a GGUF file and as a Hugging Face directory (safetensors,
// config.json, the llama2 tokenizer files): the same greedy tokens from the same prompt ids. (The
// two vocabularies differ — ../shared's llama2 tokenizer is not the GGUF's — so prompts are ids.)
TEST(EngineTest, HuggingFaceDirectoryGeneratesLikeItsGguf) {
  const std::string root = ::testing::TempDir() + "/engine_hf_" + std::to_string(::getpid());
  const std::string gguf = root + ".gguf";
  ASSERT_TRUE(WriteRandomModel(
                  {.shape = "llama-tiny",
                   .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
                   .output_path = gguf,
                   .seed = 11})
                  .ok());
  {
    auto file = GgufFile::Open(gguf);
    ASSERT_TRUE(file.ok());
    Status exported = WriteHfCheckpointFromGguf(
        **file, root, std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2");
    ASSERT_TRUE(exported.ok()) << exported.message();
  }
  SamplingParams params = Greedy(24);
  params.ignore_eos = true;
  const std::vector<std::vector<int32_t>> prompts = {
      {1, 9038, 2501, 263, 931}, {1, 450, 11203}, {1, 15043, 3186, 29991, 13, 13}};
  std::vector<RequestOutput> from_gguf, from_dir;
  {
    LLM llm(TestArgs(gguf));
    from_gguf = llm.GenerateFromTokenIds(prompts, params, false);
  }
  {
    LLM llm(TestArgs(root));
    from_dir = llm.GenerateFromTokenIds(prompts, params, false);
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(from_dir[i].outputs[0].token_ids, from_gguf[i].outputs[0].token_ids) << i;
  }
  // generation_config.json: its sampling defaults, and its EOS ids stop requests.
  const int32_t third = from_dir[0].outputs[0].token_ids[2];
  std::ofstream(root + "/generation_config.json")
      << R"({"eos_token_id": [2, )" << third << R"(], "temperature": 0.6, "top_p": 0.9,
                "top_k": 5, "min_p": 0.05, "repetition_penalty": 1.1, "presence_penalty": 1.5})";
  {
    LLM llm(TestArgs(root));
    const SamplingParams& defaults = llm.engine().default_sampling_params();
    EXPECT_FLOAT_EQ(defaults.temperature, 0.6f);
    EXPECT_FLOAT_EQ(defaults.top_p, 0.9f);
    EXPECT_EQ(defaults.top_k, 5);
    EXPECT_FLOAT_EQ(defaults.min_p, 0.05f);
    EXPECT_FLOAT_EQ(defaults.repetition_penalty, 1.1f);
    EXPECT_FLOAT_EQ(defaults.presence_penalty, 0.0f);  // not a generation-config field in vLLM
    SamplingParams stopping = Greedy(24);
    auto stopped = llm.GenerateFromTokenIds({prompts[0]}, stopping, false);
    EXPECT_EQ(stopped[0].outputs[0].token_ids.size(), 3u);
    EXPECT_EQ(stopped[0].outputs[0].finish_reason, "stop");
  }
  std::filesystem::remove_all(root);
  std::remove(gguf.c_str());
}

TEST(EngineTest, PreemptionDoesNotChangeOutputs) {
  const auto prompts = ThirtyTwoPrompts();
  LLM roomy(StoriesArgs());
  auto expected = roomy.Generate(prompts, Greedy(64), false);
  EngineArgs tight = StoriesArgs();
  tight.max_model_len = 128;
  tight.kv_cache_memory_bytes = 24 * 16 * 1280;  // 24 blocks for 32 sequences of ~70 tokens
  tight.enable_prefix_caching = false;
  LLM small(tight);
  auto outputs = small.Generate(prompts, Greedy(64), false);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(outputs[i].outputs[0].token_ids, expected[i].outputs[0].token_ids) << i;
  }
  EXPECT_GT(small.engine().stats().num_preemptions, 0);
  EXPECT_EQ(small.engine().stats().num_free_blocks, 24);
}

TEST(EngineTest, SharedPrefixComputesOnlyTheSuffix) {
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok()) << engine.error();
  std::string prefix;
  for (int i = 0; i < 12; ++i) prefix += "Once upon a time there was a dog. ";
  ASSERT_TRUE((*engine)->AddRequest("a", prefix + "It ran.", Checked(Greedy(1))).ok());
  while ((*engine)->HasUnfinishedRequests()) ASSERT_TRUE((*engine)->Step().ok());
  const int64_t hits_before = (*engine)->stats().prefix_cache_hits;
  ASSERT_TRUE((*engine)->AddRequest("b", prefix + "The cat sat.", Checked(Greedy(1))).ok());
  ASSERT_TRUE((*engine)->Step().ok());
  const int64_t prompt_len = (*engine)->tokenizer().Encode(prefix + "The cat sat.", true).size();
  const int64_t hits = (*engine)->stats().prefix_cache_hits - hits_before;
  EXPECT_GE(hits, prompt_len - 16 - 8);  // all full blocks of the shared prefix
  EXPECT_EQ((*engine)->stats().num_scheduled_tokens, prompt_len - hits);
}

TEST(EngineTest, AbortReturnsEveryBlock) {
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok());
  const int64_t free_at_start = (*engine)->stats().num_free_blocks;
  SamplingParams params = Greedy(200);
  params.ignore_eos = true;
  ASSERT_TRUE((*engine)->AddRequest("a", "Once upon a time", Checked(params)).ok());
  ASSERT_TRUE((*engine)->AddRequest("b", "The dog", Checked(params)).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*engine)->Step().ok());
  EXPECT_LT((*engine)->stats().num_free_blocks, free_at_start);
  auto aborted = (*engine)->AbortRequests({"a", "b"});
  ASSERT_EQ(aborted.size(), 2u);
  EXPECT_EQ(aborted[0].outputs[0].finish_reason, "abort");
  EXPECT_EQ((*engine)->stats().num_free_blocks, free_at_start);
  EXPECT_FALSE((*engine)->HasUnfinishedRequests());
}

TEST(EngineTest, SeededSamplingIgnoresBatchComposition) {
  LLM llm(StoriesArgs());
  SamplingParams seeded;
  seeded.temperature = 1.0f;
  seeded.seed = 1234;
  seeded.max_tokens = 30;
  auto alone = llm.Generate({"The dog"}, seeded, false);
  std::vector<SamplingParams> mixed(8, seeded);
  for (int i = 1; i < 8; ++i) mixed[i].seed = i;
  auto prompts = ThirtyTwoPrompts();
  prompts.resize(8);
  prompts[0] = "The dog";
  auto batched = llm.Generate(prompts, mixed, false);
  EXPECT_EQ(alone[0].outputs[0].text, batched[0].outputs[0].text);
  // The step's rows are sampled on the pool's threads side by side: each still draws from its
  // own generator only.
  for (int i = 1; i < 8; ++i) {
    auto one = llm.Generate({prompts[i]}, mixed[i], false);
    EXPECT_EQ(one[0].outputs[0].text, batched[i].outputs[0].text) << "prompt " << i;
  }
  auto again = llm.Generate({"The dog"}, seeded, false);
  EXPECT_EQ(alone[0].outputs[0].text, again[0].outputs[0].text);
}

TEST(EngineTest, NGivesNSequences) {
  LLM llm(StoriesArgs());
  SamplingParams params;
  params.n = 4;
  params.temperature = 1.0f;
  params.seed = 7;
  params.max_tokens = 20;
  auto outputs = llm.Generate({"Once upon a time"}, params, false);
  ASSERT_EQ(outputs[0].outputs.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(outputs[0].outputs[i].index, i);
    EXPECT_FALSE(outputs[0].outputs[i].token_ids.empty());
  }
  EXPECT_NE(outputs[0].outputs[0].text, outputs[0].outputs[1].text);
}

TEST(EngineTest, StopStringsEndTheTextAndAreExcludedUnlessAsked) {
  LLM llm(StoriesArgs());
  SamplingParams params = Greedy(40);
  params.stop = {"Lily"};
  auto excluded = llm.Generate({"Once upon a time"}, params, false);
  EXPECT_EQ(excluded[0].outputs[0].text, ", there was a little girl named ");
  EXPECT_EQ(excluded[0].outputs[0].finish_reason, "stop");
  EXPECT_EQ(std::get<std::string>(excluded[0].outputs[0].stop_reason), "Lily");
  params.include_stop_str_in_output = true;
  auto included = llm.Generate({"Once upon a time"}, params, false);
  EXPECT_EQ(included[0].outputs[0].text, ", there was a little girl named Lily");
}

TEST(EngineTest, DeltaOutputsReportEachSequencesFinishOnce) {
  LLM llm(StoriesArgs());
  OutputProcessor processor(llm.engine().tokenizer());
  SamplingParams params;
  params.n = 2;
  params.output_kind = RequestOutputKind::kDelta;
  processor.AddRequest("r", "p", {1, 2}, params, {"r-0", "r-1"});
  std::vector<std::string> stopped;
  auto step = [&](std::vector<EngineCoreOutput> outputs) {
    auto results = processor.Process(outputs, &stopped);
    EXPECT_EQ(results.size(), 1u);
    return results.front();
  };
  // Sequence 0 ends in the first step, sequence 1 two steps later (a full batch does this).
  const RequestOutput first = step(
      {{.request_id = "r-0", .new_token_ids = {5}, .status = RequestStatus::kFinishedLengthCapped},
       {.request_id = "r-1", .new_token_ids = {6}}});
  ASSERT_EQ(first.outputs.size(), 2u);
  EXPECT_EQ(first.outputs[0].finish_reason, "length");
  const RequestOutput second = step({{.request_id = "r-1", .new_token_ids = {7}}});
  ASSERT_EQ(second.outputs.size(), 1u);  // sequence 0 said all it had to say
  EXPECT_EQ(second.outputs[0].index, 1);
  const RequestOutput last = step({{.request_id = "r-1",
                                    .new_token_ids = {8},
                                    .status = RequestStatus::kFinishedLengthCapped}});
  ASSERT_EQ(last.outputs.size(), 1u);
  EXPECT_EQ(last.outputs[0].index, 1);
  EXPECT_EQ(last.outputs[0].finish_reason, "length");
  EXPECT_TRUE(last.finished);
}

TEST(EngineTest, StopTokenIdsAndMinTokens) {
  LLM llm(StoriesArgs());
  const Tokenizer& tokenizer = llm.engine().tokenizer();
  auto reference = llm.Generate({"Once upon a time"}, Greedy(40), false)[0].outputs[0].token_ids;
  // Stop at the first occurrence of the 5th generated token...
  SamplingParams params = Greedy(40);
  params.stop_token_ids = {reference[4]};
  auto stopped = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0];
  const size_t first =
      std::find(reference.begin(), reference.end(), reference[4]) - reference.begin();
  EXPECT_EQ(stopped.token_ids.size(), first + 1);
  EXPECT_EQ(std::get<int32_t>(stopped.stop_reason), reference[4]);
  EXPECT_EQ(stopped.finish_reason, "stop");
  // ...unless min_tokens is not reached yet.
  params.min_tokens = static_cast<int>(first) + 1;
  auto later = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0];
  EXPECT_GT(later.token_ids.size(), first + 1);
  (void)tokenizer;
}

TEST(EngineTest, LogprobsAreTheLogSoftmaxOfTheModel) {
  EngineArgs args = StoriesArgs();
  args.max_logprobs = -1;  // no limit: a request may ask for the whole vocabulary
  LLM llm(args);
  SamplingParams params = Greedy(10);
  params.logprobs = -1;  // the whole vocabulary: the probabilities must sum to one
  auto output = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0];
  ASSERT_TRUE(output.logprobs.has_value());
  ASSERT_EQ(output.logprobs->size(), output.token_ids.size());
  double cumulative = 0.0;
  for (size_t i = 0; i < output.token_ids.size(); ++i) {
    const PositionLogprobs& position = (*output.logprobs)[i];
    EXPECT_EQ(position.size(), 512u);
    double total = 0.0;
    for (const auto& [id, logprob] : position) total += std::exp(logprob.logprob);
    EXPECT_NEAR(total, 1.0, 1e-4);
    const Logprob& sampled = position.at(output.token_ids[i]);
    EXPECT_EQ(sampled.rank, 1);  // greedy picks the most likely token
    cumulative += sampled.logprob;
  }
  EXPECT_NEAR(output.cumulative_logprob, cumulative, 1e-4);
  params.logprobs = 3;
  auto top3 = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0];
  EXPECT_LE((*top3.logprobs)[0].size(), 4u);
  EXPECT_EQ((*top3.logprobs)[0].begin()->second.decoded_token.empty(), false);
}

TEST(EngineTest, PromptLogprobsCoverEveryPromptTokenWhateverTheChunking) {
  SamplingParams params = Greedy(2);
  params.prompt_logprobs = 2;
  const std::string prompt = "Once upon a time there was a little girl named Lily. She loved";
  std::vector<std::optional<PositionLogprobs>> reference;
  {
    LLM llm(StoriesArgs());
    auto output = llm.Generate({prompt}, params, false)[0];
    ASSERT_TRUE(output.prompt_logprobs.has_value());
    reference = *output.prompt_logprobs;
    ASSERT_EQ(reference.size(), output.prompt_token_ids.size());
    EXPECT_FALSE(reference[0].has_value());
    for (size_t i = 1; i < reference.size(); ++i) {
      ASSERT_TRUE(reference[i].has_value());
      const Logprob& actual = reference[i]->at(output.prompt_token_ids[i]);
      EXPECT_LE(actual.logprob, 0.0f);
      EXPECT_GE(actual.rank, 1);
      EXPECT_LE(reference[i]->size(), 3u);
    }
  }
  EngineArgs chunked = StoriesArgs();
  chunked.max_num_batched_tokens = 5;  // the prompt runs in several chunks
  LLM llm(chunked);
  auto output = llm.Generate({prompt}, params, false)[0];
  ASSERT_TRUE(output.prompt_logprobs.has_value());
  ASSERT_EQ(output.prompt_logprobs->size(), reference.size());
  for (size_t i = 1; i < reference.size(); ++i) {
    const int32_t id = output.prompt_token_ids[i];
    EXPECT_EQ((*output.prompt_logprobs)[i]->at(id).logprob, reference[i]->at(id).logprob) << i;
  }
}

TEST(EngineTest, LogitsProcessorsShapeTheOutput) {
  LLM llm(StoriesArgs());
  const Tokenizer& tokenizer = llm.engine().tokenizer();
  SamplingParams params = Greedy(40);
  params.bad_words = {"Lily"};
  auto no_lily = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0].text;
  EXPECT_EQ(no_lily.find("Lily"), std::string::npos) << no_lily;
  params = Greedy(10);
  const int32_t forced = tokenizer.Encode("ball", false).back();
  params.logit_bias = {{forced, 100.0f}};
  auto biased = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0].token_ids;
  EXPECT_EQ(biased, std::vector<int32_t>(10, forced));
  params = Greedy(10);
  params.allowed_token_ids = std::vector<int32_t>{300, 301, 302};
  auto restricted = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0].token_ids;
  ASSERT_EQ(restricted.size(), 10u);
  for (int32_t id : restricted) EXPECT_TRUE(id >= 300 && id <= 302) << id;
  params = Greedy(40);
  params.repetition_penalty = 1.8f;
  auto penalized = llm.Generate({"Once upon a time"}, params, false)[0].outputs[0].text;
  EXPECT_NE(penalized, kReference);
}

TEST(EngineTest, RefusesBadRequestsWithVllmMessages) {
  LLM llm(StoriesArgs());
  SamplingParams params;
  params.temperature = -1.0f;
  try {
    llm.Generate({"x"}, params, false);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("temperature must be non-negative"));
  }
  EngineArgs args = StoriesArgs();
  args.max_model_len = 8;
  args.kv_cache_memory_bytes = 1 << 20;
  LLM short_context(args);
  try {
    short_context.Generate({"Once upon a time there was a very long prompt"}, SamplingParams(),
                           false);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("maximum context length is 8 tokens"));
  }
  EXPECT_FALSE(short_context.engine().HasUnfinishedRequests());
}

// vLLM's max_logprobs (20 by default): more logprobs, or -1 (the whole vocabulary), are refused
// with vLLM's message unless the engine's limit is raised or lifted (-1).
TEST(EngineTest, RefusesLogprobsAboveMaxLogprobs) {
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok()) << engine.error();
  auto refusal = [&](std::optional<int> logprobs, std::optional<int> prompt_logprobs) {
    SamplingParams params = Greedy(2);
    params.logprobs = logprobs;
    params.prompt_logprobs = prompt_logprobs;
    Status status = (*engine)->AddRequest("r", std::string("Once"), Checked(params));
    EXPECT_FALSE((*engine)->HasUnfinishedRequests());
    return status.ok() ? std::string() : status.message();
  };
  EXPECT_EQ(refusal(300, std::nullopt),
            "Requested sample logprobs of 300, which is greater than max allowed: 20");
  EXPECT_EQ(refusal(-1, std::nullopt),
            "Requested sample logprobs of 512, which is greater than max allowed: 20");
  EXPECT_EQ(refusal(std::nullopt, 21),
            "Requested prompt logprobs of 21, which is greater than max allowed: 20");
  EXPECT_EQ(refusal(std::nullopt, -1),
            "Requested prompt logprobs of 512, which is greater than max allowed: 20");
  SamplingParams twenty = Greedy(2);
  twenty.logprobs = 20;
  twenty.prompt_logprobs = 20;
  EXPECT_TRUE((*engine)->AddRequest("twenty", std::string("Once"), Checked(twenty)).ok());
  EngineArgs args = StoriesArgs();
  args.max_logprobs = -1;
  auto unlimited = LLMEngine::Create(args);
  ASSERT_TRUE(unlimited.ok()) << unlimited.error();
  SamplingParams all = Greedy(2);
  all.logprobs = -1;
  EXPECT_TRUE((*unlimited)->AddRequest("all", std::string("Once"), Checked(all)).ok());
  args.max_logprobs = -2;
  auto invalid = LLMEngine::Create(args);
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(invalid.error(), HasSubstr("max_logprobs must be -1 (no limit) or at least 0"));
}

// A thread count out of range is refused before any thread starts, naming the option; the CLI,
// the server and Python all create their engine here.
TEST(EngineTest, RefusesThreadCountsOutOfRange) {
  for (int num_threads : {-3, ThreadPool::MaxThreads() + 1, 100000}) {
    EngineArgs args = StoriesArgs();
    args.num_threads = num_threads;
    auto engine = LLMEngine::Create(args);
    ASSERT_FALSE(engine.ok()) << num_threads;
    const std::string range = "num_threads (-t/--threads) must be 0 (one per CPU) or 1 to " +
                              std::to_string(ThreadPool::MaxThreads());
    EXPECT_THAT(engine.error(), HasSubstr(range));
    EXPECT_THAT(engine.error(), HasSubstr("got " + std::to_string(num_threads)));
  }
}

TEST(EngineTest, RefusesAKvCacheLargerThanTheMemoryAtStart) {
  EngineArgs args = StoriesArgs();
  args.kv_cache_memory_bytes = int64_t{1} << 50;  // 1 PiB
  args.max_num_seqs = 1 << 30;                    // enough sequences to use all of it
  auto engine = LLMEngine::Create(args);
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(engine.error(), HasSubstr("--kv-cache-memory-bytes: a KV cache of "));
  EXPECT_THAT(engine.error(), HasSubstr("does not fit"));
  try {
    LLM llm(args);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("lower --kv-cache-memory-bytes"));
  }
}

// vLLM's update_from_output: one output per scheduled request that got tokens or finished, in the
// order the step scheduled them, and the time in the queue only with the first.
TEST(EngineCoreTest, StepOutputsFollowTheScheduledOrder) {
  ThreadPool pool({.num_threads = 2});
  auto model = LoadModelFromPath(StoriesArgs().model, {.pool = &pool});
  ASSERT_TRUE(model.ok()) << model.error();
  auto core = EngineCore::Create(*model->model, StoriesArgs(), &pool);
  ASSERT_TRUE(core.ok()) << core.error();
  for (const auto& [id, max_tokens] : {std::pair{"ends", 1}, std::pair{"goes_on", 3}}) {
    ASSERT_TRUE((*core)
                    ->AddRequest({.request_id = id,
                                  .prompt_token_ids = {1, 403, 407, 261},
                                  .params = Greedy(max_tokens)})
                    .ok());
  }
  auto first = (*core)->Step();
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].request_id, "ends");
  EXPECT_EQ((*first)[0].status, RequestStatus::kFinishedLengthCapped);
  EXPECT_EQ((*first)[1].request_id, "goes_on");
  EXPECT_EQ((*first)[1].status, RequestStatus::kRunning);
  for (const EngineCoreOutput& output : *first) {
    EXPECT_EQ(output.new_token_ids.size(), 1u);
    EXPECT_TRUE(output.queue_seconds.has_value()) << output.request_id;
  }
  auto second = (*core)->Step();
  ASSERT_TRUE(second.ok()) << second.error();
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].request_id, "goes_on");
  EXPECT_FALSE((*second)[0].queue_seconds.has_value());
}

}  // namespace
}  // namespace vllm
