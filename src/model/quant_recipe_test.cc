#include "model/quant_recipe.h"

#include <gtest/gtest.h>

#include <utility>

namespace vllm {
namespace {

TEST(QuantRecipeTest, Q4_K_MKeepsTheTensorsLlamaCppKeepsInMoreBits) {
  auto recipe = QuantRecipe::Parse("Q4_K_M");
  ASSERT_TRUE(recipe.ok()) << recipe.error();
  EXPECT_EQ(recipe->file_type(), 15u);
  // The quantized oracles' 3-layer file (../shared/oracles/models/tensor_types.json): Q6_K for
  // output, blk.2.attn_v and blk.2.ffn_down, Q4_K for everything else.
  EXPECT_EQ(recipe->TypeFor("output.weight", 3, 256), GgmlType::kQ6_K);
  EXPECT_EQ(recipe->TypeFor("token_embd.weight", 3, 256), GgmlType::kQ4_K);
  EXPECT_EQ(recipe->TypeFor("blk.2.attn_v.weight", 3, 256), GgmlType::kQ6_K);
  EXPECT_EQ(recipe->TypeFor("blk.2.ffn_down.weight", 3, 768), GgmlType::kQ6_K);
  for (const char* name : {"blk.0.attn_v.weight", "blk.1.ffn_down.weight", "blk.2.attn_q.weight",
                           "blk.2.ffn_up.weight"}) {
    EXPECT_EQ(recipe->TypeFor(name, 3, 256), GgmlType::kQ4_K) << name;
  }
  // 22 layers (TinyLlama): the first and last eighth and every third layer between.
  for (int64_t layer : {0, 1, 4, 7, 10, 13, 16, 19, 20, 21}) {
    EXPECT_EQ(recipe->TypeFor("blk." + std::to_string(layer) + ".attn_v.weight", 22, 2048),
              GgmlType::kQ6_K)
        << layer;
  }
  EXPECT_EQ(recipe->TypeFor("blk.2.attn_v.weight", 22, 2048), GgmlType::kQ4_K);
}

TEST(QuantRecipeTest, Q4_K_SAndQ5_K_M) {
  auto small = QuantRecipe::Parse("q4_k_s");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->TypeFor("blk.3.attn_v.weight", 22, 2048), GgmlType::kQ5_K);
  EXPECT_EQ(small->TypeFor("blk.4.attn_v.weight", 22, 2048), GgmlType::kQ4_K);
  EXPECT_EQ(small->TypeFor("blk.1.ffn_down.weight", 22, 5632), GgmlType::kQ5_K);
  EXPECT_EQ(small->TypeFor("blk.3.ffn_down.weight", 22, 5632), GgmlType::kQ4_K);
  auto medium = QuantRecipe::Parse("q5_k_m");
  ASSERT_TRUE(medium.ok());
  EXPECT_EQ(medium->TypeFor("blk.0.ffn_down.weight", 22, 5632), GgmlType::kQ6_K);
  EXPECT_EQ(medium->TypeFor("blk.0.ffn_up.weight", 22, 2048), GgmlType::kQ5_K);
}

TEST(QuantRecipeTest, SingleTypesAndRowsTheirBlocksDoNotDivide) {
  auto q4_k = QuantRecipe::Parse("q4_K");
  ASSERT_TRUE(q4_k.ok());
  EXPECT_EQ(q4_k->TypeFor("output.weight", 30, 576), GgmlType::kQ5_0);  // 576 = 2.25 × 256
  EXPECT_EQ(q4_k->TypeFor("output.weight", 30, 512), GgmlType::kQ4_K);
  EXPECT_EQ(QuantRecipe::Parse("q6_k")->TypeFor("x", 1, 96), GgmlType::kQ8_0);
  EXPECT_EQ(QuantRecipe::Parse("iq4_xs")->TypeFor("x", 1, 96), GgmlType::kIQ4_NL);
  EXPECT_EQ(QuantRecipe::Parse("bf16")->TypeFor("output.weight", 1, 96), GgmlType::kBF16);
  auto unknown = QuantRecipe::Parse("q7_k");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("q4_k_m"), std::string::npos) << unknown.error();
}

// A single type's file type and row fallback are the facts of its row in kSupportedTypes
// (llama.cpp's LLAMA_FTYPE_* and its quantizer's fallbacks); a mix's come from the recipe.
TEST(QuantRecipeTest, Q4_ZIsNoFileType) {
  auto recipe = QuantRecipe::Parse("q4_z");
  ASSERT_FALSE(recipe.ok());
  EXPECT_NE(recipe.error().find("not a GGUF type"), std::string::npos) << recipe.error();
}

// Whether a type may be written is its row's fact (not_in_gguf), not a case in the recipe.
TEST(QuantRecipeTest, EveryRowParsesUnlessItIsNotInGguf) {
  for (const GgmlTypeTraits& row : kSupportedTypes) {
    auto recipe = QuantRecipe::Parse(row.name);
    if (row.not_in_gguf != nullptr) {
      ASSERT_FALSE(recipe.ok()) << row.name;
      EXPECT_NE(recipe.error().find(row.not_in_gguf), std::string::npos) << recipe.error();
    } else {
      ASSERT_TRUE(recipe.ok()) << row.name;
      EXPECT_EQ(recipe->base_type(), row.type) << row.name;
      EXPECT_EQ(recipe->file_type(), row.file_type) << row.name;
    }
  }
}

TEST(QuantRecipeTest, SingleTypesTakeTheirFileTypeAndFallbackFromTheirRow) {
  const std::pair<const char*, uint32_t> file_types[] = {
      {"f32", 0},    {"f16", 1},     {"q4_0", 2},    {"q4_1", 3},      {"q8_0", 7},
      {"q5_0", 8},   {"q5_1", 9},    {"q2_K", 10},   {"q3_K", 11},     {"q4_K", 14},
      {"q5_K", 16},  {"q6_K", 18},   {"iq4_nl", 25}, {"iq4_xs", 30},   {"bf16", 32},
      {"mxfp4", 38}, {"q5_k_m", 17}, {"q4_k_s", 14}, {"mxfp4_moe", 38}};
  for (const auto& [name, file_type] : file_types) {
    auto recipe = QuantRecipe::Parse(name);
    ASSERT_TRUE(recipe.ok()) << name;
    EXPECT_EQ(recipe->file_type(), file_type) << name;
  }
  EXPECT_EQ(QuantRecipe::Parse("q2_K")->TypeFor("x", 1, 96), GgmlType::kIQ4_NL);
  EXPECT_EQ(QuantRecipe::Parse("q3_K")->TypeFor("x", 1, 96), GgmlType::kIQ4_NL);
  EXPECT_EQ(QuantRecipe::Parse("q5_K")->TypeFor("x", 1, 96), GgmlType::kQ5_1);
  // Every fallback is a supported type whose blocks divide what the K blocks do not.
  for (const GgmlTypeTraits& row : kSupportedTypes) {
    if (!row.row_fallback) continue;
    const GgmlTypeTraits* fallback = FindSupportedType(*row.row_fallback);
    ASSERT_NE(fallback, nullptr) << row.name;
    EXPECT_EQ(fallback->block_size, kQuantBlockSize) << row.name;
  }
  auto unknown = QuantRecipe::Parse("q7_k");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("or the mixes q4_k_m, q5_k_m, q4_k_s, mxfp4_moe)"),
            std::string::npos)
      << unknown.error();
}

}  // namespace
}  // namespace vllm
