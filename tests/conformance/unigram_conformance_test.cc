// Unigram (SentencePiece) tokenizers against SentencePiece itself. unigram_reference.py trains
// small Unigram models on a multilingual corpus (byte_fallback off and on; whitespace runs kept,
// GGUF only) and writes, for each, an XLM-RoBERTa-style tokenizer.json, the fields of a llama.cpp
// "t5" GGUF vocabulary, SentencePiece's own tokenizer.model and sentencepiece's ids for a few
// hundred texts. All three loaders must give every id.
//
// Where Hugging Face tokenizers (the tokenizer.json path, vLLM's tokenizer) and SentencePiece
// differ, the test follows Hugging Face; each such case is listed in KnownDeviations with its
// reason. The GGUF path is llama.cpp's UGM tokenizer, which follows SentencePiece here. Known
// differences the generated texts avoid (so both references agree on every other text):
//  - Hugging Face's Unigram trie holds every vocabulary entry, so text spelling a control or
//    byte piece ("<s>", "<0x41>") can match it; SentencePiece matches only normal pieces. The
//    added tokens <s> </s> <pad> <unk> <mask> are split out before, as in real files.
//  - Hugging Face sums scores in f64, SentencePiece in f32: exact ties may break differently.
//  - llama.cpp (GGUF) has no byte fallback; vllm-cpp falls back to <0xXX> pieces when the
//    vocabulary has them, as SentencePiece does (checked by the byte_fallback variant).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/sentencepiece_loader.h"
#include "tokenizer/tokenizer.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Ids = std::vector<int32_t>;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs the reference script once for the whole test binary (its output is removed at exit);
// empty on failure.
const fs::path& ReferenceDir() {
  struct RemovedAtExit {
    fs::path path;
    ~RemovedAtExit() {
      std::error_code error;
      fs::remove_all(path, error);
      fs::remove(path.string() + ".log", error);
    }
  };
  static const RemovedAtExit dir{[] {
    const fs::path out =
        fs::path(::testing::TempDir()) / ("unigram_reference_" + std::to_string(::getpid()));
    const std::string command = std::string(VLLM_PYTHON3) + " " + VLLM_UNIGRAM_REFERENCE + " " +
                                out.string() + " > " + (out.string() + ".log") + " 2>&1";
    if (std::system(command.c_str()) != 0) {
      ADD_FAILURE() << command << " failed:\n" << ReadFile(out.string() + ".log");
      return fs::path();
    }
    return out;
  }()};
  return dir.path;
}

struct Case {
  std::string text;
  Ids ids;  // SentencePiece's ids
  std::string decoded;
};

std::vector<Case> ReadCases(const fs::path& dir) {
  std::vector<Case> cases;
  for (const Json& record : Json::parse(ReadFile(dir / "cases.json"))) {
    cases.push_back({record["text"].get<std::string>(), record["ids"].get<Ids>(),
                     record["decoded"].get<std::string>()});
  }
  return cases;
}

// SentencePiece's id → the tokenizer.json id (XLM-RoBERTa's fairseq layout: <s> 0, <pad> 1,
// </s> 2, <unk> 3, then SentencePiece's pieces from its id 3 on, shifted by one).
Ids FairseqIds(const Ids& spm_ids) {
  Ids ids;
  for (int32_t id : spm_ids) {
    ids.push_back(id == 0 ? 3 : id == 1 ? 0 : id == 2 ? 2 : id + 1);  // <unk>, <s>, </s>, pieces
  }
  return ids;
}

// Texts that Hugging Face tokenizers is known to tokenize differently from SentencePiece: its
// result on `text` is SentencePiece's on `equivalent` (also a case of the reference data).
struct KnownDeviation {
  std::string text;
  std::string equivalent;
  std::string reason;
};
const std::vector<KnownDeviation>& KnownDeviations() {
  static const std::vector<KnownDeviation> deviations = {
      {"a\u0308\u0301", "\u00e4",
       "Hugging Face's Precompiled normalizer replaces a whole grapheme shorter than 6 bytes by "
       "the charsmap entry of its shortest matching prefix (a + U+0308 -> \u00e4), dropping the "
       "U+0301 that SentencePiece's longest-match normalization keeps"},
  };
  return deviations;
}

// A GGUF array of `type` with make(item) for each item of a JSON array.
template <typename Make>
GgufValue ArrayOf(GgufValueType type, const Json& items, Make make) {
  GgufArray array{type, {}};
  for (const Json& item : items) array.items.push_back(make(item));
  return GgufValue::Array(std::move(array));
}

// Writes gguf.json's vocabulary as a llama.cpp "t5" GGUF with vllm-cpp's own writer.
fs::path WriteGguf(const fs::path& dir) {
  const Json vocab = Json::parse(ReadFile(dir / "gguf.json"));
  GgufWriter writer;
  writer.AddMetadata("general.architecture", GgufValue::String("t5"));
  writer.AddMetadata("tokenizer.ggml.model", GgufValue::String("t5"));
  writer.AddMetadata("tokenizer.ggml.tokens",
                     ArrayOf(GgufValueType::kString, vocab["tokens"],
                             [](const Json& token) { return GgufValue::String(token); }));
  writer.AddMetadata("tokenizer.ggml.scores",
                     ArrayOf(GgufValueType::kFloat32, vocab["scores"],
                             [](const Json& score) { return GgufValue::Float32(score); }));
  writer.AddMetadata("tokenizer.ggml.token_type",
                     ArrayOf(GgufValueType::kInt32, vocab["types"],
                             [](const Json& type) { return GgufValue::Int32(type); }));
  // As llama.cpp's converter writes it: a uint8 array.
  writer.AddMetadata(
      "tokenizer.ggml.precompiled_charsmap",
      ArrayOf(GgufValueType::kUint8, vocab["precompiled_charsmap"], [](const Json& byte) {
        return GgufValue{GgufValueType::kUint8, byte.get<uint64_t>()};
      }));
  writer.AddMetadata("tokenizer.ggml.add_space_prefix", GgufValue::Bool(vocab["add_space_prefix"]));
  writer.AddMetadata("tokenizer.ggml.remove_extra_whitespaces",
                     GgufValue::Bool(vocab["remove_extra_whitespaces"]));
  writer.AddMetadata("tokenizer.ggml.unknown_token_id", GgufValue::Uint32(vocab["unk_id"]));
  writer.AddMetadata("tokenizer.ggml.bos_token_id", GgufValue::Uint32(vocab["bos_id"]));
  writer.AddMetadata("tokenizer.ggml.eos_token_id", GgufValue::Uint32(vocab["eos_id"]));
  writer.AddMetadata("tokenizer.ggml.add_bos_token", GgufValue::Bool(true));
  writer.AddMetadata("tokenizer.ggml.add_eos_token", GgufValue::Bool(true));
  const fs::path path = dir / "vocab.gguf";
  EXPECT_TRUE(writer.Begin(path.string()).ok());
  EXPECT_TRUE(writer.Finish().ok());
  return path;
}

std::string Show(const std::string& text) {
  return Json(text).dump(-1, ' ', true);  // escaped, so whitespace and controls are visible
}

class UnigramConformance : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (ReferenceDir().empty()) GTEST_SKIP() << "no reference data";
    dir_ = ReferenceDir() / GetParam();
    cases_ = ReadCases(dir_);
    ASSERT_GT(cases_.size(), 300u);
  }

  // Each case's SentencePiece ids, and its text back where no piece is unknown: SentencePiece
  // writes an unknown piece as " ⁇ ", vllm-cpp's decode skips it as special.
  void ExpectSentencePiecesIdsAndText(const Tokenizer& tokenizer) const {
    for (const Case& c : cases_) {
      EXPECT_EQ(tokenizer.Encode(c.text, false), c.ids) << Show(c.text);
      const bool has_unknown = std::find(c.ids.begin(), c.ids.end(), 0) != c.ids.end();
      if (!has_unknown) {
        EXPECT_EQ(tokenizer.Decode(c.ids, true), c.decoded) << Show(c.text);
      }
    }
  }

  fs::path dir_;
  std::vector<Case> cases_;
};

TEST_P(UnigramConformance, TokenizerJsonMatchesSentencePiece) {
  auto tokenizer = LoadTokenizerFromHfJson(ReadFile(dir_ / "tokenizer.json"));
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  std::map<std::string, Ids> expected_by_text;
  for (const Case& c : cases_) expected_by_text[c.text] = FairseqIds(c.ids);
  for (const KnownDeviation& deviation : KnownDeviations()) {
    ASSERT_TRUE(expected_by_text.count(deviation.equivalent)) << Show(deviation.equivalent);
    expected_by_text[deviation.text] = expected_by_text[deviation.equivalent];
  }
  for (const auto& [text, expected] : expected_by_text) {
    EXPECT_EQ((*tokenizer)->Encode(text, false), expected) << Show(text);
    Ids framed = {0};  // <s> A </s>
    framed.insert(framed.end(), expected.begin(), expected.end());
    framed.push_back(2);
    EXPECT_EQ((*tokenizer)->Encode(text, true), framed) << Show(text);
  }
  // The Metaspace decoder (with ByteFallback before it in the byte_fallback file) gives
  // SentencePiece's text back, except for unknown pieces, which it skips as special.
  for (const Case& c : cases_) {
    if (std::find(c.ids.begin(), c.ids.end(), 0) != c.ids.end()) continue;
    EXPECT_EQ((*tokenizer)->Decode(FairseqIds(c.ids), true), c.decoded) << Show(c.text);
  }
}

// Hugging Face's converter writes a whitespace-collapsing normalizer whatever the model says, so
// the model that keeps whitespace runs ("keep_whitespace") is compared through GGUF only.
class UnigramGgufConformance : public UnigramConformance {};

TEST_P(UnigramGgufConformance, GgufMatchesSentencePiece) {
  auto file = GgufFile::Open(WriteGguf(dir_).string());
  ASSERT_TRUE(file.ok()) << file.error();
  auto tokenizer = LoadTokenizerFromGguf(**file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  ExpectSentencePiecesIdsAndText(**tokenizer);
}

// SentencePiece's own tokenizer.model, loaded as a slow-only repository's tokenizer: its ids,
// and EOS after them as T5Tokenizer adds it.
TEST_P(UnigramGgufConformance, TokenizerModelMatchesSentencePiece) {
  auto tokenizer = LoadSentencePieceTokenizer(ReadFile(dir_ / "tokenizer.model"), "", "");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  ExpectSentencePiecesIdsAndText(**tokenizer);
  Ids framed = (*tokenizer)->Encode("東京 café", false);
  framed.push_back(2);
  EXPECT_EQ((*tokenizer)->Encode("東京 café", true), framed);
}

// Cross-encoder input: XLM-RoBERTa's <s> A </s></s> B </s>, all in segment 0, from both the
// TemplateProcessing ("plain") and RobertaProcessing ("byte_fallback") files and from the GGUF
// vocabulary (llama.cpp's [BOS] A [EOS] [SEP] B [EOS] with add_sep; here without SEP).
TEST_P(UnigramConformance, PairEncoding) {
  auto tokenizer = LoadTokenizerFromHfJson(ReadFile(dir_ / "tokenizer.json"));
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  const std::string first = "東京 café", second = "привет 123";
  const Ids a = (*tokenizer)->Encode(first, false), b = (*tokenizer)->Encode(second, false);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  Ids expected = {0};
  expected.insert(expected.end(), a.begin(), a.end());
  expected.insert(expected.end(), {2, 2});
  expected.insert(expected.end(), b.begin(), b.end());
  expected.push_back(2);
  const Tokenizer::EncodedPair pair = (*tokenizer)->EncodePair(first, second);
  EXPECT_EQ(pair.ids, expected);
  EXPECT_EQ(pair.token_type_ids, Ids(expected.size(), 0));

  auto file = GgufFile::Open(WriteGguf(dir_).string());
  ASSERT_TRUE(file.ok()) << file.error();
  auto gguf = LoadTokenizerFromGguf(**file);
  ASSERT_TRUE(gguf.ok()) << gguf.error();
  const Ids ga = (*gguf)->Encode(first, false), gb = (*gguf)->Encode(second, false);
  Ids gguf_expected = {1};
  gguf_expected.insert(gguf_expected.end(), ga.begin(), ga.end());
  gguf_expected.push_back(2);
  gguf_expected.insert(gguf_expected.end(), gb.begin(), gb.end());
  gguf_expected.push_back(2);
  EXPECT_EQ((*gguf)->EncodePair(first, second).ids, gguf_expected);
}

INSTANTIATE_TEST_SUITE_P(Variants, UnigramConformance, ::testing::Values("plain", "byte_fallback"));
INSTANTIATE_TEST_SUITE_P(Variants, UnigramGgufConformance,
                         ::testing::Values("plain", "byte_fallback", "keep_whitespace"));

}  // namespace
}  // namespace vllm
