// Tests only: writes a GGUF file's content as llama.cpp's llama-gguf-split does, into shards
// PREFIX-00001-of-0000N.gguf ...: the first with all the metadata, every shard with split.no,
// split.count and split.tensors.count and its share of the tensors (dealt out in order), each
// with its own data section.
#pragma once

#include <algorithm>
#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "formats/gguf_split_set.h"
#include "formats/gguf_writer.h"

namespace vllm {

inline Status WriteGgufSplitForTest(const GgufFile& source, const std::string& prefix,
                                    int num_shards) {
  const auto& tensors = source.tensors();
  const size_t per_shard = (tensors.size() + num_shards - 1) / num_shards;
  for (int shard = 0; shard < num_shards; ++shard) {
    GgufWriter writer;
    if (shard == 0) {
      for (const std::string& key : source.metadata_order()) {
        writer.AddMetadata(key, source.metadata().at(key));
      }
    }
    writer.AddMetadata("split.no", {GgufValueType::kUint16, uint64_t(shard)});
    writer.AddMetadata("split.count", {GgufValueType::kUint16, uint64_t(num_shards)});
    writer.AddMetadata("split.tensors.count", GgufValue::Int32(int32_t(tensors.size())));
    const size_t begin = std::min(tensors.size(), shard * per_shard);
    const size_t end = std::min(tensors.size(), begin + per_shard);
    for (size_t i = begin; i < end; ++i) {
      writer.AddTensor(tensors[i].name, tensors[i].shape, tensors[i].type);
    }
    VLLM_RETURN_IF_ERROR(writer.Begin(GgufSplitPath(prefix, shard + 1, num_shards)));
    for (size_t i = begin; i < end; ++i) {
      VLLM_RETURN_IF_ERROR(
          writer.WriteTensorData(i - begin, tensors[i].data, size_t(tensors[i].num_bytes)));
    }
    VLLM_RETURN_IF_ERROR(writer.Finish());
  }
  return Status::Ok();
}

}  // namespace vllm
