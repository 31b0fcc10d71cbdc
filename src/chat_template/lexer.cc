// The template lexer. Text runs up to the first "{{", "{%" or "{#"; inside a tag, tokens run up
// to the closing delimiter, which counts only outside brackets (so `{{ {'a': {}} }}` works).
#include "chat_template/lexer.h"

#include <charconv>

#include "chat_template/errors.h"
#include "chat_template/python_str.h"

namespace vllm::jinja {
namespace {

// "\r\n" and "\r" become "\n"; one trailing newline goes (Jinja's keep_trailing_newline=False).
std::string NormalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\r') {
      out += source[i];
      continue;
    }
    out += '\n';
    if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }
bool IsTagSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(NormalizeNewlines(source)) {}

  std::vector<Token> Run() {
    while (pos_ < source_.size()) {
      size_t tag = FindTagStart();
      if (tag == std::string::npos) {
        AddText(std::string_view(source_).substr(pos_));
        Advance(source_.size() - pos_);
        break;
      }
      char type = source_[tag + 1];
      size_t after = tag + 2;
      char sign = after < source_.size() && (source_[after] == '-' || source_[after] == '+')
                      ? source_[after]
                      : '\0';
      std::string_view text = std::string_view(source_).substr(pos_, tag - pos_);
      if (sign == '-') {
        text = StripSpace(text, false, true);
      } else if (sign != '+' && type != '{') {
        text = StripBlockIndent(text);
      }
      AddText(text);
      Advance(after + (sign != '\0' ? 1 : 0) - pos_);
      if (type == '#') {
        LexComment();
      } else if (type == '%' && SkipRawBegin()) {
        LexRaw();
      } else {
        LexTag(type == '{');
      }
    }
    tokens_.push_back(Token{TokenKind::kEnd, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart() const {
    for (size_t at = source_.find('{', pos_); at != std::string::npos;
         at = source_.find('{', at + 1)) {
      if (at + 1 < source_.size() &&
          (source_[at + 1] == '{' || source_[at + 1] == '%' || source_[at + 1] == '#')) {
        return at;
      }
    }
    return std::string::npos;
  }

  bool At(std::string_view s) const {
    return std::string_view(source_).substr(pos_).starts_with(s);
  }

  // Moves forward n bytes, counting lines.
  void Advance(size_t n) {
    for (size_t end = pos_ + n; pos_ < end; ++pos_) {
      if (source_[pos_] == '\n') ++line_;
    }
  }

  void AddText(std::string_view text) {
    if (!text.empty()) tokens_.push_back(Token{TokenKind::kText, std::string(text), line_});
  }

  // lstrip_blocks: whitespace between the start of a line and a block tag goes. The text starts
  // a line when it holds a newline, or when the previous tag's end consumed one.
  std::string_view StripBlockIndent(std::string_view text) const {
    size_t newline = text.rfind('\n');
    size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
    if (line_start == 0 && !line_starting_) return text;
    std::string_view indent = text.substr(line_start);
    if (!indent.empty() && StripSpace(indent, true, false).empty())
      return text.substr(0, line_start);
    return text;
  }

  // After a closing delimiter: `-` strips all whitespace, `+` keeps it, and otherwise block tags
  // and comments drop one newline (trim_blocks).
  void FinishTag(char sign, bool trims_newline) {
    size_t start = pos_;
    if (sign == '-') {
      std::string_view rest = std::string_view(source_).substr(pos_);
      Advance(rest.size() - StripSpace(rest, true, false).size());
    } else if (sign != '+' && trims_newline && pos_ < source_.size() && source_[pos_] == '\n') {
      Advance(1);
    }
    line_starting_ = pos_ > start && source_[pos_ - 1] == '\n';
  }

  void LexComment() {
    int start_line = line_;
    size_t content_start = pos_;
    size_t end = source_.find("#}", pos_);
    if (end == std::string::npos) throw SyntaxError("unterminated comment", start_line);
    char sign = end > content_start && (source_[end - 1] == '-' || source_[end - 1] == '+')
                    ? source_[end - 1]
                    : '\0';
    Advance(end + 2 - pos_);
    FinishTag(sign, true);
  }

  // After "{%" (and its sign): when the tag is `raw`, consumes it up to and including its "%}"
  // (a "-%}" also strips the whitespace after it; trim_blocks does not apply) and returns true.
  bool SkipRawBegin() {
    size_t at = SkipTagSpace(pos_);
    if (std::string_view(source_).substr(at, 3) != "raw") return false;
    at = SkipTagSpace(at + 3);
    std::string_view rest = std::string_view(source_).substr(at);
    char sign = rest.starts_with("-%}") ? '-' : '\0';
    if (sign == '\0' && !rest.starts_with("%}")) return false;
    Advance(at + (sign == '-' ? 3 : 2) - pos_);
    if (sign == '-') {
      FinishTag(sign, false);
    } else {
      line_starting_ = false;
    }
    return true;
  }

  size_t SkipTagSpace(size_t at) const {
    while (at < source_.size() && IsTagSpace(source_[at])) ++at;
    return at;
  }

  // The text of a `{% raw %}` block, kept as written, up to its `{% endraw %}`, whose whitespace
  // control applies as for any block tag.
  void LexRaw() {
    int start_line = line_;
    for (size_t at = source_.find("{%", pos_); at != std::string::npos;
         at = source_.find("{%", at + 2)) {
      size_t after = at + 2;
      char sign = after < source_.size() && (source_[after] == '-' || source_[after] == '+')
                      ? source_[after]
                      : '\0';
      size_t name = SkipTagSpace(after + (sign != '\0' ? 1 : 0));
      if (std::string_view(source_).substr(name, 6) != "endraw") continue;
      size_t close = SkipTagSpace(name + 6);
      std::string_view rest = std::string_view(source_).substr(close);
      char end_sign = rest.starts_with("-%}") || rest.starts_with("+%}") ? rest[0] : '\0';
      if (end_sign == '\0' && !rest.starts_with("%}")) continue;
      std::string_view text = std::string_view(source_).substr(pos_, at - pos_);
      if (sign == '-') {
        text = StripSpace(text, false, true);
      } else if (sign != '+') {
        text = StripBlockIndent(text);
      }
      AddText(text);
      Advance(close + (end_sign != '\0' ? 3 : 2) - pos_);
      FinishTag(end_sign, true);
      return;
    }
    throw SyntaxError("unexpected end of template: missing '{% endraw %}' for the 'raw' block",
                      start_line);
  }

  void LexTag(bool is_print) {
    int start_line = line_;
    tokens_.push_back(
        Token{is_print ? TokenKind::kPrintBegin : TokenKind::kStatementBegin, "", line_});
    std::string brackets;  // open ( [ { not yet closed
    while (true) {
      while (pos_ < source_.size() && IsTagSpace(source_[pos_])) Advance(1);
      if (pos_ >= source_.size()) {
        throw SyntaxError(std::string("unexpected end of template: missing '") +
                              (is_print ? "}}" : "%}") + "' for the tag opened here",
                          start_line);
      }
      if (brackets.empty() && TryTagEnd(is_print)) return;
      LexToken(brackets);
    }
  }

  bool TryTagEnd(bool is_print) {
    std::string_view end = is_print ? "}}" : "%}";
    char sign = '\0';
    if ((At("-") || (!is_print && At("+"))) &&
        std::string_view(source_).substr(pos_ + 1).starts_with(end)) {
      sign = source_[pos_];
    } else if (!At(end)) {
      return false;
    }
    tokens_.push_back(Token{is_print ? TokenKind::kPrintEnd : TokenKind::kStatementEnd, "", line_});
    Advance(end.size() + (sign != '\0' ? 1 : 0));
    FinishTag(sign, !is_print);
    return true;
  }

  void LexToken(std::string& brackets) {
    char c = source_[pos_];
    if (c == '\'' || c == '"') {
      LexString();
    } else if (IsDigit(c)) {
      LexNumber();
    } else if (IsNameStart(c)) {
      size_t end = pos_;
      while (end < source_.size() && IsNameChar(source_[end])) ++end;
      tokens_.push_back(Token{TokenKind::kName, source_.substr(pos_, end - pos_), line_});
      Advance(end - pos_);
    } else {
      LexOperator(brackets);
    }
  }

  void LexOperator(std::string& brackets) {
    for (std::string_view op : {"//", "**", "==", "!=", "<=", ">="}) {
      if (At(op)) {
        tokens_.push_back(Token{TokenKind::kOperator, std::string(op), line_});
        Advance(2);
        return;
      }
    }
    char c = source_[pos_];
    if (std::string_view("+-*/%~<>=.,:|()[]{}").find(c) == std::string_view::npos) {
      throw SyntaxError(std::string("unexpected character '") + c + "'", line_);
    }
    if (c == '(' || c == '[' || c == '{') brackets += c;
    if (c == ')' || c == ']' || c == '}') {
      char opener = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (brackets.empty() || brackets.back() != opener) {
        throw SyntaxError(std::string("unexpected '") + c + "'", line_);
      }
      brackets.pop_back();
    }
    tokens_.push_back(Token{TokenKind::kOperator, std::string(1, c), line_});
    Advance(1);
  }

  // Digits with single underscores between them, from `at`; returns the end.
  size_t ScanDigits(size_t at) const {
    while (at < source_.size() &&
           (IsDigit(source_[at]) ||
            (source_[at] == '_' && at + 1 < source_.size() && IsDigit(source_[at + 1])))) {
      ++at;
    }
    return at;
  }

  // 0x1F, 0o17 and 0b101 (with underscores between digits), as Jinja reads them; false when the
  // number has no such prefix.
  bool LexPrefixedInteger() {
    if (source_[pos_] != '0' || pos_ + 2 >= source_.size()) return false;
    char prefix = static_cast<char>(source_[pos_ + 1] | 0x20);
    int base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 0;
    if (base == 0) return false;
    std::string digits;
    size_t end = pos_ + 2;
    for (; end < source_.size(); ++end) {
      char c = source_[end];
      int digit = HexDigit(c);
      bool underscore = c == '_' && end + 1 < source_.size() && HexDigit(source_[end + 1]) >= 0 &&
                        HexDigit(source_[end + 1]) < base;
      if (underscore) continue;
      if (digit < 0 || digit >= base) break;
      digits += c;
    }
    if (digits.empty()) return false;
    Token token{TokenKind::kInteger, source_.substr(pos_, end - pos_), line_};
    const char* last = digits.data() + digits.size();
    if (std::from_chars(digits.data(), last, token.int_value, base).ec != std::errc()) {
      throw SyntaxError("integer literal too large: " + token.text, line_);
    }
    tokens_.push_back(std::move(token));
    Advance(end - pos_);
    return true;
  }

  void LexNumber() {
    if (LexPrefixedInteger()) return;
    size_t end = ScanDigits(pos_);
    // After a dot (`items.0.1`) a number is an index, never a float.
    bool may_be_float = pos_ == 0 || source_[pos_ - 1] != '.';
    bool is_float = false;
    if (may_be_float && end + 1 < source_.size() && source_[end] == '.' &&
        IsDigit(source_[end + 1])) {
      end = ScanDigits(end + 1);
      is_float = true;
    }
    if (may_be_float && end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      size_t digits = end + 1;
      if (digits < source_.size() && (source_[digits] == '+' || source_[digits] == '-')) ++digits;
      if (digits < source_.size() && IsDigit(source_[digits])) {
        end = ScanDigits(digits);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = pos_; i < end; ++i) {
      if (source_[i] != '_') text += source_[i];
    }
    Token token{is_float ? TokenKind::kFloat : TokenKind::kInteger, text, line_};
    const char* last = text.data() + text.size();
    if (is_float) {
      std::from_chars(text.data(), last, token.float_value);
    } else if (std::from_chars(text.data(), last, token.int_value).ec != std::errc()) {
      throw SyntaxError("integer literal too large: " + text, line_);
    }
    tokens_.push_back(std::move(token));
    Advance(end - pos_);
  }

  // Python string literal escapes, as Jinja decodes them (unicode-escape); an unknown escape
  // keeps its backslash.
  void LexString() {
    int start_line = line_;
    char quote = source_[pos_];
    std::string value;
    size_t i = pos_ + 1;
    auto fail = [&](const std::string& message) { throw SyntaxError(message, start_line); };
    while (true) {
      if (i >= source_.size()) fail("unterminated string");
      char c = source_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= source_.size()) fail("unterminated string");
      char e = source_[i + 1];
      i += 2;
      switch (e) {
        case '\n':
          break;
        case '\\':
        case '\'':
        case '"':
          value += e;
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'n':
          value += '\n';
          break;
        case 'r':
          value += '\r';
          break;
        case 't':
          value += '\t';
          break;
        case 'v':
          value += '\v';
          break;
        case 'x':
        case 'u':
        case 'U': {
          size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t code_point = 0;
          for (size_t k = 0; k < digits; ++k) {
            int digit = i + k < source_.size() ? HexDigit(source_[i + k]) : -1;
            if (digit < 0) fail(std::string("truncated \\") + e + " escape");
            code_point = code_point * 16 + static_cast<char32_t>(digit);
          }
          if (code_point > 0x10FFFF) fail("illegal Unicode character in escape");
          AppendUtf8(code_point, &value);
          i += digits;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t code_point = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && i < source_.size() && source_[i] >= '0' && source_[i] <= '7';
                 ++k, ++i) {
              code_point = code_point * 8 + static_cast<char32_t>(source_[i] - '0');
            }
            AppendUtf8(code_point, &value);
          } else {
            value += '\\';
            i -= 1;  // the character after the backslash is read as usual
          }
      }
    }
    tokens_.push_back(Token{TokenKind::kString, std::move(value), start_line});
    Advance(i + 1 - pos_);
  }

  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;  // the previous tag's end consumed a newline (or nothing came yet)
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view source) { return Lexer(source).Run(); }

}  // namespace vllm::jinja
