#include "cli/default_model.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

#include "common/temp_test_dir.h"
#include "formats/gguf_file.h"

namespace vllm {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Tells a rewritten file (renamed into place) from the one that was there.
ino_t Inode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_ino;
}

// Each test gets its own empty cache directory as $XDG_CACHE_HOME.
class DefaultModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_cache_ = old;
    ::setenv("XDG_CACHE_HOME", cache_.File("cache").c_str(), 1);
    auto written = EnsureDefaultModel();
    ASSERT_TRUE(written) << written.error();
    path_ = *written;
    original_ = ReadBytes(path_);
    ASSERT_FALSE(original_.empty());
  }
  void TearDown() override {
    if (old_cache_) {
      ::setenv("XDG_CACHE_HOME", old_cache_->c_str(), 1);
    } else {
      ::unsetenv("XDG_CACHE_HOME");
    }
  }

  // The model file after the next start, which must succeed and leave it whole and loadable.
  void ExpectRewrittenWhole() {
    const ino_t damaged = Inode(path_);
    auto again = EnsureDefaultModel();
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(*again, path_);
    EXPECT_NE(Inode(path_), damaged);
    EXPECT_TRUE(ReadBytes(path_) == original_);
    auto gguf = GgufFile::Open(path_);
    EXPECT_TRUE(gguf.ok()) << gguf.error();
  }

  TempTestDir cache_{"default_model_test"};
  std::optional<std::string> old_cache_;
  std::string path_;
  std::string original_;
};

TEST_F(DefaultModelTest, FirstStartWritesTheModelAndItsChecksumAndTheNextKeepsThem) {
  std::set<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(path_).parent_path())) {
    names.insert(entry.path().filename().string());
  }
  EXPECT_EQ(names, (std::set<std::string>{"random-stories260k-byte-vocab.gguf",
                                          "random-stories260k-byte-vocab.gguf.checksum"}));
  const ino_t first = Inode(path_);
  auto again = EnsureDefaultModel();
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(Inode(path_), first);
}

TEST_F(DefaultModelTest, AFlippedByteIsRewritten) {
  std::string damaged = original_;
  damaged[damaged.size() / 2] ^= 0x10;  // inside the weights: the file still parses
  WriteBytes(path_, damaged);
  ASSERT_TRUE(GgufFile::Open(path_).ok());
  ExpectRewrittenWhole();
}

TEST_F(DefaultModelTest, ATruncatedFileIsRewritten) {
  WriteBytes(path_, original_.substr(0, original_.size() / 3));
  ExpectRewrittenWhole();
}

TEST_F(DefaultModelTest, AFileWithoutAChecksumIsRewritten) {
  std::filesystem::remove(path_ + ".checksum");  // as an older version left it
  ExpectRewrittenWhole();
  EXPECT_TRUE(std::filesystem::exists(path_ + ".checksum"));
}

TEST_F(DefaultModelTest, ARewriteThatFailsNamesTheFileToDelete) {
  std::filesystem::remove(path_);
  std::filesystem::create_directories(path_ + "/in-the-way");  // rename cannot replace it
  auto again = EnsureDefaultModel();
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().find("delete " + path_ + " and start again"), std::string::npos)
      << again.error();
}

}  // namespace
}  // namespace vllm
