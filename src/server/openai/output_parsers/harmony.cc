// HarmonyReader, header parsing and rendering, and the message text joiner.
#include "server/openai/output_parsers/harmony.h"

#include "server/openai/output_parsers/text_markers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kConstrain = "<|constrain|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kCall = "<|call|>";
constexpr std::string_view kReturn = "<|return|>";
// How the first message may start when it writes its recipient before its channel.
constexpr std::string_view kRecipientFirst = "to=";
constexpr std::string_view kSpacedRecipientFirst = " to=";

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> words;
  size_t position = 0;
  while (position < text.size()) {
    while (position < text.size() && IsAsciiSpace(text[position])) ++position;
    const size_t begin = position;
    while (position < text.size() && !IsAsciiSpace(text[position])) ++position;
    if (position > begin) words.push_back(text.substr(begin, position - begin));
  }
  return words;
}

std::string_view WithoutRecipientPrefix(std::string_view word) {
  return word.starts_with(kRecipientFirst) ? word.substr(kRecipientFirst.size()) : word;
}

}  // namespace

HarmonyHeader ParseHarmonyHeader(std::string_view text, bool has_role) {
  HarmonyHeader header;
  std::string rest(text);
  const size_t channel_at = rest.find(kChannel);
  if (channel_at != std::string::npos) {
    const size_t value_begin = channel_at + kChannel.size();
    size_t value_end = value_begin;
    while (value_end < rest.size() && !IsAsciiSpace(rest[value_end]) && rest[value_end] != '<') {
      ++value_end;
    }
    header.channel = rest.substr(value_begin, value_end - value_begin);
    rest.erase(channel_at, value_end - channel_at);
  }
  // "to=x<|constrain|>json" is two words.
  std::string spaced;
  for (size_t position = 0; position < rest.size();) {
    if (std::string_view(rest).substr(position).starts_with(kConstrain)) spaced.push_back(' ');
    spaced.push_back(rest[position++]);
  }
  std::vector<std::string_view> words = SplitWords(spaced);
  if (!words.empty() && (has_role ? !words.front().starts_with(kRecipientFirst) &&
                                        !words.front().starts_with(kConstrain)
                                  : words.front() == "assistant")) {
    words.erase(words.begin());
  }
  if (words.empty()) return header;
  const std::string_view last = words.back();
  words.pop_back();
  if (last.starts_with(kRecipientFirst)) {
    header.recipient = WithoutRecipientPrefix(last);
  } else if (words.empty() && !last.starts_with(kConstrain)) {
    header.recipient = last;
  } else {
    header.content_type = last;
    if (!words.empty()) header.recipient = WithoutRecipientPrefix(words.back());
  }
  return header;
}

std::string RenderHarmonyHeader(const HarmonyHeader& header) {
  std::string text = std::string(kStart) + "assistant";
  if (!header.channel.empty()) text += std::string(kChannel) + header.channel;
  if (!header.recipient.empty()) text += " to=" + header.recipient;
  if (!header.content_type.empty()) text += " " + header.content_type;
  return text + std::string(kMessage);
}

void HarmonyReader::Feed(std::string_view text, std::vector<HarmonyEvent>* events) {
  unread_ += text;
  Process(/*at_end=*/false, events);
}

void HarmonyReader::Finish(std::vector<HarmonyEvent>* events) {
  Process(/*at_end=*/true, events);
  if (step_ == Step::kContent) events->push_back({HarmonyEvent::Kind::kMessageEnd, "", {}});
  unread_.clear();  // an unfinished header is dropped
  step_ = Step::kOutside;
}

void HarmonyReader::Process(bool at_end, std::vector<HarmonyEvent>* events) {
  std::string_view rest = unread_;
  auto emit = [events](HarmonyEvent::Kind kind, std::string_view text) {
    if (!text.empty()) events->push_back({kind, std::string(text), {}});
  };
  bool waiting = false;
  while (!waiting) {
    switch (step_) {
      case Step::kOutside: {
        if (at_output_start_) {
          if (rest.starts_with(kRecipientFirst) || rest.starts_with(kSpacedRecipientFirst)) {
            at_output_start_ = false;
            header_has_role_ = false;
            step_ = Step::kHeader;
            break;
          }
          if (!at_end &&
              (kRecipientFirst.starts_with(rest) || kSpacedRecipientFirst.starts_with(rest))) {
            waiting = true;
            break;
          }
          at_output_start_ = false;
        }
        const MarkerMatch match = FindFirstMarker(rest, {kStart, kChannel});
        if (match.position == std::string_view::npos) {
          const size_t length =
              at_end ? rest.size() : rest.size() - PartialMarkerLength(rest, {kStart, kChannel});
          emit(HarmonyEvent::Kind::kText, rest.substr(0, length));
          rest.remove_prefix(length);
          waiting = true;
          break;
        }
        emit(HarmonyEvent::Kind::kText, rest.substr(0, match.position));
        rest.remove_prefix(match.position);
        header_has_role_ = match.marker == kStart;
        if (header_has_role_) rest.remove_prefix(kStart.size());  // <|channel|> stays in the header
        step_ = Step::kHeader;
        break;
      }
      case Step::kHeader: {
        const MarkerMatch match = FindFirstMarker(rest, {kMessage, kStart, kEnd, kCall, kReturn});
        if (match.position == std::string_view::npos) {
          if (rest.size() > kMaxHarmonyHeaderBytes) {  // not a header after all
            emit(HarmonyEvent::Kind::kText, rest);
            rest = {};
            step_ = Step::kOutside;
          }
          waiting = true;
          break;
        }
        if (match.position > kMaxHarmonyHeaderBytes) {
          emit(HarmonyEvent::Kind::kText, rest.substr(0, match.position));
          rest.remove_prefix(match.position);
          step_ = Step::kOutside;
          break;
        }
        if (match.marker == kMessage) {
          events->push_back({HarmonyEvent::Kind::kMessageStart, "",
                             ParseHarmonyHeader(rest.substr(0, match.position), header_has_role_)});
          rest.remove_prefix(match.position + kMessage.size());
          step_ = Step::kContent;
          break;
        }
        // Another marker cut the header: the malformed message is dropped.
        rest.remove_prefix(match.position);
        if (match.marker != kStart) rest.remove_prefix(match.marker.size());
        step_ = Step::kOutside;
        break;
      }
      case Step::kContent: {
        const MarkerMatch match = FindFirstMarker(rest, {kEnd, kCall, kReturn});
        if (match.position == std::string_view::npos) {
          const size_t length =
              at_end ? rest.size()
                     : rest.size() - PartialMarkerLength(rest, {kEnd, kCall, kReturn});
          emit(HarmonyEvent::Kind::kContent, rest.substr(0, length));
          rest.remove_prefix(length);
          waiting = true;
          break;
        }
        emit(HarmonyEvent::Kind::kContent, rest.substr(0, match.position));
        events->push_back({HarmonyEvent::Kind::kMessageEnd, std::string(match.marker), {}});
        rest.remove_prefix(match.position + match.marker.size());
        step_ = Step::kOutside;
        break;
      }
    }
  }
  unread_ = std::string(rest);
}

void HarmonyTextJoiner::Append(std::string_view text, std::string* out) {
  if (text.empty()) return;
  if (!current_written_) {
    if (any_written_) out->push_back('\n');
    current_written_ = any_written_ = true;
  }
  out->append(text);
}

void HarmonyTextJoiner::EndMessage(bool completed, std::string* out) {
  if (completed && !current_written_) {
    if (any_written_) out->push_back('\n');
    any_written_ = true;
  }
  current_written_ = false;
}

}  // namespace vllm::server
