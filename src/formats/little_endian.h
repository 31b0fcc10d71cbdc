// Appending little-endian integers and raw bytes to a byte buffer, as the ZIP and pickle writers
// lay out their fields. Internal to formats.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace vllm {

inline void PutU16(std::vector<uint8_t>& out, uint32_t value) {
  out.push_back(static_cast<uint8_t>(value));
  out.push_back(static_cast<uint8_t>(value >> 8));
}

inline void PutU32(std::vector<uint8_t>& out, uint32_t value) {
  PutU16(out, value & 0xffff);
  PutU16(out, value >> 16);
}

inline void PutBytes(std::vector<uint8_t>& out, std::string_view bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace vllm
