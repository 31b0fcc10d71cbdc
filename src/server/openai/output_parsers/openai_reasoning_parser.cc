// The openai reasoning parser (gpt-oss, harmony format). Reasoning is the text of the analysis
// messages joined with "\n", as vLLM's parse_chat_output. Content is the text of the final
// messages and of the commentary messages without recipient (preambles), joined with "\n", with
// every message addressed to functions.* kept intact as harmony text
// (<|start|>assistant<|channel|>commentary to=functions.NAME ...<|message|>ARGS<|call|>) at its
// place, so that the openai tool parser, which reads this content, still finds the calls. Without
// calls the content is thus the plain answer. Messages to other recipients (built-in tools) are
// dropped; text outside messages is content. Reasoning and content are null when empty.
#include <string>

#include "server/openai/output_parsers/harmony.h"
#include "server/openai/output_parsers/harmony_event_parser.h"
#include "server/openai/output_parsers/reasoning_parsers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kFunctionsPrefix = "functions.";
// Where the answer starts: the header of the final-channel message.
constexpr std::string_view kFinalHeader = "<|channel|>final<|message|>";

class OpenAiReasoningParser final : public HarmonyEventParser<ReasoningParser> {
 public:
  ReasoningParseResult Parse(std::string_view output) const override;
  std::string_view reasoning_end() const override { return kFinalHeader; }

 private:
  enum class MessageKind { kIgnored, kReasoning, kContent, kToolCall };

  void Handle(const HarmonyEvent& event, DeltaMessage* delta) override;

  MessageKind kind_ = MessageKind::kIgnored;
  HarmonyTextJoiner reasoning_joiner_;
  HarmonyTextJoiner content_joiner_;
};

ReasoningParseResult OpenAiReasoningParser::Parse(std::string_view output) const {
  OpenAiReasoningParser parser;
  DeltaMessage whole = parser.ParseDelta(output);
  const DeltaMessage last = parser.Finish();
  whole.reasoning_content += last.reasoning_content;
  whole.content += last.content;
  ReasoningParseResult result;
  if (!whole.reasoning_content.empty()) result.reasoning_content = whole.reasoning_content;
  if (!whole.content.empty()) result.content = whole.content;
  return result;
}

void OpenAiReasoningParser::Handle(const HarmonyEvent& event, DeltaMessage* delta) {
  switch (event.kind) {
    case HarmonyEvent::Kind::kText:
      delta->content += event.text;
      break;
    case HarmonyEvent::Kind::kMessageStart: {
      const HarmonyHeader& header = event.header;
      if (header.recipient.starts_with(kFunctionsPrefix)) {
        kind_ = MessageKind::kToolCall;
        delta->content += RenderHarmonyHeader(header);
      } else if (header.channel == "analysis") {
        kind_ = MessageKind::kReasoning;
      } else if (header.channel == "final" ||
                 (header.channel == "commentary" && header.recipient.empty())) {
        kind_ = MessageKind::kContent;
      } else {
        kind_ = MessageKind::kIgnored;
      }
      break;
    }
    case HarmonyEvent::Kind::kContent:
      if (kind_ == MessageKind::kReasoning) {
        reasoning_joiner_.Append(event.text, &delta->reasoning_content);
      } else if (kind_ == MessageKind::kContent) {
        content_joiner_.Append(event.text, &delta->content);
      } else if (kind_ == MessageKind::kToolCall) {
        delta->content += event.text;
      }
      break;
    case HarmonyEvent::Kind::kMessageEnd: {
      const bool completed = !event.text.empty();
      if (kind_ == MessageKind::kReasoning) {
        reasoning_joiner_.EndMessage(completed, &delta->reasoning_content);
      } else if (kind_ == MessageKind::kContent) {
        content_joiner_.EndMessage(completed, &delta->content);
      } else if (kind_ == MessageKind::kToolCall) {
        delta->content += event.text;
      }
      kind_ = MessageKind::kIgnored;
      break;
    }
  }
}

}  // namespace

std::unique_ptr<ReasoningParser> MakeOpenAiReasoningParser() {
  return std::make_unique<OpenAiReasoningParser>();
}

}  // namespace vllm::server
