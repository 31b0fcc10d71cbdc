#include "tokenizer/hf/pattern.h"

namespace vllm::hf {

Expected<Pattern> Pattern::Parse(const Json& json, std::string_view context) {
  if (const Json* literal = FindField(json, "String")) {
    if (!literal->is_string()) return Error{std::string(context) + ".String: expected a string"};
    return Literal(literal->get<std::string>());
  }
  if (const Json* regex = FindField(json, "Regex")) {
    if (!regex->is_string()) return Error{std::string(context) + ".Regex: expected a string"};
    auto splitter = RegexSplitter::Create({regex->get<std::string>()});
    if (!splitter) return Error{std::string(context) + ".Regex: " + splitter.error()};
    Pattern pattern;
    pattern.regex_ = std::make_shared<const RegexSplitter>(std::move(*splitter));
    return pattern;
  }
  return Error{std::string(context) + ": expected {\"String\": ...} or {\"Regex\": ...}"};
}

Expected<std::pair<Pattern, std::string>> Pattern::ParseReplace(const Json& json,
                                                                std::string_view context) {
  const Json* pattern_json = FindField(json, "pattern");
  if (pattern_json == nullptr) return Error{FieldName(context, "pattern") + ": missing"};
  auto pattern = Parse(*pattern_json, FieldName(context, "pattern"));
  if (!pattern) return Error{pattern.error()};
  auto content = StringField(json, "content", context);
  if (!content) return Error{content.error()};
  return std::pair<Pattern, std::string>(std::move(*pattern), std::move(*content));
}

Pattern Pattern::Literal(std::string text) {
  Pattern pattern;
  pattern.literal_ = std::move(text);
  return pattern;
}

std::vector<std::pair<size_t, size_t>> Pattern::Find(std::string_view text) const {
  if (regex_) return regex_->Matches(text);
  std::vector<std::pair<size_t, size_t>> matches;
  if (literal_.empty()) return matches;
  for (size_t found = text.find(literal_); found != std::string_view::npos;
       found = text.find(literal_, found + literal_.size())) {
    matches.emplace_back(found, found + literal_.size());
  }
  return matches;
}

std::string Pattern::ReplaceAll(std::string_view text, std::string_view content) const {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (const auto& [begin, end] : Find(text)) {
    out.append(text.substr(start, begin - start));
    out.append(content);
    start = end;
  }
  out.append(text.substr(start));
  return out;
}

}  // namespace vllm::hf
