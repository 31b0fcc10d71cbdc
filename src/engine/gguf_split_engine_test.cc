// A model split by llama-gguf-split's layout into shards, given by its first shard, generates
// what the whole file does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/temp_test_dir.h"
#include "engine/expect_same_completions.h"
#include "engine/test_engine_args.h"
#include "formats/gguf_split_test_util.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

TEST(GgufSplitEngineTest, ThreeShardsGenerateWhatTheWholeFileDoes) {
  TempTestDir dir("gguf_split_engine");
  const EngineArgs whole_args = StoriesArgs();
  auto whole = GgufFile::Open(whole_args.model);
  ASSERT_TRUE(whole) << whole.error();
  ASSERT_TRUE(WriteGgufSplitForTest(**whole, dir.File("stories"), 3).ok());
  EngineArgs split_args = whole_args;
  split_args.model = dir.File("stories-00001-of-00003.gguf");
  const std::vector<std::string> prompts = {"Once upon a time", "The dog", "Lily and Tom"};
  LLM whole_llm(whole_args);
  LLM split_llm(split_args);
  ExpectSameCompletions(split_llm.Generate(prompts, Greedy(40), false),
                        whole_llm.Generate(prompts, Greedy(40), false));
}

}  // namespace
}  // namespace vllm
