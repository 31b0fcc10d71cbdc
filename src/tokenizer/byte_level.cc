#include "tokenizer/byte_level.h"

#include <array>

#include "common/utf8.h"
#include "common/utf8_encode.h"

namespace vllm {
namespace {

// byte → code point: printable Latin-1 bytes keep their value; the rest take 256, 257, ...
const std::array<uint16_t, 256>& ByteToCodepoint() {
  static const std::array<uint16_t, 256> table = [] {
    std::array<uint16_t, 256> codepoints{};
    uint16_t next = 256;
    for (int byte = 0; byte < 256; ++byte) {
      bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xa1 && byte <= 0xac) ||
                       (byte >= 0xae && byte <= 0xff);
      codepoints[byte] = printable ? byte : next++;
    }
    return codepoints;
  }();
  return table;
}

}  // namespace

std::string BytesToByteLevel(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) AppendUtf8(ByteToCodepoint()[byte], &out);
  return out;
}

std::optional<std::string> ByteLevelToBytes(std::string_view text) {
  static const std::array<int, 512> codepoint_to_byte = [] {
    std::array<int, 512> table;
    table.fill(-1);
    for (int byte = 0; byte < 256; ++byte) table[ByteToCodepoint()[byte]] = byte;
    return table;
  }();
  std::string bytes;
  for (std::string_view character : SplitUtf8Characters(text)) {
    uint32_t codepoint = 0;
    const auto lead = static_cast<unsigned char>(character[0]);
    if (character.size() == 1) {
      codepoint = lead;
    } else if (character.size() == 2) {
      codepoint = ((lead & 0x1f) << 6) | (static_cast<unsigned char>(character[1]) & 0x3f);
    } else {
      return std::nullopt;
    }
    if (codepoint >= codepoint_to_byte.size() || codepoint_to_byte[codepoint] < 0) {
      return std::nullopt;
    }
    bytes += static_cast<char>(codepoint_to_byte[codepoint]);
  }
  return bytes;
}

}  // namespace vllm
