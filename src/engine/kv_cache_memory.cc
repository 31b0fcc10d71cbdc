#include "engine/kv_cache_memory.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "common/logging.h"

namespace vllm {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
// The most GiB an int64_t byte count holds.
constexpr double kMaxGiB = static_cast<double>(int64_t{1} << 33);

// VLLM_CPU_KVCACHE_SPACE in bytes; nullopt when it is unset, empty or 0 (vLLM's "not set").
Expected<std::optional<int64_t>> KvCacheSpaceBytes() {
  const char* value = std::getenv("VLLM_CPU_KVCACHE_SPACE");
  if (value == nullptr || *value == '\0') return std::optional<int64_t>();
  const std::string_view text = value;
  double gib = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), gib);
  if (error != std::errc() || end != text.data() + text.size() || !(gib >= 0) || gib >= kMaxGiB) {
    return Error{"VLLM_CPU_KVCACHE_SPACE must be a number of GiB, got '" + std::string(text) + "'"};
  }
  if (gib == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(static_cast<int64_t>(gib * kGiB));
}

std::string Mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// As Python's repr writes a float: the shortest text that reads back the same.
std::string Repr(double value) {
  char text[32];
  auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, error == std::errc() ? end : text);
}

}  // namespace

Expected<KvCacheMemory> KvCacheMemory::Plan(const EngineArgs& args,
                                            std::optional<int64_t> available_memory_bytes) {
  if (args.gpu_memory_utilization) {
    const double share = *args.gpu_memory_utilization;
    if (!(share > 0) || share > 1) {
      return Error{
          std::string("gpu_memory_utilization (--gpu-memory-utilization): Input should be ") +
          (share > 1 ? "less than or equal to 1" : "greater than 0") + ", got " + Repr(share)};
    }
  }
  auto kv_cache_space = KvCacheSpaceBytes();
  if (!kv_cache_space) return Error{kv_cache_space.error()};
  KvCacheMemory memory;
  if (args.kv_cache_memory_bytes) {
    memory.fixed_bytes_ = *args.kv_cache_memory_bytes;
  } else if (*kv_cache_space) {
    memory.fixed_bytes_ = **kv_cache_space;
    VLLM_LOG(kInfo) << "KV cache memory: " << Mib(**kv_cache_space)
                    << " from VLLM_CPU_KVCACHE_SPACE";
  } else if (args.gpu_memory_utilization) {
    if (!available_memory_bytes) {
      return Error{
          "gpu_memory_utilization (--gpu-memory-utilization): the available memory cannot be "
          "read; give kv_cache_memory_bytes (--kv-cache-memory-bytes) instead"};
    }
    memory.memory_share_ = *args.gpu_memory_utilization;
    memory.available_memory_bytes_ = *available_memory_bytes;
  } else {
    memory.fixed_bytes_ = kDefaultKvCacheMemoryBytes;
  }
  return memory;
}

Expected<int64_t> KvCacheMemory::BytesBeside(int64_t weight_bytes) const {
  if (fixed_bytes_) return *fixed_bytes_;
  const int64_t usable = available_memory_bytes_ - weight_bytes;
  const auto bytes = static_cast<int64_t>(memory_share_ * static_cast<double>(usable));
  if (bytes <= 0) {
    return Error{
        "gpu_memory_utilization (--gpu-memory-utilization): no memory is left for the "
        "KV cache beside the model's weights (" +
        Mib(weight_bytes) + " of them, " + Mib(available_memory_bytes_) + " available)"};
  }
  VLLM_LOG(kInfo) << "KV cache memory: " << Mib(bytes) << ", gpu_memory_utilization "
                  << memory_share_ << " of the " << Mib(usable)
                  << " available beside the model's weights";
  return bytes;
}

int64_t StoredWeightBytes(const LoadedModel& model) {
  int64_t bytes = 0;
  if (model.gguf != nullptr) {
    for (const GgufTensor& tensor : model.gguf->tensors()) bytes += tensor.num_bytes;
  } else if (model.checkpoint && model.checkpoint->weights != nullptr) {
    for (const SafetensorsTensor* tensor : model.checkpoint->weights->tensors()) {
      bytes += tensor->num_bytes;
    }
  }
  return bytes;
}

}  // namespace vllm
