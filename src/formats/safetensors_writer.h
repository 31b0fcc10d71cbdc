// Writes Hugging Face .safetensors files (for tests and random-model generation): the 8-byte
// little-endian header length, the JSON header padded with spaces to a multiple of 8 bytes as the
// HF library pads it, then every tensor's bytes back to back in the order given.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/safetensors_file.h"

namespace vllm {

// Each tensor needs a unique name other than "__metadata__", a type safetensors holds (or a
// `dtype` name read as its type: "I8" or "F8_E4M3" for kI8), a shape in file order (row-major, outermost first) and num_bytes == product(shape) * element size bytes
// at data. `metadata` becomes "__metadata__" when not empty.
Status WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

// The same file, built in memory.
Expected<std::vector<uint8_t>> SerializeSafetensors(
    const std::vector<SafetensorsTensor>& tensors,
    const std::map<std::string, std::string>& metadata = {});

}  // namespace vllm
