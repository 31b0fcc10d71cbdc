// A read-only memory-mapped file. Weights used as-is stay mapped, so they cost page cache, not RSS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/expected.h"

namespace vllm {

class MappedFile {
 public:
  static Expected<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const uint8_t* data_;
  size_t size_;
};

// Tells the kernel that `size` bytes at `data` will not be read again soon: pages of a file
// mapping leave memory (they read back from the file if touched; contents never change). Only
// the whole pages inside the range are affected.
void ReleaseMappedPages(const void* data, int64_t size);

}  // namespace vllm
