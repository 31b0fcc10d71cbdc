// --enable-prompt-embeds on the demo model: a prompt given as the embedding rows of its own
// tokens (read from the GGUF's token_embd table) generates exactly what the token-id prompt
// does, logprobs included, whole or in prefill chunks, beside other requests; the refusals.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "engine/prompt_embeds_request.h"
#include "engine/test_engine_args.h"
#include "formats/gguf_file.h"
#include "kernels/ops.h"
#include "tokenizer/tokenizer.h"

namespace vllm {
namespace {

// The rows of token_embd.weight for `token_ids`: what the model's embedding lookup yields.
std::shared_ptr<const PromptEmbeds> EmbeddingsOf(const std::vector<int32_t>& token_ids) {
  auto file = GgufFile::Open(StoriesArgs().model);
  EXPECT_TRUE(file.ok());
  const GgufTensor* table = (*file)->FindTensor("token_embd.weight");
  EXPECT_NE(table, nullptr);
  const int64_t hidden = table->shape[0];
  const int64_t row_bytes = table->num_bytes / table->shape[1];
  auto embeds = std::make_shared<PromptEmbeds>();
  embeds->num_tokens = static_cast<int64_t>(token_ids.size());
  embeds->hidden_size = hidden;
  embeds->values.resize(token_ids.size() * hidden);
  for (size_t t = 0; t < token_ids.size(); ++t) {
    kernels::DequantizeRow(table->type, table->data + token_ids[t] * row_bytes, hidden,
                           embeds->values.data() + t * hidden);
  }
  return embeds;
}

// Runs the engine until every request has finished; the final outputs by request id.
std::map<std::string, RequestOutput> RunAll(LLMEngine& engine) {
  std::map<std::string, RequestOutput> finished;
  while (engine.HasUnfinishedRequests()) {
    auto outputs = engine.Step();
    EXPECT_TRUE(outputs.ok()) << outputs.error();
    if (!outputs.ok()) break;
    for (RequestOutput& output : *outputs) {
      if (output.finished) finished[output.request_id] = std::move(output);
    }
  }
  return finished;
}

// The same tokens, logprobs and finish; the same text but that, with no prompt text before it
// (as in vLLM, whose detokenizer has no prompt ids for an embeddings prompt), the first token's
// word-start space is not shown.
void ExpectSameOutput(const RequestOutput& actual, const RequestOutput& expected) {
  ASSERT_EQ(actual.outputs.size(), 1u);
  const CompletionOutput& a = actual.outputs[0];
  const CompletionOutput& e = expected.outputs[0];
  EXPECT_EQ(a.token_ids, e.token_ids);
  EXPECT_EQ(a.text, e.text.starts_with(' ') ? e.text.substr(1) : e.text);
  EXPECT_EQ(a.finish_reason, e.finish_reason);
  EXPECT_EQ(a.cumulative_logprob, e.cumulative_logprob);
  ASSERT_EQ(a.logprobs.has_value(), e.logprobs.has_value());
  if (!a.logprobs) return;
  ASSERT_EQ(a.logprobs->size(), e.logprobs->size());
  for (size_t i = 0; i < a.logprobs->size(); ++i) {
    ASSERT_EQ((*a.logprobs)[i].size(), (*e.logprobs)[i].size()) << i;
    for (const auto& [token, logprob] : (*e.logprobs)[i]) {
      ASSERT_TRUE((*a.logprobs)[i].count(token)) << i;
      EXPECT_EQ((*a.logprobs)[i].at(token).logprob, logprob.logprob) << i;
      EXPECT_EQ((*a.logprobs)[i].at(token).rank, logprob.rank) << i;
    }
  }
}

std::unique_ptr<LLMEngine> Engine(EngineArgs args) {
  auto engine = LLMEngine::Create(args);
  EXPECT_TRUE(engine.ok()) << engine.error();
  return engine.ok() ? std::move(*engine) : nullptr;
}

EngineArgs EmbedsArgs() {
  EngineArgs args = StoriesArgs();
  args.enable_prompt_embeds = true;
  return args;
}

SamplingParams GreedyWithLogprobs(int max_tokens) {
  SamplingParams params = Greedy(max_tokens);
  params.logprobs = 3;
  return params;
}

constexpr const char* kPrompt = "Once upon a time";
constexpr const char* kLongPrompt =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park "
    "with her friends.";

TEST(PromptEmbedsEngineTest, OwnTokenEmbeddingsGenerateWhatTheTokenPromptDoes) {
  auto engine = Engine(EmbedsArgs());
  ASSERT_NE(engine, nullptr);
  const std::vector<int32_t> ids = engine->tokenizer().Encode(kPrompt, true);
  const auto params = Checked(GreedyWithLogprobs(40));
  ASSERT_TRUE(engine->AddRequest("ids", ids, params).ok());
  Status added = engine->AddRequest("embeds", std::vector<int32_t>{}, params,
                                    {.prompt_embeds = EmbeddingsOf(ids)});
  ASSERT_TRUE(added.ok()) << added.message();
  auto outputs = RunAll(*engine);
  ASSERT_EQ(outputs.size(), 2u);
  ExpectSameOutput(outputs["embeds"], outputs["ids"]);
  EXPECT_EQ(outputs["embeds"].outputs[0].text,
            ", there was a little girl named Lily. She loved to play outside in the park. One "
            "day, she saw a big, red ball.");
  // As vLLM's scheduler sees it: one placeholder id per row, no prompt text.
  EXPECT_EQ(outputs["embeds"].prompt_token_ids, std::vector<int32_t>(ids.size(), 0));
  EXPECT_EQ(outputs["embeds"].prompt, "");
}

TEST(PromptEmbedsEngineTest, ChunkedPrefillAndThePrefixCacheKeepTheOutput) {
  EngineArgs args = EmbedsArgs();
  args.max_num_batched_tokens = 8;  // a 30-token prompt prefills in four chunks
  args.max_num_seqs = 2;
  auto engine = Engine(args);
  ASSERT_NE(engine, nullptr);
  const std::vector<int32_t> ids = engine->tokenizer().Encode(kLongPrompt, true);
  ASSERT_GT(ids.size(), 17u);
  const auto params = Checked(GreedyWithLogprobs(24));
  const auto embeds = EmbeddingsOf(ids);
  ASSERT_TRUE(engine->AddRequest("ids", ids, params).ok());
  ASSERT_TRUE(
      engine->AddRequest("embeds", std::vector<int32_t>{}, params, {.prompt_embeds = embeds}).ok());
  auto first = RunAll(*engine);
  ExpectSameOutput(first["embeds"], first["ids"]);
  // The same embeddings again hit the blocks the first run cached; the token prompt's blocks
  // (other ids than the placeholders) and an all-zero prompt do not share them.
  ASSERT_TRUE(
      engine->AddRequest("again", std::vector<int32_t>{}, params, {.prompt_embeds = embeds}).ok());
  auto again = RunAll(*engine);
  ExpectSameOutput(again["again"], first["ids"]);
  EXPECT_GE(again["again"].num_cached_tokens, 16);
  ASSERT_TRUE(
      engine->AddRequest("zeros", std::vector<int32_t>(ids.size(), 0), Checked(Greedy(1))).ok());
  EXPECT_EQ(RunAll(*engine)["zeros"].num_cached_tokens, 0);
}

TEST(PromptEmbedsEngineTest, TruncatePromptTokensKeepsTheLastRows) {
  auto engine = Engine(EmbedsArgs());
  ASSERT_NE(engine, nullptr);
  const std::vector<int32_t> ids = engine->tokenizer().Encode(kLongPrompt, true);
  SamplingParams params = GreedyWithLogprobs(8);
  params.truncate_prompt_tokens = 5;
  ASSERT_TRUE(engine->AddRequest("ids", ids, Checked(params)).ok());
  ASSERT_TRUE(engine
                  ->AddRequest("embeds", std::vector<int32_t>{}, Checked(params),
                               {.prompt_embeds = EmbeddingsOf(ids)})
                  .ok());
  auto outputs = RunAll(*engine);
  ExpectSameOutput(outputs["embeds"], outputs["ids"]);
  EXPECT_EQ(outputs["embeds"].prompt_token_ids.size(), 5u);
}

TEST(PromptEmbedsEngineTest, RefusalsNameWhatIsWrong) {
  const std::vector<int32_t> ids = {1, 403, 407};
  const auto embeds = EmbeddingsOf(ids);
  auto disabled = Engine(StoriesArgs());
  ASSERT_NE(disabled, nullptr);
  Status status = disabled->AddRequest("a", std::vector<int32_t>{}, Checked(Greedy(4)),
                                       {.prompt_embeds = embeds});
  EXPECT_EQ(status.message(), kPromptEmbedsNotEnabled);

  auto engine = Engine(EmbedsArgs());
  ASSERT_NE(engine, nullptr);
  auto wide = std::make_shared<PromptEmbeds>(
      PromptEmbeds{.num_tokens = 2, .hidden_size = 65, .values = std::vector<float>(130, 0.5f)});
  status =
      engine->AddRequest("b", std::vector<int32_t>{}, Checked(Greedy(4)), {.prompt_embeds = wide});
  EXPECT_EQ(status.message(),
            "prompt_embeds has hidden size 65, but the model's hidden_size is 64");
  SamplingParams prompt_logprobs = Greedy(4);
  prompt_logprobs.prompt_logprobs = 1;
  status = engine->AddRequest("c", std::vector<int32_t>{}, Checked(prompt_logprobs),
                              {.prompt_embeds = embeds});
  EXPECT_EQ(status.message(), "prompt_logprobs is not compatible with prompt embeds.");
  status = engine->AddRequest("d", ids, Checked(Greedy(4)), {.prompt_embeds = embeds});
  EXPECT_EQ(status.message(), "a prompt given as embeddings comes without text or token ids");
  auto empty = std::make_shared<PromptEmbeds>(PromptEmbeds{.num_tokens = 0, .hidden_size = 64});
  status =
      engine->AddRequest("e", std::vector<int32_t>{}, Checked(Greedy(4)), {.prompt_embeds = empty});
  EXPECT_EQ(status.message(), "The decoder prompt cannot be empty");
  EXPECT_FALSE(engine->HasUnfinishedRequests());
}

}  // namespace
}  // namespace vllm
