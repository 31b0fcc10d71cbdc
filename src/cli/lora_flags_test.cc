#include "cli/lora_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::HasSubstr;

TEST(LoraFlagsTest, ReadsNamePathAndJsonItemsSkippingEmptyOnes) {
  auto modules = ParseLoraModules(
      {"sql=/a/sql.gguf", "", R"({"name": "poet", "path": "/a/poet-peft", "base_model_name": "m"})",
       R"({"name": "x", "path": "/a/x", "base_model_name": null})"});
  ASSERT_TRUE(modules.ok()) << modules.error();
  ASSERT_EQ(modules->size(), 3u);
  EXPECT_EQ((*modules)[0].name, "sql");
  EXPECT_EQ((*modules)[0].path, "/a/sql.gguf");
  EXPECT_EQ((*modules)[0].base_model_name, "");
  EXPECT_EQ((*modules)[1].name, "poet");
  EXPECT_EQ((*modules)[1].path, "/a/poet-peft");
  EXPECT_EQ((*modules)[1].base_model_name, "m");
  EXPECT_EQ((*modules)[2].base_model_name, "");
}

TEST(LoraFlagsTest, RefusesBadJsonAndFieldsQuotingTheItem) {
  EXPECT_EQ(ParseLoraModules({"sql"}).error(), "Invalid JSON format for --lora-modules: sql");
  EXPECT_EQ(ParseLoraModules({"{\"name\": \"a\","}).error(),
            "Invalid JSON format for --lora-modules: {\"name\": \"a\",");
  EXPECT_THAT(ParseLoraModules({R"({"name": "a", "path": "/p", "rank": 8})"}).error(),
              HasSubstr("Invalid fields for --lora-modules: {\"name\": \"a\", \"path\": \"/p\", "
                        "\"rank\": 8} - unexpected keyword argument 'rank'"));
  EXPECT_THAT(ParseLoraModules({R"({"name": "a"})"}).error(),
              HasSubstr("missing required argument: 'path'"));
  EXPECT_THAT(ParseLoraModules({R"({"name": 3, "path": "/p"})"}).error(),
              HasSubstr("'name' must be a string"));
  EXPECT_THAT(ParseLoraModules({"[1, 2]"}).error(), HasSubstr("expected a JSON object"));
}

TEST(LoraFlagsTest, EngineFlagsFillEngineArgs) {
  CLI::App app;
  EngineArgs args;
  AddLoraEngineOptions(app, args);
  app.parse(std::vector<std::string>{"bfloat16", "--lora-dtype", "4", "--max-cpu-loras", "32",
                                     "--max-lora-rank", "2", "--max-loras", "--enable-lora"});
  EXPECT_TRUE(args.enable_lora);
  EXPECT_EQ(args.max_loras, 2);
  EXPECT_EQ(args.max_lora_rank, 32);
  EXPECT_EQ(args.max_cpu_loras, 4);
  EXPECT_EQ(args.lora_dtype, "bfloat16");
  EngineArgs refused;
  CLI::App strict;
  AddLoraEngineOptions(strict, refused);
  EXPECT_THROW(strict.parse(std::vector<std::string>{"float64", "--lora-dtype"}),
               CLI::ValidationError);
}

}  // namespace
}  // namespace vllm
