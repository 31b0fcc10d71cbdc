#include "engine/attention_dtype_override.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::HasSubstr;

// The KV cache dtype --kv-cache-dtype `given` becomes with the override, or the error.
std::string Applied(const std::string& override_dtype, std::string given) {
  const Status status = ApplyOverrideAttentionDtype(override_dtype, &given);
  return status.ok() ? given : "error: " + status.message();
}

TEST(OverrideAttentionDtypeTest, ChoosesTheKvCacheDtypeAttentionReads) {
  EXPECT_EQ(Applied("float32", "auto"), "float32");
  EXPECT_EQ(Applied("float", "auto"), "float32");
  EXPECT_EQ(Applied("bfloat16", "auto"), "bfloat16");
  EXPECT_EQ(Applied("bfloat16", "bfloat16"), "bfloat16");  // the same, given twice
}

TEST(OverrideAttentionDtypeTest, Float16IsIgnoredAndKeepsTheCacheDtype) {
  EXPECT_EQ(Applied("float16", "auto"), "auto");
  EXPECT_EQ(Applied("half", "int8"), "int8");
}

TEST(OverrideAttentionDtypeTest, RefusesAConflictingKvCacheDtype) {
  EXPECT_EQ(Applied("float32", "int8"),
            "error: --override-attention-dtype float32 conflicts with --kv-cache-dtype int8: "
            "attention reads keys and values in the KV cache's dtype; give one of the two");
  EXPECT_THAT(Applied("bfloat16", "float32"), HasSubstr("conflicts with --kv-cache-dtype float32"));
}

TEST(OverrideAttentionDtypeTest, NoneLeavesTheKvCacheDtype) {
  EXPECT_EQ(Applied("", "int8"), "int8");
}

TEST(OverrideAttentionDtypeTest, RefusesAnUnknownDtype) {
  EXPECT_EQ(Applied("fp8", "auto"),
            "error: unsupported --override-attention-dtype fp8 (supported: float32, bfloat16, "
            "float16)");
}

}  // namespace
}  // namespace vllm
