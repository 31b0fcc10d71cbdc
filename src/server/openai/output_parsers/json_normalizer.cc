// JsonNormalizer: a byte-at-a-time JSON reader that writes what Python's json.dumps would write
// for the value json.loads reads, plus Python's float repr.
#include "server/openai/output_parsers/json_normalizer.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "common/utf8_encode.h"
#include "server/openai/output_parsers/text_markers.h"

namespace vllm::server {
namespace {

// Python refuses to convert an integer of more than 4300 digits (sys.int_info's
// default_max_str_digits), so json.loads fails on one.
constexpr size_t kMaxIntegerDigits = 4300;
// The longest number text read. Python has no limit for floats; nothing real comes near.
constexpr size_t kMaxNumberBytes = 10000;

constexpr std::string_view kLiterals[] = {"true", "false", "null", "NaN", "Infinity", "-Infinity"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsHighSurrogate(uint32_t unit) { return unit >= 0xD800 && unit <= 0xDBFF; }
bool IsLowSurrogate(uint32_t unit) { return unit >= 0xDC00 && unit <= 0xDFFF; }

void AppendEscape(uint32_t unit, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";  // Python writes lowercase hex
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 0xF]);
}

// How many continuation bytes follow a UTF-8 lead byte; 0 for a byte that cannot lead.
size_t Utf8ContinuationBytes(unsigned char lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 1;
  if (lead >= 0xE0 && lead <= 0xEF) return 2;
  if (lead >= 0xF0 && lead <= 0xF4) return 3;
  return 0;
}

// The code point of a complete UTF-8 sequence; U+FFFD for an overlong form, a surrogate or one
// past U+10FFFF.
uint32_t DecodeUtf8(std::string_view bytes) {
  static constexpr uint32_t kLeadMask[] = {0, 0, 0x1F, 0x0F, 0x07};
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  uint32_t code_point = static_cast<unsigned char>(bytes[0]) & kLeadMask[bytes.size()];
  for (size_t i = 1; i < bytes.size(); ++i) {
    code_point = (code_point << 6) | (static_cast<unsigned char>(bytes[i]) & 0x3F);
  }
  const bool valid = code_point >= kSmallest[bytes.size()] && code_point <= 0x10FFFF &&
                     !(code_point >= 0xD800 && code_point <= 0xDFFF);
  return valid ? code_point : 0xFFFD;
}

// The power of ten of the leading significant digit of JSON number text (with its exponent,
// saturated), to tell an overflow from an underflow. Zero has none; it returns 0.
int64_t LeadingDigitExponent(std::string_view number) {
  size_t i = number[0] == '-' ? 1 : 0;
  const size_t int_begin = i;
  while (i < number.size() && IsDigit(number[i])) ++i;
  const std::string_view integer = number.substr(int_begin, i - int_begin);
  std::string_view fraction;
  if (i < number.size() && number[i] == '.') {
    const size_t fraction_begin = ++i;
    while (i < number.size() && IsDigit(number[i])) ++i;
    fraction = number.substr(fraction_begin, i - fraction_begin);
  }
  int64_t exponent = 0;
  if (i < number.size() && (number[i] == 'e' || number[i] == 'E')) {
    ++i;
    const bool negative = i < number.size() && number[i] == '-';
    if (i < number.size() && (number[i] == '-' || number[i] == '+')) ++i;
    for (; i < number.size(); ++i) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (number[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  const size_t first_integer = integer.find_first_not_of('0');
  if (first_integer != std::string_view::npos) {
    return exponent + static_cast<int64_t>(integer.size() - 1 - first_integer);
  }
  const size_t first_fraction = fraction.find_first_not_of('0');
  if (first_fraction != std::string_view::npos) {
    return exponent - static_cast<int64_t>(first_fraction + 1);
  }
  return 0;
}

// Python's repr() of the float that `number` (JSON number text) parses to: "1.0", "1e+16",
// "1.5e-05", "Infinity" where it overflows.
std::string PythonFloatRepr(std::string_view number) {
  const bool negative = !number.empty() && number[0] == '-';
  double value = 0.0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error == std::errc::result_out_of_range) {
    value = LeadingDigitExponent(number) >= 0 ? HUGE_VAL : 0.0;
    if (negative) value = -value;
  } else if (error != std::errc() || end != number.data() + number.size()) {
    return std::string(number);  // not JSON number text: nothing to normalize
  }
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";

  // The shortest digits that read back as `value`: "-d.ddde±XX".
  char buffer[64];
  const auto written =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view scientific(buffer, static_cast<size_t>(written.ptr - buffer));
  std::string repr;
  if (scientific[0] == '-') {
    repr.push_back('-');
    scientific.remove_prefix(1);
  }
  const size_t exponent_at = scientific.find('e');
  std::string digits(1, scientific[0]);
  if (exponent_at > 1) digits.append(scientific.substr(2, exponent_at - 2));
  std::string_view exponent_text = scientific.substr(exponent_at + 1);
  if (exponent_text[0] == '+') exponent_text.remove_prefix(1);
  int exponent = 0;
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);

  // Python's repr: positional while the decimal point sits within (-4, 16] of the first digit,
  // else scientific with a signed exponent of at least two digits.
  const int point = exponent + 1;  // value = 0.DIGITS × 10^point
  const int num_digits = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      repr += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (point >= num_digits) {
      repr += digits + std::string(static_cast<size_t>(point - num_digits), '0') + ".0";
    } else {
      repr += digits.substr(0, static_cast<size_t>(point)) + "." +
              digits.substr(static_cast<size_t>(point));
    }
    return repr;
  }
  repr.push_back(digits[0]);
  if (num_digits > 1) repr += "." + digits.substr(1);
  const int shown_exponent = point - 1;
  repr += shown_exponent < 0 ? "e-" : "e+";
  const int magnitude = shown_exponent < 0 ? -shown_exponent : shown_exponent;
  if (magnitude < 10) repr.push_back('0');
  repr += std::to_string(magnitude);
  return repr;
}

}  // namespace

JsonNormalizer::State JsonNormalizer::state() const {
  if (step_ == Step::kDone) return State::kDone;
  if (step_ == Step::kFailed) return State::kFailed;
  return State::kReading;
}

size_t JsonNormalizer::Feed(std::string_view text, std::string* out) {
  size_t used = 0;
  while (used < text.size() && step_ != Step::kDone && step_ != Step::kFailed) {
    const char c = text[used];
    bool consumed = true;
    switch (step_) {
      case Step::kValue:
        if (!IsJsonSpace(c)) StartValue(c, out);
        break;
      case Step::kFirstItemOrEnd:
        if (IsJsonSpace(c)) break;
        if (c == ']') {
          out->push_back(c);
          open_containers_.pop_back();
          ValueEnded();
        } else {
          StartValue(c, out);
        }
        break;
      case Step::kFirstKeyOrEnd:
      case Step::kKey:
        if (IsJsonSpace(c)) break;
        if (c == '}' && step_ == Step::kFirstKeyOrEnd) {
          out->push_back(c);
          open_containers_.pop_back();
          ValueEnded();
        } else if (c == '"') {
          string_is_key_ = true;
          string_step_ = StringStep::kChars;
          out->push_back('"');
          step_ = Step::kString;
        } else {
          Fail();
        }
        break;
      case Step::kColon:
        if (IsJsonSpace(c)) break;
        if (c == ':') {
          out->append(": ");
          step_ = Step::kValue;
        } else {
          Fail();
        }
        break;
      case Step::kCommaOrEnd: {
        if (IsJsonSpace(c)) break;
        const bool in_object = open_containers_.back() == '{';
        if (c == ',') {
          out->append(", ");
          step_ = in_object ? Step::kKey : Step::kValue;
        } else if (c == (in_object ? '}' : ']')) {
          out->push_back(c);
          open_containers_.pop_back();
          ValueEnded();
        } else {
          Fail();
        }
        break;
      }
      case Step::kString:
        consumed = StringByte(c, out);
        break;
      case Step::kNumber:
        consumed = NumberByte(c, out);
        break;
      case Step::kLiteral:
        LiteralByte(c, out);
        break;
      case Step::kDone:
      case Step::kFailed:
        break;
    }
    if (step_ == Step::kFailed) break;
    if (consumed) ++used;
  }
  return used;
}

void JsonNormalizer::Finish(std::string* out) {
  if (step_ == Step::kNumber) EndNumber(out);  // written even inside an unfinished container
  if (step_ != Step::kDone) Fail();
}

void JsonNormalizer::StartValue(char c, std::string* out) {
  switch (c) {
    case '{':
    case '[':
      if (static_cast<int>(open_containers_.size()) >= options_.max_depth) {
        Fail();
        return;
      }
      open_containers_.push_back(c);
      out->push_back(c);
      step_ = c == '{' ? Step::kFirstKeyOrEnd : Step::kFirstItemOrEnd;
      return;
    case '"':
      string_is_key_ = false;
      string_step_ = StringStep::kChars;
      out->push_back('"');
      step_ = Step::kString;
      return;
    case 't':
    case 'f':
    case 'n':
    case 'N':
    case 'I':
      token_.assign(1, c);
      step_ = Step::kLiteral;
      return;
    default:
      if (c != '-' && !IsDigit(c)) {
        Fail();
        return;
      }
      token_.assign(1, c);
      number_step_ = c == '-' ? NumberStep::kSign : c == '0' ? NumberStep::kZero : NumberStep::kInt;
      step_ = Step::kNumber;
      return;
  }
}

bool JsonNormalizer::StringByte(char c, std::string* out) {
  switch (string_step_) {
    case StringStep::kChars:
      if (c == '"') {
        FlushUtf8(out);
        out->push_back('"');
        EndString();
      } else if (c == '\\') {
        FlushUtf8(out);
        string_step_ = StringStep::kEscape;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        Fail();  // json.loads is strict: no raw control characters in strings
      } else {
        WriteRawByte(static_cast<unsigned char>(c), out);
      }
      return true;
    case StringStep::kEscape:
      string_step_ = StringStep::kChars;
      switch (c) {
        case '"':
        case '\\':
        case '/':
          WriteCodePoint(static_cast<unsigned char>(c), out);
          return true;
        case 'b':
          WriteCodePoint('\b', out);
          return true;
        case 'f':
          WriteCodePoint('\f', out);
          return true;
        case 'n':
          WriteCodePoint('\n', out);
          return true;
        case 'r':
          WriteCodePoint('\r', out);
          return true;
        case 't':
          WriteCodePoint('\t', out);
          return true;
        case 'u':
          string_step_ = StringStep::kUnicode;
          escape_value_ = 0;
          escape_digits_ = 0;
          return true;
        default:
          Fail();
          return true;
      }
    case StringStep::kUnicode: {
      const int digit = HexValue(c);
      if (digit < 0) {
        Fail();
        return true;
      }
      escape_value_ = escape_value_ * 16 + static_cast<uint32_t>(digit);
      if (++escape_digits_ < 4) return true;
      string_step_ = StringStep::kChars;
      const uint32_t unit = escape_value_;
      if (high_surrogate_ != 0) {
        const uint32_t high = high_surrogate_;
        high_surrogate_ = 0;
        if (IsLowSurrogate(unit)) {
          WriteCodePoint(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00), out);
          return true;
        }
        WriteCodePoint(high, out);  // unpaired: Python keeps it as it is
      }
      if (IsHighSurrogate(unit)) {
        high_surrogate_ = unit;
        string_step_ = StringStep::kAfterHighSurrogate;
      } else {
        WriteCodePoint(unit, out);
      }
      return true;
    }
    case StringStep::kAfterHighSurrogate:
      if (c == '\\') {
        string_step_ = StringStep::kAfterHighBackslash;
        return true;
      }
      WriteCodePoint(high_surrogate_, out);
      high_surrogate_ = 0;
      string_step_ = StringStep::kChars;
      return false;
    case StringStep::kAfterHighBackslash:
      if (c == 'u') {
        string_step_ = StringStep::kUnicode;
        escape_value_ = 0;
        escape_digits_ = 0;
        return true;
      }
      WriteCodePoint(high_surrogate_, out);
      high_surrogate_ = 0;
      string_step_ = StringStep::kEscape;
      return false;
  }
  return true;
}

bool JsonNormalizer::NumberByte(char c, std::string* out) {
  NumberStep next = number_step_;
  bool continues = true;
  switch (number_step_) {
    case NumberStep::kSign:
      if (c == 'I') {  // -Infinity
        token_.push_back(c);
        step_ = Step::kLiteral;
        return true;
      }
      if (!IsDigit(c)) {
        Fail();
        return true;
      }
      next = c == '0' ? NumberStep::kZero : NumberStep::kInt;
      break;
    case NumberStep::kZero:
    case NumberStep::kInt:
      if (IsDigit(c) && number_step_ == NumberStep::kInt) {
        next = NumberStep::kInt;
      } else if (c == '.') {
        next = NumberStep::kDot;
      } else if (c == 'e' || c == 'E') {
        next = NumberStep::kExponent;
      } else {
        continues = false;
      }
      break;
    case NumberStep::kDot:
      if (!IsDigit(c)) {
        Fail();
        return true;
      }
      next = NumberStep::kFraction;
      break;
    case NumberStep::kFraction:
      if (c == 'e' || c == 'E') {
        next = NumberStep::kExponent;
      } else if (!IsDigit(c)) {
        continues = false;
      }
      break;
    case NumberStep::kExponent:
      if (c == '+' || c == '-') {
        next = NumberStep::kExponentSign;
      } else if (IsDigit(c)) {
        next = NumberStep::kExponentDigits;
      } else {
        Fail();
        return true;
      }
      break;
    case NumberStep::kExponentSign:
      if (!IsDigit(c)) {
        Fail();
        return true;
      }
      next = NumberStep::kExponentDigits;
      break;
    case NumberStep::kExponentDigits:
      continues = IsDigit(c);
      break;
  }
  if (!continues) {
    EndNumber(out);
    return false;
  }
  token_.push_back(c);
  number_step_ = next;
  if (token_.size() > kMaxNumberBytes) Fail();
  return true;
}

void JsonNormalizer::LiteralByte(char c, std::string* out) {
  token_.push_back(c);
  bool is_prefix = false;
  for (std::string_view literal : kLiterals) {
    if (literal == token_) {
      out->append(token_);
      ValueEnded();
      return;
    }
    is_prefix = is_prefix || literal.starts_with(token_);
  }
  if (!is_prefix) Fail();
}

void JsonNormalizer::ValueEnded() {
  step_ = open_containers_.empty() ? Step::kDone : Step::kCommaOrEnd;
}

void JsonNormalizer::EndString() {
  if (string_is_key_) {
    step_ = Step::kColon;
  } else {
    ValueEnded();
  }
}

void JsonNormalizer::EndNumber(std::string* out) {
  switch (number_step_) {
    case NumberStep::kZero:
    case NumberStep::kInt:
    case NumberStep::kFraction:
    case NumberStep::kExponentDigits:
      break;
    default:
      Fail();
      return;
  }
  if (token_.find_first_of(".eE") == std::string::npos) {
    const size_t num_digits = token_.size() - (token_[0] == '-' ? 1 : 0);
    if (num_digits > kMaxIntegerDigits) {
      Fail();
      return;
    }
    out->append(token_ == "-0" ? "0" : token_);  // Python's int has no negative zero
  } else {
    out->append(PythonFloatRepr(token_));
  }
  ValueEnded();
}

void JsonNormalizer::WriteRawByte(unsigned char byte, std::string* out) {
  if (!options_.ensure_ascii) {
    out->push_back(static_cast<char>(byte));  // UTF-8 passes through as it is
    return;
  }
  if (utf8_needed_ > 0) {
    if ((byte & 0xC0) == 0x80) {
      utf8_pending_.push_back(static_cast<char>(byte));
      if (--utf8_needed_ > 0) return;
      WriteCodePoint(DecodeUtf8(utf8_pending_), out);
      utf8_pending_.clear();
      return;
    }
    FlushUtf8(out);  // the character was cut short
  }
  if (byte < 0x80) {
    WriteCodePoint(byte, out);
    return;
  }
  utf8_needed_ = Utf8ContinuationBytes(byte);
  if (utf8_needed_ == 0) {
    AppendEscape(0xFFFD, out);
    return;
  }
  utf8_pending_.assign(1, static_cast<char>(byte));
}

void JsonNormalizer::FlushUtf8(std::string* out) {
  if (utf8_pending_.empty()) return;
  utf8_pending_.clear();
  utf8_needed_ = 0;
  AppendEscape(0xFFFD, out);
}

void JsonNormalizer::WriteCodePoint(uint32_t code_point, std::string* out) {
  switch (code_point) {
    case '"':
      out->append("\\\"");
      return;
    case '\\':
      out->append("\\\\");
      return;
    case '\n':
      out->append("\\n");
      return;
    case '\r':
      out->append("\\r");
      return;
    case '\t':
      out->append("\\t");
      return;
    case '\b':
      out->append("\\b");
      return;
    case '\f':
      out->append("\\f");
      return;
    default:
      break;
  }
  if (code_point < 0x20) {
    AppendEscape(code_point, out);
  } else if (options_.ensure_ascii) {
    if (code_point < 0x7F) {
      out->push_back(static_cast<char>(code_point));
    } else if (code_point >= 0x10000) {
      const uint32_t offset = code_point - 0x10000;
      AppendEscape(0xD800 + (offset >> 10), out);
      AppendEscape(0xDC00 + (offset & 0x3FF), out);
    } else {
      AppendEscape(code_point, out);
    }
  } else if (code_point >= 0xD800 && code_point <= 0xDFFF) {
    AppendEscape(code_point, out);  // a lone surrogate cannot be written as UTF-8
  } else {
    AppendUtf8(code_point, out);
  }
}

std::string DecodeJsonString(std::string_view literal) {
  std::string decoded;
  if (literal.size() < 2) return decoded;
  const std::string_view body = literal.substr(1, literal.size() - 2);
  auto read_unit = [&body](size_t at) -> int64_t {  // the \uXXXX at `at`, or -1
    if (at + 6 > body.size() || body[at] != '\\' || body[at + 1] != 'u') return -1;
    int64_t unit = 0;
    for (size_t i = at + 2; i < at + 6; ++i) {
      const int digit = HexValue(body[i]);
      if (digit < 0) return -1;
      unit = unit * 16 + digit;
    }
    return unit;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      decoded.push_back(body[i]);
      continue;
    }
    const char escaped = body[i + 1];
    if (escaped != 'u') {
      static constexpr std::string_view kFrom = "bfnrt";
      static constexpr std::string_view kTo = "\b\f\n\r\t";
      const size_t short_form = kFrom.find(escaped);
      decoded.push_back(short_form == std::string_view::npos ? escaped : kTo[short_form]);
      ++i;
      continue;
    }
    const int64_t unit = read_unit(i);
    if (unit < 0) {
      decoded.push_back(body[i]);
      continue;
    }
    i += 5;
    uint32_t code_point = static_cast<uint32_t>(unit);
    if (IsHighSurrogate(code_point)) {
      const int64_t low = read_unit(i + 1);
      if (low >= 0 && IsLowSurrogate(static_cast<uint32_t>(low))) {
        code_point =
            0x10000 + ((code_point - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
        i += 6;
      } else {
        code_point = 0xFFFD;
      }
    } else if (IsLowSurrogate(code_point)) {
      code_point = 0xFFFD;
    }
    AppendUtf8(code_point, &decoded);
  }
  return decoded;
}

}  // namespace vllm::server
