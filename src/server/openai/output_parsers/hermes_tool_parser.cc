// The hermes tool parser (Hermes 2 Pro, Qwen 2.5, Qwen 3):
//
//   Let me look that up.<tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
//   <tool_call>...</tool_call>
//
// As vLLM: each <tool_call> region (up to the next </tool_call>, even one inside a JSON string,
// or the end of the output) holds one JSON object with a string "name" and "arguments"; the
// arguments are re-serialized as json.dumps(..., ensure_ascii=False) writes them; content is the
// text before the first <tool_call> (null when empty) and text between or after calls is
// dropped. A malformed region makes the whole output content, with no calls.
//
// Streaming sends content up to the first <tool_call>, a call's name once its string has ended
// and its arguments as they arrive. Text from the first <tool_call> on is held until the first
// name is sent, so a first call found malformed before that still turns the whole output into
// content, as Parse does. Differences from Parse, all on malformed or cut-short output: a call
// found malformed after a name was sent ends the streamed calls (the rest is dropped); a call cut
// short by the end of the output keeps its name and the arguments text read so far (Parse, as
// vLLM, returns the whole output as content).
#include <optional>
#include <string>

#include "server/openai/output_parsers/held_call_stream.h"
#include "server/openai/output_parsers/streamed_tool_call.h"
#include "server/openai/output_parsers/text_markers.h"
#include "server/openai/output_parsers/tool_parsers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kCallStart = "<tool_call>";
constexpr std::string_view kCallEnd = "</tool_call>";

ToolCallObjectReader::Options CallOptions() { return {.argument_keys = {"arguments"}}; }

class HermesToolParser final : public HeldCallToolParser {
 public:
  ToolParseResult Parse(std::string_view output) const override;

 private:
  enum class Mode {
    kContent,       // before the first call
    kCall,          // inside a call's JSON
    kAfterCall,     // after a call's JSON, before </tool_call>
    kBetweenCalls,  // dropped text, watching for the next <tool_call>
  };

  bool Step(std::string_view* rest, bool at_end, DeltaMessage* delta) override;

  Mode mode_ = Mode::kContent;
};

ToolParseResult HermesToolParser::Parse(std::string_view output) const {
  const size_t first_call = output.find(kCallStart);
  if (first_call == std::string_view::npos) return {{}, std::string(output)};
  ToolParseResult result;
  size_t position = first_call;
  while (position != std::string_view::npos) {
    const size_t body_begin = position + kCallStart.size();
    const size_t body_end = output.find(kCallEnd, body_begin);
    const std::string_view body =
        output.substr(body_begin, body_end == std::string_view::npos ? std::string_view::npos
                                                                     : body_end - body_begin);
    size_t used = 0;
    std::optional<ParsedToolCall> call = ReadToolCallObject(body, CallOptions(), &used);
    if (!call.has_value() || LeadingJsonSpace(body.substr(used)) != body.size() - used) {
      return {{}, std::string(output)};  // json.loads fails on the region
    }
    result.tool_calls.push_back(std::move(*call));
    position = body_end == std::string_view::npos
                   ? std::string_view::npos
                   : output.find(kCallStart, body_end + kCallEnd.size());
  }
  if (first_call > 0) result.content = std::string(output.substr(0, first_call));
  return result;
}

bool HermesToolParser::Step(std::string_view* rest, bool at_end, DeltaMessage* delta) {
  switch (mode_) {
    case Mode::kContent:
    case Mode::kBetweenCalls: {
      const TextBeforeMarker text = FindTextBeforeMarker(*rest, kCallStart, at_end);
      if (mode_ == Mode::kContent) delta->content += rest->substr(0, text.length);
      rest->remove_prefix(text.length);
      if (!text.marker_found) return false;
      Consume(rest, kCallStart.size());  // held from here until a name is sent
      StartCall(CallOptions());
      mode_ = Mode::kCall;
      return true;
    }
    case Mode::kCall: {
      // The region ends at the first </tool_call>, even inside a JSON string (vLLM's regex).
      const TextBeforeMarker region = FindTextBeforeMarker(*rest, kCallEnd, at_end);
      const ToolCallObjectReader::State state = FeedCall(rest, region.length, delta);
      if (state == ToolCallObjectReader::State::kDone) {
        mode_ = Mode::kAfterCall;
      } else if (state == ToolCallObjectReader::State::kReading) {
        if (!region.marker_found) return false;
        GiveUp(delta);  // the region ended inside the object
      }
      return true;
    }
    case Mode::kAfterCall:
      Consume(rest, LeadingJsonSpace(*rest));
      if (rest->starts_with(kCallEnd)) {
        Consume(rest, kCallEnd.size());
        mode_ = Mode::kBetweenCalls;
        return true;
      }
      if (!at_end && kCallEnd.starts_with(*rest)) return false;  // empty, or a part of </tool_call>
      if (rest->empty()) return false;  // the output ended after the JSON: the region is complete
      GiveUp(delta);                    // json.loads: extra data after the object
      return true;
  }
  return false;  // not reached: every mode returns
}

}  // namespace

std::unique_ptr<ToolParser> MakeHermesToolParser() { return std::make_unique<HermesToolParser>(); }

}  // namespace vllm::server
