// Every case of ../shared/tokenizers/<family>/expected.json (written by Hugging Face
// transformers) must come out exactly: Encode(text, false) == ids, Encode(text, true) ==
// ids_with_special, Decode(ids, false) == decoded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tokenizer/hf/hf_tokenizer.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string FormatIds(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

// The text as a JSON string, so that whitespace and control characters show.
std::string Quote(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class HfTokenizerConformance : public testing::TestWithParam<std::string> {};

TEST_P(HfTokenizerConformance, MatchesTransformers) {
  const fs::path dir = fs::path(VLLM_SHARED_DIR) / "tokenizers" / GetParam();
  auto tokenizer = LoadTokenizerFromHfDir(dir.string());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  const auto expected = nlohmann::json::parse(ReadFile(dir / "expected.json"));
  const auto& cases = expected.at("encode");
  ASSERT_FALSE(cases.empty());

  int failures = 0;
  std::string first_mismatch;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& item = cases[i];
    const auto text = item.at("text").get<std::string>();
    const auto ids = item.at("ids").get<std::vector<int32_t>>();
    const auto ids_with_special = item.at("ids_with_special").get<std::vector<int32_t>>();
    const auto decoded = item.at("decoded").get<std::string>();

    const std::vector<int32_t> got_ids = (*tokenizer)->Encode(text, false);
    const std::vector<int32_t> got_special = (*tokenizer)->Encode(text, true);
    const std::string got_decoded = (*tokenizer)->Decode(ids, false);
    const std::string got_skipped = (*tokenizer)->Decode(ids_with_special, true);
    std::string mismatch;
    if (got_ids != ids) {
      mismatch = "Encode(text, false)\n  expected " + FormatIds(ids) + "\n  got      " +
                 FormatIds(got_ids);
    } else if (got_special != ids_with_special) {
      mismatch = "Encode(text, true)\n  expected " + FormatIds(ids_with_special) + "\n  got      " +
                 FormatIds(got_special);
    } else if (got_decoded != decoded) {
      mismatch = "Decode(ids)\n  expected " + Quote(decoded) + "\n  got      " + Quote(got_decoded);
    }
    if (mismatch.empty()) continue;
    if (failures++ == 0) {
      first_mismatch = "case " + std::to_string(i) + " text " + Quote(text) + ": " + mismatch;
    }
  }
  std::cout << GetParam() << ": " << cases.size() - failures << "/" << cases.size()
            << " cases match" << std::endl;
  EXPECT_EQ(failures, 0) << GetParam() << ": " << failures << " of " << cases.size()
                         << " cases differ; first: " << first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Families, HfTokenizerConformance,
                         testing::Values("llama2", "llama3_1", "qwen3"),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

// What the tokenizer directories say about special tokens, and single-token decodes as
// Hugging Face gives them (a SentencePiece-style decoder strips the leading space).
struct FamilyFacts {
  std::string family;
  int32_t bos_id;
  int32_t eos_id;
  int64_t vocab_size;
  std::vector<std::pair<int32_t, std::string>> single_decodes;
};

class HfTokenizerFacts : public testing::TestWithParam<FamilyFacts> {};

TEST_P(HfTokenizerFacts, SpecialTokensAndSingleTokenDecode) {
  const FamilyFacts& facts = GetParam();
  auto tokenizer =
      LoadTokenizerFromHfDir(std::string(VLLM_SHARED_DIR) + "/tokenizers/" + facts.family);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
  const Tokenizer& t = **tokenizer;
  EXPECT_EQ(t.bos_id(), facts.bos_id);
  EXPECT_EQ(t.eos_id(), facts.eos_id);
  EXPECT_EQ(t.vocab_size(), facts.vocab_size);
  for (int32_t id : {facts.bos_id, facts.eos_id}) {
    if (id < 0) continue;
    EXPECT_TRUE(t.IsSpecial(id)) << id;
    EXPECT_EQ(t.Decode(std::vector<int32_t>{id}, false), t.TokenToPiece(id));
    EXPECT_EQ(t.Decode(std::vector<int32_t>{id}, true), "");
  }
  for (const auto& [id, text] : facts.single_decodes) {
    EXPECT_EQ(t.Decode(std::vector<int32_t>{id}, false), text) << "id " << id;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, HfTokenizerFacts,
    testing::Values(
        FamilyFacts{"llama2",
                    1,
                    2,
                    32000,
                    {{22557, "Hello"}, {1526, "world"}, {28705, ""}, {13, "\n"}, {28725, ","}}},
        FamilyFacts{"llama3_1",
                    128000,
                    128009,
                    128256,
                    {{9906, "Hello"}, {1917, " world"}, {128009, "<|eot_id|>"}}},
        FamilyFacts{"qwen3",
                    -1,
                    151645,
                    151669,
                    {{9707, "Hello"}, {21927, " Hello"}, {151667, "<think>"}}}),
    [](const testing::TestParamInfo<FamilyFacts>& param_info) { return param_info.param.family; });

}  // namespace
}  // namespace vllm
