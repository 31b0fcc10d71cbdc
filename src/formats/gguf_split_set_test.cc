#include "formats/gguf_split_set.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "common/temp_test_dir.h"
#include "formats/gguf_split_test_util.h"

namespace vllm {
namespace {

std::string StoriesPath() { return std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf"; }

TEST(GgufSplitSetTest, ParsesAndMakesShardNames) {
  auto name = ParseGgufSplitPath("/m/qwen-Q4_K_M-00002-of-00003.gguf");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->prefix, "/m/qwen-Q4_K_M");
  EXPECT_EQ(name->index, 2);
  EXPECT_EQ(name->count, 3);
  EXPECT_EQ(GgufSplitPath(name->prefix, 1, 3), "/m/qwen-Q4_K_M-00001-of-00003.gguf");
  EXPECT_FALSE(ParseGgufSplitPath("/m/qwen-Q4_K_M.gguf"));
  EXPECT_FALSE(ParseGgufSplitPath("/m/q-0001-of-0003.gguf"));
}

TEST(GgufSplitSetTest, ASplitModelReadsAsTheWholeFile) {
  TempTestDir dir("gguf_split_set");
  auto whole = GgufFile::Open(StoriesPath());
  ASSERT_TRUE(whole) << whole.error();
  ASSERT_TRUE(WriteGgufSplitForTest(**whole, dir.File("stories"), 3).ok());
  auto split = OpenGgufSplitSet(dir.File("stories-00001-of-00003.gguf"));
  ASSERT_TRUE(split) << split.error();
  ASSERT_EQ((*split)->tensors().size(), (*whole)->tensors().size());
  for (const GgufTensor& tensor : (*whole)->tensors()) {
    const GgufTensor* joined = (*split)->FindTensor(tensor.name);
    ASSERT_NE(joined, nullptr) << tensor.name;
    EXPECT_EQ(joined->shape, tensor.shape);
    EXPECT_EQ(joined->type, tensor.type);
    ASSERT_EQ(joined->num_bytes, tensor.num_bytes);
    EXPECT_EQ(std::memcmp(joined->data, tensor.data, tensor.num_bytes), 0) << tensor.name;
  }
  EXPECT_EQ(*(*split)->GetString("general.architecture"),
            *(*whole)->GetString("general.architecture"));
  // A file that is no shard opens as itself.
  auto plain = OpenGgufSplitSet(StoriesPath());
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_EQ((*plain)->tensors().size(), (*whole)->tensors().size());
}

TEST(GgufSplitSetTest, OtherShardsAndMissingOnesAreRefusedByName) {
  TempTestDir dir("gguf_split_set_errors");
  auto whole = GgufFile::Open(StoriesPath());
  ASSERT_TRUE(whole) << whole.error();
  ASSERT_TRUE(WriteGgufSplitForTest(**whole, dir.File("m"), 3).ok());
  auto second = OpenGgufSplitSet(dir.File("m-00002-of-00003.gguf"));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), dir.File("m-00002-of-00003.gguf") +
                                " is shard 2 of 3 of a split model: give its first shard, " +
                                dir.File("m-00001-of-00003.gguf"));
  std::filesystem::remove(dir.File("m-00003-of-00003.gguf"));
  auto missing = OpenGgufSplitSet(dir.File("m-00001-of-00003.gguf"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "shard 3 of 3 of " + dir.File("m-00001-of-00003.gguf") +
                                 " is missing: " + dir.File("m-00003-of-00003.gguf"));
  // A first shard renamed: the others cannot be found.
  std::filesystem::rename(dir.File("m-00001-of-00003.gguf"), dir.File("renamed.gguf"));
  auto renamed = OpenGgufSplitSet(dir.File("renamed.gguf"));
  ASSERT_FALSE(renamed);
  EXPECT_NE(renamed.error().find("does not end in -00001-of-00003.gguf"), std::string::npos)
      << renamed.error();
}

}  // namespace
}  // namespace vllm
