#include "model/kv_cache_dtype.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace vllm {
namespace {

using kernels::KvCacheDtype;

TEST(KvCacheDtypeTest, ParsesVllmsNamesAndAutoAsGiven) {
  EXPECT_EQ(*ParseKvCacheDtype("auto", KvCacheDtype::kBFloat16), KvCacheDtype::kBFloat16);
  EXPECT_EQ(*ParseKvCacheDtype("auto", KvCacheDtype::kFloat32), KvCacheDtype::kFloat32);
  EXPECT_EQ(*ParseKvCacheDtype("float32", KvCacheDtype::kBFloat16), KvCacheDtype::kFloat32);
  EXPECT_EQ(*ParseKvCacheDtype("bfloat16", KvCacheDtype::kFloat32), KvCacheDtype::kBFloat16);
  EXPECT_EQ(*ParseKvCacheDtype("fp8", KvCacheDtype::kFloat32), KvCacheDtype::kFp8E4m3);
  EXPECT_EQ(*ParseKvCacheDtype("fp8_e4m3", KvCacheDtype::kFloat32), KvCacheDtype::kFp8E4m3);
  EXPECT_EQ(*ParseKvCacheDtype("int8", KvCacheDtype::kFloat32), KvCacheDtype::kInt8);
  for (const char* name : {"", "fp16", "FP8", "fp8_e5m2"}) {
    auto dtype = ParseKvCacheDtype(name, KvCacheDtype::kFloat32);
    ASSERT_FALSE(dtype.ok()) << name;
    EXPECT_THAT(dtype.error(), testing::HasSubstr("(supported: auto, float32, bfloat16, fp8, "
                                                  "fp8_e4m3, int8)"));
  }
}

LoadedModel OpenGguf(const std::string& relative_path) {
  LoadedModel loaded;
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + relative_path);
  EXPECT_TRUE(file.ok()) << file.error();
  if (file.ok()) loaded.gguf = std::move(*file);
  return loaded;
}

TEST(KvCacheDtypeTest, AutoIsFloat32OnlyForWeightsComputedInF32) {
  // stories260K stores every tensor F32; the oracle's matrices are Q8_0 (norms F32).
  const LoadedModel f32 = OpenGguf("/models/stories260K.gguf");
  const LoadedModel q8_0 = OpenGguf("/oracles/models/tiny-llama-d256-q8_0.gguf");
  EXPECT_EQ(AutoKvCacheDtype(f32, std::nullopt), KvCacheDtype::kFloat32);
  EXPECT_EQ(AutoKvCacheDtype(q8_0, std::nullopt), KvCacheDtype::kBFloat16);
  // --dtype / --quantization convert the weights at load: their type decides.
  EXPECT_EQ(AutoKvCacheDtype(f32, GgmlType::kBF16), KvCacheDtype::kBFloat16);
  EXPECT_EQ(AutoKvCacheDtype(f32, GgmlType::kQ8_0), KvCacheDtype::kBFloat16);
  EXPECT_EQ(AutoKvCacheDtype(q8_0, GgmlType::kF32), KvCacheDtype::kFloat32);
}

}  // namespace
}  // namespace vllm
