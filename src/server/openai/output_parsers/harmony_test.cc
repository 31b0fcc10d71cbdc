// Tests of the harmony reader: headers, events, held-back markers, and the text joiner.
#include "server/openai/output_parsers/harmony.h"

#include <gtest/gtest.h>

#include "server/openai/output_parsers/stream_test_util.h"

namespace vllm::server {
namespace {

// The events of `text` fed in `pieces`, merged (adjacent text pieces joined) and written as
// "T(text) S(channel|recipient|type) C(text) E(end)".
std::string EventsOfPieces(const std::vector<std::string>& pieces) {
  HarmonyReader reader;
  std::vector<HarmonyEvent> events;
  for (const std::string& piece : pieces) reader.Feed(piece, &events);
  reader.Finish(&events);
  std::string out;
  char last_kind = 0;
  for (const HarmonyEvent& event : events) {
    const char kind = "TSCE"[static_cast<int>(event.kind)];
    if (kind == last_kind && (kind == 'T' || kind == 'C')) {
      out.insert(out.size() - 1, event.text);  // before the closing parenthesis
      continue;
    }
    last_kind = kind;
    if (event.kind == HarmonyEvent::Kind::kMessageStart) {
      out += "S(" + event.header.channel + "|" + event.header.recipient + "|" +
             event.header.content_type + ")";
    } else {
      out += std::string(1, kind) + "(" + event.text + ")";
    }
  }
  return out;
}

std::string Events(std::string_view text) { return EventsOfPieces({std::string(text)}); }

TEST(HarmonyTest, ParsesHeaders) {
  auto header =
      ParseHarmonyHeader("<|channel|>commentary to=functions.get_weather <|constrain|>json",
                         /*has_role=*/false);
  EXPECT_EQ(header.channel, "commentary");
  EXPECT_EQ(header.recipient, "functions.get_weather");
  EXPECT_EQ(header.content_type, "<|constrain|>json");
  header = ParseHarmonyHeader("assistant to=functions.f<|channel|>commentary json", true);
  EXPECT_EQ(header.channel, "commentary");
  EXPECT_EQ(header.recipient, "functions.f");
  EXPECT_EQ(header.content_type, "json");
  header = ParseHarmonyHeader("assistant<|channel|>final", true);
  EXPECT_EQ(header.channel, "final");
  EXPECT_EQ(header.recipient, "");
  header = ParseHarmonyHeader(" to=browser.search<|channel|>analysis", false);
  EXPECT_EQ(header.recipient, "browser.search");
  EXPECT_EQ(header.channel, "analysis");
  header =
      ParseHarmonyHeader("assistant<|channel|>commentary to=functions.x<|constrain|>json", true);
  EXPECT_EQ(header.recipient, "functions.x");
  EXPECT_EQ(header.content_type, "<|constrain|>json");
}

TEST(HarmonyTest, RenderedHeadersReadBack) {
  const HarmonyHeader header{"commentary", "functions.get_weather", "<|constrain|>json"};
  const std::string text = RenderHarmonyHeader(header);
  EXPECT_EQ(text,
            "<|start|>assistant<|channel|>commentary to=functions.get_weather "
            "<|constrain|>json<|message|>");
  EXPECT_EQ(Events(text + "{}<|call|>"),
            "S(commentary|functions.get_weather|<|constrain|>json)C({})E(<|call|>)");
}

TEST(HarmonyTest, ReadsMessages) {
  EXPECT_EQ(Events("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final"
                   "<|message|>Answer.<|return|>"),
            "S(analysis||)C(Think.)E(<|end|>)S(final||)C(Answer.)E(<|return|>)");
  // The last stop token may be missing: the end of the output ends the message.
  EXPECT_EQ(Events("<|channel|>final<|message|>Answer."), "S(final||)C(Answer.)E()");
  // The first message may name its recipient before the channel.
  EXPECT_EQ(Events(" to=functions.f<|channel|>commentary json<|message|>{}"),
            "S(commentary|functions.f|json)C({})E()");
}

TEST(HarmonyTest, TextOutsideMessagesIsText) {
  EXPECT_EQ(Events("Hello <|start|>assistant<|channel|>final<|message|>x<|end|>bye"),
            "T(Hello )S(final||)C(x)E(<|end|>)T(bye)");
  EXPECT_EQ(Events("to be or not"), "T(to be or not)");
  EXPECT_EQ(Events("<|chan"), "T(<|chan)");
}

TEST(HarmonyTest, DropsBrokenHeaders) {
  EXPECT_EQ(Events("<|channel|>final<|end|>after"), "T(after)");
  EXPECT_EQ(Events("<|channel|>final<|start|>assistant<|channel|>final<|message|>x"),
            "S(final||)C(x)E()");
  EXPECT_EQ(Events("<|channel|>analysis"), "");  // cut inside the header
  const std::string long_header = "<|channel|>" + std::string(kMaxHarmonyHeaderBytes + 10, 'a');
  EXPECT_EQ(Events(long_header), "T(" + long_header + ")");
}

TEST(HarmonyTest, SplitAnywhereGivesTheSameEvents) {
  for (const char* text :
       {"<|channel|>analysis<|message|>Think <|en.<|end|><|start|>assistant<|channel|>commentary "
        "to=functions.get_weather <|constrain|>json<|message|>{\"a\": 1}<|call|>",
        " to=functions.f<|channel|>commentary json<|message|>{}", "t", "to",
        "Plain <|start|>assistant<|channel|>final<|message|>x<|return|> <|star"}) {
    const std::string whole = Events(text);
    for (const std::vector<std::string>& pieces : testing::Splits(text)) {
      EXPECT_EQ(EventsOfPieces(pieces), whole) << text;
    }
  }
}

TEST(HarmonyTest, JoinerMatchesPythonJoin) {
  // "\n".join(["a", "", "b"]) with a last unfinished empty message left out.
  HarmonyTextJoiner joiner;
  std::string out;
  joiner.Append("a", &out);
  joiner.EndMessage(true, &out);
  joiner.EndMessage(true, &out);
  joiner.Append("b", &out);
  joiner.EndMessage(true, &out);
  joiner.EndMessage(false, &out);
  EXPECT_EQ(out, "a\n\nb");
}

}  // namespace
}  // namespace vllm::server
