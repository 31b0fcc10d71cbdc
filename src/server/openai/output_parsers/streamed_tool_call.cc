// StreamedToolCall and ReadToolCallObject: the delta and whole-output faces of one call object.
#include "server/openai/output_parsers/streamed_tool_call.h"

namespace vllm::server {

size_t StreamedToolCall::Feed(std::string_view text, DeltaMessage* delta) {
  const size_t used = reader_.Feed(text);
  Send(delta);
  return used;
}

void StreamedToolCall::Finish(DeltaMessage* delta) {
  reader_.Finish();
  Send(delta);
}

void StreamedToolCall::Send(DeltaMessage* delta) {
  if (!name_sent_) {
    if (!reader_.name().has_value()) return;  // arguments wait for the name
    AddToolCallName(delta, index_, *reader_.name());
    name_sent_ = true;
  }
  const std::string& arguments = reader_.arguments();
  AddToolCallArguments(delta, index_, std::string_view(arguments).substr(num_sent_argument_bytes_));
  num_sent_argument_bytes_ = arguments.size();
}

std::optional<ParsedToolCall> ReadToolCallObject(std::string_view text,
                                                 const ToolCallObjectReader::Options& options,
                                                 size_t* used) {
  ToolCallObjectReader reader(options);
  *used = reader.Feed(text);
  if (reader.state() != ToolCallObjectReader::State::kDone) return std::nullopt;
  return ParsedToolCall{*reader.name(), reader.arguments()};
}

}  // namespace vllm::server
