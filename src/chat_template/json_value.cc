// Conversion of JSON input (the render variables) to template values.
#include "chat_template/json_value.h"

#include "chat_template/errors.h"
#include "chat_template/limits.h"

namespace vllm::jinja {
namespace {

Value Convert(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxValueDepth) throw RenderError("input JSON nested too deeply");
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::boolean:
      return Value::Bool(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::Int(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t number = json.get<uint64_t>();
      if (number > static_cast<uint64_t>(INT64_MAX))
        return Value::Float(static_cast<double>(number));
      return Value::Int(static_cast<int64_t>(number));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::Float(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value::String(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(Convert(item, depth + 1));
      return Value::List(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<Value, Value>> entries;
      entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) {
        entries.emplace_back(Value::String(key), Convert(item, depth + 1));
      }
      return Value::Dict(std::move(entries));
    }
    default:  // null, discarded, binary
      return Value::None();
  }
}

}  // namespace

Value ValueFromJson(const nlohmann::ordered_json& json) { return Convert(json, 0); }

}  // namespace vllm::jinja
