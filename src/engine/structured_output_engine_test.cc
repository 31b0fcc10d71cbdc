// Structured output through the engine on the real demo model (stories260K): whatever the
// sampling parameters, batch, n or preemption, a constrained output is a sentence of its
// constraint and stops where the constraint is complete; unconstrained neighbours are untouched.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

SamplingParams Constrained(StructuredOutputsParams constraint, float temperature = 0.0f,
                           int max_tokens = 64) {
  SamplingParams params;
  params.temperature = temperature;
  params.max_tokens = max_tokens;
  params.structured_outputs = std::move(constraint);
  return params;
}

TEST(StructuredOutputEngineTest, ChoiceGivesOneOfTheStringsAndStops) {
  LLM llm(StoriesArgs());
  const std::vector<std::string> choices = {"Lily went home.", "The dog ran", "sun"};
  for (float temperature : {0.0f, 1.0f}) {
    SamplingParams params = Constrained({.choice = choices}, temperature);
    params.n = 4;
    params.seed = 7;
    auto outputs = llm.Generate({"Once upon a time", "The dog"}, params, false);
    for (const RequestOutput& output : outputs) {
      for (const CompletionOutput& completion : output.outputs) {
        EXPECT_NE(std::find(choices.begin(), choices.end(), completion.text), choices.end())
            << completion.text;
        EXPECT_EQ(completion.finish_reason, "stop");
      }
    }
  }
}

TEST(StructuredOutputEngineTest, RegexHoldsUnderEverySamplingParameter) {
  LLM llm(StoriesArgs());
  const std::string pattern = "[a-z]{2,5}-[0-9]{3}( (yes|no))?";
  SamplingParams params = Constrained({.regex = pattern}, 1.2f);
  params.n = 3;
  params.seed = 1;
  params.top_k = 20;
  params.top_p = 0.9f;
  params.repetition_penalty = 1.3f;
  params.min_tokens = 2;
  auto outputs = llm.Generate({"Once upon a time", "Mom said", "In the park"}, params, false);
  for (const RequestOutput& output : outputs) {
    for (const CompletionOutput& completion : output.outputs) {
      EXPECT_TRUE(std::regex_match(completion.text, std::regex(pattern))) << completion.text;
      EXPECT_EQ(completion.finish_reason, "stop") << completion.text;
    }
  }
}

TEST(StructuredOutputEngineTest, JsonSchemaOutputParsesAndValidates) {
  LLM llm(StoriesArgs());
  const nlohmann::json schema = {{"type", "object"},
                                 {"properties",
                                  {{"name", {{"type", "string"}, {"maxLength", 6}}},
                                   {"pet", {{"enum", {"cat", "dog"}}}},
                                   {"happy", {{"type", "boolean"}}}}},
                                 {"required", {"name", "pet", "happy"}}};
  // The demo model loves whitespace wherever JSON allows it: compact JSON keeps the test short.
  SamplingParams params =
      Constrained({.json = schema.dump(), .disable_any_whitespace = true}, 0.8f, 120);
  params.n = 4;
  params.seed = 3;
  auto outputs = llm.Generate({"Once upon a time", "Lily and Tom"}, params, false);
  for (const RequestOutput& output : outputs) {
    for (const CompletionOutput& completion : output.outputs) {
      ASSERT_EQ(completion.finish_reason, "stop") << completion.text;
      auto value = nlohmann::json::parse(completion.text, nullptr, false);
      ASSERT_TRUE(value.is_object()) << completion.text;
      EXPECT_EQ(value.size(), 3u) << completion.text;
      EXPECT_LE(value["name"].get<std::string>().size(), 6u) << completion.text;
      EXPECT_TRUE(value["pet"] == "cat" || value["pet"] == "dog") << completion.text;
      EXPECT_TRUE(value["happy"].is_boolean()) << completion.text;
    }
  }
}

// The demo model at temperature 1 finishes JSON well within max_tokens: JSON's whitespace is one
// separator between two tokens by default, so it cannot wander through runs of blank lines. Under
// [ \n\t]{0,20}, the default before, the $ref schema took 246 tokens (median) and a third of the
// tool calls ran out of 300. (Any JSON object, or any number of tool calls, still may not end:
// the model writes member after member, whatever the whitespace.)
TEST(StructuredOutputEngineTest, SmallModelFinishesJsonAtTemperatureOne) {
  LLM llm(StoriesArgs());
  const nlohmann::json with_ref = {
      {"$defs",
       {{"pet",
         {{"type", "object"},
          {"properties", {{"kind", {{"enum", {"cat", "dog"}}}}, {"age", {{"type", "integer"}}}}},
          {"required", {"kind", "age"}}}}}},
      {"type", "object"},
      {"properties", {{"id", {{"type", "integer"}}}, {"pet", {{"$ref", "#/$defs/pet"}}}}},
      {"required", {"id", "pet"}}};
  // tool_choice "required" without parallel calls (the server's schema for two tools).
  auto tool = [](const char* name, nlohmann::json parameters) {
    return nlohmann::json{
        {"properties",
         {{"name", {{"type", "string"}, {"enum", {name}}}}, {"parameters", std::move(parameters)}}},
        {"required", {"name", "parameters"}}};
  };
  const nlohmann::json one_tool_call = {
      {"type", "array"},
      {"minItems", 1},
      {"maxItems", 1},
      {"items",
       {{"type", "object"},
        {"anyOf",
         {tool("get_weather", {{"type", "object"},
                               {"properties",
                                {{"city", {{"enum", {"Paris", "Tokyo", "Lima"}}}},
                                 {"unit", {{"enum", {"celsius", "fahrenheit"}}}}}},
                               {"required", {"city", "unit"}}}),
          tool("get_time", {{"type", "object"},
                            {"properties", {{"zone", {{"enum", {"UTC", "CET"}}}}}},
                            {"required", {"zone"}}})}}}}};
  constexpr int kMaxTokens = 300;
  for (const nlohmann::json& schema : {with_ref, one_tool_call}) {
    SamplingParams params = Constrained({.json = schema.dump()}, 1.0f, kMaxTokens);
    params.n = 4;
    for (int64_t seed : {1, 2, 3}) {
      params.seed = seed;
      for (const RequestOutput& output :
           llm.Generate({"Once upon a time", "Tell me about a dog."}, params, false)) {
        for (const CompletionOutput& completion : output.outputs) {
          ASSERT_EQ(completion.finish_reason, "stop") << completion.text;
          EXPECT_LT(completion.token_ids.size(), kMaxTokens / 2) << completion.text;
          auto value = nlohmann::json::parse(completion.text, nullptr, false);
          EXPECT_FALSE(value.is_discarded()) << completion.text;
        }
      }
    }
  }
}

TEST(StructuredOutputEngineTest, UnconstrainedNeighboursAreUntouched) {
  LLM llm(StoriesArgs());
  SamplingParams plain;
  plain.temperature = 0.0f;
  plain.max_tokens = 40;
  auto alone = llm.Generate({"Once upon a time"}, plain, false);
  std::vector<SamplingParams> mixed = {plain, Constrained({.regex = "[0-9]{5}"}), plain,
                                       Constrained({.json_object = true})};
  auto together =
      llm.Generate({"Once upon a time", "The dog", "Once upon a time", "One day"}, mixed, false);
  EXPECT_EQ(together[0].outputs[0].token_ids, alone[0].outputs[0].token_ids);
  EXPECT_EQ(together[2].outputs[0].token_ids, alone[0].outputs[0].token_ids);
  EXPECT_TRUE(std::regex_match(together[1].outputs[0].text, std::regex("[0-9]{5}")));
  EXPECT_EQ(together[3].outputs[0].text.front(), '{') << together[3].outputs[0].text;
}

TEST(StructuredOutputEngineTest, PreemptionKeepsTheConstraint) {
  EngineArgs tight = StoriesArgs();
  tight.max_model_len = 128;
  tight.kv_cache_memory_bytes = 12 * 16 * 1280;  // 12 blocks for 16 sequences
  tight.enable_prefix_caching = false;
  LLM small(tight);
  LLM roomy(StoriesArgs());
  const std::string pattern = "(the |a |big |red |dog |cat ){20,30}end";
  std::vector<std::string> prompts;
  for (int i = 0; i < 16; ++i) prompts.push_back("Once upon a time" + std::string(i, '!'));
  auto expected = roomy.Generate(prompts, Constrained({.regex = pattern}, 0.0f, 100), false);
  auto outputs = small.Generate(prompts, Constrained({.regex = pattern}, 0.0f, 100), false);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_TRUE(std::regex_match(outputs[i].outputs[0].text, std::regex(pattern)))
        << outputs[i].outputs[0].text;
    EXPECT_EQ(outputs[i].outputs[0].token_ids, expected[i].outputs[0].token_ids) << i;
  }
  EXPECT_GT(small.engine().stats().num_preemptions, 0);
}

TEST(StructuredOutputEngineTest, ConstraintStartsAfterTheMarker) {
  // Greedy continues ", there was a little girl named Lily. She loved ..."; once the output holds
  // " Lily", the choice takes over.
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok()) << engine.error();
  ASSERT_TRUE(
      (*engine)
          ->AddRequest("a", "Once upon a time",
                       Checked(Constrained({.choice = std::vector<std::string>{" The end."}})),
                       {.structured_output_after = "Lily"})
          .ok());
  std::string text;
  while ((*engine)->HasUnfinishedRequests()) {
    auto outputs = (*engine)->Step();
    ASSERT_TRUE(outputs.ok()) << outputs.error();
    for (const RequestOutput& output : *outputs) {
      if (output.finished) text = output.outputs[0].text;
    }
  }
  EXPECT_EQ(text, ", there was a little girl named Lily The end.");
}

TEST(StructuredOutputEngineTest, ConstraintsThatDoNotCompileAreRefused) {
  LLM llm(StoriesArgs());
  const std::vector<StructuredOutputsParams> invalid = {
      {.regex = "(unclosed"},
      {.regex = "a\\1"},
      {.json = "{\"type\": 5}"},
      {.json = "not json"},
      {.json = std::string(10000, '[')},
      {.grammar = "root ::= missing"},
      {.grammar = "root ::= \"a\"{1000000000}"},
      {.choice = std::vector<std::string>{}},
  };
  for (const StructuredOutputsParams& constraint : invalid) {
    EXPECT_THROW(llm.Generate({"Once"}, Constrained(constraint), false), std::invalid_argument);
  }
  StructuredOutputsParams two = {.regex = "a", .grammar = "root ::= \"a\""};
  EXPECT_THROW(llm.Generate({"Once"}, Constrained(two), false), std::invalid_argument);
}

}  // namespace
}  // namespace vllm
