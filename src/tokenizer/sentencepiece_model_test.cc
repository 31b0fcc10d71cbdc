// The tokenizer.model (SentencePiece ModelProto) reader and loader: fields as the proto numbers
// them, the real stories260K vocabulary written as tokenizer.model tokenizing exactly as its GGUF,
// tokenizer_config.json's settings, the directory choice of --tokenizer-mode, and malformed files
// (truncated, bit-flipped) refused with an Error, never a crash.
#include "tokenizer/sentencepiece_model.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "common/temp_test_dir.h"
#include "formats/gguf_file.h"
#include "tokenizer/sentencepiece_loader.h"
#include "tokenizer/test_sentencepiece_model.h"
#include "tokenizer/tokenizer_mode.h"
#include "tokenizer/ugm_tokenizer.h"

namespace vllm {
namespace {

using Ids = std::vector<int32_t>;
using Type = SentencePieceModel::Type;

GgufVocab StoriesVocab() {
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf");
  EXPECT_TRUE(file.ok()) << file.error();
  auto vocab = LoadGgufVocab(**file);
  EXPECT_TRUE(vocab.ok()) << vocab.error();
  return *vocab;
}

std::unique_ptr<Tokenizer> StoriesGgufTokenizer() {
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf");
  EXPECT_TRUE(file.ok()) << file.error();
  auto tokenizer = LoadTokenizerFromGguf(**file);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.error();
  return std::move(*tokenizer);
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Unicode, characters only byte fallback can spell (the vocabulary has 512 pieces), leading and
// repeated spaces, newlines, special-token text.
const std::vector<std::string>& Texts() {
  static const std::vector<std::string> texts = {
      "Once upon a time, there was a little girl named Lily.",
      "",
      " ",
      "  leading spaces",
      "trailing  ",
      "a\nb\n\n\tc",
      "café naïve Straße",
      "東京 こんにちは 😀🎉",
      "<s>Hello</s> world<unk>!",
      "Tom said: \"Let's go!\" 123 4.5",
  };
  return texts;
}

// A small model with every kind of piece, for the field and fuzz tests.
std::string SmallModel(Type type) {
  GgufVocab vocab;
  vocab.tokens = {"<unk>",
                  "<s>",
                  "</s>",
                  "<pad>",
                  "<0x41>",
                  "\xe2\x96\x81",
                  "a",
                  "b",
                  "ab",
                  "\xe2\x96\x81"
                  "ab",
                  "<user>",
                  "c"};
  vocab.scores = {0, 0, 0, 0, 0, -1.0f, -2.0f, -2.5f, -0.5f, -0.25f, 0, -3.0f};
  vocab.types.assign(vocab.tokens.size(), TokenType::kNormal);
  vocab.types[0] = TokenType::kUnknown;
  vocab.types[1] = vocab.types[2] = TokenType::kControl;
  vocab.types[3] = TokenType::kUnused;
  vocab.types[4] = TokenType::kByte;
  vocab.types[10] = TokenType::kUserDefined;
  vocab.unk_id = 0;
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  vocab.pad_id = -1;
  return test::SentencePieceModelFromVocab(vocab, type);
}

TEST(SentencePieceModelTest, ReadsTheFieldsTheProtoNumbers) {
  auto model = ParseSentencePieceModel(SmallModel(Type::kBpe));
  ASSERT_TRUE(model.ok()) << model.error();
  ASSERT_EQ(model->pieces.size(), 12u);
  EXPECT_EQ(model->pieces[9].text,
            "\xe2\x96\x81"
            "ab");
  EXPECT_FLOAT_EQ(model->pieces[9].score, -0.25f);
  EXPECT_EQ(model->pieces[0].type, TokenType::kUnknown);
  EXPECT_EQ(model->pieces[3].type, TokenType::kUnused);
  EXPECT_EQ(model->pieces[4].type, TokenType::kByte);
  EXPECT_EQ(model->pieces[10].type, TokenType::kUserDefined);
  EXPECT_EQ(model->pieces[11].type, TokenType::kNormal);
  EXPECT_EQ(model->model_type, Type::kBpe);
  EXPECT_TRUE(model->byte_fallback);
  EXPECT_EQ(model->unk_id, 0);
  EXPECT_EQ(model->bos_id, 1);
  EXPECT_EQ(model->eos_id, 2);
  EXPECT_EQ(model->pad_id, -1);  // a 10-byte sign-extended varint
  EXPECT_EQ(model->normalizer_name, "identity");
  EXPECT_TRUE(model->add_dummy_prefix);
  EXPECT_FALSE(model->remove_extra_whitespaces);
  EXPECT_TRUE(model->escape_whitespaces);  // absent: the proto's default

  // Defaults of a file that holds only pieces; unknown fields (self_test_data = 4) are skipped.
  std::string minimal;
  std::string piece;
  test::AppendBytesField(1, "x", &piece);
  test::AppendBytesField(1, piece, &minimal);
  test::AppendBytesField(4, "ignored", &minimal);
  piece.clear();
  test::AppendBytesField(1, "y", &piece);
  test::AppendBytesField(1, piece, &minimal);
  test::AppendBytesField(1, "", &piece);  // pieces[2]: empty text below
  auto defaults = ParseSentencePieceModel(minimal);
  ASSERT_FALSE(defaults.ok());  // bos_id 1 is fine, eos_id 2 is outside two pieces
  EXPECT_EQ(defaults.error(), "tokenizer.model: trainer_spec.eos_id = 2 is outside the 2 pieces");
}

TEST(SentencePieceModelTest, MalformedFilesAreClearErrors) {
  const std::string valid = SmallModel(Type::kBpe);
  struct Case {
    std::string bytes;
    std::string message;
  };
  std::string wrong_wire_type;
  test::AppendVarintField(1, 5, &wrong_wire_type);
  std::string bad_type, bad_piece;
  test::AppendBytesField(1, "x", &bad_piece);
  test::AppendVarintField(3, 9, &bad_piece);
  test::AppendBytesField(1, bad_piece, &bad_type);
  std::string word_model;
  {
    std::string trainer;
    test::AppendVarintField(3, 3, &trainer);
    word_model = valid;
    test::AppendBytesField(2, trainer, &word_model);
  }
  std::string twice = valid;
  {
    std::string piece;
    test::AppendBytesField(1, "ab", &piece);
    test::AppendBytesField(1, piece, &twice);
  }
  const std::vector<Case> cases = {
      {"", "no pieces"},
      {std::string("\x0a\x80", 2), "a varint runs past the end"},
      {std::string("\x0a\x05"
                   "ab",
                   4),
       "a length of 5 bytes runs past the end (2 left)"},
      {std::string("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11),
       "a varint overflows 64 bits"},
      {std::string("\x0b", 1), "wire type 3 of field 1 is not supported"},
      {std::string("\x00", 1), "field number 0 is invalid"},
      {wrong_wire_type, "a ModelProto message field should be length-delimited, not wire type 0"},
      {bad_type, "pieces[0] at byte 7: type 9 is not a SentencePiece type"},
      {twice, "piece 12 ('ab') is defined twice"},
  };
  for (const Case& c : cases) {
    auto model = ParseSentencePieceModel(c.bytes);
    ASSERT_FALSE(model.ok()) << c.message;
    EXPECT_NE(model.error().find(c.message), std::string::npos) << model.error();
  }
  auto word = LoadSentencePieceTokenizer(word_model, "", "");
  ASSERT_FALSE(word.ok());
  EXPECT_NE(word.error().find("model_type WORD is not supported"), std::string::npos)
      << word.error();
}

// Every truncation and every single-bit flip of a valid file either loads (and then encodes and
// decodes) or is an Error; random multi-byte damage to the real vocabulary's file too.
TEST(SentencePieceModelTest, TruncatedAndBitFlippedFilesNeverCrash) {
  auto exercise = [](const std::string& bytes) {
    auto tokenizer = LoadSentencePieceTokenizer(bytes, "", "");
    if (!tokenizer.ok()) {
      EXPECT_FALSE(tokenizer.error().empty());
      return false;
    }
    const Ids ids = (*tokenizer)->Encode(" ab<user>c\xc3\xa9 A", true);
    (*tokenizer)->Decode(ids, false);
    return true;
  };
  for (Type type : {Type::kBpe, Type::kUnigram}) {
    const std::string valid = SmallModel(type);
    ASSERT_TRUE(exercise(valid));
    int num_refused = 0;
    for (size_t size = 0; size < valid.size(); ++size) {
      num_refused += !exercise(valid.substr(0, size));
    }
    for (size_t bit = 0; bit < valid.size() * 8; ++bit) {
      std::string flipped = valid;
      flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
      num_refused += !exercise(flipped);
    }
    EXPECT_GT(num_refused, 0);
  }
  const std::string stories = test::SentencePieceModelFromVocab(StoriesVocab(), Type::kBpe);
  std::mt19937 rng(43);
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = stories;
    const int num_changes = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < num_changes; ++i)
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    if (trial % 3 == 0) damaged.resize(rng() % damaged.size());
    exercise(damaged);
  }
}

// The real stories260K vocabulary (SentencePiece BPE with byte fallback) as tokenizer.model in a
// Hugging Face directory: the ids and text of its GGUF tokenizer, under auto and slow modes.
TEST(SentencePieceModelTest, StoriesVocabularyTokenizesLikeItsGguf) {
  const GgufVocab vocab = StoriesVocab();
  ASSERT_EQ(vocab.model, "llama");
  TempTestDir dir("spm_stories");
  WriteFile(dir.File("tokenizer.model"), test::SentencePieceModelFromVocab(vocab, Type::kBpe));
  const auto gguf = StoriesGgufTokenizer();
  for (TokenizerMode mode : {TokenizerMode::kAuto, TokenizerMode::kSlow}) {
    auto loaded = LoadTokenizerFromDirectory(dir.File(""), mode);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    const Tokenizer& tokenizer = *loaded->tokenizer;
    EXPECT_FALSE(loaded->is_tekken);
    EXPECT_EQ(tokenizer.vocab_size(), gguf->vocab_size());
    EXPECT_EQ(tokenizer.bos_id(), 1);
    EXPECT_EQ(tokenizer.eos_id(), 2);
    for (const std::string& text : Texts()) {
      for (bool add_special : {false, true}) {
        const Ids ids = tokenizer.Encode(text, add_special);
        EXPECT_EQ(ids, gguf->Encode(text, add_special)) << text;
        for (bool skip : {false, true}) {
          EXPECT_EQ(tokenizer.Decode(ids, skip), gguf->Decode(ids, skip)) << text;
        }
      }
    }
    EXPECT_EQ(tokenizer.Encode("Hi", true).front(), 1);  // LlamaTokenizer: BOS, no EOS
    EXPECT_NE(tokenizer.Encode("Hi", true).back(), 2);
    EXPECT_EQ(tokenizer.Decode(tokenizer.Encode("ö 😀", false), true), "ö 😀");
  }
}

// A Unigram model goes to UgmTokenizer (T5Tokenizer's default: EOS, no BOS) with the model's
// normalizer settings.
TEST(SentencePieceModelTest, UnigramModelRunsTheUnigramTokenizer) {
  GgufVocab vocab = StoriesVocab();
  vocab.model = "t5";
  vocab.remove_extra_whitespaces = true;
  const std::string bytes = test::SentencePieceModelFromVocab(vocab, Type::kUnigram);
  auto reference = UgmTokenizer::Create(vocab);
  ASSERT_TRUE(reference.ok()) << reference.error();
  auto tokenizer = LoadSentencePieceTokenizer(bytes, "", "");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  for (const std::string& text : Texts()) {
    EXPECT_EQ((*tokenizer)->Encode(text, true), (*reference)->Encode(text, true)) << text;
  }
  EXPECT_EQ((*tokenizer)->Encode("Hi", true).back(), 2);
  EXPECT_NE((*tokenizer)->Encode("Hi", true).front(), 1);
  // Runs of spaces collapse (remove_extra_whitespaces), unlike the BPE path.
  EXPECT_EQ((*tokenizer)->Encode("a   b", false), (*tokenizer)->Encode("a b", false));
}

TEST(SentencePieceModelTest, TokenizerConfigSetsSpecialTokensAndAddedTokens) {
  const std::string bytes = test::SentencePieceModelFromVocab(StoriesVocab(), Type::kBpe);
  const std::string config = R"({
    "add_bos_token": false, "add_eos_token": true,
    "bos_token": {"__type": "AddedToken", "content": "<s>", "special": true},
    "eos_token": "</s>",
    "added_tokens_decoder": {
      "2": {"content": "</s>", "special": true},
      "513": {"content": "<|end|>", "special": true},
      "512": {"content": "[INST]", "special": false}}})";
  auto tokenizer = LoadSentencePieceTokenizer(bytes, config, "");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  const Tokenizer& t = **tokenizer;
  EXPECT_EQ(t.vocab_size(), 514);
  const Ids hi = t.Encode("Hi", false);
  Ids expected = {512};
  expected.insert(expected.end(), hi.begin(), hi.end());
  expected.push_back(513);
  expected.push_back(2);  // add_eos_token; no BOS
  EXPECT_EQ(t.Encode("[INST]Hi<|end|>", true), expected);
  EXPECT_TRUE(t.IsSpecial(513));
  EXPECT_FALSE(t.IsSpecial(512));
  // Legacy (the default): the text after an added token gets SentencePiece's space prefix too.
  EXPECT_EQ(t.Decode(expected, true), "[INST] Hi");
  EXPECT_EQ(t.Decode(expected, false), "[INST] Hi<|end|></s>");

  // special_tokens_map.json names EOS when tokenizer_config.json does not; null means none.
  auto mapped = LoadSentencePieceTokenizer(bytes, R"({"bos_token": null})",
                                           R"({"eos_token": {"content": "<unk>"}})");
  ASSERT_TRUE(mapped.ok()) << mapped.error();
  EXPECT_EQ((*mapped)->bos_id(), -1);
  EXPECT_EQ((*mapped)->eos_id(), 0);
  EXPECT_EQ((*mapped)->Encode("Hi", true), (*mapped)->Encode("Hi", false));

  for (const auto& [bad_config, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"added_tokens_decoder": {"600": {"content": "<x>"}}})",
            "id 600 leaves a gap after the 512 tokens before it"},
           {R"({"bos_token": "<nope>"})",
            "bos_token '<nope>' is neither a piece of tokenizer.model nor an added token"},
           {R"({"add_bos_token": "yes"})", "add_bos_token: expected true or false"},
           {R"({"added_tokens_decoder": {"x": {"content": "<x>"}}})", "the key is not a token id"},
           {"[1,", "tokenizer_config.json is not valid JSON"}}) {
    auto refused = LoadSentencePieceTokenizer(bytes, bad_config, "");
    ASSERT_FALSE(refused.ok()) << bad_config;
    EXPECT_NE(refused.error().find(message), std::string::npos) << refused.error();
  }
}

// "legacy": false (Llama-2's own files): the space prefix only at the start of the text.
TEST(SentencePieceModelTest, NonLegacyAddsTheSpacePrefixOnlyAtTheStart) {
  GgufVocab vocab = StoriesVocab();
  const std::string bytes = test::SentencePieceModelFromVocab(vocab, Type::kBpe);
  vocab.add_space_prefix = false;
  auto unprefixed =
      LoadSentencePieceTokenizer(test::SentencePieceModelFromVocab(vocab, Type::kBpe), "", "");
  auto legacy = LoadSentencePieceTokenizer(bytes, R"({"legacy": true})", "");
  auto current = LoadSentencePieceTokenizer(bytes, R"({"legacy": false})", "");
  ASSERT_TRUE(unprefixed.ok() && legacy.ok() && current.ok());
  const Ids prefixed_hi = (*legacy)->Encode("Hi", false);
  const Ids bare_hi = (*unprefixed)->Encode("Hi", false);
  ASSERT_NE(prefixed_hi, bare_hi);
  auto join = [](std::vector<Ids> parts) {
    Ids ids;
    for (const Ids& part : parts) ids.insert(ids.end(), part.begin(), part.end());
    return ids;
  };
  EXPECT_EQ((*legacy)->Encode("<s>Hi", false), join({{1}, prefixed_hi}));
  EXPECT_EQ((*legacy)->Encode("Hi</s>Hi", false), join({prefixed_hi, {2}, prefixed_hi}));
  EXPECT_EQ((*current)->Encode("<s>Hi", false), join({{1}, bare_hi}));
  EXPECT_EQ((*current)->Encode("Hi</s>Hi", false), join({prefixed_hi, {2}, bare_hi}));
  EXPECT_EQ((*current)->Encode("Hi</s> Hi", false), join({prefixed_hi, {2}, prefixed_hi}));
}

// auto: tokenizer.json first, then tekken.json, then tokenizer.model; slow: tokenizer.model first.
TEST(SentencePieceModelTest, DirectoriesFallBackToTokenizerModel) {
  TempTestDir dir("spm_choice");
  WriteFile(dir.File("tokenizer.model"),
            test::SentencePieceModelFromVocab(StoriesVocab(), Type::kBpe));
  WriteFile(dir.File("tokenizer_config.json"), R"({"add_eos_token": true})");
  auto loaded = LoadTokenizerFromDirectory(dir.File(""), TokenizerMode::kAuto);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->tokenizer->Encode("Hi", true).back(), 2);
  auto mistral = LoadTokenizerFromDirectory(dir.File(""), TokenizerMode::kMistral);
  ASSERT_FALSE(mistral.ok());
  EXPECT_NE(mistral.error().find("no tekken.json"), std::string::npos);

  // A tokenizer.json beside it wins (here an unusable one, which shows which file was read).
  WriteFile(dir.File("tokenizer.json"), "{}");
  auto json_first = LoadTokenizerFromDirectory(dir.File(""), TokenizerMode::kAuto);
  ASSERT_FALSE(json_first.ok());
  EXPECT_NE(json_first.error().find("tokenizer.json"), std::string::npos) << json_first.error();
  // slow reads tokenizer.model, as transformers' slow (SentencePiece) classes do.
  auto slow = LoadTokenizerFromDirectory(dir.File(""), TokenizerMode::kSlow);
  ASSERT_TRUE(slow.ok()) << slow.error();
  EXPECT_EQ(slow->tokenizer->Encode("Hi", true).back(), 2);

  TempTestDir empty("spm_none");
  auto none = LoadTokenizerFromDirectory(empty.File(""), TokenizerMode::kSlow);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("no tokenizer.json, tekken.json or tokenizer.model"),
            std::string::npos);

  TempTestDir broken("spm_broken");
  WriteFile(broken.File("tokenizer.model"), "not a model");
  auto refused = LoadTokenizerFromDirectory(broken.File(""), TokenizerMode::kAuto);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("tokenizer.model: "), std::string::npos) << refused.error();
}

}  // namespace
}  // namespace vllm
