// Tokenizer::EncodePair from tokenizer.json: a cross-encoder's two texts with the special tokens
// and segments the file's post-processor gives them (GGUF vocabularies: tokenizer_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tokenizer/hf/hf_tokenizer.h"
#include "tokenizer/hf/post_processors.h"
#include "tokenizer/tokenizer.h"

namespace vllm {
namespace {

using ::testing::ElementsAre;
using Ids = std::vector<int32_t>;
using Json = nlohmann::json;

// A WordPiece tokenizer.json with `post_processor`; `config` is tokenizer_config.json.
std::unique_ptr<Tokenizer> LoadWordPiece(const Json& post_processor, const Json& config = nullptr) {
  const Json tokenizer = {
      {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"model",
       {{"type", "WordPiece"},
        {"unk_token", "[UNK]"},
        {"vocab", {{"[UNK]", 0}, {"[CLS]", 1}, {"[SEP]", 2}, {"hello", 3}, {"world", 4}}}}},
      {"post_processor", post_processor},
      {"added_tokens",
       {{{"id", 0}, {"content", "[UNK]"}, {"special", true}},
        {{"id", 1}, {"content", "[CLS]"}, {"special", true}},
        {{"id", 2}, {"content", "[SEP]"}, {"special", true}}}}};
  auto loaded = LoadTokenizerFromHfJson(tokenizer.dump(), config.is_null() ? "" : config.dump());
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  return loaded.ok() ? std::move(*loaded) : nullptr;
}

TEST(EncodePair, HfPostProcessors) {
  // BertProcessing: [CLS] A [SEP] B [SEP], B's part in segment 1.
  auto bert =
      LoadWordPiece({{"type", "BertProcessing"}, {"sep", {"[SEP]", 2}}, {"cls", {"[CLS]", 1}}});
  ASSERT_NE(bert, nullptr);
  Tokenizer::EncodedPair pair = bert->EncodePair("hello", "world hello");
  EXPECT_THAT(pair.ids, ElementsAre(1, 3, 2, 4, 3, 2));
  EXPECT_THAT(pair.token_type_ids, ElementsAre(0, 0, 0, 1, 1, 1));
  // RobertaProcessing: <s> A </s></s> B </s>, all segment 0.
  auto roberta =
      LoadWordPiece({{"type", "RobertaProcessing"}, {"sep", {"[SEP]", 2}}, {"cls", {"[CLS]", 1}}});
  ASSERT_NE(roberta, nullptr);
  pair = roberta->EncodePair("hello", "world");
  EXPECT_THAT(pair.ids, ElementsAre(1, 3, 2, 2, 4, 2));
  EXPECT_THAT(pair.token_type_ids, ElementsAre(0, 0, 0, 0, 0, 0));
  // TemplateProcessing in the short string form, with its own type ids.
  const Json specials = {{"[CLS]", {{"id", "[CLS]"}, {"ids", {1}}, {"tokens", {"[CLS]"}}}},
                         {"[SEP]", {{"id", "[SEP]"}, {"ids", {2}}, {"tokens", {"[SEP]"}}}}};
  auto templated = LoadWordPiece({{"type", "TemplateProcessing"},
                                  {"single", {"[CLS]", "$A", "[SEP]"}},
                                  {"pair", {"[CLS]:0", "$A", "[SEP]", "$B:1", "[SEP]:1"}},
                                  {"special_tokens", specials}});
  ASSERT_NE(templated, nullptr);
  pair = templated->EncodePair("hello", "world");
  EXPECT_THAT(pair.ids, ElementsAre(1, 3, 2, 4, 2));
  EXPECT_THAT(pair.token_type_ids, ElementsAre(0, 0, 0, 1, 1));
  // No post-processor: the texts' ids as they are, segments 0 then 1.
  auto plain = LoadWordPiece(nullptr);
  ASSERT_NE(plain, nullptr);
  pair = plain->EncodePair("hello", "world");
  EXPECT_THAT(pair.ids, ElementsAre(3, 4));
  EXPECT_THAT(pair.token_type_ids, ElementsAre(0, 1));
  // add_bos_token / add_eos_token rebuild the frame as transformers does:
  // [BOS] A [EOS] [BOS] B [EOS], the second half in segment 1.
  auto configured = LoadWordPiece(nullptr, {{"bos_token", "[CLS]"},
                                            {"eos_token", "[SEP]"},
                                            {"add_bos_token", true},
                                            {"add_eos_token", true}});
  ASSERT_NE(configured, nullptr);
  pair = configured->EncodePair("hello", "world");
  EXPECT_THAT(pair.ids, ElementsAre(1, 3, 2, 1, 4, 2));
  EXPECT_THAT(pair.token_type_ids, ElementsAre(0, 0, 0, 1, 1, 1));
}

TEST(EncodePair, MalformedPairTemplatesAreErrors) {
  const Json specials = {{"[CLS]", {{"id", "[CLS]"}, {"ids", {1}}, {"tokens", {"[CLS]"}}}}};
  auto parse = [&](const Json& pair) {
    auto frame = hf::ParsePostProcessor({{"type", "TemplateProcessing"},
                                         {"single", {"[CLS]", "$A"}},
                                         {"pair", pair},
                                         {"special_tokens", specials}});
    return frame.ok() ? std::string() : frame.error();
  };
  EXPECT_EQ(parse({"$A", "$B:1"}), "");
  EXPECT_THAT(parse({"$A", "[CLS]"}), ::testing::HasSubstr("must hold $A and $B once each"));
  EXPECT_THAT(parse({"$A", "$B", "$B"}), ::testing::HasSubstr("must hold $A and $B once each"));
  EXPECT_THAT(parse({"$A", "$B", "[MASK]"}), ::testing::HasSubstr("missing"));
  EXPECT_THAT(parse({"$A", "$B:x"}), ::testing::HasSubstr("'x' is not a type id"));
  EXPECT_THAT(parse({{{"Sequence", {{"id", "C"}, {"type_id", 0}}}}, "$B"}),
              ::testing::HasSubstr("the sequence id must be A or B"));
  EXPECT_THAT(parse({{{"Sequence", {{"id", "A"}, {"type_id", -1}}}}, "$B"}),
              ::testing::HasSubstr("out of range"));
  EXPECT_THAT(parse(5), ::testing::HasSubstr("pair: expected an array"));
}

}  // namespace
}  // namespace vllm
