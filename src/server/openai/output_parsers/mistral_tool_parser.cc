// The mistral tool parser, for both forms Mistral models write after the [TOOL_CALLS] token:
//
//   tokenizers before v11:  [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]
//   tokenizers v11 and on:  [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]...
//
// The form is told from the text (vLLM asks the tokenizer): a "[" or "{" first after the marker
// is the JSON form. Content is the text before the first marker (null when empty).
//
// JSON form, as vLLM: the first JSON value after the marker is an array of call objects (a lone
// object is taken as one call, where vLLM fails); "arguments" default to {} and are re-serialized
// as json.dumps(..., ensure_ascii=False) writes them; text after the value is dropped. A
// malformed value makes the whole output content (vLLM returns the text after the marker).
//
// Name form, as vLLM: each marker's text up to its first "{" is the name (with "[ARGS]" removed)
// and the rest, up to the next marker, the arguments exactly as written; a segment without "{"
// is skipped. With no call at all the whole output is content.
//
// Streaming holds the text after the marker until a name is sent, so output without a complete
// first name still ends up as content. Differences from Parse, on malformed or cut-short JSON
// form only: a call found malformed after a name was sent ends the streamed calls; an array cut
// short keeps the calls and the arguments text read so far.
#include <optional>
#include <string>

#include "server/openai/output_parsers/held_call_stream.h"
#include "server/openai/output_parsers/streamed_tool_call.h"
#include "server/openai/output_parsers/text_markers.h"
#include "server/openai/output_parsers/tool_parsers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kMarker = "[TOOL_CALLS]";
constexpr std::string_view kArgsMarker = "[ARGS]";

ToolCallObjectReader::Options CallOptions() {
  return {.argument_keys = {"arguments"}, .arguments_required = false};
}

std::string NameWithoutArgsMarker(std::string_view text) {
  std::string name;
  size_t position = 0;
  for (size_t found; (found = text.find(kArgsMarker, position)) != std::string_view::npos;
       position = found + kArgsMarker.size()) {
    name.append(text.substr(position, found - position));
  }
  name.append(text.substr(position));
  return name;
}

// The JSON form after the marker: an array of call objects or one object; nullopt if malformed.
std::optional<std::vector<ParsedToolCall>> ParseJsonForm(std::string_view text) {
  std::vector<ParsedToolCall> calls;
  size_t used = 0;
  if (text.starts_with("{")) {
    std::optional<ParsedToolCall> call = ReadToolCallObject(text, CallOptions(), &used);
    if (!call.has_value()) return std::nullopt;
    calls.push_back(std::move(*call));
    return calls;
  }
  size_t position = 1 + LeadingJsonSpace(text.substr(1));  // after "["
  if (text.substr(position).starts_with("]")) return calls;
  while (true) {
    std::optional<ParsedToolCall> call =
        ReadToolCallObject(text.substr(position), CallOptions(), &used);
    if (!call.has_value()) return std::nullopt;
    calls.push_back(std::move(*call));
    position += used;
    position += LeadingJsonSpace(text.substr(position));
    if (text.substr(position).starts_with("]")) return calls;
    if (!text.substr(position).starts_with(",")) return std::nullopt;
    ++position;
  }
}

class MistralToolParser final : public HeldCallToolParser {
 public:
  ToolParseResult Parse(std::string_view output) const override;

 private:
  enum class Mode {
    kContent,         // before the first marker
    kDetect,          // after the first marker, before its first non-space byte
    kName,            // name form: a name up to "{"
    kArguments,       // name form: arguments up to the next marker
    kArrayStart,      // JSON form: after "["
    kArrayItem,       // JSON form: inside a call object
    kArrayAfterItem,  // JSON form: after a call object, "," or "]" must follow
    kArrayNextItem,   // JSON form: after ",", a call object must follow
    kObject,          // JSON form: a lone call object
  };

  bool Step(std::string_view* rest, bool at_end, DeltaMessage* delta) override;

  Mode mode_ = Mode::kContent;
  std::string name_;  // name form: the name so far
};

ToolParseResult MistralToolParser::Parse(std::string_view output) const {
  const size_t marker = output.find(kMarker);
  if (marker == std::string_view::npos) return {{}, std::string(output)};
  ToolParseResult result;
  const std::string_view after = output.substr(marker + kMarker.size());
  const std::string_view trimmed = after.substr(LeadingJsonSpace(after));
  if (trimmed.starts_with("[") || trimmed.starts_with("{")) {
    std::optional<std::vector<ParsedToolCall>> calls = ParseJsonForm(trimmed);
    if (!calls.has_value()) return {{}, std::string(output)};
    result.tool_calls = std::move(*calls);
  } else {
    size_t position = 0;
    while (position != std::string_view::npos) {
      const size_t next = after.find(kMarker, position);
      const std::string_view segment =
          after.substr(position, next == std::string_view::npos ? next : next - position);
      const size_t brace = segment.find('{');
      if (brace != std::string_view::npos) {
        result.tool_calls.push_back(ParsedToolCall{NameWithoutArgsMarker(segment.substr(0, brace)),
                                                   std::string(segment.substr(brace))});
      }
      position = next == std::string_view::npos ? next : next + kMarker.size();
    }
  }
  if (result.tool_calls.empty()) return {{}, std::string(output)};
  if (marker > 0) result.content = std::string(output.substr(0, marker));
  return result;
}

bool MistralToolParser::Step(std::string_view* rest, bool at_end, DeltaMessage* delta) {
  switch (mode_) {
    case Mode::kContent: {
      const TextBeforeMarker text = FindTextBeforeMarker(*rest, kMarker, at_end);
      delta->content += rest->substr(0, text.length);
      rest->remove_prefix(text.length);
      if (!text.marker_found) return false;
      Consume(rest, kMarker.size());  // held from here until a name is sent
      mode_ = Mode::kDetect;
      return true;
    }
    case Mode::kDetect: {
      const size_t spaces = LeadingJsonSpace(*rest);
      name_.append(rest->substr(0, spaces));  // the name form keeps them, as vLLM
      Consume(rest, spaces);
      if (rest->empty()) return false;
      if (rest->front() == '[') {
        Consume(rest, 1);
        mode_ = Mode::kArrayStart;
      } else if (rest->front() == '{') {
        StartCall(CallOptions());
        mode_ = Mode::kObject;
      } else {
        mode_ = Mode::kName;
      }
      return true;
    }
    case Mode::kName: {
      const size_t brace = rest->find('{');
      const size_t marker = rest->find(kMarker);
      if (marker < brace) {  // a segment without arguments: skipped
        name_.clear();
        Consume(rest, marker + kMarker.size());
        return true;
      }
      if (brace == std::string_view::npos) {
        const size_t length = FindTextBeforeMarker(*rest, kMarker, at_end).length;
        name_.append(rest->substr(0, length));
        Consume(rest, length);
        return false;
      }
      name_.append(rest->substr(0, brace));
      Consume(rest, brace);
      SendCallName(NameWithoutArgsMarker(name_), delta);
      name_.clear();
      mode_ = Mode::kArguments;
      return true;
    }
    case Mode::kArguments: {
      const TextBeforeMarker arguments = FindTextBeforeMarker(*rest, kMarker, at_end);
      AddToolCallArguments(delta, num_calls() - 1, rest->substr(0, arguments.length));
      rest->remove_prefix(arguments.length);
      if (!arguments.marker_found) return false;
      rest->remove_prefix(kMarker.size());
      mode_ = Mode::kName;
      return true;
    }
    case Mode::kArrayStart:
    case Mode::kArrayNextItem:
      Consume(rest, LeadingJsonSpace(*rest));
      if (rest->empty()) return false;
      if (rest->front() == '{') {
        StartCall(CallOptions());
        mode_ = Mode::kArrayItem;
      } else if (rest->front() == ']' && mode_ == Mode::kArrayStart) {
        Consume(rest, 1);
        GiveUp(delta);  // an empty list: no call
      } else {
        GiveUp(delta);
      }
      return true;
    case Mode::kArrayItem:
    case Mode::kObject: {
      const ToolCallObjectReader::State state = FeedCall(rest, rest->size(), delta);
      if (state == ToolCallObjectReader::State::kDone && mode_ == Mode::kObject) {
        DropRest();  // text after the JSON value
      } else if (state == ToolCallObjectReader::State::kDone) {
        mode_ = Mode::kArrayAfterItem;
      }
      return state != ToolCallObjectReader::State::kReading;
    }
    case Mode::kArrayAfterItem:
      Consume(rest, LeadingJsonSpace(*rest));
      if (rest->empty()) return false;
      if (rest->front() == ',') {
        Consume(rest, 1);
        mode_ = Mode::kArrayNextItem;
      } else if (rest->front() == ']') {
        DropRest();  // text after the JSON value
      } else {
        GiveUp(delta);
      }
      return true;
  }
  return false;  // not reached: every mode returns
}

}  // namespace

std::unique_ptr<ToolParser> MakeMistralToolParser() {
  return std::make_unique<MistralToolParser>();
}

}  // namespace vllm::server
