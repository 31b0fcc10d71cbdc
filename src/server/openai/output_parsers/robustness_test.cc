// Robustness of every parser: random garbage built from marker pieces never breaks the delta
// rules, random well-formed calls are found whole and streamed, and huge or deeply nested
// outputs are handled in linear time.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>

#include "server/openai/output_parsers/reasoning_parser.h"
#include "server/openai/output_parsers/stream_test_util.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {
namespace {

constexpr const char* kPieces[] = {"<tool_call>",
                                   "</tool_call>",
                                   "<|python_tag|>",
                                   "[TOOL_CALLS]",
                                   "[ARGS]",
                                   "<think>",
                                   "</think>",
                                   "<|start|>",
                                   "assistant",
                                   "<|channel|>",
                                   "analysis",
                                   "final",
                                   "commentary",
                                   " to=functions.f",
                                   "<|constrain|>json",
                                   "<|message|>",
                                   "<|end|>",
                                   "<|call|>",
                                   "<|return|>",
                                   "{",
                                   "}",
                                   "[",
                                   "]",
                                   "\"name\"",
                                   "\"arguments\"",
                                   ":",
                                   ",",
                                   "\"f\"",
                                   "1",
                                   "-0.5e3",
                                   "true",
                                   "\\u00e9",
                                   "\\",
                                   "\"",
                                   " ",
                                   "\n",
                                   "text",
                                   "\xC3\xA9",
                                   "\xF0\x9F",
                                   ";",
                                   "<",
                                   "|",
                                   "to="};

std::string RandomGarbage(std::mt19937& random) {
  std::string text;
  for (int i = random() % 40; i > 0; --i) text += kPieces[random() % std::size(kPieces)];
  return text;
}

std::vector<std::string> RandomPieces(std::mt19937& random, std::string_view text) {
  std::vector<std::string> pieces;
  for (size_t position = 0; position < text.size();) {
    const size_t length = 1 + random() % 7;
    pieces.emplace_back(text.substr(position, length));
    position += length;
  }
  return pieces;
}

TEST(RobustnessTest, GarbageNeverBreaksTheDeltaRules) {
  std::mt19937 random(11);
  for (int i = 0; i < 3000; ++i) {
    const std::string text = RandomGarbage(random);
    for (const std::string& name : ToolParserNames()) {
      const ToolParseResult whole = CreateToolParser(name)->Parse(text);
      auto parser = CreateToolParser(name);
      const testing::StreamedOutput streamed =
          testing::StreamTool(*parser, RandomPieces(random, text));
      ASSERT_EQ(streamed.violation, "") << name << ": " << text;
      // Streaming departs from Parse only after sending a call that Parse rejects: without
      // calls both give the same content, and calls Parse accepts stream the same. (openai
      // streams invalid JSON arguments normalized up to the error, Parse keeps them raw.)
      if (streamed.calls.empty() || (!whole.tool_calls.empty() && name != "openai")) {
        ASSERT_EQ(streamed.content, whole.content.value_or("")) << name << ": " << text;
        ASSERT_EQ(testing::Describe(streamed.calls), testing::Describe(whole.tool_calls))
            << name << ": " << text;
      }
    }
    for (const std::string& name : ReasoningParserNames()) {
      const ReasoningParseResult whole = CreateReasoningParser(name)->Parse(text);
      auto parser = CreateReasoningParser(name);
      const testing::StreamedOutput streamed =
          testing::StreamReasoning(*parser, RandomPieces(random, text));
      // Reasoning parsers have no malformed input: streaming always matches.
      ASSERT_EQ(streamed.reasoning, whole.reasoning_content.value_or("")) << name << ": " << text;
      ASSERT_EQ(streamed.content, whole.content.value_or("")) << name << ": " << text;
    }
  }
}

nlohmann::json RandomArguments(std::mt19937& random, int depth) {
  nlohmann::json object = nlohmann::json::object();
  for (int i = random() % 4; i > 0; --i) {
    const std::string key = "k" + std::to_string(random() % 50);
    switch (random() % 6) {
      case 0:
        object[key] = static_cast<int>(random() % 1000) - 500;
        break;
      case 1:
        object[key] = static_cast<double>(random() % 100000) / 64.0;
        break;
      case 2:
        object[key] = std::string("caf\xC3\xA9 \"q\" \\ <tool_call> [TOOL_CALLS] <|start|> ;{") +
                      std::to_string(random());
        break;
      case 3:
        object[key] = nullptr;
        break;
      default:
        object[key] = depth > 0 ? RandomArguments(random, depth - 1) : nlohmann::json::array();
    }
  }
  return object;
}

// Renders calls in a parser's format.
std::string Render(std::string_view parser,
                   const std::vector<std::pair<std::string, nlohmann::json>>& calls,
                   std::mt19937& random) {
  std::string text;
  if (parser == "hermes") {
    text = random() % 2 ? "Let me check. " : "";
    for (const auto& [name, arguments] : calls) {
      text += "<tool_call>\n" + nlohmann::json{{"name", name}, {"arguments", arguments}}.dump() +
              "\n</tool_call>\n";
    }
  } else if (parser == "llama3_json") {
    text = random() % 2 ? "<|python_tag|>" : "";
    for (size_t i = 0; i < calls.size(); ++i) {
      if (i > 0) text += "; ";
      text += nlohmann::json{{"name", calls[i].first}, {"parameters", calls[i].second}}.dump(
          random() % 2 ? -1 : 1);
    }
  } else if (parser == "mistral") {
    text = "Sure.[TOOL_CALLS]";
    nlohmann::json array = nlohmann::json::array();
    for (const auto& [name, arguments] : calls)
      array.push_back({{"name", name}, {"arguments", arguments}});
    text += array.dump();
  } else {
    text = "<|channel|>analysis<|message|>Thinking.<|end|>";
    for (const auto& [name, arguments] : calls) {
      text += "<|start|>assistant<|channel|>commentary to=functions." + name +
              " <|constrain|>json<|message|>" + arguments.dump() + "<|call|>";
    }
  }
  return text;
}

TEST(RobustnessTest, RandomWellFormedCallsAreFoundWholeAndStreamed) {
  std::mt19937 random(5);
  for (int i = 0; i < 300; ++i) {
    std::vector<std::pair<std::string, nlohmann::json>> calls;
    for (int j = 1 + random() % 3; j > 0; --j) {
      calls.emplace_back("fn_" + std::to_string(random() % 100), RandomArguments(random, 3));
    }
    for (const std::string& name : ToolParserNames()) {
      const std::string text = Render(name, calls, random);
      const ToolParseResult whole = CreateToolParser(name)->Parse(text);
      ASSERT_EQ(whole.tool_calls.size(), calls.size()) << name << ": " << text;
      for (size_t k = 0; k < calls.size(); ++k) {
        EXPECT_EQ(whole.tool_calls[k].name, calls[k].first);
        EXPECT_EQ(nlohmann::json::parse(whole.tool_calls[k].arguments), calls[k].second)
            << name << ": " << whole.tool_calls[k].arguments;
      }
      auto parser = CreateToolParser(name);
      const testing::StreamedOutput streamed =
          testing::StreamTool(*parser, RandomPieces(random, text));
      EXPECT_EQ(streamed.violation, "");
      EXPECT_EQ(streamed.content, whole.content.value_or("")) << name << ": " << text;
      EXPECT_EQ(testing::Describe(streamed.calls), testing::Describe(whole.tool_calls)) << name;
    }
  }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Feeds `text` in pieces of 1 to 4 bytes; returns the seconds taken.
double TimeStreaming(ToolParser& parser, std::string_view text, testing::StreamedOutput* out) {
  const auto start = std::chrono::steady_clock::now();
  for (size_t position = 0; position < text.size(); position += 1 + position % 4) {
    testing::Gather(parser.ParseDelta(text.substr(position, 1 + position % 4)), out);
  }
  testing::Gather(parser.Finish(), out);
  return SecondsSince(start);
}

TEST(RobustnessTest, HugeOutputsStreamInLinearTime) {
  const std::string content(4 << 20, 'x');
  const std::string huge_string(2 << 20, 'y');
  for (const std::string& name : ToolParserNames()) {
    auto parser = CreateToolParser(name);
    testing::StreamedOutput streamed;
    const double seconds = TimeStreaming(*parser, content, &streamed);
    EXPECT_EQ(streamed.content, content) << name;
    EXPECT_LT(seconds, 10.0) << name;
    std::printf("[ perf ] %s: 4 MiB of content in 1-4 byte deltas: %.3f s\n", name.c_str(),
                seconds);
  }
  const std::string call =
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"" + huge_string + "\"}}</tool_call>";
  auto parser = CreateToolParser("hermes");
  testing::StreamedOutput streamed;
  const double seconds = TimeStreaming(*parser, call, &streamed);
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments,
            CreateToolParser("hermes")->Parse(call).tool_calls[0].arguments);
  EXPECT_LT(seconds, 10.0);
  std::printf("[ perf ] hermes: a call with 2 MiB of arguments in 1-4 byte deltas: %.3f s\n",
              seconds);

  for (const std::string& name : ReasoningParserNames()) {
    const std::string text = name.starts_with("openai") ? "<|channel|>analysis<|message|>" + content
                                                        : "<think>" + content;
    auto reasoning = CreateReasoningParser(name);
    const auto start = std::chrono::steady_clock::now();
    std::string gathered;
    for (size_t position = 0; position < text.size(); position += 3) {
      gathered += reasoning->ParseDelta(text.substr(position, 3)).reasoning_content;
    }
    gathered += reasoning->Finish().reasoning_content;
    const double reasoning_seconds = SecondsSince(start);
    EXPECT_EQ(gathered, content) << name;
    EXPECT_LT(reasoning_seconds, 10.0) << name;
    std::printf("[ perf ] %s: 4 MiB of reasoning in 3 byte deltas: %.3f s\n", name.c_str(),
                reasoning_seconds);
  }
}

TEST(RobustnessTest, HeldTextIsNotScannedAgain) {
  // Leading whitespace waits to see whether <think> follows; JSON form text waits for a name.
  const std::string spaces(1 << 20, ' ');
  const auto start = std::chrono::steady_clock::now();
  auto reasoning = CreateReasoningParser("qwen3");
  std::string gathered;
  for (char c : spaces)
    gathered += reasoning->ParseDelta(std::string_view(&c, 1)).reasoning_content;
  EXPECT_EQ(gathered, "");
  gathered += reasoning->ParseDelta("x").reasoning_content;
  EXPECT_EQ(gathered, spaces + "x");
  auto mistral = CreateToolParser("mistral");
  testing::StreamedOutput streamed;
  testing::Gather(mistral->ParseDelta("[TOOL_CALLS]"), &streamed);
  for (char c : spaces) testing::Gather(mistral->ParseDelta(std::string_view(&c, 1)), &streamed);
  testing::Gather(mistral->Finish(), &streamed);
  EXPECT_EQ(streamed.content, "[TOOL_CALLS]" + spaces);
  EXPECT_LT(SecondsSince(start), 5.0);
}

TEST(RobustnessTest, DeepNestingFailsCleanly) {
  const std::string brackets(1 << 20, '[');
  const std::string outputs[] = {
      "<tool_call>{\"name\": \"f\", \"arguments\": " + brackets,
      "{\"name\": \"f\", \"parameters\": " + brackets,
      "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": " + brackets,
      "<|channel|>commentary to=functions.f <|constrain|>json<|message|>" + brackets,
  };
  const std::string names[] = {"hermes", "llama3_json", "mistral", "openai"};
  for (size_t i = 0; i < std::size(names); ++i) {
    const auto start = std::chrono::steady_clock::now();
    const ToolParseResult whole = CreateToolParser(names[i])->Parse(outputs[i]);
    auto parser = CreateToolParser(names[i]);
    const testing::StreamedOutput streamed = testing::StreamTool(*parser, {outputs[i]});
    EXPECT_LT(SecondsSince(start), 5.0) << names[i];
    EXPECT_EQ(streamed.violation, "");
    if (names[i] == "openai") {
      ASSERT_EQ(whole.tool_calls.size(), 1u);  // kept as raw text, as invalid JSON
      EXPECT_EQ(whole.tool_calls[0].arguments, brackets);
    } else {
      EXPECT_TRUE(whole.tool_calls.empty()) << names[i];
      EXPECT_EQ(whole.content, outputs[i]) << names[i];
    }
  }
}

}  // namespace
}  // namespace vllm::server
