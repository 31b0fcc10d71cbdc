// Tool-call arguments as vLLM writes them: Python's json.dumps(json.loads(text)) (", " and ": "
// separators, floats as Python's repr, ensure_ascii on or off), computed incrementally so that a
// streamed call's argument fragments concatenate to exactly the text of the whole-output parse.
//
// What json.loads accepts is accepted (NaN, Infinity, -Infinity; no raw control characters in
// strings, no leading zeros, no trailing commas). Two known differences from Python: an object's
// repeated key is written each time it appears (Python keeps the last value at the first key's
// place), and a lone surrogate escape stays an escape (Python writes the unpaired code point).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::server {

// The deepest nesting of arrays and objects accepted in tool-call JSON. Python gives up near
// 1000 levels with a RecursionError; real arguments stay under 10.
inline constexpr int kMaxToolCallJsonDepth = 128;

class JsonNormalizer {
 public:
  struct Options {
    bool ensure_ascii = false;  // json.dumps(ensure_ascii=True): non-ASCII as \uXXXX escapes
    int max_depth = kMaxToolCallJsonDepth;
  };
  enum class State { kReading, kDone, kFailed };

  JsonNormalizer() : JsonNormalizer(Options{}) {}
  explicit JsonNormalizer(Options options) : options_(options) {}

  // Reads `text` as the continuation of one JSON value (whitespace before it is skipped) and
  // appends the normalized form of what it has read to *out; a number is written once it ends.
  // Returns the bytes used: all of `text` while the value goes on, fewer once it ends (the byte
  // that ends a top-level number is not used) or fails.
  size_t Feed(std::string_view text, std::string* out);
  // The input ended: a number being read ends here and is written (so that a cut-short value's
  // text so far is complete); the value fails unless it was a complete top-level number.
  void Finish(std::string* out);

  State state() const;

 private:
  enum class Step {
    kValue,           // a value must follow
    kFirstItemOrEnd,  // after '['
    kFirstKeyOrEnd,   // after '{'
    kKey,             // after ',' in an object
    kColon,           // after a key
    kCommaOrEnd,      // after a value inside an array or object
    kString,
    kNumber,
    kLiteral,
    kDone,
    kFailed,
  };
  enum class StringStep { kChars, kEscape, kUnicode, kAfterHighSurrogate, kAfterHighBackslash };
  enum class NumberStep {
    kSign,
    kZero,
    kInt,
    kDot,
    kFraction,
    kExponent,
    kExponentSign,
    kExponentDigits
  };

  void StartValue(char c, std::string* out);
  void LiteralByte(char c, std::string* out);
  // These return false where the byte is not used: the step changed and must see it again.
  bool StringByte(char c, std::string* out);
  bool NumberByte(char c, std::string* out);

  void ValueEnded();
  void EndNumber(std::string* out);
  void EndString();
  void WriteRawByte(unsigned char byte, std::string* out);
  void WriteCodePoint(uint32_t code_point, std::string* out);
  void FlushUtf8(std::string* out);
  void Fail() { step_ = Step::kFailed; }

  Options options_;
  Step step_ = Step::kValue;
  std::vector<char> open_containers_;  // '{' or '[' per level
  // Strings.
  bool string_is_key_ = false;
  StringStep string_step_ = StringStep::kChars;
  uint32_t escape_value_ = 0;
  int escape_digits_ = 0;
  uint32_t high_surrogate_ = 0;
  std::string utf8_pending_;  // ensure_ascii: the bytes of a character not complete yet
  size_t utf8_needed_ = 0;
  // Numbers and literals.
  NumberStep number_step_ = NumberStep::kSign;
  std::string token_;
};

// Decodes a JSON string literal as JsonNormalizer writes it (quotes included) to UTF-8; a lone
// surrogate becomes U+FFFD.
std::string DecodeJsonString(std::string_view literal);

}  // namespace vllm::server
