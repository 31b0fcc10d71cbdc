#include "tokenizer/hf/post_processors.h"

#include <string>

namespace vllm::hf {
namespace {

// The ids of a TemplateProcessing special token ("special_tokens": {"<s>": {"ids": [1]}}).
Expected<std::vector<int32_t>> TemplateSpecialIds(const Json& json, const std::string& name,
                                                  std::string_view context) {
  const std::string where = FieldName(context, "special_tokens[\"" + name + "\"]");
  const Json* specials = FindField(json, "special_tokens");
  const Json* special = specials == nullptr ? nullptr : FindField(*specials, name);
  if (special == nullptr) return Error{where + ": missing (named by the template)"};
  const Json* ids_json = FindField(*special, "ids");
  if (ids_json == nullptr || !ids_json->is_array()) return Error{where + ".ids: expected an array"};
  std::vector<int32_t> ids;
  for (const Json& id_json : *ids_json) {
    auto id = TokenIdFromJson(id_json, where + ".ids");
    if (!id) return Error{id.error()};
    ids.push_back(*id);
  }
  return ids;
}

Expected<SpecialTokenFrame> ParseTemplate(const Json& json, std::string_view context) {
  const Json* single = FindField(json, "single");
  if (single == nullptr || !single->is_array()) {
    return Error{FieldName(context, "single") + ": expected an array"};
  }
  SpecialTokenFrame frame;
  bool seen_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json& piece = (*single)[i];
    const std::string where = FieldName(context, "single[" + std::to_string(i) + "]");
    std::string special_name;
    if (const Json* sequence = FindField(piece, "Sequence")) {
      auto id = StringField(*sequence, "id", where + ".Sequence");
      if (!id) return Error{id.error()};
      if (*id != "A") return Error{where + ": a single-sequence template can only hold $A"};
      if (seen_sequence) return Error{where + ": $A appears twice"};
      seen_sequence = true;
      continue;
    }
    if (const Json* special = FindField(piece, "SpecialToken")) {
      auto id = StringField(*special, "id", where + ".SpecialToken");
      if (!id) return Error{id.error()};
      special_name = *id;
    } else if (piece.is_string()) {  // the short form: "$A", "$A:0", "[CLS]", "[CLS]:0"
      std::string name = piece.get<std::string>();
      if (const size_t colon = name.rfind(':'); colon != std::string::npos && colon > 0) {
        name.resize(colon);
      }
      if (name == "$A" || name == "$") {
        seen_sequence = true;
        continue;
      }
      special_name = name;
    } else {
      return Error{where + ": expected {\"Sequence\": ...} or {\"SpecialToken\": ...}"};
    }
    auto ids = TemplateSpecialIds(json, special_name, context);
    if (!ids) return Error{ids.error()};
    std::vector<int32_t>& side = seen_sequence ? frame.suffix : frame.prefix;
    side.insert(side.end(), ids->begin(), ids->end());
  }
  if (!seen_sequence) return Error{FieldName(context, "single") + ": no $A in the template"};
  return frame;
}

// BertProcessing / RobertaProcessing: {"cls": ["[CLS]", 101], "sep": ["[SEP]", 102]}.
Expected<int32_t> PairId(const Json& json, const char* key, std::string_view context) {
  const Json* pair = FindField(json, key);
  if (pair == nullptr || !pair->is_array() || pair->size() != 2 || !(*pair)[0].is_string()) {
    return Error{FieldName(context, key) + ": expected [\"token\", id]"};
  }
  return TokenIdFromJson((*pair)[1], FieldName(context, key));
}

}  // namespace

Expected<SpecialTokenFrame> ParsePostProcessor(const Json& json, std::string_view context) {
  if (json.is_null()) return SpecialTokenFrame{};
  if (!json.is_object()) return Error{std::string(context) + ": expected an object"};
  auto type = StringField(json, "type", context);
  if (!type) return Error{type.error()};
  if (*type == "TemplateProcessing") return ParseTemplate(json, context);
  if (*type == "ByteLevel") return SpecialTokenFrame{};
  if (*type == "BertProcessing" || *type == "RobertaProcessing") {
    auto cls = PairId(json, "cls", context);
    if (!cls) return Error{cls.error()};
    auto sep = PairId(json, "sep", context);
    if (!sep) return Error{sep.error()};
    return SpecialTokenFrame{{*cls}, {*sep}};
  }
  if (*type == "Sequence") {
    const Json* list = FindField(json, "processors");
    if (list == nullptr || !list->is_array()) {
      return Error{FieldName(context, "processors") + ": expected an array"};
    }
    // Each processor wraps the output of the ones before it.
    SpecialTokenFrame frame;
    for (size_t i = 0; i < list->size(); ++i) {
      auto inner = ParsePostProcessor((*list)[i],
                                      FieldName(context, "processors[" + std::to_string(i) + "]"));
      if (!inner) return Error{inner.error()};
      frame.prefix.insert(frame.prefix.begin(), inner->prefix.begin(), inner->prefix.end());
      frame.suffix.insert(frame.suffix.end(), inner->suffix.begin(), inner->suffix.end());
    }
    return frame;
  }
  return Error{std::string(context) + ": unsupported post-processor type '" + *type + "'"};
}

}  // namespace vllm::hf
