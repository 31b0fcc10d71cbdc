#include "model/kv_storage.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "common/available_memory.h"

namespace vllm {
namespace {

constexpr size_t kSmallestPageBytes = 4096;

std::string FormatBytes(int64_t bytes) {
  char text[32];
  if (bytes >= int64_t{1} << 30) {
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else {
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return text;
}

}  // namespace

void KvStorage::Unmap::operator()(float* p) const { ::munmap(p, bytes); }

KvStorage::KvStorage(const Options& options, std::unique_ptr<float, Unmap> memory)
    : options_(options),
      memory_(std::move(memory)),
      values_(memory_.get() + memory_.get_deleter().bytes / 2 / sizeof(float)) {}

int64_t KvStorage::BytesPerBlock(const Options& options) {
  const int64_t layers_per_block =
      options.layout.groups.empty() ? options.num_layers : options.layout.group_size;
  return 2 * layers_per_block * options.block_size * options.num_kv_heads * options.head_dim *
         static_cast<int64_t>(sizeof(float));
}

Expected<std::unique_ptr<KvStorage>> KvStorage::Create(const Options& requested) {
  if (requested.num_layers <= 0 || requested.num_blocks <= 0 || requested.block_size <= 0 ||
      requested.num_kv_heads <= 0 || requested.head_dim <= 0) {
    return Error{"KV storage: every dimension must be positive"};
  }
  Options options = requested;
  if (options.layout.groups.empty()) options.layout = SingleGroupKvCacheLayout(options.num_layers);
  if (options.layout.num_layers() != options.num_layers) {
    return Error{"KV storage: the KV cache layout is for another number of layers"};
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(options.num_blocks, BytesPerBlock(options), &bytes)) {
    return Error{"KV storage: its size in bytes overflows"};
  }
  if (std::optional<int64_t> available = AvailableMemoryBytes(); available && bytes > *available) {
    return Error{"--kv-cache-memory-bytes: a KV cache of " + FormatBytes(bytes) +
                 " does not fit: " + FormatBytes(*available) +
                 " of memory is available; lower --kv-cache-memory-bytes"};
  }
  const size_t size = static_cast<size_t>(bytes);
  void* memory = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return Error{"--kv-cache-memory-bytes: cannot reserve " + FormatBytes(bytes) +
                 " for the KV cache (" + std::strerror(errno) + "); lower --kv-cache-memory-bytes"};
  }
  std::unique_ptr<float, Unmap> owned(static_cast<float*>(memory), Unmap{size});
  // Huge pages where the kernel allows them on request: 512 times fewer page faults to make the
  // cache resident, and fewer TLB misses when attention reads it. Advice only.
  ::madvise(memory, size, MADV_HUGEPAGE);
  // Writing one byte per page makes every page resident (zeros, as mmap gives them).
  for (size_t offset = 0; offset < size; offset += kSmallestPageBytes) {
    static_cast<volatile char*>(memory)[offset] = 0;
  }
  return std::unique_ptr<KvStorage>(new KvStorage(options, std::move(owned)));
}

}  // namespace vllm
