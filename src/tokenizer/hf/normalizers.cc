#include "tokenizer/hf/normalizers.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/hf/base64.h"
#include "tokenizer/hf/pattern.h"
#include "tokenizer/hf/unicode_chars.h"
#include "tokenizer/precompiled_charsmap.h"

namespace vllm::hf {
namespace {

bool IsAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

icu::UnicodeString ToIcu(std::string_view text) {
  return icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
}

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> normalizers)
      : normalizers_(std::move(normalizers)) {}
  std::string Normalize(std::string text) const override {
    for (const auto& normalizer : normalizers_) text = normalizer->Normalize(std::move(text));
    return text;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> normalizers_;
};

// Prepends its text to a non-empty text.
class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prepend) : prepend_(std::move(prepend)) {}
  std::string Normalize(std::string text) const override {
    return text.empty() ? text : prepend_ + text;
  }

 private:
  std::string prepend_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string Normalize(std::string text) const override {
    return pattern_.ReplaceAll(text, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}
  std::string Normalize(std::string text) const override {
    if (IsAscii(text)) return text;  // every form leaves ASCII as it is
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* normalizer = nullptr;
    switch (form_) {
      case UnicodeForm::kNfc:
        normalizer = icu::Normalizer2::getNFCInstance(status);
        break;
      case UnicodeForm::kNfd:
        normalizer = icu::Normalizer2::getNFDInstance(status);
        break;
      case UnicodeForm::kNfkc:
        normalizer = icu::Normalizer2::getNFKCInstance(status);
        break;
      case UnicodeForm::kNfkd:
        normalizer = icu::Normalizer2::getNFKDInstance(status);
        break;
    }
    if (U_FAILURE(status)) return text;
    const icu::UnicodeString source = ToIcu(text);
    if (normalizer->isNormalized(source, status) && U_SUCCESS(status)) return text;
    status = U_ZERO_ERROR;
    const icu::UnicodeString normalized = normalizer->normalize(source, status);
    if (U_FAILURE(status)) return text;
    std::string out;
    normalized.toUTF8String(out);
    return out;
  }

 private:
  UnicodeForm form_;
};

// Each character's full lowercase mapping, without context (as Rust's char::to_lowercase).
std::string Lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachChar(text, [&](size_t begin, size_t end, char32_t c) {
    if (c < 0x80) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    } else if (c == kInvalidChar) {
      out.append(text.substr(begin, end - begin));
    } else {
      icu::UnicodeString(static_cast<UChar32>(c)).toLower(icu::Locale::getRoot()).toUTF8String(out);
    }
  });
  return out;
}

class LowercaseNormalizer : public Normalizer {
 public:
  std::string Normalize(std::string text) const override { return Lowercase(text); }
};

// Removes whitespace at either end.
class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string Normalize(std::string text) const override {
    size_t begin = 0, end = text.size();
    bool leading = true;
    ForEachChar(text, [&](size_t char_begin, size_t char_end, char32_t c) {
      if (IsWhitespace(c)) {
        if (leading && left_) begin = char_end;
      } else {
        leading = false;
        if (right_) end = char_end;
      }
    });
    if (right_ && leading) end = begin;  // all whitespace
    return text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

bool IsNonSpacingMark(char32_t c) {
  return c >= 0x80 && c != kInvalidChar &&
         u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK;
}

// Drops combining (non-spacing) marks.
std::string StripMarks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachChar(text, [&](size_t begin, size_t end, char32_t c) {
    if (!IsNonSpacingMark(c)) out.append(text.substr(begin, end - begin));
  });
  return out;
}

class StripAccentsNormalizer : public Normalizer {
 public:
  std::string Normalize(std::string text) const override { return StripMarks(text); }
};

// BERT's control characters: categories Cc, Cf, Cn, Co except tab, newline and carriage return.
bool IsBertControl(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  if (c == kInvalidChar) return false;
  const auto mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  return (mask & (U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CN_MASK | U_GC_CO_MASK)) != 0;
}

class BertNormalizer : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase)
      : clean_text_(clean_text),
        handle_chinese_chars_(handle_chinese_chars),
        strip_accents_(strip_accents),
        lowercase_(lowercase) {}

  std::string Normalize(std::string text) const override {
    std::string out;
    out.reserve(text.size());
    ForEachChar(text, [&](size_t begin, size_t end, char32_t c) {
      if (clean_text_) {
        if (c == 0 || c == 0xFFFD || IsBertControl(c)) return;
        if (IsWhitespace(c)) {
          out += ' ';
          return;
        }
      }
      if (handle_chinese_chars_ && IsCjk(c)) {
        out += ' ';
        out.append(text.substr(begin, end - begin));
        out += ' ';
        return;
      }
      out.append(text.substr(begin, end - begin));
    });
    if (strip_accents_) out = StripMarks(UnicodeNormalizer(UnicodeForm::kNfd).Normalize(out));
    if (lowercase_) out = Lowercase(out);
    return out;
  }

 private:
  bool clean_text_, handle_chinese_chars_, strip_accents_, lowercase_;
};

class ByteLevelNormalizer : public Normalizer {
 public:
  std::string Normalize(std::string text) const override { return BytesToByteLevel(text); }
};

// SentencePiece's charsmap as Hugging Face applies it: each grapheme shorter than 6 bytes that
// the charsmap matches (its shortest matching key) is replaced whole; otherwise each of its
// characters is looked up alone.
class PrecompiledNormalizer : public Normalizer {
 public:
  explicit PrecompiledNormalizer(PrecompiledCharsmap charsmap) : charsmap_(std::move(charsmap)) {
    UErrorCode status = U_ZERO_ERROR;
    graphemes_.reset(icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status)) graphemes_.reset();
  }

  std::string Normalize(std::string text) const override {
    if (charsmap_.empty()) return text;
    std::string out;
    out.reserve(text.size());
    if (IsAscii(text) || graphemes_ == nullptr) {
      // ASCII graphemes are single characters, except "\r\n".
      for (size_t pos = 0; pos < text.size();) {
        const size_t length = text.compare(pos, 2, "\r\n") == 0 ? 2 : 1;
        AppendGrapheme(std::string_view(text).substr(pos, length), &out);
        pos += length;
      }
      return out;
    }
    const icu::UnicodeString source = ToIcu(text);
    std::unique_ptr<icu::BreakIterator> graphemes(graphemes_->clone());
    graphemes->setText(source);
    std::string grapheme;
    for (int32_t begin = graphemes->first(), end = graphemes->next();
         end != icu::BreakIterator::DONE; begin = end, end = graphemes->next()) {
      grapheme.clear();
      source.tempSubStringBetween(begin, end).toUTF8String(grapheme);
      AppendGrapheme(grapheme, &out);
    }
    return out;
  }

 private:
  void AppendGrapheme(std::string_view grapheme, std::string* out) const {
    if (grapheme.size() < 6) {
      if (auto replacement = charsmap_.ShortestMatch(grapheme)) {
        out->append(*replacement);
        return;
      }
    }
    ForEachChar(grapheme, [&](size_t begin, size_t end, char32_t) {
      const std::string_view character = grapheme.substr(begin, end - begin);
      out->append(charsmap_.ShortestMatch(character).value_or(character));
    });
  }

  PrecompiledCharsmap charsmap_;
  std::unique_ptr<icu::BreakIterator> graphemes_;  // cloned per call: not thread-safe
};

}  // namespace

Expected<std::unique_ptr<Normalizer>> ParseNormalizer(const Json& json, std::string_view context) {
  using Result = std::unique_ptr<Normalizer>;
  if (json.is_null()) return Result();
  if (!json.is_object()) return Error{std::string(context) + ": expected an object"};
  auto type = StringField(json, "type", context);
  if (!type) return Error{type.error()};
  if (*type == "Sequence") {
    auto normalizers =
        ParseSequenceItems<Normalizer>(json, "normalizers", context, ParseNormalizer);
    if (!normalizers) return Error{normalizers.error()};
    return Result(new SequenceNormalizer(std::move(*normalizers)));
  }
  if (*type == "Prepend") {
    auto prepend = StringField(json, "prepend", context);
    if (!prepend) return Error{prepend.error()};
    return Result(new PrependNormalizer(std::move(*prepend)));
  }
  if (*type == "Replace") {
    auto replace = Pattern::ParseReplace(json, context);
    if (!replace) return Error{replace.error()};
    return Result(new ReplaceNormalizer(std::move(replace->first), std::move(replace->second)));
  }
  if (*type == "Precompiled") {
    auto encoded = StringField(json, "precompiled_charsmap", context);
    if (!encoded) return Error{encoded.error()};
    auto blob = DecodeBase64(*encoded);
    if (!blob) return Error{FieldName(context, "precompiled_charsmap") + ": not base64"};
    auto charsmap = PrecompiledCharsmap::Parse(*blob);
    if (!charsmap)
      return Error{FieldName(context, "precompiled_charsmap") + ": " + charsmap.error()};
    return Result(new PrecompiledNormalizer(std::move(*charsmap)));
  }
  if (*type == "NFC") return Result(new UnicodeNormalizer(UnicodeForm::kNfc));
  if (*type == "NFD") return Result(new UnicodeNormalizer(UnicodeForm::kNfd));
  if (*type == "NFKC") return Result(new UnicodeNormalizer(UnicodeForm::kNfkc));
  if (*type == "NFKD") return Result(new UnicodeNormalizer(UnicodeForm::kNfkd));
  if (*type == "Lowercase") return Result(new LowercaseNormalizer());
  if (*type == "StripAccents") return Result(new StripAccentsNormalizer());
  if (*type == "ByteLevel") return Result(new ByteLevelNormalizer());
  if (*type == "Strip") {
    auto left = BoolField(json, "strip_left", context, true);
    if (!left) return Error{left.error()};
    auto right = BoolField(json, "strip_right", context, true);
    if (!right) return Error{right.error()};
    return Result(new StripNormalizer(*left, *right));
  }
  if (*type == "BertNormalizer") {
    auto clean_text = BoolField(json, "clean_text", context, true);
    if (!clean_text) return Error{clean_text.error()};
    auto chinese = BoolField(json, "handle_chinese_chars", context, true);
    if (!chinese) return Error{chinese.error()};
    auto lowercase = BoolField(json, "lowercase", context, true);
    if (!lowercase) return Error{lowercase.error()};
    // strip_accents: null follows lowercase.
    auto strip_accents = BoolField(json, "strip_accents", context, *lowercase);
    if (!strip_accents) return Error{strip_accents.error()};
    return Result(new BertNormalizer(*clean_text, *chinese, *strip_accents, *lowercase));
  }
  return Error{std::string(context) + ": unsupported normalizer type '" + *type + "'"};
}

}  // namespace vllm::hf
