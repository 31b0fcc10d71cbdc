// Tests of JsonNormalizer: Python json.dumps(json.loads(x)) output, byte-split invariance, the
// rejections json.loads makes, limits, and a round trip of random JSON through nlohmann-json.
#include "server/openai/output_parsers/json_normalizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "server/openai/output_parsers/stream_test_util.h"

namespace vllm::server {
namespace {

// The normalized text of a whole value, or nullopt where json.loads would fail (trailing text
// included).
std::optional<std::string> Normalize(std::string_view text, bool ensure_ascii = false) {
  JsonNormalizer json({.ensure_ascii = ensure_ascii});
  std::string out;
  const size_t used = json.Feed(text, &out);
  json.Finish(&out);
  if (json.state() != JsonNormalizer::State::kDone) return std::nullopt;
  for (char c : text.substr(used)) {
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r') return std::nullopt;
  }
  return out;
}

TEST(JsonNormalizerTest, WritesPythonSeparators) {
  EXPECT_EQ(Normalize(R"({"a":1,"b":[1,2,{"c":null}],"d":{}})"),
            R"({"a": 1, "b": [1, 2, {"c": null}], "d": {}})");
  EXPECT_EQ(Normalize(" {\n \"a\" :\ttrue , \"b\" : [ ] }\n"), R"({"a": true, "b": []})");
  EXPECT_EQ(Normalize(R"(["x",false,null])"), R"(["x", false, null])");
}

TEST(JsonNormalizerTest, WritesFloatsAsPythonRepr) {
  const std::pair<const char*, const char*> cases[] = {
      {"1.0", "1.0"},
      {"1.50", "1.5"},
      {"1e5", "100000.0"},
      {"1E+16", "1e+16"},
      {"1e15", "1000000000000000.0"},
      {"1e-5", "1e-05"},
      {"0.0001", "0.0001"},
      {"2.5e-3", "0.0025"},
      {"-0.0", "-0.0"},
      {"0.1", "0.1"},
      {"3.14159", "3.14159"},
      {"123456789012345678.0", "1.2345678901234568e+17"},
      {"1.7976931348623157e308", "1.7976931348623157e+308"},
      {"5e-324", "5e-324"},
      {"1e400", "Infinity"},
      {"-1e400", "-Infinity"},
      {"1e-400", "0.0"},
      {"-1e-400", "-0.0"},
      {"0.001e400", "Infinity"},
      {"0.001e310", "1e+307"},
      {"12345678900000000000000000e-400", "0.0"},
  };
  for (const auto& [input, expected] : cases) EXPECT_EQ(Normalize(input), expected) << input;
}

TEST(JsonNormalizerTest, WritesIntegersAsPythonInt) {
  EXPECT_EQ(Normalize("-0"), "0");
  EXPECT_EQ(Normalize("12345678901234567890123"), "12345678901234567890123");
  EXPECT_EQ(Normalize(std::string(4300, '7')), std::string(4300, '7'));
  EXPECT_EQ(Normalize(std::string(4301, '7')), std::nullopt);  // Python's int limit
  EXPECT_EQ(Normalize("[-12, 0, 7]"), "[-12, 0, 7]");
}

TEST(JsonNormalizerTest, AcceptsPythonLiterals) {
  EXPECT_EQ(Normalize("[NaN, Infinity, -Infinity, true, false, null]"),
            "[NaN, Infinity, -Infinity, true, false, null]");
}

TEST(JsonNormalizerTest, EscapesStringsAsPython) {
  EXPECT_EQ(Normalize(R"("\u00e9\/\u0041")"), "\"é/A\"");
  EXPECT_EQ(Normalize(R"("\"\\\b\f\n\r\t")"), R"("\"\\\b\f\n\r\t")");
  EXPECT_EQ(Normalize(R"("\u0001\u001F")"), R"("\u0001\u001f")");
  EXPECT_EQ(Normalize(R"("\ud83d\ude00")"), "\"\xF0\x9F\x98\x80\"");
  EXPECT_EQ(Normalize("\"caf\xC3\xA9 \x7F\""), "\"caf\xC3\xA9 \x7F\"");
}

TEST(JsonNormalizerTest, EnsureAsciiEscapesNonAscii) {
  EXPECT_EQ(Normalize("\"caf\xC3\xA9\"", true), R"("caf\u00e9")");
  EXPECT_EQ(Normalize("\"\xF0\x9F\x98\x80\"", true), R"("\ud83d\ude00")");
  EXPECT_EQ(Normalize(R"("\u00E9")", true), R"("\u00e9")");
  EXPECT_EQ(Normalize("\"\x7F\"", true), R"("\u007f")");
  EXPECT_EQ(Normalize("\"\xE2\x82\"", true), R"("\ufffd")");  // a cut character
  EXPECT_EQ(Normalize("\"\xFFx\"", true), R"("\ufffdx")");    // not UTF-8
  EXPECT_EQ(Normalize("\"\xC3\xA9\xC3\"", true), R"("\u00e9\ufffd")");
}

TEST(JsonNormalizerTest, KeepsLoneSurrogatesAsEscapes) {
  EXPECT_EQ(Normalize(R"("\ud800")"), R"("\ud800")");
  EXPECT_EQ(Normalize(R"("\ud800x")"), R"("\ud800x")");
  EXPECT_EQ(Normalize(R"("\ud800\u0041")"), R"("\ud800A")");
  EXPECT_EQ(Normalize(R"("\ud800\n")"), R"("\ud800\n")");
  EXPECT_EQ(Normalize(R"("\ud800\ud83d\ude00")"), "\"\\ud800\xF0\x9F\x98\x80\"");
  EXPECT_EQ(Normalize(R"("\udc00")"), R"("\udc00")");
}

TEST(JsonNormalizerTest, RejectsWhatJsonLoadsRejects) {
  for (const char* input : {R"({"a":1,})", "[1,]",    "{'a':1}",     R"({"a" 1})", "[1 2]",
                            R"({"a":01})", R"("\x")", R"("\u12G4")", "1.",         ".5",
                            "-",           "1e",      "1e+",         "+1",         "tru",
                            "True",        "nul",     "NaNa",        "\"a\tb\"",   "\"a\nb\"",
                            "{1: 2}",      "[",       "{\"a\"",      "\"open",     "",
                            "}",           "[1]]",    R"({"a":1}x)"}) {
    EXPECT_EQ(Normalize(input), std::nullopt) << input;
  }
}

TEST(JsonNormalizerTest, StopsAfterTheValue) {
  JsonNormalizer object;
  std::string out;
  EXPECT_EQ(object.Feed(R"({"a": [1]}; {"b": 2})", &out), 10u);
  EXPECT_EQ(object.state(), JsonNormalizer::State::kDone);
  EXPECT_EQ(out, R"({"a": [1]})");

  // A top-level number ends at the byte after it, which is not used, or at Finish.
  JsonNormalizer number;
  out.clear();
  EXPECT_EQ(number.Feed("12", &out), 2u);
  EXPECT_EQ(number.state(), JsonNormalizer::State::kReading);
  EXPECT_EQ(out, "");
  EXPECT_EQ(number.Feed("5}", &out), 1u);
  EXPECT_EQ(number.state(), JsonNormalizer::State::kDone);
  EXPECT_EQ(out, "125");
  JsonNormalizer at_end;
  out.clear();
  at_end.Feed("-2.5e3", &out);
  at_end.Finish(&out);
  EXPECT_EQ(at_end.state(), JsonNormalizer::State::kDone);
  EXPECT_EQ(out, "-2500.0");
}

TEST(JsonNormalizerTest, FinishWritesANumberInsideACutValue) {
  JsonNormalizer json;
  std::string out;
  json.Feed(R"({"a": [12)", &out);
  EXPECT_EQ(out, R"({"a": [)");
  json.Finish(&out);
  EXPECT_EQ(out, R"({"a": [12)");
  EXPECT_EQ(json.state(), JsonNormalizer::State::kFailed);
}

TEST(JsonNormalizerTest, LimitsNesting) {
  EXPECT_TRUE(
      Normalize(std::string(kMaxToolCallJsonDepth, '[') + std::string(kMaxToolCallJsonDepth, ']'))
          .has_value());
  EXPECT_EQ(Normalize(std::string(kMaxToolCallJsonDepth + 1, '[') +
                      std::string(kMaxToolCallJsonDepth + 1, ']')),
            std::nullopt);
  JsonNormalizer deep;
  std::string out;
  const std::string brackets(1'000'000, '[');
  EXPECT_EQ(deep.Feed(brackets, &out), static_cast<size_t>(kMaxToolCallJsonDepth));
  EXPECT_EQ(deep.state(), JsonNormalizer::State::kFailed);
  EXPECT_EQ(out.size(), static_cast<size_t>(kMaxToolCallJsonDepth));
}

TEST(JsonNormalizerTest, SplitAnywhereGivesTheSameText) {
  for (bool ensure_ascii : {false, true}) {
    for (const char* input :
         {R"({"city": "Par\u00edsé", "n": [1.50, -0, 2e3, true, null, NaN, -Infinity], "e": {}})",
          "\"\\ud83d\\ude00 \xF0\x9F\x98\x80 \\ud800\\u0041 \\n\"", "[[], [[]], {\"a\": {}}]"}) {
      const std::optional<std::string> whole = Normalize(input, ensure_ascii);
      ASSERT_TRUE(whole.has_value()) << input;
      for (const std::vector<std::string>& pieces : testing::Splits(input)) {
        JsonNormalizer json({.ensure_ascii = ensure_ascii});
        std::string out;
        for (const std::string& piece : pieces) {
          EXPECT_EQ(json.Feed(piece, &out), piece.size());
        }
        json.Finish(&out);
        EXPECT_EQ(out, *whole) << input;
      }
    }
  }
}

TEST(JsonNormalizerTest, DecodesItsStrings) {
  EXPECT_EQ(DecodeJsonString(R"("a\"b\\c\nd\u00e9\ud83d\ude00/")"),
            "a\"b\\c\nd\xC3\xA9\xF0\x9F\x98\x80/");
  EXPECT_EQ(DecodeJsonString(R"("\ud800x")"), "\xEF\xBF\xBDx");
  EXPECT_EQ(DecodeJsonString(R"("")"), "");
}

// A random JSON value of bounded depth.
nlohmann::json RandomJson(std::mt19937& random, int depth) {
  const int kind = std::uniform_int_distribution<int>(0, depth > 0 ? 7 : 5)(random);
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return random() % 2 == 0;
    case 2:
      return static_cast<int64_t>(random()) - (1LL << 31);
    case 3:
      return std::ldexp(static_cast<double>(random()), static_cast<int>(random() % 80) - 40);
    case 4:
    case 5: {
      static const char* kPieces[] = {"a",    "\xC3\xA9",         "\"", "\\", "\n",
                                      "\x01", "\xF0\x9F\x98\x80", " ",  "/",  "\x7f"};
      std::string text;
      for (int i = random() % 6; i > 0; --i) text += kPieces[random() % 10];
      return text;
    }
    case 6: {
      nlohmann::json array = nlohmann::json::array();
      for (int i = random() % 4; i > 0; --i) array.push_back(RandomJson(random, depth - 1));
      return array;
    }
    default: {
      nlohmann::json object = nlohmann::json::object();
      for (int i = random() % 4; i > 0; --i) {
        object["k" + std::to_string(random() % 100)] = RandomJson(random, depth - 1);
      }
      return object;
    }
  }
}

TEST(JsonNormalizerTest, RandomValuesRoundTrip) {
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    const nlohmann::json value = RandomJson(random, 4);
    for (bool ensure_ascii : {false, true}) {
      const std::string text = value.dump(random() % 2 == 0 ? -1 : 2);
      const std::optional<std::string> normalized = Normalize(text, ensure_ascii);
      ASSERT_TRUE(normalized.has_value()) << text;
      EXPECT_EQ(nlohmann::json::parse(*normalized), value) << text << " -> " << *normalized;
      if (ensure_ascii) {
        for (char c : *normalized) ASSERT_LT(static_cast<unsigned char>(c), 0x80) << *normalized;
      }
      EXPECT_EQ(Normalize(*normalized, ensure_ascii), normalized) << "not a fixed point";
    }
  }
}

}  // namespace
}  // namespace vllm::server
