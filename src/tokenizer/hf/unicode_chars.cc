#include "tokenizer/hf/unicode_chars.h"

#include <unicode/uchar.h>

#include "common/utf8.h"

namespace vllm::hf {

char32_t DecodeUtf8At(std::string_view text, size_t pos, size_t* length) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  *length = 1;
  if (lead < 0x80) return lead;
  const size_t size = Utf8SequenceLength(lead);
  if (size == 1 || pos + size > text.size()) return kInvalidChar;
  char32_t c = lead & (0xff >> (size + 1));
  for (size_t k = 1; k < size; ++k) {
    const auto byte = static_cast<unsigned char>(text[pos + k]);
    if ((byte & 0xc0) != 0x80) return kInvalidChar;
    c = (c << 6) | (byte & 0x3f);
  }
  *length = size;
  return c;
}

bool IsWhitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  if (c == kInvalidChar) return false;
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool IsNumeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  if (c == kInvalidChar) return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
}

bool IsAlphanumeric(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
  if (c == kInvalidChar) return false;
  return IsNumeric(c) || u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC);
}

bool IsPunctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  }
  if (c == kInvalidChar) return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}

bool IsCjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool IsWordChar(char32_t c) {
  if (c == '_' || IsAlphanumeric(c)) return true;
  if (c < 0x80 || c == kInvalidChar) return false;
  const auto mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  return (mask & (U_GC_M_MASK | U_GC_PC_MASK)) != 0 || c == 0x200c || c == 0x200d;
}

}  // namespace vllm::hf
