// The Open that GGUF and safetensors files share.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "common/mapped_file.h"

namespace vllm {

// Maps `path` and parses its bytes with File::Parse (which checks every size and offset), then
// hands the mapping to the parsed file, whose tensors point into it. A parse error names the
// path. File befriends this function to set its private `file_`.
template <typename File>
Expected<std::unique_ptr<File>> MapAndParse(const std::string& path) {
  auto mapped = MappedFile::Open(path);
  if (!mapped) return Error{mapped.error()};
  auto parsed = File::Parse((*mapped)->data(), (*mapped)->size());
  if (!parsed) return Error{path + ": " + parsed.error()};
  (*parsed)->file_ = std::move(*mapped);
  return parsed;
}

}  // namespace vllm
