// Test helpers for the output parsers: splitting an output into streamed pieces (at every byte
// position, byte by byte, token-like random sizes), feeding them to a parser, gathering the
// deltas (checking the OpenAI tool-call delta rules) and comparing with the whole-output parse.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "server/openai/output_parsers/reasoning_parser.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server::testing {

struct StreamedOutput {
  std::string content;
  std::string reasoning;
  std::vector<ParsedToolCall> calls;
  std::string violation;  // a delta breaking the rules: what was wrong; empty if none
};

// Adds one delta: a call's first delta must name it (indices 0, 1, ... in order), later ones
// must not.
inline void Gather(const DeltaMessage& delta, StreamedOutput* out) {
  out->content += delta.content;
  out->reasoning += delta.reasoning_content;
  for (const ToolCallDelta& call : delta.tool_calls) {
    const int num_calls = static_cast<int>(out->calls.size());
    if (call.index == num_calls) {
      if (!call.name.has_value()) out->violation = "a call's first delta has no name";
      out->calls.push_back({call.name.value_or(""), ""});
    } else if (call.index != num_calls - 1) {
      out->violation = "call index " + std::to_string(call.index) + " out of order";
      continue;
    } else if (call.name.has_value()) {
      out->violation = "a name sent twice";
    }
    out->calls.back().arguments += call.arguments;
  }
}

// Ways to split `text`: at every byte position into two, byte by byte, and `num_random` runs of
// random pieces of 1 to 8 bytes (like tokens).
inline std::vector<std::vector<std::string>> Splits(std::string_view text, int num_random = 8) {
  std::vector<std::vector<std::string>> splits;
  for (size_t position = 0; position <= text.size(); ++position) {
    splits.push_back({std::string(text.substr(0, position)), std::string(text.substr(position))});
  }
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  splits.push_back(bytes);
  for (int seed = 1; seed <= num_random; ++seed) {
    std::mt19937 random(static_cast<uint32_t>(seed));
    std::vector<std::string> pieces;
    for (size_t position = 0; position < text.size();) {
      const size_t length = std::uniform_int_distribution<size_t>(1, 8)(random);
      pieces.emplace_back(text.substr(position, length));
      position += length;
    }
    splits.push_back(pieces);
  }
  return splits;
}

inline StreamedOutput StreamTool(ToolParser& parser, const std::vector<std::string>& pieces) {
  StreamedOutput out;
  for (const std::string& piece : pieces) Gather(parser.ParseDelta(piece), &out);
  Gather(parser.Finish(), &out);
  return out;
}

inline StreamedOutput StreamTool(std::string_view parser_name, std::string_view text) {
  return StreamTool(*CreateToolParser(parser_name), {std::string(text)});
}

inline StreamedOutput StreamReasoning(ReasoningParser& parser,
                                      const std::vector<std::string>& pieces) {
  StreamedOutput out;
  for (const std::string& piece : pieces) Gather(parser.ParseDelta(piece), &out);
  Gather(parser.Finish(), &out);
  return out;
}

inline std::string Describe(const std::vector<ParsedToolCall>& calls) {
  std::string text;
  for (const ParsedToolCall& call : calls) text += "[" + call.name + " " + call.arguments + "]";
  return text;
}

// Streams `output` through a fresh `parser_name` parser, split every way, and compares with its
// Parse: the content deltas concatenate to Parse's content (or "" for null), the calls match.
inline ::testing::AssertionResult StreamMatchesParse(std::string_view parser_name,
                                                     std::string_view output) {
  const ToolParseResult whole = CreateToolParser(parser_name)->Parse(output);
  for (const std::vector<std::string>& pieces : Splits(output)) {
    auto parser = CreateToolParser(parser_name);
    const StreamedOutput streamed = StreamTool(*parser, pieces);
    std::string split;
    for (const std::string& piece : pieces) split += "|" + piece;
    if (!streamed.violation.empty()) {
      return ::testing::AssertionFailure() << streamed.violation << " for split " << split;
    }
    if (streamed.content != whole.content.value_or("") ||
        Describe(streamed.calls) != Describe(whole.tool_calls)) {
      return ::testing::AssertionFailure()
             << "split " << split << "\n streamed content: " << streamed.content
             << "\n parsed content: " << whole.content.value_or("<null>")
             << "\n streamed calls: " << Describe(streamed.calls)
             << "\n parsed calls: " << Describe(whole.tool_calls);
    }
  }
  return ::testing::AssertionSuccess();
}

// Whether a `parser_name` parser finds no call in `output` and returns all of it as content.
inline ::testing::AssertionResult ParsesAsContentOnly(std::string_view parser_name,
                                                      std::string_view output) {
  const ToolParseResult result = CreateToolParser(parser_name)->Parse(output);
  if (result.tool_calls.empty() && result.content == output) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "output: " << output << "\n calls: " << Describe(result.tool_calls)
         << "\n content: " << result.content.value_or("<null>");
}

// The same for a reasoning parser.
inline ::testing::AssertionResult ReasoningStreamMatchesParse(std::string_view parser_name,
                                                              const ReasoningParserOptions& options,
                                                              std::string_view output) {
  const ReasoningParseResult whole = CreateReasoningParser(parser_name, options)->Parse(output);
  for (const std::vector<std::string>& pieces : Splits(output)) {
    auto parser = CreateReasoningParser(parser_name, options);
    const StreamedOutput streamed = StreamReasoning(*parser, pieces);
    if (streamed.reasoning != whole.reasoning_content.value_or("") ||
        streamed.content != whole.content.value_or("")) {
      std::string split;
      for (const std::string& piece : pieces) split += "|" + piece;
      return ::testing::AssertionFailure()
             << "split " << split << "\n streamed reasoning: " << streamed.reasoning
             << "\n parsed reasoning: " << whole.reasoning_content.value_or("<null>")
             << "\n streamed content: " << streamed.content
             << "\n parsed content: " << whole.content.value_or("<null>");
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vllm::server::testing
