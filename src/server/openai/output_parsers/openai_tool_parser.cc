// The openai tool parser (gpt-oss, harmony format): every message addressed to functions.NAME
// is a call of NAME. Its arguments are, as vLLM writes them, json.dumps(json.loads(text)) with
// ensure_ascii on when the content type is empty or mentions json (the raw text where that JSON
// is invalid, or for other content types). Content is the text of the final-channel messages and
// of the commentary messages without recipient (preambles), joined with "\n" (vLLM keeps only the
// last one), plus any text outside messages: this parser also reads the content the openai
// reasoning parser leaves, plain text with the tool-call messages intact. Analysis messages and
// messages to other recipients are dropped. A call message cut short by the end of the output is
// still a call (vLLM drops it; its name has been streamed by then).
//
// Streaming sends a call's name once its header has ended and its normalized arguments as they
// arrive. Where a call's JSON turns out invalid, the streamed arguments stop at the last valid
// byte while Parse returns the raw text.
#include <optional>
#include <string>
#include <vector>

#include "server/openai/output_parsers/harmony.h"
#include "server/openai/output_parsers/harmony_event_parser.h"
#include "server/openai/output_parsers/json_normalizer.h"
#include "server/openai/output_parsers/text_markers.h"
#include "server/openai/output_parsers/tool_parsers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kFunctionsPrefix = "functions.";

class OpenAiToolParser final : public HarmonyEventParser<ToolParser> {
 public:
  ToolParseResult Parse(std::string_view output) const override;

 private:
  enum class MessageKind { kIgnored, kContent, kCall };
  struct Call {
    std::string name;
    std::string raw_arguments;
    std::string normalized_arguments;
    bool json = false;  // arguments are JSON (by the content type)
    bool valid_json = true;
  };

  void Handle(const HarmonyEvent& event, DeltaMessage* delta) override;
  void StartMessage(const HarmonyHeader& header, DeltaMessage* delta);
  void AddCallText(std::string_view text, DeltaMessage* delta);
  void EndCall(DeltaMessage* delta);

  MessageKind kind_ = MessageKind::kIgnored;
  HarmonyTextJoiner content_joiner_;
  std::vector<Call> calls_;
  JsonNormalizer arguments_json_;
};

ToolParseResult OpenAiToolParser::Parse(std::string_view output) const {
  OpenAiToolParser parser;
  std::string content = parser.ParseDelta(output).content;
  content += parser.Finish().content;
  ToolParseResult result;
  for (const Call& call : parser.calls_) {
    result.tool_calls.push_back(
        {call.name, call.json && call.valid_json ? call.normalized_arguments : call.raw_arguments});
  }
  if (!content.empty()) result.content = std::move(content);
  return result;
}

void OpenAiToolParser::Handle(const HarmonyEvent& event, DeltaMessage* delta) {
  switch (event.kind) {
    case HarmonyEvent::Kind::kText:
      delta->content += event.text;
      break;
    case HarmonyEvent::Kind::kMessageStart:
      StartMessage(event.header, delta);
      break;
    case HarmonyEvent::Kind::kContent:
      if (kind_ == MessageKind::kContent) content_joiner_.Append(event.text, &delta->content);
      if (kind_ == MessageKind::kCall) AddCallText(event.text, delta);
      break;
    case HarmonyEvent::Kind::kMessageEnd:
      if (kind_ == MessageKind::kContent) {
        content_joiner_.EndMessage(/*completed=*/!event.text.empty(), &delta->content);
      }
      if (kind_ == MessageKind::kCall) EndCall(delta);
      kind_ = MessageKind::kIgnored;
      break;
  }
}

void OpenAiToolParser::StartMessage(const HarmonyHeader& header, DeltaMessage* delta) {
  if (header.recipient.starts_with(kFunctionsPrefix)) {
    kind_ = MessageKind::kCall;
    Call& call = calls_.emplace_back();
    call.name = header.recipient.substr(kFunctionsPrefix.size());
    call.json =
        header.content_type.empty() || header.content_type.find("json") != std::string::npos;
    arguments_json_ = JsonNormalizer({.ensure_ascii = true});  // json.dumps's default
    AddToolCallName(delta, static_cast<int>(calls_.size()) - 1, call.name);
  } else if (header.channel == "final" ||
             (header.channel == "commentary" && header.recipient.empty())) {
    kind_ = MessageKind::kContent;
  } else {
    kind_ = MessageKind::kIgnored;
  }
}

void OpenAiToolParser::AddCallText(std::string_view text, DeltaMessage* delta) {
  Call& call = calls_.back();
  const int index = static_cast<int>(calls_.size()) - 1;
  call.raw_arguments += text;
  if (!call.json) {
    AddToolCallArguments(delta, index, text);
    return;
  }
  std::string normalized;
  const size_t used = arguments_json_.Feed(text, &normalized);
  if (arguments_json_.state() == JsonNormalizer::State::kFailed ||
      LeadingJsonSpace(text.substr(used)) != text.size() - used) {
    call.valid_json = false;  // json.loads fails: Parse keeps the raw text
  }
  call.normalized_arguments += normalized;
  AddToolCallArguments(delta, index, normalized);
}

void OpenAiToolParser::EndCall(DeltaMessage* delta) {
  Call& call = calls_.back();
  if (!call.json) return;
  std::string normalized;
  arguments_json_.Finish(&normalized);
  if (arguments_json_.state() != JsonNormalizer::State::kDone) call.valid_json = false;
  call.normalized_arguments += normalized;
  AddToolCallArguments(delta, static_cast<int>(calls_.size()) - 1, normalized);
}

}  // namespace

std::unique_ptr<ToolParser> MakeOpenAiToolParser() { return std::make_unique<OpenAiToolParser>(); }

}  // namespace vllm::server
