#include "tokenizer/tekken_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/temp_test_dir.h"
#include "tokenizer/tokenizer_mode.h"

namespace vllm {
namespace {

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n =
        (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t n = uint8_t(bytes[i]) << 16;
    out += {kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += {kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], kAlphabet[(n >> 6) & 63], '='};
  }
  return out;
}

// The 256 single bytes, then "he" (rank 256), "ll", "llo", "hello", " w"; five special tokens
// (<unk> <s> </s> [INST] [/INST]), so a rank's id is rank + 5.
nlohmann::json TinyTekken() {
  nlohmann::json vocab = nlohmann::json::array();
  for (int byte = 0; byte < 256; ++byte) {
    vocab.push_back({{"rank", byte},
                     {"token_bytes", Base64(std::string(1, static_cast<char>(byte)))},
                     {"token_str", nullptr}});
  }
  int rank = 256;
  for (const char* merged : {"he", "ll", "llo", "hello", " w"}) {
    vocab.push_back({{"rank", rank++}, {"token_bytes", Base64(merged)}, {"token_str", merged}});
  }
  nlohmann::json specials = nlohmann::json::array();
  rank = 0;
  for (const char* text : {"<unk>", "<s>", "</s>", "[INST]", "[/INST]"}) {
    specials.push_back({{"rank", rank++}, {"token_str", text}, {"is_control", true}});
  }
  return {{"config",
           {{"pattern", R"([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+)"},
            {"num_vocab_tokens", 261},
            {"default_vocab_size", 266},
            {"default_num_special_tokens", 5},
            {"version", "v7"}}},
          {"vocab", vocab},
          {"special_tokens", specials}};
}

std::unique_ptr<Tokenizer> Load(const nlohmann::json& json) {
  auto tokenizer = LoadTekkenTokenizerFromJson(json.dump());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.error();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

TEST(TekkenTokenizer, EncodesByRankAfterTheSpecialTokens) {
  auto tokenizer = Load(TinyTekken());
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->vocab_size(), 266);
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  // "hello" is one token (rank 259); " world" merges only " w" (rank 260), then single bytes.
  EXPECT_EQ(tokenizer->Encode("hello world", /*add_special_tokens=*/true),
            (std::vector<int32_t>{1, 264, 265, 'o' + 5, 'r' + 5, 'l' + 5, 'd' + 5}));
  // The lowest rank merges first: he, he, ll, llo, hello, leaving hello + he.
  EXPECT_EQ(tokenizer->Encode("hellohe", false), (std::vector<int32_t>{264, 261}));
  // Special-token text is that token (how a rendered chat template's [INST] becomes an id).
  EXPECT_EQ(tokenizer->Encode("[INST]hello[/INST]", false), (std::vector<int32_t>{3, 264, 4}));
  // Bytes outside UTF-8 letters still round-trip through the byte ranks.
  EXPECT_EQ(tokenizer->Encode("\xc3\xa9", false), (std::vector<int32_t>{0xc3 + 5, 0xa9 + 5}));
}

TEST(TekkenTokenizer, DecodeDropsSpecialTokensWhenAsked) {
  auto tokenizer = Load(TinyTekken());
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = {1, 3, 264, 4, 265, 2};
  EXPECT_EQ(tokenizer->Decode(ids, /*skip_special_tokens=*/true), "hello w");
  EXPECT_EQ(tokenizer->Decode(ids, false), "<s>[INST]hello[/INST] w</s>");
  EXPECT_TRUE(tokenizer->IsSpecial(4));
  EXPECT_FALSE(tokenizer->IsSpecial(5));
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("a b\n\tc é", false), true), "a b\n\tc é");
}

TEST(TekkenTokenizer, UnnamedSpecialRanksAndOldFiles) {
  nlohmann::json json = TinyTekken();
  // More special ranks than named: the rest are <SPECIAL_n>, and ranks shift with them.
  json["config"]["default_num_special_tokens"] = 7;
  json["config"]["default_vocab_size"] = 268;
  auto tokenizer = Load(json);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->TokenToPiece(6), "<SPECIAL_6>");
  EXPECT_EQ(tokenizer->Encode("hello", false), (std::vector<int32_t>{266}));
  // No special_tokens list: mistral-common's older default list.
  json.erase("special_tokens");
  tokenizer = Load(json);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->TokenToPiece(4), "[/INST]");
  EXPECT_EQ(tokenizer->TokenToPiece(5), "[AVAILABLE_TOOLS]");
}

TEST(TekkenTokenizer, MalformedFilesAreErrors) {
  nlohmann::json json = TinyTekken();
  json.erase("config");
  EXPECT_EQ(LoadTekkenTokenizerFromJson(json.dump()).error(),
            "tekken.json: config: expected an object");
  json = TinyTekken();
  json["config"]["default_vocab_size"] = 400;
  EXPECT_NE(LoadTekkenTokenizerFromJson(json.dump()).error().find("fewer than"), std::string::npos);
  json = TinyTekken();
  json["vocab"][3]["token_bytes"] = "!!";
  EXPECT_NE(LoadTekkenTokenizerFromJson(json.dump()).error().find("rank 3"), std::string::npos);
  EXPECT_FALSE(LoadTekkenTokenizerFromJson("[1, 2").ok());
}

TEST(TokenizerMode, ParsesVllmModes) {
  EXPECT_EQ(*ParseTokenizerMode("auto"), TokenizerMode::kAuto);
  EXPECT_EQ(*ParseTokenizerMode("slow"), TokenizerMode::kSlow);
  EXPECT_EQ(*ParseTokenizerMode("mistral"), TokenizerMode::kMistral);
  EXPECT_NE(ParseTokenizerMode("custom").error().find("custom"), std::string::npos);
  EXPECT_NE(ParseTokenizerMode("fast").error().find("'fast'"), std::string::npos);
}

TEST(TokenizerMode, PicksTekkenJsonInADirectory) {
  TempTestDir dir("tekken_dir");
  std::ofstream(dir.File("tekken.json")) << TinyTekken().dump();
  const std::string path = dir.File("");
  for (TokenizerMode mode : {TokenizerMode::kAuto, TokenizerMode::kSlow, TokenizerMode::kMistral}) {
    auto loaded = LoadTokenizerFromDirectory(path, mode);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_TRUE(loaded->is_tekken);
    EXPECT_EQ(loaded->tokenizer->Encode("hello", false), (std::vector<int32_t>{264}));
  }
  TempTestDir empty("tekken_empty_dir");
  auto refused = LoadTokenizerFromDirectory(empty.File(""), TokenizerMode::kMistral);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("no tekken.json"), std::string::npos);
}

}  // namespace
}  // namespace vllm
