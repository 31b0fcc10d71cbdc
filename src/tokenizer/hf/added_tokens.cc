#include "tokenizer/hf/added_tokens.h"

#include <algorithm>

#include "tokenizer/hf/unicode_chars.h"

namespace vllm::hf {
namespace {

// The character that ends at text[pos] (pos > 0) and where it begins.
char32_t CharBefore(std::string_view text, size_t pos, size_t* begin) {
  size_t start = pos - 1;
  while (start > 0 && pos - start < 4 && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) {
    --start;
  }
  size_t length = 1;
  char32_t c = DecodeUtf8At(text, start, &length);
  if (start + length != pos) {  // not a whole character: treat the last byte alone
    start = pos - 1;
    c = kInvalidChar;
  }
  *begin = start;
  return c;
}

}  // namespace

Expected<AddedToken> ParseAddedToken(const Json& json, std::optional<int32_t> id,
                                     std::string_view context) {
  if (!json.is_object()) return Error{std::string(context) + ": expected an object"};
  AddedToken token;
  if (id) {
    token.id = *id;
  } else {
    const Json* id_json = FindField(json, "id");
    if (id_json == nullptr) return Error{FieldName(context, "id") + ": missing"};
    auto parsed = TokenIdFromJson(*id_json, FieldName(context, "id"));
    if (!parsed) return Error{parsed.error()};
    token.id = *parsed;
  }
  auto content = StringField(json, "content", context);
  if (!content) return Error{content.error()};
  if (content->empty()) return Error{FieldName(context, "content") + ": empty"};
  token.content = std::move(*content);
  struct Flag {
    const char* name;
    bool* value;
  };
  auto special = BoolField(json, "special", context, false);
  if (!special) return Error{special.error()};
  token.special = *special;
  token.normalized = !token.special;
  for (const Flag& flag :
       {Flag{"lstrip", &token.lstrip}, Flag{"rstrip", &token.rstrip},
        Flag{"normalized", &token.normalized}, Flag{"single_word", &token.single_word}}) {
    auto value = BoolField(json, flag.name, context, *flag.value);
    if (!value) return Error{value.error()};
    *flag.value = *value;
  }
  return token;
}

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) : tokens_(tokens) {
  root_.fill(-1);
  for (int32_t index = 0; index < static_cast<int32_t>(tokens_.size()); ++index) {
    const std::string& content = tokens_[index].content;
    if (content.empty()) continue;
    int32_t& first = root_[static_cast<unsigned char>(content[0])];
    if (first < 0) {
      first = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    int32_t node = first;
    for (size_t i = 1; i < content.size(); ++i) {
      const auto byte = static_cast<unsigned char>(content[i]);
      int32_t child = -1;
      for (const auto& [edge, target] : nodes_[node].children) {
        if (edge == byte) child = target;
      }
      if (child < 0) {
        child = static_cast<int32_t>(nodes_.size());
        nodes_[node].children.emplace_back(byte, child);
        nodes_.emplace_back();
      }
      node = child;
    }
    if (nodes_[node].token < 0) nodes_[node].token = index;  // the first of duplicates wins
  }
}

std::pair<int32_t, size_t> AddedTokenMatcher::LongestMatch(std::string_view text,
                                                           size_t pos) const {
  std::pair<int32_t, size_t> best = {-1, 0};
  int32_t node = root_[static_cast<unsigned char>(text[pos])];
  for (size_t i = pos + 1; node >= 0; ++i) {
    if (nodes_[node].token >= 0) best = {nodes_[node].token, i - pos};
    if (i >= text.size()) break;
    const auto byte = static_cast<unsigned char>(text[i]);
    int32_t next = -1;
    for (const auto& [edge, target] : nodes_[node].children) {
      if (edge == byte) next = target;
    }
    node = next;
  }
  return best;
}

std::vector<TextSegment> AddedTokenMatcher::Split(std::string_view text) const {
  std::vector<TextSegment> segments;
  size_t text_start = 0;  // start of the text not yet in a segment
  for (size_t pos = 0; pos < text.size();) {
    if (root_[static_cast<unsigned char>(text[pos])] < 0) {
      ++pos;
      continue;
    }
    const auto [index, length] = LongestMatch(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[index];
    size_t begin = pos;
    size_t end = pos + length;
    pos = end;
    if (token.single_word) {
      size_t before = 0;
      size_t after_length = 0;
      const bool word_before = begin > 0 && IsWordChar(CharBefore(text, begin, &before));
      const bool word_after =
          end < text.size() && IsWordChar(DecodeUtf8At(text, end, &after_length));
      if (word_before || word_after) continue;
    }
    if (token.lstrip) {
      while (begin > text_start) {
        size_t char_begin = 0;
        if (!IsWhitespace(CharBefore(text, begin, &char_begin))) break;
        begin = std::max(char_begin, text_start);
      }
    }
    if (token.rstrip) {
      while (end < text.size()) {
        size_t char_length = 1;
        if (!IsWhitespace(DecodeUtf8At(text, end, &char_length))) break;
        end += char_length;
      }
      pos = end;
    }
    if (begin > text_start) segments.push_back({-1, text_start, begin});
    segments.push_back({token.id, begin, end});
    text_start = end;
  }
  if (text_start < text.size()) segments.push_back({-1, text_start, text.size()});
  return segments;
}

}  // namespace vllm::hf
