// libFuzzer entry point: the adapter readers of both forms and the checks against a base must
// return an error, never crash, on any bytes. Input: a form byte (even: a GGUF LoRA file; odd: a
// PEFT adapter), then the file; a PEFT adapter's adapter_config.json text comes first, ended by
// a NUL byte, then its adapter_model.safetensors.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "formats/gguf_file.h"
#include "formats/safetensors_file.h"
#include "lora/gguf_adapter.h"
#include "lora/oracle_base_shape.h"
#include "lora/peft_adapter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // HF order: a GGUF adapter's q / k rows move.
  static const vllm::lora::LoraBaseShape base = vllm::lora::OracleBase(false);
  const bool is_peft = data[0] % 2 == 1;
  ++data, --size;
  vllm::Expected<vllm::lora::LoraFilePairs> pairs = vllm::Error{"no input"};
  if (is_peft) {
    const auto* end = static_cast<const uint8_t*>(std::memchr(data, 0, size));
    if (end == nullptr) return 0;
    const std::string config(reinterpret_cast<const char*>(data), end - data);
    auto weights = vllm::SafetensorsFile::Parse(end + 1, size - (end + 1 - data));
    if (!weights.ok()) return 0;
    pairs = vllm::lora::ReadPeftAdapter(config, **weights, base);
  } else {
    auto file = vllm::GgufFile::Parse(data, size);
    if (!file.ok()) return 0;
    pairs = vllm::lora::ReadGgufAdapter(**file, base);
  }
  if (pairs.ok()) {
    auto weights =
        vllm::lora::AssembleLoraWeights({"fuzz", 1, "", ""}, base, 64, std::move(*pairs));
    volatile bool ok = weights.ok();
    (void)ok;
  }
  return 0;
}
