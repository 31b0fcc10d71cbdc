#include "model/kv_storage.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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

// Makes [memory, memory + size) resident (zeros, as mmap gives them) from up to kMaxHelpers
// threads at once, each over its own slice: with MADV_POPULATE_WRITE (Linux 5.14), else by
// writing one byte per page.
void MakeResident(uint8_t* memory, size_t size) {
  constexpr unsigned kMaxHelpers = 8;
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxHelpers);
  const size_t slice =
      (size / threads + kSmallestPageBytes - 1) / kSmallestPageBytes * kSmallestPageBytes;
  auto populate = [](uint8_t* begin, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    if (::madvise(begin, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
    for (size_t offset = 0; offset < bytes; offset += kSmallestPageBytes) {
      reinterpret_cast<volatile uint8_t*>(begin)[offset] = 0;
    }
  };
  std::vector<std::thread> helpers;
  for (size_t begin = slice; begin < size; begin += slice) {
    helpers.emplace_back(populate, memory + begin, std::min(slice, size - begin));
  }
  populate(memory, std::min(slice, size));
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace

void KvStorage::Unmap::operator()(uint8_t* p) const { ::munmap(p, bytes); }

KvStorage::KvStorage(const Options& options, std::unique_ptr<uint8_t, Unmap> memory)
    : options_(options), memory_(std::move(memory)) {
  const int64_t num_values = options_.num_blocks * options_.layout.group_size *
                             options_.block_size * row_size();  // of K, and of V
  values_ = memory_.get() + num_values * kernels::KvValueBytes(options_.dtype);
  if (kernels::KvHasRowScales(options_.dtype)) {
    // The scales start at the first float boundary after the values (Create reserves the
    // padding).
    const auto end_of_values =
        reinterpret_cast<uintptr_t>(values_) + num_values * kernels::KvValueBytes(options_.dtype);
    key_scales_ = reinterpret_cast<float*>((end_of_values + alignof(float) - 1) &
                                           ~uintptr_t{alignof(float) - 1});
    value_scales_ = key_scales_ + num_values / options_.head_dim;
  } else {
    key_scales_ = value_scales_ = nullptr;
  }
}

int64_t KvStorage::BytesPerBlock(const Options& options) {
  const int64_t layers_per_block =
      options.layout.groups.empty() ? options.num_layers : options.layout.group_size;
  const int64_t row_bytes =
      options.head_dim * kernels::KvValueBytes(options.dtype) +
      (kernels::KvHasRowScales(options.dtype) ? static_cast<int64_t>(sizeof(float)) : 0);
  return 2 * layers_per_block * options.block_size * options.num_kv_heads * row_bytes;
}

void KvStorage::Write(int64_t layer, int64_t slot, const float* k, const float* v) {
  const int64_t head_dim = options_.head_dim;
  const int64_t value_bytes = kernels::KvValueBytes(options_.dtype);
  const int64_t block_id = slot / options_.block_size;
  const int64_t offset = slot % options_.block_size;
  for (int64_t h = 0; h < options_.num_kv_heads; ++h) {
    const int64_t row = Offset(layer, block_id, offset, h);  // values before
    float* k_scale = key_scales_ != nullptr ? key_scales_ + row / head_dim : nullptr;
    float* v_scale = value_scales_ != nullptr ? value_scales_ + row / head_dim : nullptr;
    kernels::QuantizeKvRow(options_.dtype, k + h * head_dim, head_dim,
                           memory_.get() + row * value_bytes, k_scale);
    kernels::QuantizeKvRow(options_.dtype, v + h * head_dim, head_dim, values_ + row * value_bytes,
                           v_scale);
  }
}

kernels::KvRows KvStorage::Rows(uint8_t* data, float* scales, int64_t layer, int64_t block_id,
                                int64_t offset, int64_t kv_head) const {
  const int64_t value_bytes = kernels::KvValueBytes(options_.dtype);
  const int64_t first = Offset(layer, block_id, offset, kv_head);
  return {.dtype = options_.dtype,
          .data = data + first * value_bytes,
          .row_stride_bytes = options_.head_dim * value_bytes,
          .scales = scales != nullptr ? scales + first / options_.head_dim : nullptr,
          .scale_stride = 1};
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
  if (__builtin_mul_overflow(options.num_blocks, BytesPerBlock(options), &bytes) ||
      __builtin_add_overflow(bytes, int64_t{alignof(float)}, &bytes)) {
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
  std::unique_ptr<uint8_t, Unmap> owned(static_cast<uint8_t*>(memory), Unmap{size});
  // Huge pages where the kernel allows them on request: 512 times fewer page faults to make the
  // cache resident, and fewer TLB misses when attention reads it. Advice only.
  ::madvise(memory, size, MADV_HUGEPAGE);
  MakeResident(static_cast<uint8_t*>(memory), size);
  return std::unique_ptr<KvStorage>(new KvStorage(options, std::move(owned)));
}

}  // namespace vllm
