// The template filters, `value | name(args)`: Jinja's builtin filters (but groupby, pprint,
// random, striptags, urlencode, urlize, wordwrap, xmlattr and filesizeformat), and transformers'
// tojson (json.dumps with ensure_ascii=False, ", " and ": " separators).
#pragma once

#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

using FilterFunction = Value (*)(const Value& value, const CallArgs& args, RenderBudget& budget);

bool IsFilter(std::string_view name);
// Throws RenderError for an unknown filter, wrong arguments or wrong types, or when `budget` runs
// out: filters count a step for each item they walk through and bound the strings they build.
Value ApplyFilter(std::string_view name, const Value& value, const CallArgs& args,
                  RenderBudget& budget);

}  // namespace vllm::jinja
