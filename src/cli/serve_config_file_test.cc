#include "cli/serve_config_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct ConfigFileTest : ::testing::Test {
  CLI::App app{"test"};
  CLI::App* serve = app.add_subcommand("serve");
  std::string model;
  int port = 8000;
  bool prefix_caching = true;
  bool disable_log_stats = false;
  std::vector<std::string> served_model_names;
  std::string hf_overrides;
  std::string max_model_len;
  std::string path = ::testing::TempDir() + "/serve_config.yaml";

  void SetUp() override {
    serve->add_option("model,-m,--model", model);
    serve->add_option("--port", port);
    serve->add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", prefix_caching);
    serve->add_flag("--disable-log-stats", disable_log_stats);
    serve->add_option("--served-model-name", served_model_names);
    serve->add_option("--hf-overrides", hf_overrides);
    serve->add_option("--max-model-len", max_model_len);
  }
  void Write(const std::string& yaml) { std::ofstream(path) << yaml; }
  Expected<std::vector<std::string>> Apply(std::vector<std::string> args) {
    return ApplyServeConfigFile(std::move(args), *serve);
  }
  void Parse(const std::vector<std::string>& args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  }
};

TEST_F(ConfigFileTest, FileFlagsComeFirstAndTheCommandLineOverridesThem) {
  Write(
      "model: from-file.gguf\n"
      "port: 9000\n"
      "enable_prefix_caching: false\n"
      "--disable-log-stats: true\n"
      "served-model-name: [a, b]\n"
      "hf_overrides: {architectures: [X], is_matryoshka: true, dim: 8, name: '8'}\n"
      "max_model_len: -1\n");
  auto args = Apply({"--log-level", "info", "serve", "--config", path, "--port", "9100"});
  ASSERT_TRUE(args.ok()) << args.error();
  EXPECT_THAT(*args, ElementsAre("--log-level", "info", "serve", "--port", "9100", "--model",
                                 "from-file.gguf", "--no-enable-prefix-caching",
                                 "--disable-log-stats", "--served-model-name", "a", "b",
                                 R"(--hf-overrides={"architectures":["X"],"dim":8,)"
                                 R"("is_matryoshka":true,"name":"8"})",
                                 "--max-model-len=-1"));
  app.add_option("--log-level");
  Parse(*args);
  EXPECT_EQ(model, "from-file.gguf");
  EXPECT_EQ(port, 9100);
  EXPECT_FALSE(prefix_caching);
  EXPECT_TRUE(disable_log_stats);
  EXPECT_THAT(served_model_names, ElementsAre("a", "b"));
  EXPECT_EQ(max_model_len, "-1");
}

TEST_F(ConfigFileTest, ThePositionalModelOverridesTheFilesOne) {
  Write("model: from-file.gguf\nport: 9000\nserved_model_name: [a]\n");
  auto args = Apply({"serve", "--config=" + path, "cli.gguf"});
  ASSERT_TRUE(args.ok()) << args.error();
  EXPECT_THAT(*args, ElementsAre("serve", "cli.gguf", "--port=9000", "--served-model-name", "a"));
  Parse(*args);
  EXPECT_EQ(model, "cli.gguf");
  EXPECT_THAT(served_model_names, ElementsAre("a"));
}

TEST_F(ConfigFileTest, RefusesUnknownKeysAndBadYamlNamingTheLine) {
  Write("port: 9000\n\nenforce_eagre: true\n");
  auto unknown = Apply({"serve", "--config", path});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error(), HasSubstr("line 3: unknown key 'enforce_eagre'"));
  Write("port: 9000\nserved-model-name: [a\n");
  auto bad = Apply({"serve", "--config", path});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), HasSubstr("--config " + path + ": line "));
  Write("disable_log_stats: maybe\n");
  auto not_bool = Apply({"serve", "--config", path});
  ASSERT_FALSE(not_bool.ok());
  EXPECT_THAT(not_bool.error(), HasSubstr("'disable_log_stats' takes true or false"));
  Write("- a\n- b\n");
  EXPECT_THAT(Apply({"serve", "--config", path}).error(), HasSubstr("must be a YAML mapping"));
  EXPECT_THAT(Apply({"serve", "--config", path + ".missing"}).error(), HasSubstr("cannot read"));
}

TEST_F(ConfigFileTest, OtherCommandsAndLinesWithoutConfigAreUnchanged) {
  const std::vector<std::string> generate = {"generate", "--config", "x"};
  EXPECT_EQ(*Apply(generate), generate);
  const std::vector<std::string> bench = {"bench", "serve", "--config", "x"};
  EXPECT_EQ(*Apply(bench), bench);
  const std::vector<std::string> plain = {"serve", "m.gguf", "--port", "1"};
  EXPECT_EQ(*Apply(plain), plain);
}

}  // namespace
}  // namespace vllm
