#include "tokenizer/hf/post_processors.h"

#include <algorithm>
#include <climits>
#include <optional>
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

// One template entry: {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[CLS]",
// "type_id": 0}}, or the short forms "$A", "$B:1", "$1" (A with type 1), "[CLS]", "[SEP]:1".
struct TemplateEntry {
  PairPiece::Kind kind;
  int32_t type_id = 0;
  std::string special_name;  // kSpecial only
};

Expected<int32_t> TypeId(const Json& json, std::string_view where) {
  auto type_id = IntField(json, "type_id", where, 0);
  if (!type_id) return Error{type_id.error()};
  if (*type_id < 0 || *type_id > INT32_MAX)
    return Error{FieldName(where, "type_id") + ": out of range"};
  return static_cast<int32_t>(*type_id);
}

Expected<int32_t> ShortTypeId(std::string_view digits, std::string_view where) {
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Error{std::string(where) + ": '" + std::string(digits) + "' is not a type id"};
  }
  return static_cast<int32_t>(std::stol(std::string(digits)));
}

Expected<TemplateEntry> ParseEntry(const Json& piece, const std::string& where) {
  if (const Json* sequence = FindField(piece, "Sequence")) {
    auto id = StringField(*sequence, "id", where + ".Sequence");
    if (!id) return Error{id.error()};
    if (*id != "A" && *id != "B") return Error{where + ": the sequence id must be A or B"};
    auto type_id = TypeId(*sequence, where + ".Sequence");
    if (!type_id) return Error{type_id.error()};
    return TemplateEntry{*id == "A" ? PairPiece::Kind::kFirst : PairPiece::Kind::kSecond, *type_id,
                         ""};
  }
  if (const Json* special = FindField(piece, "SpecialToken")) {
    auto id = StringField(*special, "id", where + ".SpecialToken");
    if (!id) return Error{id.error()};
    auto type_id = TypeId(*special, where + ".SpecialToken");
    if (!type_id) return Error{type_id.error()};
    return TemplateEntry{PairPiece::Kind::kSpecial, *type_id, *id};
  }
  if (!piece.is_string()) {
    return Error{where + ": expected {\"Sequence\": ...} or {\"SpecialToken\": ...}"};
  }
  std::string_view text = piece.get_ref<const std::string&>();
  std::string_view name = text;
  std::optional<std::string_view> type_digits;
  if (const size_t colon = text.rfind(':'); colon != std::string_view::npos && colon > 0) {
    name = text.substr(0, colon);
    type_digits = text.substr(colon + 1);
  }
  TemplateEntry entry{PairPiece::Kind::kSpecial, 0, std::string(name)};
  if (!name.empty() && name[0] == '$') {
    const std::string_view id = name.substr(1);
    entry.special_name.clear();
    entry.kind = id == "B" ? PairPiece::Kind::kSecond : PairPiece::Kind::kFirst;
    if (!id.empty() && id != "A" && id != "B") {  // "$1": sequence A with type id 1
      if (type_digits) return Error{where + ": '" + std::string(text) + "' is not a sequence"};
      type_digits = id;
    }
  }
  if (type_digits) {
    auto type_id = ShortTypeId(*type_digits, where);
    if (!type_id) return Error{type_id.error()};
    entry.type_id = *type_id;
  }
  return entry;
}

// The entries of the template under `key` ("single" or "pair").
Expected<std::vector<TemplateEntry>> ParseEntries(const Json& json, const char* key,
                                                  std::string_view context) {
  const Json* list = FindField(json, key);
  if (list == nullptr || !list->is_array()) {
    return Error{FieldName(context, key) + ": expected an array"};
  }
  std::vector<TemplateEntry> entries;
  for (size_t i = 0; i < list->size(); ++i) {
    auto entry = ParseEntry((*list)[i],
                            FieldName(context, std::string(key) + "[" + std::to_string(i) + "]"));
    if (!entry) return Error{entry.error()};
    entries.push_back(std::move(*entry));
  }
  return entries;
}

size_t CountKind(const std::vector<TemplateEntry>& entries, PairPiece::Kind kind) {
  size_t count = 0;
  for (const TemplateEntry& entry : entries) count += entry.kind == kind;
  return count;
}

Expected<SpecialTokenFrame> ParseTemplate(const Json& json, std::string_view context) {
  auto single = ParseEntries(json, "single", context);
  if (!single) return Error{single.error()};
  if (CountKind(*single, PairPiece::Kind::kFirst) != 1 ||
      CountKind(*single, PairPiece::Kind::kSecond) != 0) {
    return Error{FieldName(context, "single") + ": the template must hold $A once and no $B"};
  }
  SpecialTokenFrame frame;
  bool seen_sequence = false;
  for (const TemplateEntry& entry : *single) {
    if (entry.kind != PairPiece::Kind::kSpecial) {
      seen_sequence = true;
      continue;
    }
    auto ids = TemplateSpecialIds(json, entry.special_name, context);
    if (!ids) return Error{ids.error()};
    std::vector<int32_t>& side = seen_sequence ? frame.suffix : frame.prefix;
    side.insert(side.end(), ids->begin(), ids->end());
  }
  if (FindField(json, "pair") == nullptr) return frame;  // the plain pair
  auto pair = ParseEntries(json, "pair", context);
  if (!pair) return Error{pair.error()};
  if (CountKind(*pair, PairPiece::Kind::kFirst) != 1 ||
      CountKind(*pair, PairPiece::Kind::kSecond) != 1) {
    return Error{FieldName(context, "pair") + ": the template must hold $A and $B once each"};
  }
  frame.pair.clear();
  for (TemplateEntry& entry : *pair) {
    PairPiece piece{entry.kind, entry.type_id, {}};
    if (entry.kind == PairPiece::Kind::kSpecial) {
      auto ids = TemplateSpecialIds(json, entry.special_name, context);
      if (!ids) return Error{ids.error()};
      piece.special_ids = std::move(*ids);
    }
    frame.pair.push_back(std::move(piece));
  }
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

// The layout of a frame without a pair template: the texts' ids as they are, segments 0 and 1.
bool IsPlainPair(const std::vector<PairPiece>& pair) {
  const SpecialTokenFrame plain;
  return pair.size() == plain.pair.size() &&
         std::equal(pair.begin(), pair.end(), plain.pair.begin(),
                    [](const PairPiece& a, const PairPiece& b) {
                      return a.kind == b.kind && a.type_id == b.type_id &&
                             a.special_ids == b.special_ids;
                    });
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
    // BERT: [CLS] A [SEP] B [SEP] with B's part in segment 1; RoBERTa: <s> A </s></s> B </s>,
    // all in segment 0.
    const bool bert = *type == "BertProcessing";
    using Kind = PairPiece::Kind;
    SpecialTokenFrame frame{{*cls}, {*sep}, {}};
    frame.pair = {{Kind::kSpecial, 0, {*cls}},
                  {Kind::kFirst, 0, {}},
                  {Kind::kSpecial, 0, bert ? std::vector{*sep} : std::vector{*sep, *sep}},
                  {Kind::kSecond, bert ? 1 : 0, {}},
                  {Kind::kSpecial, bert ? 1 : 0, {*sep}}};
    return frame;
  }
  if (*type == "Sequence") {
    const Json* list = FindField(json, "processors");
    if (list == nullptr || !list->is_array()) {
      return Error{FieldName(context, "processors") + ": expected an array"};
    }
    // Each processor wraps the output of the ones before it. The first one that lays out a pair
    // merges it into one sequence, which the later ones wrap as a single text (their specials
    // in segment 0; Hugging Face would also reset the pair's segments to the wrapper's $A type).
    SpecialTokenFrame frame;
    bool pair_merged = false;
    for (size_t i = 0; i < list->size(); ++i) {
      auto inner = ParsePostProcessor((*list)[i],
                                      FieldName(context, "processors[" + std::to_string(i) + "]"));
      if (!inner) return Error{inner.error()};
      frame.prefix.insert(frame.prefix.begin(), inner->prefix.begin(), inner->prefix.end());
      frame.suffix.insert(frame.suffix.end(), inner->suffix.begin(), inner->suffix.end());
      if (!pair_merged) {
        pair_merged = !IsPlainPair(inner->pair);
        frame.pair = std::move(inner->pair);
      } else {
        frame.pair.insert(frame.pair.begin(),
                          PairPiece{PairPiece::Kind::kSpecial, 0, std::move(inner->prefix)});
        frame.pair.push_back(PairPiece{PairPiece::Kind::kSpecial, 0, std::move(inner->suffix)});
      }
    }
    return frame;
  }
  return Error{std::string(context) + ": unsupported post-processor type '" + *type + "'"};
}

}  // namespace vllm::hf
