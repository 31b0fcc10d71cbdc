// WriteTorchTensor: the archive torch.save writes for one tensor, as torch 2.x lays it out
// (pickle protocol 2 in STORED entries).
#include <cstring>
#include <string>

#include "common/half.h"
#include "formats/little_endian.h"
#include "formats/torch_tensor_file.h"
#include "formats/zip_archive.h"

namespace vllm {
namespace {

// Pickle protocol 2, as Python's pickler writes torch's reduce of a tensor.
class PickleWriter {
 public:
  void Op(uint8_t opcode) { out_.push_back(opcode); }
  void Global(std::string_view module, std::string_view name) {
    Op('c');
    PutBytes(out_, module);
    Op('\n');
    PutBytes(out_, name);
    Op('\n');
    Memoize();
  }
  void String(std::string_view text) {
    Op('X');
    PutU32(out_, static_cast<uint32_t>(text.size()));
    PutBytes(out_, text);
    Memoize();
  }
  void Int(int64_t value) {
    if (value >= 0 && value < 0x100) {
      Op('K');
      Op(static_cast<uint8_t>(value));
    } else if (value >= 0 && value < 0x10000) {
      Op('M');
      PutU16(out_, static_cast<uint32_t>(value));
    } else if (value >= INT32_MIN && value <= INT32_MAX) {
      Op('J');
      PutU32(out_, static_cast<uint32_t>(value));
    } else {
      Op(0x8a);  // LONG1, 8 bytes
      Op(8);
      for (int i = 0; i < 8; ++i) Op(static_cast<uint8_t>(static_cast<uint64_t>(value) >> 8 * i));
    }
  }
  // A tuple of small ints: TUPLE1/2/3 up to three items, MARK ... TUPLE beyond, () when empty.
  void IntTuple(std::span<const int64_t> values) {
    if (values.empty()) {
      Op(')');
      return;
    }
    if (values.size() > 3) Op('(');
    for (int64_t value : values) Int(value);
    Op(values.size() > 3 ? 't' : static_cast<uint8_t>(0x84 + values.size()));
    Memoize();
  }
  void Memoize() {
    Op('q');  // BINPUT
    Op(static_cast<uint8_t>(next_memo_++));
  }
  std::vector<uint8_t> Take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
  int next_memo_ = 0;
};

}  // namespace

std::vector<uint8_t> WriteTorchTensor(TorchDtype dtype, std::span<const int64_t> shape,
                                      std::span<const float> values) {
  const auto numel = static_cast<int64_t>(values.size());
  std::vector<int64_t> stride(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    stride[d] = step;
    step *= shape[d];
  }
  // torch._utils._rebuild_tensor_v2(storage, 0, shape, stride, False, OrderedDict()), the
  // storage a persistent id ('storage', torch.<Type>Storage, "0", "cpu", numel).
  PickleWriter pickle;
  pickle.Op(0x80);  // PROTO 2
  pickle.Op(2);
  pickle.Global("torch._utils", "_rebuild_tensor_v2");
  pickle.Op('(');
  pickle.Op('(');
  pickle.String("storage");
  pickle.Global("torch", dtype == TorchDtype::kFloat32    ? "FloatStorage"
                         : dtype == TorchDtype::kBFloat16 ? "BFloat16Storage"
                                                          : "HalfStorage");
  pickle.String("0");
  pickle.String("cpu");
  pickle.Int(numel);
  pickle.Op('t');
  pickle.Memoize();
  pickle.Op('Q');  // BINPERSID
  pickle.Int(0);   // storage offset
  pickle.IntTuple(shape);
  pickle.IntTuple(stride);
  pickle.Op(0x89);  // NEWFALSE: requires_grad
  pickle.Global("collections", "OrderedDict");
  pickle.Op(')');
  pickle.Op('R');
  pickle.Memoize();
  pickle.Op('t');
  pickle.Memoize();
  pickle.Op('R');
  pickle.Memoize();
  pickle.Op('.');

  std::vector<uint8_t> storage;
  for (float value : values) {
    if (dtype == TorchDtype::kFloat32) {
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      PutU32(storage, bits);
    } else {
      PutU16(storage, dtype == TorchDtype::kBFloat16 ? Fp32ToBf16(value) : Fp32ToFp16(value));
    }
  }
  return WriteStoredZip({{"archive/data.pkl", pickle.Take()},
                         {"archive/byteorder", {'l', 'i', 't', 't', 'l', 'e'}},
                         {"archive/data/0", std::move(storage)},
                         {"archive/version", {'3', '\n'}},
                         {"archive/.data/serialization_id", std::vector<uint8_t>(40, '0')}});
}

}  // namespace vllm
