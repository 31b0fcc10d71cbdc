// Writes GGUF v3 files: metadata in insertion order, then tensor infos, then aligned tensor data.
// Tensor data is streamed one tensor at a time, so a multi-GiB model never sits in memory whole.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "formats/gguf_value.h"

namespace vllm {

class GgufWriter {
 public:
  GgufWriter() = default;
  ~GgufWriter();
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  void AddMetadata(std::string key, GgufValue value);
  // shape in ggml order (shape[0] contiguous). Returns the tensor's index.
  size_t AddTensor(std::string name, std::vector<int64_t> shape, GgmlType type);

  // Writes the header and tensor infos; then call WriteTensorData once per tensor, in the order
  // they were added, and Finish.
  Status Begin(const std::string& path);
  Status WriteTensorData(size_t index, const void* data, size_t num_bytes);
  Status Finish();

  static int64_t TensorBytes(const std::vector<int64_t>& shape, GgmlType type);

 private:
  struct TensorEntry {
    std::string name;
    std::vector<int64_t> shape;
    GgmlType type;
    uint64_t offset;
    int64_t num_bytes;
  };
  Status WritePadding(uint64_t written);

  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<TensorEntry> tensors_;
  uint64_t next_offset_ = 0;
  size_t next_tensor_ = 0;
  std::FILE* out_ = nullptr;
  std::string path_;
};

}  // namespace vllm
