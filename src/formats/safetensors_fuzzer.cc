// libFuzzer entry point: the safetensors parser must return an error, never crash, on any bytes,
// and every tensor view it accepts must lie inside the input (reading it all trips ASan if not).
#include <cstddef>
#include <cstdint>

#include "formats/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = vllm::SafetensorsFile::Parse(data, size);
  if (file.ok()) {
    uint64_t sum = 0;
    for (const auto& tensor : (*file)->tensors()) {
      const auto* bytes = static_cast<const uint8_t*>(tensor.data);
      for (int64_t i = 0; i < tensor.num_bytes; ++i) sum += bytes[i];
    }
    volatile uint64_t sink = sum;
    (void)sink;
  }
  return 0;
}
