// A tool call read with ToolCallObjectReader and streamed as deltas: its name once the name's
// string has ended, then the normalized arguments text not sent yet. Also the whole-output read
// of one call object.
#pragma once

#include <optional>
#include <string_view>

#include "server/openai/output_parsers/delta_message.h"
#include "server/openai/output_parsers/tool_call_object_reader.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {

class StreamedToolCall {
 public:
  StreamedToolCall(int index, ToolCallObjectReader::Options options)
      : index_(index), reader_(std::move(options)) {}

  // Reads `text` (see ToolCallObjectReader::Feed) and adds what became known to *delta.
  size_t Feed(std::string_view text, DeltaMessage* delta);
  // The output ended inside the call: sends the arguments read so far (if the name was sent).
  void Finish(DeltaMessage* delta);

  ToolCallObjectReader::State state() const { return reader_.state(); }
  bool name_sent() const { return name_sent_; }

 private:
  void Send(DeltaMessage* delta);

  int index_;
  ToolCallObjectReader reader_;
  bool name_sent_ = false;
  size_t num_sent_argument_bytes_ = 0;
};

// Reads one whole call object at the start of `text` (whitespace before it skipped); nullopt
// where it is malformed or cut short. *used: the bytes it took.
std::optional<ParsedToolCall> ReadToolCallObject(std::string_view text,
                                                 const ToolCallObjectReader::Options& options,
                                                 size_t* used);

}  // namespace vllm::server
