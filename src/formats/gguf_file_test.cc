#include "formats/gguf_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "formats/gguf_writer.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + std::to_string(::getpid()) + ".gguf";
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Writes a small file with every metadata type, a nested array and two tensors.
std::vector<uint8_t> MakeSampleFile() {
  GgufWriter writer;
  writer.AddMetadata("u8", {GgufValueType::kUint8, uint64_t{200}});
  writer.AddMetadata("i8", {GgufValueType::kInt8, int64_t{-100}});
  writer.AddMetadata("u16", {GgufValueType::kUint16, uint64_t{60000}});
  writer.AddMetadata("i16", {GgufValueType::kInt16, int64_t{-30000}});
  writer.AddMetadata("u32", GgufValue::Uint32(4000000000u));
  writer.AddMetadata("i32", GgufValue::Int32(-2000000000));
  writer.AddMetadata("u64", {GgufValueType::kUint64, uint64_t{1} << 40});
  writer.AddMetadata("i64", {GgufValueType::kInt64, -(int64_t{1} << 40)});
  writer.AddMetadata("f32", GgufValue::Float32(0.5f));
  writer.AddMetadata("f64", {GgufValueType::kFloat64, 0.125});
  writer.AddMetadata("flag", GgufValue::Bool(true));
  writer.AddMetadata("name", GgufValue::String("llama"));
  GgufArray strings{GgufValueType::kString, {GgufValue::String("a"), GgufValue::String("bc")}};
  writer.AddMetadata("strings", GgufValue::Array(strings));
  GgufArray inner{GgufValueType::kInt32, {GgufValue::Int32(1), GgufValue::Int32(2)}};
  GgufArray nested{GgufValueType::kArray, {GgufValue::Array(inner), GgufValue::Array(inner)}};
  writer.AddMetadata("nested", GgufValue::Array(nested));
  size_t a = writer.AddTensor("a", {32, 2}, GgmlType::kF32);
  size_t b = writer.AddTensor("b", {64}, GgmlType::kQ8_0);
  std::string path = TempPath("sample");
  EXPECT_TRUE(writer.Begin(path).ok());
  std::vector<float> a_data(64, 1.5f);
  std::vector<uint8_t> b_data(2 * GetSupportedTypeTraits(GgmlType::kQ8_0)->block_bytes, 7);
  EXPECT_TRUE(writer.WriteTensorData(a, a_data.data(), a_data.size() * 4).ok());
  EXPECT_TRUE(writer.WriteTensorData(b, b_data.data(), b_data.size()).ok());
  EXPECT_TRUE(writer.Finish().ok());
  auto bytes = ReadAll(path);
  std::remove(path.c_str());
  return bytes;
}

TEST(GgufFileTest, RoundTripsEveryValueType) {
  auto bytes = MakeSampleFile();
  auto file = GgufFile::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.error();
  const GgufFile& f = **file;
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(*f.GetInt("u8").value(), 200);
  EXPECT_EQ(*f.GetInt("i8").value(), -100);
  EXPECT_EQ(*f.GetInt("u16").value(), 60000);
  EXPECT_EQ(*f.GetInt("i16").value(), -30000);
  EXPECT_EQ(*f.GetInt("u32").value(), 4000000000);
  EXPECT_EQ(*f.GetInt("i32").value(), -2000000000);
  EXPECT_EQ(*f.GetInt("u64").value(), int64_t{1} << 40);
  EXPECT_EQ(*f.GetInt("i64").value(), -(int64_t{1} << 40));
  EXPECT_EQ(*f.GetFloat("f32").value(), 0.5);
  EXPECT_EQ(*f.GetFloat("f64").value(), 0.125);
  EXPECT_EQ(*f.GetBool("flag").value(), true);
  EXPECT_EQ(*f.GetString("name").value(), "llama");
  EXPECT_THAT(*f.GetStringArray("strings").value(), ::testing::ElementsAre("a", "bc"));
  const auto& nested = std::get<GgufArray>(f.Find("nested")->data);
  ASSERT_EQ(nested.items.size(), 2u);
  EXPECT_EQ(std::get<GgufArray>(nested.items[1].data).items.size(), 2u);
  EXPECT_FALSE(f.GetString("missing").value().has_value());
  EXPECT_FALSE(f.GetString("u8").ok());  // wrong type is an error

  const GgufTensor* a = f.FindTensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{32, 2}));
  EXPECT_EQ(a->num_bytes, 256);
  EXPECT_EQ(reinterpret_cast<const float*>(a->data)[63], 1.5f);
  const GgufTensor* b = f.FindTensor("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, GgmlType::kQ8_0);
  EXPECT_EQ(b->num_bytes, 68);
  EXPECT_EQ(b->offset % 32, 0u);
  EXPECT_EQ(b->data[67], 7);
}

TEST(GgufFileTest, NumberArraysConvertEveryItemOrNameTheKey) {
  GgufWriter writer;
  writer.AddMetadata("ints", GgufValue::Array({GgufValueType::kInt32,
                                               {GgufValue::Int32(-3), GgufValue::Int32(7)}}));
  writer.AddMetadata("floats",
                     GgufValue::Array({GgufValueType::kFloat32,
                                       {GgufValue::Float32(0.5f), GgufValue::Float32(2.0f)}}));
  writer.AddMetadata("strings",
                     GgufValue::Array({GgufValueType::kString, {GgufValue::String("a")}}));
  writer.AddMetadata("scalar", GgufValue::Int32(1));
  const std::string path = TempPath("arrays");
  ASSERT_TRUE(writer.Begin(path).ok());
  ASSERT_TRUE(writer.Finish().ok());
  auto file = GgufFile::Open(path);
  std::remove(path.c_str());
  ASSERT_TRUE(file.ok()) << file.error();
  const GgufFile& f = **file;
  EXPECT_THAT(*f.GetIntArray("ints").value(), ::testing::ElementsAre(-3, 7));
  EXPECT_THAT(*f.GetFloatArray("floats").value(), ::testing::ElementsAre(0.5, 2.0));
  EXPECT_THAT(*f.GetFloatArray("ints").value(), ::testing::ElementsAre(-3.0, 7.0));
  EXPECT_FALSE(f.GetIntArray("missing").value().has_value());
  EXPECT_EQ(f.GetIntArray("strings").error(),
            "metadata 'strings' is array, expected an array of integers");
  EXPECT_EQ(f.GetFloatArray("scalar").error(),
            "metadata 'scalar' is int32, expected an array of numbers");
}

TEST(GgufFileTest, ReadsVersion2) {
  auto bytes = MakeSampleFile();
  bytes[4] = 2;  // v2 and v3 share the little-endian layout
  auto file = GgufFile::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_EQ((*file)->version(), 2u);
}

TEST(GgufFileTest, EveryTruncationIsAnError) {
  auto bytes = MakeSampleFile();
  // Only the padding after the last tensor may be cut without damaging the file.
  auto whole = GgufFile::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(whole.ok());
  const GgufTensor& last = (*whole)->tensors().back();
  size_t end_of_data = last.data + last.num_bytes - bytes.data();
  for (size_t size = 0; size < end_of_data; ++size) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);  // exact-size buffer for ASan
    auto file = GgufFile::Parse(prefix.data(), prefix.size());
    EXPECT_FALSE(file.ok()) << "size " << size;
  }
}

TEST(GgufFileTest, RejectsBadMagicAndVersion) {
  auto bytes = MakeSampleFile();
  auto bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THAT(GgufFile::Parse(bad_magic.data(), bad_magic.size()).error(), HasSubstr("magic"));
  auto bad_version = bytes;
  bad_version[4] = 9;
  EXPECT_THAT(GgufFile::Parse(bad_version.data(), bad_version.size()).error(),
              HasSubstr("version 9"));
}

TEST(GgufFileTest, RejectsAbsurdCounts) {
  auto bytes = MakeSampleFile();
  auto huge_tensors = bytes;
  std::fill(huge_tensors.begin() + 8, huge_tensors.begin() + 16, 0xff);
  EXPECT_THAT(GgufFile::Parse(huge_tensors.data(), huge_tensors.size()).error(),
              HasSubstr("tensor count"));
  auto huge_metadata = bytes;
  std::fill(huge_metadata.begin() + 16, huge_metadata.begin() + 24, 0x7f);
  EXPECT_THAT(GgufFile::Parse(huge_metadata.data(), huge_metadata.size()).error(),
              HasSubstr("metadata count"));
}

// Builds a file byte by byte: header, one tensor info with the given fields, and data.
std::vector<uint8_t> OneTensorFile(uint32_t num_dims, uint64_t dim, uint32_t type, uint64_t offset,
                                   size_t data_bytes) {
  std::vector<uint8_t> out;
  auto pod = [&out](auto value) {
    auto* p = reinterpret_cast<const uint8_t*>(&value);
    out.insert(out.end(), p, p + sizeof(value));
  };
  pod(GgufFile::kMagic);
  pod(uint32_t{3});
  pod(uint64_t{1});  // tensors
  pod(uint64_t{0});  // metadata
  pod(uint64_t{4});
  out.insert(out.end(), {'w', 'e', 'i', 'g'});
  pod(num_dims);
  for (uint32_t d = 0; d < num_dims; ++d) pod(dim);
  pod(type);
  pod(offset);
  out.resize((out.size() + 31) / 32 * 32 + data_bytes, 0);
  return out;
}

TEST(GgufFileTest, ChecksTensorInfos) {
  auto ok = OneTensorFile(1, 32, 0, 0, 128);
  EXPECT_TRUE(GgufFile::Parse(ok.data(), ok.size()).ok());
  auto past_end = OneTensorFile(1, 32, 0, 64, 128);
  EXPECT_THAT(GgufFile::Parse(past_end.data(), past_end.size()).error(), HasSubstr("past the end"));
  auto misaligned = OneTensorFile(1, 32, 0, 3, 256);
  EXPECT_THAT(GgufFile::Parse(misaligned.data(), misaligned.size()).error(),
              HasSubstr("not aligned"));
  auto too_many_dims = OneTensorFile(5, 2, 0, 0, 128);
  EXPECT_THAT(GgufFile::Parse(too_many_dims.data(), too_many_dims.size()).error(),
              HasSubstr("5 dimensions"));
  auto absurd_dim = OneTensorFile(4, uint64_t{1} << 20, 0, 0, 128);
  EXPECT_THAT(GgufFile::Parse(absurd_dim.data(), absurd_dim.size()).error(),
              HasSubstr("invalid dimension"));
  auto q4_k = OneTensorFile(1, 256, 12, 0, 256);
  EXPECT_TRUE(GgufFile::Parse(q4_k.data(), q4_k.size()).ok());
  auto q4_k_short_row = OneTensorFile(1, 128, 12, 0, 256);
  EXPECT_THAT(GgufFile::Parse(q4_k_short_row.data(), q4_k_short_row.size()).error(),
              HasSubstr("row length 128 is not a multiple of the q4_K block size"));
  // The types no kernel computes with (IQ2/IQ3/IQ1, TQ) are refused by name.
  for (auto [type, name] :
       {std::pair{16, "iq2_xxs"}, {18, "iq3_xxs"}, {29, "iq1_m"}, {35, "tq2_0"}}) {
    auto file = OneTensorFile(1, 256, type, 0, 256);
    EXPECT_THAT(GgufFile::Parse(file.data(), file.size()).error(),
                HasSubstr(std::string("tensor 'weig' has unsupported tensor type ") + name));
  }
}

TEST(GgufFileTest, OpensTheDemoModel) {
  auto file = GgufFile::Open(std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf");
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_EQ(*(*file)->GetString("general.architecture").value(), "llama");
  EXPECT_NE((*file)->FindTensor("token_embd.weight"), nullptr);
  EXPECT_EQ((*file)->GetStringArray("tokenizer.ggml.tokens").value()->size(), 512u);
}

TEST(GgufFileTest, MissingFileIsAnError) {
  auto file = GgufFile::Open("/nonexistent/model.gguf");
  EXPECT_THAT(file.error(), HasSubstr("cannot open"));
}

}  // namespace
}  // namespace vllm
