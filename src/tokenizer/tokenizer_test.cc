// Unit tests of the tokenizer pieces on the real vocabularies in ../shared.
#include "tokenizer/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "common/utf8.h"
#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/incremental_detokenizer.h"
#include "tokenizer/token_bytes.h"

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> LoadVocab(const std::string& name) {
  static std::vector<std::unique_ptr<GgufFile>> files;  // tokenizers copy what they need
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-" + name + ".gguf");
  EXPECT_TRUE(file.ok()) << file.error();
  auto tokenizer = LoadTokenizerFromGguf(**file);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.error();
  files.push_back(std::move(*file));
  return std::move(*tokenizer);
}

TEST(Utf8Test, FindsIncompleteTails) {
  EXPECT_EQ(IncompleteUtf8Suffix("abc"), 0u);
  EXPECT_EQ(IncompleteUtf8Suffix("a\xf0\x9f"), 2u);          // 2 of the 4 bytes of an emoji
  EXPECT_EQ(IncompleteUtf8Suffix("a\xf0\x9f\x9a\x80"), 0u);  // the whole emoji
  EXPECT_EQ(IncompleteUtf8Suffix("\xc3"), 1u);
  EXPECT_EQ(SplitUtf8Characters("a\xc3\xa9\xff").size(), 3u);  // invalid byte stands alone
}

TEST(TokenizerTest, SpmAddsBosAndParsesSpecialTokens) {
  auto tokenizer = LoadVocab("llama-spm");
  auto ids = tokenizer->Encode("Hello</s>world", /*add_special_tokens=*/true);
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), tokenizer->bos_id());
  EXPECT_NE(std::find(ids.begin(), ids.end(), tokenizer->eos_id()), ids.end());
  // As llama.cpp (and SentencePiece's legacy mode): text after a special token gets a ▁ prefix.
  EXPECT_EQ(tokenizer->Decode(ids, /*skip_special_tokens=*/true), "Hello world");
  EXPECT_EQ(tokenizer->Decode(ids, /*skip_special_tokens=*/false), "<s> Hello</s> world");
}

TEST(TokenizerTest, DemoModelPromptIds) {
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf");
  ASSERT_TRUE(file.ok()) << file.error();
  auto tokenizer = LoadTokenizerFromGguf(**file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  // <s> ▁Once ▁upon ▁a ▁time
  EXPECT_THAT((*tokenizer)->Encode("Once upon a time", true), ElementsAre(1, 403, 407, 261, 378));
  EXPECT_EQ((*tokenizer)->TokenToPiece(403), "\xe2\x96\x81Once");
  EXPECT_EQ((*tokenizer)->Decode({{1, 403, 407, 261, 378}}, true), "Once upon a time");
}

TEST(TokenizerTest, BertAddsClsAndSep) {
  auto bert = LoadVocab("bert-bge");
  // [CLS] hello world [SEP]; bge names [CLS] by tokenizer.ggml.cls_token_id only.
  EXPECT_THAT(bert->Encode("Hello World", true), ElementsAre(101, 7592, 2088, 102));
  EXPECT_THAT(bert->Encode("Hello World", false), ElementsAre(7592, 2088));
  EXPECT_EQ(bert->bos_id(), 101);
  EXPECT_EQ(bert->Decode({{101, 7592, 2088, 102}}, true), "hello world");
  EXPECT_EQ(bert->Decode({{101, 7592, 2088, 102}}, false), "[CLS] hello world [SEP]");
}

// Greedy longest match looks at most the longest token's bytes ahead, so a word of 200k letters
// is pieces covering it (▁aaa… then aaa…), in time linear in its length.
TEST(TokenizerTest, BertLongWordIsPiecesCoveringIt) {
  auto bert = LoadVocab("bert-bge");
  const std::string word(200'000, 'a');
  const std::vector<int32_t> ids = bert->Encode(word, false);
  ASSERT_GT(ids.size(), 1u);
  EXPECT_EQ(bert->Decode(ids, false), word);
}

// bge's BERT vocabulary: [CLS] hello world [SEP] how are you [SEP], segments 0 then 1.
TEST(TokenizerTest, BertEncodesPairs) {
  auto bert = LoadVocab("bert-bge");
  const Tokenizer::EncodedPair pair = bert->EncodePair("Hello World", "how are you");
  const std::vector<int32_t> second = bert->Encode("how are you", false);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(pair.ids,
            (std::vector<int32_t>{101, 7592, 2088, 102, second[0], second[1], second[2], 102}));
  EXPECT_THAT(pair.token_type_ids, ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));
  // Empty texts keep their frame.
  const Tokenizer::EncodedPair empty = bert->EncodePair("", "");
  EXPECT_THAT(empty.ids, ElementsAre(101, 102, 102));
  EXPECT_THAT(empty.token_type_ids, ElementsAre(0, 0, 1));
}

// llama.cpp's layout for other vocabularies: [BOS] A [EOS] [SEP] B [EOS] as the add-BOS / EOS /
// SEP flags say; Llama's SentencePiece vocabulary adds only BOS.
TEST(TokenizerTest, SpmEncodesPairsAsLlamaCpp) {
  auto spm = LoadVocab("llama-spm");
  const std::vector<int32_t> first = spm->Encode("Hello", false),
                             second = spm->Encode("world", false);
  std::vector<int32_t> expected = {spm->bos_id()};
  expected.insert(expected.end(), first.begin(), first.end());
  expected.insert(expected.end(), second.begin(), second.end());
  const Tokenizer::EncodedPair pair = spm->EncodePair("Hello", "world");
  EXPECT_EQ(pair.ids, expected);
  EXPECT_EQ(pair.token_type_ids, std::vector<int32_t>(expected.size(), 0));
}

TEST(TokenizerTest, BpeParsesSpecialTokensAndKeepsThemInDecode) {
  auto bpe = LoadVocab("gpt-2");
  std::vector<int32_t> ids = bpe->Encode("Hi<|endoftext|>there", false);
  EXPECT_THAT(ids, ElementsAre(17250, 50256, 8117));
  EXPECT_TRUE(bpe->IsSpecial(50256));
  EXPECT_FALSE(bpe->IsSpecial(17250));
  EXPECT_EQ(bpe->Decode(ids, false), "Hi<|endoftext|>there");
  EXPECT_EQ(bpe->Decode(ids, true), "Hithere");
  EXPECT_EQ(bpe->TokenToPiece(bpe->Encode(" the", false).at(0)), "\xc4\xa0the");  // Ġthe
  EXPECT_EQ(bpe->TokenToPiece(-1), "");
  EXPECT_EQ(bpe->TokenToPiece(static_cast<int32_t>(bpe->vocab_size())), "");
}

// The deltas never end inside a character and concatenate to the full decode.
void ExpectIncrementalDecodeMatches(const Tokenizer& tokenizer, const std::string& prompt,
                                    const std::string& completion) {
  std::vector<int32_t> prompt_ids = tokenizer.Encode(prompt, true);
  std::vector<int32_t> all_ids = tokenizer.Encode(prompt + completion, true);
  ASSERT_TRUE(std::equal(prompt_ids.begin(), prompt_ids.end() - 1, all_ids.begin()));
  // Generated ids: everything after the prompt's ids (the boundary token is re-tokenized).
  std::vector<int32_t> context(all_ids.begin(), all_ids.begin() + prompt_ids.size() - 1);
  IncrementalDetokenizer detokenizer(tokenizer, context, true);
  std::string streamed;
  for (size_t i = context.size(); i < all_ids.size(); ++i) {
    std::string delta = detokenizer.Step(all_ids[i]);
    EXPECT_EQ(IncompleteUtf8Suffix(delta), 0u) << "half a character emitted";
    streamed += delta;
  }
  streamed += detokenizer.Flush();
  std::string full = tokenizer.Decode(all_ids, true);
  std::string context_text = tokenizer.Decode(context, true);
  EXPECT_EQ(context_text + streamed, full);
}

TEST(IncrementalDetokenizerTest, NeverEmitsHalfACharacter) {
  // Emoji and CJK are spelled with <0xXX> byte tokens in the Llama vocabulary.
  auto spm = LoadVocab("llama-spm");
  ExpectIncrementalDecodeMatches(*spm, "Once upon", " a time 🦙🚀 and 東京 at 3 o'clock");
  auto bpe = LoadVocab("gpt-2");
  ExpectIncrementalDecodeMatches(*bpe, "Hello", " wörld 🦙 emoji — dash");
}

TEST(IncrementalDetokenizerTest, HoldsBackAPartialCharacterUntilComplete) {
  auto spm = LoadVocab("llama-spm");
  // 🦙 = F0 9F A6 99 is not in the vocabulary: it ends in four byte tokens.
  std::vector<int32_t> encoded = spm->Encode("\xf0\x9f\xa6\x99", false);
  ASSERT_GE(encoded.size(), 4u);
  std::vector<int32_t> bytes(encoded.end() - 4, encoded.end());
  IncrementalDetokenizer detokenizer(*spm, spm->Encode("Hi", true), true);
  EXPECT_EQ(detokenizer.Step(bytes[0]), "");
  EXPECT_EQ(detokenizer.Step(bytes[1]), "");
  EXPECT_EQ(detokenizer.Step(bytes[2]), "");
  EXPECT_EQ(detokenizer.Step(bytes[3]), "\xf0\x9f\xa6\x99");
}

TEST(IncrementalDetokenizerTest, FromAnEmptyPromptTotalEqualsDecode) {
  auto spm = LoadVocab("llama-spm");
  for (bool skip_special_tokens : {true, false}) {
    // 🦙 and 😶‍🌫️ are spelled as <0xXX> byte tokens; </s> is a control token.
    std::vector<int32_t> ids = spm->Encode("Hi 🦙 there 😶‍🌫️ and 東京</s> end", true);
    IncrementalDetokenizer detokenizer(*spm, {}, skip_special_tokens);
    std::string streamed;
    for (int32_t id : ids) {
      std::string delta = detokenizer.Step(id);
      EXPECT_EQ(IncompleteUtf8Suffix(delta), 0u) << "half a character emitted";
      streamed += delta;
    }
    streamed += detokenizer.Flush();
    EXPECT_EQ(streamed, spm->Decode(ids, skip_special_tokens));
  }
}

// A vocabulary file written with one field broken.
std::string WriteVocab(const std::function<void(GgufWriter&)>& fill) {
  std::string path = ::testing::TempDir() + "/vocab_" + std::to_string(::getpid()) + ".gguf";
  GgufWriter writer;
  fill(writer);
  EXPECT_TRUE(writer.Begin(path).ok());
  EXPECT_TRUE(writer.Finish().ok());
  return path;
}

GgufValue Strings(std::vector<std::string> values) {
  GgufArray array{GgufValueType::kString, {}};
  for (auto& v : values) array.items.push_back(GgufValue::String(v));
  return GgufValue::Array(array);
}

TEST(TokenizerTest, MalformedVocabulariesAreErrors) {
  struct Case {
    std::function<void(GgufWriter&)> fill;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](GgufWriter& w) {}, "no tokenizer"},
      {[](GgufWriter& w) { w.AddMetadata("tokenizer.ggml.model", GgufValue::String("llama")); },
       "missing or empty"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("llama"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a", "b"}));
         GgufArray scores{GgufValueType::kFloat32, {GgufValue::Float32(1)}};
         w.AddMetadata("tokenizer.ggml.scores", GgufValue::Array(scores));
       },
       "scores has 1 entries for 2 tokens"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("llama"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a", "b"}));
         w.AddMetadata("tokenizer.ggml.eos_token_id", GgufValue::Uint32(7));
       },
       "outside the vocabulary"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("rwkv"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a"}));
       },
       "unsupported tokenizer model 'rwkv'"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("gpt2"));
         w.AddMetadata("tokenizer.ggml.pre", GgufValue::String("klingon"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a"}));
       },
       "unsupported pre-tokenizer 'klingon'"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("gpt2"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a"}));
       },
       "no tokenizer.ggml.merges"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("gpt2"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a", "b", "ab"}));
         w.AddMetadata("tokenizer.ggml.merges", Strings({"a b", "ab"}));
       },
       "merges entry 1 ('ab') is not two tokens"},
      {[](GgufWriter& w) {
         w.AddMetadata("tokenizer.ggml.model", GgufValue::String("llama"));
         w.AddMetadata("tokenizer.ggml.tokens", Strings({"a", "b"}));
         GgufArray types{GgufValueType::kInt32, {GgufValue::Int32(1), GgufValue::Int32(9)}};
         w.AddMetadata("tokenizer.ggml.token_type", GgufValue::Array(types));
       },
       "invalid type 9"},
  };
  for (const Case& c : cases) {
    std::string path = WriteVocab(c.fill);
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.error();
    auto tokenizer = LoadTokenizerFromGguf(**file);
    EXPECT_FALSE(tokenizer.ok());
    if (!tokenizer.ok()) {
      EXPECT_THAT(tokenizer.error(), HasSubstr(c.message));
    }
    std::remove(path.c_str());
  }
}

TEST(TokenizerTest, LongInputsEncodeInLinearishTime) {
  auto bpe = LoadVocab("gpt-2");
  std::string text;
  while (text.size() < 200000) text += "The quick brown fox jumps over the lazy dog. 12345 ";
  auto start = std::chrono::steady_clock::now();
  auto ids = bpe->Encode(text, false);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(ids.size(), 40000u);
  EXPECT_LT(seconds, 5.0);  // a quadratic merge loop would take minutes
  EXPECT_EQ(bpe->Decode(ids, false), text);
}

// The merges turn "abc" into a + bc (there is no merge "a bc"), though "abc" is a token: Llama 3's
// pre-tokenizer emits a word that is a token whole.
TEST(TokenizerTest, LlamaThreeIgnoresMergesForWholeWords) {
  for (const std::string pre : {"gpt-2", "llama-bpe"}) {
    std::string path = WriteVocab([&](GgufWriter& w) {
      w.AddMetadata("tokenizer.ggml.model", GgufValue::String("gpt2"));
      w.AddMetadata("tokenizer.ggml.pre", GgufValue::String(pre));
      w.AddMetadata("tokenizer.ggml.tokens", Strings({"a", "b", "c", "bc", "abc", "<s>"}));
      w.AddMetadata("tokenizer.ggml.merges", Strings({"b c"}));
      w.AddMetadata("tokenizer.ggml.bos_token_id", GgufValue::Uint32(5));
    });
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.error();
    auto tokenizer = LoadTokenizerFromGguf(**file);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
    std::vector<int32_t> ids = (*tokenizer)->Encode("abc", /*add_special_tokens=*/true);
    if (pre == "gpt-2") {
      EXPECT_THAT(ids, ElementsAre(0, 3));
    } else {
      EXPECT_THAT(ids, ElementsAre(5, 4));  // Llama 3 adds BOS by default
    }
    std::remove(path.c_str());
  }
}

// Decoding "a" then any ids equals "a" followed by the ids' token bytes.
void ExpectConcatenationDecodes(const Tokenizer& tokenizer, const std::string& text) {
  const std::vector<std::string> token_bytes = TokenByteStrings(tokenizer);
  ASSERT_EQ(token_bytes.size(), static_cast<size_t>(tokenizer.vocab_size()));
  std::vector<int32_t> ids = tokenizer.Encode("a", false);
  ASSERT_FALSE(ids.empty());
  ids.resize(1);
  const std::string prefix = tokenizer.Decode(ids, true);
  std::string joined = prefix;
  for (int32_t id : tokenizer.Encode(text, false)) {
    ids.push_back(id);
    joined += token_bytes[id];
  }
  EXPECT_EQ(joined, tokenizer.Decode(ids, true)) << text;
}

TEST(TokenBytesTest, SentencePieceKeepsSpacesAndRawBytes) {
  auto tokenizer = LoadVocab("llama-spm");
  const auto token_bytes = TokenByteStrings(*tokenizer);
  EXPECT_EQ(token_bytes[tokenizer->Encode(" the", false).back()], " the");
  EXPECT_EQ(token_bytes[13], "\n");  // <0x0A>
  EXPECT_EQ(token_bytes[tokenizer->bos_id()], "");
  EXPECT_EQ(token_bytes[tokenizer->eos_id()], "");
  ExpectConcatenationDecodes(*tokenizer, " Hello world,\n\tthe café 🚀 naïve");
}

TEST(TokenBytesTest, ByteLevelBpeAndWordPiece) {
  auto gpt2 = LoadVocab("gpt-2");
  EXPECT_EQ(TokenByteStrings(*gpt2)[gpt2->Encode(" the", false).back()], " the");
  ExpectConcatenationDecodes(*gpt2, " Hello world,\n\tthe café 🚀 naïve");
  auto bert = LoadVocab("bert-bge");
  const auto token_bytes = TokenByteStrings(*bert);
  const auto ids = bert->Encode("playing", false);
  ASSERT_GE(ids.size(), 1u);
  EXPECT_EQ(token_bytes[ids.front()].front(), ' ');  // a word start follows a space
}

TEST(TokenBytesTest, TokenizerJsonVocabulary) {
  auto tokenizer = LoadTokenizerFromHfDir(std::string(VLLM_SHARED_DIR) + "/tokenizers/qwen3");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  const auto token_bytes = TokenByteStrings(**tokenizer);
  EXPECT_EQ(token_bytes[(*tokenizer)->Encode(" the", false).back()], " the");
  ExpectConcatenationDecodes(**tokenizer, " Hello world,\n\tthe café 🚀 naïve <think>x</think>");
}

}  // namespace
}  // namespace vllm
