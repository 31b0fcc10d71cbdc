// HeldCallToolParser: the streaming half shared by the tool parsers whose calls are JSON objects
// (or names) written in plain text: hermes, llama3_json and mistral.
//
// Each delta is appended to the text not handled yet, which the format's Step reads piece by
// piece until it needs more. Text that may turn out to be calls is consumed into a held buffer
// until a call's name is sent: if the output proves not to be calls before that (GiveUp), the
// held text and all that follows is content, as Parse returns it; once a name was sent the calls
// stand, and giving up only drops the rest of the output. At the end of the output a call still
// being read gets the arguments text read so far, and text held without a name sent is content.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "server/openai/output_parsers/delta_message.h"
#include "server/openai/output_parsers/streamed_tool_call.h"
#include "server/openai/output_parsers/tool_call_object_reader.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {

class HeldCallToolParser : public ToolParser {
 public:
  DeltaMessage ParseDelta(std::string_view delta_text) final;
  DeltaMessage Finish() final;

 protected:
  // The format's reading: handles the start of *rest (removing what it handled) and returns true
  // to be called again, false to wait for the next delta. `at_end`: no text follows. Not called
  // again once GiveUp or DropRest was called.
  virtual bool Step(std::string_view* rest, bool at_end, DeltaMessage* delta) = 0;

  // Removes the first `length` bytes of *rest, holding them while no name has been sent.
  void Consume(std::string_view* rest, size_t length);
  // Starts reading the next call object; FeedCall reads it.
  void StartCall(ToolCallObjectReader::Options options);
  // Feeds the first `length` bytes of *rest to the current call and consumes what it used.
  // Gives up where the call is malformed. Returns the call's state.
  ToolCallObjectReader::State FeedCall(std::string_view* rest, size_t length, DeltaMessage* delta);
  // Sends the name of the next call, where the format reads names itself (not a call object).
  void SendCallName(std::string name, DeltaMessage* delta);
  // The output is not (or no longer) calls: with no name sent, the held text and the rest of
  // the output are content; after a name was sent, the rest of the output is dropped.
  void GiveUp(DeltaMessage* delta);
  // The calls ended: the rest of the output is dropped.
  void DropRest() { rest_ = Rest::kDropped; }

  int num_calls() const { return num_calls_; }

 private:
  // What becomes of the text after the point reached.
  enum class Rest {
    kRead,     // the format's Step reads it
    kContent,  // it is content
    kDropped,  // it is dropped
  };

  void Process(bool at_end, DeltaMessage* delta);
  void MarkNameSent();

  Rest rest_ = Rest::kRead;
  std::string unread_;  // received, not handled yet
  std::string held_;    // consumed while no name has been sent
  bool name_sent_ = false;
  int num_calls_ = 0;
  std::optional<StreamedToolCall> call_;
};

}  // namespace vllm::server
