#include "engine/task_flag.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::HasSubstr;

struct RunnerAndConvert {
  std::string runner;
  std::string convert;
};

RunnerAndConvert Applied(std::string_view task) {
  EngineArgs args;
  args.runner = "pooling";  // a given --task replaces what --runner / --convert said
  args.convert = "classify";
  Status applied = ApplyDeprecatedTask(task, &args);
  EXPECT_TRUE(applied.ok()) << applied.message();
  return {args.runner, args.convert};
}

TEST(TaskFlagTest, MapsVllmTasksToRunnerAndConvert) {
  EXPECT_EQ(Applied("generate").runner, "generate");
  EXPECT_EQ(Applied("generate").convert, "auto");
  EXPECT_EQ(Applied("transcription").runner, "generate");
  EXPECT_EQ(Applied("embed").runner, "pooling");
  EXPECT_EQ(Applied("embed").convert, "embed");
  EXPECT_EQ(Applied("embedding").convert, "embed");
  EXPECT_EQ(Applied("classify").runner, "pooling");
  EXPECT_EQ(Applied("classify").convert, "classify");
  EXPECT_EQ(Applied("score").runner, "pooling");
  EXPECT_EQ(Applied("score").convert, "auto");
  EXPECT_EQ(Applied("auto").runner, "auto");
  EXPECT_EQ(Applied("auto").convert, "auto");
  EXPECT_EQ(Applied("draft").runner, "auto");
}

TEST(TaskFlagTest, RefusesRewardAndUnknownTasksByName) {
  EngineArgs args;
  EXPECT_THAT(ApplyDeprecatedTask("reward", &args).message(),
              HasSubstr("--task reward: reward models"));
  EXPECT_THAT(ApplyDeprecatedTask("chat", &args).message(),
              HasSubstr("--task chat: not one of vLLM's tasks"));
  EXPECT_EQ(args.runner, "auto");  // untouched by a refused task
}

}  // namespace
}  // namespace vllm
