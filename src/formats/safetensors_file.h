// A parsed Hugging Face .safetensors file: an 8-byte little-endian header length, a JSON header
// (tensor name -> {dtype, shape, data_offsets}, plus an optional "__metadata__" string map), then
// the tensor bytes, which stay mmap'd. Parsing treats the bytes as untrusted: every size, offset
// and shape is checked against the file, so a damaged file yields an error naming the problem,
// never a crash or an out-of-range view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "common/mapped_file.h"

namespace vllm {

struct SafetensorsTensor {
  std::string name;
  // F32, F16, BF16; I8 for the byte dtypes (U8, I8, F8_E4M3, F8_E5M2: raw bytes), I16 / I32 /
  // I64 / F64 for those.
  GgmlType type = GgmlType::kF32;
  std::vector<int64_t> shape;  // as in the file: row-major, shape[0] outermost (PyTorch order)
  // The tensor's bytes. Aligned only as far as the file aligns them: read values with memcpy
  // unless the offset is known to be a multiple of the element size.
  const void* data = nullptr;
  int64_t num_bytes = 0;  // product(shape) * element size
  // The file's dtype name ("BF16", "I32", "F8_E4M3", ...). Writers: empty means type's name.
  std::string dtype;
};

// The safetensors dtype name of a supported type ("F32", "F16", "BF16", "U8" for I8, "I32", ...);
// nullopt for any other.
std::optional<std::string_view> SafetensorsDtypeName(GgmlType type);
// The type a supported dtype name is read as (see SafetensorsTensor::type); nullopt for any other.
std::optional<GgmlType> SafetensorsDtypeType(std::string_view dtype);
// F32, F16 or BF16.
bool IsSafetensorsFloatType(GgmlType type);
// Bytes per element of a supported type; 0 for any other.
int64_t SafetensorsElementBytes(GgmlType type);

class SafetensorsFile {
 public:
  static constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

  // Maps and parses a file. The tensor data pointers stay valid while the SafetensorsFile lives.
  static Expected<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  // Parses bytes owned by the caller (must outlive the result). Used by tests and the fuzzer.
  static Expected<std::unique_ptr<SafetensorsFile>> Parse(const uint8_t* data, size_t size);

  // In data order (ascending data offset), which is the order the writer was given.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* FindTensor(std::string_view name) const;
  // The "__metadata__" map; empty when the header has none.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  std::unique_ptr<MappedFile> file_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
  std::map<std::string, std::string> metadata_;

  friend class SafetensorsParser;
  template <typename File>
  friend Expected<std::unique_ptr<File>> MapAndParse(const std::string& path);
};

}  // namespace vllm
