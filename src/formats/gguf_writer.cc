#include "formats/gguf_writer.h"

#include <cstring>

#include "formats/gguf_file.h"

namespace vllm {
namespace {
constexpr uint64_t kAlignment = GgufFile::kDefaultAlignment;

uint64_t AlignUp(uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

// Appends the little-endian encoding of GGUF values to a byte buffer.
class Encoder {
 public:
  template <typename T>
  void Pod(T value) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
    out_.insert(out_.end(), bytes, bytes + sizeof(T));
  }
  void String(const std::string& s) {
    Pod<uint64_t>(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void Value(const GgufValue& value) {
    switch (value.type) {
      case GgufValueType::kUint8:
        return Pod(static_cast<uint8_t>(std::get<uint64_t>(value.data)));
      case GgufValueType::kUint16:
        return Pod(static_cast<uint16_t>(std::get<uint64_t>(value.data)));
      case GgufValueType::kUint32:
        return Pod(static_cast<uint32_t>(std::get<uint64_t>(value.data)));
      case GgufValueType::kUint64:
        return Pod(std::get<uint64_t>(value.data));
      case GgufValueType::kInt8:
        return Pod(static_cast<int8_t>(std::get<int64_t>(value.data)));
      case GgufValueType::kInt16:
        return Pod(static_cast<int16_t>(std::get<int64_t>(value.data)));
      case GgufValueType::kInt32:
        return Pod(static_cast<int32_t>(std::get<int64_t>(value.data)));
      case GgufValueType::kInt64:
        return Pod(std::get<int64_t>(value.data));
      case GgufValueType::kFloat32:
        return Pod(static_cast<float>(std::get<double>(value.data)));
      case GgufValueType::kFloat64:
        return Pod(std::get<double>(value.data));
      case GgufValueType::kBool:
        return Pod(static_cast<uint8_t>(std::get<bool>(value.data) ? 1 : 0));
      case GgufValueType::kString:
        return String(std::get<std::string>(value.data));
      case GgufValueType::kArray: {
        const auto& array = std::get<GgufArray>(value.data);
        Pod(static_cast<uint32_t>(array.element_type));
        Pod<uint64_t>(array.items.size());
        for (const auto& item : array.items) Value(item);
        return;
      }
    }
  }
  const std::vector<uint8_t>& bytes() const { return out_; }

 private:
  std::vector<uint8_t> out_;
};
}  // namespace

GgufWriter::~GgufWriter() {
  if (out_ != nullptr) std::fclose(out_);
}

void GgufWriter::AddMetadata(std::string key, GgufValue value) {
  metadata_.emplace_back(std::move(key), std::move(value));
}

int64_t GgufWriter::TensorBytes(const std::vector<int64_t>& shape, GgmlType type) {
  auto traits = GetSupportedTypeTraits(type);
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count / traits->block_size * traits->block_bytes;
}

size_t GgufWriter::AddTensor(std::string name, std::vector<int64_t> shape, GgmlType type) {
  int64_t num_bytes = TensorBytes(shape, type);
  tensors_.push_back({std::move(name), std::move(shape), type, next_offset_, num_bytes});
  next_offset_ = AlignUp(next_offset_ + num_bytes);
  return tensors_.size() - 1;
}

Status GgufWriter::Begin(const std::string& path) {
  path_ = path;
  out_ = std::fopen(path.c_str(), "wb");
  if (out_ == nullptr) return Error{"cannot write '" + path + "': " + std::strerror(errno)};
  Encoder header;
  header.Pod<uint32_t>(GgufFile::kMagic);
  header.Pod<uint32_t>(3);
  header.Pod<uint64_t>(tensors_.size());
  header.Pod<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    header.String(key);
    header.Pod(static_cast<uint32_t>(value.type));
    header.Value(value);
  }
  for (const auto& tensor : tensors_) {
    header.String(tensor.name);
    header.Pod<uint32_t>(tensor.shape.size());
    for (int64_t dim : tensor.shape) header.Pod<uint64_t>(dim);
    header.Pod(static_cast<uint32_t>(tensor.type));
    header.Pod<uint64_t>(tensor.offset);
  }
  const auto& bytes = header.bytes();
  if (std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size()) {
    return Error{"write to '" + path + "' failed"};
  }
  return WritePadding(bytes.size());
}

Status GgufWriter::WritePadding(uint64_t written) {
  static const uint8_t kZeros[kAlignment] = {};
  uint64_t padding = AlignUp(written) - written;
  if (padding != 0 && std::fwrite(kZeros, 1, padding, out_) != padding) {
    return Error{"write to '" + path_ + "' failed"};
  }
  return Status::Ok();
}

Status GgufWriter::WriteTensorData(size_t index, const void* data, size_t num_bytes) {
  if (out_ == nullptr) return Error{"GgufWriter::Begin was not called"};
  if (index != next_tensor_ || index >= tensors_.size()) {
    return Error{"tensor data written out of order"};
  }
  const TensorEntry& tensor = tensors_[index];
  if (static_cast<int64_t>(num_bytes) != tensor.num_bytes) {
    return Error{"tensor '" + tensor.name + "' expects " + std::to_string(tensor.num_bytes) +
                 " bytes, got " + std::to_string(num_bytes)};
  }
  if (std::fwrite(data, 1, num_bytes, out_) != num_bytes) {
    return Error{"write to '" + path_ + "' failed"};
  }
  ++next_tensor_;
  return WritePadding(num_bytes);
}

Status GgufWriter::Finish() {
  if (next_tensor_ != tensors_.size()) return Error{"not every tensor's data was written"};
  if (out_ == nullptr) return Error{"GgufWriter::Begin was not called"};
  int result = std::fclose(out_);
  out_ = nullptr;
  if (result != 0) return Error{"closing '" + path_ + "' failed"};
  return Status::Ok();
}

}  // namespace vllm
