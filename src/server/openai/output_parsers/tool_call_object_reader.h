// One tool call written as a JSON object, {"name": "get_weather", "arguments": {...}}, read
// incrementally: the name once its string ends, the arguments re-serialized as they arrive (see
// JsonNormalizer), other keys checked and skipped. Shared by the hermes, llama3_json and mistral
// parsers, for the whole output and for streaming alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/openai/output_parsers/json_normalizer.h"

namespace vllm::server {

class ToolCallObjectReader {
 public:
  struct Options {
    // Keys whose value is the call's arguments; the first of them present is used and any other
    // is skipped (llama3_json accepts "arguments" or "parameters").
    std::vector<std::string> argument_keys = {"arguments"};
    // A call without arguments is malformed; otherwise its arguments are "{}".
    bool arguments_required = true;
  };
  enum class State { kReading, kDone, kFailed };

  explicit ToolCallObjectReader(Options options) : options_(std::move(options)) {}

  // Reads `text` as the continuation of the object (whitespace before it is skipped); returns
  // the bytes used: all of `text`, or up to the closing brace, or up to where it failed. A call
  // is malformed (kFailed) when the text is not a JSON object, or the object lacks a string
  // "name", lacks required arguments, or repeats "name" or its arguments key.
  size_t Feed(std::string_view text);
  // The input ended inside the object: a number that ends the arguments text is complete.
  void Finish();

  State state() const {
    return step_ == Step::kDone     ? State::kDone
           : step_ == Step::kFailed ? State::kFailed
                                    : State::kReading;
  }
  // The decoded name, once its string has ended.
  const std::optional<std::string>& name() const { return name_; }
  // The normalized arguments text read so far ("{}" when absent and not required).
  const std::string& arguments() const { return arguments_; }

 private:
  enum class Step {
    kOpen,
    kFirstKeyOrEnd,
    kKey,
    kKeyString,
    kColon,
    kValue,
    kCommaOrEnd,
    kDone,
    kFailed
  };
  enum class Field { kName, kArguments, kOther };

  bool StartKey(char c);
  void EndKey();
  void EndValue();
  void Close();

  Options options_;
  Step step_ = Step::kOpen;
  Field field_ = Field::kOther;
  JsonNormalizer json_;  // the key or value being read
  std::string key_;
  std::string name_text_;
  std::string skipped_;  // the text of a skipped value, dropped after every Feed
  std::optional<std::string> name_;
  std::string arguments_;
  std::string arguments_key_;  // which of options_.argument_keys gave the arguments; empty: none
};

}  // namespace vllm::server
