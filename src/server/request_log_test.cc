#include "server/request_log.h"

#include <gtest/gtest.h>

#include <vector>

namespace vllm::server {
namespace {

TEST(RequestLogTest, PythonStringReprQuotesAndEscapesAsPython) {
  EXPECT_EQ(PythonStringRepr("Hello"), "'Hello'");
  EXPECT_EQ(PythonStringRepr("it's"), "\"it's\"");
  EXPECT_EQ(PythonStringRepr("it's \"x\""), "'it\\'s \"x\"'");
  EXPECT_EQ(PythonStringRepr("a\nb\tc\\d\x01"), "'a\\nb\\tc\\\\d\\x01'");
  EXPECT_EQ(PythonStringRepr("héllo"), "'héllo'");
}

TEST(RequestLogTest, SamplingParamsReprIsVllms) {
  SamplingParams params;
  params.temperature = 0.7f;
  params.max_tokens = 5;
  params.stop = {"\n"};
  params.seed = 3;
  EXPECT_EQ(SamplingParamsRepr(params),
            "SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, "
            "repetition_penalty=1.0, temperature=0.7, top_p=1.0, top_k=0, min_p=0.0, seed=3, "
            "stop=['\\n'], stop_token_ids=[], bad_words=[], include_stop_str_in_output=False, "
            "ignore_eos=False, max_tokens=5, min_tokens=0, logprobs=None, prompt_logprobs=None, "
            "skip_special_tokens=True, spaces_between_special_tokens=True, "
            "truncate_prompt_tokens=None, structured_outputs=None, extra_args=None)");
  params.structured_outputs = StructuredOutputsParams{.choice = std::vector<std::string>{"a"}};
  EXPECT_NE(SamplingParamsRepr(params).find(
                "structured_outputs=StructuredOutputsParams(json=None, regex=None, choice=['a'], "),
            std::string::npos);
}

TEST(RequestLogTest, LineHasVllmsFieldsAndMaxLogLenCutsPromptAndIds) {
  const std::vector<int32_t> ids = {1, 15043, 29892, 3186};
  SamplingParams params;
  const std::string whole = RequestLogLine("cmpl-1", "Hé, world", ids, params, std::nullopt);
  EXPECT_EQ(
      whole.rfind("Received request cmpl-1: prompt: 'Hé, world', params: SamplingParams(n=1, ", 0),
      0u);
  EXPECT_NE(whole.find(", prompt_token_ids: [1, 15043, 29892, 3186], prompt_embeds shape: None, "
                       "lora_request: None."),
            std::string::npos);
  // Characters, not bytes: "Hé" is 2 of them.
  const std::string cut = RequestLogLine("cmpl-1", "Hé, world", ids, params, 2);
  EXPECT_NE(cut.find("prompt: 'Hé', params"), std::string::npos) << cut;
  EXPECT_NE(cut.find("prompt_token_ids: [1, 15043], prompt_embeds"), std::string::npos) << cut;
  EXPECT_NE(RequestLogLine("x", "ab", ids, params, 0).find("prompt: '', "), std::string::npos);
}

// vLLM logs an embeddings prompt with no prompt or ids, and the tensor's torch.Size.
TEST(RequestLogTest, EmbeddingsPromptLogsItsShape) {
  const std::vector<int32_t> placeholders(5, 0);
  const PromptEmbeds embeds{.num_tokens = 5, .hidden_size = 64, .values = std::vector<float>(320)};
  const std::string line =
      RequestLogLine("cmpl-2", "", placeholders, SamplingParams{}, std::nullopt, &embeds);
  EXPECT_EQ(line.rfind("Received request cmpl-2: prompt: None, params: SamplingParams(n=1, ", 0),
            0u)
      << line;
  EXPECT_TRUE(
      line.ends_with(", extra_args=None), prompt_token_ids: None, prompt_embeds shape: "
                     "torch.Size([5, 64]), lora_request: None."))
      << line;
}

}  // namespace
}  // namespace vllm::server
