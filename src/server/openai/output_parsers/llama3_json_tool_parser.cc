// The llama3_json tool parser (Llama 3.1 / 3.2 JSON tool calls):
//
//   <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": ...}
//
// The output is taken as calls only when it starts with <|python_tag|> or "{" (vLLM's streaming
// rule; vLLM's whole-output parse also looks for objects after leading text, which this parser
// does not, so that both modes agree). Then, as vLLM: every "{" after the previous object starts
// a JSON object with a string "name" and "arguments" (or "parameters"), re-serialized as
// json.dumps(..., ensure_ascii=False) writes them; the text between objects (the "; "
// separators) is dropped; content is null. No object, or any malformed one, makes the whole
// output content. (vLLM skips a "{" right after an object, "{...}{...}", an off-by-one; here it
// starts the next call.)
//
// Streaming holds the text until the first name is sent, so a first call found malformed before
// that still gives the whole output as content. Differences from Parse, on malformed or cut-short
// output only: a call found malformed after a name was sent ends the streamed calls; a call cut
// short by the end of the output keeps its name and the arguments text read so far.
#include <optional>
#include <string>

#include "server/openai/output_parsers/held_call_stream.h"
#include "server/openai/output_parsers/streamed_tool_call.h"
#include "server/openai/output_parsers/tool_parsers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";

ToolCallObjectReader::Options CallOptions() {
  return {.argument_keys = {"arguments", "parameters"}};
}

class Llama3JsonToolParser final : public HeldCallToolParser {
 public:
  ToolParseResult Parse(std::string_view output) const override;

 private:
  enum class Mode {
    kStart,  // deciding whether the output starts with <|python_tag|> or "{"
    kSeek,   // dropping text up to the next "{"
    kCall,   // inside a call's JSON
  };

  bool Step(std::string_view* rest, bool at_end, DeltaMessage* delta) override;

  Mode mode_ = Mode::kStart;
};

ToolParseResult Llama3JsonToolParser::Parse(std::string_view output) const {
  const bool tagged = output.starts_with(kPythonTag);
  if (!tagged && !output.starts_with("{")) return {{}, std::string(output)};
  ToolParseResult result;
  size_t position = tagged ? kPythonTag.size() : 0;
  while ((position = output.find('{', position)) != std::string_view::npos) {
    size_t used = 0;
    std::optional<ParsedToolCall> call =
        ReadToolCallObject(output.substr(position), CallOptions(), &used);
    if (!call.has_value()) return {{}, std::string(output)};
    result.tool_calls.push_back(std::move(*call));
    position += used;
  }
  if (result.tool_calls.empty()) return {{}, std::string(output)};
  return result;
}

bool Llama3JsonToolParser::Step(std::string_view* rest, bool at_end, DeltaMessage* delta) {
  switch (mode_) {
    case Mode::kStart:
      if (rest->starts_with(kPythonTag)) {
        Consume(rest, kPythonTag.size());
        mode_ = Mode::kSeek;
      } else if (rest->starts_with("{")) {
        mode_ = Mode::kSeek;
      } else if (!at_end && kPythonTag.starts_with(*rest)) {
        return false;
      } else {
        GiveUp(delta);  // not calls: everything is content
      }
      return true;
    case Mode::kSeek: {
      const size_t brace = rest->find('{');
      Consume(rest, brace == std::string_view::npos ? rest->size() : brace);
      if (brace == std::string_view::npos) return false;
      StartCall(CallOptions());
      mode_ = Mode::kCall;
      return true;
    }
    case Mode::kCall: {
      const ToolCallObjectReader::State state = FeedCall(rest, rest->size(), delta);
      if (state == ToolCallObjectReader::State::kDone) mode_ = Mode::kSeek;
      return state != ToolCallObjectReader::State::kReading;
    }
  }
  return false;  // not reached: every mode returns
}

}  // namespace

std::unique_ptr<ToolParser> MakeLlama3JsonToolParser() {
  return std::make_unique<Llama3JsonToolParser>();
}

}  // namespace vllm::server
