#include "tokenizer/hf/pre_tokenizers.h"

#include <algorithm>
#include <functional>

#include "tokenizer/byte_level.h"
#include "tokenizer/hf/pattern.h"
#include "tokenizer/hf/unicode_chars.h"

namespace vllm::hf {
namespace {

using Matches = std::vector<std::pair<size_t, size_t>>;
using MatchFinder = std::function<Matches(std::string_view)>;

// The regex ByteLevel splits with when use_regex is set (GPT-2's).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Splits every piece at the matches `find` gives.
void SplitPieces(std::vector<PreToken>* pieces, const MatchFinder& find, SplitBehavior behavior,
                 bool invert) {
  std::vector<PreToken> next;
  next.reserve(pieces->size());
  for (PreToken& piece : *pieces) {
    for (const auto& [begin, end] :
         SplitByMatches(piece.text.size(), find(piece.text), behavior, invert)) {
      if (begin == 0 && end == piece.text.size()) {
        next.push_back(std::move(piece));
        break;
      }
      next.push_back({piece.text.substr(begin, end - begin), piece.at_input_start && begin == 0});
    }
  }
  *pieces = std::move(next);
}

// Every character that satisfies `predicate` is a match of its own.
MatchFinder CharMatches(bool (*predicate)(char32_t)) {
  return [predicate](std::string_view text) {
    Matches matches;
    ForEachChar(text, [&](size_t begin, size_t end, char32_t c) {
      if (predicate(c)) matches.emplace_back(begin, end);
    });
    return matches;
  };
}

MatchFinder PatternMatches(Pattern pattern) {
  return [pattern = std::move(pattern)](std::string_view text) { return pattern.Find(text); };
}

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void PreTokenize(std::vector<PreToken>* pieces) const override {
    for (const auto& step : steps_) step->PreTokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// Split, Digits, Whitespace, WhitespaceSplit, Punctuation, CharDelimiterSplit: one split.
class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(MatchFinder find, SplitBehavior behavior, bool invert)
      : find_(std::move(find)), behavior_(behavior), invert_(invert) {}
  void PreTokenize(std::vector<PreToken>* pieces) const override {
    SplitPieces(pieces, find_, behavior_, invert_);
  }

 private:
  MatchFinder find_;
  SplitBehavior behavior_;
  bool invert_;
};

// Whitespace removed, then punctuation isolated.
class BertPreTokenizer : public PreTokenizer {
 public:
  void PreTokenize(std::vector<PreToken>* pieces) const override {
    SplitPieces(pieces, CharMatches(IsWhitespace), SplitBehavior::kRemoved, false);
    SplitPieces(pieces, CharMatches(IsPunctuation), SplitBehavior::kIsolated, false);
  }
};

// Optionally prefixes a space and splits with GPT-2's regex, then writes every piece in the
// byte-level alphabet.
class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, std::unique_ptr<Pattern> regex)
      : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
  void PreTokenize(std::vector<PreToken>* pieces) const override {
    if (add_prefix_space_) {
      for (PreToken& piece : *pieces) {
        if (piece.text.empty() || piece.text[0] != ' ') piece.text.insert(0, 1, ' ');
      }
    }
    if (regex_) {
      SplitPieces(
          pieces, [this](std::string_view text) { return regex_->Find(text); },
          SplitBehavior::kIsolated, false);
    }
    for (PreToken& piece : *pieces) piece.text = BytesToByteLevel(piece.text);
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Pattern> regex_;  // null when use_regex is false
};

enum class PrependScheme { kAlways, kFirst, kNever };

// Spaces become the replacement character (▁), which may be prepended; pieces may then be cut
// before each replacement character.
class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)),
        space_(Pattern::Literal(" ")),
        marker_(Pattern::Literal(replacement_)),
        scheme_(scheme),
        split_(split) {}
  void PreTokenize(std::vector<PreToken>* pieces) const override {
    for (PreToken& piece : *pieces) {
      piece.text = space_.ReplaceAll(piece.text, replacement_);
      const bool starts_with_marker = piece.text.compare(0, replacement_.size(), replacement_) == 0;
      const bool prepend =
          !starts_with_marker && (scheme_ == PrependScheme::kAlways ||
                                  (scheme_ == PrependScheme::kFirst && piece.at_input_start));
      if (prepend) piece.text.insert(0, replacement_);
    }
    if (split_) {
      SplitPieces(
          pieces, [this](std::string_view text) { return marker_.Find(text); },
          SplitBehavior::kMergedWithNext, false);
    }
  }

 private:
  std::string replacement_;
  Pattern space_;
  Pattern marker_;
  PrependScheme scheme_;
  bool split_;
};

Expected<SplitBehavior> ParseBehavior(const Json& json, std::string_view context,
                                      SplitBehavior fallback) {
  const Json* field = FindField(json, "behavior");
  if (field == nullptr) return fallback;
  if (field->is_string()) {
    const std::string name = field->get<std::string>();
    if (name == "Removed") return SplitBehavior::kRemoved;
    if (name == "Isolated") return SplitBehavior::kIsolated;
    if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
    if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
    if (name == "Contiguous") return SplitBehavior::kContiguous;
  }
  return Error{FieldName(context, "behavior") + ": expected one of Removed, Isolated, " +
               "MergedWithPrevious, MergedWithNext, Contiguous"};
}

using Result = std::unique_ptr<PreTokenizer>;

Expected<Result> ParseMetaspace(const Json& json, std::string_view context) {
  auto replacement = StringField(json, "replacement", context, "\xe2\x96\x81");
  if (!replacement) return Error{replacement.error()};
  size_t length = 0;
  if (replacement->empty() || DecodeUtf8At(*replacement, 0, &length) == kInvalidChar ||
      length != replacement->size()) {
    return Error{FieldName(context, "replacement") + ": expected one character"};
  }
  // Older files have add_prefix_space instead of prepend_scheme.
  auto add_prefix_space = BoolField(json, "add_prefix_space", context, true);
  if (!add_prefix_space) return Error{add_prefix_space.error()};
  auto scheme_name =
      StringField(json, "prepend_scheme", context, *add_prefix_space ? "always" : "never");
  if (!scheme_name) return Error{scheme_name.error()};
  PrependScheme scheme;
  if (*scheme_name == "always") {
    scheme = PrependScheme::kAlways;
  } else if (*scheme_name == "first") {
    scheme = PrependScheme::kFirst;
  } else if (*scheme_name == "never") {
    scheme = PrependScheme::kNever;
  } else {
    return Error{FieldName(context, "prepend_scheme") + ": expected always, first or never"};
  }
  auto split = BoolField(json, "split", context, true);
  if (!split) return Error{split.error()};
  return Result(new MetaspacePreTokenizer(std::move(*replacement), scheme, *split));
}

}  // namespace

std::vector<std::pair<size_t, size_t>> SplitByMatches(size_t text_size, const Matches& matches,
                                                      SplitBehavior behavior, bool invert) {
  struct Span {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Span> spans;
  spans.reserve(matches.size() * 2 + 1);
  size_t previous = 0;
  for (const auto& [begin, end] : matches) {
    if (begin > previous) spans.push_back({previous, begin, invert});
    spans.push_back({begin, end, !invert});
    previous = end;
  }
  if (previous < text_size) spans.push_back({previous, text_size, invert});

  std::vector<Span> kept;
  kept.reserve(spans.size());
  switch (behavior) {
    case SplitBehavior::kIsolated:
      kept = std::move(spans);
      break;
    case SplitBehavior::kRemoved:
      for (const Span& span : spans) {
        if (!span.is_match) kept.push_back(span);
      }
      break;
    case SplitBehavior::kContiguous:
      for (const Span& span : spans) {
        if (!kept.empty() && kept.back().is_match == span.is_match) {
          kept.back().end = span.end;
        } else {
          kept.push_back(span);
        }
      }
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const Span& span : spans) {
        if (span.is_match && !previous_match && !kept.empty()) {
          kept.back().end = span.end;
        } else {
          kept.push_back(span);
        }
        previous_match = span.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool next_match = false;
      for (size_t i = spans.size(); i-- > 0;) {
        const Span& span = spans[i];
        if (span.is_match && !next_match && !kept.empty()) {
          kept.back().begin = span.begin;
        } else {
          kept.push_back(span);
        }
        next_match = span.is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    }
  }
  std::vector<std::pair<size_t, size_t>> pieces;
  pieces.reserve(kept.size());
  for (const Span& span : kept) {
    if (span.end > span.begin) pieces.emplace_back(span.begin, span.end);
  }
  return pieces;
}

Expected<std::unique_ptr<PreTokenizer>> ParsePreTokenizer(const Json& json,
                                                          std::string_view context) {
  if (json.is_null()) return Result();
  if (!json.is_object()) return Error{std::string(context) + ": expected an object"};
  auto type = StringField(json, "type", context);
  if (!type) return Error{type.error()};
  if (*type == "Sequence") {
    auto steps =
        ParseSequenceItems<PreTokenizer>(json, "pretokenizers", context, ParsePreTokenizer);
    if (!steps) return Error{steps.error()};
    return Result(new SequencePreTokenizer(std::move(*steps)));
  }
  if (*type == "Split") {
    const Json* pattern_json = FindField(json, "pattern");
    if (pattern_json == nullptr) return Error{FieldName(context, "pattern") + ": missing"};
    auto pattern = Pattern::Parse(*pattern_json, FieldName(context, "pattern"));
    if (!pattern) return Error{pattern.error()};
    auto behavior = ParseBehavior(json, context, SplitBehavior::kIsolated);
    if (!behavior) return Error{behavior.error()};
    auto invert = BoolField(json, "invert", context, false);
    if (!invert) return Error{invert.error()};
    return Result(new SplitPreTokenizer(PatternMatches(std::move(*pattern)), *behavior, *invert));
  }
  if (*type == "ByteLevel") {
    auto add_prefix_space = BoolField(json, "add_prefix_space", context, true);
    if (!add_prefix_space) return Error{add_prefix_space.error()};
    auto use_regex = BoolField(json, "use_regex", context, true);
    if (!use_regex) return Error{use_regex.error()};
    std::unique_ptr<Pattern> regex;
    if (*use_regex) {
      auto pattern = Pattern::Parse(Json{{"Regex", kGpt2Pattern}}, context);
      if (!pattern) return Error{pattern.error()};
      regex = std::make_unique<Pattern>(std::move(*pattern));
    }
    return Result(new ByteLevelPreTokenizer(*add_prefix_space, std::move(regex)));
  }
  if (*type == "Metaspace") return ParseMetaspace(json, context);
  if (*type == "Digits") {
    auto individual = BoolField(json, "individual_digits", context, false);
    if (!individual) return Error{individual.error()};
    return Result(new SplitPreTokenizer(
        CharMatches(IsNumeric), *individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous,
        false));
  }
  if (*type == "Whitespace") {
    auto pattern = Pattern::Parse(Json{{"Regex", R"(\w+|[^\w\s]+)"}}, context);
    if (!pattern) return Error{pattern.error()};
    return Result(new SplitPreTokenizer(PatternMatches(std::move(*pattern)),
                                        SplitBehavior::kRemoved, /*invert=*/true));
  }
  if (*type == "WhitespaceSplit") {
    return Result(new SplitPreTokenizer(CharMatches(IsWhitespace), SplitBehavior::kRemoved, false));
  }
  if (*type == "Punctuation") {
    auto behavior = ParseBehavior(json, context, SplitBehavior::kIsolated);
    if (!behavior) return Error{behavior.error()};
    return Result(new SplitPreTokenizer(CharMatches(IsPunctuation), *behavior, false));
  }
  if (*type == "CharDelimiterSplit") {
    auto delimiter = StringField(json, "delimiter", context);
    if (!delimiter) return Error{delimiter.error()};
    return Result(new SplitPreTokenizer(PatternMatches(Pattern::Literal(std::move(*delimiter))),
                                        SplitBehavior::kRemoved, false));
  }
  if (*type == "BertPreTokenizer") return Result(new BertPreTokenizer());
  return Error{std::string(context) + ": unsupported pre-tokenizer type '" + *type + "'"};
}

}  // namespace vllm::hf
