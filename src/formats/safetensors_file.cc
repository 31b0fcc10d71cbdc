// Parses and checks a safetensors header; see safetensors_file.h for the layout.
#include "formats/safetensors_file.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "formats/map_and_parse.h"

namespace vllm {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";

struct Dtype {
  std::string_view name;
  GgmlType type;
  int64_t size;  // bytes per element
};
// The byte dtypes are read as ggml's I8 type (raw bytes): U8 (gpt-oss's MXFP4 blocks and scales,
// bitsandbytes' packed weights), I8 (int8 weights) and the FP8 ones; the first row of a type
// names it when writing.
constexpr Dtype kDtypes[] = {
    {"F32", GgmlType::kF32, 4},    {"F16", GgmlType::kF16, 2}, {"BF16", GgmlType::kBF16, 2},
    {"U8", GgmlType::kI8, 1},      {"I8", GgmlType::kI8, 1},   {"F8_E4M3", GgmlType::kI8, 1},
    {"F8_E5M2", GgmlType::kI8, 1}, {"I16", GgmlType::kI16, 2}, {"I32", GgmlType::kI32, 4},
    {"I64", GgmlType::kI64, 8},    {"F64", GgmlType::kF64, 8}};

const Dtype* FindDtype(std::string_view name) {
  for (const Dtype& dtype : kDtypes) {
    if (dtype.name == name) return &dtype;
  }
  return nullptr;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// A JSON integer >= 0, or nullopt for anything else (negative, fractional, not a number).
std::optional<uint64_t> NonNegativeInteger(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() == 0) return 0;  // "-0"
  return std::nullopt;
}

// Parses the header JSON. nlohmann keeps only the last of repeated keys, so a callback records
// the keys of every open object and the first repeat is reported instead.
Expected<Json> ParseHeaderJson(const char* begin, const char* end) {
  // nlohmann stops at a NUL byte as if the input ended there; JSON text never holds one.
  if (const void* nul = std::memchr(begin, '\0', end - begin)) {
    return Error{"header is not valid JSON: NUL byte at offset " +
                 std::to_string(static_cast<const char*>(nul) - begin)};
  }
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  bool duplicate_is_tensor = false;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == Json::parse_event_t::key && !duplicate) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second) {
        duplicate = key;
        duplicate_is_tensor = open_objects.size() == 1 && key != kMetadataKey;
      }
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(begin, end, callback);
  } catch (const Json::exception& e) {
    return Error{std::string("header is not valid JSON: ") + e.what()};
  }
  if (duplicate) {
    return Error{(duplicate_is_tensor ? "duplicate tensor name '" : "duplicate header key '") +
                 *duplicate + "'"};
  }
  if (!header.is_object()) return Error{"header is not a JSON object"};
  return header;
}

Status ParseMetadata(const Json& value, std::map<std::string, std::string>* metadata) {
  if (!value.is_object()) return Error{"__metadata__ is not a JSON object"};
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) return Error{"__metadata__ value '" + key + "' is not a string"};
    metadata->emplace(key, item.get<std::string>());
  }
  return Status::Ok();
}

// A tensor entry with its byte range [begin, end) relative to the data section.
struct Entry {
  SafetensorsTensor tensor;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Checks one header entry against the data section (data_size bytes) and fills `entry`.
Status ParseEntry(const std::string& name, const Json& value, uint64_t data_size, Entry* entry) {
  const std::string what = "tensor '" + name + "'";
  if (!value.is_object()) return Error{what + " entry is not a JSON object"};
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(field)) return Error{what + " is missing '" + field + "'"};
  }
  const Json& dtype_json = value["dtype"];
  if (!dtype_json.is_string()) return Error{what + " dtype is not a string"};
  const auto& dtype_name = dtype_json.get_ref<const std::string&>();
  const Dtype* dtype = FindDtype(dtype_name);
  if (dtype == nullptr) {
    return Error{what + " has unsupported dtype " + dtype_name +
                 " (supported: F32, F16, BF16, F64, U8, I8, I16, I32, I64, F8_E4M3, F8_E5M2)"};
  }

  const Json& shape_json = value["shape"];
  if (!shape_json.is_array()) return Error{what + " shape is not an array"};
  for (const Json& dim_json : shape_json) {
    if (!dim_json.is_number_integer()) return Error{what + " shape holds a non-integer"};
    auto dim = NonNegativeInteger(dim_json);
    if (!dim) {
      return Error{what + " shape has negative dimension " +
                   std::to_string(dim_json.get<int64_t>())};
    }
    if (*dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Error{what + " shape dimension " + std::to_string(*dim) + " overflows int64"};
    }
    entry->tensor.shape.push_back(static_cast<int64_t>(*dim));
  }
  int64_t num_elements = 1;
  bool overflow = false;
  for (int64_t dim : entry->tensor.shape) {
    overflow = overflow || __builtin_mul_overflow(num_elements, dim, &num_elements);
  }
  int64_t num_bytes = 0;
  if (overflow || __builtin_mul_overflow(num_elements, dtype->size, &num_bytes)) {
    return Error{what + " shape " + ShapeString(entry->tensor.shape) + " of " + dtype_name +
                 " overflows 64-bit byte counts"};
  }

  const Json& offsets = value["data_offsets"];
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = NonNegativeInteger(offsets[0]);
    end = NonNegativeInteger(offsets[1]);
  }
  if (!begin || !end) return Error{what + " data_offsets is not [begin, end] of integers >= 0"};
  const std::string range = "[" + std::to_string(*begin) + ", " + std::to_string(*end) + "]";
  if (*begin > *end) return Error{what + " data_offsets " + range + " has begin > end"};
  if (*end > data_size) {
    return Error{what + " data_offsets " + range + " end past the data section (" +
                 std::to_string(data_size) + " bytes)"};
  }
  if (*end - *begin != static_cast<uint64_t>(num_bytes)) {
    return Error{what + " data_offsets " + range + " hold " + std::to_string(*end - *begin) +
                 " bytes but shape " + ShapeString(entry->tensor.shape) + " of " + dtype_name +
                 " needs " + std::to_string(num_bytes)};
  }
  entry->tensor.name = name;
  entry->tensor.type = dtype->type;
  entry->tensor.dtype = dtype->name;
  entry->tensor.num_bytes = num_bytes;
  entry->begin = *begin;
  entry->end = *end;
  return Status::Ok();
}

// Sorts entries by data offset and fails if two non-empty byte ranges share a byte.
Status SortAndCheckOverlap(std::vector<Entry>* entries) {
  std::sort(entries->begin(), entries->end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.tensor.name) < std::tie(b.begin, b.end, b.tensor.name);
  });
  const Entry* furthest = nullptr;  // the non-empty range seen so far that ends last
  for (const Entry& entry : *entries) {
    if (entry.begin == entry.end) continue;
    if (furthest != nullptr && entry.begin < furthest->end) {
      auto range = [](const Entry& e) {
        return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
      };
      return Error{"tensors '" + furthest->tensor.name + "' " + range(*furthest) + " and '" +
                   entry.tensor.name + "' " + range(entry) + " overlap"};
    }
    if (furthest == nullptr || entry.end > furthest->end) furthest = &entry;
  }
  return Status::Ok();
}

}  // namespace

bool IsSafetensorsFloatType(GgmlType type) {
  return type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16;
}

int64_t SafetensorsElementBytes(GgmlType type) {
  for (const Dtype& dtype : kDtypes) {
    if (dtype.type == type) return dtype.size;
  }
  return 0;
}

std::optional<std::string_view> SafetensorsDtypeName(GgmlType type) {
  for (const Dtype& dtype : kDtypes) {
    if (dtype.type == type) return dtype.name;
  }
  return std::nullopt;
}

std::optional<GgmlType> SafetensorsDtypeType(std::string_view dtype) {
  const Dtype* found = FindDtype(dtype);
  if (found == nullptr) return std::nullopt;
  return found->type;
}

// Reads the layout: header length, header JSON, then views into the data section.
class SafetensorsParser {
 public:
  static Status Parse(const uint8_t* data, size_t size, SafetensorsFile* file) {
    if (size < 8) {
      return Error{"file too small to be safetensors (" + std::to_string(size) +
                   " bytes, need at least 8)"};
    }
    uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = header_size << 8 | data[i];
    if (header_size > SafetensorsFile::kMaxHeaderBytes) {
      return Error{"header length " + std::to_string(header_size) + " exceeds the limit of " +
                   std::to_string(SafetensorsFile::kMaxHeaderBytes) + " bytes"};
    }
    if (header_size > size - 8) {
      return Error{"header length " + std::to_string(header_size) + " exceeds the " +
                   std::to_string(size - 8) + " bytes after the length prefix"};
    }
    const char* header_begin = reinterpret_cast<const char*>(data + 8);
    auto header = ParseHeaderJson(header_begin, header_begin + header_size);
    if (!header) return Error{header.error()};

    const uint8_t* data_section = data + 8 + header_size;
    const uint64_t data_size = size - 8 - header_size;
    std::vector<Entry> entries;
    for (const auto& [name, value] : header->items()) {
      if (name == kMetadataKey) {
        VLLM_RETURN_IF_ERROR(ParseMetadata(value, &file->metadata_));
        continue;
      }
      Entry entry;
      VLLM_RETURN_IF_ERROR(ParseEntry(name, value, data_size, &entry));
      entries.push_back(std::move(entry));
    }
    VLLM_RETURN_IF_ERROR(SortAndCheckOverlap(&entries));
    file->tensors_.reserve(entries.size());
    for (Entry& entry : entries) {
      entry.tensor.data = data_section + entry.begin;
      file->tensor_index_.emplace(entry.tensor.name, file->tensors_.size());
      file->tensors_.push_back(std::move(entry.tensor));
    }
    return Status::Ok();
  }
};

Expected<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  return MapAndParse<SafetensorsFile>(path);
}

Expected<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Parse(const uint8_t* data,
                                                                  size_t size) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  Status status = SafetensorsParser::Parse(data, size, file.get());
  if (!status.ok()) return Error{status.message()};
  return file;
}

const SafetensorsTensor* SafetensorsFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace vllm
