// TokenByteStrings: the bytes a token adds in the middle of a text, for SentencePiece, byte-level
// BPE, WordPiece and tokenizer.json vocabularies — checked against decoding whole sequences.
#include "tokenizer/token_bytes.h"

#include <gtest/gtest.h>

#include "formats/gguf_file.h"
#include "tokenizer/hf/hf_tokenizer.h"

namespace vllm {
namespace {

std::unique_ptr<Tokenizer> LoadGgufVocab(const std::string& name) {
  static std::vector<std::unique_ptr<GgufFile>> files;  // tokenizers copy what they need
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-" + name + ".gguf");
  EXPECT_TRUE(file.ok()) << file.error();
  auto tokenizer = LoadTokenizerFromGguf(**file);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.error();
  files.push_back(std::move(*file));
  return std::move(*tokenizer);
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
  auto tokenizer = LoadGgufVocab("llama-spm");
  const auto token_bytes = TokenByteStrings(*tokenizer);
  EXPECT_EQ(token_bytes[tokenizer->Encode(" the", false).back()], " the");
  EXPECT_EQ(token_bytes[13], "\n");  // <0x0A>
  EXPECT_EQ(token_bytes[tokenizer->bos_id()], "");
  EXPECT_EQ(token_bytes[tokenizer->eos_id()], "");
  ExpectConcatenationDecodes(*tokenizer, " Hello world,\n\tthe café 🚀 naïve");
}

TEST(TokenBytesTest, ByteLevelBpeAndWordPiece) {
  auto gpt2 = LoadGgufVocab("gpt-2");
  EXPECT_EQ(TokenByteStrings(*gpt2)[gpt2->Encode(" the", false).back()], " the");
  ExpectConcatenationDecodes(*gpt2, " Hello world,\n\tthe café 🚀 naïve");
  auto bert = LoadGgufVocab("bert-bge");
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
