#include "model/kv_storage.h"

#include <cstdlib>

namespace vllm {

void KvStorage::FreeDeleter::operator()(float* p) const { std::free(p); }

KvStorage::KvStorage(const Options& options) : options_(options) {}

int64_t KvStorage::BytesPerToken(const Options& options) {
  return 2 * options.num_layers * options.num_kv_heads * options.head_dim *
         static_cast<int64_t>(sizeof(float));
}

Expected<std::unique_ptr<KvStorage>> KvStorage::Create(const Options& options) {
  if (options.num_layers <= 0 || options.num_blocks <= 0 || options.block_size <= 0 ||
      options.num_kv_heads <= 0 || options.head_dim <= 0) {
    return Error{"KV storage: every dimension must be positive"};
  }
  std::unique_ptr<KvStorage> storage(new KvStorage(options));
  size_t bytes =
      static_cast<size_t>(options.num_layers * storage->num_slots() * storage->row_size()) *
      sizeof(float);
  // Zero-filled pages are only touched (and counted in RSS) when a block is first written.
  storage->keys_.reset(static_cast<float*>(std::calloc(bytes / sizeof(float), sizeof(float))));
  storage->values_.reset(static_cast<float*>(std::calloc(bytes / sizeof(float), sizeof(float))));
  if (!storage->keys_ || !storage->values_) {
    return Error{"cannot allocate " + std::to_string(2 * bytes) + " bytes of KV storage"};
  }
  return storage;
}

}  // namespace vllm
