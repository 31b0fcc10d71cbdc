// --skip-tokenizer-init's refusals of completion fields, return_token_ids' parsing, and the
// built-in Mistral chat template of a tekken tokenizer, rendered as the chat route renders it.
#include "server/openai/without_tokenizer.h"

#include <gtest/gtest.h>

#include "server/openai/chat/protocol.h"
#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/tekken_tokenizer.h"

namespace vllm::server {
namespace {

std::optional<ApiError> CheckCompletion(const char* body) {
  GenerationRequest request;
  auto error = ParseGenerationRequest(Json::parse(body), Endpoint::kCompletions, &request);
  EXPECT_FALSE(error) << error->message;
  return CheckCompletionWithoutTokenizer(request);
}

TEST(WithoutTokenizer, CompletionFieldsThatNeedTextAreRefusedByName) {
  EXPECT_FALSE(CheckCompletion(R"({"prompt": [1, 2], "max_tokens": 4, "stop_token_ids": [3]})"));
  const std::pair<const char*, const char*> refused[] = {
      {R"({"stop": ["."]})", "stop"},
      {R"({"bad_words": ["x"]})", "bad_words"},
      {R"({"response_format": {"type": "json_object"}})", "structured_outputs"},
      {R"({"echo": true})", "echo"},
      {R"({"logprobs": 1})", "logprobs"},
      {R"({"prompt_logprobs": 1})", "prompt_logprobs"},
      {R"({"use_beam_search": true, "n": 2})", "use_beam_search"},
  };
  for (const auto& [body, param] : refused) {
    auto error = CheckCompletion(body);
    ASSERT_TRUE(error) << body;
    EXPECT_EQ(error->status, boost::beast::http::status::bad_request);
    EXPECT_EQ(error->param, param) << body;
    EXPECT_NE(error->message.find("skip_tokenizer_init"), std::string::npos) << error->message;
  }
}

TEST(WithoutTokenizer, ReturnTokenIdsIsReadForCompletionsAndChat) {
  for (Endpoint endpoint : {Endpoint::kCompletions, Endpoint::kChat}) {
    GenerationRequest request;
    EXPECT_FALSE(
        ParseGenerationRequest(Json::parse(R"({"return_token_ids": true})"), endpoint, &request));
    EXPECT_TRUE(request.return_token_ids);
  }
}

TEST(MistralChatTemplate, RendersTheInstructFormat) {
  // Any tokenizer whose BOS / EOS are <s> / </s> renders the same text.
  auto tokenizer = LoadTokenizerFromHfDir(VLLM_SHARED_DIR "/tokenizers/llama2");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  const std::string chat_template(MistralInstructChatTemplate());
  ChatPrompt prompt;
  auto error = RenderChatPrompt(**tokenizer, chat_template, RequestLimits{}, Json::parse(R"({
      "messages": [{"role": "system", "content": "Be brief."},
                   {"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": "Hello"},
                   {"role": "user", "content": "How are you?"}]})"),
                                &prompt);
  ASSERT_FALSE(error) << error->message;
  EXPECT_EQ(prompt.text, "<s>[INST]Hi[/INST]Hello</s>[INST]Be brief.\n\nHow are you?[/INST]");
  error = RenderChatPrompt(**tokenizer, chat_template, RequestLimits{}, Json::parse(R"({
      "messages": [{"role": "user", "content": "Hi"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})"),
                           &prompt);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->status, boost::beast::http::status::bad_request);
  EXPECT_NE(error->message.find("tools are not supported"), std::string::npos) << error->message;
}

}  // namespace
}  // namespace vllm::server
