// A parsed GGUF file (versions 2 and 3): metadata, tensor infos, and tensor bytes that stay
// mmap'd. Parsing treats the bytes as untrusted: every count, size and offset is checked against
// the file, so a damaged file yields an error naming the problem, never a crash or a huge
// allocation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "common/mapped_file.h"
#include "formats/gguf_value.h"

namespace vllm {

struct GgufTensor {
  std::string name;
  std::vector<int64_t> shape;  // ggml order: shape[0] is the contiguous (innermost) dimension
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;  // relative to the start of the tensor data section
  const uint8_t* data = nullptr;
  int64_t num_bytes = 0;

  int64_t num_elements() const;
};

class GgufFile {
 public:
  static constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
  static constexpr uint32_t kDefaultAlignment = 32;

  // Maps and parses a file. The tensor data pointers stay valid while the GgufFile lives.
  static Expected<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses bytes owned by the caller (must outlive the result). Used by tests and the fuzzer.
  static Expected<std::unique_ptr<GgufFile>> Parse(const uint8_t* data, size_t size);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  // Metadata keys in file order (writers preserve it).
  const std::vector<std::string>& metadata_order() const { return metadata_order_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }

  const GgufValue* Find(const std::string& key) const;
  const GgufTensor* FindTensor(const std::string& name) const;

  // Replaces (or adds, last in order) a metadata value, or erases the key: --hf-overrides
  // rewrite the model's keys before its config is read.
  void SetMetadata(const std::string& key, GgufValue value);
  void EraseMetadata(const std::string& key);

  // Typed lookups. nullopt when the key is absent; an error when it holds the wrong type.
  Expected<std::optional<std::string>> GetString(const std::string& key) const;
  Expected<std::optional<int64_t>> GetInt(const std::string& key) const;   // any integer type
  Expected<std::optional<double>> GetFloat(const std::string& key) const;  // float or integer
  Expected<std::optional<bool>> GetBool(const std::string& key) const;
  Expected<std::optional<std::vector<std::string>>> GetStringArray(const std::string& key) const;
  Expected<std::optional<std::vector<double>>> GetFloatArray(const std::string& key) const;
  Expected<std::optional<std::vector<int64_t>>> GetIntArray(const std::string& key) const;

  // Takes in the tensors of another shard of the same split model (gguf_split_set.h), whose
  // mapping this file then keeps alive; a tensor name both hold is an error.
  Status AdoptShardTensors(std::unique_ptr<GgufFile> shard);

 private:
  GgufFile() = default;
  std::unique_ptr<MappedFile> file_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  std::map<std::string, GgufValue> metadata_;
  std::vector<std::string> metadata_order_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t> tensor_index_;
  std::vector<std::unique_ptr<GgufFile>> shards_;  // the split's other files; theirs: none

  friend class GgufParser;
  template <typename File>
  friend Expected<std::unique_ptr<File>> MapAndParse(const std::string& path);
};

}  // namespace vllm
