// Tests for the safetensors reader, writer and sharded-directory loader: round trips, and one
// hand-built malformed input per check the parser makes.
#include "formats/safetensors_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "formats/safetensors_index.h"
#include "formats/safetensors_writer.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir()
      : path_(fs::temp_directory_path() /
              ("safetensors_test_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A file from its parts: the header length (header.size() unless given), the header, the data.
std::vector<uint8_t> Frame(const std::string& header, const std::string& data = "",
                           std::optional<uint64_t> header_length = std::nullopt) {
  uint64_t length = header_length.value_or(header.size());
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(length >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The error of parsing `bytes`, failing the test when parsing succeeds.
std::string ParseError(const std::vector<uint8_t>& bytes) {
  auto file = SafetensorsFile::Parse(bytes.data(), bytes.size());
  EXPECT_FALSE(file.ok());
  return file.ok() ? "" : file.error();
}

// The error of a header holding one tensor "a" with these fields and `data_size` data bytes.
std::string EntryError(const std::string& fields, size_t data_size = 16) {
  return ParseError(Frame("{\"a\":{" + fields + "}}", std::string(data_size, '\0')));
}

std::vector<float> Floats(const SafetensorsTensor& tensor) {
  std::vector<float> out(tensor.num_bytes / sizeof(float));
  std::memcpy(out.data(), tensor.data, tensor.num_bytes);
  return out;
}

std::vector<uint16_t> Halves(const SafetensorsTensor& tensor) {
  std::vector<uint16_t> out(tensor.num_bytes / sizeof(uint16_t));
  std::memcpy(out.data(), tensor.data, tensor.num_bytes);
  return out;
}

SafetensorsTensor View(std::string name, GgmlType type, std::vector<int64_t> shape,
                       const void* data, size_t num_bytes) {
  return {std::move(name), type, std::move(shape), data, static_cast<int64_t>(num_bytes)};
}

// Sample tensors: F32 [2, 3], F16 [3], BF16 [2, 2], an F32 scalar and an empty F16 [0, 4].
struct Sample {
  std::vector<float> weight = {0.5f, -1.0f, 2.25f, 3.0f, -4.5f, 5.0f};
  std::vector<uint16_t> half = {0x3c00, 0xc000, 0x7bff};           // 1, -2, 65504
  std::vector<uint16_t> brain = {0x3f80, 0x4000, 0xbf80, 0x0000};  // 1, 2, -1, 0
  float scale = 0.125f;
  std::vector<SafetensorsTensor> tensors() const {
    return {View("model.weight", GgmlType::kF32, {2, 3}, weight.data(), weight.size() * 4),
            View("model.half", GgmlType::kF16, {3}, half.data(), half.size() * 2),
            View("model.brain", GgmlType::kBF16, {2, 2}, brain.data(), brain.size() * 2),
            View("scale", GgmlType::kF32, {}, &scale, 4),
            View("empty", GgmlType::kF16, {0, 4}, nullptr, 0)};
  }
};

void ExpectSample(const std::vector<SafetensorsTensor>& tensors) {
  ASSERT_EQ(tensors.size(), 5u);
  EXPECT_EQ(tensors[0].name, "model.weight");
  EXPECT_EQ(tensors[0].type, GgmlType::kF32);
  EXPECT_THAT(tensors[0].shape, ElementsAre(2, 3));
  EXPECT_EQ(tensors[0].num_bytes, 24);
  EXPECT_THAT(Floats(tensors[0]), ElementsAre(0.5f, -1.0f, 2.25f, 3.0f, -4.5f, 5.0f));
  EXPECT_EQ(tensors[1].name, "model.half");
  EXPECT_EQ(tensors[1].type, GgmlType::kF16);
  EXPECT_THAT(tensors[1].shape, ElementsAre(3));
  EXPECT_THAT(Halves(tensors[1]), ElementsAre(0x3c00, 0xc000, 0x7bff));
  EXPECT_EQ(tensors[2].name, "model.brain");
  EXPECT_EQ(tensors[2].type, GgmlType::kBF16);
  EXPECT_THAT(tensors[2].shape, ElementsAre(2, 2));
  EXPECT_THAT(Halves(tensors[2]), ElementsAre(0x3f80, 0x4000, 0xbf80, 0x0000));
  EXPECT_EQ(tensors[3].name, "scale");
  EXPECT_TRUE(tensors[3].shape.empty());
  EXPECT_THAT(Floats(tensors[3]), ElementsAre(0.125f));
  EXPECT_EQ(tensors[4].name, "empty");
  EXPECT_THAT(tensors[4].shape, ElementsAre(0, 4));
  EXPECT_EQ(tensors[4].num_bytes, 0);
}

TEST(SafetensorsFileTest, RoundTripsInMemory) {
  Sample sample;
  auto bytes = SerializeSafetensors(sample.tensors(), {{"format", "pt"}, {"note", "x\"y"}});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes->data(), 8);
  EXPECT_EQ(header_size % 8, 0u);
  EXPECT_EQ(bytes->size(), 8 + header_size + 24 + 6 + 8 + 4);
  auto file = SafetensorsFile::Parse(bytes->data(), bytes->size());
  ASSERT_TRUE(file.ok()) << file.error();
  ExpectSample((*file)->tensors());
  EXPECT_EQ((*file)->metadata(),
            (std::map<std::string, std::string>{{"format", "pt"}, {"note", "x\"y"}}));
  // Data is laid out in the order given, right after the header.
  EXPECT_EQ((*file)->FindTensor("model.weight")->data, bytes->data() + 8 + header_size);
  EXPECT_EQ((*file)->FindTensor("model.half")->data, bytes->data() + 8 + header_size + 24);
  EXPECT_EQ((*file)->FindTensor("missing"), nullptr);
}

TEST(SafetensorsFileTest, PadsHeaderWithSpaces) {
  float value = 1.0f;
  // {"a":{"data_offsets":[0,4],"dtype":"F32","shape":[1]}} is 54 bytes: 2 spaces pad it to 56.
  auto bytes = SerializeSafetensors({View("a", GgmlType::kF32, {1}, &value, 4)});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  std::string header(bytes->begin() + 8, bytes->end() - 4);
  EXPECT_EQ(header, R"({"a":{"data_offsets":[0,4],"dtype":"F32","shape":[1]}}  )");
  EXPECT_EQ((*bytes)[0], 56);
}

TEST(SafetensorsFileTest, RoundTripsThroughAFile) {
  ScratchDir dir;
  Sample sample;
  ASSERT_TRUE(WriteSafetensors(dir / "m.safetensors", sample.tensors(), {{"k", "v"}}).ok());
  auto file = SafetensorsFile::Open(dir / "m.safetensors");
  ASSERT_TRUE(file.ok()) << file.error();
  ExpectSample((*file)->tensors());
  EXPECT_EQ((*file)->metadata().at("k"), "v");
  auto bytes = ReadAll(dir / "m.safetensors");
  auto in_memory = SerializeSafetensors(sample.tensors(), {{"k", "v"}});
  EXPECT_EQ(bytes, *in_memory);
}

TEST(SafetensorsFileTest, RoundTripsQuantizedCheckpointDtypes) {
  const int32_t packed[2] = {0x76543210, -1};
  const uint8_t fp8[4] = {0x38, 0xb8, 0x00, 0x7e};
  const int64_t shape[2] = {4, 8};
  SafetensorsTensor fp8_view = View("w", GgmlType::kI8, {4}, fp8, 4);
  fp8_view.dtype = "F8_E4M3";
  auto bytes = SerializeSafetensors({View("q", GgmlType::kI32, {2}, packed, 8), fp8_view,
                                     View("s", GgmlType::kI64, {2}, shape, 16)});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  auto file = SafetensorsFile::Parse(bytes->data(), bytes->size());
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_EQ((*file)->FindTensor("q")->dtype, "I32");
  EXPECT_EQ((*file)->FindTensor("q")->type, GgmlType::kI32);
  EXPECT_EQ((*file)->FindTensor("w")->dtype, "F8_E4M3");
  EXPECT_EQ((*file)->FindTensor("w")->type, GgmlType::kI8);
  EXPECT_EQ((*file)->FindTensor("s")->dtype, "I64");
  EXPECT_EQ(std::memcmp((*file)->FindTensor("q")->data, packed, 8), 0);
  // A dtype name must be read as the tensor's type.
  fp8_view.dtype = "I32";
  EXPECT_EQ(SerializeSafetensors({fp8_view}).error(),
            "tensor 'w' has dtype I32, which is not read as type i8");
}

TEST(SafetensorsFileTest, OrdersTensorsByOffsetAndAllowsGaps) {
  auto bytes = Frame(R"({"b":{"dtype":"F16","shape":[2],"data_offsets":[12,16]},)"
                     R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                     R"("z":{"dtype":"F32","shape":[0],"data_offsets":[2,2]}})",
                     "ABCDEFGHIJKLMNOP");
  auto file = SafetensorsFile::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.error();
  const auto& tensors = (*file)->tensors();
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "a");
  EXPECT_EQ(tensors[1].name, "z");
  EXPECT_EQ(tensors[2].name, "b");
  EXPECT_EQ(std::string(static_cast<const char*>(tensors[2].data), 4), "MNOP");
  EXPECT_TRUE((*file)->metadata().empty());
}

TEST(SafetensorsFileTest, WriterRejectsBadTensors) {
  float values[2] = {1, 2};
  auto error = [](std::vector<SafetensorsTensor> tensors) {
    auto bytes = SerializeSafetensors(tensors);
    EXPECT_FALSE(bytes.ok());
    return bytes.ok() ? "" : bytes.error();
  };
  EXPECT_EQ(
      error({View("q", GgmlType::kQ8_0, {32}, values, 34)}),
      "tensor 'q' has type q8_0 (safetensors supports F32, F16, BF16, F64, U8, I16, I32, I64)");
  EXPECT_EQ(error({View("a", GgmlType::kF32, {3}, values, 8)}),
            "tensor 'a' has 8 bytes but its shape needs 12");
  EXPECT_EQ(error({View("a", GgmlType::kF32, {-1}, values, 8)}),
            "tensor 'a' has a negative or overflowing shape");
  EXPECT_EQ(error({View("a", GgmlType::kF32, {1}, values, 4),
                   View("a", GgmlType::kF32, {1}, values + 1, 4)}),
            "duplicate tensor 'a'");
  EXPECT_EQ(error({View("__metadata__", GgmlType::kF32, {1}, values, 4)}),
            "tensor '__metadata__': the name is reserved");
  EXPECT_THAT(error({View("bad\xff", GgmlType::kF32, {1}, values, 4)}),
              HasSubstr("cannot encode the safetensors header"));
}

TEST(SafetensorsFileTest, OpenReportsThePath) {
  ScratchDir dir;
  WriteText(dir / "bad.safetensors", "abc");
  auto file = SafetensorsFile::Open(dir / "bad.safetensors");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error(), dir / "bad.safetensors" +
                              ": file too small to be safetensors (3 bytes, need at least 8)");
  EXPECT_THAT(SafetensorsFile::Open(dir / "none").error(), HasSubstr("cannot open"));
}

// Malformed inputs: one test per check.

TEST(SafetensorsMalformedTest, FileShorterThanEightBytes) {
  EXPECT_EQ(ParseError({1, 0, 0, 0, 0}),
            "file too small to be safetensors (5 bytes, need at least 8)");
  EXPECT_EQ(ParseError({}), "file too small to be safetensors (0 bytes, need at least 8)");
}

TEST(SafetensorsMalformedTest, HeaderLongerThanFile) {
  EXPECT_EQ(ParseError(Frame("{}", "", 100)),
            "header length 100 exceeds the 2 bytes after the length prefix");
}

TEST(SafetensorsMalformedTest, HeaderOverTheCap) {
  EXPECT_EQ(ParseError(Frame("{}", "", (uint64_t{100} << 20) + 1)),
            "header length 104857601 exceeds the limit of 104857600 bytes");
  EXPECT_EQ(ParseError(Frame("{}", "", ~uint64_t{0})),
            "header length 18446744073709551615 exceeds the limit of 104857600 bytes");
}

TEST(SafetensorsMalformedTest, HeaderNotJson) {
  EXPECT_THAT(ParseError(Frame("{\"a\": ")), HasSubstr("header is not valid JSON: "));
  EXPECT_THAT(ParseError(Frame("")), HasSubstr("header is not valid JSON: "));
  // Padding must be spaces: NUL bytes after the object are not JSON.
  EXPECT_EQ(ParseError(Frame(std::string("{}\0\0", 4))),
            "header is not valid JSON: NUL byte at offset 2");
}

TEST(SafetensorsMalformedTest, HeaderNotObject) {
  EXPECT_EQ(ParseError(Frame("[1, 2]")), "header is not a JSON object");
  EXPECT_EQ(ParseError(Frame("\"a\"")), "header is not a JSON object");
}

TEST(SafetensorsMalformedTest, EntryNotObject) {
  EXPECT_EQ(ParseError(Frame(R"({"a": [1]})")), "tensor 'a' entry is not a JSON object");
}

TEST(SafetensorsMalformedTest, MissingFields) {
  EXPECT_EQ(EntryError(R"("shape":[1],"data_offsets":[0,4])"), "tensor 'a' is missing 'dtype'");
  EXPECT_EQ(EntryError(R"("dtype":"F32","data_offsets":[0,4])"), "tensor 'a' is missing 'shape'");
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1])"), "tensor 'a' is missing 'data_offsets'");
}

TEST(SafetensorsMalformedTest, WrongFieldTypes) {
  EXPECT_EQ(EntryError(R"("dtype":4,"shape":[1],"data_offsets":[0,4])"),
            "tensor 'a' dtype is not a string");
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":1,"data_offsets":[0,4])"),
            "tensor 'a' shape is not an array");
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1.0],"data_offsets":[0,4])"),
            "tensor 'a' shape holds a non-integer");
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":["1"],"data_offsets":[0,4])"),
            "tensor 'a' shape holds a non-integer");
  const std::string bad_offsets = "tensor 'a' data_offsets is not [begin, end] of integers >= 0";
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":[0])"), bad_offsets);
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":[0,4,8])"), bad_offsets);
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":{"0":4})"), bad_offsets);
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":[-4,0])"), bad_offsets);
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":[0,4.0])"), bad_offsets);
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":[0,1e30])"), bad_offsets);
}

TEST(SafetensorsMalformedTest, UnsupportedDtype) {
  EXPECT_EQ(EntryError(R"("dtype":"BOOL","shape":[1],"data_offsets":[0,1])"),
            "tensor 'a' has unsupported dtype BOOL (supported: F32, F16, BF16, F64, U8, I8, I16, "
            "I32, I64, F8_E4M3, F8_E5M2)");
  EXPECT_EQ(EntryError(R"("dtype":"f32","shape":[1],"data_offsets":[0,4])"),
            "tensor 'a' has unsupported dtype f32 (supported: F32, F16, BF16, F64, U8, I8, I16, "
            "I32, I64, F8_E4M3, F8_E5M2)");
  // Quantized checkpoints' dtypes are read with their element sizes.
  EXPECT_EQ(EntryError(R"("dtype":"I32","shape":[3],"data_offsets":[0,8])"),
            "tensor 'a' data_offsets [0, 8] hold 8 bytes but shape [3] of I32 needs 12");
}

TEST(SafetensorsMalformedTest, NegativeDimension) {
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[2,-3],"data_offsets":[0,4])"),
            "tensor 'a' shape has negative dimension -3");
}

TEST(SafetensorsMalformedTest, OverflowingShape) {
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,4])"),
            "tensor 'a' shape dimension 18446744073709551615 overflows int64");
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4])"),
            "tensor 'a' shape [4294967296, 4294967296] of F32 overflows 64-bit byte counts");
  // 2^62 elements fit in int64 but their 2^64 bytes do not.
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4])"),
            "tensor 'a' shape [4611686018427387904] of F32 overflows 64-bit byte counts");
}

TEST(SafetensorsMalformedTest, BeginAfterEnd) {
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[1],"data_offsets":[8,4])"),
            "tensor 'a' data_offsets [8, 4] has begin > end");
}

TEST(SafetensorsMalformedTest, EndPastDataSection) {
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[4],"data_offsets":[4,20])", 16),
            "tensor 'a' data_offsets [4, 20] end past the data section (16 bytes)");
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[0],"data_offsets":[17,17])", 16),
            "tensor 'a' data_offsets [17, 17] end past the data section (16 bytes)");
}

TEST(SafetensorsMalformedTest, ByteCountDiffersFromShape) {
  EXPECT_EQ(EntryError(R"("dtype":"F32","shape":[3],"data_offsets":[0,8])"),
            "tensor 'a' data_offsets [0, 8] hold 8 bytes but shape [3] of F32 needs 12");
  EXPECT_EQ(EntryError(R"("dtype":"BF16","shape":[2,2],"data_offsets":[0,16])"),
            "tensor 'a' data_offsets [0, 16] hold 16 bytes but shape [2, 2] of BF16 needs 8");
}

TEST(SafetensorsMalformedTest, OverlappingTensors) {
  std::string data(32, '\0');
  EXPECT_EQ(ParseError(Frame(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                             data)),
            "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
  // "c" lies inside "a" though "b", between them by begin, ends before it.
  EXPECT_EQ(ParseError(Frame(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                             R"("c":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                             data)),
            "tensors 'a' [0, 24) and 'b' [4, 8) overlap");
  EXPECT_EQ(ParseError(Frame(R"({"x":{"dtype":"F16","shape":[4],"data_offsets":[8,16]},)"
                             R"("y":{"dtype":"F16","shape":[4],"data_offsets":[8,16]}})",
                             data)),
            "tensors 'x' [8, 16) and 'y' [8, 16) overlap");
}

TEST(SafetensorsMalformedTest, DuplicateNames) {
  EXPECT_EQ(ParseError(Frame(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                             std::string(8, '\0'))),
            "duplicate tensor name 'a'");
  EXPECT_EQ(EntryError(R"("dtype":"F32","dtype":"I64","shape":[1],"data_offsets":[0,4])"),
            "duplicate header key 'dtype'");
}

TEST(SafetensorsMalformedTest, BadMetadata) {
  EXPECT_EQ(ParseError(Frame(R"({"__metadata__":[]})")), "__metadata__ is not a JSON object");
  EXPECT_EQ(ParseError(Frame(R"({"__metadata__":{"a":"b","n":1}})")),
            "__metadata__ value 'n' is not a string");
}

// Sharded directories.

TEST(SafetensorsModelTest, OpensShardsFromTheIndex) {
  ScratchDir dir;
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6}, c = {7, 8, 9};
  ASSERT_TRUE(WriteSafetensors(dir / "model-00001-of-00002.safetensors",
                               {View("a", GgmlType::kF32, {2, 2}, a.data(), 16),
                                View("b", GgmlType::kF32, {2}, b.data(), 8)})
                  .ok());
  ASSERT_TRUE(WriteSafetensors(dir / "model-00002-of-00002.safetensors",
                               {View("c", GgmlType::kF32, {3, 1}, c.data(), 12)})
                  .ok());
  WriteText(dir / "model.safetensors.index.json",
            R"({"metadata": {"total_size": 36}, "weight_map": {)"
            R"("c": "model-00002-of-00002.safetensors",)"
            R"("a": "model-00001-of-00002.safetensors",)"
            R"("b": "./model-00001-of-00002.safetensors"}})");
  auto model = SafetensorsModel::OpenDirectory(dir.str());
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_EQ((*model)->shards().size(), 2u);
  const auto& tensors = (*model)->tensors();
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0]->name, "a");
  EXPECT_EQ(tensors[1]->name, "b");
  EXPECT_EQ(tensors[2]->name, "c");
  const SafetensorsTensor* found = (*model)->FindTensor("c");
  ASSERT_NE(found, nullptr);
  EXPECT_THAT(found->shape, ElementsAre(3, 1));
  EXPECT_THAT(Floats(*found), ElementsAre(7, 8, 9));
  EXPECT_THAT(Floats(*(*model)->FindTensor("a")), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ((*model)->FindTensor("d"), nullptr);
}

TEST(SafetensorsModelTest, PrefersTheSingleFile) {
  ScratchDir dir;
  float value = 3.5f;
  ASSERT_TRUE(
      WriteSafetensors(dir / "model.safetensors", {View("w", GgmlType::kF32, {1}, &value, 4)})
          .ok());
  WriteText(dir / "model.safetensors.index.json", "not json");
  auto model = SafetensorsModel::OpenDirectory(dir.str());
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_EQ((*model)->shards().size(), 1u);
  ASSERT_EQ((*model)->tensors().size(), 1u);
  EXPECT_THAT(Floats(*(*model)->FindTensor("w")), ElementsAre(3.5f));
}

TEST(SafetensorsModelTest, RejectsBadDirectories) {
  ScratchDir dir;
  auto error = [&] {
    auto model = SafetensorsModel::OpenDirectory(dir.str());
    EXPECT_FALSE(model.ok());
    return model.ok() ? "" : model.error();
  };
  EXPECT_EQ(error(),
            "'" + dir.str() + "' has neither model.safetensors nor model.safetensors.index.json");

  float value = 1.0f;
  ASSERT_TRUE(
      WriteSafetensors(dir / "s1.safetensors", {View("w", GgmlType::kF32, {1}, &value, 4)}).ok());
  ASSERT_TRUE(
      WriteSafetensors(dir / "s2.safetensors", {View("w", GgmlType::kF32, {1}, &value, 4)}).ok());
  const std::string index = dir / "model.safetensors.index.json";
  WriteText(index, R"({"weight_map": {"w": "s1.safetensors", "v": "s1.safetensors"}})");
  EXPECT_EQ(error(),
            "model.safetensors.index.json maps tensor 'v' to 's1.safetensors', which "
            "lacks it");
  WriteText(index, R"({"weight_map": {"w": "s1.safetensors", "v": "s2.safetensors"}})");
  EXPECT_EQ(error(), "tensor 'w' is in both 's1.safetensors' and 's2.safetensors'");
  WriteText(index, R"({"weight_map": {"w": "../s1.safetensors"}})");
  EXPECT_EQ(error(), index +
                         ": weight_map['w'] = '../s1.safetensors' is not a path inside the "
                         "directory");
  WriteText(index, R"({"weight_map": {"w": "sub/../../s1.safetensors"}})");
  EXPECT_THAT(error(), HasSubstr("is not a path inside the directory"));
  WriteText(index, R"({"weight_map": {"w": "/tmp/s1.safetensors"}})");
  EXPECT_EQ(error(), index +
                         ": weight_map['w'] = '/tmp/s1.safetensors' is not a path inside "
                         "the directory");
  WriteText(index, R"({"weight_map": {"w": 3}})");
  EXPECT_EQ(error(), index + ": weight_map['w'] is not a string");
  WriteText(index, R"({"weights": {}})");
  EXPECT_EQ(error(), index + ": no \"weight_map\" object");
  WriteText(index, "{");
  EXPECT_THAT(error(), HasSubstr(index + ": not valid JSON: "));
  WriteText(index, R"({"weight_map": {"w": "missing.safetensors"}})");
  EXPECT_THAT(error(), HasSubstr("cannot open '" + (dir / "missing.safetensors") + "'"));
  WriteText(dir / "broken.safetensors", "12345");
  WriteText(index, R"({"weight_map": {"w": "broken.safetensors"}})");
  EXPECT_EQ(error(), dir / "broken.safetensors" +
                         ": file too small to be safetensors (5 bytes, need at least 8)");
}

}  // namespace
}  // namespace vllm
