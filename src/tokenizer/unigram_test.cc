// Unit tests of the Unigram pieces: the precompiled charsmap, the Viterbi segmenter, the
// tokenizer.json Unigram model and Precompiled normalizer, and the GGUF "t5" loader's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unigram_segmenter.h"

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Ids = std::vector<int32_t>;
using Json = nlohmann::json;

// A charsmap SentencePiece compiled from six rules: Ａ→A, Ｂ→B, a U+0308→ä, ①→1, U+3000→" ",
// ﬁ→fi (normalization_rule_tsv of a trainer run).
constexpr const char* kTinyCharsmap =
    "AAQAAACAAQBhPAMAzCQCAIgdAAALAACAkYwCAKAFAAACAACAgAQCAIANAAAAAACArBgCAIEFAAAIAACABAAAgAYAAICh"
    "eQAAEAAAABMAAACicQAAFQAAABQAAAAXAAAAFgAAABkAAAAYAAAAGwAAALyoAgAdAAAAHAAAAB8AAAAeAAAAIQAAACAA"
    "AAAjAAAAIgAAACUAAAAkAAAAJwAAACYAAAApAAAAKAAAACsAAAAqAAAALQAAACwAAAAvAAAALgAAADEAAAAwAAAAMwAA"
    "ADIAAAA1AAAANAAAADcAAAA2AAAAOQAAADgAAAA7AAAAOgAAAD0AAAA8AAAAPwAAAD4AAABBAAAAQAAAAEMAAABCAAAA"
    "RQAAAEQAAABHAAAARgAAAEkAAABIAAAASwAAAEoAAABNAAAATAAAAE8AAABOAAAAUQAAAFAAAABTAAAAUgAAAFUAAABU"
    "AAAAVwAAAFYAAABZAAAAWAAAAFsAAABaAAAAXQAAAFwAAABfAAAAXgAAAGEAAABgAAAAYwAAAGIAAABlAAAAZAAAAGcA"
    "AABmAAAAaQAAAGgAAABrAAAAagAAAG0AAABsAAAAbwAAAG4AAABxAAAAcAAAAHMAAAByAAAAdQAAAHQAAAB3AAAAdgAA"
    "AHkAAAB4AAAAewAAAHoAAAB9AAAAfAAAAH8AAAB+AAAAgQAAAIAAAADiWAAA4ywAAIUAAACEAAAAhwAAAIYAAACJAAAA"
    "iAAAAIsAAACKAAAAjQAAAIwAAACPAAAA76AAAJEAAACQAAAAkwAAAJIAAACVAAAAlAAAAJcAAACWAAAAmQAAAJgAAACb"
    "AAAAmgAAAJ0AAACcAAAAnwAAAJ4AAAChAAAAoAAAAKMAAACiAAAApQAAAKQAAACnAAAApgAAAKkAAACoAAAAqwAAAKoA"
    "AACtAAAArAAAAK8AAACuAAAAsQAAALAAAACzAAAAsgAAALUAAAC0AAAAtwAAALYAAAC5AAAAuAAAALsAAAC6AAAAvQAA"
    "ALwAAAC/AAAAvgAAAMEAAADAAAAAwwAAAMIAAADFAAAAxAAAAMcAAADGAAAAyQAAAMgAAADLAAAAygAAAM0AAADMAAAA"
    "zwAAAM4AAADRAAAA0AAAANMAAADSAAAA1QAAANQAAADXAAAA1gAAANkAAADYAAAA2wAAANoAAADdAAAA3AAAAN8AAADe"
    "AAAA4QAAAOAAAADjAAAA4gAAAOUAAADkAAAA5wAAAOYAAADpAAAA6AAAAOsAAADqAAAA7QAAAOwAAADvAAAA7gAAAPEA"
    "AADwAAAA8wAAAPIAAAD1AAAA9AAAAPcAAAD2AAAA+QAAAPgAAAD7AAAA+gAAAP0AAAD8AAAA/wAAAP4AAAAgADEAQQBC"
    "AGZpAMOkAA==";

// A Unigram tokenizer.json: `pieces` with scores, unk_id 0, Metaspace, optional normalizer.
std::string UnigramJson(const std::vector<std::pair<std::string, double>>& pieces,
                        bool byte_fallback, const Json& normalizer = nullptr) {
  Json vocab = Json::array();
  for (const auto& [piece, score] : pieces) vocab.push_back({piece, score});
  const Json metaspace = {{"type", "Metaspace"},
                          {"replacement", "\u2581"},
                          {"prepend_scheme", "always"},
                          {"split", true}};
  return Json{
      {"normalizer", normalizer},
      {"pre_tokenizer", metaspace},
      {"decoder", metaspace},
      {"model",
       {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}, {"byte_fallback", byte_fallback}}}}
      .dump();
}

std::unique_ptr<Tokenizer> Load(const std::string& json) {
  auto tokenizer = LoadTokenizerFromHfJson(json);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.error();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

std::string LoadError(const std::string& json) {
  auto tokenizer = LoadTokenizerFromHfJson(json);
  return tokenizer.ok() ? std::string() : tokenizer.error();
}

TEST(PrecompiledCharsmap, MalformedBlobsAreErrors) {
  EXPECT_TRUE(PrecompiledCharsmap::Parse("").ok());  // no rules
  EXPECT_THAT(PrecompiledCharsmap::Parse("ab").error(), HasSubstr("4-byte header"));
  EXPECT_THAT(PrecompiledCharsmap::Parse(std::string("\x08\0\0\0abcd", 8)).error(),
              HasSubstr("does not fit"));
  EXPECT_THAT(PrecompiledCharsmap::Parse(std::string("\x03\0\0\0abcd", 8)).error(),
              HasSubstr("does not fit"));
  EXPECT_THAT(PrecompiledCharsmap::Parse(std::string("\0\0\0\0abcd", 8)).error(),
              HasSubstr("empty trie"));
  EXPECT_THAT(PrecompiledCharsmap::Parse(std::string("\xff\xff\xff\xff", 4)).error(),
              HasSubstr("does not fit"));
}

// Random units and replacement offsets: every lookup stays inside the blob.
TEST(PrecompiledCharsmap, RandomTriesNeverReadOutOfBounds) {
  std::mt19937 rng(15);
  for (int round = 0; round < 200; ++round) {
    const uint32_t num_units = 1 + rng() % 64;
    std::string blob(4 + 4 * num_units + rng() % 16, '\0');
    const uint32_t trie_bytes = 4 * num_units;
    std::memcpy(blob.data(), &trie_bytes, 4);
    for (size_t i = 4; i < blob.size(); ++i) blob[i] = static_cast<char>(rng());
    auto charsmap = PrecompiledCharsmap::Parse(blob);
    ASSERT_TRUE(charsmap.ok()) << charsmap.error();
    std::string text(1 + rng() % 12, '\0');
    for (char& c : text) c = static_cast<char>(rng());
    std::string out;
    for (size_t pos = 0; pos < text.size();) {
      const size_t consumed = charsmap->NormalizePrefix(std::string_view(text).substr(pos), &out);
      ASSERT_GE(consumed, 1u);
      pos += consumed;
    }
    charsmap->ShortestMatch(text);
  }
}

// The best-scoring split, not the greedy longest match: a + bc (-2.5) beats ab + c (-4) and
// abc (-4).
TEST(UnigramSegmenter, FindsTheBestScoringSplit) {
  const std::vector<std::string> pieces = {"a", "b", "c", "ab", "bc", "abc", "x"};
  const std::vector<double> scores = {-1, -1, -1, -3, -1.5, -4, -0.5};
  UnigramSegmenter segmenter(pieces, scores, {true, true, true, true, true, true, false});
  std::vector<UnigramSegmenter::Segment> segments;
  segmenter.Split("abc", &segments);
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0].id, 0);
  EXPECT_EQ(segments[1].id, 4);
  // "x" is not a candidate: with "é" and "y" it makes one unknown run between known pieces.
  segments.clear();
  segmenter.Split("ax\xc3\xa9yb", &segments);
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[1].id, UnigramSegmenter::kUnknown);
  EXPECT_EQ(segments[1].begin, 1u);
  EXPECT_EQ(segments[1].end, 5u);
  segments.clear();
  segmenter.Split("", &segments);
  EXPECT_TRUE(segments.empty());
}

TEST(UnigramSegmenter, LongInputsTakeLinearTime) {
  UnigramSegmenter segmenter({"a", "aa", "aaa", "b"}, {-1, -1.5, -2, -1}, {true, true, true, true});
  std::vector<UnigramSegmenter::Segment> segments;
  segmenter.Split(std::string(1 << 20, 'a'), &segments);
  EXPECT_EQ(segments.size(), (1u << 20) / 3 + 1);  // aaa pieces, then a last "a"
}

TEST(HfUnigram, ViterbiUnknownFusionAndByteFallback) {
  const std::vector<std::pair<std::string, double>> pieces = {
      {"<unk>", 0}, {"\u2581", -2}, {"a", -1},         {"b", -1},     {"c", -1},
      {"ab", -3},   {"bc", -1.5},   {"\u2581abc", -9}, {"<0xC3>", 0}, {"<0xA9>", 0}};
  auto plain = Load(UnigramJson(pieces, /*byte_fallback=*/false));
  ASSERT_NE(plain, nullptr);
  EXPECT_THAT(plain->Encode("abc", false), ElementsAre(1, 2, 6));  // ▁ a bc
  // é and ü are unknown: one <unk> for the run, as fuse_unk.
  EXPECT_THAT(plain->Encode("a\xc3\xa9\xc3\xbc b", false), ElementsAre(1, 2, 0, 1, 3));
  EXPECT_EQ(plain->Decode(plain->Encode("abc ab", false), false), "abc ab");
  auto bytes = Load(UnigramJson(pieces, /*byte_fallback=*/true));
  ASSERT_NE(bytes, nullptr);
  // é's bytes are both <0xXX> pieces; ü's are not, so the fused run é ü stays <unk>.
  EXPECT_THAT(bytes->Encode("a\xc3\xa9", false), ElementsAre(1, 2, 8, 9));
  EXPECT_THAT(bytes->Encode("a\xc3\xa9\xc3\xbc", false), ElementsAre(1, 2, 0));
}

TEST(HfUnigram, PrecompiledNormalizerWorksOnGraphemes) {
  const std::vector<std::pair<std::string, double>> pieces = {
      {"<unk>", 0}, {"\u2581", -2}, {"A", -1}, {"B", -1}, {"1", -1}, {"fi", -1}, {"\xc3\xa4", -1}};
  const Json normalizer = {{"type", "Precompiled"}, {"precompiled_charsmap", kTinyCharsmap}};
  auto tokenizer = Load(UnigramJson(pieces, false, normalizer));
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->Encode("\xef\xbc\xa1\xef\xbc\xa2", false),  // ＡＢ
            tokenizer->Encode("AB", false));
  EXPECT_EQ(tokenizer->Encode("\xef\xac\x81", false), tokenizer->Encode("fi", false));  // ﬁ
  EXPECT_EQ(tokenizer->Encode("\xe2\x91\xa0", false), tokenizer->Encode("1", false));   // ①
  // a U+0308 U+0301 is one grapheme: Hugging Face replaces it whole by the rule for its
  // shortest matching prefix (a U+0308 → ä), so the acute is gone.
  EXPECT_EQ(tokenizer->Encode("a\xcc\x88\xcc\x81", false), tokenizer->Encode("\xc3\xa4", false));
  EXPECT_THAT(tokenizer->Encode("\xc3\xa4", false), ElementsAre(1, 6));
}

TEST(HfUnigram, MalformedModelsAreErrors) {
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": {"a": 0}}})"),
              HasSubstr("model.vocab: expected an array"));
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": [["a"]]}})"),
              HasSubstr("model.vocab[0]: expected [piece, score]"));
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": [["a", "x"]]}})"),
              HasSubstr("model.vocab[0]: expected [piece, score]"));
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": [["a", 0], ["a", -1]]}})"),
              HasSubstr("'a' appears twice"));
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": [["", 0]]}})"),
              HasSubstr("empty token"));
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": [["a", 0]], "unk_id": 5}})"),
              HasSubstr("model.unk_id: 5 is outside the vocabulary"));
  EXPECT_THAT(LoadError(R"({"model": {"type": "Unigram", "vocab": [["a", 0]], "unk_id": "a"}})"),
              HasSubstr("model.unk_id"));
  EXPECT_THAT(
      LoadError(R"({"model": {"type": "Unigram", "vocab": [["a", 0]], "byte_fallback": 1}})"),
      HasSubstr("model.byte_fallback"));
  const std::string model = R"("model": {"type": "Unigram", "vocab": [["a", 0]]})";
  EXPECT_THAT(LoadError("{" + model +
                        R"(, "normalizer": {"type": "Precompiled", "precompiled_charsmap": "*"}})"),
              HasSubstr("precompiled_charsmap: not base64"));
  EXPECT_THAT(
      LoadError("{" + model +
                R"(, "normalizer": {"type": "Precompiled", "precompiled_charsmap": "/////w=="}})"),
      HasSubstr("precompiled_charsmap: precompiled charsmap: trie size"));
  // Without an unknown token, an unknown character is dropped rather than failing the encode.
  auto tokenizer = Load("{" + model + "}");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_THAT(tokenizer->Encode("aza", false), ElementsAre(0, 0));
}

// A GGUF "t5" vocabulary with `charsmap` as tokenizer.ggml.precompiled_charsmap.
Expected<std::unique_ptr<Tokenizer>> LoadT5Vocab(std::vector<int64_t> charsmap,
                                                 bool add_space_prefix = true) {
  const std::string path =
      ::testing::TempDir() + "/t5_vocab_" + std::to_string(::getpid()) + ".gguf";
  GgufWriter writer;
  writer.AddMetadata("tokenizer.ggml.model", GgufValue::String("t5"));
  GgufArray tokens{GgufValueType::kString, {}};
  for (const char* token : {"<pad>", "</s>", "<unk>", "\u2581a", "b"}) {
    tokens.items.push_back(GgufValue::String(token));
  }
  writer.AddMetadata("tokenizer.ggml.tokens", GgufValue::Array(std::move(tokens)));
  GgufArray types{GgufValueType::kInt32, {}};
  for (int32_t type : {3, 3, 2, 1, 1}) types.items.push_back(GgufValue::Int32(type));
  writer.AddMetadata("tokenizer.ggml.token_type", GgufValue::Array(std::move(types)));
  GgufArray bytes{GgufValueType::kInt32, {}};
  for (int64_t byte : charsmap) bytes.items.push_back(GgufValue::Int32(static_cast<int32_t>(byte)));
  writer.AddMetadata("tokenizer.ggml.precompiled_charsmap", GgufValue::Array(std::move(bytes)));
  writer.AddMetadata("tokenizer.ggml.add_space_prefix", GgufValue::Bool(add_space_prefix));
  writer.AddMetadata("tokenizer.ggml.remove_extra_whitespaces", GgufValue::Bool(true));
  EXPECT_TRUE(writer.Begin(path).ok());
  EXPECT_TRUE(writer.Finish().ok());
  auto file = GgufFile::Open(path);
  std::remove(path.c_str());
  if (!file) return Error{file.error()};
  return LoadTokenizerFromGguf(**file);
}

TEST(UgmTokenizer, LoadsT5VocabulariesAndRefusesBadCharsmaps) {
  auto tokenizer = LoadT5Vocab({});
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  // llama.cpp's t5 defaults: </s> added at the end, no BOS; ▁ in front, z is unknown.
  EXPECT_THAT((*tokenizer)->Encode("abz", true), ElementsAre(3, 4, 2, 1));
  EXPECT_EQ((*tokenizer)->Decode(Ids{3, 4, 1}, true), "ab");
  EXPECT_EQ((*tokenizer)->Decode(Ids{3, 4, 1}, false), "ab</s>");
  // Whitespace runs collapse to one ▁, leading and trailing ones drop: "  a  b " is ▁a▁b,
  // split ▁a, <unk> (the vocabulary has no ▁), b.
  EXPECT_THAT((*tokenizer)->Encode("  a  b ", false), ElementsAre(3, 2, 4));
  // Without the space prefix the first word has no ▁ (SentencePiece; llama.cpp adds one).
  auto unprefixed = LoadT5Vocab({}, /*add_space_prefix=*/false);
  ASSERT_TRUE(unprefixed.ok()) << unprefixed.error();
  EXPECT_THAT((*unprefixed)->Encode("b  a", false), ElementsAre(4, 3));
  EXPECT_THAT(LoadT5Vocab({1, 0, 0, 0}).error(), HasSubstr("does not fit"));
  EXPECT_THAT(LoadT5Vocab({300}).error(), HasSubstr("holds 300, which is not a byte"));
}

}  // namespace
}  // namespace vllm
