#include "tokenizer/hf/hf_tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer/byte_level.h"

namespace vllm {
namespace {

using hf::Json;
using Ids = std::vector<int32_t>;

std::unique_ptr<Tokenizer> Load(const Json& tokenizer, const Json& config = nullptr,
                                const Json& special_tokens_map = nullptr) {
  auto result =
      LoadTokenizerFromHfJson(tokenizer.dump(), config.is_null() ? "" : config.dump(),
                              special_tokens_map.is_null() ? "" : special_tokens_map.dump());
  EXPECT_TRUE(result.ok()) << result.error();
  return result.ok() ? std::move(*result) : nullptr;
}

// The error of loading, or "" when it loads.
std::string LoadError(std::string_view tokenizer, std::string_view config = {}) {
  auto result = LoadTokenizerFromHfJson(tokenizer, config);
  return result.ok() ? "" : result.error();
}

std::vector<std::string> Texts(const std::vector<hf::PreToken>& pieces) {
  std::vector<std::string> texts;
  for (const hf::PreToken& piece : pieces) texts.push_back(piece.text);
  return texts;
}

std::vector<std::string> PreTokenize(const Json& json, std::string text,
                                     bool at_input_start = true) {
  auto pre_tokenizer = hf::ParsePreTokenizer(json);
  EXPECT_TRUE(pre_tokenizer.ok()) << pre_tokenizer.error();
  std::vector<hf::PreToken> pieces = {{std::move(text), at_input_start}};
  if (pre_tokenizer.ok()) (*pre_tokenizer)->PreTokenize(&pieces);
  return Texts(pieces);
}

std::string Normalize(const Json& json, std::string text) {
  auto normalizer = hf::ParseNormalizer(json);
  EXPECT_TRUE(normalizer.ok()) << normalizer.error();
  return normalizer.ok() ? (*normalizer)->Normalize(std::move(text)) : "";
}

std::string DecodeChain(const Json& json, std::vector<std::string> tokens) {
  auto decoder = hf::ParseDecoder(json);
  EXPECT_TRUE(decoder.ok()) << decoder.error();
  if (!decoder.ok()) return "";
  (*decoder)->DecodeChain(&tokens);
  std::string text;
  for (const std::string& token : tokens) text += token;
  return text;
}

Json BpeModel(Json vocab, Json merges) {
  return {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)}};
}

Json WithModel(Json model) { return {{"model", std::move(model)}}; }

// ---------------------------------------------------------------------------------------------
// BPE model

TEST(HfBpe, MergesByRankInBothForms) {
  const Json vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}};
  auto by_bc = Load(WithModel(BpeModel(vocab, Json::array({"b c", Json::array({"a", "bc"})}))));
  ASSERT_TRUE(by_bc);
  EXPECT_EQ(by_bc->Encode("abc", false), (Ids{5}));
  EXPECT_EQ(by_bc->Encode("abab", false), (Ids{0, 1, 0, 1}));
  // "a b" ranks first: "ab" + "c" then has no merge.
  auto by_ab = Load(WithModel(BpeModel(vocab, {"a b", "b c"})));
  ASSERT_TRUE(by_ab);
  EXPECT_EQ(by_ab->Encode("abc", false), (Ids{3, 2}));
  EXPECT_EQ(by_ab->Encode("", false), (Ids{}));
  EXPECT_EQ(by_ab->vocab_size(), 6);
  EXPECT_EQ(by_ab->TokenToPiece(4), "bc");
  EXPECT_EQ(by_ab->TokenToPiece(6), "");
  EXPECT_EQ(by_ab->TokenToPiece(-1), "");
  // No decoder: tokens are joined with spaces.
  EXPECT_EQ(by_ab->Decode(Ids{3, 2, 99, -5}, false), "ab c");
}

TEST(HfBpe, ByteFallbackAndUnknown) {
  Json model = BpeModel({{"<unk>", 0}, {"a", 1}, {"<0xC3>", 2}, {"<0xA9>", 3}}, Json::array());
  model["byte_fallback"] = true;
  model["unk_token"] = "<unk>";
  Json tokenizer = WithModel(model);
  tokenizer["decoder"] = {{"type", "Sequence"},
                          {"decoders", {{{"type", "ByteFallback"}}, {{"type", "Fuse"}}}}};
  auto t = Load(tokenizer);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("a\xc3\xa9", false), (Ids{1, 2, 3}));  // é = C3 A9
  EXPECT_EQ(t->Encode("a\xcf\x80", false), (Ids{1, 0}));     // π has no byte tokens: <unk>
  EXPECT_EQ(t->Decode(Ids{1, 2, 3}, false), "a\xc3\xa9");
  EXPECT_EQ(t->Decode(Ids{1, 2}, false), "a\xc3");  // a cut character stays
  EXPECT_EQ(t->Decode(Ids{2, 1}, false),
            "\xef\xbf\xbd"
            "a");  // invalid: U+FFFD
  EXPECT_EQ(t->Decode(Ids{3, 3, 1}, false),
            "\xef\xbf\xbd\xef\xbf\xbd"
            "a");
}

TEST(HfBpe, FuseUnkAndNoUnk) {
  Json model = BpeModel({{"<unk>", 0}, {"a", 1}}, Json::array());
  model["unk_token"] = "<unk>";
  model["fuse_unk"] = true;
  EXPECT_EQ(Load(WithModel(model))->Encode("xya", false), (Ids{0, 1}));
  model["fuse_unk"] = false;
  EXPECT_EQ(Load(WithModel(model))->Encode("xya", false), (Ids{0, 0, 1}));
  model["unk_token"] = nullptr;  // unknown characters are dropped
  EXPECT_EQ(Load(WithModel(model))->Encode("xya", false), (Ids{1}));
}

TEST(HfBpe, IgnoreMerges) {
  Json model = BpeModel({{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}}, {"b c"});
  EXPECT_EQ(Load(WithModel(model))->Encode("abc", false), (Ids{0, 4}));
  model["ignore_merges"] = true;
  EXPECT_EQ(Load(WithModel(model))->Encode("abc", false), (Ids{5}));
  EXPECT_EQ(Load(WithModel(model))->Encode("bca", false), (Ids{4, 0}));
}

TEST(HfBpe, SubwordPrefixAndWordSuffix) {
  Json model = BpeModel({{"a", 0},
                         {"##b", 1},
                         {"##c</w>", 2},
                         {"ab", 3},
                         {"abc</w>", 4},
                         {"a</w>", 5},
                         {"##b</w>", 6}},
                        {"a ##b", "ab ##c</w>"});
  model["continuing_subword_prefix"] = "##";
  model["end_of_word_suffix"] = "</w>";
  auto t = Load(WithModel(model));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("abc", false), (Ids{4}));
  EXPECT_EQ(t->Encode("ac", false), (Ids{0, 2}));
  EXPECT_EQ(t->Encode("a", false), (Ids{5}));
  EXPECT_EQ(t->Encode("ab", false), (Ids{0, 6}));  // no merge "a ##b</w>"
  model["merges"] = {"a ##b"};
  EXPECT_EQ(Load(WithModel(model))->Encode("abc", false), (Ids{3, 2}));
}

// ---------------------------------------------------------------------------------------------
// Normalizers

TEST(HfNormalizers, Types) {
  EXPECT_EQ(Normalize({{"type", "NFC"}}, "e\xcc\x81"), "\xc3\xa9");  // e + ◌́ → é
  EXPECT_EQ(Normalize({{"type", "NFD"}}, "\xc3\xa9"), "e\xcc\x81");
  EXPECT_EQ(Normalize({{"type", "NFKC"}}, "\xef\xac\x81"), "fi");  // ﬁ ligature
  EXPECT_EQ(Normalize({{"type", "NFKD"}}, "\xc2\xb2"), "2");       // ²
  EXPECT_EQ(Normalize({{"type", "Lowercase"}}, "HeLLo \xc3\x89\xce\xa3"), "hello \xc3\xa9\xcf\x83");
  EXPECT_EQ(
      Normalize({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, " \t a b \n"),
      "a b");
  EXPECT_EQ(Normalize({{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}}, "  a  "),
            "  a");
  EXPECT_EQ(Normalize({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, "   "), "");
  EXPECT_EQ(Normalize({{"type", "Prepend"}, {"prepend", "_"}}, "a"), "_a");
  EXPECT_EQ(Normalize({{"type", "Prepend"}, {"prepend", "_"}}, ""), "");
  EXPECT_EQ(
      Normalize({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "_"}}, " a b "),
      "_a_b_");
  EXPECT_EQ(Normalize({{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}},
                      "a \t\n b"),
            "a b");
  EXPECT_EQ(Normalize({{"type", "StripAccents"}}, "e\xcc\x81"), "e");
  EXPECT_EQ(
      Normalize(
          {{"type", "Sequence"},
           {"normalizers",
            {{{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}},
             {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xe2\x96\x81"}}}}},
          "Hi there"),
      "\xe2\x96\x81Hi\xe2\x96\x81there");
  EXPECT_EQ(
      Normalize({{"type", "BertNormalizer"}, {"lowercase", true}}, "H\xc3\xa9llo\t\xe4\xbd\xa0!"),
      "hello  \xe4\xbd\xa0 !");
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers

using Strings = std::vector<std::string>;

Json SplitJson(const char* regex, const char* behavior, bool invert = false) {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", behavior},
          {"invert", invert}};
}

TEST(HfPreTokenizers, SplitBehaviors) {
  EXPECT_EQ(PreTokenize(SplitJson("\\s+", "Removed"), "a  b c"), (Strings{"a", "b", "c"}));
  EXPECT_EQ(PreTokenize(SplitJson("\\s+", "Isolated"), "a  b c"),
            (Strings{"a", "  ", "b", " ", "c"}));
  EXPECT_EQ(PreTokenize(SplitJson("\\s+", "MergedWithPrevious"), "a  b c"),
            (Strings{"a  ", "b ", "c"}));
  EXPECT_EQ(PreTokenize(SplitJson("\\s+", "MergedWithNext"), "a  b c"),
            (Strings{"a", "  b", " c"}));
  EXPECT_EQ(PreTokenize(SplitJson("-", "Contiguous"), "a--b-"), (Strings{"a", "--", "b", "-"}));
  EXPECT_EQ(PreTokenize(SplitJson("-", "Isolated"), "a--b"), (Strings{"a", "-", "-", "b"}));
  EXPECT_EQ(PreTokenize(SplitJson("-", "MergedWithPrevious"), "a--b"), (Strings{"a-", "-", "b"}));
  EXPECT_EQ(PreTokenize(SplitJson("\\s+", "Removed", true), "a  b c"), (Strings{"  ", " "}));
  EXPECT_EQ(PreTokenize({{"type", "Split"},
                         {"pattern", {{"String", "ab"}}},
                         {"behavior", "Isolated"},
                         {"invert", false}},
                        "xabyab"),
            (Strings{"x", "ab", "y", "ab"}));
}

TEST(HfPreTokenizers, LlamaThreeRegexThenByteLevel) {
  const Json json = {
      {"type", "Sequence"},
      {"pretokenizers",
       {SplitJson("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                  "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
                  "Isolated"),
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  EXPECT_EQ(PreTokenize(json, "Hello world's 12345\n\n  x"),
            (Strings{"Hello", "\xc4\xa0world", "'s", "\xc4\xa0", "123", "45", "\xc4\x8a\xc4\x8a",
                     "\xc4\xa0", "\xc4\xa0x"}));
}

TEST(HfPreTokenizers, ByteLevel) {
  EXPECT_EQ(PreTokenize({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}},
                        "Hello world"),
            (Strings{"\xc4\xa0Hello", "\xc4\xa0world"}));
  EXPECT_EQ(PreTokenize({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}},
                        "Hello  world!"),
            (Strings{"Hello", "\xc4\xa0", "\xc4\xa0world", "!"}));
  EXPECT_EQ(PreTokenize({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}},
                        "a b\n"),
            (Strings{"a\xc4\xa0"
                     "b\xc4\x8a"}));
}

TEST(HfPreTokenizers, Metaspace) {
  const char* m = "\xe2\x96\x81";  // ▁
  Json json = {
      {"type", "Metaspace"}, {"replacement", m}, {"prepend_scheme", "always"}, {"split", true}};
  EXPECT_EQ(PreTokenize(json, "Hey  friend"),
            (Strings{std::string(m) + "Hey", m, std::string(m) + "friend"}));
  EXPECT_EQ(PreTokenize(json, "Hey", false), (Strings{std::string(m) + "Hey"}));
  json["prepend_scheme"] = "first";
  EXPECT_EQ(PreTokenize(json, "Hey you", true),
            (Strings{std::string(m) + "Hey", std::string(m) + "you"}));
  EXPECT_EQ(PreTokenize(json, "Hey you", false), (Strings{"Hey", std::string(m) + "you"}));
  json["prepend_scheme"] = "never";
  json["split"] = false;
  EXPECT_EQ(PreTokenize(json, "Hey you"), (Strings{"Hey" + std::string(m) + "you"}));
}

TEST(HfPreTokenizers, DigitsWhitespacePunctuation) {
  EXPECT_EQ(PreTokenize({{"type", "Digits"}, {"individual_digits", true}}, "a123b"),
            (Strings{"a", "1", "2", "3", "b"}));
  EXPECT_EQ(PreTokenize({{"type", "Digits"}, {"individual_digits", false}}, "a123b4"),
            (Strings{"a", "123", "b", "4"}));
  EXPECT_EQ(PreTokenize({{"type", "Whitespace"}}, "Hey, you!  ok"),
            (Strings{"Hey", ",", "you", "!", "ok"}));
  EXPECT_EQ(PreTokenize({{"type", "WhitespaceSplit"}}, "Hey, you!  ok"),
            (Strings{"Hey,", "you!", "ok"}));
  EXPECT_EQ(PreTokenize({{"type", "Punctuation"}}, "a,b!?"), (Strings{"a", ",", "b", "!", "?"}));
  EXPECT_EQ(PreTokenize({{"type", "Punctuation"}, {"behavior", "Contiguous"}}, "a,b!?"),
            (Strings{"a", ",", "b", "!?"}));
  EXPECT_EQ(PreTokenize({{"type", "BertPreTokenizer"}}, "Hi, there!"),
            (Strings{"Hi", ",", "there", "!"}));
}

// ---------------------------------------------------------------------------------------------
// Post-processors and decoders

TEST(HfPostProcessors, Types) {
  const Json template_json = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
        {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}}},
      {"special_tokens",
       {{"[CLS]", {{"id", "[CLS]"}, {"ids", {101}}, {"tokens", {"[CLS]"}}}},
        {"[SEP]", {{"id", "[SEP]"}, {"ids", {102}}, {"tokens", {"[SEP]"}}}}}}};
  auto frame = hf::ParsePostProcessor(template_json);
  ASSERT_TRUE(frame.ok()) << frame.error();
  EXPECT_EQ(frame->prefix, (Ids{101}));
  EXPECT_EQ(frame->suffix, (Ids{102}));

  auto sequence = hf::ParsePostProcessor(
      {{"type", "Sequence"},
       {"processors", {{{"type", "ByteLevel"}, {"trim_offsets", false}}, template_json}}});
  ASSERT_TRUE(sequence.ok()) << sequence.error();
  EXPECT_EQ(sequence->prefix, (Ids{101}));
  EXPECT_EQ(sequence->suffix, (Ids{102}));

  auto roberta = hf::ParsePostProcessor(
      {{"type", "RobertaProcessing"}, {"sep", {"</s>", 2}}, {"cls", {"<s>", 0}}});
  ASSERT_TRUE(roberta.ok()) << roberta.error();
  EXPECT_EQ(roberta->prefix, (Ids{0}));
  EXPECT_EQ(roberta->suffix, (Ids{2}));

  auto byte_level = hf::ParsePostProcessor({{"type", "ByteLevel"}});
  ASSERT_TRUE(byte_level.ok());
  EXPECT_TRUE(byte_level->prefix.empty() && byte_level->suffix.empty());

  Json undefined = template_json;
  undefined["special_tokens"].erase("[SEP]");
  EXPECT_FALSE(hf::ParsePostProcessor(undefined).ok());
}

TEST(HfDecoders, Types) {
  const std::string m = "\xe2\x96\x81";
  const Json llama = {{"type", "Sequence"},
                      {"decoders",
                       {{{"type", "Replace"}, {"pattern", {{"String", m}}}, {"content", " "}},
                        {{"type", "ByteFallback"}},
                        {{"type", "Fuse"}},
                        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  EXPECT_EQ(DecodeChain(llama, {m + "Hello", m, "<0x0A>", "<0xE4>", "<0xBD>", "<0xA0>"}),
            "Hello \n\xe4\xbd\xa0");
  EXPECT_EQ(DecodeChain(llama, {m + m + "x"}), " x");
  EXPECT_EQ(DecodeChain({{"type", "ByteLevel"}}, {"\xc4\xa0Hello", "\xc4\xa0world", "<|x|>"}),
            " Hello world<|x|>");
  // A byte-level text cut inside a character keeps its bytes at the end only.
  EXPECT_EQ(DecodeChain({{"type", "ByteLevel"}}, {BytesToByteLevel("a\xe6\x88")}), "a\xe6\x88");
  EXPECT_EQ(DecodeChain({{"type", "ByteLevel"}}, {BytesToByteLevel("\xe6\x88"), "b"}),
            "\xef\xbf\xbd"
            "b");
  EXPECT_EQ(DecodeChain({{"type", "Metaspace"}, {"replacement", m}, {"prepend_scheme", "always"}},
                        {m + "Hey", m + "friend"}),
            "Hey friend");
  EXPECT_EQ(DecodeChain({{"type", "Metaspace"}, {"replacement", m}, {"prepend_scheme", "never"}},
                        {m + "Hey", m + "friend"}),
            " Hey friend");
  EXPECT_EQ(DecodeChain({{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}},
                        {"un", "##aff", "##able", "!", "it", "'s"}),
            "unaffable! it's");
  EXPECT_EQ(
      DecodeChain({{"type", "Strip"}, {"content", "x"}, {"start", 0}, {"stop", 2}}, {"axxx", "x"}),
      "ax");
  EXPECT_EQ(DecodeChain({{"type", "BPEDecoder"}, {"suffix", "</w>"}}, {"hel", "lo</w>", "you</w>"}),
            "hello you");
}

TEST(HfDecoders, ToValidUtf8) {
  EXPECT_EQ(hf::ToValidUtf8("a\xe6\x88", true), "a\xe6\x88");
  EXPECT_EQ(hf::ToValidUtf8("a\xe6\x88", false), "a\xef\xbf\xbd");
  EXPECT_EQ(hf::ToValidUtf8("\xe6"
                            "a",
                            true),
            "\xef\xbf\xbd"
            "a");
  EXPECT_EQ(hf::ToValidUtf8("\xc0\x80", true), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(hf::ToValidUtf8("\xed\xa0\x80", true), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(hf::ToValidUtf8("\xf0\x9f\xa6\x99", true), "\xf0\x9f\xa6\x99");
}

// ---------------------------------------------------------------------------------------------
// Whole tokenizers

// A byte-level BPE (GPT-2 / Qwen style): the 256 byte tokens have the byte's id.
Json ByteLevelTokenizer() {
  Json vocab = Json::object();
  for (int byte = 0; byte < 256; ++byte) {
    vocab[BytesToByteLevel(std::string(1, static_cast<char>(byte)))] = byte;
  }
  vocab["\xc4\xa0h"] = 256;   // Ġh
  vocab["\xc4\xa0hi"] = 257;  // Ġhi
  vocab["hi"] = 258;
  Json tokenizer = WithModel(BpeModel(vocab, {"\xc4\xa0 h", "\xc4\xa0h i", "h i"}));
  tokenizer["pre_tokenizer"] = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  tokenizer["decoder"] = {{"type", "ByteLevel"}};
  tokenizer["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<|bos|>"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"special_tokens", {{"<|bos|>", {{"id", "<|bos|>"}, {"ids", {259}}}}}}};
  auto added = [](int id, const char* content, bool special) {
    return Json{{"id", id},        {"content", content},  {"special", special},  {"lstrip", false},
                {"rstrip", false}, {"normalized", false}, {"single_word", false}};
  };
  tokenizer["added_tokens"] = {added(259, "<|bos|>", true), added(260, "<|eos|>", true),
                               added(261, "<tool>", false), added(262, "<mask>", true),
                               added(263, "sw", false)};
  tokenizer["added_tokens"][3]["lstrip"] = true;
  tokenizer["added_tokens"][3]["rstrip"] = true;
  tokenizer["added_tokens"][4]["single_word"] = true;
  return tokenizer;
}

TEST(HfTokenizer, ByteLevelBpeWithAddedTokens) {
  auto t = Load(ByteLevelTokenizer());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("hi hi", false), (Ids{258, 257}));
  EXPECT_EQ(t->Encode("hi hi", true), (Ids{259, 258, 257}));
  EXPECT_EQ(t->Encode("", true), (Ids{259}));
  EXPECT_EQ(t->Encode("hi<|eos|>hi", false), (Ids{258, 260, 258}));
  EXPECT_EQ(t->Encode("<tool><|eos|>", false), (Ids{261, 260}));
  // lstrip / rstrip take the spaces around <mask>.
  EXPECT_EQ(t->Encode("x <mask>  y", false), (Ids{'x', 262, 'y'}));
  // single_word: "sw" inside "asw" is not the added token.
  EXPECT_EQ(t->Encode("sw asw sw", false), (Ids{263, ' ', 'a', 's', 'w', ' ', 263}));
  // Bytes that are not UTF-8 still tokenize, one byte token each.
  EXPECT_EQ(t->Encode("\xff\xfe", false), (Ids{255, 254}));

  EXPECT_EQ(t->Decode(Ids{259, 258, 257, 260}, false), "<|bos|>hi hi<|eos|>");
  EXPECT_EQ(t->Decode(Ids{259, 258, 257, 260}, true), "hi hi");
  EXPECT_EQ(t->Decode(Ids{261, 263}, true), "<tool>sw");  // not special: kept
  EXPECT_EQ(t->Decode(Ids{257}, false), " hi");
  EXPECT_EQ(t->TokenToPiece(257), "\xc4\xa0hi");
  EXPECT_EQ(t->TokenToPiece(262), "<mask>");
  EXPECT_EQ(t->vocab_size(), 264);
  EXPECT_TRUE(t->IsSpecial(259));
  EXPECT_FALSE(t->IsSpecial(261));
  EXPECT_FALSE(t->IsSpecial(5));
  EXPECT_EQ(t->bos_id(), -1);  // no tokenizer_config.json
  EXPECT_EQ(t->eos_id(), -1);
}

TEST(HfTokenizer, NormalizedAddedTokensMatchNormalizedText) {
  Json tokenizer = ByteLevelTokenizer();
  tokenizer["normalizer"] = {{"type", "Lowercase"}};
  tokenizer["added_tokens"].push_back(
      {{"id", 264}, {"content", "hey"}, {"special", false}, {"normalized", true}});
  tokenizer["added_tokens"].push_back(
      {{"id", 265}, {"content", "ABC"}, {"special", false}, {"normalized", false}});
  auto t = Load(tokenizer);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("HEY", false), (Ids{264}));
  EXPECT_EQ(t->Encode("ABC", false), (Ids{265}));
  EXPECT_EQ(t->Encode("abc", false), (Ids{'a', 'b', 'c'}));
  EXPECT_EQ(t->Encode("HI", false), (Ids{258}));
}

TEST(HfTokenizer, ConfigDecidesBosEos) {
  const Json tokenizer = ByteLevelTokenizer();
  auto with_config = Load(tokenizer, {{"bos_token", {{"content", "<|bos|>"}, {"lstrip", false}}},
                                      {"eos_token", "<|eos|>"},
                                      {"add_eos_token", true},
                                      {"model_max_length", 4096}});
  ASSERT_TRUE(with_config);
  EXPECT_EQ(with_config->bos_id(), 259);
  EXPECT_EQ(with_config->eos_id(), 260);
  // add_bos_token absent: the template's BOS stays.
  EXPECT_EQ(with_config->Encode("hi", true), (Ids{259, 258, 260}));
  EXPECT_EQ(dynamic_cast<HfTokenizer&>(*with_config).model_max_length(), 4096);

  auto no_bos = Load(
      tokenizer, {{"bos_token", "<|bos|>"}, {"add_bos_token", false}, {"model_max_length", 1e30}});
  ASSERT_TRUE(no_bos);
  EXPECT_EQ(no_bos->Encode("hi", true), (Ids{258}));
  EXPECT_EQ(no_bos->Encode("hi", false), (Ids{258}));
  EXPECT_EQ(dynamic_cast<HfTokenizer&>(*no_bos).model_max_length(), std::nullopt);

  auto from_map = Load(tokenizer, {{"bos_token", nullptr}}, {{"eos_token", "<|eos|>"}});
  ASSERT_TRUE(from_map);
  EXPECT_EQ(from_map->bos_id(), -1);
  EXPECT_EQ(from_map->eos_id(), 260);

  auto extra = Load(tokenizer, {{"added_tokens_decoder",
                                 {{"300", {{"content", "<extra>"}, {"special", true}}},
                                  {"259", {{"content", "<|other|>"}, {"special", true}}}}}});
  ASSERT_TRUE(extra);
  EXPECT_EQ(extra->Encode("a<extra>", false), (Ids{'a', 300}));
  EXPECT_EQ(extra->vocab_size(), 301);
  EXPECT_TRUE(extra->IsSpecial(300));
  EXPECT_EQ(extra->TokenToPiece(259), "<|bos|>");  // tokenizer.json's entry wins
}

TEST(HfTokenizer, SentencePieceStyleBpe) {
  const std::string m = "\xe2\x96\x81";
  Json model = BpeModel({{"<unk>", 0},
                         {"<s>", 1},
                         {"</s>", 2},
                         {"<0x0A>", 3},
                         {m, 4},
                         {"H", 5},
                         {"i", 6},
                         {m + "H", 7},
                         {m + "Hi", 8}},
                        {m + " H", m + "H i"});
  model["byte_fallback"] = true;
  model["fuse_unk"] = true;
  model["unk_token"] = "<unk>";
  Json tokenizer = WithModel(model);
  tokenizer["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Prepend"}, {"prepend", m}},
        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", m}}}}};
  tokenizer["decoder"] = {{"type", "Sequence"},
                          {"decoders",
                           {{{"type", "Replace"}, {"pattern", {{"String", m}}}, {"content", " "}},
                            {{"type", "ByteFallback"}},
                            {{"type", "Fuse"}},
                            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  tokenizer["added_tokens"] = {{{"id", 1}, {"content", "<s>"}, {"special", true}},
                               {{"id", 2}, {"content", "</s>"}, {"special", true}}};
  auto t = Load(tokenizer, {{"bos_token", "<s>"},
                            {"eos_token", "</s>"},
                            {"add_bos_token", true},
                            {"add_eos_token", false}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("Hi\nHi", false), (Ids{8, 3, 5, 6}));
  EXPECT_EQ(t->Encode("Hi\nHi", true), (Ids{1, 8, 3, 5, 6}));
  EXPECT_EQ(t->Encode("", true), (Ids{1}));
  EXPECT_EQ(t->Encode(" Hi", false), (Ids{4, 8}));
  EXPECT_EQ(t->Encode("<s>Hi</s>", false), (Ids{1, 8, 2}));
  EXPECT_EQ(t->Encode("Hi\t", false), (Ids{8, 0}));  // no <0x09>: <unk>
  EXPECT_EQ(t->Decode(Ids{8, 3, 5, 6}, false), "Hi\nHi");
  EXPECT_EQ(t->Decode(Ids{1, 8, 2}, true), "Hi");
  EXPECT_EQ(t->Decode(Ids{4, 8}, false), " Hi");
  EXPECT_EQ(t->Decode(Ids{8}, false), "Hi");
  EXPECT_EQ(t->bos_id(), 1);
  EXPECT_EQ(t->eos_id(), 2);
  EXPECT_TRUE(t->IsSpecial(1));
}

TEST(HfTokenizer, WordPieceBert) {
  Json tokenizer = {{"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
                    {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                    {"model",
                     {{"type", "WordPiece"},
                      {"unk_token", "[UNK]"},
                      {"continuing_subword_prefix", "##"},
                      {"max_input_chars_per_word", 100},
                      {"vocab",
                       {{"[UNK]", 0},
                        {"[CLS]", 1},
                        {"[SEP]", 2},
                        {"un", 3},
                        {"##aff", 4},
                        {"##able", 5},
                        {"!", 6},
                        {"hello", 7}}}}},
                    {"post_processor",
                     {{"type", "BertProcessing"}, {"sep", {"[SEP]", 2}}, {"cls", {"[CLS]", 1}}}},
                    {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
                    {"added_tokens",
                     {{{"id", 0}, {"content", "[UNK]"}, {"special", true}},
                      {{"id", 1}, {"content", "[CLS]"}, {"special", true}},
                      {{"id", 2}, {"content", "[SEP]"}, {"special", true}}}}};
  auto t = Load(tokenizer);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("Unaffable! HELLO", true), (Ids{1, 3, 4, 5, 6, 7, 2}));
  EXPECT_EQ(t->Encode("unxyz hello", false), (Ids{0, 7}));
  EXPECT_EQ(t->Decode(Ids{3, 4, 5, 6, 7}, false), "unaffable! hello");
  EXPECT_EQ(t->Decode(Ids{1, 7, 2}, true), "hello");
}

// ---------------------------------------------------------------------------------------------
// Malformed files: an Error, never a crash.

TEST(HfTokenizerErrors, MalformedTokenizerJson) {
  const std::string model_ok = R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                                            "merges": ["a b"]})";
  ASSERT_EQ(LoadError("{" + model_ok + "}"), "");

  EXPECT_NE(LoadError("not json {").find("not valid JSON"), std::string::npos);
  EXPECT_NE(LoadError("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(LoadError("[1, 2]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(LoadError("{}").find("missing \"model\""), std::string::npos);
  EXPECT_NE(LoadError(R"({"model": 5})").find("model"), std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "Unigram", "vocab": []}})").find("model.vocab: empty"),
            std::string::npos);
  // Merges naming tokens the vocabulary lacks.
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                                    "merges": ["a z"]}})")
                .find("'z' is not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1},
                                    "merges": [["a", "b"]]}})")
                .find("'ab' is not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}})")
                .find("merges[0]"),
            std::string::npos);
  // Ids out of range or of the wrong type.
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 99999999999}, "merges": []}})")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": "0"}, "merges": []}})")
                .find("expected a token id"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})")
                .find("used by both"),
            std::string::npos);
  for (const char* type : {"BPE", "WordPiece", "WordLevel"}) {
    EXPECT_NE(LoadError(std::string(R"({"model": {"type": ")") + type + "\"}}")
                  .find("model.vocab: missing"),
              std::string::npos)
        << type;
  }
  // Wrong types.
  EXPECT_NE(
      LoadError(R"({"model": {"type": "BPE", "vocab": ["a"], "merges": []}})").find("model.vocab"),
      std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": "a b"}})")
                .find("model.merges"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [[1, 2]]}})")
                .find("merges[0]"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": 3}})")
                .find("model.unk_token: expected a string"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": "<unk>"}})")
                .find("not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "byte_fallback": "yes"}})")
                .find("model.byte_fallback"),
            std::string::npos);
  // Pipeline sections.
  EXPECT_NE(LoadError("{" + model_ok + R"(, "normalizer": {"type": "Precompiled"}})")
                .find("normalizer.precompiled_charsmap: missing"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok + R"(, "normalizer": {"type": "Sequence"}})")
                .find("normalizer.normalizers"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok +
                      R"(, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}}})")
                .find("pre_tokenizer.pattern.Regex"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok +
                      R"(, "pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
                            "behavior": "Sideways"}})")
                .find("behavior"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok + R"(, "decoder": {"type": "Strip", "content": 5}})")
                .find("decoder.content"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok + R"(, "decoder": "ByteLevel"})").find("decoder"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok + R"(, "post_processor": {"type": "TemplateProcessing",
                            "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}],
                            "special_tokens": {"<s>": {"ids": [500]}}}})")
                .find("outside the vocabulary"),
            std::string::npos);
  // Added tokens.
  EXPECT_NE(LoadError("{" + model_ok + R"(, "added_tokens": {"id": 3}})").find("added_tokens"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok + R"(, "added_tokens": [{"id": 3}]})")
                .find("added_tokens[0].content: missing"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok + R"(, "added_tokens": [{"id": -3, "content": "x"}]})")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(LoadError("{" + model_ok +
                      R"(, "added_tokens": [{"id": 3, "content": "x", "special": "yes"}]})")
                .find("added_tokens[0].special"),
            std::string::npos);
}

TEST(HfTokenizerErrors, DeepNesting) {
  const int depth = 100000;
  EXPECT_NE(LoadError(std::string(depth, '[') + std::string(depth, ']')).find("JSON object"),
            std::string::npos);
  std::string nested = R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "decoder": )";
  for (int i = 0; i < depth; ++i) nested += R"({"type": "Sequence", "decoders": [)";
  nested += R"({"type": "Fuse"})";
  for (int i = 0; i < depth; ++i) nested += "]}";
  nested += "}";
  EXPECT_NE(LoadError(nested).find("nested more than"), std::string::npos);
}

TEST(HfTokenizerErrors, MalformedConfig) {
  const std::string ok = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})";
  EXPECT_NE(LoadError(ok, "{oops").find("tokenizer_config.json is not valid JSON"),
            std::string::npos);
  EXPECT_NE(LoadError(ok, R"({"bos_token": 5})").find("bos_token"), std::string::npos);
  EXPECT_NE(LoadError(ok, R"({"add_bos_token": "yes"})").find("add_bos_token"), std::string::npos);
  EXPECT_NE(
      LoadError(ok, R"({"added_tokens_decoder": {"x": {"content": "a"}}})").find("not a token id"),
      std::string::npos);
  EXPECT_NE(LoadError(ok, R"({"added_tokens_decoder": []})").find("added_tokens_decoder"),
            std::string::npos);
  EXPECT_EQ(LoadError(ok, R"({"bos_token": "<missing>"})"), "");  // unknown text: no BOS
}

TEST(HfTokenizerErrors, Directories) {
  auto missing = LoadTokenizerFromHfDir("/nonexistent/tokenizer/dir");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no tokenizer.json"), std::string::npos);

  // A real tokenizer.json cut short.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hf_tokenizer_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ifstream in(std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2/tokenizer.json",
                   std::ios::binary);
  std::stringstream whole;
  whole << in.rdbuf();
  std::ofstream(dir / "tokenizer.json", std::ios::binary) << whole.str().substr(0, 100000);
  auto truncated = LoadTokenizerFromHfDir(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace vllm
