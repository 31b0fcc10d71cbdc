// Every case of every ../shared/vocab/*.gguf.inp must tokenize (add_special = false, special
// tokens parsed) to exactly the ids in the matching .out, as llama.cpp's test-tokenizer-0 does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/gguf_file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/sentencepiece_loader.h"
#include "tokenizer/test_sentencepiece_model.h"
#include "tokenizer/tokenizer.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Cases are separated by lines "__ggml_vocab_test__"; the newline before a separator belongs to it.
std::vector<std::string> ReadCases(const fs::path& path) {
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::string text = ReadFile(path);
  std::vector<std::string> cases;
  size_t start = 0, found;
  while ((found = text.find(separator, start)) != std::string::npos) {
    cases.push_back(text.substr(start, found - start));
    start = found + separator.size();
  }
  return cases;
}

std::vector<std::vector<int32_t>> ReadExpected(const fs::path& path) {
  std::vector<std::vector<int32_t>> expected;
  std::istringstream in(ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream numbers(line);
    std::vector<int32_t> ids;
    int32_t id;
    while (numbers >> id) ids.push_back(id);
    expected.push_back(ids);
  }
  return expected;
}

std::vector<fs::path> VocabFiles(bool with_cases) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(std::string(VLLM_SHARED_DIR) + "/vocab")) {
    const fs::path& path = entry.path();
    if (path.extension() != ".gguf") continue;
    bool has_cases = fs::exists(path.string() + ".inp") && fs::exists(path.string() + ".out");
    if (has_cases == with_cases) files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "llama-spm" for ".../ggml-vocab-llama-spm.gguf".
std::string VocabName(const fs::path& path) {
  std::string name = path.stem().string();
  const std::string prefix = "ggml-vocab-";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// The tokenizer of a vocabulary file; a failure to load is reported and gives nullptr.
std::unique_ptr<Tokenizer> LoadVocabTokenizer(const fs::path& path) {
  auto file = GgufFile::Open(path.string());
  if (!file.ok()) {
    ADD_FAILURE() << file.error();
    return nullptr;
  }
  auto tokenizer = LoadTokenizerFromGguf(**file);
  if (!tokenizer.ok()) {
    ADD_FAILURE() << path.filename() << ": " << tokenizer.error();
    return nullptr;
  }
  return std::move(*tokenizer);
}

TEST(VocabConformanceTest, EveryCaseOfEveryVocabulary) {
  auto files = VocabFiles(/*with_cases=*/true);
  ASSERT_FALSE(files.empty());
  for (const fs::path& path : files) {
    auto tokenizer = LoadVocabTokenizer(path);
    if (!tokenizer) continue;
    auto cases = ReadCases(path.string() + ".inp");
    auto expected = ReadExpected(path.string() + ".out");
    ASSERT_EQ(cases.size(), expected.size()) << path.filename();
    int passed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      auto ids = tokenizer->Encode(cases[i], /*add_special_tokens=*/false);
      if (ids == expected[i]) {
        ++passed;
      } else {
        ADD_FAILURE() << path.filename() << " case " << i << " '" << cases[i] << "'";
      }
    }
    std::printf("%s: %d/%zu\n", VocabName(path).c_str(), passed, cases.size());
  }
}

// The SentencePiece vocabularies (llama.cpp's "llama": Llama, Phi-3) written as the
// tokenizer.model a slow-only repository ships: every reference case through that loader.
TEST(VocabConformanceTest, SentencePieceVocabulariesAsTokenizerModel) {
  int num_vocabularies = 0;
  for (const fs::path& path : VocabFiles(/*with_cases=*/true)) {
    auto file = GgufFile::Open(path.string());
    ASSERT_TRUE(file.ok()) << file.error();
    auto vocab = LoadGgufVocab(**file);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    if (vocab->model != "llama") continue;
    ++num_vocabularies;
    auto tokenizer = LoadSentencePieceTokenizer(
        test::SentencePieceModelFromVocab(*vocab, SentencePieceModel::Type::kBpe), "", "");
    ASSERT_TRUE(tokenizer.ok()) << path.filename() << ": " << tokenizer.error();
    auto cases = ReadCases(path.string() + ".inp");
    auto expected = ReadExpected(path.string() + ".out");
    ASSERT_EQ(cases.size(), expected.size()) << path.filename();
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ((*tokenizer)->Encode(cases[i], /*add_special_tokens=*/false), expected[i])
          << path.filename() << " case " << i << " '" << cases[i] << "'";
    }
  }
  EXPECT_GE(num_vocabularies, 1);
}

// decode(encode(x)) == x where the vocabulary can represent x: on fixed strings for every
// vocabulary (those without reference cases, baichuan and gpt-neox, included) and on every
// reference case. Checked: byte-level BPE (every byte has a token) and SentencePiece with byte
// fallback (the space prefix Encode adds is the one Decode drops). Not checked: WordPiece (bert),
// which lowercases, strips accents, drops control characters and collapses whitespace.
bool IsInvertible(const fs::path& path) {
  return path.filename().string().find("bert") == std::string::npos;
}

TEST(VocabConformanceTest, DecodeInvertsEncode) {
  std::vector<fs::path> files = VocabFiles(true);
  for (const auto& extra : VocabFiles(false)) files.push_back(extra);
  const std::vector<std::string> texts = {"Hello world",
                                          " Hello World!",
                                          "w048 7tuijk dsdfhu",
                                          "нещо на Български",
                                          "🚀 (normal) 😶‍🌫️ (multiple emojis)",
                                          "   leading and trailing   ",
                                          "tab\tand\nnewline"};
  for (const fs::path& path : files) {
    auto tokenizer = LoadVocabTokenizer(path);
    if (!tokenizer) continue;
    if (!IsInvertible(path)) continue;
    std::vector<std::string> all_texts = texts;
    if (fs::exists(path.string() + ".inp")) {
      for (const std::string& text : ReadCases(path.string() + ".inp")) all_texts.push_back(text);
    }
    for (const std::string& text : all_texts) {
      auto ids = tokenizer->Encode(text, /*add_special_tokens=*/false);
      EXPECT_EQ(tokenizer->Decode(ids, /*skip_special_tokens=*/false), text) << path.filename();
    }
  }
}

}  // namespace
}  // namespace vllm
