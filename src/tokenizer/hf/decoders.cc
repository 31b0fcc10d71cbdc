#include "tokenizer/hf/decoders.h"

#include <optional>

#include "tokenizer/byte_level.h"
#include "tokenizer/hf/pattern.h"
#include "tokenizer/hf/unicode_chars.h"

namespace vllm::hf {
namespace {

constexpr std::string_view kReplacementChar = "\xef\xbf\xbd";  // U+FFFD

// The length of the valid UTF-8 character at bytes[pos]; 0 when invalid, and then *prefix is
// the length of its longest valid-but-truncated start (at least 1).
size_t ValidCharLength(std::string_view bytes, size_t pos, size_t* prefix) {
  const auto lead = static_cast<unsigned char>(bytes[pos]);
  *prefix = 1;
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    if (pos + k >= bytes.size()) return 0;
    const auto byte = static_cast<unsigned char>(bytes[pos + k]);
    if (k == 1 ? (byte < low || byte > high) : (byte & 0xc0) != 0x80) return 0;
    *prefix = k + 1;
  }
  return length;
}

// The byte an "<0xXX>" token stands for.
std::optional<unsigned char> ParseByteToken(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return std::nullopt;
  int value = 0;
  for (char c : token.substr(3, 2)) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + digit;
  }
  return static_cast<unsigned char>(value);
}

// Whether `bytes` ends with the start of a character that more bytes could complete, beginning
// at `pos` with `prefix` valid bytes.
bool IsTruncatedLead(std::string_view bytes, size_t pos, size_t prefix) {
  if (pos + prefix != bytes.size()) return false;
  const auto lead = static_cast<unsigned char>(bytes[pos]);
  return prefix > 1 || (lead >= 0xc2 && lead <= 0xf4);
}

bool IsValidUtf8(std::string_view bytes, bool allow_incomplete_tail) {
  for (size_t pos = 0; pos < bytes.size();) {
    size_t prefix = 0;
    const size_t length = ValidCharLength(bytes, pos, &prefix);
    if (length == 0) return allow_incomplete_tail && IsTruncatedLead(bytes, pos, prefix);
    pos += length;
  }
  return true;
}

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> decoders)
      : decoders_(std::move(decoders)) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (const auto& decoder : decoders_) decoder->DecodeChain(tokens);
  }
  void DecodeChainKeepingBytes(std::vector<std::string>* tokens) const override {
    for (const auto& decoder : decoders_) decoder->DecodeChainKeepingBytes(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> decoders_;
};

// Byte-level text back to bytes; a token with characters outside the alphabet stays as it is.
class ByteLevelDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override {
    DecodeChainKeepingBytes(tokens);
    (*tokens)[0] = ToValidUtf8((*tokens)[0], /*keep_incomplete_tail=*/true);
  }
  void DecodeChainKeepingBytes(std::vector<std::string>* tokens) const override {
    std::string bytes;
    for (const std::string& token : *tokens) {
      if (auto decoded = ByteLevelToBytes(token)) {
        bytes += *decoded;
      } else {
        bytes += token;
      }
    }
    tokens->assign(1, std::move(bytes));
  }
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (std::string& token : *tokens) token = pattern_.ReplaceAll(token, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// Runs of <0xXX> tokens become the text of their bytes, or one U+FFFD per byte when the bytes
// are not valid UTF-8.
class ByteFallbackDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override { Decode(tokens, false); }
  void DecodeChainKeepingBytes(std::vector<std::string>* tokens) const override {
    Decode(tokens, true);
  }

 private:
  static void Decode(std::vector<std::string>* tokens, bool keep_bytes) {
    std::vector<std::string> out;
    out.reserve(tokens->size());
    std::string bytes;
    auto flush = [&](bool at_end) {
      if (bytes.empty()) return;
      if (keep_bytes || IsValidUtf8(bytes, at_end)) {
        out.push_back(bytes);
      } else {
        for (size_t i = 0; i < bytes.size(); ++i) out.emplace_back(kReplacementChar);
      }
      bytes.clear();
    };
    for (std::string& token : *tokens) {
      if (auto byte = ParseByteToken(token)) {
        bytes += static_cast<char>(*byte);
        continue;
      }
      flush(false);
      out.push_back(std::move(token));
    }
    flush(true);
    *tokens = std::move(out);
  }
};

class FuseDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override {
    std::string fused;
    for (const std::string& token : *tokens) fused += token;
    tokens->assign(1, std::move(fused));
  }
};

// Removes up to `start` leading and `stop` trailing `content` characters from each token.
class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (std::string& token : *tokens) {
      size_t begin = 0;
      for (size_t n = 0; n < start_ && begin < token.size() &&
                         token.compare(begin, content_.size(), content_) == 0;
           ++n) {
        begin += content_.size();
      }
      size_t end = token.size();
      for (size_t n = 0; n < stop_ && end >= begin + content_.size() &&
                         token.compare(end - content_.size(), content_.size(), content_) == 0;
           ++n) {
        end -= content_.size();
      }
      token = token.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;  // one character
  size_t start_, stop_;
};

// The replacement character becomes a space, except in the first token when a prefix was
// prepended at encoding, where it is dropped.
class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool drop_in_first)
      : replacement_(Pattern::Literal(std::move(replacement))), drop_in_first_(drop_in_first) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (size_t i = 0; i < tokens->size(); ++i) {
      (*tokens)[i] = replacement_.ReplaceAll((*tokens)[i], i == 0 && drop_in_first_ ? "" : " ");
    }
  }

 private:
  Pattern replacement_;
  bool drop_in_first_;
};

// Continuation pieces ("##ing") join the previous token; the others get a space before them.
class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup)
      : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (size_t i = 0; i < tokens->size(); ++i) {
      std::string& token = (*tokens)[i];
      if (i > 0) {
        if (!prefix_.empty() && token.compare(0, prefix_.size(), prefix_) == 0) {
          token.erase(0, prefix_.size());
        } else {
          token.insert(0, 1, ' ');
        }
      }
      if (cleanup_) token = CleanUpTokenization(std::move(token));
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

// The end-of-word suffix becomes a space (nothing in the last token).
class BpeSuffixDecoder : public Decoder {
 public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(Pattern::Literal(std::move(suffix))) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (size_t i = 0; i < tokens->size(); ++i) {
      (*tokens)[i] = suffix_.ReplaceAll((*tokens)[i], i + 1 == tokens->size() ? "" : " ");
    }
  }

 private:
  Pattern suffix_;
};

using Result = std::unique_ptr<Decoder>;

Expected<Result> ParseStrip(const Json& json, std::string_view context) {
  auto content = StringField(json, "content", context);
  if (!content) return Error{content.error()};
  auto start = IntField(json, "start", context, 0);
  if (!start) return Error{start.error()};
  auto stop = IntField(json, "stop", context, 0);
  if (!stop) return Error{stop.error()};
  if (content->empty() || *start < 0 || *stop < 0) {
    return Error{std::string(context) + ": expected a content character and start, stop >= 0"};
  }
  return Result(new StripDecoder(std::move(*content), static_cast<size_t>(*start),
                                 static_cast<size_t>(*stop)));
}

Expected<Result> ParseMetaspace(const Json& json, std::string_view context) {
  auto replacement = StringField(json, "replacement", context, "\xe2\x96\x81");
  if (!replacement) return Error{replacement.error()};
  if (replacement->empty()) return Error{FieldName(context, "replacement") + ": empty"};
  auto add_prefix_space = BoolField(json, "add_prefix_space", context, true);
  if (!add_prefix_space) return Error{add_prefix_space.error()};
  auto scheme =
      StringField(json, "prepend_scheme", context, *add_prefix_space ? "always" : "never");
  if (!scheme) return Error{scheme.error()};
  if (*scheme != "always" && *scheme != "first" && *scheme != "never") {
    return Error{FieldName(context, "prepend_scheme") + ": expected always, first or never"};
  }
  return Result(new MetaspaceDecoder(std::move(*replacement), *scheme != "never"));
}

}  // namespace

std::string ToValidUtf8(std::string_view bytes, bool keep_incomplete_tail) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    size_t prefix = 0;
    const size_t length = ValidCharLength(bytes, pos, &prefix);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
      continue;
    }
    if (keep_incomplete_tail && IsTruncatedLead(bytes, pos, prefix)) {
      out.append(bytes.substr(pos));
      break;
    }
    out += kReplacementChar;
    pos += prefix;
  }
  return out;
}

std::string CleanUpTokenization(std::string text) {
  static const std::pair<Pattern, std::string_view> kRules[] = {
      {Pattern::Literal(" ."), "."},     {Pattern::Literal(" ?"), "?"},
      {Pattern::Literal(" !"), "!"},     {Pattern::Literal(" ,"), ","},
      {Pattern::Literal(" ' "), "'"},    {Pattern::Literal(" n't"), "n't"},
      {Pattern::Literal(" 'm"), "'m"},   {Pattern::Literal(" 's"), "'s"},
      {Pattern::Literal(" 've"), "'ve"}, {Pattern::Literal(" 're"), "'re"},
  };
  for (const auto& [pattern, replacement] : kRules) text = pattern.ReplaceAll(text, replacement);
  return text;
}

Expected<std::unique_ptr<Decoder>> ParseDecoder(const Json& json, std::string_view context) {
  if (json.is_null()) return Result();
  if (!json.is_object()) return Error{std::string(context) + ": expected an object"};
  auto type = StringField(json, "type", context);
  if (!type) return Error{type.error()};
  if (*type == "Sequence") {
    auto decoders = ParseSequenceItems<Decoder>(json, "decoders", context, ParseDecoder);
    if (!decoders) return Error{decoders.error()};
    return Result(new SequenceDecoder(std::move(*decoders)));
  }
  if (*type == "ByteLevel") return Result(new ByteLevelDecoder());
  if (*type == "ByteFallback") return Result(new ByteFallbackDecoder());
  if (*type == "Fuse") return Result(new FuseDecoder());
  if (*type == "Strip") return ParseStrip(json, context);
  if (*type == "Metaspace") return ParseMetaspace(json, context);
  if (*type == "Replace") {
    auto replace = Pattern::ParseReplace(json, context);
    if (!replace) return Error{replace.error()};
    return Result(new ReplaceDecoder(std::move(replace->first), std::move(replace->second)));
  }
  if (*type == "WordPiece") {
    auto prefix = StringField(json, "prefix", context, "##");
    if (!prefix) return Error{prefix.error()};
    auto cleanup = BoolField(json, "cleanup", context, true);
    if (!cleanup) return Error{cleanup.error()};
    return Result(new WordPieceDecoder(std::move(*prefix), *cleanup));
  }
  if (*type == "BPEDecoder") {
    auto suffix = StringField(json, "suffix", context, "</w>");
    if (!suffix) return Error{suffix.error()};
    return Result(new BpeSuffixDecoder(std::move(*suffix)));
  }
  return Error{std::string(context) + ": unsupported decoder type '" + *type + "'"};
}

}  // namespace vllm::hf
