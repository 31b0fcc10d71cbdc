// The wire forms of what a tensor-parallel step sends from rank 0 to the other ranks: a
// ForwardBatch and the shape of the KV storage it addresses. Bytes in the host's order (every rank
// of a job runs the same build on the same kind of CPU); every count is checked against the bytes
// left when read, so a short or corrupt message is an error, never an overread or a huge
// allocation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/expected.h"
#include "model/forward_batch.h"
#include "model/kv_storage.h"

namespace vllm {

// A batch read off the wire, with the input embeddings its spans point into.
struct WireForwardBatch {
  ForwardBatch batch;
  std::vector<std::vector<float>> input_embeds_values;  // one per batch.input_embeds entry

  WireForwardBatch() = default;
  WireForwardBatch(WireForwardBatch&&) = default;  // moving keeps the inner vectors' buffers
  WireForwardBatch& operator=(WireForwardBatch&&) = default;
  WireForwardBatch(const WireForwardBatch&) = delete;  // a copy's spans would point into this one
  WireForwardBatch& operator=(const WireForwardBatch&) = delete;
};

// Errors when a sequence runs a LoRA adapter (adapters are not sent to other ranks).
Expected<std::vector<uint8_t>> SerializeForwardBatch(const ForwardBatch& batch);
Expected<WireForwardBatch> DeserializeForwardBatch(std::span<const uint8_t> bytes);

std::vector<uint8_t> SerializeKvStorageOptions(const KvStorage::Options& options);
Expected<KvStorage::Options> DeserializeKvStorageOptions(std::span<const uint8_t> bytes);

}  // namespace vllm
