// libFuzzer entry point: the GGUF parser must return an error, never crash, on any bytes.
#include <cstddef>
#include <cstdint>

#include "formats/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = vllm::GgufFile::Parse(data, size);
  if (file.ok()) {
    for (const auto& tensor : (*file)->tensors()) {
      volatile uint8_t sink = tensor.num_bytes > 0 ? tensor.data[tensor.num_bytes - 1] : 0;
      (void)sink;
    }
  }
  return 0;
}
