// Values as text, the way Python writes them: str() for template output, repr() for items inside
// printed lists and dicts, and json.dumps() for the tojson filter.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

// str(value): strings as they are, undefined as "", None as "None", containers as repr(). A
// repr() longer than `budget` allows throws RenderError.
std::string ToStr(const Value& value, const RenderBudget& budget);
// repr(value): strings quoted, 'it\'s' → "it's".
std::string ToRepr(const Value& value, const RenderBudget& budget);

// The arguments of json.dumps() that transformers' tojson filter passes on.
struct JsonOptions {
  std::optional<std::string> indent;  // set: one item a line, indented by this per level
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};

// markupsafe's escape(): & < > " and ' as HTML entities. Throws RenderError past `budget`'s
// string limit.
std::string EscapeHtml(std::string_view text, const RenderBudget& budget);

// json.dumps(value): throws RenderError for values JSON cannot hold (undefined, functions) and for
// text longer than `budget` allows; sort_keys counts its comparisons as steps.
std::string ToJson(const Value& value, const JsonOptions& options, RenderBudget& budget);

}  // namespace vllm::jinja
