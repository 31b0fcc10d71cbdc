#include "cli/vllm_serve_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(VllmServeFlagsTest, TableHasOneRowPerFlagAndSaysWhyOfEveryOneNotImplemented) {
  std::set<std::string_view> names;
  std::set<std::string_view> short_names;
  for (const ServeFlag& flag : VllmServeFlags()) {
    EXPECT_TRUE(flag.name.starts_with("--")) << flag.name;
    EXPECT_TRUE(names.insert(flag.name).second) << "twice: " << flag.name;
    if (!flag.short_name.empty()) {
      EXPECT_TRUE(flag.short_name.starts_with("-") && !flag.short_name.starts_with("--"));
      EXPECT_TRUE(short_names.insert(flag.short_name).second) << flag.short_name;
    }
    if (flag.use == ServeFlagUse::kIgnored || flag.use == ServeFlagUse::kRefused ||
        flag.use == ServeFlagUse::kMapped) {
      EXPECT_FALSE(flag.note.empty()) << flag.name;
    }
  }
  // The 44-flag deployment line names these; each has its row.
  for (std::string_view name :
       {"--disable-log-requests", "--trust-remote-code", "--seed", "--enforce-eager",
        "--gpu-memory-utilization", "--max-logprobs", "--enable-chunked-prefill", "--swap-space",
        "--config", "--tensor-parallel-size"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  EXPECT_GT(names.size(), 180u);
}

// docs/serve_flags.md holds the table between its markers, as ServeFlagsMarkdownTable writes it.
TEST(VllmServeFlagsTest, DocsListEveryFlagAsTheTableSays) {
  std::ifstream file(VLLM_SERVE_FLAGS_DOC);
  ASSERT_TRUE(file) << VLLM_SERVE_FLAGS_DOC;
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string doc = contents.str();
  const std::string begin = "<!-- serve flags begin -->\n";
  const size_t from = doc.find(begin);
  const size_t to = doc.find("<!-- serve flags end -->");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), ServeFlagsMarkdownTable())
      << "docs/serve_flags.md is stale: put the table above between its markers";
}

// A serve command with options of its own, as RegisterServeCommand makes it.
struct ServeApp {
  CLI::App app{"test"};
  CLI::App* serve = app.add_subcommand("serve");
  std::string model;
  std::string tokenizer;
  std::shared_ptr<GivenServeFlags> given;

  ServeApp() {
    serve->add_option("model,--model", model);
    serve->add_option("--tokenizer", tokenizer);  // a real option: the table leaves it alone
    given = RegisterVllmServeFlags(*serve);
  }
  void Parse(std::vector<std::string> args) {
    args.insert(args.begin(), "serve");
    args = NormalizeVllmFlagSpellings(std::move(args));
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  }
};

TEST(VllmServeFlagsTest, AcceptsVllmFlagsWithTheirValuesAndWarnsOnlyWhereTheyDiffer) {
  ServeApp serve;
  serve.Parse({"m.gguf", "--enforce-eager", "--swap-space", "16", "--no-trust-remote-code", "-dp",
               "1", "--data-parallel-size-local=1", "--cuda-graph-sizes", "1", "2", "4",
               "--tokenizer", "t", "--enable-chunked-prefill", "-O3"});
  EXPECT_EQ(serve.tokenizer, "t");
  EXPECT_EQ(serve.given->values.at("--enforce-eager"), "true");
  EXPECT_EQ(serve.given->values.at("--swap-space"), "16");
  EXPECT_EQ(serve.given->values.at("--trust-remote-code"), "false");
  EXPECT_EQ(serve.given->values.at("--data-parallel-size"), "1");
  EXPECT_EQ(serve.given->values.at("--cuda-graph-sizes"), "1 2 4");
  EXPECT_EQ(serve.given->values.at("--compilation-config"), "3");
  EXPECT_TRUE(CheckGivenFlags(*serve.given).ok());
}

TEST(VllmServeFlagsTest, RefusesWhatCannotBeHonouredNamingTheFlag) {
  ServeApp parallel;
  parallel.Parse({"m.gguf", "-dp=2"});
  Status refused = CheckGivenFlags(*parallel.given);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(),
              HasSubstr("--data-parallel-size 2: data parallelism is not implemented yet "
                        "(issue 46)"));
  ServeApp prompt_adapter;
  prompt_adapter.Parse({"m.gguf", "--enable-prompt-adapter"});
  EXPECT_THAT(CheckGivenFlags(*prompt_adapter.given).message(),
              HasSubstr("--enable-prompt-adapter: removed from vLLM"));
  ServeApp mode;
  mode.Parse({"m.gguf", "--config-format", "hf"});
  EXPECT_TRUE(CheckGivenFlags(*mode.given).ok());
}

TEST(VllmServeFlagsTest, AFlagVllmDoesNotHaveIsStillAnError) {
  ServeApp serve;
  EXPECT_THROW(serve.Parse({"m.gguf", "--enforce-eagre"}), CLI::ParseError);
}

TEST(VllmServeFlagsTest, NormalizesShortFormsAndUnderscoresOnly) {
  EXPECT_THAT(NormalizeVllmFlagSpellings({"serve", "-tp", "2", "-pp=1", "-dpl", "1", "-t", "2",
                                          "-q", "q8_0", "--max_model_len=a_b", "-O", "3", "-O3",
                                          "-tpx", "value_with_underscore"}),
              ElementsAre("serve", "--tensor-parallel-size", "2", "--pipeline-parallel-size=1",
                          "--data-parallel-size-local", "1", "-t", "2", "-q", "q8_0",
                          "--max-model-len=a_b", "--compilation-config", "3",
                          "--compilation-config=3", "-tpx", "value_with_underscore"));
}

// Flags of later 0.11.x releases (checked against their arg_utils.py) are vLLM's too.
TEST(VllmServeFlagsTest, TakesTheFlagsOfLater011Releases) {
  ServeApp serve;
  serve.Parse({"m.gguf", "--aggregate-engine-logging", "--no-enable-dbo", "--all2all-backend",
               "naive", "--allowed-media-domains", "a.com", "b.com", "--mamba-block-size", "16"});
  EXPECT_EQ(serve.given->values.at("--aggregate-engine-logging"), "true");
  EXPECT_EQ(serve.given->values.at("--enable-dbo"), "false");
  EXPECT_EQ(serve.given->values.at("--allowed-media-domains"), "a.com b.com");
  EXPECT_TRUE(CheckGivenFlags(*serve.given).ok());
}

}  // namespace
}  // namespace vllm
