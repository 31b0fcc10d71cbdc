// gpt-oss's harmony message format, read from decoded text (special tokens kept):
//
//   <|channel|>analysis<|message|>THINKING<|end|>
//   <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>
//   {"city": "Paris"}<|call|>
//
// A message is <|start|>ROLE, a header (channel, recipient "to=...", content type) up to
// <|message|>, then its text up to <|end|>, <|call|> or <|return|>. The output continues a prompt
// that ends in <|start|>assistant, so its first message starts right at its header (with
// <|channel|>, or with " to=RECIPIENT" written before the channel). The final stop token may be
// missing from the text: the output's end then ends the message.
//
// Markers are read from text, so a marker written as plain text (a "<|call|>" inside a JSON
// string) counts as the marker, where openai-harmony, reading token ids, would not count it.
// The reader is lenient where openai-harmony is strict: text outside messages is reported as
// text (the reasoning parser's content, which the openai tool parser reads, is plain text with
// intact tool-call messages), a header cut by another marker is dropped, and one longer than
// kMaxHarmonyHeaderBytes is reported as text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vllm::server {

inline constexpr size_t kMaxHarmonyHeaderBytes = 1024;

struct HarmonyHeader {
  std::string channel;       // "analysis", "commentary", "final"; empty if none
  std::string recipient;     // "functions.get_weather"; empty if none
  std::string content_type;  // "<|constrain|>json", "json"; empty if none
};

// Parses a header as openai-harmony does: the channel follows <|channel|>; of the other
// space-separated words, a leading role (when `has_role`) is dropped, the last is the content
// type unless it is the recipient ("to=X", or a lone word), and the one before it the recipient.
HarmonyHeader ParseHarmonyHeader(std::string_view text, bool has_role);

// "<|start|>assistant<|channel|>CHANNEL to=RECIPIENT CONTENT_TYPE<|message|>", which
// ParseHarmonyHeader reads back (for headers with a recipient).
std::string RenderHarmonyHeader(const HarmonyHeader& header);

struct HarmonyEvent {
  enum class Kind {
    kText,          // text outside any message
    kMessageStart,  // a header ended: `header`
    kContent,       // text of the current message
    kMessageEnd,    // `text`: <|end|>, <|call|>, <|return|>, or empty where the output ended
  };
  Kind kind;
  std::string text;
  HarmonyHeader header;
};

class HarmonyReader {
 public:
  // Appends the events `text` completes; a tail that may still be a marker is held back.
  void Feed(std::string_view text, std::vector<HarmonyEvent>* events);
  // The output ended: flushes what was held back and ends an open message.
  void Finish(std::vector<HarmonyEvent>* events);

 private:
  enum class Step { kOutside, kHeader, kContent };
  void Process(bool at_end, std::vector<HarmonyEvent>* events);

  Step step_ = Step::kOutside;
  bool at_output_start_ = true;
  bool header_has_role_ = false;
  std::string unread_;
};

// Joins the texts of a run of messages with "\n" while they stream, as vLLM's "\n".join() of the
// completed messages' texts plus the unfinished message's when it has text.
class HarmonyTextJoiner {
 public:
  void Append(std::string_view text, std::string* out);
  // `completed`: ended by a marker (counted even when empty), not by the end of the output.
  void EndMessage(bool completed, std::string* out);

 private:
  bool any_written_ = false;
  bool current_written_ = false;
};

}  // namespace vllm::server
