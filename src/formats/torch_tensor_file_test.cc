#include "formats/torch_tensor_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/zip_archive.h"

namespace vllm {
namespace {

using namespace std::string_literals;
using namespace std::string_view_literals;

std::vector<uint8_t> Bytes(std::string_view text) { return {text.begin(), text.end()}; }

// The data.pkl torch.save writes for a contiguous float32 tensor of shape (2, 3), opcode by
// opcode (pickle protocol 2; q n is BINPUT n, K n BININT1 n, X a length-prefixed string):
//   PROTO 2; GLOBAL torch._utils._rebuild_tensor_v2; q0; MARK
//     MARK 'storage' q1, GLOBAL torch.FloatStorage q2, '0' q3, 'cpu' q4, K 6; TUPLE q5
//     BINPERSID                       -> the storage, its bytes in archive/data/0
//     K 0                             -> storage_offset
//     K 2 K 3 TUPLE2 q6               -> size
//     K 3 K 1 TUPLE2 q7               -> stride
//     NEWFALSE                        -> requires_grad
//     GLOBAL collections.OrderedDict q8; EMPTY_TUPLE; REDUCE q9   -> backward_hooks
//   TUPLE q10; REDUCE q11; STOP
std::vector<uint8_t> TorchPickleOf2x3Float() {
  std::string p = "\x80\x02"s;
  p += "ctorch._utils\n_rebuild_tensor_v2\nq\x00"s;
  p += "((X\x07\x00\x00\x00storageq\x01"s;
  p += "ctorch\nFloatStorage\nq\x02"s;
  p += "X\x01\x00\x00\x00"
       "0q\x03"s;
  p += "X\x03\x00\x00\x00"
       "cpuq\x04"s;
  p += "K\x06tq\x05Q"s;
  p += "K\x00"s;
  p += "K\x02K\x03\x86q\x06"s;
  p += "K\x03K\x01\x86q\x07"s;
  p += "\x89"s;
  p += "ccollections\nOrderedDict\nq\x08)Rq\x09"s;
  p += "tq\x0aRq\x0b."s;
  return Bytes(p);
}

// A torch.save archive whose data.pkl is `pickle` and whose storage "0" is `storage`.
std::vector<uint8_t> Archive(std::vector<uint8_t> pickle, std::vector<uint8_t> storage) {
  return WriteStoredZip({{"archive/data.pkl", std::move(pickle)},
                         {"archive/byteorder", Bytes("little")},
                         {"archive/data/0", std::move(storage)},
                         {"archive/version", Bytes("3\n")}});
}

std::vector<uint8_t> FloatBytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::string ErrorOf(const std::vector<uint8_t>& file) {
  auto tensor = ReadTorchTensor(file);
  return tensor.ok() ? "" : tensor.error();
}

TEST(TorchTensorFileTest, ReadsTheBytesTorchSaveWritesForAFloatMatrix) {
  const std::vector<float> values = {0.5f, -1.0f, 2.0f, 3.25f, -0.125f, 7.0f};
  auto tensor = ReadTorchTensor(Archive(TorchPickleOf2x3Float(), FloatBytes(values)));
  ASSERT_TRUE(tensor.ok()) << tensor.error();
  EXPECT_EQ(tensor->dtype, TorchDtype::kFloat32);
  EXPECT_EQ(tensor->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor->values, values);
}

TEST(TorchTensorFileTest, WriterEmitsTorchsPickleAndAlignedEntries) {
  const std::vector<int64_t> shape = {2, 3};
  const std::vector<float> values(6, 1.0f);
  const std::vector<uint8_t> file = WriteTorchTensor(TorchDtype::kFloat32, shape, values);
  auto entries = ReadStoredZip(file);
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 5u);
  EXPECT_EQ((*entries)[0].name, "archive/data.pkl");
  const auto& pickle = (*entries)[0].data;
  EXPECT_EQ(std::vector<uint8_t>(pickle.begin(), pickle.end()), TorchPickleOf2x3Float());
  for (const ZipEntry& entry : *entries) {
    EXPECT_EQ((entry.data.data() - file.data()) % 64, 0) << entry.name;
  }
}

TEST(TorchTensorFileTest, RoundTripsEveryDtypeAndABatchOfOne) {
  const std::vector<float> values = {1.0f, -2.5f, 0.375f, 65504.0f, -0.0f, 3.0f};
  for (TorchDtype dtype : {TorchDtype::kFloat32, TorchDtype::kBFloat16, TorchDtype::kFloat16}) {
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{2, 3}, std::vector<int64_t>{1, 3, 2}, std::vector<int64_t>{6},
          std::vector<int64_t>{1, 1, 2, 3}}) {
      auto tensor = ReadTorchTensor(WriteTorchTensor(dtype, shape, values));
      ASSERT_TRUE(tensor.ok()) << tensor.error();
      EXPECT_EQ(tensor->dtype, dtype);
      EXPECT_EQ(tensor->shape, shape);
      // All six values are exact in the three types but 65504 in bfloat16 (65536).
      std::vector<float> expected = values;
      if (dtype == TorchDtype::kBFloat16) expected[3] = 65536.0f;
      EXPECT_EQ(tensor->values, expected);
    }
  }
}

TEST(TorchTensorFileTest, ReadsLargeIntegersAndAnEmptyTensor) {
  std::vector<float> values(70000, 0.25f);  // numel needs BININT (J)
  auto big = ReadTorchTensor(
      WriteTorchTensor(TorchDtype::kFloat16, std::vector<int64_t>{7, 10000}, values));
  ASSERT_TRUE(big.ok()) << big.error();
  EXPECT_EQ(big->values.size(), 70000u);
  auto empty = ReadTorchTensor(
      WriteTorchTensor(TorchDtype::kFloat32, std::vector<int64_t>{0, 4}, std::vector<float>{}));
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(empty->shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(empty->values.empty());
}

// The pickle with `from` replaced by `to` (same storage bytes).
std::vector<uint8_t> Edited(std::string_view from, std::string_view to) {
  const std::vector<uint8_t> pickle = TorchPickleOf2x3Float();
  std::string text(pickle.begin(), pickle.end());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return Archive(Bytes(text), FloatBytes(std::vector<float>(6, 1.0f)));
}

TEST(TorchTensorFileTest, RefusesWhatASavedTensorDoesNotHold) {
  EXPECT_NE(ErrorOf(Edited("torch\nFloatStorage", "torch\nDoubleStorage"))
                .find("only float32, bfloat16 and float16 tensors are supported, not "
                      "torch.DoubleStorage"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(Edited("torch._utils\n_rebuild_tensor_v2", "os\nsystem")).find("names os.system"),
      std::string::npos);
  // Stride (3, 1) -> (1, 2): a transposed view.
  EXPECT_NE(ErrorOf(Edited("K\x03K\x01\x86", "K\x01K\x02\x86")).find("only contiguous"),
            std::string::npos);
  // Size (2, 3) -> (3, 3) over 6 elements.
  EXPECT_NE(ErrorOf(Edited("K\x02K\x03\x86", "K\x03K\x03\x86")).find("larger than its storage"),
            std::string::npos);
  // Offset 0 -> 1: the view runs past the storage's end.
  EXPECT_NE(ErrorOf(Edited("QK\x00"sv, "QK\x01"sv)).find("past the end"), std::string::npos);
  // A list opcode where the arguments' tuple belongs.
  EXPECT_NE(ErrorOf(Edited("tq\x0aR", "]q\x0aR")).find("opcode 0x5d"), std::string::npos);
  // Storage bytes that disagree with numel.
  EXPECT_NE(ErrorOf(Archive(TorchPickleOf2x3Float(), FloatBytes({1.0f})))
                .find("holds 4 bytes, not 6 float32 elements"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Bytes("not a zip")).find("invalid ZIP archive"), std::string::npos);
}

TEST(TorchTensorFileTest, RefusesCompressedEntries) {
  std::vector<uint8_t> file =
      WriteTorchTensor(TorchDtype::kFloat32, std::vector<int64_t>{1, 2}, std::vector<float>{1, 2});
  // Method 8 (deflate) in the first local header and its central-directory entry.
  file[8] = 8;
  auto entries_end = file.size() - 22;
  const size_t directory = file[entries_end + 16] | file[entries_end + 17] << 8;
  file[directory + 10] = 8;
  EXPECT_NE(ErrorOf(file).find("archive/data.pkl is compressed (method 8)"), std::string::npos)
      << ErrorOf(file);
}

// Fuzz-style: every truncation and every single-bit flip of a valid file is either read (a
// consistent tensor) or refused with an error; none crashes, hangs or reads out of bounds.
TEST(TorchTensorFileTest, TruncationsAndBitFlipsNeverCrash) {
  const std::vector<uint8_t> file = WriteTorchTensor(
      TorchDtype::kBFloat16, std::vector<int64_t>{3, 4}, std::vector<float>(12, 0.5f));
  for (size_t size = 0; size < file.size(); ++size) {
    EXPECT_FALSE(ReadTorchTensor(std::span(file.data(), size)).ok()) << size;
  }
  int num_read = 0;
  for (size_t byte = 0; byte < file.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> flipped = file;
      flipped[byte] ^= static_cast<uint8_t>(1 << bit);
      auto tensor = ReadTorchTensor(flipped);
      if (!tensor.ok()) {
        EXPECT_FALSE(tensor.error().empty());
        continue;
      }
      ++num_read;
      int64_t numel = 1;
      for (int64_t size : tensor->shape) numel *= size;
      EXPECT_EQ(static_cast<int64_t>(tensor->values.size()), numel);
    }
  }
  // Flips in fields nobody reads (times, padding, the serialization id) leave a valid file;
  // flips in the pickle and the data are caught by the CRC.
  EXPECT_GT(num_read, 0);
}

}  // namespace
}  // namespace vllm
