// The <think> reasoning parser, behind "deepseek_r1" and "qwen3", as vLLM's current DeepSeek R1
// and Qwen3 parsers:
//
//   [<think>]REASONING</think>ANSWER
//
// A <think> at the start of the output (after whitespace) is dropped; the prompt usually ends
// with it already. Reasoning is the text up to the first </think> (possibly empty), content the
// text after it (null when empty); with no </think> the whole output is reasoning (thinking was
// cut short). With thinking disabled (qwen3's enable_thinking=false) the whole output is content.
//
// Two differences from vLLM: vLLM drops everything before the first <think> found anywhere in
// the output, even in the answer after </think> (only a leading one is dropped here, so streaming
// needs no look-back), and Qwen3's parser also ends the reasoning at a <tool_call> followed by
// <function= (Qwen3-Coder's XML calls, which no parser here reads).
#include <string>

#include "server/openai/output_parsers/reasoning_parsers.h"
#include "server/openai/output_parsers/text_markers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kThinkStart = "<think>";
constexpr std::string_view kThinkEnd = "</think>";

class ThinkReasoningParser final : public ReasoningParser {
 public:
  explicit ThinkReasoningParser(bool thinking_enabled)
      : thinking_enabled_(thinking_enabled),
        mode_(thinking_enabled ? Mode::kStart : Mode::kAnswer) {}

  ReasoningParseResult Parse(std::string_view output) const override;
  DeltaMessage ParseDelta(std::string_view delta_text) override;
  DeltaMessage Finish() override;
  std::string_view reasoning_end() const override {
    return thinking_enabled_ ? kThinkEnd : std::string_view();
  }

 private:
  enum class Mode { kStart, kReasoning, kAnswer };
  void Process(bool at_end, DeltaMessage* delta);

  bool thinking_enabled_;
  Mode mode_;
  std::string unread_;
  std::string leading_spaces_;  // whitespace before a possible leading <think>
};

ReasoningParseResult ThinkReasoningParser::Parse(std::string_view output) const {
  if (!thinking_enabled_) return {std::nullopt, std::string(output)};
  std::string_view text = output;
  const size_t spaces = LeadingJsonSpace(text);
  if (text.substr(spaces).starts_with(kThinkStart)) text.remove_prefix(spaces + kThinkStart.size());
  const size_t end = text.find(kThinkEnd);
  if (end == std::string_view::npos) return {std::string(text), std::nullopt};
  const std::string_view answer = text.substr(end + kThinkEnd.size());
  return {std::string(text.substr(0, end)),
          answer.empty() ? std::nullopt : std::optional<std::string>(answer)};
}

DeltaMessage ThinkReasoningParser::ParseDelta(std::string_view delta_text) {
  DeltaMessage delta;
  unread_ += delta_text;
  Process(/*at_end=*/false, &delta);
  return delta;
}

DeltaMessage ThinkReasoningParser::Finish() {
  DeltaMessage delta;
  Process(/*at_end=*/true, &delta);
  return delta;
}

void ThinkReasoningParser::Process(bool at_end, DeltaMessage* delta) {
  std::string_view rest = unread_;
  bool waiting = false;
  while (!waiting) {
    switch (mode_) {
      case Mode::kStart: {
        const size_t spaces = LeadingJsonSpace(rest);
        leading_spaces_.append(rest.substr(0, spaces));
        rest.remove_prefix(spaces);
        if (rest.starts_with(kThinkStart)) {
          rest.remove_prefix(kThinkStart.size());
          leading_spaces_.clear();  // dropped with the tag
          mode_ = Mode::kReasoning;
        } else if (!at_end && kThinkStart.starts_with(rest)) {
          waiting = true;  // empty, or a part of <think>
        } else {
          delta->reasoning_content += leading_spaces_;
          leading_spaces_.clear();
          mode_ = Mode::kReasoning;
        }
        break;
      }
      case Mode::kReasoning: {
        const TextBeforeMarker reasoning = FindTextBeforeMarker(rest, kThinkEnd, at_end);
        delta->reasoning_content += rest.substr(0, reasoning.length);
        rest.remove_prefix(reasoning.length);
        if (!reasoning.marker_found) {
          waiting = true;
        } else {
          rest.remove_prefix(kThinkEnd.size());
          mode_ = Mode::kAnswer;
        }
        break;
      }
      case Mode::kAnswer:
        delta->content += rest;
        rest = {};
        waiting = true;
        break;
    }
  }
  unread_ = std::string(rest);
}

}  // namespace

std::unique_ptr<ReasoningParser> MakeThinkReasoningParser(bool thinking_enabled) {
  return std::make_unique<ThinkReasoningParser>(thinking_enabled);
}

}  // namespace vllm::server
