#include "common/utf8.h"

namespace vllm {

size_t Utf8SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0) return 2;
  if ((lead & 0xf0) == 0xe0) return 3;
  if ((lead & 0xf8) == 0xf0) return 4;
  return 1;
}

std::vector<std::string_view> SplitUtf8Characters(std::string_view text) {
  std::vector<std::string_view> characters;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = Utf8SequenceLength(static_cast<unsigned char>(text[pos]));
    bool valid = pos + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[pos + k]) & 0xc0) == 0x80;
    }
    if (!valid) length = 1;
    characters.push_back(text.substr(pos, length));
    pos += length;
  }
  return characters;
}

size_t IncompleteUtf8Suffix(std::string_view text) {
  // A character is at most 4 bytes: look back up to 3 bytes for its lead byte.
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    unsigned char byte = static_cast<unsigned char>(text[text.size() - back]);
    if ((byte & 0xc0) == 0x80) continue;  // continuation byte: keep looking
    size_t length = Utf8SequenceLength(byte);
    return length > back ? back : 0;
  }
  return 0;
}

}  // namespace vllm
