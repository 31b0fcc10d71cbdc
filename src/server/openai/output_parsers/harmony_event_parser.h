// HarmonyEventParser: the streaming half shared by the parsers that read gpt-oss's harmony
// messages (the openai tool and reasoning parsers). Each delta, and the end of the output, goes
// through one HarmonyReader; the parser handles the events it completes one by one.
#pragma once

#include <string_view>
#include <vector>

#include "server/openai/output_parsers/delta_message.h"
#include "server/openai/output_parsers/harmony.h"

namespace vllm::server {

// `Parser`: the interface implemented, ToolParser or ReasoningParser.
template <typename Parser>
class HarmonyEventParser : public Parser {
 public:
  DeltaMessage ParseDelta(std::string_view delta_text) final {
    std::vector<HarmonyEvent> events;
    reader_.Feed(delta_text, &events);
    return HandleAll(events);
  }

  DeltaMessage Finish() final {
    std::vector<HarmonyEvent> events;
    reader_.Finish(&events);
    return HandleAll(events);
  }

 protected:
  // Adds what `event` brings to *delta.
  virtual void Handle(const HarmonyEvent& event, DeltaMessage* delta) = 0;

 private:
  DeltaMessage HandleAll(const std::vector<HarmonyEvent>& events) {
    DeltaMessage delta;
    for (const HarmonyEvent& event : events) Handle(event, &delta);
    return delta;
  }

  HarmonyReader reader_;
};

}  // namespace vllm::server
