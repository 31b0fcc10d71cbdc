// Encodes the safetensors header with nlohmann::json and streams the tensor bytes after it.
#include "formats/safetensors_writer.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace vllm {

namespace {

using Json = nlohmann::json;

// Checks one tensor and returns its byte count as the file will hold it.
Expected<uint64_t> CheckTensor(const SafetensorsTensor& tensor) {
  const std::string what = "tensor '" + tensor.name + "'";
  if (tensor.name == "__metadata__") return Error{what + ": the name is reserved"};
  if (!tensor.dtype.empty()) {
    if (SafetensorsDtypeType(tensor.dtype) != tensor.type) {
      return Error{what + " has dtype " + tensor.dtype + ", which is not read as type " +
                   GgmlTypeName(static_cast<uint32_t>(tensor.type))};
    }
  } else if (!SafetensorsDtypeName(tensor.type)) {
    return Error{what + " has type " + GgmlTypeName(static_cast<uint32_t>(tensor.type)) +
                 " (safetensors supports F32, F16, BF16, F64, U8, I16, I32, I64)"};
  }
  int64_t num_bytes = SafetensorsElementBytes(tensor.type);
  for (int64_t dim : tensor.shape) {
    if (dim < 0 || __builtin_mul_overflow(num_bytes, dim, &num_bytes)) {
      return Error{what + " has a negative or overflowing shape"};
    }
  }
  if (tensor.num_bytes != num_bytes || (num_bytes > 0 && tensor.data == nullptr)) {
    return Error{what + " has " + std::to_string(tensor.num_bytes) + " bytes but its shape needs " +
                 std::to_string(num_bytes)};
  }
  return static_cast<uint64_t>(num_bytes);
}

// The 8-byte header length followed by the header JSON, padded with spaces to a multiple of 8.
Expected<std::string> EncodeHeader(const std::vector<SafetensorsTensor>& tensors,
                                   const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& tensor : tensors) {
    auto num_bytes = CheckTensor(tensor);
    if (!num_bytes) return Error{num_bytes.error()};
    if (!names.insert(tensor.name).second) return Error{"duplicate tensor '" + tensor.name + "'"};
    const std::string dtype =
        tensor.dtype.empty() ? std::string(*SafetensorsDtypeName(tensor.type)) : tensor.dtype;
    header[tensor.name] = {
        {"dtype", dtype}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + *num_bytes}}};
    offset += *num_bytes;
  }
  std::string json;
  try {
    json = header.dump();
  } catch (const Json::exception& e) {
    return Error{std::string("cannot encode the safetensors header: ") + e.what()};
  }
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(json.size() >> (8 * i) & 0xff);
  return out + json;
}

}  // namespace

Status WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  auto header = EncodeHeader(tensors, metadata);
  if (!header) return Error{header.error()};
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return Error{"cannot create '" + path + "'"};
  bool ok = std::fwrite(header->data(), 1, header->size(), out) == header->size();
  for (const auto& tensor : tensors) {
    const auto size = static_cast<size_t>(tensor.num_bytes);
    ok = ok && (size == 0 || std::fwrite(tensor.data, 1, size, out) == size);
  }
  ok = std::fclose(out) == 0 && ok;
  if (!ok) return Error{"cannot write '" + path + "'"};
  return Status::Ok();
}

Expected<std::vector<uint8_t>> SerializeSafetensors(
    const std::vector<SafetensorsTensor>& tensors,
    const std::map<std::string, std::string>& metadata) {
  auto header = EncodeHeader(tensors, metadata);
  if (!header) return Error{header.error()};
  std::vector<uint8_t> out(header->begin(), header->end());
  for (const auto& tensor : tensors) {
    const auto* bytes = static_cast<const uint8_t*>(tensor.data);
    out.insert(out.end(), bytes, bytes + tensor.num_bytes);
  }
  return out;
}

}  // namespace vllm
