// UTF-8 range splitting: a code point range is cut where the encoding length changes and where
// a continuation byte would not cover its full 0x80-0xBF span, until each piece is a product of
// byte ranges.
#include "structured_output/utf8_ranges.h"

namespace vllm {

int32_t EncodeUtf8(uint32_t code_point, uint8_t* out) {
  if (code_point < 0x80) {
    out[0] = static_cast<uint8_t>(code_point);
    return 1;
  }
  if (code_point < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (code_point >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (code_point & 0x3F));
    return 2;
  }
  if (code_point < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (code_point >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((code_point >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (code_point & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (code_point >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((code_point >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((code_point >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (code_point & 0x3F));
  return 4;
}

std::vector<Utf8RangeSequence> SplitIntoUtf8Sequences(std::span<const UnicodeRange> ranges) {
  static constexpr uint32_t kLastOfLength[] = {0x7F, 0x7FF, 0xFFFF};
  std::vector<Utf8RangeSequence> sequences;
  std::vector<UnicodeRange> pieces;  // a stack: the lower piece on top, so output is in order
  for (const UnicodeRange& range : ranges) {
    pieces.push_back(range);
    while (!pieces.empty()) {
      const UnicodeRange piece = pieces.back();
      pieces.pop_back();
      const uint32_t first = piece.first;
      const uint32_t last = piece.last;
      bool was_split = false;
      for (uint32_t boundary : kLastOfLength) {
        if (first <= boundary && last > boundary) {
          pieces.push_back({boundary + 1, last});
          pieces.push_back({first, boundary});
          was_split = true;
          break;
        }
      }
      // Continuation bytes from the last one up: the piece must cover whole blocks of the
      // trailing bits, or lie within one block.
      for (int trailing_bytes = 1; trailing_bytes <= 3 && !was_split && last >= 0x80;
           ++trailing_bytes) {
        const uint32_t block_mask = (1u << (6 * trailing_bytes)) - 1;
        if ((first & ~block_mask) == (last & ~block_mask)) continue;
        if ((first & block_mask) != 0) {
          pieces.push_back({(first | block_mask) + 1, last});
          pieces.push_back({first, first | block_mask});
          was_split = true;
        } else if ((last & block_mask) != block_mask) {
          pieces.push_back({last & ~block_mask, last});
          pieces.push_back({first, (last & ~block_mask) - 1});
          was_split = true;
        }
      }
      if (was_split) continue;
      uint8_t first_bytes[4];
      uint8_t last_bytes[4];
      Utf8RangeSequence sequence;
      sequence.length = EncodeUtf8(first, first_bytes);
      EncodeUtf8(last, last_bytes);
      for (int32_t i = 0; i < sequence.length; ++i) {
        sequence.bytes[i] = ByteRange{first_bytes[i], last_bytes[i]};
      }
      sequences.push_back(sequence);
    }
  }
  return sequences;
}

}  // namespace vllm
