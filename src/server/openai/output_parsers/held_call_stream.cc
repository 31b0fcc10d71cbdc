// HeldCallToolParser: deltas, held text and the end of the output for the plain-text tool parsers.
#include "server/openai/output_parsers/held_call_stream.h"

#include <utility>

namespace vllm::server {

DeltaMessage HeldCallToolParser::ParseDelta(std::string_view delta_text) {
  DeltaMessage delta;
  unread_ += delta_text;
  Process(/*at_end=*/false, &delta);
  return delta;
}

DeltaMessage HeldCallToolParser::Finish() {
  DeltaMessage delta;
  Process(/*at_end=*/true, &delta);
  if (rest_ == Rest::kRead) {
    if (call_.has_value() && call_->state() == ToolCallObjectReader::State::kReading) {
      call_->Finish(&delta);
    }
    if (!name_sent_) delta.content += held_;  // no call was found: the whole output is content
  }
  rest_ = Rest::kDropped;
  return delta;
}

void HeldCallToolParser::Process(bool at_end, DeltaMessage* delta) {
  std::string_view rest = unread_;
  while (rest_ == Rest::kRead) {
    if (!Step(&rest, at_end, delta)) break;  // waits for the next delta
  }
  if (rest_ == Rest::kContent) delta->content += rest;
  if (rest_ != Rest::kRead) rest = {};
  unread_ = std::string(rest);
}

void HeldCallToolParser::Consume(std::string_view* rest, size_t length) {
  if (!name_sent_) held_.append(rest->substr(0, length));
  rest->remove_prefix(length);
}

void HeldCallToolParser::StartCall(ToolCallObjectReader::Options options) {
  call_.emplace(num_calls_++, std::move(options));
}

ToolCallObjectReader::State HeldCallToolParser::FeedCall(std::string_view* rest, size_t length,
                                                         DeltaMessage* delta) {
  Consume(rest, call_->Feed(rest->substr(0, length), delta));
  if (call_->name_sent()) MarkNameSent();
  if (call_->state() == ToolCallObjectReader::State::kFailed) GiveUp(delta);
  return call_->state();
}

void HeldCallToolParser::SendCallName(std::string name, DeltaMessage* delta) {
  AddToolCallName(delta, num_calls_++, std::move(name));
  MarkNameSent();
}

void HeldCallToolParser::GiveUp(DeltaMessage* delta) {
  if (name_sent_) {
    rest_ = Rest::kDropped;
    return;
  }
  delta->content += held_;
  held_.clear();
  rest_ = Rest::kContent;
}

void HeldCallToolParser::MarkNameSent() {
  name_sent_ = true;
  held_.clear();
}

}  // namespace vllm::server
