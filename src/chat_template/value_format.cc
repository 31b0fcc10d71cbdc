// Python's str(), repr() and json.dumps() for template values.
#include "chat_template/value_format.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/python_str.h"

namespace vllm::jinja {
namespace {

void CheckDepth(int depth) {
  if (depth > kMaxValueDepth) throw RenderError("value nested too deeply to print");
}

void AppendHex(uint32_t value, int digits, std::string& out) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%0*x", digits, value);
  out += buffer;
}

// Python's str.isprintable() for one code point.
bool IsPrintable(char32_t c) {
  if (c == ' ') return true;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
    case U_SPACE_SEPARATOR:
      return false;
    default:
      return true;
  }
}

// repr(float): the shortest text that reads back the same, "1.0", "0.1", "1e-05", "1e+16".
std::string FormatFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string out = std::signbit(value) ? "-" : "";
  value = std::fabs(value);
  if (value == 0) return out + "0.0";
  // The shortest round-trip digits, "d.ddde±xx", rearranged as Python's repr places them.
  char buffer[40];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view scientific(buffer, static_cast<size_t>(result.ptr - buffer));
  size_t e = scientific.find('e');
  std::string digits(1, scientific[0]);
  if (e > 1) digits += scientific.substr(2, e - 2);
  int exponent = 0;
  std::string_view exponent_text = scientific.substr(e + 1);
  if (exponent_text.front() == '+') exponent_text.remove_prefix(1);
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
  int point = exponent + 1;  // digits before the decimal point
  int digit_count = static_cast<int>(digits.size());
  if (point > 16 || point < -3) {
    out += digits[0];
    if (digit_count > 1) out += "." + digits.substr(1);
    std::string magnitude = std::to_string(std::abs(exponent));
    out += exponent < 0 ? "e-" : "e+";
    out += magnitude.size() < 2 ? "0" + magnitude : magnitude;
  } else if (point <= 0) {
    out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (point < digit_count) {
    out += digits.substr(0, static_cast<size_t>(point)) + "." +
           digits.substr(static_cast<size_t>(point));
  } else {
    out += digits + std::string(static_cast<size_t>(point - digit_count), '0') + ".0";
  }
  return out;
}

void AppendStringRepr(std::string_view text, std::string& out) {
  bool has_single = text.find('\'') != std::string_view::npos;
  bool has_double = text.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (std::string_view bytes : CodePoints(text)) {
    char32_t c = DecodeCodePoint(bytes);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x80 ? c >= 0x20 && c != 0x7F : IsPrintable(c)) {
      out += bytes;
    } else if (c < 0x100) {
      out += "\\x";
      AppendHex(c, 2, out);
    } else if (c < 0x10000) {
      out += "\\u";
      AppendHex(c, 4, out);
    } else {
      out += "\\U";
      AppendHex(c, 8, out);
    }
  }
  out += quote;
}

void AppendRepr(const Value& value, std::string& out, int depth, const RenderBudget& budget) {
  CheckDepth(depth);
  switch (value.kind()) {
    case ValueKind::kUndefined:
      out += "Undefined";
      break;
    case ValueKind::kNone:
      out += "None";
      break;
    case ValueKind::kBool:
      out += value.AsBool() ? "True" : "False";
      break;
    case ValueKind::kInt:
      out += std::to_string(value.AsInt());
      break;
    case ValueKind::kFloat:
      out += FormatFloat(value.AsDouble());
      break;
    case ValueKind::kString:
      if (value.is_markup()) out += "Markup(";
      AppendStringRepr(value.AsString(), out);
      if (value.is_markup()) out += ")";
      break;
    case ValueKind::kList: {
      const auto& items = value.AsList();
      out += value.is_tuple() ? '(' : '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        AppendRepr(items[i], out, depth + 1, budget);
      }
      if (value.is_tuple() && items.size() == 1) out += ',';
      out += value.is_tuple() ? ')' : ']';
      break;
    }
    case ValueKind::kDict:
    case ValueKind::kNamespace: {
      if (value.is_namespace()) out += "<Namespace ";
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.AsDict().entries) {
        if (!first) out += ", ";
        first = false;
        AppendRepr(key, out, depth + 1, budget);
        out += ": ";
        AppendRepr(item, out, depth + 1, budget);
      }
      out += '}';
      if (value.is_namespace()) out += '>';
      break;
    }
    case ValueKind::kFunction:
      out += "<function " + value.AsFunction().name + ">";
      break;
  }
  budget.CheckStringSize(out.size());
}

class JsonWriter {
 public:
  JsonWriter(const JsonOptions& options, RenderBudget& budget)
      : options_(options), budget_(budget) {}

  std::string Write(const Value& value) {
    WriteValue(value, 0);
    return std::move(out_);
  }

 private:
  void WriteValue(const Value& value, int depth) {
    CheckDepth(depth);
    switch (value.kind()) {
      case ValueKind::kNone:
        out_ += "null";
        break;
      case ValueKind::kBool:
        out_ += value.AsBool() ? "true" : "false";
        break;
      case ValueKind::kInt:
        out_ += std::to_string(value.AsInt());
        break;
      case ValueKind::kFloat:
        WriteFloat(value.AsDouble());
        break;
      case ValueKind::kString:
        WriteString(value.AsString());
        break;
      case ValueKind::kList:
        WriteList(value.AsList(), depth);
        break;
      case ValueKind::kDict:
        WriteDict(value.AsDict().entries, depth);
        break;
      default:
        throw RenderError("Object of type " + TypeName(value) + " is not JSON serializable");
    }
    budget_.CheckStringSize(out_.size());
  }

  void WriteFloat(double number) {
    if (std::isnan(number)) {
      out_ += "NaN";
    } else if (std::isinf(number)) {
      out_ += number > 0 ? "Infinity" : "-Infinity";
    } else {
      out_ += FormatFloat(number);
    }
  }

  void WriteString(std::string_view text) {
    out_ += '"';
    for (std::string_view bytes : CodePoints(text)) {
      char32_t c = DecodeCodePoint(bytes);
      switch (c) {
        case '"':
          out_ += "\\\"";
          continue;
        case '\\':
          out_ += "\\\\";
          continue;
        case '\n':
          out_ += "\\n";
          continue;
        case '\r':
          out_ += "\\r";
          continue;
        case '\t':
          out_ += "\\t";
          continue;
        case '\b':
          out_ += "\\b";
          continue;
        case '\f':
          out_ += "\\f";
          continue;
        default:
          break;
      }
      if (c < 0x20 || (options_.ensure_ascii && c == 0x7F)) {
        out_ += "\\u";
        AppendHex(c, 4, out_);
      } else if (c < 0x80 || !options_.ensure_ascii) {
        out_ += bytes;
      } else if (c < 0x10000) {
        out_ += "\\u";
        AppendHex(c, 4, out_);
      } else {  // a surrogate pair, as Python writes characters past the BMP
        char32_t offset = c - 0x10000;
        out_ += "\\u";
        AppendHex(0xD800 + (offset >> 10), 4, out_);
        out_ += "\\u";
        AppendHex(0xDC00 + (offset & 0x3FF), 4, out_);
      }
    }
    out_ += '"';
  }

  // Python's json.dumps turns keys of these types into strings.
  std::string KeyText(const Value& key) {
    switch (key.kind()) {
      case ValueKind::kString:
        return key.AsString();
      case ValueKind::kNone:
        return "null";
      case ValueKind::kBool:
        return key.AsBool() ? "true" : "false";
      case ValueKind::kInt:
        return std::to_string(key.AsInt());
      case ValueKind::kFloat: {
        std::string saved = std::move(out_);
        out_.clear();
        WriteFloat(key.AsDouble());
        std::swap(saved, out_);
        return saved;
      }
      default:
        throw RenderError("keys must be str, int, float, bool or None, not " + TypeName(key));
    }
  }

  void Newline(int level) {
    if (!options_.indent) return;
    out_ += '\n';
    for (int i = 0; i < level; ++i) budget_.Append(out_, *options_.indent);
  }

  void WriteList(const std::vector<Value>& items, int depth) {
    if (items.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_ += options_.item_separator;
      Newline(depth + 1);
      WriteValue(items[i], depth + 1);
    }
    Newline(depth);
    out_ += ']';
  }

  void WriteDict(const std::vector<std::pair<Value, Value>>& entries, int depth) {
    if (entries.empty()) {
      out_ += "{}";
      return;
    }
    std::vector<const std::pair<Value, Value>*> order;
    for (const auto& entry : entries) order.push_back(&entry);
    if (options_.sort_keys) {
      std::stable_sort(order.begin(), order.end(), [this](const auto* a, const auto* b) {
        return LessThan(a->first, b->first, budget_);
      });
    }
    out_ += '{';
    for (size_t i = 0; i < order.size(); ++i) {
      if (i > 0) out_ += options_.item_separator;
      Newline(depth + 1);
      WriteString(KeyText(order[i]->first));
      out_ += options_.key_separator;
      WriteValue(order[i]->second, depth + 1);
    }
    Newline(depth);
    out_ += '}';
  }

  const JsonOptions& options_;
  RenderBudget& budget_;
  std::string out_;
};

}  // namespace

std::string ToStr(const Value& value, const RenderBudget& budget) {
  if (value.is_string()) return value.AsString();
  if (value.is_undefined()) return "";
  return ToRepr(value, budget);
}

std::string ToRepr(const Value& value, const RenderBudget& budget) {
  std::string out;
  AppendRepr(value, out, 0, budget);
  return out;
}

std::string ToJson(const Value& value, const JsonOptions& options, RenderBudget& budget) {
  return JsonWriter(options, budget).Write(value);
}

std::string EscapeHtml(std::string_view text, const RenderBudget& budget) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        budget.Append(out, "&amp;");
        break;
      case '<':
        budget.Append(out, "&lt;");
        break;
      case '>':
        budget.Append(out, "&gt;");
        break;
      case '"':
        budget.Append(out, "&#34;");
        break;
      case '\'':
        budget.Append(out, "&#39;");
        break;
      default:
        budget.Append(out, std::string_view(&c, 1));
    }
  }
  return out;
}

}  // namespace vllm::jinja
