// Character classes with the meaning Rust's char methods give them, as the Hugging Face
// tokenizers library uses them (is_whitespace, is_alphanumeric, is_numeric, punctuation, \w).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vllm::hf {

// A byte that does not start a valid UTF-8 sequence decodes to kInvalidChar with length 1.
inline constexpr char32_t kInvalidChar = 0x80000000;

// The character at text[pos] (pos < text.size()); *length is its size in bytes.
char32_t DecodeUtf8At(std::string_view text, size_t pos, size_t* length);

bool IsWhitespace(char32_t c);    // Unicode White_Space
bool IsNumeric(char32_t c);       // general category N*
bool IsAlphanumeric(char32_t c);  // Alphabetic or N*
bool IsPunctuation(char32_t c);   // ASCII punctuation or general category P*
bool IsWordChar(char32_t c);      // regex \w: alphanumeric, marks, connector punctuation
bool IsCjk(char32_t c);           // BERT's "Chinese characters": the CJK ideograph blocks

// Calls f(begin, end, c) for each character of `text`.
template <typename F>
void ForEachChar(std::string_view text, F f) {
  for (size_t pos = 0; pos < text.size();) {
    size_t length = 1;
    const char32_t c = DecodeUtf8At(text, pos, &length);
    f(pos, pos + length, c);
    pos += length;
  }
}

}  // namespace vllm::hf
