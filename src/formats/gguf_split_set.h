// A model split by llama.cpp's llama-gguf-split into NAME-00001-of-0000N.gguf ... files: the
// first holds the metadata, every file its own tensor infos and data section, and the metadata
// split.no (0-based index), split.count and split.tensors.count (the total). Opened from the
// first file, the set reads as one GgufFile: the first file's metadata, every shard's tensors.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

// The parts of a shard's file name: "dir/m-Q4_K_M" (the prefix), 1-based index and count.
struct GgufSplitName {
  std::string prefix;
  int index = 0;
  int count = 0;
};

// nullopt for a path that does not end in -NNNNN-of-NNNNN.gguf.
std::optional<GgufSplitName> ParseGgufSplitPath(const std::string& path);
// llama.cpp's shard name: PREFIX-%05d-of-%05d.gguf.
std::string GgufSplitPath(const std::string& prefix, int index, int count);

// Opens a GGUF file; when it is the first of a split set (split.count > 1), the other shards
// too, beside it by name, their tensors joined to its own. Errors name the file at fault: a
// shard other than the first, a missing shard, one from another set (its split.no or
// split.count), and a total that is not split.tensors.count.
Expected<std::unique_ptr<GgufFile>> OpenGgufSplitSet(const std::string& path);

}  // namespace vllm
