#include "cli/vllm_alias.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vllm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(VllmAliasTest, KnowsItsName) {
  EXPECT_TRUE(InvokedAsVllm("/usr/local/bin/vllm"));
  EXPECT_TRUE(InvokedAsVllm("vllm"));
  EXPECT_FALSE(InvokedAsVllm("./build/vllm-cpp"));
}

TEST(VllmAliasTest, InstallsALinkOnceAndNeverOverAnotherVllm) {
  const fs::path root = fs::path(::testing::TempDir()) / "vllm_alias_test";
  fs::remove_all(root);
  fs::create_directories(root / "bin");
  fs::create_directories(root / "other");
  const std::string binary = (root / "vllm-cpp").string();
  std::ofstream(binary) << "binary";
  const std::string bin = (root / "bin").string();

  auto installed = InstallVllmAlias(bin, binary, "/usr/bin:" + bin);
  ASSERT_TRUE(installed.ok()) << installed.error();
  EXPECT_TRUE(fs::is_symlink(root / "bin" / "vllm"));
  EXPECT_EQ(fs::read_symlink(root / "bin" / "vllm"), binary);
  auto again = InstallVllmAlias(bin, binary, bin);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_THAT(*again, HasSubstr("already"));

  // A real vLLM elsewhere on PATH.
  std::ofstream(root / "other" / "vllm") << "#!/usr/bin/env python3";
  fs::remove(root / "bin" / "vllm");
  auto shadowed = InstallVllmAlias(bin, binary, (root / "other").string() + ":" + bin);
  ASSERT_FALSE(shadowed.ok());
  EXPECT_THAT(shadowed.error(), HasSubstr("is another program (a real vLLM?)"));
  EXPECT_FALSE(fs::exists(root / "bin" / "vllm"));
  // Or in the directory itself.
  auto replaced = InstallVllmAlias((root / "other").string(), binary, "");
  ASSERT_FALSE(replaced.ok());
  EXPECT_THAT(replaced.error(), HasSubstr("exists and is not a link to this binary"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace vllm
