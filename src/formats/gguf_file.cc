#include "formats/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "formats/map_and_parse.h"

namespace vllm {

namespace {
constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

bool IsInteger(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
      return true;
    default:
      return false;
  }
}

// Bytes of one element on disk; strings and arrays have a minimum (their length prefixes).
uint64_t MinEncodedSize(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
    case GgufValueType::kString:
      return 8;
    case GgufValueType::kArray:
      return 12;
  }
  return 1;
}

bool IsValidType(uint32_t raw) { return raw <= static_cast<uint32_t>(GgufValueType::kFloat64); }

std::optional<int64_t> ToInt(const GgufValue& value) {
  if (!IsInteger(value.type)) return std::nullopt;
  if (const auto* u = std::get_if<uint64_t>(&value.data)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  return std::get<int64_t>(value.data);
}

std::optional<double> ToFloat(const GgufValue& value) {
  if (const auto* d = std::get_if<double>(&value.data)) return *d;
  if (auto i = ToInt(value)) return static_cast<double>(*i);
  return std::nullopt;
}
}  // namespace

// Reads the GGUF layout from a byte range, checking every read against the end.
class GgufParser {
 public:
  GgufParser(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  Status Parse(GgufFile* file) {
    uint32_t magic = 0;
    if (!ReadPod(&magic)) return Error{"file too small to be GGUF"};
    if (magic != GgufFile::kMagic) return Error{"not a GGUF file (bad magic)"};
    if (!ReadPod(&file->version_)) return Truncated("version");
    if (file->version_ == 1) return Error{"GGUF version 1 is not supported (only 2 and 3)"};
    if (file->version_ != 2 && file->version_ != 3) {
      return Error{"unsupported GGUF version " + std::to_string(file->version_)};
    }
    uint64_t num_tensors = 0;
    uint64_t num_metadata = 0;
    if (!ReadPod(&num_tensors) || !ReadPod(&num_metadata)) return Truncated("header counts");
    // Each tensor info takes >= 8 (name) + 4 + 8 + 4 + 8 bytes; each key/value >= 8 + 4 + 1.
    if (num_tensors > Remaining() / 32) {
      return Error{"tensor count " + std::to_string(num_tensors) + " exceeds what the file holds"};
    }
    if (num_metadata > Remaining() / 13) {
      return Error{"metadata count " + std::to_string(num_metadata) +
                   " exceeds what the file holds"};
    }
    for (uint64_t i = 0; i < num_metadata; ++i) {
      std::string key;
      if (!ReadString(&key)) return Truncated("metadata key " + std::to_string(i));
      uint32_t raw_type = 0;
      if (!ReadPod(&raw_type)) return Truncated("type of metadata '" + key + "'");
      if (!IsValidType(raw_type)) {
        return Error{"metadata '" + key + "' has invalid value type " + std::to_string(raw_type)};
      }
      GgufValue value;
      VLLM_RETURN_IF_ERROR(ReadValue(static_cast<GgufValueType>(raw_type), key, 0, &value));
      if (file->metadata_.count(key) != 0) return Error{"duplicate metadata key '" + key + "'"};
      file->metadata_order_.push_back(key);
      file->metadata_.emplace(key, std::move(value));
    }
    if (auto it = file->metadata_.find("general.alignment"); it != file->metadata_.end()) {
      auto alignment = ToInt(it->second);
      if (it->second.type != GgufValueType::kUint32 || !alignment || *alignment == 0 ||
          (*alignment & (*alignment - 1)) != 0) {
        return Error{"general.alignment must be a power of two uint32"};
      }
      file->alignment_ = static_cast<uint32_t>(*alignment);
    }
    file->tensors_.reserve(num_tensors);
    for (uint64_t i = 0; i < num_tensors; ++i) {
      GgufTensor tensor;
      VLLM_RETURN_IF_ERROR(ReadTensorInfo(i, &tensor));
      if (file->tensor_index_.count(tensor.name) != 0) {
        return Error{"duplicate tensor '" + tensor.name + "'"};
      }
      file->tensor_index_.emplace(tensor.name, file->tensors_.size());
      file->tensors_.push_back(std::move(tensor));
    }
    uint64_t data_start = (pos_ + file->alignment_ - 1) / file->alignment_ * file->alignment_;
    if (data_start > size_ && !file->tensors_.empty()) {
      return Error{"tensor data section starts past the end of the file"};
    }
    uint64_t data_size = data_start <= size_ ? size_ - data_start : 0;
    for (auto& tensor : file->tensors_) {
      if (tensor.offset % file->alignment_ != 0) {
        return Error{"tensor '" + tensor.name + "' offset " + std::to_string(tensor.offset) +
                     " is not aligned to " + std::to_string(file->alignment_)};
      }
      if (tensor.offset > data_size ||
          static_cast<uint64_t>(tensor.num_bytes) > data_size - tensor.offset) {
        return Error{"tensor '" + tensor.name + "' (offset " + std::to_string(tensor.offset) +
                     ", " + std::to_string(tensor.num_bytes) +
                     " bytes) extends past the end of the file"};
      }
      tensor.data = data_ + data_start + tensor.offset;
    }
    return Status::Ok();
  }

 private:
  size_t Remaining() const { return size_ - pos_; }

  static Error Truncated(const std::string& what) {
    return Error{"truncated GGUF file while reading " + what};
  }

  template <typename T>
  bool ReadPod(T* out) {
    if (Remaining() < sizeof(T)) return false;
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  bool ReadString(std::string* out) {
    uint64_t length = 0;
    if (!ReadPod(&length) || length > Remaining()) return false;
    out->assign(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return true;
  }

  Status ReadValue(GgufValueType type, const std::string& key, int depth, GgufValue* out) {
    out->type = type;
    auto read_unsigned = [&](auto tag) -> Status {
      decltype(tag) v{};
      if (!ReadPod(&v)) return Truncated("value of '" + key + "'");
      out->data = static_cast<uint64_t>(v);
      return Status::Ok();
    };
    auto read_signed = [&](auto tag) -> Status {
      decltype(tag) v{};
      if (!ReadPod(&v)) return Truncated("value of '" + key + "'");
      out->data = static_cast<int64_t>(v);
      return Status::Ok();
    };
    switch (type) {
      case GgufValueType::kUint8:
        return read_unsigned(uint8_t{});
      case GgufValueType::kUint16:
        return read_unsigned(uint16_t{});
      case GgufValueType::kUint32:
        return read_unsigned(uint32_t{});
      case GgufValueType::kUint64:
        return read_unsigned(uint64_t{});
      case GgufValueType::kInt8:
        return read_signed(int8_t{});
      case GgufValueType::kInt16:
        return read_signed(int16_t{});
      case GgufValueType::kInt32:
        return read_signed(int32_t{});
      case GgufValueType::kInt64:
        return read_signed(int64_t{});
      case GgufValueType::kFloat32: {
        float v = 0;
        if (!ReadPod(&v)) return Truncated("value of '" + key + "'");
        out->data = static_cast<double>(v);
        return Status::Ok();
      }
      case GgufValueType::kFloat64: {
        double v = 0;
        if (!ReadPod(&v)) return Truncated("value of '" + key + "'");
        out->data = v;
        return Status::Ok();
      }
      case GgufValueType::kBool: {
        uint8_t v = 0;
        if (!ReadPod(&v)) return Truncated("value of '" + key + "'");
        if (v > 1) return Error{"metadata '" + key + "' has an invalid bool byte"};
        out->data = v != 0;
        return Status::Ok();
      }
      case GgufValueType::kString: {
        std::string s;
        if (!ReadString(&s)) return Truncated("string value of '" + key + "'");
        out->data = std::move(s);
        return Status::Ok();
      }
      case GgufValueType::kArray: {
        if (depth >= kMaxArrayDepth) return Error{"arrays nested too deeply in '" + key + "'"};
        uint32_t raw_element_type = 0;
        uint64_t count = 0;
        if (!ReadPod(&raw_element_type) || !ReadPod(&count)) {
          return Truncated("array header of '" + key + "'");
        }
        if (!IsValidType(raw_element_type)) {
          return Error{"array '" + key + "' has invalid element type " +
                       std::to_string(raw_element_type)};
        }
        GgufArray array;
        array.element_type = static_cast<GgufValueType>(raw_element_type);
        if (count > Remaining() / MinEncodedSize(array.element_type)) {
          return Error{"array '" + key + "' claims " + std::to_string(count) +
                       " elements, more than the file holds"};
        }
        array.items.resize(count);
        for (auto& item : array.items) {
          VLLM_RETURN_IF_ERROR(ReadValue(array.element_type, key, depth + 1, &item));
        }
        out->data = std::move(array);
        return Status::Ok();
      }
    }
    return Error{"metadata '" + key + "' has an invalid type"};
  }

  Status ReadTensorInfo(uint64_t index, GgufTensor* tensor) {
    if (!ReadString(&tensor->name)) return Truncated("name of tensor " + std::to_string(index));
    uint32_t num_dims = 0;
    if (!ReadPod(&num_dims)) return Truncated("tensor '" + tensor->name + "'");
    if (num_dims == 0 || num_dims > kMaxDims) {
      return Error{"tensor '" + tensor->name + "' has " + std::to_string(num_dims) +
                   " dimensions (1 to 4 allowed)"};
    }
    uint64_t num_elements = 1;
    for (uint32_t d = 0; d < num_dims; ++d) {
      uint64_t dim = 0;
      if (!ReadPod(&dim)) return Truncated("shape of tensor '" + tensor->name + "'");
      // The product of dims must stay below 2^62 so byte counts fit int64.
      if (dim == 0 || dim > (uint64_t{1} << 62) / num_elements) {
        return Error{"tensor '" + tensor->name + "' has an invalid dimension " +
                     std::to_string(dim)};
      }
      num_elements *= dim;
      tensor->shape.push_back(static_cast<int64_t>(dim));
    }
    uint32_t raw_type = 0;
    if (!ReadPod(&raw_type) || !ReadPod(&tensor->offset)) {
      return Truncated("tensor '" + tensor->name + "'");
    }
    auto traits = GetSupportedTypeTraits(static_cast<GgmlType>(raw_type));
    if (!traits) {
      return Error{"tensor '" + tensor->name + "' has unsupported tensor type " +
                   GgmlTypeName(raw_type) + " (supported: " + SupportedTypeNames() + ")"};
    }
    tensor->type = static_cast<GgmlType>(raw_type);
    if (tensor->shape[0] % traits->block_size != 0) {
      return Error{"tensor '" + tensor->name + "' row length " + std::to_string(tensor->shape[0]) +
                   " is not a multiple of the " + traits->name + " block size"};
    }
    tensor->num_bytes =
        static_cast<int64_t>(num_elements / traits->block_size * traits->block_bytes);
    return Status::Ok();
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

int64_t GgufTensor::num_elements() const {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

Expected<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  return MapAndParse<GgufFile>(path);
}

Expected<std::unique_ptr<GgufFile>> GgufFile::Parse(const uint8_t* data, size_t size) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  GgufParser parser(data, size);
  Status status = parser.Parse(file.get());
  if (!status.ok()) return Error{status.message()};
  return file;
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

void GgufFile::SetMetadata(const std::string& key, GgufValue value) {
  if (!metadata_.contains(key)) metadata_order_.push_back(key);
  metadata_[key] = std::move(value);
}

void GgufFile::EraseMetadata(const std::string& key) {
  if (metadata_.erase(key) == 0) return;
  metadata_order_.erase(std::find(metadata_order_.begin(), metadata_order_.end(), key));
}

Status GgufFile::AdoptShardTensors(std::unique_ptr<GgufFile> shard) {
  for (GgufTensor& tensor : shard->tensors_) {
    if (tensor_index_.count(tensor.name) != 0) {
      return Error{"tensor '" + tensor.name + "' is in more than one shard"};
    }
    tensor_index_.emplace(tensor.name, tensors_.size());
    tensors_.push_back(std::move(tensor));  // its data still points into the shard's mapping
  }
  shard->tensors_.clear();
  shard->tensor_index_.clear();
  shards_.push_back(std::move(shard));
  return Status::Ok();
}

const GgufTensor* GgufFile::FindTensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
Error WrongType(const std::string& key, const GgufValue& value, const char* wanted) {
  return Error{"metadata '" + key + "' is " + GgufValueTypeName(value.type) + ", expected " +
               wanted};
}

// `value` (absent: nullopt) as an array of numbers, each item through `convert` (ToInt, ToFloat).
template <typename T>
Expected<std::optional<std::vector<T>>> NumberArray(const std::string& key, const GgufValue* value,
                                                    std::optional<T> (*convert)(const GgufValue&),
                                                    const char* wanted) {
  if (value == nullptr) return std::optional<std::vector<T>>();
  const auto* array = std::get_if<GgufArray>(&value->data);
  if (array == nullptr) return WrongType(key, *value, wanted);
  std::vector<T> out;
  out.reserve(array->items.size());
  for (const auto& item : array->items) {
    std::optional<T> number = convert(item);
    if (!number) return WrongType(key, *value, wanted);
    out.push_back(*number);
  }
  return std::optional(std::move(out));
}
}  // namespace

Expected<std::optional<std::string>> GgufFile::GetString(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return std::optional<std::string>();
  if (const auto* s = std::get_if<std::string>(&value->data)) return std::optional(*s);
  return WrongType(key, *value, "string");
}

Expected<std::optional<int64_t>> GgufFile::GetInt(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return std::optional<int64_t>();
  if (auto i = ToInt(*value)) return std::optional(*i);
  return WrongType(key, *value, "an integer");
}

Expected<std::optional<double>> GgufFile::GetFloat(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return std::optional<double>();
  if (auto d = ToFloat(*value)) return std::optional(*d);
  return WrongType(key, *value, "a number");
}

Expected<std::optional<bool>> GgufFile::GetBool(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return std::optional<bool>();
  if (const auto* b = std::get_if<bool>(&value->data)) return std::optional(*b);
  return WrongType(key, *value, "bool");
}

Expected<std::optional<std::vector<std::string>>> GgufFile::GetStringArray(
    const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return std::optional<std::vector<std::string>>();
  const auto* array = std::get_if<GgufArray>(&value->data);
  if (array == nullptr || array->element_type != GgufValueType::kString) {
    return WrongType(key, *value, "an array of strings");
  }
  std::vector<std::string> out;
  out.reserve(array->items.size());
  for (const auto& item : array->items) out.push_back(std::get<std::string>(item.data));
  return std::optional(std::move(out));
}

Expected<std::optional<std::vector<double>>> GgufFile::GetFloatArray(const std::string& key) const {
  return NumberArray<double>(key, Find(key), ToFloat, "an array of numbers");
}

Expected<std::optional<std::vector<int64_t>>> GgufFile::GetIntArray(const std::string& key) const {
  return NumberArray<int64_t>(key, Find(key), ToInt, "an array of integers");
}

}  // namespace vllm
