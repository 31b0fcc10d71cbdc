#include "server/openai/generation_request.h"

#include <gtest/gtest.h>

#include "server/openai/structured_outputs_request.h"

namespace vllm::server {
namespace {

GenerationRequest Parse(const char* body, Endpoint endpoint, std::optional<ApiError>* error) {
  GenerationRequest request;
  *error = ParseGenerationRequest(Json::parse(body), endpoint, &request);
  return request;
}

TEST(GenerationRequestTest, ReadsOpenAiAndVllmFields) {
  std::optional<ApiError> error;
  GenerationRequest request = Parse(
      R"({"model": "m", "temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.1, "n": 3,
          "seed": 7, "stop": "x", "stop_token_ids": [5], "ignore_eos": true, "min_tokens": 2,
          "max_tokens": 12, "logprobs": 2, "logit_bias": {"17": 150}, "priority": -3,
          "cache_salt": "s", "repetition_penalty": 1.2, "return_tokens_as_token_ids": true,
          "unknown_field": {"ignored": true}})",
      Endpoint::kCompletions, &error);
  ASSERT_FALSE(error.has_value()) << error->message;
  EXPECT_EQ(request.model, "m");
  EXPECT_FLOAT_EQ(request.params.temperature, 0.5f);
  EXPECT_EQ(request.params.top_k, 40);
  EXPECT_EQ(request.params.n, 3);
  EXPECT_EQ(request.params.seed, 7);
  EXPECT_EQ(request.params.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(request.params.stop_token_ids, std::vector<int32_t>{5});
  EXPECT_TRUE(request.params.ignore_eos);
  EXPECT_EQ(request.requested_max_tokens, 12);
  EXPECT_EQ(request.params.logprobs, 2);
  EXPECT_FLOAT_EQ(request.params.logit_bias.at(17), 100.0f);  // clamped as vLLM does
  EXPECT_EQ(request.options.priority, -3);
  EXPECT_EQ(request.options.cache_salt, "s");
  EXPECT_TRUE(request.tokens_as_ids);
  EXPECT_EQ(request.params.output_kind, RequestOutputKind::kDelta);
}

// A valid value other than SamplingParams' default for a field of type Member, as JSON and as
// the member then holds it.
template <typename Member>
std::pair<Json, Member> OtherValidValue(const Member& default_value) {
  if constexpr (std::is_same_v<Member, bool>) {
    return {!default_value, !default_value};
  } else if constexpr (std::is_floating_point_v<Member>) {
    return {0.5, 0.5f};
  } else if constexpr (std::is_integral_v<Member>) {
    return {2, 2};
  } else if constexpr (std::is_same_v<Member, std::vector<std::string>>) {
    return {"w", {"w"}};
  } else if constexpr (std::is_same_v<Member, std::vector<int32_t>> ||
                       std::is_same_v<Member, std::optional<std::vector<int32_t>>>) {
    return {Json::array({2, 3}), std::vector<int32_t>{2, 3}};
  } else {
    return {2, 2};
  }
}

// Each kSamplingFields row the server reads comes from the body under its own name, with the
// getter its type takes: a field added to the table needs no reader of its own.
TEST(GenerationRequestTest, ReadsEverySamplingFieldRowByItsName) {
  int num_read = 0;
  ForEachSamplingField([&](const auto& field) {
    if (!field.sources.request) return;
    auto [json, expected] = OtherValidValue(SamplingParams().*field.member);
    for (Endpoint endpoint : {Endpoint::kCompletions, Endpoint::kChat}) {
      std::optional<ApiError> error;
      Json body = {{field.name, json}};
      GenerationRequest request;
      error = ParseGenerationRequest(body, endpoint, &request);
      ASSERT_FALSE(error.has_value()) << field.name << ": " << error->message;
      EXPECT_EQ(request.params.*field.member, expected) << field.name;
    }
    ++num_read;
  });
  EXPECT_EQ(num_read, 19);  // all rows but max_tokens, logprobs and prompt_logprobs
}

// A row's wrong type is a 400 naming it; its broken rule is vLLM's message naming it.
TEST(GenerationRequestTest, SamplingFieldRowsAreCheckedByName) {
  std::optional<ApiError> error;
  Parse(R"({"stop_token_ids": "x"})", Endpoint::kChat, &error);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "stop_token_ids");
  Parse(R"({"truncate_prompt_tokens": 0})", Endpoint::kCompletions, &error);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "truncate_prompt_tokens must be >= 1, got 0");
  EXPECT_EQ(error->param, "truncate_prompt_tokens");
  Parse(R"({"n": 200})", Endpoint::kCompletions, &error);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "n must be at most 128, got 200.");
}

TEST(GenerationRequestTest, DefaultsDifferByEndpoint) {
  std::optional<ApiError> error;
  GenerationRequest completion = Parse(R"({"prompt": "x"})", Endpoint::kCompletions, &error);
  EXPECT_EQ(completion.requested_max_tokens, 16);
  EXPECT_TRUE(completion.add_special_tokens);
  EXPECT_FALSE(completion.tokens_as_ids);
  GenerationRequest chat = Parse(R"({"max_completion_tokens": 5, "max_tokens": 9,
                                     "logprobs": true, "top_logprobs": 3})",
                                 Endpoint::kChat, &error);
  ASSERT_FALSE(error.has_value());
  EXPECT_EQ(chat.requested_max_tokens, 5);
  EXPECT_FALSE(chat.add_special_tokens);
  EXPECT_EQ(chat.params.logprobs, 3);
}

TEST(GenerationRequestTest, RefusesBadValuesWithTheirField) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"temperature": "hot"})", "temperature"},
      {R"({"n": 1.5})", "n"},
      {R"({"n": 1000})", "n"},
      {R"({"top_p": 0})", "top_p"},
      {R"({"stop": [1]})", "stop"},
      {R"({"logit_bias": {"a": 1}})", "logit_bias"},
      {R"({"logprobs": 21})", "logprobs"},
      {R"({"max_tokens": 0})", "max_tokens"},
      {R"({"stream_options": {"include_usage": true}})", "stream_options"},
      {R"({"stream": true, "prompt_logprobs": 1})", "prompt_logprobs"},
      {R"({"truncate_prompt_tokens": 0})", "truncate_prompt_tokens"},
      {R"({"seed": "x"})", "seed"},
  };
  for (const auto& [body, field] : cases) {
    std::optional<ApiError> error;
    Parse(body, Endpoint::kCompletions, &error);
    ASSERT_TRUE(error.has_value()) << body;
    EXPECT_EQ(error->param, field) << body;
    EXPECT_EQ(static_cast<int>(error->status), 400);
  }
  std::optional<ApiError> error;
  Parse(R"({"top_logprobs": 2})", Endpoint::kChat, &error);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "when using `top_logprobs`, `logprobs` must be set to true.");
}

TEST(GenerationRequestTest, FieldsNotImplementedAreRefusedByName) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"best_of": 2})", "best_of"},
      {R"({"structural_tag": "x"})", "structural_tag"},
      {R"({"logits_processors": ["x"]})", "logits_processors"},
      {R"({"spaces_between_special_tokens": false, "skip_special_tokens": false})",
       "spaces_between_special_tokens"},
  };
  for (const auto& [body, field] : cases) {
    std::optional<ApiError> error;
    Parse(body, Endpoint::kChat, &error);
    ASSERT_TRUE(error.has_value()) << body;
    EXPECT_EQ(error->param, field) << body;
  }
  std::optional<ApiError> error;
  Parse(R"({"suffix": "x"})", Endpoint::kCompletions, &error);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "suffix");
  // Their no-op values are accepted.
  for (const char* body :
       {R"({"best_of": 3, "n": 3})", R"({"use_beam_search": false})",
        R"({"response_format": {"type": "text"}})", R"({"spaces_between_special_tokens": false})",
        R"({"guided_json": null})"}) {
    Parse(body, Endpoint::kChat, &error);
    EXPECT_FALSE(error.has_value()) << body << ": " << error->message;
  }
}

TEST(GenerationRequestTest, BeamSearchTakesNAndItsFields) {
  GenerationRequest request;
  auto error = ParseGenerationRequest(
      *ParseJsonObject(R"({"use_beam_search": true, "n": 3, "length_penalty": 0.5,
                          "ignore_eos": true, "include_stop_str_in_output": true})"),
      Endpoint::kCompletions, &request);
  ASSERT_FALSE(error.has_value()) << error->message;
  EXPECT_TRUE(request.use_beam_search);
  const BeamSearchParams params = BeamSearchParamsOf(request, 7);
  EXPECT_EQ(params.beam_width, 3);
  EXPECT_EQ(params.max_tokens, 7);
  EXPECT_EQ(params.length_penalty, 0.5f);
  EXPECT_TRUE(params.ignore_eos);
  EXPECT_TRUE(params.include_stop_str_in_output);
  // A step asks for 2n logprobs, at most 20.
  error = ParseGenerationRequest(*ParseJsonObject(R"({"use_beam_search": true, "n": 11})"),
                                 Endpoint::kChat, &request);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message,
            "Requested sample logprobs of 22, which is greater than max allowed: 20");
  EXPECT_EQ(error->param, "n");
  // best_of other than n is refused with vLLM V1's message.
  error = ParseGenerationRequest(*ParseJsonObject(R"({"best_of": 2})"), Endpoint::kCompletions,
                                 &request);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "vLLM V1 does not yet support best_of.");
}

// The engine's max_tokens default (generation_config's max_new_tokens, left in the params the
// request starts from) caps a request's max_tokens, or stands for it, as in vLLM.
TEST(GenerationRequestTest, TheModelsMaxTokensDefaultCapsTheRequests) {
  for (const char* body : {R"({"max_tokens": 9})", "{}"}) {
    GenerationRequest request;
    request.params.max_tokens = 5;
    ASSERT_FALSE(
        ParseGenerationRequest(*ParseJsonObject(body), Endpoint::kChat, &request).has_value());
    EXPECT_EQ(request.default_max_tokens, 5);
    ValidatedSamplingParams fitted = request.checked_params;
    ASSERT_FALSE(ResolveMaxTokens(request, 10, 64, &fitted).has_value());
    EXPECT_EQ(fitted->max_tokens, 5) << body;
  }
  GenerationRequest unset;  // SamplingParams' own 16 is no model default
  ASSERT_FALSE(ParseGenerationRequest(*ParseJsonObject("{}"), Endpoint::kChat, &unset).has_value());
  EXPECT_FALSE(unset.default_max_tokens.has_value());
}

// Parsing is a request's one check of its params (the engine takes the checked ones and checks
// nothing again): one Validate per request, beam search's step params with it, and the route's
// own edits (a chat's tools) made before it, so they are checked too.
TEST(GenerationRequestTest, ParamsAreCheckedOncePerRequestAfterTheRoutesEdits) {
  const int64_t before = ValidatedSamplingParams::num_validations_for_testing();
  GenerationRequest request;
  ASSERT_FALSE(
      ParseGenerationRequest(*ParseJsonObject(R"({"temperature": 0.5, "n": 2, "min_tokens": 3,
                                        "structured_outputs": {"regex": "[a-z]+"}})"),
                             Endpoint::kChat, &request)
          .has_value());
  EXPECT_EQ(ValidatedSamplingParams::num_validations_for_testing() - before, 1);
  EXPECT_FLOAT_EQ(request.checked_params->temperature, 0.5f);
  EXPECT_EQ(request.checked_params->structured_outputs->regex, "[a-z]+");
  EXPECT_FALSE(request.checked_params->max_tokens.has_value());  // each prompt's, later
  EXPECT_FALSE(request.beam_search_step.has_value());
  ValidatedSamplingParams fitted = request.checked_params;
  ASSERT_FALSE(ResolveMaxTokens(request, 62, 64, &fitted).has_value());
  EXPECT_EQ(fitted->max_tokens, 2);
  EXPECT_EQ(fitted->min_tokens, 2);  // lowered with max_tokens, as vLLM's server does

  GenerationRequest beams;
  ASSERT_FALSE(ParseGenerationRequest(*ParseJsonObject(R"({"use_beam_search": true, "n": 3})"),
                                      Endpoint::kCompletions, &beams)
                   .has_value());
  ASSERT_TRUE(beams.beam_search_step.has_value());
  EXPECT_EQ((*beams.beam_search_step)->logprobs, 6);
  EXPECT_EQ((*beams.beam_search_step)->max_tokens, 1);

  // An edit that breaks a rule is refused by the same check, with vLLM's message.
  GenerationRequest edited;
  auto error = ParseGenerationRequest(*ParseJsonObject("{}"), Endpoint::kChat, &edited,
                                      [](GenerationRequest* parsed) -> std::optional<ApiError> {
                                        parsed->params.structured_outputs.emplace();
                                        return std::nullopt;
                                      });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message,
            "You must use one kind of structured outputs constraint but none are specified.");
  // The route's own error comes back as it is.
  error = ParseGenerationRequest(*ParseJsonObject("{}"), Endpoint::kChat, &edited,
                                 [](GenerationRequest*) -> std::optional<ApiError> {
                                   return ApiError::BadRequest("tools are wrong", "tools");
                                 });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "tools");
}

// The server's --max-logprobs bounds logprobs, top_logprobs and prompt_logprobs (400, vLLM's
// message); -1 leaves the bound to the engine (the vocabulary).
TEST(GenerationRequestTest, LogprobsAreBoundedByTheServersMaxLogprobs) {
  auto parse = [](const char* body, Endpoint endpoint, int max_logprobs) {
    GenerationRequest request;
    request.max_logprobs = max_logprobs;
    return ParseGenerationRequest(*ParseJsonObject(body), endpoint, &request);
  };
  EXPECT_FALSE(parse(R"({"logprobs": 5})", Endpoint::kCompletions, 5).has_value());
  auto sample = parse(R"({"logprobs": 6})", Endpoint::kCompletions, 5);
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->status, boost::beast::http::status::bad_request);
  EXPECT_EQ(sample->message,
            "Requested sample logprobs of 6, which is greater than max allowed: 5");
  auto top = parse(R"({"logprobs": true, "top_logprobs": 3})", Endpoint::kChat, 2);
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(top->param, "top_logprobs");
  auto prompt = parse(R"({"prompt_logprobs": 3})", Endpoint::kCompletions, 2);
  ASSERT_TRUE(prompt.has_value());
  EXPECT_EQ(prompt->param, "prompt_logprobs");
  EXPECT_FALSE(
      parse(R"({"logprobs": 50, "prompt_logprobs": 50})", Endpoint::kCompletions, 64).has_value());
  EXPECT_FALSE(parse(R"({"logprobs": 400})", Endpoint::kCompletions, -1).has_value());
}

TEST(GenerationRequestTest, StructuredOutputFieldsBecomeOneConstraint) {
  auto constraint = [](const char* body) {
    GenerationRequest request;
    auto json = ParseJsonObject(body);
    EXPECT_TRUE(json.ok()) << body;
    auto error = ParseGenerationRequest(*json, Endpoint::kChat, &request);
    EXPECT_FALSE(error.has_value()) << body << ": " << error->message;
    EXPECT_TRUE(request.params.structured_outputs.has_value()) << body;
    return request.params.structured_outputs.value_or(StructuredOutputsParams{});
  };
  EXPECT_EQ(constraint(R"({"guided_json": {"type": "integer"}})").json, R"({"type":"integer"})");
  EXPECT_EQ(constraint(R"({"guided_json": "{\"type\": \"integer\"}"})").json,
            R"({"type": "integer"})");
  EXPECT_EQ(constraint(R"({"guided_regex": "[0-9]+"})").regex, "[0-9]+");
  EXPECT_EQ(constraint(R"({"guided_choice": ["a", "b"]})").choice,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(constraint(R"({"guided_grammar": "root ::= \"a\""})").grammar, R"(root ::= "a")");
  EXPECT_TRUE(constraint(R"({"response_format": {"type": "json_object"}})").json_object);
  EXPECT_EQ(constraint(R"({"response_format": {"type": "json_schema", "json_schema": )"
                       R"({"name": "n", "schema": {"type": "object"}, "strict": true}}})")
                .json,
            R"({"type":"object"})");
  auto options =
      constraint(R"({"structured_outputs": {"regex": "a", "disable_any_whitespace": true}})");
  EXPECT_EQ(options.regex, "a");
  EXPECT_TRUE(options.disable_any_whitespace);
  // None, or more than one, is a 400.
  for (const char* body :
       {R"({"guided_regex": "a", "guided_choice": ["b"]})", R"({"structured_outputs": {}})",
        R"({"response_format": {"type": "json_object"}, "guided_regex": "a"})",
        R"({"response_format": {"type": "json_schema"}})",
        R"({"response_format": {"type": "xml"}})", R"({"response_format": "text"})",
        R"({"guided_choice": "a"})", R"({"guided_regex": 5})", R"({"guided_choice": []})"}) {
    GenerationRequest request;
    auto error = ParseGenerationRequest(*ParseJsonObject(body), Endpoint::kChat, &request);
    ASSERT_TRUE(error.has_value()) << body;
    EXPECT_EQ(static_cast<int>(error->status), 400) << body;
  }
}

TEST(GenerationRequestTest, AmbiguousOrUnknownStructuredOutputFieldsAre400s) {
  auto parse = [](const char* body, GenerationRequest* request) {
    auto json = ParseJsonObject(body);
    EXPECT_TRUE(json.ok()) << body;
    return ParseGenerationRequest(*json, Endpoint::kChat, request);
  };
  // Two fields that each set a constraint: neither silently wins.
  for (const auto& [body, message] : std::vector<std::pair<const char*, std::string>>{
           {R"({"structured_outputs": {"regex": "a"}, "guided_regex": "b"})",
            "structured_outputs and guided_regex"},
           {R"({"structured_outputs": {"json": {}}, "guided_json": {"type": "string"}})",
            "structured_outputs and guided_json"},
           {R"({"structured_outputs": {"choice": ["x"]}, "response_format": {"type": "json_schema",
                "json_schema": {"name": "n", "schema": {"type": "string"}}}})",
            "structured_outputs and response_format"},
           {R"({"structured_outputs": {"json_object": true},
                "response_format": {"type": "json_object"}})",
            "structured_outputs and response_format"},
           {R"({"guided_regex": "a", "guided_choice": ["b"]})", "guided_regex and guided_choice"},
           {R"({"guided_json": {}, "response_format": {"type": "json_object"}})",
            "guided_json and response_format"},
           {R"({"structured_outputs": {"regex": "a", "schema": {}}})",
            "structured_outputs.schema: Extra inputs are not permitted"},
           {R"({"structured_outputs": {"regex": "a", "structural_tag": "{}"}})", "structural_tag"},
           {R"({"structured_outputs": {"regex": "a", "_backend": "guidance"}})", "_backend"},
           {R"({"structured_outputs": {"json": {}, "whitespace_pattern": " ?",
                "disable_any_whitespace": true}})",
            "cannot be combined"},
           {R"({"structured_outputs": {"json": {}, "whitespace_pattern": 1}})",
            "whitespace_pattern"},
           {R"({"guided_json": {}, "guided_whitespace_pattern": " *",
                "structured_outputs": {"whitespace_pattern": " ?"}})",
            "guided_whitespace_pattern"},
       }) {
    GenerationRequest request;
    auto error = parse(body, &request);
    ASSERT_TRUE(error.has_value()) << body;
    EXPECT_EQ(static_cast<int>(error->status), 400) << body;
    EXPECT_NE(error->message.find(message), std::string::npos) << body << ": " << error->message;
  }
  // Options in structured_outputs go with a constraint from another field; harmless keys pass.
  GenerationRequest request;
  ASSERT_FALSE(parse(R"({"structured_outputs": {"disable_any_whitespace": true},
                         "guided_json": {"type": "integer"}})",
                     &request)
                   .has_value());
  EXPECT_EQ(request.params.structured_outputs->json, R"({"type":"integer"})");
  EXPECT_TRUE(request.params.structured_outputs->disable_any_whitespace);
  ASSERT_FALSE(parse(R"({"structured_outputs": {"json": {}, "whitespace_pattern": "[ \\n]*",
                         "disable_fallback": true, "_backend": "auto", "_backend_was_auto": true}})",
                     &request)
                   .has_value());
  EXPECT_EQ(request.params.structured_outputs->whitespace_pattern, "[ \\n]*");
  ASSERT_FALSE(
      parse(R"({"guided_json": {}, "guided_whitespace_pattern": " *"})", &request).has_value());
  EXPECT_EQ(request.params.structured_outputs->whitespace_pattern, " *");
}

TEST(GenerationRequestTest, StructuredOutputsConfigFlag) {
  auto config = ParseStructuredOutputsConfig(
      R"({"backend": "auto", "disable_fallback": true, "disable_additional_properties": true,
          "whitespace_pattern": "[ \\n\\t]*"})");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_TRUE(config->disable_additional_properties);
  EXPECT_EQ(config->whitespace_pattern, "[ \\n\\t]*");
  for (const auto& [text, message] : std::vector<std::pair<const char*, std::string>>{
           {R"({"any_whitespace": true})", "unknown key \"any_whitespace\""},
           {R"({"backend": "guidance"})", "\"backend\""},
           {R"({"disable_any_whitespace": "yes"})", "\"disable_any_whitespace\""},
           {R"({"whitespace_pattern": " ", "disable_any_whitespace": true})", "cannot be combined"},
           {"[1]", "must be a JSON object"}}) {
    auto refused = ParseStructuredOutputsConfig(text);
    ASSERT_FALSE(refused.ok()) << text;
    EXPECT_NE(refused.error().find(message), std::string::npos) << refused.error();
  }
  // The server's whitespace applies unless the request chose its own; its flags add up.
  SamplingParams params;
  params.structured_outputs = StructuredOutputsParams{.json = "{}"};
  ApplyStructuredOutputsConfig(*config, &params);
  EXPECT_EQ(params.structured_outputs->whitespace_pattern, "[ \\n\\t]*");
  EXPECT_TRUE(params.structured_outputs->disable_additional_properties);
  params.structured_outputs = StructuredOutputsParams{.json = "{}", .disable_any_whitespace = true};
  ApplyStructuredOutputsConfig(*config, &params);
  EXPECT_FALSE(params.structured_outputs->whitespace_pattern.has_value());
  params.structured_outputs.reset();
  ApplyStructuredOutputsConfig(*config, &params);
  EXPECT_FALSE(params.structured_outputs.has_value());
}

TEST(GenerationRequestTest, MaxTokensFitTheContext) {
  GenerationRequest request;
  request.requested_max_tokens = 100;
  ValidatedSamplingParams params;
  EXPECT_FALSE(ResolveMaxTokens(request, 10, 64, &params).has_value());
  EXPECT_EQ(params->max_tokens, 54);
  request.requested_max_tokens.reset();
  EXPECT_FALSE(ResolveMaxTokens(request, 10, 64, &params).has_value());
  EXPECT_EQ(params->max_tokens, 54);
}

// The refusal names the route's input: a chat's messages, a completion's prompt.
TEST(GenerationRequestTest, ContextLengthErrorNamesTheRoutesInput) {
  ValidatedSamplingParams params;
  GenerationRequest chat;
  ASSERT_FALSE(ParseGenerationRequest(*ParseJsonObject("{}"), Endpoint::kChat, &chat).has_value());
  auto error = ResolveMaxTokens(chat, 64, 64, &params);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message,
            "This model's maximum context length is 64 tokens. However, your request has 64 "
            "input tokens. Please reduce the length of the input messages.");
  EXPECT_EQ(error->param, "messages");
  GenerationRequest completion;
  ASSERT_FALSE(ParseGenerationRequest(*ParseJsonObject("{}"), Endpoint::kCompletions, &completion)
                   .has_value());
  error = ResolveMaxTokens(completion, 65, 64, &params);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message,
            "This model's maximum context length is 64 tokens. However, your request has 65 "
            "input tokens. Please reduce the length of the input prompt.");
  EXPECT_EQ(error->param, "prompt");
}

TEST(GenerationRequestTest, TokenIdsMustBeInTheVocabulary) {
  SamplingParams params;
  params.logit_bias[99] = 1.0f;
  EXPECT_TRUE(CheckTokenIds(params, 99).has_value());
  EXPECT_FALSE(CheckTokenIds(params, 100).has_value());
  params.allowed_token_ids = std::vector<int32_t>{};
  EXPECT_TRUE(CheckTokenIds(params, 100).has_value());
}

}  // namespace
}  // namespace vllm::server
